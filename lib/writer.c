// SPDX-License-Identifier: MIT
/*
 * Trace writer: raw .byu, or blocked .byu.gz: the caller's records fill
 * 64 KiB blocks that a pool of threads compresses (bach/zpool.h) while the
 * next block fills; finished members are written in order, then the EOF
 * block. Blocks are compressed by the record encoder unless a level (or a
 * backend) is asked for (bach_deflater_new()).
 *
 * A named output is written under a temporary name beside it and renamed
 * into place by a good close (bach/outfile.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach/outfile.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "bach/zpool.h"

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
	size_t nin, cur, cur_len;
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

/* Write out finished members, oldest first; with wait, all of them. */
static int drain(struct bach_writer *w, bool wait)
{
	const uint8_t *out;
	size_t len;

	while (bach_zpool_peek(w->pool, wait, &out, &len, NULL)) {
		if (!w->err)
			write_all(w, out, len);
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
		if (!w->err)
			write_all(w, out, len);
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
	struct bach_writer *w = calloc(1, sizeof(*w));
	int threads, ret;

	*wp = w;
	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->fd = -1;
	w->out.fd = -1;
	/* no level: the record encoder, unless a library was named */
	if (!w->o.level && w->o.backend != BACH_DEFLATE_AUTO)
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
	threads = o->threads > 0 ? o->threads
				 : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (threads < 1)
		threads = 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	/* one input block per pool slot, plus the one being filled */
	w->nin = (size_t)threads * BLOCKS_PER_THREAD + 1;
	w->in = calloc(w->nin, sizeof(*w->in));
	if (!w->in)
		return wfail(w, -ENOMEM, "%s: out of memory", wname(w));
	for (size_t i = 0; i < w->nin; i++) {
		w->in[i] = malloc(BACH_BGZF_MAX_INPUT);
		if (!w->in[i])
			return wfail(w, -ENOMEM, "%s: out of memory", wname(w));
	}
	w->pool = bach_zpool_new(threads > 1 ? threads : 0, w->nin - 1,
				 o->backend, w->o.level);
	if (!w->pool)
		return wfail(w, -ENOMEM, "%s: cannot start compressor",
			     wname(w));
	return 0;
}

int bach_writer_close(struct bach_writer *w)
{
	int ret;

	if (w->err || w->closed)
		return w->err;
	if (w->o.format == BACH_OUT_BYU_GZ) {
		if (submit(w) < 0 || drain(w, true) < 0 ||
		    write_all(w, bach_bgzf_eof, sizeof(bach_bgzf_eof)) < 0)
			return w->err;
	} else if (write_all(w, w->buf, w->fill) < 0) {
		return w->err;
	}
	ret = bach_outfile_commit(&w->out);
	if (ret < 0)
		return wfail(w, ret, "%s: cannot finish: %s", wname(w),
			     strerror(-ret));
	w->closed = true;
	return 0;
}

void bach_writer_free(struct bach_writer *w)
{
	if (!w)
		return;
	bach_zpool_free(w->pool);
	if (!w->closed)
		bach_outfile_abort(&w->out);
	free(w->buf);
	for (size_t i = 0; w->in && i < w->nin; i++)
		free(w->in[i]);
	free(w->in);
	free(w);
}
