// SPDX-License-Identifier: MIT
/*
 * The capture session. Acquisition thread: driver->run() delivers frames
 * or records; the producer half below copies them into ring blocks and
 * applies the loss policy. Writer thread: takes blocks in order, writes the
 * manifest events they carry, compresses (bach/zpool.h) and appends to the
 * open segment (segio.h), rotating by size, time or request.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bach/frame.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "bach/zpool.h"
#include "capture.h"
#define LOG_PREFIX NULL
#include "log.h"
#include "manifest.h"
#include "recover.h"
#include "ring.h"
#include "segio.h"

#define NCAUSES (BACH_GAP_DEVICE + 1)
#define BLOCKED_AFTER_NS 2000000000ull /* a write this old: the writer is stuck */

struct bach_source {
	struct capture *c;
};

struct capture {
	struct capture_config cfg;
	const struct bach_driver *drv;
	void *priv;
	struct bach_source src;
	struct bach_parser *parser;
	struct ring ring;

	/* producer (acquisition thread) */
	struct ring_block *blk;
	uint64_t blk_born;		/* ns when blk got its first record */
	uint64_t pending[NCAUSES];	/* lost while no block could be had */
	struct ring_event pend_ev[RING_MAX_EVENTS]; /* events, likewise */
	unsigned npend_ev;
	bool stalled;
	int run_err;
	struct bach_board_status board;	/* the board's last status */
	bool have_board_status;
	uint64_t t0_ns;			/* when the capture started */
	_Atomic uint32_t clock_hz;	/* the board's bus clock, once known */
	int dump_fd;			/* board-stream.bin, or -1 */
	int lock_fd;			/* <output>/.bach.lock, held */

	/* writer thread */
	struct zpool_state {
		struct bach_zpool *pool;
	} z;
	struct segio io;
	int dirfd;
	struct manifest man;
	int segfd;
	unsigned segno;
	char segname[64];		/* final name, without .part */
	uint64_t seg_records, seg_markers, seg_started_ns, seg_record_bytes;
	uint64_t trace_pos;		/* records in segments, markers included */
	uint64_t bytes_closed;		/* bytes of the closed segments */
	int write_err;

	/* shared */
	pthread_t acq_tid, wr_tid;
	bool started;
	_Atomic bool acq_done, wr_done, stop_requested, rotate_requested;
	_Atomic uint64_t produced, written, lost, markers, bytes, segments,
		stalls, stall_ns, progress, write_started_ns, lost_disk,
		board_stalls;
	_Atomic uint64_t lost_by[BACH_GAP_DEVICE + 1];
	pthread_mutex_t mu;		/* marks, identity, status strings */
	char *marks[64];
	size_t nmarks;
	char identity[1024];
	char capdir[4200];
	char open_seg[80];
};

void capture_config_defaults(struct capture_config *c)
{
	memset(c, 0, sizeof(*c));
	/* no default source and no default place: both must be said */
	c->policy = BACH_POLICY_STALL;
	c->gap_markers = true;
	c->compress = true;
	c->level = 1; /* live capture: speed first (libdeflate -1) */
	c->ring_bytes = 256ull << 20;
	c->rotate_bytes = 1ull << 30;
	c->rotate_seconds = 3600;
	c->io_uring = true;
	c->queue_depth = 8;
	c->flush_ms = 200;
}

int capture_config_option(struct capture_config *c, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char *k, *v;

	if (!eq || eq == kv)
		return -EINVAL;
	if (c->nopts == CAPTURE_MAX_OPTIONS)
		return -E2BIG;
	k = strndup(kv, (size_t)(eq - kv));
	v = strdup(eq + 1);
	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	/* a later setting of the same key wins */
	for (size_t i = 0; i < c->nopts; i++) {
		if (!strcmp(c->opts[i].key, k)) {
			free(k);
			free((char *)c->opts[i].value);
			c->opts[i].value = v;
			return 0;
		}
	}
	c->opts[c->nopts].key = k;
	c->opts[c->nopts].value = v;
	c->nopts++;
	return 0;
}

/* ---- producer: the services drivers call ------------------------------- */

static void publish(struct capture *c)
{
	if (!c->blk)
		return;
	ring_publish(&c->ring);
	c->blk = NULL;
}

static struct ring_block *fresh_block(struct capture *c, bool wait);

/*
 * Room for one more event in the block being filled: a full event list
 * sends the block on as it is. NULL only under drop with a full ring.
 */
static struct ring_block *event_block(struct capture *c, bool wait)
{
	struct ring_block *b = c->blk ? c->blk : fresh_block(c, wait);

	if (b && b->nev == RING_MAX_EVENTS) {
		publish(c);
		b = fresh_block(c, wait);
	}
	return b;
}

static void put_event(struct ring_block *b, uint32_t kind, uint64_t a,
		      uint64_t bb)
{
	struct ring_event *e = &b->ev[b->nev++];

	e->at = b->nrec;
	e->kind = kind;
	e->a = a;
	e->b = bb;
}

/*
 * An event at the current position. Under drop with the ring full the
 * source must not wait: the event waits instead, for the next block.
 */
static void add_event(struct capture *c, uint32_t kind, uint64_t a,
		      uint64_t bb)
{
	struct ring_block *b =
		event_block(c, c->cfg.policy != BACH_POLICY_DROP);

	if (b) {
		put_event(b, kind, a, bb);
	} else if (c->npend_ev < RING_MAX_EVENTS) {
		struct ring_event *e = &c->pend_ev[c->npend_ev++];

		e->kind = kind;
		e->a = a;
		e->b = bb;
	}
}

