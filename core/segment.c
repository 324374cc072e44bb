// SPDX-License-Identifier: MIT
/*
 * The open segment, on the writer thread: opened as NAME.part, appended to
 * (whole blocks, compressed in the pool or raw, through segio.h), with its
 * member index (NAME.gzi, bach/index.h) and its timing sidecar
 * (seg-N.time.gz, lib/io/timing.h) kept beside it, and closed: finished,
 * synced, renamed, named in the manifest.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach/bytes.h"
#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "capture_priv.h"
#include "lib/cpus.h"
#include "lib/io/zpool.h"
#define LOG_PREFIX NULL
#include "log.h"
#include "recover.h"

static bool zstd_seg(const struct capture *c)
{
	return c->cfg.compress && c->cfg.compressor == BACH_DEFLATE_ZSTD;
}

static const char *seg_ext(const struct capture *c)
{
	return !c->cfg.compress ? ".byu" : zstd_seg(c) ? ".byu.zst" : ".byu.gz";
}

int segment_open(struct capture *c)
{
	struct capture_wr *w = &c->wr;
	char part[80];

	w->segno++;
	snprintf(w->segname, sizeof(w->segname), "seg-%06u%s", w->segno,
		 seg_ext(c));
	snprintf(part, sizeof(part), "%s.part", w->segname);
	w->segfd = openat(c->dirfd, part,
			  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->segfd < 0) {
		int err = -errno;

		log_err("%s/%s: cannot create: %s", c->capdir, part,
			strerror(errno));
		return err;
	}
	segio_attach(&w->io, w->segfd);
	manifest_reserve(&w->man, MANIFEST_RESERVE);
	w->seg_records = w->seg_markers = 0;
	w->seg_record_bytes = 0;
	w->seg_started_ns = bach_now_ns();
	w->segix.n = 0;
	w->segix_err = 0;
	w->segzt.n = 0;
	w->tw_failed = false;
	pthread_mutex_lock(&c->sh.mu);
	snprintf(c->sh.open_seg, sizeof(c->sh.open_seg), "%s", part);
	pthread_mutex_unlock(&c->sh.mu);
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
	if (!c->wr.write_err && !ring_waiting(&c->ring))
		c->wr.write_err = segio_push(&c->wr.io);
}

/*
 * Append one compressed member, noting where it starts for the segment's
 * index (bach/index.h): its offset, and the record bytes before it (its
 * own are its ISIZE). A zstd frame is noted for the seek table instead
 * (lib/io/zst.h). Per member, never per record.
 */
static void append_member(struct capture_wr *w, const uint8_t *out, size_t len)
{
	if (w->write_err || (w->pool_zstd && !out))
		return; /* no out: a block of the frame before, written */
	if (w->pool_zstd) {
		w->write_err = len ? zst_table_add(&w->segzt, out, len) : -EIO;
		if (!w->write_err)
			w->write_err = segio_append(&w->io, out, len);
		return;
	}
	if (!w->segix_err &&
	    !(w->segix_err = bach_index_grow(&w->segix, &w->segix_cap))) {
		uint64_t n = w->segix.n;

		w->segix.coff[n] = w->io.off;
		w->segix.uoff[n] = n ? w->segix.uoff[n - 1] + w->segix_last : 0;
		w->segix_last = bach_get_le32(out + len - 4);
		w->segix.n++;
	}
	w->write_err = segio_append(&w->io, out, len);
}

/*
 * The closed segment's index, NAME.gzi beside it: written after its
 * rename, so never older than it. Not synced: one lost to a crash is
 * rebuilt from the segment by whoever needs it, as is a missing one.
 */
