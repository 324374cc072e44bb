// SPDX-License-Identifier: MIT
/*
 * The writer thread of a capture: takes ring blocks in order, writes the
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
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "bach/bytes.h"
#include "bach/frame.h"
#include "bach/index.h"
#include "bach/manifest.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "bach/zpool.h"
#include "capture_priv.h"
#define LOG_PREFIX NULL
#include "log.h"
#include "recover.h"

/*
 * A manifest line that cannot be written leaves the capture without its
 * accounting: it stops as for a failed write, and says why once.
 */
static bool manifest_failed(struct capture *c)
{
	if (!c->man.err || c->manifest_err)
		return c->manifest_err != 0;
	c->manifest_err = c->man.err;
	log_err("%s/%s: cannot write: %s: stopping, since what is captured "
		"could no longer be accounted for",
		c->capdir, BACH_MANIFEST_NAME, strerror(-c->man.err));
	if (!c->write_err)
		c->write_err = c->man.err;
	return true;
}

/*
 * The manifest events a block carries, at their positions; with at_end
 * (the block's records never reach the trace) all at the trace's end.
 */
static void write_events(struct capture *c, const struct ring_block *b,
			 bool at_end)
{
	for (uint32_t i = 0; i < b->nev; i++) {
		const struct ring_event *e = &b->ev[i];
		uint64_t at = c->trace_pos + (at_end ? 0 : e->at);

		switch (e->kind) {
		case RING_EV_GAP:
			manifest_gap(&c->man, c->segname, at, e->a,
				     (enum bach_gap_cause)e->b);
			break;
		case RING_EV_STALL: {
			uint64_t hz = atomic_load(&c->clock_hz);

			manifest_stall_ring(&c->man, c->segname, at,
					    e->a - c->t0_ns, e->b - c->t0_ns,
					    e->c, e->d,
					    hz ? e->c * hz / 1000000000ull : 0);
			break;
		}
		case RING_EV_BOARD_STALL:
			manifest_stall_board(&c->man, c->segname, at, e->a,
					     e->b);
			break;
		case RING_EV_DEVICE_LOST:
			manifest_device(&c->man, true, c->segname, at);
			/* the segment closes with the device */
			atomic_store(&c->rotate_requested, true);
			break;
		case RING_EV_DEVICE_BACK:
			manifest_device(&c->man, false, c->segname, at);
			break;
		}
	}
}

static void write_block(struct capture *c, struct ring_block *b)
{
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
	atomic_store(&c->write_started_ns, bach_now_ns());
	segment_records(c, b, len);
	atomic_store(&c->write_started_ns, 0);
	atomic_fetch_add(&c->progress, 1);
	c->trace_pos += nrec;
	c->seg_records += nrec;
	c->seg_markers += nmarkers;
	c->seg_record_bytes += len;
	c->disk_since += len;
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
	       bach_now_ns() - c->seg_started_ns >=
		       c->cfg.rotate_seconds * 1000000000ull;
}

void capture_autostop(struct capture *c, const char *why)
{
	if (atomic_exchange(&c->stop_requested, true))
		return; /* stopping already: not ours to explain */
	c->stop_reason = why;
	log_notice("%s: stopping: %s reached", c->capdir, why);
	c->drv->stop(c->priv);
}

/* ---- the disk guard: min_free and retention ---------------------------- */

/* Look at the free space after this many record bytes, or this long. */
#define DISK_CHECK_BYTES (2u << 20)
#define DISK_CHECK_NS	 500000000ull
/* retention runs after each rotation, and at least this often */
#define RETAIN_NS 10000000000ull

/* Free bytes on the output's filesystem and min_free's floor; false on error.
 */
static bool disk_space(struct capture *c, uint64_t *avail, uint64_t *floor)
{
	struct statvfs sv;

	if (fstatvfs(c->dirfd, &sv) < 0)
		return false;
	*avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	*floor = c->cfg.min_free_pct ? (uint64_t)sv.f_blocks * sv.f_frsize /
					       100 * c->cfg.min_free_pct
				     : c->cfg.min_free_bytes;
	return true;
}