/* Gap markers for lost records at the block's end; false when it is full. */
static bool put_markers(struct capture *c, struct ring_block *b,
			uint64_t *lost)
{
	while (*lost) {
		uint32_t n = *lost > UINT32_MAX ? UINT32_MAX : (uint32_t)*lost;

		if (b->nrec == RING_BLOCK_RECS)
			return false;
		bach_rec_put(b->data + (size_t)b->nrec * BACH_REC_SIZE, n, 0,
			     BACH_GAP_CTL);
		b->nrec++;
		b->nmarkers++;
		atomic_fetch_add_explicit(&c->markers, 1, memory_order_relaxed);
		*lost -= n;
	}
	return true;
}

/* A gap at the current position of c->blk (which must exist). */
static void record_gap(struct capture *c, uint64_t lost,
		       enum bach_gap_cause cause)
{
	uint64_t left = lost;
	struct ring_block *b =
		event_block(c, c->cfg.policy != BACH_POLICY_DROP);

	if (!b) { /* drop, ring full: recorded where room appears */
		c->pending[cause] += lost;
		return;
	}
	put_event(b, RING_EV_GAP, lost, cause);
	if (!c->cfg.gap_markers)
		return;
	while (!put_markers(c, c->blk, &left)) {
		/* rare: the marker spills into the next block */
		publish(c);
		fresh_block(c, true);
	}
}

/* Record the gaps that waited for room, one per cause. */
static void record_pending(struct capture *c)
{
	for (int cause = 0; cause < NCAUSES; cause++) {
		uint64_t lost = c->pending[cause];

		if (lost) {
			c->pending[cause] = 0;
			record_gap(c, lost, cause);
		}
	}
}

/*
 * A new block to fill. Under stall a full ring holds the source until the
 * writer drains (a stall, recorded); under drop it gives NULL unless wait.
 */
static struct ring_block *fresh_block(struct capture *c, bool wait)
{
	struct ring_block *b = ring_producer_block(&c->ring, false);
	uint64_t t0 = 0, t1 = 0;

	c->stalled = false;
	if (!b) {
		if (c->cfg.policy == BACH_POLICY_DROP && !wait)
			return NULL;
		t0 = bach_now_ns();
		b = ring_producer_block(&c->ring, true);
		t1 = bach_now_ns();
		if (c->cfg.policy == BACH_POLICY_STALL) {
			c->stalled = true;
			atomic_fetch_add(&c->stalls, 1);
			atomic_fetch_add(&c->stall_ns, t1 - t0);
		}
	}
	b->nrec = b->nmarkers = b->nev = 0;
	c->blk = b;
	c->blk_born = bach_now_ns();
	if (c->stalled)
		add_event(c, RING_EV_STALL, t0, t1);
	record_pending(c);
	/* events that waited for room (taken first: add_event may recurse) */
	if (c->npend_ev) {
		struct ring_event ev[RING_MAX_EVENTS];
		unsigned n = c->npend_ev;

		memcpy(ev, c->pend_ev, n * sizeof(*ev));
		c->npend_ev = 0;
		for (unsigned i = 0; i < n; i++)
			add_event(c, ev[i].kind, ev[i].a, ev[i].b);
	}
	return c->blk;
}

static struct ring_block *get_block(struct capture *c)
{
	return c->blk ? c->blk : fresh_block(c, false);
}

static void count_lost(struct capture *c, uint64_t n, enum bach_gap_cause cause)
{
	/* produced before lost: a reader of lost then produced never sees more lost */
	atomic_fetch_add(&c->produced, n);
	atomic_fetch_add(&c->lost, n);
	atomic_fetch_add_explicit(&c->lost_by[cause], n, memory_order_relaxed);
}

void bach_source_records(struct bach_source *src, const uint8_t *recs,
			 size_t n)
{
	struct capture *c = src->c;

	while (n) {
		struct ring_block *b = get_block(c);
		size_t k;

		if (!b) { /* drop: counted now, recorded where room appears */
			count_lost(c, n, BACH_GAP_RING);
			c->pending[BACH_GAP_RING] += n;
			return;
		}
		k = RING_BLOCK_RECS - b->nrec;		if (k > n)
			k = n;
		memcpy(b->data + (size_t)b->nrec * BACH_REC_SIZE, recs,
		       k * BACH_REC_SIZE);
		b->nrec += (uint32_t)k;
		recs += k * BACH_REC_SIZE;
		n -= k;
		atomic_fetch_add_explicit(&c->produced, k, memory_order_relaxed);
		if (b->nrec == RING_BLOCK_RECS)
			publish(c);
	}
	/* a slow source still reaches the disk within a fraction of a second */
	bach_source_flush(src);
}

void bach_source_flush(struct bach_source *src)
{
	struct capture *c = src->c;

	if (c->blk && c->blk->nrec &&
	    bach_now_ns() - c->blk_born > c->cfg.flush_ms * 1000000ull)
		publish(c);
}

void bach_source_gap(struct bach_source *src, uint64_t lost,
		     enum bach_gap_cause cause)
{
	struct capture *c = src->c;
	struct ring_block *b;

	if (!lost)
		return;
	count_lost(c, lost, cause);
	b = event_block(c, false);
	if (!b) {
		c->pending[cause] += lost;
		return;
	}
	record_gap(c, lost, cause);
}

