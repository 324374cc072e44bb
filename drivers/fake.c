// SPDX-License-Identifier: MIT
/*
 * fake: a software model of the capture board. It samples the `bach gen`
 * workload as the bus, frames it exactly as the board does
 * (docs/board-protocol.md) and feeds the frames, a USB transfer's worth at
 * a time, through the host's frame parser. With faults switched off its
 * records equal `bach gen --seed S`; every fault is injected where the real
 * board or link would produce it, so that the parser and the manifest have
 * to account for it.
 *
 * Like the real board, the model runs beside the host: a board thread
 * samples, frames and fills transfers (a few in flight, as USB keeps
 * them), and run(), on the acquisition thread, hands each finished one to
 * the parser. Sampling thus overlaps parsing and writing. A full queue
 * holds the board back, as a host that stops reading does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bach/driver.h"
#include "bach/frame.h"
#include "bach/gen.h"
#include "bach/record.h"

#define FAKE_CLOCK_HZ 66666666u
#define XFER_BYTES (512u << 10) /* one USB transfer's worth of frames */
#define NXFER 4			 /* transfers in flight */

struct xfer {
	uint8_t *buf;
	size_t len;
	bool disconnect;	/* unplug once this one is delivered */
	bool last;		/* the board has finished */
};

struct fake {
	uint64_t records;	/* stop after this many sampled (0: never) */
	uint64_t seed;
	uint64_t rate;		/* records/s, 0: as fast as possible */
	unsigned frame_recs;
	bool timing;
	/* faults: every Nth frame (0: never) */
	uint64_t drop_every, corrupt_every, overflow_every;
	uint64_t stall_every, stall_ms;	/* the board holds the CPU */
	uint32_t overflow_count;
	uint64_t disconnect_at;	/* sampled-record index (0: never) */
	unsigned disconnect_secs;
	uint64_t status_every;	/* frames between status frames */

	atomic_bool stop;
	struct bach_gen gen;
	uint8_t *recs;
	uint16_t *deltas;

	/* transfers: [head, tail) filled, waiting for the host */
	struct xfer xfers[NXFER];
	unsigned head, tail;		/* under mu */
	pthread_mutex_t mu;
	pthread_cond_t filled, emptied;
	bool sync_init;
	struct xfer *cur;		/* board: the one being filled */
	_Atomic uint64_t stall_episodes, stalled_ns; /* host -> board */
};

static int parse_u64(struct bach_source *src, const char *key,
		     const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 0);
	if (errno || end == v || *end || *v == '-')
		return bach_source_error(src, -EINVAL,
					 "option %s: not a number: '%s'", key,
					 v);
	return 0;
}

/* "A:B" */
static int parse_pair(struct bach_source *src, const char *key,
		      const char *v, uint64_t *a, uint64_t *b)
{
	const char *p;
	char *end;

	errno = 0;
	*a = strtoull(v, &end, 0);
	if (errno || end == v || *end != ':' || *v == '-')
		goto bad;
	p = end + 1;
	*b = strtoull(p, &end, 0);
	if (errno || end == p || *end || *p == '-')
		goto bad;
	return 0;
bad:
	return bach_source_error(src, -EINVAL, "option %s: want N:M, not '%s'",
				 key, v);
}

