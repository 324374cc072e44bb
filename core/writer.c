// SPDX-License-Identifier: MIT
/*
 * The writer thread of a capture, its loop: takes ring blocks in order,
 * writes the manifest events and marks they carry, hands their records to
 * the open segment (segment.c) under the disk guard (diskguard.c), and
 * rotates by size, time or request; autostop ends the capture there.
 */
#include <stdatomic.h>
#include <string.h>

#include "bach/record.h"
#include "bach/trace.h"
#include "capture_priv.h"
#include "lib/io/manifest.h"
#define LOG_PREFIX NULL
#include "log.h"

/*
 * A manifest line that cannot be written leaves the capture without its
 * accounting: it stops as for a failed write, and says why once.
 */
static bool manifest_failed(struct capture *c)
{
	struct capture_wr *w = &c->wr;

	if (!w->man.err || w->manifest_err)
		return w->manifest_err != 0;
	w->manifest_err = w->man.err;
	log_err("%s/%s: cannot write: %s: stopping, since what is captured could no longer be accounted for",
		c->capdir, BACH_MANIFEST_NAME, strerror(-w->man.err));
	if (!w->write_err)
		w->write_err = w->man.err;
	return true;
}

/*
 * The manifest events a block carries, at their positions; with at_end
 * (the block's records never reach the trace) all at the trace's end.
 */
static void write_events(struct capture *c, const struct ring_block *b,
			 bool at_end)
{
	struct capture_wr *w = &c->wr;

	for (uint32_t i = 0; i < b->nev; i++) {
		const struct ring_event *e = &b->ev[i];
		uint64_t at = w->trace_pos + (at_end ? 0 : e->at);

		switch (e->kind) {
		case RING_EV_GAP:
			manifest_gap(&w->man, w->segname, at, e->a,
				     (enum bach_gap_cause)e->b);
			break;
		case RING_EV_STALL: {
			uint64_t hz = atomic_load(&c->sh.clock_hz);

			manifest_stall_ring(&w->man, w->segname, at,
					    e->a - c->t0_ns, e->b - c->t0_ns,
					    e->c, e->d,
					    hz ? e->c * hz / 1000000000ull : 0);
			break;
		}
		case RING_EV_BOARD_STALL:
			manifest_stall_board(&w->man, w->segname, at, e->a,
					     e->b);
			break;
		case RING_EV_DEVICE_LOST:
			manifest_device(&w->man, true, w->segname, at);
			/* the segment closes with the device */
			atomic_store(&c->sh.rotate_requested, true);
			break;
		case RING_EV_DEVICE_BACK:
			manifest_device(&w->man, false, w->segname, at);
			break;
		case RING_EV_MARK: {
			const struct bach_source_mark *k =
				(const void *)(uintptr_t)e->a;

			if (k->rule)
				manifest_marker(&w->man, w->segname, at, e->d,
						k->rule, k->rec, k->count,
						at_end ? at : at + k->last_off,
						true);
			else
				manifest_mark(&w->man, w->segname, at, e->d,
					      k->source, k->text, true);
			break;
		}
		}
	}
}

static void write_block(struct capture *c, struct ring_block *b)
{
	struct capture_wr *w = &c->wr;
	/*
	 * Read once: once released (below, or by segment_drain()) the block is
	 * the producer's again, and it may already be filling it.
	 */
	uint32_t nrec = b->nrec, nmarkers = b->nmarkers;
	size_t len = (size_t)nrec * BACH_REC_SIZE;
	uint64_t real = nrec - nmarkers;

	write_events(c, b, false);
	marks_block(c, b, false);
	if (!len) {
		/*
		 * Events only: an empty member would read as the end of the
		 * file. Blocks are released oldest first, so the pool's go
		 * before this one.
		 */
		segment_drain(c, true);
		ring_release(&c->ring);
		return;
	}
	segment_times(c, b, nrec);
	atomic_store(&c->sh.write_started_ns, bach_now_ns());
	segment_records(c, b, len);
	atomic_store(&c->sh.write_started_ns, 0);
	atomic_fetch_add(&c->sh.progress, 1);
	w->trace_pos += nrec;
	w->seg_records += nrec;
	w->seg_markers += nmarkers;
	w->seg_record_bytes += len;
	w->disk_since += len;
	atomic_fetch_add_explicit(&c->sh.written, real, memory_order_relaxed);
	atomic_store(&c->sh.bytes, w->bytes_closed + w->io.off);
}