static void write_index(struct capture *c, uint64_t eof_off)
{
	struct capture_wr *w = &c->wr;
	struct bach_index *ix = &w->segix;
	int err = w->segix_err;

	if (!err) {
		ix->coff[ix->n] = eof_off;
		ix->uoff[ix->n] =
			ix->n ? ix->uoff[ix->n - 1] + w->segix_last : 0;
		err = bach_index_writeat(c->dirfd, w->segname, ix);
	}
	if (err)
		log_warn("%s/%s%s: not written: %s (bach index writes it)",
			 c->capdir, w->segname, BACH_INDEX_SUFFIX,
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

	if (!bach_zpool_peek(c->wr.pool, wait, &out, &len, NULL))
		return false;
	append_member(&c->wr, out, len);
	bach_zpool_release(c->wr.pool);
	ring_release(&c->ring);
	return true;
}

void segment_drain(struct capture *c, bool wait)
{
	if (!c->wr.pool)
		return;
	while (take_member(c, wait))
		atomic_fetch_add(&c->sh.progress, 1);
	push(c);
	atomic_store(&c->sh.bytes, c->wr.bytes_closed + c->wr.io.off);
}

void segment_records(struct capture *c, struct ring_block *b, size_t len)
{
	struct capture_wr *w = &c->wr;

	if (w->pool) {
		/* a full pool takes b once its oldest member is out */
		if (bach_zpool_pending(w->pool) == bach_zpool_depth(w->pool))
			take_member(c, true);
		if (w->pool_zstd && bach_zpool_gathering_none(w->pool))
			w->frame_born_ns = bach_now_ns();
		bach_zpool_submit(w->pool, b->data, len, b);
		/*
		 * A block the producer flushed before it was full (the source
		 * is slow) ends the frame: its records go to disk now, not
		 * when more blocks have come. So does a frame gathered for
		 * flush_ms already: a crash loses at most that long of
		 * records besides the frames being compressed, however large
		 * zstd_frame_kb is (docs/design.md section 4).
		 */
		if (len < (size_t)RING_BLOCK_RECS * BACH_REC_SIZE ||
		    (w->pool_zstd && !bach_zpool_gathering_none(w->pool) &&
		     bach_now_ns() - w->frame_born_ns >
			     c->cfg.flush_ms * 1000000ull))
			bach_zpool_end_frame(w->pool);
		segment_drain(c, false);
	} else {
		if (!w->write_err)
			w->write_err = segio_append(&w->io, b->data, len);
		ring_release(&c->ring);
		push(c);
	}
}

static void note_write_error(struct capture *c)
{
	log_err("%s/%s.part: write failed: %s%s", c->capdir, c->wr.segname,
		strerror(-c->wr.write_err),
		c->wr.write_err == -ENOSPC
			? " (the disk is full; closing the segment with what was written)"
			: "");
}

static void time_name(const struct capture_wr *w, char *dst, size_t cap)
{
	snprintf(dst, cap, "seg-%06u%s", w->segno, BACH_TIME_SUFFIX);
}

/* The segment's sidecar goes: its writer freed, which removes its .part. */
static void drop_times(struct capture_wr *w)
{
	bach_time_writer_free(w->tw);
	w->tw = NULL;
}

static void time_fail(struct capture *c, const char *what, int err)
{
	char name[64];

	time_name(&c->wr, name, sizeof(name));
	log_warn("%s/%s.part: %s: %s; the segment is kept without timing",
		 c->capdir, name, what, strerror(-err));
	drop_times(&c->wr);
	c->wr.tw_failed = true;
}

/*
 * The sidecars' members are compressed in a pool of their own, as the
 * records are in theirs: the writer thread only turns a block's steps
 * (ring.h) into runs (lib/io/timing.h). Made at the first sidecar;
 * without it (no memory, no thread) the time writer compresses on this
 * thread.
 */
static struct bach_zpool *time_pool(struct capture *c)
{
	struct capture_wr *w = &c->wr;
	int threads = c->cfg.threads > 0 ? c->cfg.threads : (int)bach_cpus(256);

	if (w->tpool || w->tpool_failed)
		return w->tpool;
	w->tpool = bach_zpool_new(threads, (size_t)threads * 2,
				  BACH_TIME_BACKEND, BACH_TIME_LEVEL);
	if (!w->tpool) {
		w->tpool_failed = true;
		log_warn(
			"%s: timing sidecars are compressed on the writer thread (no memory or thread for their pool)",
			c->capdir);
	}
	return w->tpool;
}

void segment_times(struct capture *c, struct ring_block *b, uint32_t nrec)
{
	struct capture_wr *w = &c->wr;
	char name[64];
	int err;

	if (w->tw_failed || (!b->times && !w->tw))
		goto out;
	if (!w->tw) {
		time_name(w, name, sizeof(name));
		err = bach_time_writer_open(&w->tw, c->dirfd, name,
					    atomic_load(&c->sh.clock_hz));
		if (!err && time_pool(c))
			err = bach_time_writer_pool(w->tw, w->tpool);
		if (!err)
			err = bach_time_writer_fill(w->tw, BACH_TIME_NONE,
						    w->seg_records);
		if (err) {
			time_fail(c, "cannot create", err);
			goto out;
		}
	}
	bach_time_writer_clock(w->tw, atomic_load(&c->sh.clock_hz));
	_Static_assert(RING_TIME_ESCAPE == BACH_TIME_ESCAPE,
		       "the ring's steps are the time writer's");
	if (b->times)
		err = bach_time_writer_steps(w->tw, BACH_TIME_NONE,
					     b->times->step, b->times->esc,
					     nrec);
	else
		err = bach_time_writer_fill(w->tw, BACH_TIME_NONE, nrec);
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
	struct capture_wr *w = &c->wr;
	int err;

	if (!w->tw)
		return NULL;
	if (!w->seg_records) {
		drop_times(w);
		return NULL;
	}
	err = bach_time_writer_close(w->tw, true);
	if (err) {
		time_fail(c, "cannot close", err);
		return NULL;
	}
	bach_time_writer_summary(w->tw, ts);
	drop_times(w);
	time_name(w, name, cap);
	return name;
}

/* The closed segment in the status: the capture's segments and bytes. */
static void count_closed(struct capture *c, uint64_t bytes, bool kept)
{
	if (kept)
		atomic_fetch_add(&c->sh.segments, 1);
	c->wr.bytes_closed += bytes;
	atomic_store(&c->sh.bytes, c->wr.bytes_closed);
}

/*
 * The segment's last bytes out: the pool's members, the EOF block, every
 * write waited for, the data synced, the file closed. A failure is left in
 * write_err. Returns where the EOF block starts: the index's end.
 */
static uint64_t finish_file(struct capture *c)
{
	struct capture_wr *w = &c->wr;
	uint64_t eof_off;

	segment_drain(c, true);
	eof_off = w->io.off;
	if (!w->write_err && zstd_seg(c)) {
		size_t tlen;
		uint8_t *tab = zst_table_bytes(&w->segzt, &tlen);

		w->write_err = tab ? segio_append(&w->io, tab, tlen) : -ENOMEM;
		free(tab);
	} else if (!w->write_err && c->cfg.compress) {
		w->write_err =
			segio_append(&w->io, bach_bgzf_eof, BACH_BGZF_EOF_SIZE);
	}
	if (!w->write_err)
		w->write_err = segio_flush(&w->io);
	else
		segio_flush(&w->io);
	if (!w->write_err) {
		if (fdatasync(w->segfd) < 0)
			w->write_err = -errno;
	}
	close(w->segfd);
	w->segfd = -1;
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
	struct capture_wr *w = &c->wr;
	struct seg_result r;
	uint64_t cut;
	int err;

	drop_times(w);
	note_write_error(c);
	err = segment_finish_part(c->dirfd, part, &r);
	if (err) {
		log_err("%s/%s: cannot close after the error: %s", c->capdir,
			part, strerror(-err));
		return w->write_err;
	}
	manifest_segment(&w->man, &(struct manifest_segment){
					  .name = w->segname,
					  .records = r.records,
					  .gap_markers = r.markers,
					  .bytes = r.bytes,
					  .crc = r.crc,
					  .error = strerror(-w->write_err),
					  .removed = r.removed,
					  .cut_bytes = r.cut });
	if (!r.removed)
		segment_index(c->dirfd, c->capdir, w->segname);
	cut = (w->seg_records - w->seg_markers) - (r.records - r.markers);
	atomic_fetch_sub(&c->sh.written, cut);
	atomic_fetch_add(&c->sh.lost, cut);
	atomic_fetch_add(&c->sh.lost_by[BACH_GAP_DISK], cut);
	w->trace_pos -= w->seg_records - r.records; /* the trace ends here */
	count_closed(c, r.bytes, !r.removed);
	manifest_sync(&w->man);
	return w->write_err;
}

/*
 * A segment written whole: its sidecar finished first, then renamed, the
 * directory synced, named in the manifest (synced), and its index written.
 * One that got no record is removed instead.
 */
static int close_done(struct capture *c, const char *part, uint64_t eof_off)
{
	struct capture_wr *w = &c->wr;
	char tname[64];
	struct bach_time_summary ts;
	const char *timing = close_times(c, tname, sizeof(tname), &ts);

	if (!w->seg_records) {
		/* nothing came: no segment rather than an empty one */
		if (unlinkat(c->dirfd, part, 0) < 0 || fsync(c->dirfd) < 0)
			log_warn("%s/%s: cannot remove: %s", c->capdir, part,
				 strerror(errno));
		return 0;
	}
	if (renameat(c->dirfd, part, c->dirfd, w->segname) < 0 ||
	    fsync(c->dirfd) < 0) {
		w->write_err = -errno;
		log_err("%s/%s: cannot close: %s", c->capdir, part,
			strerror(errno));
		return w->write_err;
	}
	count_closed(c, w->io.off, true);
	manifest_segment(&w->man,
			 &(struct manifest_segment){
				 .name = w->segname,
				 .records = w->seg_records,
				 .gap_markers = w->seg_markers,
				 .bytes = w->io.off,
				 .crc = w->io.crc,
				 .timing = timing,
				 .tsum = timing ? &ts : NULL,
				 .clock_hz = atomic_load(&c->sh.clock_hz) });
	manifest_sync(&w->man);
	if (c->cfg.compress && !zstd_seg(c))
		write_index(c, eof_off);
	log_info("%s/%s closed: %llu records, %llu bytes", c->capdir,
		 w->segname, (unsigned long long)w->seg_records,
		 (unsigned long long)w->io.off);
	return 0;
}

int segment_close(struct capture *c)
{
	char part[80];
	uint64_t eof_off;

	if (c->wr.segfd < 0)
		return 0;
	eof_off = finish_file(c);
	snprintf(part, sizeof(part), "%s.part", c->wr.segname);
	if (c->wr.write_err)
		return close_failed(c, part);
	return close_done(c, part, eof_off);
}