static int fake_open(struct bach_source *src, void *priv,
		     const struct bach_option *opts, size_t nopts)
{
	struct fake *f = priv;
	uint64_t v;
	char ident[512];

	f->seed = 1;
	f->frame_recs = 4096;
	f->status_every = 256;
	for (size_t i = 0; i < nopts; i++) {
		const char *k = opts[i].key, *val = opts[i].value;
		int err;

		if (!strcmp(k, "stall_every")) {
			err = parse_pair(src, k, val, &f->stall_every,
					 &f->stall_ms);
			if (err)
				return err;
			continue;
		}
		if (!strcmp(k, "overflow_every")) {
			err = parse_pair(src, k, val, &f->overflow_every, &v);
			if (err)
				return err;
			f->overflow_count = (uint32_t)v;
			continue;
		}
		if (!strcmp(k, "disconnect")) {
			err = parse_pair(src, k, val, &f->disconnect_at, &v);
			if (err)
				return err;
			f->disconnect_secs = (unsigned)v;
			continue;
		}
		err = parse_u64(src, k, val, &v);
		if (err && (!strcmp(k, "records") || !strcmp(k, "seed") ||
			    !strcmp(k, "rate") || !strcmp(k, "frame") ||
			    !strcmp(k, "timing") || !strcmp(k, "drop_every") ||
			    !strcmp(k, "corrupt_every") ||
			    !strcmp(k, "status_every")))
			return err;
		if (!strcmp(k, "records"))
			f->records = v;
		else if (!strcmp(k, "seed"))
			f->seed = v;
		else if (!strcmp(k, "rate"))
			f->rate = v;
		else if (!strcmp(k, "frame") && v >= 1 &&
			 v <= BACH_FRAME_MAX_RECORDS)
			f->frame_recs = (unsigned)v;
		else if (!strcmp(k, "timing"))
			f->timing = v != 0;
		else if (!strcmp(k, "drop_every"))
			f->drop_every = v;
		else if (!strcmp(k, "corrupt_every"))
			f->corrupt_every = v;
		else if (!strcmp(k, "status_every"))
			f->status_every = v;
		else if (!strcmp(k, "frame"))
			return bach_source_error(src, -EINVAL,
						 "option frame: 1 to %d records, not '%s'",
						 BACH_FRAME_MAX_RECORDS, val);
		else
			return bach_source_error(src, -EINVAL,
						 "unknown option '%s' (records, seed, rate, frame, timing, drop_every, corrupt_every, overflow_every, stall_every, disconnect, status_every)",
						 k);
	}
	f->recs = malloc((size_t)f->frame_recs * BACH_REC_SIZE);
	f->deltas = malloc((size_t)f->frame_recs * sizeof(*f->deltas));
	if (!f->recs || !f->deltas)
		return -ENOMEM;
	for (unsigned i = 0; i < NXFER; i++) {
		f->xfers[i].buf = malloc(XFER_BYTES +
					 bach_frame_data_size(f->frame_recs, true) +
					 256);
		if (!f->xfers[i].buf)
			return -ENOMEM;
	}
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->filled, NULL);
	pthread_cond_init(&f->emptied, NULL);
	f->sync_init = true;
	for (unsigned i = 0; i < f->frame_recs; i++)
		f->deltas[i] = 2; /* a bus cycle every two clocks */
	bach_gen_init(&f->gen, f->seed);
	snprintf(ident, sizeof(ident),
		 "\"name\":\"fake capture board\",\"serial\":\"FAKE-%llu\",\"gateware\":\"%d.0\",\"clock_hz\":%u",
		 (unsigned long long)f->seed, BACH_PROTO_VERSION, FAKE_CLOCK_HZ);
	bach_source_identity(src, ident);
	return 0;
}

/* Sleep ns, or less once stop() is called (it must end run() soon). */
static void nap(struct fake *f, uint64_t ns)
{
	bach_sleep_until(bach_now_ns() + ns, &f->stop);
}

/* ---- the board thread ---------------------------------------------------- */

/* A free transfer to fill (waiting for the host to give one back). */
static struct xfer *xfer_get(struct fake *f)
{
	struct xfer *x;

	pthread_mutex_lock(&f->mu);
	while (f->tail - f->head == NXFER)
		pthread_cond_wait(&f->emptied, &f->mu);
	x = &f->xfers[f->tail % NXFER];
	pthread_mutex_unlock(&f->mu);
	x->len = 0;
	x->disconnect = x->last = false;
	return x;
}

/* The transfer being filled completes: the host may take it. */
static void xfer_put(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	f->tail++;
	pthread_cond_signal(&f->filled);
	pthread_mutex_unlock(&f->mu);
	f->cur = NULL;
}