/* A closed segment: its post_rotate command, then retention. */
static void after_close(struct capture *c, uint64_t segments_before)
{
	char path[4400];

	if (c->cfg.post_rotate[0] &&
	    atomic_load(&c->segments) > segments_before) {
		snprintf(path, sizeof(path), "%s/%s", c->capdir, c->segname);
		post_rotate_run(c->cfg.post_rotate, path);
	}
	retention_run(c);
	c->retain_ns = bach_now_ns();
}

/*
 * Below min_free: close the segment cleanly, then wait for space (every
 * record meanwhile is lost, cause disk, one gap at the end of the wait) or
 * stop the capture.
 */
static void disk_low(struct capture *c, uint64_t avail, uint64_t floor)
{
	uint64_t before = atomic_load(&c->segments);

	log_warn("%s: %llu bytes free, min_free is %llu: closing %s; %s",
		 c->capdir, (unsigned long long)avail,
		 (unsigned long long)floor, c->segname,
		 c->cfg.on_full == CAPTURE_ON_FULL_STOP
			 ? "stopping the capture (on_full = stop)"
			 : "records are lost until space returns (on_full = "
			   "wait)");
	if (segment_close(c))
		return; /* write_err is set: the writer stops */
	after_close(c, before);
	c->disk_low = true;
	if (c->cfg.on_full == CAPTURE_ON_FULL_STOP)
		capture_autostop(c, "min_free");
	else
		atomic_store(&c->disk_waiting, true);
}

/* Records the disk cannot take now: lost, and placed at the trace's end. */
static void discard_block(struct capture *c, struct ring_block *b)
{
	uint64_t real = b->nrec - b->nmarkers;

	write_events(c, b, true);
	marks_block(c, b, true);
	c->disk_lost += real;
	atomic_fetch_add(&c->lost, real);
	atomic_fetch_add(&c->lost_by[BACH_GAP_DISK], real);
	ring_release(&c->ring);
	atomic_fetch_add(&c->progress, 1);
}

/* The loss of a wait (or of a stop), as one gap where the trace goes on. */
static void disk_gap(struct capture *c)
{
	if (!c->disk_lost)
		return;
	manifest_gap(&c->man, c->segname, c->trace_pos, c->disk_lost,
		     BACH_GAP_DISK);
	c->disk_gapped += c->disk_lost;
	c->disk_lost = 0;
}

/* Waiting: is the space back (with some to spare)? Then a new segment. */
static void disk_retry(struct capture *c, uint64_t now)
{
	uint64_t avail, floor, lost = c->disk_lost;
	int err;

	if (now - c->disk_check_ns < 1000000000ull)
		return;
	c->disk_check_ns = now;
	retention_run(c);
	c->retain_ns = now;
	if (!disk_space(c, &avail, &floor) ||
	    avail < floor + floor / 10 + (4u << 20))
		return;
	err = segment_open(c);
	if (err) {
		c->write_err = c->write_err ? c->write_err : err;
		return;
	}
	disk_gap(c);
	c->disk_low = false;
	c->disk_since = 0;
	atomic_store(&c->disk_waiting, false);
	log_notice("%s: %llu bytes free again: %llu records were lost "
		   "meanwhile; capturing into %s",
		   c->capdir, (unsigned long long)avail,
		   (unsigned long long)lost, c->segname);
}

static void disk_check(struct capture *c, uint64_t now)
{
	uint64_t avail, floor;

	if (!c->cfg.min_free_bytes && !c->cfg.min_free_pct)
		return;
	if (c->disk_since < DISK_CHECK_BYTES &&
	    now - c->disk_check_ns < DISK_CHECK_NS)
		return;
	c->disk_since = 0;
	c->disk_check_ns = now;
	if (disk_space(c, &avail, &floor) && avail < floor)
		disk_low(c, avail, floor);
}

