// SPDX-License-Identifier: MIT
/*
 * Trace writer: raw .byu, blocked .byu.gz or .byu.zst: the caller's records
 * fill 64 KiB blocks that a pool of threads compresses (lib/io/zpool.h)
 * while the next block fills; finished members (zstd frames) are written
 * in order, then the EOF block (the zstd seek table, lib/io/zst.h). Blocks are
 * compressed by the record encoder unless a level (or a backend) is asked for
 * (bach_deflater_new()).
 *
 * A named output is written under a temporary name beside it and renamed
 * into place by a good close (lib/io/outfile.h). A blocked one gets its
 * index, NAME.gzi (bach/index.h), from the members as they are written:
 * any index or timing sidecar of the file it replaces is removed before
 * the rename, and the new index written (itself renamed into place) after it,
 * so an index beside a trace is never an older trace's. An output that is
 * abandoned leaves neither.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach/bytes.h"
#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "lib/cpus.h"
#include "lib/io/outfile.h"
#include "lib/io/timing.h"
#include "lib/io/zpool.h"
#include "lib/io/zst.h"

#define RAW_BUF		  (4u << 20)
#define BLOCKS_PER_THREAD 8
#define MAX_THREADS	  64

struct bach_writer {
	struct bach_writer_opts o;
	struct bach_outfile out;
	int fd;
	int err;
	bool closed;
	char msg[512];
	uint64_t bytes; /* bytes written to the file */

	uint8_t *buf; /* raw: the output buffer */
	size_t fill, cap;

	/* gzip: input blocks, one per pool slot, filled in ring order */
	struct bach_zpool *pool;
	uint8_t **in;
	uint8_t *inmem; /* the nin blocks in[] point into */
	size_t nin, cur, cur_len;

	/* a named gzip output: its members, for NAME.gzi */
	struct bach_index ix;
	uint64_t ix_cap;
	uint32_t ix_last; /* the last member's ISIZE */
	int ix_err;

	/* .byu.zst: its frames, for the seek table */
	struct zst_table zt;
};

__attribute__((format(printf, 3, 4))) static int
wfail(struct bach_writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return w->err;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
	va_end(ap);
	w->err = err;
	return err;
}

const char *bach_writer_strerror(const struct bach_writer *w)
{
	return w->msg[0] ? w->msg : "no error";
}

uint64_t bach_writer_bytes(const struct bach_writer *w)
{
	return w->bytes;
}

static const char *wname(const struct bach_writer *w)
{
	return bach_outfile_name(&w->out);
}

static int write_all(struct bach_writer *w, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return wfail(w, -errno,
				     "%s: write error at byte offset %llu: %s",
				     wname(w), (unsigned long long)w->bytes,
				     strerror(errno));
		}
		p += n;
		len -= (size_t)n;
		w->bytes += (uint64_t)n;
	}
	return 0;
}

/*
 * Write one finished member, noting where it starts for the index: its
 * offset, and the record bytes before it (its own are its ISIZE).
 */
static void put_member(struct bach_writer *w, const uint8_t *out, size_t len)
{
	uint64_t n = w->ix.n;

	if (w->err)
		return;
	if (w->o.format == BACH_OUT_BYU_ZST) {
		/* 0: zstd failed (it cannot, on its room); no out: a block
		 * of the frame before, written with it */
		int err = !out	? 0
			  : len ? zst_table_add(&w->zt, out, len)
				: -EIO;

		if (!out)
			return;

		if (err)
			return (void)wfail(
				w, err, "%s: cannot write frame %llu: %s",
				wname(w), (unsigned long long)w->zt.n,
				strerror(-err));
		write_all(w, out, len);
		return;
	}
	if (w->out.path && !w->ix_err &&
	    !(w->ix_err = bach_index_grow(&w->ix, &w->ix_cap))) {
		w->ix.coff[n] = w->bytes;
		w->ix.uoff[n] = n ? w->ix.uoff[n - 1] + w->ix_last : 0;
		w->ix_last = bach_get_le32(out + len - 4);
		w->ix.n++;
	}
	write_all(w, out, len);
}

/* Write out finished members, oldest first; with wait, all of them. */
static int drain(struct bach_writer *w, bool wait)
{
	const uint8_t *out;
	size_t len;

	while (bach_zpool_peek(w->pool, wait, &out, &len, NULL)) {
		put_member(w, out, len);
		bach_zpool_release(w->pool);
	}
	return w->err;
}

