// SPDX-License-Identifier: MIT
/*
 * The open segment, on the writer thread: opened as NAME.part, appended to
 * (whole blocks, compressed in the pool or raw, through segio.h), with its
 * member index (NAME.gzi, bach/index.h) and its timing sidecar
 * (seg-N.time.gz, bach/timing.h) kept beside it, and closed: finished,
 * synced, renamed, named in the manifest.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bach/bytes.h"
#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "bach/zpool.h"
#include "capture_priv.h"
#define LOG_PREFIX NULL
#include "log.h"
#include "recover.h"

static const char *seg_ext(const struct capture *c)
{
	return c->cfg.compress ? ".byu.gz" : ".byu";
}

int segment_open(struct capture *c)
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

/*
 * The pool's oldest member into the segment, and its block back to the
 * ring (blocks go back oldest first); with wait, waiting for it. False
 * when there is none (finished, with !wait).
 */
static bool take_member(struct capture *c, bool wait)
{
	const uint8_t *out;
	size_t len;

	if (!bach_zpool_peek(c->z.pool, wait, &out, &len, NULL))
		return false;
	append_member(c, out, len);
	bach_zpool_release(c->z.pool);
	ring_release(&c->ring);
	return true;
}

void segment_drain(struct capture *c, bool wait)
{
	if (!c->z.pool)
		return;
	while (take_member(c, wait))
		atomic_fetch_add(&c->progress, 1);
	push(c);
	atomic_store(&c->bytes, c->bytes_closed + c->io.off);
}

void segment_records(struct capture *c, struct ring_block *b, size_t len)
{
	if (c->z.pool) {
		/* a full pool takes b once its oldest member is out */
		if (bach_zpool_pending(c->z.pool) ==
		    bach_zpool_depth(c->z.pool))
			take_member(c, true);
		bach_zpool_submit(c->z.pool, b->data, len, b);
		segment_drain(c, false);
	} else {
		if (!c->write_err)
			c->write_err = segio_append(&c->io, b->data, len);
		ring_release(&c->ring);
		push(c);
	}
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

/* The segment's sidecar goes: its writer freed, which removes its .part. */
static void drop_times(struct capture *c)
{
	bach_time_writer_free(c->tw);
	c->tw = NULL;
}

static void time_fail(struct capture *c, const char *what, int err)
{
	char name[64];

	time_name(c, name, sizeof(name));
	log_warn("%s/%s.part: %s: %s; the segment is kept without timing",
		 c->capdir, name, what, strerror(-err));
	drop_times(c);
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

void segment_times(struct capture *c, struct ring_block *b, uint32_t nrec)
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
 * Finish the sidecar of a segment written whole before it is renamed, so
 * a closed segment's sidecar is whole. Its name for the manifest, or
 * NULL; *ts: what it holds.
 */
static const char *close_times(struct capture *c, char *name, size_t cap,
			       struct bach_time_summary *ts)
{
	int err;

	if (!c->tw)
		return NULL;
	if (!c->seg_records) {
		drop_times(c);
		return NULL;
	}
	err = bach_time_writer_close(c->tw, true);
	if (err) {
		time_fail(c, "cannot close", err);
		return NULL;
	}
	bach_time_writer_summary(c->tw, ts);
	drop_times(c);
	time_name(c, name, cap);
	return name;
}

/* The closed segment in the status: the capture's segments and bytes. */
static void count_closed(struct capture *c, uint64_t bytes, bool kept)
{
	if (kept)
		atomic_fetch_add(&c->segments, 1);
	c->bytes_closed += bytes;
	atomic_store(&c->bytes, c->bytes_closed);
}

/*
 * The segment's last bytes out: the pool's members, the EOF block, every
 * write waited for, the data synced, the file closed. A failure is left in
 * write_err. Returns where the EOF block starts: the index's end.
 */
static uint64_t finish_file(struct capture *c)
{
	uint64_t eof_off;

	segment_drain(c, true);
	eof_off = c->io.off;
	if (!c->write_err && c->cfg.compress)
		c->write_err =
			segio_append(&c->io, bach_bgzf_eof, BACH_BGZF_EOF_SIZE);
	if (!c->write_err)
		c->write_err = segio_flush(&c->io);
	else
		segio_flush(&c->io);
	if (!c->write_err) {
		if (fdatasync(c->segfd) < 0)
			c->write_err = -errno;
	}
	close(c->segfd);
	c->segfd = -1;
	return eof_off;
}

/*
 * A segment whose write failed: every complete block written before the
 * failure is kept (cut as recovery cuts, recover.h) and named with the
 * error; real records the cut took off were counted written, and are now
 * lost. Its sidecar is dropped. Returns write_err.
 */
static int close_failed(struct capture *c, const char *part)
{
	struct seg_result r;
	uint64_t cut;
	int err;

	drop_times(c);
	note_write_error(c);
	err = segment_finish_part(c->dirfd, part, &r);
	if (err) {
		log_err("%s/%s: cannot close after the error: %s", c->capdir,
			part, strerror(-err));
		return c->write_err;
	}
	manifest_segment(&c->man, &(struct manifest_segment){
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
	cut = (c->seg_records - c->seg_markers) - (r.records - r.markers);
	atomic_fetch_sub(&c->written, cut);
	atomic_fetch_add(&c->lost, cut);
	atomic_fetch_add(&c->lost_by[BACH_GAP_DISK], cut);
	c->trace_pos -= c->seg_records - r.records; /* the trace ends here */
	count_closed(c, r.bytes, !r.removed);
	manifest_sync(&c->man);
	return c->write_err;
}

/*
 * A segment written whole: its sidecar finished first, then renamed, the
 * directory synced, named in the manifest (synced), and its index written.
 * One that got no record is removed instead.
 */
static int close_done(struct capture *c, const char *part, uint64_t eof_off)
{
	char tname[64];
	struct bach_time_summary ts;
	const char *timing = close_times(c, tname, sizeof(tname), &ts);

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
	count_closed(c, c->io.off, true);
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

int segment_close(struct capture *c)
{
	char part[80];
	uint64_t eof_off;

	if (c->segfd < 0)
		return 0;
	eof_off = finish_file(c);
	snprintf(part, sizeof(part), "%s.part", c->segname);
	if (c->write_err)
		return close_failed(c, part);
	return close_done(c, part, eof_off);
}
