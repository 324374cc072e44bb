// SPDX-License-Identifier: MIT
/*
 * The writer thread of a capture: takes ring blocks in order, writes the
 * manifest events they carry, compresses (lib/io/zpool.h) and appends to the
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
#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "capture_priv.h"
#include "lib/bus/frame.h"
#include "lib/io/manifest.h"
#include "lib/io/zpool.h"
#define LOG_PREFIX NULL
#include "log.h"
#include "recover.h"

/* ---- writer ------------------------------------------------------------ */

static const char *seg_ext(const struct capture *c)
{
	return c->cfg.compress ? ".byu.gz" : ".byu";
}

int capture_open_segment(struct capture *c)
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
	manifest_reserve(&c->man, MANIFEST_RESERVE);
	c->seg_records = c->seg_markers = 0;
	c->seg_record_bytes = 0;
	c->seg_started_ns = bach_now_ns();
	c->segix.n = 0;
	c->segix_err = 0;
	c->tw_failed = false;
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

/*
 * Append one compressed member, noting where it starts for the segment's
 * index (bach/index.h): its offset, and the record bytes before it (its
 * own are its ISIZE). Per member, never per record.
 */
static void append_member(struct capture *c, const uint8_t *out, size_t len)
{
	if (c->write_err)
		return;
	if (!c->segix_err &&
	    !(c->segix_err = bach_index_grow(&c->segix, &c->segix_cap))) {
		uint64_t n = c->segix.n;

		c->segix.coff[n] = c->io.off;
		c->segix.uoff[n] = n ? c->segix.uoff[n - 1] + c->segix_last : 0;
		c->segix_last = bach_get_le32(out + len - 4);
		c->segix.n++;
	}
	c->write_err = segio_append(&c->io, out, len);
}

/*
 * The closed segment's index, NAME.gzi beside it: written after its
 * rename, so never older than it. Not synced: one lost to a crash is
 * rebuilt from the segment by whoever needs it, as is a missing one.
 */
static void write_index(struct capture *c, uint64_t eof_off)
{
	struct bach_index *ix = &c->segix;
	int err = c->segix_err;

	if (!err) {
		ix->coff[ix->n] = eof_off;
		ix->uoff[ix->n] =
			ix->n ? ix->uoff[ix->n - 1] + c->segix_last : 0;
		err = bach_index_writeat(c->dirfd, c->segname, ix);
	}
	if (err)
		log_warn("%s/%s%s: not written: %s (bach index writes it)",
			 c->capdir, c->segname, BACH_INDEX_SUFFIX,
			 strerror(-err));
}

/* Append finished members; with wait, every pending one. */
static void drain_pool(struct capture *c, bool wait)
{
	const uint8_t *out;
	size_t len;

	while (bach_zpool_peek(c->z.pool, wait, &out, &len, NULL)) {
		append_member(c, out, len);
		bach_zpool_release(c->z.pool);
		ring_release(&c->ring);
		atomic_fetch_add(&c->progress, 1);
	}
	push(c);
	atomic_store(&c->bytes, c->bytes_closed + c->io.off);
}

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

static void note_write_error(struct capture *c)
{
	log_err("%s/%s.part: write failed: %s%s", c->capdir, c->segname,
		strerror(-c->write_err),
		c->write_err == -ENOSPC ? " (the disk is full; closing the "
					  "segment with what was written)"
					: "");
}

static void time_name(const struct capture *c, char *dst, size_t cap)
{
	snprintf(dst, cap, "seg-%06u%s", c->segno, BACH_TIME_SUFFIX);
}

static void time_fail(struct capture *c, const char *what, int err)
{
	char name[64];

	time_name(c, name, sizeof(name));
	log_warn("%s/%s.part: %s: %s; the segment is kept without timing",
		 c->capdir, name, what, strerror(-err));
	bach_time_writer_free(c->tw); /* removes the .part */
	c->tw = NULL;
	c->tw_failed = true;
}

/*
 * The sidecars' members are compressed in a pool of their own, as the
 * records are in theirs: the writer thread only copies clocks. Made at
 * the first sidecar; without it (no memory, no thread) the time writer
 * compresses on this thread.
 */
static struct bach_zpool *time_pool(struct capture *c)
{
	int threads = c->cfg.threads > 0 ? c->cfg.threads
					 : (int)sysconf(_SC_NPROCESSORS_ONLN);

	if (c->z.tpool || c->z.tpool_failed)
		return c->z.tpool;
	c->z.tpool = bach_zpool_new(threads, (size_t)threads * 2,
				    BACH_DEFLATE_U64, 0);
	if (!c->z.tpool) {
		c->z.tpool_failed = true;
		log_warn("%s: timing sidecars are compressed on the writer "
			 "thread (no memory or thread for their pool)",
			 c->capdir);
	}
	return c->z.tpool;
}

/*
 * A block's clocks into the segment's timing sidecar, opened at its first
 * timed block (the records before that get BACH_TIME_NONE): one member
 * per 8160 entries, no work per record but copying.
 */