bool bach_source_stalled(struct bach_source *src)
{
	return src->c->stalled;
}

void bach_json_escape(char *dst, size_t cap, const char *s)
{
	json_escape(dst, cap, s);
}

void bach_source_identity(struct bach_source *src, const char *json_members)
{
	struct capture *c = src->c;

	pthread_mutex_lock(&c->mu);
	snprintf(c->identity, sizeof(c->identity), "%s", json_members);
	pthread_mutex_unlock(&c->mu);
}

void bach_source_board_status(struct bach_source *src,
			      const struct bach_board_status *st)
{
	struct capture *c = src->c;

	/*
	 * The board held the CPU since its last status (counters start at
	 * zero with the capture): a stall of its own.
	 */
	if (st->stall_episodes > c->board.stall_episodes) {
		add_event(c, RING_EV_BOARD_STALL,
			  st->stall_episodes - c->board.stall_episodes,
			  st->stalled_clocks - c->board.stalled_clocks);
		atomic_fetch_add(&c->board_stalls, st->stall_episodes -
							   c->board.stall_episodes);
	}
	pthread_mutex_lock(&c->mu);	/* capture_status() reads it */
	c->board = *st;
	c->have_board_status = true;
	pthread_mutex_unlock(&c->mu);
	atomic_store(&c->clock_hz, st->clock_hz);
}

void bach_source_event(struct bach_source *src, const char *event,
		       const char *detail)
{
	struct capture *c = src->c;

	add_event(c, !strcmp(event, "device_lost") ? RING_EV_DEVICE_LOST :
						      RING_EV_DEVICE_BACK,
		  0, 0);
	publish(c); /* the writer hears of it now */
	log_notice("%s: %s%s%s", c->cfg.driver, event, detail ? ": " : "",
		   detail ? detail : "");
}

int bach_source_error(struct bach_source *src, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("%s: %s", src->c->cfg.driver, msg);
	return err;
}

static void parser_records(void *ctx, const uint8_t *recs, size_t n,
			   uint64_t ts)
{
	(void)ts;
	bach_source_records(ctx, recs, n);
}

static void parser_gap(void *ctx, uint64_t lost, enum bach_gap_cause cause)
{
	bach_source_gap(ctx, lost, cause);
}

static void parser_status(void *ctx, const struct bach_board_status *st)
{
	bach_source_board_status(ctx, st);
}

static const struct bach_parser_ops parser_ops = {
	.records = parser_records,
	.gap = parser_gap,
	.status = parser_status,
};

void bach_source_frames(struct bach_source *src, const uint8_t *buf,
			size_t len)
{
	struct capture *c = src->c;

	/* the board's bytes as they came, for replay (one write a transfer) */
	if (c->dump_fd >= 0 && write(c->dump_fd, buf, len) != (ssize_t)len) {
		log_warn("%s/board-stream.bin: %s: no longer kept", c->capdir,
			 strerror(errno));
		close(c->dump_fd);
		c->dump_fd = -1;
	}
	bach_parser_feed(c->parser, buf, len);
}

static void *acq_main(void *arg)
{
	struct capture *c = arg;

	c->run_err = c->drv->run(&c->src, c->priv);
	if (c->run_err)
		log_err("%s: acquisition ended: %s", c->cfg.driver,
			strerror(-c->run_err));
	/*
	 * Frames lost at the very end reveal no gap by themselves: the
	 * board's last status says how many records it sampled.
	 */
	if (c->have_board_status &&
	    c->board.records > bach_parser_next_index(c->parser))
		bach_source_gap(&c->src,
				c->board.records -
					bach_parser_next_index(c->parser),
				BACH_GAP_FRAMES);
	/* losses at the very end still get their place in the trace */
	for (int cause = 0; cause < NCAUSES; cause++) {
		if (c->pending[cause]) {
			if (!c->blk)
				fresh_block(c, true);
			record_pending(c);
			break;
		}
	}
	publish(c);
	ring_close(&c->ring);
	atomic_store(&c->acq_done, true);
	return NULL;
}

/* ---- writer ------------------------------------------------------------ */

static const char *seg_ext(const struct capture *c)
{
	return c->cfg.compress ? ".byu.gz" : ".byu";
}

