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
 * The board itself (sampling, framing, faults, status) is the model in
 * board_model.c, which the emulated USB board of the tests runs too.
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

#include "board_model.h"
#include "drivers/driver.h"
#include "lib/bus/frame.h"

#define XFER_BYTES (512u << 10) /* one USB transfer's worth of frames */
#define NXFER	   4		/* transfers in flight */

struct xfer {
	uint8_t *buf;
	size_t len;
	bool disconnect; /* unplug once this one is delivered */
	bool last;	 /* the board has finished */
};

struct fake {
	struct board_opts o;
	struct board_model m;
	bool board_init;

	atomic_bool stop;

	/* transfers: [head, tail) filled, waiting for the host */
	struct xfer xfers[NXFER];
	unsigned head, tail; /* under mu */
	pthread_mutex_t mu;
	pthread_cond_t filled, emptied;
	bool sync_init;
	struct xfer *cur; /* board: the one being filled */
};

/* Sleep ns, or less once stop() is called (it must end run() soon). */
static void nap(struct fake *f, uint64_t ns)
{
	bach_sleep_until(bach_now_ns() + ns, &f->stop);
}

static void board_nap(void *ctx, uint64_t ns)
{
	nap(ctx, ns);
}

static int fake_open(struct bach_source *src, void *priv,
		     const struct bach_optval *opts)
{
	struct fake *f = priv;
	char ident[512];

	board_opts_defaults(&f->o);
	board_opts_from(&f->o, opts);
	if (board_init(&f->m, &f->o))
		return -ENOMEM;
	f->board_init = true;
	f->m.nap = board_nap;
	f->m.nap_ctx = f;
	for (unsigned i = 0; i < NXFER; i++) {
		f->xfers[i].buf =
			malloc(XFER_BYTES + board_step_room(&f->m) + 256);
		if (!f->xfers[i].buf)
			return -ENOMEM;
	}
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->filled, NULL);
	pthread_cond_init(&f->emptied, NULL);
	f->sync_init = true;
	snprintf(
		ident, sizeof(ident),
		"\"name\":\"fake capture board\",\"serial\":\"FAKE-%llu\",\"gateware\":\"%d.0\",\"clock_hz\":%d",
		(unsigned long long)f->o.seed, BACH_PROTO_VERSION,
		BOARD_CLOCK_HZ);
	bach_source_identity(src, ident);
	return 0;
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

static void *board_main(void *arg)
{
	struct fake *f = arg;
	struct board_model *m = &f->m;

	board_start(m);
	while (!atomic_load(&f->stop) && board_sampling(m)) {
		unsigned ev;

		xfer_room(f);
		f->cur->len += board_step(m, f->cur->buf + f->cur->len, &ev);
		if (f->cur->len >= XFER_BYTES)
			flush_xfer(f);
		if (ev & BOARD_EV_DISCONNECT) {
			/* the host unplugs us once it has had this transfer */
			xfer_room(f);
			f->cur->disconnect = true;
			xfer_put(f);
		}
		if (m->o.rate) {
			/* pace to the wanted rate */
			uint64_t due = board_due_ns(m), now = bach_now_ns();

			if (due > now) {
				flush_xfer(f);
				nap(f, due - now);
			}
		}
	}
	/* the final status says how many records the board sampled */
	xfer_room(f);
	f->cur->len += board_status(m, f->cur->buf + f->cur->len);
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
		atomic_fetch_add(&f->m.stall_episodes, 1);
		atomic_fetch_add(&f->m.stalled_ns, bach_now_ns() - t0);
	}
	if (x->disconnect) {
		bach_source_event(src, "device_lost", "fake board unplugged");
		nap(f, f->o.disconnect_secs * 1000000000ull);
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
			/* waiting for the board: what we hold goes on meanwhile
			 */
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

	if (f->board_init)
		board_free(&f->m);
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
	.summary =
		"software model of the capture board (the bach gen workload)",
	.options = board_options,
	.priv_size = sizeof(struct fake),
	.open = fake_open,
	.run = fake_run,
	.stop = fake_stop,
	.close = fake_close,
};