/* The block being filled is complete: hand it to the pool. */
static int submit(struct bach_writer *w)
{
	const uint8_t *out;
	size_t len;

	if (!w->cur_len)
		return w->err;
	if (bach_zpool_pending(w->pool) == bach_zpool_depth(w->pool) &&
	    bach_zpool_peek(w->pool, true, &out, &len, NULL)) {
		put_member(w, out, len);
		bach_zpool_release(w->pool);
	}
	bach_zpool_submit(w->pool, w->in[w->cur], w->cur_len, NULL);
	w->cur = (w->cur + 1) % w->nin;
	w->cur_len = 0;
	return drain(w, false);
}

int bach_writer_write(struct bach_writer *w, const uint8_t *recs, size_t n)
{
	size_t len = n * BACH_REC_SIZE;

	if (w->err)
		return w->err;
	if (w->o.format == BACH_OUT_BYU) {
		while (len) {
			size_t k =
				w->cap - w->fill < len ? w->cap - w->fill : len;

			memcpy(w->buf + w->fill, recs, k);
			w->fill += k;
			recs += k;
			len -= k;
			if (w->fill == w->cap) {
				w->fill = 0;
				if (write_all(w, w->buf, w->cap))
					return w->err;
			}
		}
		return 0;
	}
	while (len) {
		size_t k = BACH_BGZF_MAX_INPUT - w->cur_len < len
				   ? BACH_BGZF_MAX_INPUT - w->cur_len
				   : len;

		memcpy(w->in[w->cur] + w->cur_len, recs, k);
		w->cur_len += k;
		recs += k;
		len -= k;
		if (w->cur_len == BACH_BGZF_MAX_INPUT && submit(w))
			return w->err;
	}
	return 0;
}

int bach_writer_open(struct bach_writer **wp, const char *path,
		     const struct bach_writer_opts *o)
{
	return bach_writer_open_framed(wp, path, o, 0);
}

int bach_writer_open_framed(struct bach_writer **wp, const char *path,
			    const struct bach_writer_opts *o,
			    unsigned zstd_frame_kb)
{
	struct bach_writer *w = calloc(1, sizeof(*w));
	int threads, ret;
	size_t fblocks = 1;

	*wp = w;
	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->fd = -1;
	w->out.fd = -1;
	if (o->format == BACH_OUT_BYU_ZST)
		w->o.backend = BACH_DEFLATE_ZSTD; /* level 0: zstd's 3 */
	/* no level: the record encoder, unless a library was named */
	else if (!w->o.level && w->o.backend != BACH_DEFLATE_AUTO)
		w->o.level = BACH_DEFAULT_LEVEL;

	ret = bach_outfile_open(&w->out, path);
	if (ret < 0)
		return wfail(w, ret, "%s: cannot create: %s", path,
			     strerror(-ret));
	w->fd = w->out.fd;

	if (o->format == BACH_OUT_BYU) {
		w->cap = RAW_BUF - RAW_BUF % BACH_REC_SIZE;
		w->buf = malloc(w->cap);
		if (!w->buf)
			return wfail(w, -ENOMEM, "%s: out of memory", wname(w));
		return 0;
	}
	threads = o->threads > 0 ? o->threads : (int)bach_cpus(MAX_THREADS);
	if (threads < 1)
		threads = 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	/* .byu.zst: frames of several blocks, two a thread in flight */
	if (o->format == BACH_OUT_BYU_ZST)
		fblocks = bach_zstd_frame_blocks(zstd_frame_kb);
	/* one input block per pool slot, plus the one being filled */
	w->nin = (size_t)threads * (fblocks * 2 > BLOCKS_PER_THREAD
					    ? fblocks * 2
					    : BLOCKS_PER_THREAD) +
		 1;
	w->in = calloc(w->nin, sizeof(*w->in));
	if (!w->in)
		return wfail(w, -ENOMEM, "%s: out of memory", wname(w));
	/* one after the other: a frame's full blocks are one run of
	 * memory, compressed with no copy (bach_zstd_frame()) */
	w->inmem = malloc(w->nin * BACH_BGZF_MAX_INPUT);
	if (!w->inmem)
		return wfail(w, -ENOMEM, "%s: out of memory", wname(w));
	for (size_t i = 0; i < w->nin; i++)
		w->in[i] = w->inmem + i * BACH_BGZF_MAX_INPUT;
	w->pool = bach_zpool_new(threads > 1 ? threads : 0, w->nin - 1,
				 w->o.backend, w->o.level);
	if (!w->pool)
		return wfail(w, -ENOMEM, "%s: cannot start compressor",
			     wname(w));
	bach_zpool_frame(w->pool, fblocks);
	return 0;
}