static int open_segment(struct capture *c)
{
	char part[80];

	c->segno++;
	snprintf(c->segname, sizeof(c->segname), "seg-%06u%s", c->segno,
		 seg_ext(c));
	snprintf(part, sizeof(part), "%s.part", c->segname);
	c->segfd = openat(c->dirfd, part,
			  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (c->segfd < 0) {
		int err = -errno;

		log_err("%s/%s: cannot create: %s", c->capdir, part,
			strerror(errno));
		return err;
	}
	segio_attach(&c->io, c->segfd);
	manifest_reserve(&c->man, 256 << 10);
	c->seg_records = c->seg_markers = 0;
	c->seg_record_bytes = 0;
	c->seg_started_ns = bach_now_ns();
	pthread_mutex_lock(&c->mu);
	snprintf(c->open_seg, sizeof(c->open_seg), "%s", part);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/*
 * Send what was appended to the kernel now, unless more blocks are already
 * waiting in the ring: they join it in one write a moment later. Every
 * finished block thus reaches the kernel whole and at once (a crash loses
 * no more), in writes of up to SEGIO_BUF.
 */
static void push(struct capture *c)
{
	if (!c->write_err && !ring_waiting(&c->ring))
		c->write_err = segio_push(&c->io);
}

/* Append finished members; with wait, every pending one. */
static void drain_pool(struct capture *c, bool wait)
{
	const uint8_t *out;
	size_t len;

	while (bach_zpool_peek(c->z.pool, wait, &out, &len, NULL)) {
		if (!c->write_err)
			c->write_err = segio_append(&c->io, out, len);
		bach_zpool_release(c->z.pool);
		ring_release(&c->ring);
		atomic_fetch_add(&c->progress, 1);
	}
	push(c);
	atomic_store(&c->bytes, c->bytes_closed + c->io.off);
}

static void note_write_error(struct capture *c)
{
	log_err("%s/%s.part: write failed: %s%s", c->capdir, c->segname,
		strerror(-c->write_err),
		c->write_err == -ENOSPC ?
			" (the disk is full; closing the segment with what was written)" :
			"");
}

/* Close the open segment: finish, sync, rename, sync the directory. */
static int close_segment(struct capture *c)
{
	char part[80];
	struct seg_result r;
	uint64_t cut;
	int err;

	if (c->segfd < 0)
		return 0;
	if (c->z.pool)
		drain_pool(c, true);
	if (!c->write_err && c->cfg.compress)
		c->write_err = segio_append(&c->io, bach_bgzf_eof,
					    BACH_BGZF_EOF_SIZE);
	if (!c->write_err)
		c->write_err = segio_flush(&c->io);
	else
		segio_flush(&c->io);
	snprintf(part, sizeof(part), "%s.part", c->segname);
	if (!c->write_err) {
		if (fdatasync(c->segfd) < 0)
			c->write_err = -errno;
	}
	close(c->segfd);
	c->segfd = -1;
	if (c->write_err) {
		/* keep every complete block written before the failure */
		note_write_error(c);
		err = segment_finish_part(c->dirfd, part, &r);
		if (err) {
			log_err("%s/%s: cannot close after the error: %s",
				c->capdir, part, strerror(-err));
			return c->write_err;
		}
		manifest_event(&c->man, "segment",
			       "\"name\":\"%s\",\"records\":%llu,\"bytes\":%llu,\"crc32\":\"%08x\",\"error\":\"%s\",\"cut_bytes\":%llu%s",
			       c->segname, (unsigned long long)r.records,
			       (unsigned long long)r.bytes, r.crc,
			       strerror(-c->write_err),
			       (unsigned long long)r.cut,
			       r.removed ? ",\"removed\":true" : "");
		/* real records the cut took off were counted written: lost */
		cut = (c->seg_records - c->seg_markers) - (r.records - r.markers);
		atomic_fetch_sub(&c->written, cut);
		atomic_fetch_add(&c->lost, cut);
		atomic_fetch_add(&c->lost_disk, cut);
		c->trace_pos -= c->seg_records - r.records; /* the trace ends here */
		atomic_fetch_add(&c->segments, 1);
		c->bytes_closed += r.bytes;
		atomic_store(&c->bytes, c->bytes_closed);
		manifest_sync(&c->man);
		return c->write_err;
	}
	if (!c->seg_records) {
		/* nothing came: no segment rather than an empty one */
		if (unlinkat(c->dirfd, part, 0) < 0 || fsync(c->dirfd) < 0)
			log_warn("%s/%s: cannot remove: %s", c->capdir, part,
				 strerror(errno));
		return 0;
	}
	if (renameat(c->dirfd, part, c->dirfd, c->segname) < 0 ||
	    fsync(c->dirfd) < 0) {
		c->write_err = -errno;
		log_err("%s/%s: cannot close: %s", c->capdir, part,
			strerror(errno));
		return c->write_err;
	}
	atomic_fetch_add(&c->segments, 1);
	c->bytes_closed += c->io.off;
	atomic_store(&c->bytes, c->bytes_closed);
	manifest_event(&c->man, "segment",
		       "\"name\":\"%s\",\"records\":%llu,\"gap_markers\":%llu,\"bytes\":%llu,\"crc32\":\"%08x\"",
		       c->segname, (unsigned long long)c->seg_records,
		       (unsigned long long)c->seg_markers,
		       (unsigned long long)c->io.off, c->io.crc);
	manifest_sync(&c->man);
	log_info("%s/%s closed: %llu records, %llu bytes", c->capdir,
		 c->segname, (unsigned long long)c->seg_records,
		 (unsigned long long)c->io.off);
	return 0;
}

static void write_events(struct capture *c, const struct ring_block *b)
{
	for (uint32_t i = 0; i < b->nev; i++) {
		const struct ring_event *e = &b->ev[i];
		uint64_t at = c->trace_pos + e->at;

		switch (e->kind) {
		case RING_EV_GAP:
			manifest_event(&c->man, "gap",
				       "\"segment\":\"%s\",\"at\":%llu,\"lost\":%llu,\"cause\":\"%s\"",
				       c->segname, (unsigned long long)at,
				       (unsigned long long)e->a,
				       bach_gap_cause_name((enum bach_gap_cause)e->b));
			break;
		case RING_EV_STALL: {
			/* start and end in ns since the capture started */
			uint64_t ns = e->b - e->a;
			uint64_t hz = atomic_load(&c->clock_hz);

			manifest_event(&c->man, "stall",
				       "\"segment\":\"%s\",\"at\":%llu,\"source\":\"ring\",\"start_ns\":%llu,\"end_ns\":%llu,\"ns\":%llu,\"cycles\":%llu",
				       c->segname, (unsigned long long)at,
				       (unsigned long long)(e->a - c->t0_ns),
				       (unsigned long long)(e->b - c->t0_ns),
				       (unsigned long long)ns,
				       (unsigned long long)(hz ? ns * hz / 1000000000ull : 0));
			break;
		}
		case RING_EV_BOARD_STALL:
			manifest_event(&c->man, "stall",
				       "\"segment\":\"%s\",\"at\":%llu,\"source\":\"board\",\"episodes\":%llu,\"cycles\":%llu",
				       c->segname, (unsigned long long)at,
				       (unsigned long long)e->a,
				       (unsigned long long)e->b);
			break;
		case RING_EV_DEVICE_LOST:
			manifest_event(&c->man, "device_lost",
				       "\"segment\":\"%s\",\"at\":%llu",
				       c->segname, (unsigned long long)at);
			/* the segment closes with the device */
			atomic_store(&c->rotate_requested, true);
			break;
		case RING_EV_DEVICE_BACK:
			manifest_event(&c->man, "device_back",
				       "\"segment\":\"%s\",\"at\":%llu",
				       c->segname, (unsigned long long)at);
			break;
		}
	}
}

static void write_marks(struct capture *c)
{
	static char esc[JSON_ESCAPED_MAX];

	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->nmarks; i++) {
		json_escape(esc, sizeof(esc), c->marks[i]);
		manifest_event(&c->man, "mark",
			       "\"segment\":\"%s\",\"at\":%llu,\"text\":\"%s\"",
			       c->segname, (unsigned long long)c->trace_pos,
			       esc);
		free(c->marks[i]);
	}
	c->nmarks = 0;
	pthread_mutex_unlock(&c->mu);
}

static void write_block(struct capture *c, struct ring_block *b)
{
	size_t len = (size_t)b->nrec * BACH_REC_SIZE;
	uint64_t real = b->nrec - b->nmarkers;

	write_events(c, b);
	if (!len) {
		/*
		 * Events only: an empty member would read as the end of the
		 * file. Blocks are released oldest first, so the pool's go
		 * before this one.
		 */
		if (c->z.pool)
			drain_pool(c, true);
		ring_release(&c->ring);
		return;
	}
	atomic_store(&c->write_started_ns, bach_now_ns());
	if (c->z.pool) {
		if (bach_zpool_pending(c->z.pool) == bach_zpool_depth(c->z.pool)) {
			const uint8_t *out;
			size_t olen;

			if (bach_zpool_peek(c->z.pool, true, &out, &olen, NULL)) {
				if (!c->write_err)
					c->write_err = segio_append(&c->io, out,
								    olen);
				bach_zpool_release(c->z.pool);
				ring_release(&c->ring);
			}
		}
		bach_zpool_submit(c->z.pool, b->data, len, b);
		drain_pool(c, false);
	} else {
		if (!c->write_err)
			c->write_err = segio_append(&c->io, b->data, len);
		ring_release(&c->ring);
		push(c);
	}
	atomic_store(&c->write_started_ns, 0);
	atomic_fetch_add(&c->progress, 1);
	c->trace_pos += b->nrec;
	c->seg_records += b->nrec;
	c->seg_markers += b->nmarkers;
	c->seg_record_bytes += len;
	atomic_fetch_add_explicit(&c->written, real, memory_order_relaxed);
	atomic_store(&c->bytes, c->bytes_closed + c->io.off);
}

static bool rotation_due(struct capture *c)
{
	if (atomic_exchange(&c->rotate_requested, false))
		return true;
	if (c->cfg.rotate_bytes && c->seg_record_bytes >= c->cfg.rotate_bytes)
		return true;
	return c->cfg.rotate_seconds &&
	       bach_now_ns() - c->seg_started_ns >= c->cfg.rotate_seconds * 1000000000ull;
}

static void *wr_main(void *arg)
{
	struct capture *c = arg;

	for (;;) {
		bool ended;
		struct ring_block *b = ring_consume(&c->ring, 200, &ended);

		if (c->write_err)
			break;
		write_marks(c);
		if (b)
			write_block(c, b);
		else if (c->z.pool)
			/* the source is quiet: what is compressed goes out now */
			drain_pool(c, true);
		if (c->write_err)
			break;
		if (ended)
			break;
		if (c->seg_records && rotation_due(c)) {
			int err = close_segment(c);

			if (!err)
				err = open_segment(c);
			if (err) {
				/* stop the source as for a failed write */
				if (!c->write_err)
					c->write_err = err;
				break;
			}
		}
	}
	if (c->write_err) {
		/* stop the source; release what the ring holds, counted lost */
		bool ended;
		struct ring_block *b;

		close_segment(c);
		c->drv->stop(c->priv);
		atomic_store(&c->stop_requested, true);
		while ((b = ring_consume(&c->ring, -1, &ended))) {
			atomic_fetch_add(&c->lost, b->nrec - b->nmarkers);
			atomic_fetch_add(&c->lost_disk, b->nrec - b->nmarkers);
			ring_release(&c->ring);
		}
		/* the manifest accounts for every record the disk took */
		if (atomic_load(&c->lost_disk))
			manifest_event(&c->man, "gap",
				       "\"segment\":\"%s\",\"at\":%llu,\"lost\":%llu,\"cause\":\"disk\"",
				       c->segname,
				       (unsigned long long)c->trace_pos,
				       (unsigned long long)atomic_load(&c->lost_disk));
	} else {
		close_segment(c);
	}
	atomic_store(&c->wr_done, true);
	return NULL;
}

/* ---- session ----------------------------------------------------------- */

static int make_capture_dir(struct capture *c)
{
	char id[64];
	time_t t = time(NULL);
	struct tm tm;
	int outfd, err;

	gmtime_r(&t, &tm);
	strftime(id, sizeof(id), "%Y%m%dT%H%M%SZ", &tm);
	outfd = open(c->cfg.output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (outfd < 0) {
		err = -errno;
		log_err("output directory %s: %s", c->cfg.output,
			strerror(errno));
		return err;
	}
	for (int i = 1; i < 100; i++) {
		char name[80];

		if (i == 1)
			snprintf(name, sizeof(name), "%s", id);
		else
			snprintf(name, sizeof(name), "%s-%d", id, i);
		if (mkdirat(outfd, name, 0755) == 0) {
			snprintf(c->capdir, sizeof(c->capdir), "%s/%s",
				 c->cfg.output, name);
			c->dirfd = openat(outfd, name,
					  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			err = c->dirfd < 0 ? -errno : 0;
			if (!err)
				fsync(outfd);
			close(outfd);
			if (err)
				log_err("%s: %s", c->capdir, strerror(-err));
			return err;
		}
		if (errno != EEXIST) {
			err = -errno;
			log_err("cannot create a capture directory in %s: %s",
				c->cfg.output, strerror(errno));
			close(outfd);
			return err;
		}
	}
	close(outfd);
	log_err("%s: too many captures started in this second", c->cfg.output);
	return -EEXIST;
}

static int lock_output(struct capture *c)
{
	char path[4200];
	int err;

	snprintf(path, sizeof(path), "%s/.bach.lock", c->cfg.output);
	c->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (c->lock_fd < 0) {
		err = -errno;
		log_err("output directory %s: %s", c->cfg.output,
			strerror(errno));
		return err;
	}
	if (flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		err = -errno;
		log_err("output directory %s: %s", c->cfg.output,
			errno == EWOULDBLOCK ?
				"another bachd or bach capture is writing there" :
				strerror(errno));
		return err;
	}
	return 0;
}

static void manifest_started(struct capture *c)
{
	char opts[2048] = "", esc[1024], cfgp[4200];
	size_t n = 0;

	for (size_t i = 0; i < c->cfg.nopts && n < sizeof(opts) - 1; i++) {
		char k[256];

		json_escape(k, sizeof(k), c->cfg.opts[i].key);
		json_escape(esc, sizeof(esc), c->cfg.opts[i].value);
		n += (size_t)snprintf(opts + n, sizeof(opts) - n, "%s\"%s\":\"%s\"",
				      i ? "," : "", k, esc);
	}
	json_escape(cfgp, sizeof(cfgp), c->cfg.config_path);
	pthread_mutex_lock(&c->mu);
	manifest_event(&c->man, "started",
		       "\"version\":1,\"driver\":\"%s\",\"options\":{%s},\"device\":{%s},"
		       "\"config\":{\"file\":\"%s\",\"policy\":\"%s\",\"gap_markers\":%s,"
		       "\"compress\":%s,\"level\":%d,\"ring_bytes\":%llu,"
		       "\"rotate_bytes\":%llu,\"rotate_seconds\":%llu,\"io\":\"%s\",\"raw_dump\":%s}",
		       c->cfg.driver, opts, c->identity, cfgp,
		       c->cfg.policy == BACH_POLICY_STALL ? "stall" : "drop",
		       c->cfg.gap_markers ? "true" : "false",
		       c->cfg.compress ? "true" : "false", c->cfg.level,
		       (unsigned long long)c->cfg.ring_bytes,
		       (unsigned long long)c->cfg.rotate_bytes,
		       (unsigned long long)c->cfg.rotate_seconds,
		       c->io.uring ? "io_uring" : "pwrite",
		       c->cfg.raw_dump ? "true" : "false");
	pthread_mutex_unlock(&c->mu);
}

int capture_open(struct capture **cp, const struct capture_config *cfg)
{
	struct capture *c = calloc(1, sizeof(*c));
	size_t nblocks;
	int err, uring_err, n;

	*cp = c;
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->dirfd = c->segfd = c->dump_fd = c->lock_fd = -1;
	c->man.fd = -1;
	pthread_mutex_init(&c->mu, NULL);
	/* the manifest and the logs name the capture by its absolute path */
	if (!realpath(cfg->output, c->cfg.output)) {
		err = -errno;
		log_err("output directory %s: %s", cfg->output,
			strerror(errno));
		return err;
	}
	c->src.c = c;

	/*
	 * One writer per output directory: a second one would "recover" the
	 * first one's open segment from under it.
	 */
	err = lock_output(c);
	if (err)
		return err;
	c->drv = bach_driver_find(cfg->driver);
	if (!c->drv) {
		log_err("no driver '%s'", cfg->driver);
		return -ENOENT;
	}
	n = recover_outdir(cfg->output);
	if (n < 0 && n != -ENOENT) {
		log_err("output directory %s: %s", cfg->output, strerror(-n));
		return n;
	}
	if (n > 0)
		log_notice("%s: recovered %d unfinished segment%s left by an earlier run",
			   cfg->output, n, n == 1 ? "" : "s");
	nblocks = (size_t)(cfg->ring_bytes / (RING_BLOCK_RECS * BACH_REC_SIZE));
	err = ring_init(&c->ring, nblocks);
	if (err) {
		log_err("ring of %llu bytes: %s",
			(unsigned long long)cfg->ring_bytes, strerror(-err));
		return err;
	}
	c->parser = bach_parser_new(&parser_ops, &c->src);
	if (!c->parser)
		return -ENOMEM;
	err = segio_init(&c->io, cfg->queue_depth, cfg->io_uring, &uring_err);
	if (err)
		return err;
	c->io.delay_ms = cfg->test_writer_delay_ms;
	if (cfg->io_uring && uring_err)
		log_warn("io_uring refused (%s): writing with pwrite instead",
			 strerror(-uring_err));
	if (cfg->compress) {
		int threads = cfg->threads > 0 ? cfg->threads :
						 (int)sysconf(_SC_NPROCESSORS_ONLN);

		/*
		 * The ring holds the input of every block in flight: the pool
		 * never takes more than half of it, so the source always has
		 * room to go on.
		 */
		size_t depth = (size_t)threads * 4;

		if (depth > c->ring.nblocks / 2)
			depth = c->ring.nblocks / 2 ? c->ring.nblocks / 2 : 1;
		c->z.pool = bach_zpool_new(threads, depth,
					   BACH_DEFLATE_LIBDEFLATE, cfg->level);
		if (!c->z.pool)
			return -ENOMEM;
	}
	c->priv = calloc(1, c->drv->priv_size ? c->drv->priv_size : 1);
	if (!c->priv)
		return -ENOMEM;
	err = c->drv->open(&c->src, c->priv, cfg->opts, cfg->nopts);
	if (err) {
		/* close() releases whatever a failed open() got so far */
		if (c->drv->close)
			c->drv->close(c->priv);
		free(c->priv);
		c->priv = NULL;
		return err;
	}
	err = make_capture_dir(c);
	if (err)
		return err;
	err = manifest_open(&c->man, c->dirfd);
	if (err) {
		log_err("%s/manifest.jsonl: %s", c->capdir, strerror(-err));
		return err;
	}
	if (cfg->raw_dump) {
		c->dump_fd = openat(c->dirfd, "board-stream.bin",
				    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (c->dump_fd < 0) {
			err = -errno;
			log_err("%s/board-stream.bin: %s", c->capdir,
				strerror(errno));
			return err;
		}
	}
	manifest_started(c);
	err = open_segment(c);
	if (err)
		return err;
	log_info("capturing from %s into %s", cfg->driver, c->capdir);
	return 0;
}

int capture_start(struct capture *c)
{
	c->t0_ns = bach_now_ns();
	if (pthread_create(&c->wr_tid, NULL, wr_main, c))
		return -EAGAIN;
	if (pthread_create(&c->acq_tid, NULL, acq_main, c)) {
		ring_close(&c->ring);
		pthread_join(c->wr_tid, NULL);
		return -EAGAIN;
	}
	c->started = true;
	return 0;
}

void capture_stop(struct capture *c)
{
	if (!atomic_exchange(&c->stop_requested, true) && c->started)
		c->drv->stop(c->priv);
}

bool capture_done(struct capture *c)
{
	return atomic_load(&c->acq_done) && atomic_load(&c->wr_done);
}

void capture_rotate(struct capture *c)
{
	atomic_store(&c->rotate_requested, true);
}

int capture_mark(struct capture *c, const char *text)
{
	int err = -ENOSPC;
	char *t = strdup(text);

	if (!t)
		return -ENOMEM;
	pthread_mutex_lock(&c->mu);
	if (c->nmarks < sizeof(c->marks) / sizeof(*c->marks)) {
		c->marks[c->nmarks++] = t;
		t = NULL;
		err = 0;
	}
	pthread_mutex_unlock(&c->mu);
	free(t);
	return err;
}

void capture_status(struct capture *c, struct capture_status *st)
{
	uint64_t ws = atomic_load(&c->write_started_ns);
	struct bach_parser_counters pc;

	memset(st, 0, sizeof(*st));
	/* written and lost first: then produced >= written + lost */
	st->written = atomic_load(&c->written);
	st->lost = atomic_load(&c->lost);
	st->produced = atomic_load(&c->produced);
	for (int i = 0; i <= BACH_GAP_DEVICE; i++)
		st->lost_by[i] = atomic_load(&c->lost_by[i]);
	st->lost_disk = atomic_load(&c->lost_disk);
	st->markers = atomic_load(&c->markers);
	st->bytes = atomic_load(&c->bytes);
	st->segments = atomic_load(&c->segments);
	st->stalls = atomic_load(&c->stalls);
	st->board_stalls = atomic_load(&c->board_stalls);
	st->stall_ns = atomic_load(&c->stall_ns);
	st->ring_used = ring_fill(&c->ring);
	st->ring_blocks = c->ring.nblocks;
	st->running = c->started && !atomic_load(&c->acq_done);
	st->writer_progress = atomic_load(&c->progress);
	st->writer_blocked = ws && bach_now_ns() - ws > BLOCKED_AFTER_NS;
	if (c->parser) {
		bach_parser_counters(c->parser, &pc);
		st->corrupt_frames = pc.bad_crc + pc.bad_header;
	}
	pthread_mutex_lock(&c->mu);
	st->have_board = c->have_board_status;
	st->board = c->board;
	snprintf(st->capture_dir, sizeof(st->capture_dir), "%s", c->capdir);
	snprintf(st->segment, sizeof(st->segment), "%s", c->open_seg);
	pthread_mutex_unlock(&c->mu);
	snprintf(st->driver, sizeof(st->driver), "%s", c->cfg.driver);
}

size_t capture_status_json(const struct capture_status *st, char *buf,
			   size_t cap)
{
	char dir[4400];
	int n;

	json_escape(dir, sizeof(dir), st->capture_dir);
	n = snprintf(buf, cap,
		     "{\"running\":%s,\"driver\":\"%s\",\"capture\":\"%s\",\"segment\":\"%s\","
		     "\"produced\":%llu,\"written\":%llu,\"lost\":%llu,"
		     "\"lost_by\":{\"overflow\":%llu,\"frames\":%llu,\"corrupt\":%llu,\"ring\":%llu,\"device\":%llu,\"disk\":%llu},"
		     "\"in_flight\":%llu,\"gap_markers\":%llu,\"bytes\":%llu,\"segments\":%llu,"
		     "\"stalls\":%llu,\"stall_ns\":%llu,\"board_stalls\":%llu,\"ring_used\":%llu,\"ring_blocks\":%llu,"
		     "\"corrupt_frames\":%llu,\"writer_blocked\":%s}",
		     st->running ? "true" : "false", st->driver, dir, st->segment,
		     (unsigned long long)st->produced,
		     (unsigned long long)st->written,
		     (unsigned long long)st->lost,
		     (unsigned long long)st->lost_by[BACH_GAP_OVERFLOW],
		     (unsigned long long)st->lost_by[BACH_GAP_FRAMES],
		     (unsigned long long)st->lost_by[BACH_GAP_CORRUPT],
		     (unsigned long long)st->lost_by[BACH_GAP_RING],
		     (unsigned long long)st->lost_by[BACH_GAP_DEVICE],
		     (unsigned long long)st->lost_disk,
		     (unsigned long long)(st->produced > st->written + st->lost ?
						  st->produced - st->written - st->lost :
						  0),
		     (unsigned long long)st->markers,
		     (unsigned long long)st->bytes,
		     (unsigned long long)st->segments,
		     (unsigned long long)st->stalls,
		     (unsigned long long)st->stall_ns,
		     (unsigned long long)st->board_stalls,
		     (unsigned long long)st->ring_used,
		     (unsigned long long)st->ring_blocks,
		     (unsigned long long)st->corrupt_frames,
		     st->writer_blocked ? "true" : "false");
	if (n > 0 && (size_t)n < cap && st->have_board) {
		/* the board's last status frame, in place of the closing } */
		const struct bach_board_status *b = &st->board;
		int m = snprintf(buf + n - 1, cap - (size_t)n + 1,
				 ",\"board\":{\"fifo_fill\":%u,\"fifo_size\":%u,"
				 "\"records\":%llu,\"overflow\":%llu,"
				 "\"stall_episodes\":%u,\"stalled_clocks\":%llu,"
				 "\"clock_hz\":%u}}",
				 b->fifo_fill, b->fifo_size,
				 (unsigned long long)b->records,
				 (unsigned long long)b->overflow,
				 b->stall_episodes,
				 (unsigned long long)b->stalled_clocks,
				 b->clock_hz);

		n = m < 0 ? n : n - 1 + m;
	}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

int capture_close(struct capture *c, struct capture_status *final)
{
	int status = 0;

	if (!c)
		return 2;
	if (c->started) {
		pthread_join(c->acq_tid, NULL);
		pthread_join(c->wr_tid, NULL);
	} else if (c->segfd >= 0) {
		close_segment(c);
	}
	if (final)
		capture_status(c, final);
	if (c->man.fd >= 0 && final) {
		const char *state = c->write_err ? "error" :
				    c->run_err	 ? "source_error" :
						   "clean";

		manifest_event(&c->man, "ended",
			       "\"state\":\"%s\",\"produced\":%llu,\"written\":%llu,\"lost\":%llu,"
			       "\"gap_markers\":%llu,\"segments\":%llu,\"bytes\":%llu,\"stalls\":%llu,\"board_stalls\":%llu",
			       state, (unsigned long long)final->produced,
			       (unsigned long long)final->written,
			       (unsigned long long)final->lost,
			       (unsigned long long)final->markers,
			       (unsigned long long)final->segments,
			       (unsigned long long)final->bytes,
			       (unsigned long long)final->stalls,
			       (unsigned long long)final->board_stalls);
		manifest_sync(&c->man);
	}
	if (c->write_err)
		status = c->write_err == -ENOSPC ? EXIT_ENOSPC : 1;
	else if (c->run_err)
		status = EXIT_SOURCE;
	if (c->priv && c->drv->close)
		c->drv->close(c->priv);
	free(c->priv);
	bach_zpool_free(c->z.pool);
	segio_free(&c->io);
	if (c->parser)
		bach_parser_free(c->parser);
	if (c->ring.blocks)
		ring_free(&c->ring);
	manifest_close(&c->man);
	if (c->dump_fd >= 0) {
		fdatasync(c->dump_fd);
		close(c->dump_fd);
	}
	if (c->dirfd >= 0)
		close(c->dirfd);
	if (c->lock_fd >= 0)
		close(c->lock_fd); /* and the lock with it */
	for (size_t i = 0; i < c->nmarks; i++)
		free(c->marks[i]);
	for (size_t i = 0; i < c->cfg.nopts; i++) {
		free((char *)c->cfg.opts[i].key);
		free((char *)c->cfg.opts[i].value);
	}
	pthread_mutex_destroy(&c->mu);
	free(c);
	return status;
}