/* Complete the transfer being filled, if it holds anything. */
static void flush_xfer(struct fake *f)
{
	if (f->cur && f->cur->len)
		xfer_put(f);
}

static uint8_t *xfer_room(struct fake *f)
{
	if (!f->cur)
		f->cur = xfer_get(f);
	return f->cur->buf + f->cur->len;
}

static void send_status(struct fake *f, uint32_t seq, uint64_t sampled,
			uint64_t lost)
{
	uint64_t stalled_ns = atomic_load(&f->stalled_ns);
	struct bach_board_status st = {
		.fifo_fill = 0,
		.fifo_size = 1u << 16,
		.records = sampled,
		.overflow = lost,
		.stall_episodes = (uint32_t)atomic_load(&f->stall_episodes),
		.clock_hz = FAKE_CLOCK_HZ,
		.stalled_clocks = stalled_ns * (FAKE_CLOCK_HZ / 1000000u) / 1000u,
	};
	uint8_t *p = xfer_room(f);

	f->cur->len += bach_frame_build_status(p, seq, &st);
}

static void *board_main(void *arg)
{
	struct fake *f = arg;
	uint64_t index = 0, lost = 0, frames = 0, t_start = bach_now_ns();
	uint32_t seq = 0, status_seq = 0;
	bool first = true;

	while (!atomic_load(&f->stop) && (!f->records || index < f->records)) {
		uint64_t n = f->frame_recs, ts;
		uint32_t flost = 0;
		uint8_t *frame;
		size_t len;

		/*
		 * A stall: the board holds the CPU (HOLD/BOFF#) for a while;
		 * its next status says so, and nothing is lost.
		 */
		if (f->stall_every && frames && frames % f->stall_every == 0) {
			nap(f, f->stall_ms * 1000000ull);
			atomic_fetch_add(&f->stall_episodes, 1);
			atomic_fetch_add(&f->stalled_ns, f->stall_ms * 1000000ull);
			send_status(f, status_seq++, index, lost);
		}
		/* a board overflow: sampled records that never reach a frame */
		if (f->overflow_every && frames &&
		    frames % f->overflow_every == 0) {
			uint64_t k = f->overflow_count;

			if (f->records && k > f->records - index)
				k = f->records - index;
			for (uint64_t left = k; left;) {
				size_t m = left < f->frame_recs ? (size_t)left :
								  f->frame_recs;

				bach_gen_fill(&f->gen, f->recs, m);
				left -= m;
			}
			index += k;
			lost += k;
			flost = (uint32_t)k;
			if (f->records && index >= f->records)
				break;
		}
		if (f->records && n > f->records - index)
			n = f->records - index;
		bach_gen_fill(&f->gen, f->recs, (size_t)n);
		ts = index * 2; /* clocks: one cycle every two */
		frame = xfer_room(f);
		len = bach_frame_build_data(frame, seq++, index, ts,
					    (first ? BACH_FF_FIRST : 0) |
						    (f->records &&
							     index + n >= f->records ?
						     BACH_FF_LAST :
						     0),
					    flost, f->recs, (size_t)n,
					    f->timing ? f->deltas : NULL);
		first = false;
		frames++;
		index += n;
		if (f->drop_every && frames % f->drop_every == 0) {
			/* lost on the link: never reaches the host */
		} else {
			if (f->corrupt_every && frames % f->corrupt_every == 0)
				frame[len - 1] ^= 0x5a; /* bad CRC */
			f->cur->len += len;
		}
		if (f->status_every && frames % f->status_every == 0)
			send_status(f, status_seq++, index, lost);
		if (f->cur->len >= XFER_BYTES)
			flush_xfer(f);
		if (f->disconnect_at && index >= f->disconnect_at) {
			/* the host unplugs us once it has had this transfer */
			xfer_room(f);
			f->cur->disconnect = true;
			xfer_put(f);
			f->disconnect_at = 0;
		}
		if (f->rate) {
			/* pace to the wanted rate */
			uint64_t due = t_start + index * 1000000000ull / f->rate;
			uint64_t now = bach_now_ns();

			if (due > now) {
				flush_xfer(f);
				nap(f, due - now);
			}
		}
	}
	/* the final status says how many records the board sampled */
	send_status(f, status_seq++, index, lost);
	f->cur->last = true;
	xfer_put(f);
	return NULL;
}