static bool rotation_due(struct capture *c)
{
	if (atomic_exchange(&c->sh.rotate_requested, false))
		return true;
	if (c->cfg.rotate_bytes &&
	    c->wr.seg_record_bytes >= c->cfg.rotate_bytes)
		return true;
	return c->cfg.rotate_seconds &&
	       bach_now_ns() - c->wr.seg_started_ns >=
		       c->cfg.rotate_seconds * 1000000000ull;
}

void capture_autostop(struct capture *c, const char *why)
{
	if (atomic_exchange(&c->sh.stop_requested, true))
		return; /* stopping already: not ours to explain */
	c->wr.stop_reason = why;
	log_notice("%s: stopping: %s reached", c->capdir, why);
	c->drv->stop(c->priv);
}

/*
 * Records the disk cannot take: lost, their events and marks placed at
 * the trace's end. Returns how many real records were lost.
 */
static uint64_t discard_block(struct capture *c, struct ring_block *b)
{
	uint64_t real = b->nrec - b->nmarkers;

	write_events(c, b, true);
	marks_block(c, b, true);
	atomic_fetch_add(&c->sh.lost, real);
	atomic_fetch_add(&c->sh.lost_by[BACH_GAP_DISK], real);
	ring_release(&c->ring);
	return real;
}

/* Autostop by time and by the producer's record count. */
static void autostop_due(struct capture *c, uint64_t now)
{
	if (atomic_load(&c->sh.records_reached))
		capture_autostop(c, "records");
	if (c->cfg.stop_seconds &&
	    now - c->t0_ns >= c->cfg.stop_seconds * 1000000000ull)
		capture_autostop(c, "duration");
}

/* Rotate, unless that would pass autostop's segment count. */
static int rotate(struct capture *c)
{
	uint64_t before = atomic_load(&c->sh.segments);
	int err;

	if (c->cfg.stop_segments && before + 1 >= c->cfg.stop_segments) {
		/* this one is the last: it takes what the ring still holds */
		capture_autostop(c, "segments");
		return 0;
	}
	err = diskguard_close_segment(c);
	if (!err)
		err = segment_open(c);
	return err;
}

void *capture_wr_main(void *arg)
{
	struct capture *c = arg;
	struct capture_wr *w = &c->wr;

	w->retain_ns = bach_now_ns();
	for (;;) {
		bool ended;
		struct ring_block *b;
		uint64_t now;

		/* a block taken after a failure would be neither written nor
		 * lost */
		if (w->write_err || manifest_failed(c))
			break;
		b = ring_consume(&c->ring, 200, &ended);
		now = bach_now_ns();
		if (b && !w->disk_low && diskguard_check(c, now))
			capture_autostop(c, "min_free");
		if (b && (w->disk_low || w->write_err)) {
			w->disk_lost += discard_block(c, b);
			atomic_fetch_add(&c->sh.progress, 1);
		} else if (b) {
			write_block(c, b);
		} else if (!w->disk_low) {
			/* the source is quiet: what is compressed goes out now
			 */
			segment_drain(c, true);
		}
		if (!b) {
			/* quiet: marks the trace has reached, merged markers */
			marks_idle(c, false);
			markers_flush(c, false);
		}
		if (ended)
			break;
		autostop_due(c, now);
		post_rotate_reap(0);
		if (w->disk_low) {
			atomic_store(&c->sh.rotate_requested, false);
			if (c->cfg.on_full == CAPTURE_ON_FULL_WAIT)
				diskguard_retry(c, now);
			continue;
		}
		if (w->seg_records && rotation_due(c)) {
			int err = rotate(c);

			if (err) {
				/* stop the source as for a failed write */
				if (!w->write_err)
					w->write_err = err;
				break;
			}
		} else {
			diskguard_retain(c, now);
		}
	}
	diskguard_close_segment(c);
	/* a failed write, or one at the close itself: the disk took records */
	if (w->write_err) {
		/*
		 * Stop the source and release what the ring holds, counted
		 * lost; the events those blocks carry (gaps the source had
		 * before) still go in the manifest, at the trace's end.
		 */
		bool ended;
		struct ring_block *b;

		c->drv->stop(c->priv);
		atomic_store(&c->sh.stop_requested, true);
		while ((b = ring_consume(&c->ring, -1, &ended)))
			discard_block(c, b);
	}
	/* marks asked for at the very end, and the markers the cap merged */
	marks_idle(c, true);
	markers_flush(c, true);
	diskguard_end(c);
	manifest_failed(c);
	/* shipping commands get a moment to finish; they are never killed */
	post_rotate_reap(c->cfg.post_rotate[0] ? 5000 : 0);
	atomic_store(&c->sh.disk_waiting, false);
	atomic_store(&c->sh.wr_done, true);
	return NULL;
}