/*
 * Before the rename: an index (or a timing sidecar) beside PATH describes
 * the file about to be replaced, so it goes (a crash in between leaves no
 * index, never a wrong one). After it: the new file's index, when it is a
 * blocked one whose members were all noted. An index that cannot be written is
 * no error: the trace is whole, and whoever needs the index rebuilds it (bach
 * index).
 */
static void drop_index(const char *path)
{
	char name[4096];

	if ((size_t)snprintf(name, sizeof(name), "%s%s", path,
			     BACH_INDEX_SUFFIX) < sizeof(name))
		unlink(name);
	/* and its timing sidecar (docs/formats.md 3.2): the clocks of the
	 * old records, not of these; a writer of timing writes its own
	 * after this close */
	if (!bach_time_name(name, sizeof(name), path))
		unlink(name);
}

static void write_index(struct bach_writer *w, const char *path,
			uint64_t eof_off)
{
	char msg[512];

	if (w->ix_err)
		return;
	if (w->ix.n) {
		w->ix.coff[w->ix.n] = eof_off;
		w->ix.uoff[w->ix.n] = w->ix.uoff[w->ix.n - 1] + w->ix_last;
	}
	bach_index_write(path, &w->ix, msg, sizeof(msg));
}

int bach_writer_close(struct bach_writer *w)
{
	uint64_t eof_off = w->bytes;
	char *path = NULL;
	int ret;

	if (w->err || w->closed)
		return w->err;
	if (w->o.format == BACH_OUT_BYU_ZST) {
		uint8_t *tab;
		size_t tlen;

		if (submit(w) < 0 || drain(w, true) < 0)
			return w->err;
		tab = zst_table_bytes(&w->zt, &tlen);
		if (!tab)
			return wfail(w, -ENOMEM, "%s: out of memory", wname(w));
		write_all(w, tab, tlen);
		free(tab);
		if (w->err)
			return w->err;
	} else if (w->o.format == BACH_OUT_BYU_GZ) {
		if (submit(w) < 0 || drain(w, true) < 0)
			return w->err;
		eof_off = w->bytes;
		if (write_all(w, bach_bgzf_eof, sizeof(bach_bgzf_eof)) < 0)
			return w->err;
	} else if (write_all(w, w->buf, w->fill) < 0) {
		return w->err;
	}
	if (w->out.path) {
		path = strdup(w->out.path);
		drop_index(w->out.path);
	}
	ret = bach_outfile_commit(&w->out);
	if (ret < 0) {
		free(path);
		return wfail(w, ret, "%s: cannot finish: %s", wname(w),
			     strerror(-ret));
	}
	w->closed = true;
	if (path && w->o.format == BACH_OUT_BYU_GZ)
		write_index(w, path, eof_off);
	free(path);
	return 0;
}

/*
 * A stream (standard output, a FIFO, a device) cannot be taken back: what
 * was written of it stays, so a writer freed unclosed writes out the
 * records it was given, in whole members (frames), without the end mark
 * (EOF block, seek table) that only a good close writes. A reader at the
 * other end then has every record up to the failure, as bach dump prints
 * them, and sees that the stream was cut.
 */
static void flush_stream(struct bach_writer *w)
{
	if (w->closed || w->err || w->out.tmp || w->fd < 0)
		return;
	if (w->o.format == BACH_OUT_BYU)
		write_all(w, w->buf, w->fill);
	else if (w->pool && submit(w) == 0)
		drain(w, true);
}

void bach_writer_free(struct bach_writer *w)
{
	if (!w)
		return;
	flush_stream(w);
	bach_zpool_free(w->pool);
	if (!w->closed)
		bach_outfile_abort(&w->out);
	free(w->buf);
	free(w->inmem);
	free(w->in);
	bach_index_free(&w->ix);
	zst_table_free(&w->zt);
	free(w);
}