/* Autostop by time and by the producer's record count. */
static void autostop_due(struct capture *c, uint64_t now)
{
	if (atomic_load(&c->records_reached))
		capture_autostop(c, "records");
	if (c->cfg.stop_seconds &&
	    now - c->t0_ns >= c->cfg.stop_seconds * 1000000000ull)
		capture_autostop(c, "duration");
}

/* Rotate, unless that would pass autostop's segment count. */
static int rotate(struct capture *c)
{
	uint64_t before = atomic_load(&c->segments);
	int err;

	if (c->cfg.stop_segments && before + 1 >= c->cfg.stop_segments) {
		/* this one is the last: it takes what the ring still holds */
		capture_autostop(c, "segments");
		return 0;
	}
	err = segment_close(c);
	if (!err)
		after_close(c, before);
	if (!err)
		err = segment_open(c);
	return err;
}

void *capture_wr_main(void *arg)
{
	struct capture *c = arg;

	c->retain_ns = bach_now_ns();
	for (;;) {
		bool ended;
		struct ring_block *b;
		uint64_t now;

		/* a block taken after a failure would be neither written nor
		 * lost */
		if (c->write_err || manifest_failed(c))
			break;
		b = ring_consume(&c->ring, 200, &ended);
		now = bach_now_ns();
		if (b && !c->disk_low)
			disk_check(c, now);
		if (b && (c->disk_low || c->write_err))
			discard_block(c, b);
		else if (b)
			write_block(c, b);
		else if (!c->disk_low)
			/* the source is quiet: what is compressed goes out now
			 */
			segment_drain(c, true);
		if (!b) {
			/* quiet: marks the trace has reached, merged markers */
			marks_idle(c, false);
			markers_flush(c, false);
		}
		if (ended)
			break;
		autostop_due(c, now);
		post_rotate_reap(0);
		if (c->disk_low) {
			atomic_store(&c->rotate_requested, false);
			if (c->cfg.on_full == CAPTURE_ON_FULL_WAIT)
				disk_retry(c, now);
			continue;
		}
		if (c->seg_records && rotation_due(c)) {
			int err = rotate(c);

			if (err) {
				/* stop the source as for a failed write */
				if (!c->write_err)
					c->write_err = err;
				break;
			}
		} else if (now - c->retain_ns >= RETAIN_NS) {
			retention_run(c);
			c->retain_ns = now;
		}
	}
	/* a failed write, or one at the close itself: the disk took records */
	{
		uint64_t before = atomic_load(&c->segments);

		segment_close(c);
		if (!c->write_err)
			after_close(c, before);
	}
	if (c->write_err) {
		/*
		 * Stop the source and release what the ring holds, counted
		 * lost; the events those blocks carry (gaps the source had
		 * before) still go in the manifest, at the trace's end.
		 */
		bool ended;
		struct ring_block *b;

		c->drv->stop(c->priv);
		atomic_store(&c->stop_requested, true);
		while ((b = ring_consume(&c->ring, -1, &ended))) {
			uint64_t real = b->nrec - b->nmarkers;

			write_events(c, b, true);
			marks_block(c, b, true);
			atomic_fetch_add(&c->lost, real);
			atomic_fetch_add(&c->lost_by[BACH_GAP_DISK], real);
			ring_release(&c->ring);
		}
	}
	/* marks asked for at the very end, and the markers the cap merged */
	marks_idle(c, true);
	markers_flush(c, true);
	/* what min_free took (a wait that never ended, or on_full = stop) */
	disk_gap(c);
	/* the manifest accounts for every record the disk took */
	if (atomic_load(&c->lost_by[BACH_GAP_DISK]) > c->disk_gapped)
		manifest_gap(&c->man, c->segname, c->trace_pos,
			     atomic_load(&c->lost_by[BACH_GAP_DISK]) -
				     c->disk_gapped,
			     BACH_GAP_DISK);
	manifest_failed(c);
	/* shipping commands get a moment to finish; they are never killed */
	post_rotate_reap(c->cfg.post_rotate[0] ? 5000 : 0);
	atomic_store(&c->disk_waiting, false);
	atomic_store(&c->wr_done, true);
	return NULL;
}