/* ---- the host side: run() on the acquisition thread --------------------- */

/* Hand a transfer to the host, as a completed bulk IN transfer would. */
static void deliver(struct bach_source *src, struct fake *f, struct xfer *x)
{
	uint64_t t0 = bach_now_ns();

	if (x->len)
		bach_source_frames(src, x->buf, x->len);
	if (x->len && bach_source_stalled(src)) {
		/* the board held the CPU while the host caught up */
		atomic_fetch_add(&f->stall_episodes, 1);
		atomic_fetch_add(&f->stalled_ns, bach_now_ns() - t0);
	}
	if (x->disconnect) {
		bach_source_event(src, "device_lost", "fake board unplugged");
		nap(f, f->disconnect_secs * 1000000000ull);
		bach_source_event(src, "device_back", "fake board back");
	}
}

static int fake_run(struct bach_source *src, void *priv)
{
	struct fake *f = priv;
	pthread_t board;
	bool last = false;
	int err;

	err = pthread_create(&board, NULL, board_main, f);
	if (err)
		return bach_source_error(src, -err,
					 "cannot start the board thread: %s",
					 strerror(err));
	while (!last) {
		struct xfer *x;

		pthread_mutex_lock(&f->mu);
		while (f->head == f->tail) {
			/* waiting for the board: what we hold goes on meanwhile */
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			if (pthread_cond_timedwait(&f->filled, &f->mu, &ts) ==
			    ETIMEDOUT) {
				pthread_mutex_unlock(&f->mu);
				bach_source_flush(src);
				pthread_mutex_lock(&f->mu);
			}
		}
		x = &f->xfers[f->head % NXFER];
		pthread_mutex_unlock(&f->mu);
		deliver(src, f, x);
		last = x->last;
		pthread_mutex_lock(&f->mu);
		f->head++;
		pthread_cond_signal(&f->emptied);
		pthread_mutex_unlock(&f->mu);
	}
	pthread_join(board, NULL);
	return 0;
}

static void fake_stop(void *priv)
{
	struct fake *f = priv;

	atomic_store(&f->stop, true);
}

static void fake_close(void *priv)
{
	struct fake *f = priv;

	free(f->recs);
	free(f->deltas);
	for (unsigned i = 0; i < NXFER; i++)
		free(f->xfers[i].buf);
	if (f->sync_init) {
		pthread_mutex_destroy(&f->mu);
		pthread_cond_destroy(&f->filled);
		pthread_cond_destroy(&f->emptied);
	}
}

const struct bach_driver bach_driver_fake = {
	.name = "fake",
	.summary = "software model of the capture board (the bach gen workload)",
	.options_help =
		"records=N          stop after N sampled records (default: run until stopped)\n"
		"seed=S             workload seed, as bach gen --seed (default 1)\n"
		"rate=R             records per second (default: as fast as possible)\n"
		"frame=K            records per frame (default 4096)\n"
		"timing=1           frames carry per-record clock deltas\n"
		"drop_every=N       lose every Nth frame on the link\n"
		"corrupt_every=N    corrupt the CRC of every Nth frame\n"
		"overflow_every=N:C before every Nth frame the FIFO overflows, losing C records\n"
		"stall_every=N:MS   before every Nth frame the board holds the CPU for MS ms\n"
		"disconnect=R:T     unplug after R records for T seconds, then come back\n"
		"status_every=N     a status frame every N data frames (default 256)\n",
	.priv_size = sizeof(struct fake),
	.open = fake_open,
	.run = fake_run,
	.stop = fake_stop,
	.close = fake_close,
};