static void write_times(struct capture *c, struct ring_block *b, uint32_t nrec)
{
	char name[64];
	int err;

	if (c->tw_failed || (!b->times && !c->tw))
		goto out;
	if (!c->tw) {
		time_name(c, name, sizeof(name));
		err = bach_time_writer_open(&c->tw, c->dirfd, name,
					    atomic_load(&c->clock_hz));
		if (!err && time_pool(c))
			err = bach_time_writer_pool(c->tw, c->z.tpool);
		if (!err)
			err = bach_time_writer_fill(c->tw, BACH_TIME_NONE,
						    c->seg_records);
		if (err) {
			time_fail(c, "cannot create", err);
			goto out;
		}
	}
	bach_time_writer_clock(c->tw, atomic_load(&c->clock_hz));
	if (b->times)
		err = bach_time_writer_put(c->tw, b->times, nrec);
	else
		err = bach_time_writer_fill(c->tw, BACH_TIME_NONE, nrec);
	if (err)
		time_fail(c, "write failed", err);
out:
	/* the clocks are copied: the buffer serves another block */
	ring_times_put(&c->ring, b->times);
	b->times = NULL;
}

/*
 * Finish the sidecar before its segment is renamed, so a closed segment's
 * sidecar is whole. Its name for the manifest, or NULL; *ts: what it holds.
 */
static const char *close_times(struct capture *c, char *name, size_t cap,
			       struct bach_time_summary *ts)
{
	int err;

	if (!c->tw)
		return NULL;
	if (!c->seg_records || c->write_err) {
		bach_time_writer_free(c->tw);
		c->tw = NULL;
		return NULL;
	}
	err = bach_time_writer_close(c->tw, true);
	if (err) {
		time_fail(c, "cannot close", err);
		return NULL;
	}
	bach_time_writer_summary(c->tw, ts);
	bach_time_writer_free(c->tw);
	c->tw = NULL;
	time_name(c, name, cap);
	return name;
}

/* Close the open segment: finish, sync, rename, sync the directory. */
int capture_close_segment(struct capture *c)
{
	char part[80], tname[64];
	struct bach_time_summary ts;
	const char *timing;
	struct seg_result r;
	uint64_t cut, eof_off;
	int err;

	if (c->segfd < 0)
		return 0;
	if (c->z.pool)
		drain_pool(c, true);
	eof_off = c->io.off;
	if (!c->write_err && c->cfg.compress)
		c->write_err =
			segio_append(&c->io, bach_bgzf_eof, BACH_BGZF_EOF_SIZE);
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
	timing = close_times(c, tname, sizeof(tname), &ts);
	if (c->write_err) {
		/* keep every complete block written before the failure */
		note_write_error(c);
		err = segment_finish_part(c->dirfd, part, &r);
		if (err) {
			log_err("%s/%s: cannot close after the error: %s",
				c->capdir, part, strerror(-err));
			return c->write_err;
		}
		manifest_segment(&c->man,
				 &(struct manifest_segment){
					 .name = c->segname,
					 .records = r.records,
					 .gap_markers = r.markers,
					 .bytes = r.bytes,
					 .crc = r.crc,
					 .error = strerror(-c->write_err),
					 .removed = r.removed,
					 .cut_bytes = r.cut });
		if (!r.removed)
			segment_index(c->dirfd, c->capdir, c->segname);
		/* real records the cut took off were counted written: lost */
		cut = (c->seg_records - c->seg_markers) -
		      (r.records - r.markers);
		atomic_fetch_sub(&c->written, cut);
		atomic_fetch_add(&c->lost, cut);
		atomic_fetch_add(&c->lost_by[BACH_GAP_DISK], cut);
		c->trace_pos -=
			c->seg_records - r.records; /* the trace ends here */
		if (!r.removed)
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
	manifest_segment(&c->man,
			 &(struct manifest_segment){
				 .name = c->segname,
				 .records = c->seg_records,
				 .gap_markers = c->seg_markers,
				 .bytes = c->io.off,
				 .crc = c->io.crc,
				 .timing = timing,
				 .tsum = timing ? &ts : NULL,
				 .clock_hz = atomic_load(&c->clock_hz) });
	manifest_sync(&c->man);
	if (c->cfg.compress)
		write_index(c, eof_off);
	log_info("%s/%s closed: %llu records, %llu bytes", c->capdir,
		 c->segname, (unsigned long long)c->seg_records,
		 (unsigned long long)c->io.off);
	return 0;
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
	 * Read once: once released (below, or by drain_pool) the block is
	 * the producer's again, and it may already be filling it.
	 */
	uint32_t nrec = b->nrec, nmarkers = b->nmarkers;
	size_t len = (size_t)nrec * BACH_REC_SIZE;
	uint64_t real = nrec - nmarkers;

	write_events(c, b, false);
	marks_block(c, b, false);
	if (len)
		write_times(c, b, nrec);
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
		if (bach_zpool_pending(c->z.pool) ==
		    bach_zpool_depth(c->z.pool)) {
			const uint8_t *out;
			size_t olen;

			if (bach_zpool_peek(c->z.pool, true, &out, &olen,
					    NULL)) {
				append_member(c, out, olen);
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
	if (capture_close_segment(c))
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
	err = capture_open_segment(c);
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
	err = capture_close_segment(c);
	if (!err)
		after_close(c, before);
	if (!err)
		err = capture_open_segment(c);
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
		else if (c->z.pool && !c->disk_low)
			/* the source is quiet: what is compressed goes out now
			 */
			drain_pool(c, true);
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

		capture_close_segment(c);
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
