// SPDX-License-Identifier: MIT
/*
 * Timing sidecars (lib/io/timing.h, docs/formats.md section 3.2): one
 * bus clock per record in blocked gzip members of exactly 8160 entries
 * (the last one fewer), each carrying the clock rate in a BT subfield.
 * Version 2 members (a TE subfield) hold the entries' differences from
 * the one before, as runs of equal ones (encoding 2: a zigzag LEB128
 * varint difference and a varint count) or one zigzag varint an entry
 * (encoding 1, still read); version 1 members (none) hold u64s. The
 * writer makes encoding 2, and version 1 only for a member whose runs
 * would take more room.
 */
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bach/bytes.h"
#include "bach/trace.h"
#include "lib/io/found.h"
#include "lib/io/manifest.h"
#include "lib/io/outfile.h"
#include "lib/io/timing.h"
#include "lib/io/zpool.h"

#define MEMBER_BYTES (BACH_TIME_MEMBER_ENTRIES * BACH_TIME_ENTRY)
#define HDR	     18 /* a BGZF member's header with only BC */
#define BT_LEN	     12 /* 'B' 'T' SLEN=8 and the rate */
#define TE_LEN	     7	/* 'T' 'E' SLEN=3, the encoding and the entries */
#define TE_DELTAS    1	/* TE's encoding: zigzag LEB128 differences */
#define TE_RUNS	     2	/* TE's encoding: runs of equal differences */
#define VARINT_MAX   10 /* bytes of a u64's LEB128 */

static const char *const suffixes[] = { ".byu.gz", ".byu.zst", ".byu", ".gz",
					".zst" };

int bach_time_name(char *dst, size_t cap, const char *trace)
{
	size_t len = strlen(trace);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
		size_t s = strlen(suffixes[i]);

		if (len > s && !strcmp(trace + len - s, suffixes[i])) {
			len -= s;
			break;
		}
	}
	if ((size_t)snprintf(dst, cap, "%.*s%s", (int)len, trace,
			     BACH_TIME_SUFFIX) >= cap)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- writing ------------------------------------------------------------ */

/*
 * Bytes of a member's runs at most: a run is a difference (at most 10
 * bytes of varint) and a count (at most 2: 8160 < 2^14), one an entry at
 * worst. A member whose runs take more than MEMBER_BYTES is written as
 * version 1 (u64s) instead.
 */
#define RUNS_MAX (BACH_TIME_MEMBER_ENTRIES * (VARINT_MAX + 2))

struct bach_time_writer {
	int dirfd, fd;
	char name[4096], part[4096];
	uint64_t clock_hz, entries;
	struct bach_deflater *d;
	/*
	 * With a pool (bach_time_writer_pool()), members are compressed by
	 * its threads: bufs[nsub % nbufs] holds the next one while the
	 * nbufs - 1 before it may be pending; without one, own holds it and
	 * d compresses it.
	 */
	struct bach_zpool *pool;
	uint8_t *bufs;
	size_t nbufs;
	uint64_t nsub; /* members submitted to the pool */
	uint8_t *buf;  /* where the next member's data goes (MEMBER_BYTES) */
	/*
	 * The member being made, as runs (encoding 2, docs/formats.md 3.2):
	 * nbuf entries so far, their runs in runs[0..nruns), then the open
	 * run: run_n entries, each run_d more than the one before. last is
	 * the last entry written (0 before the first); a member's first
	 * entry is its difference from 0, the entry itself.
	 */
	size_t nbuf, nruns;
	uint64_t run_d, run_n, last;
	uint8_t runs[RUNS_MAX];
	uint64_t ent[BACH_TIME_MEMBER_ENTRIES]; /* a version 1 member's */
	uint8_t own[MEMBER_BYTES];
	uint8_t out[BACH_BGZF_MAX_BLOCK + BT_LEN + TE_LEN];
	int err;  /* a write of a pooled member failed */
	int slot; /* in lib/io/outfile.h's table of temporaries, or -1 */
	bool closed;
	/* bach_time_writer_summary(): the bytes written and their CRC-32,
	 * the first member's rate, the entries and their clocks */
	struct bach_time_summary sum;
};

/* A writer of NAME.part in dirfd, its file not yet open (fd -1). */
static struct bach_time_writer *writer_new(int dirfd, const char *name,
					   uint64_t clock_hz)
{
	struct bach_time_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->d = bach_deflater_new(BACH_TIME_BACKEND, BACH_TIME_LEVEL);
	if (!w->d) {
		free(w);
		return NULL;
	}
	w->dirfd = dirfd;
	w->fd = -1;
	w->slot = -1;
	w->buf = w->own;
	w->clock_hz = w->sum.clock_hz = clock_hz;
	snprintf(w->name, sizeof(w->name), "%s", name);
	snprintf(w->part, sizeof(w->part), "%s.part", name);
	return w;
}

int bach_time_writer_open(struct bach_time_writer **wp, int dirfd,
			  const char *name, uint64_t clock_hz)
{
	struct bach_time_writer *w = writer_new(dirfd, name, clock_hz);
	sigset_t old;

	*wp = NULL;
	if (!w)
		return -ENOMEM;
	/*
	 * Never through a link, never waiting on a FIFO of that name. A
	 * program killed by a signal removes it (lib/io/outfile.h), so no
	 * signal between its creation and its registration; bachd's (in a
	 * capture directory) are recovery's.
	 */
	bach_outfile_hold_signals(&old);
	w->fd = bach_tmp_openat(dirfd, w->part, 0644, NULL);
	w->slot = w->fd >= 0 && dirfd == AT_FDCWD
			  ? bach_outfile_temp_register(w->part)
			  : -1;
	bach_outfile_release_signals(&old);
	if (w->fd < 0) {
		int err = w->fd;

		bach_deflater_free(w->d);
		free(w);
		return err;
	}
	*wp = w;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t k = write(fd, p, len);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

/* Bytes of the file out, counted into its size and CRC-32. */
static int write_out(struct bach_time_writer *w, const uint8_t *p, size_t len)
{
	w->sum.crc = libdeflate_crc32(w->sum.crc, p, len);
	w->sum.bytes += len;
	return write_all(w->fd, p, len);
}

/*
 * What a member's data is, as encode_member() made it, in a pool's tag:
 * its entries, and its TE encoding << 16 (0: version 1, u64s).
 */
#define TAG(entries, enc) ((void *)(uintptr_t)((entries) | (enc) << 16))

static uint8_t *put_varint(uint8_t *p, uint64_t z)
{
	while (z >= 0x80) {
		*p++ = (uint8_t)(z | 0x80);
		z >>= 7;
	}
	*p++ = (uint8_t)z;
	return p;
}

static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
}

/* The open run, if any, into runs. */
static void close_run(struct bach_time_writer *w)
{
	uint8_t *p = w->runs + w->nruns;

	if (!w->run_n)
		return;
	p = put_varint(p, zigzag(w->run_d));
	p = put_varint(p, w->run_n);
	w->nruns = (size_t)(p - w->runs);
	w->run_n = 0;
}

static int runs_entries(const uint8_t *p, size_t len, uint64_t *out, size_t n);

/*
 * The member made so far (its runs closed) at buf: its runs, or, when
 * they would take more room than u64s, the u64s themselves (version 1).
 * Returns the bytes; *tag says which.
 */
static size_t encode_member(struct bach_time_writer *w, void **tag)
{
	close_run(w);
	if (w->nruns <= MEMBER_BYTES) {
		memcpy(w->buf, w->runs, w->nruns);
		*tag = TAG(w->nbuf, TE_RUNS);
		return w->nruns;
	}
	/* version 1: the runs are this writer's own, so they decode */
	(void)runs_entries(w->runs, w->nruns, w->ent, w->nbuf);
	for (size_t i = 0; i < w->nbuf; i++)
		bach_put_le64(w->buf + i * BACH_TIME_ENTRY, w->ent[i]);
	*tag = TAG(w->nbuf, 0);
	return w->nbuf * BACH_TIME_ENTRY;
}

/*
 * A member of len bytes at m (BC only) out with the BT subfield after BC
 * and, for varints (tag), TE after it.
 */
static int emit_member(struct bach_time_writer *w, const uint8_t *m, size_t len,
		       void *tag)
{
	uintptr_t t = (uintptr_t)tag;
	size_t x = BT_LEN + (t >> 16 ? TE_LEN : 0);

	if (m != w->out)
		memcpy(w->out, m, HDR);
	memmove(w->out + HDR + x, m + HDR, len - HDR);
	bach_put_le16(w->out + 10, (uint16_t)(6 + x));
	bach_put_le16(w->out + 16, (uint16_t)(len + x - 1));
	w->out[HDR] = 'B';
	w->out[HDR + 1] = 'T';
	bach_put_le16(w->out + HDR + 2, 8);
	bach_put_le64(w->out + HDR + 4, w->clock_hz);
	if (t >> 16) {
		uint8_t *te = w->out + HDR + BT_LEN;

		te[0] = 'T';
		te[1] = 'E';
		bach_put_le16(te + 2, 3);
		te[4] = (uint8_t)(t >> 16);
		bach_put_le16(te + 5, (uint16_t)(t & 0xffff));
	}
	if (!w->sum.bytes)
		w->sum.clock_hz = w->clock_hz;
	return write_out(w, w->out, len + x);
}

/* The pool's oldest member out, if finished (with wait, once it is). */
static bool emit_next(struct bach_time_writer *w, bool wait)
{
	const uint8_t *m;
	size_t len;
	void *tag;

	if (!bach_zpool_peek(w->pool, wait, &m, &len, &tag))
		return false;
	if (!w->err)
		w->err = emit_member(w, m, len, tag);
	bach_zpool_release(w->pool);
	return true;
}

/* The pool's finished members, in order; with wait, every pending one. */
static int drain(struct bach_time_writer *w, bool wait)
{
	while (emit_next(w, wait))
		;
	return w->err;
}

/* The member made so far out, the BT subfield after BC; a new one begins. */
static int flush_member(struct bach_time_writer *w)
{
	size_t len;
	void *tag;

	if (!w->nbuf)
		return 0;
	len = encode_member(w, &tag);
	w->nbuf = w->nruns = 0;
	if (!w->pool) {
		len = bach_bgzf_block(w->d, w->out, w->buf, len);
		return emit_member(w, w->out, len, tag);
	}
	/* the buffer after this one may still be pending: make room */
	if (bach_zpool_pending(w->pool) == w->nbufs - 1)
		emit_next(w, true);
	bach_zpool_submit(w->pool, w->buf, len, tag);
	w->nsub++;
	w->buf = w->bufs + (size_t)(w->nsub % w->nbufs) * MEMBER_BYTES;
	return drain(w, false);
}

int bach_time_writer_pool(struct bach_time_writer *w, struct bach_zpool *pool)
{
	size_t n = bach_zpool_depth(pool) + 1;

	if (w->entries || w->pool || bach_zpool_pending(pool))
		return -EINVAL;
	w->bufs = malloc(n * MEMBER_BYTES);
	if (!w->bufs)
		return -ENOMEM;
	w->nbufs = n;
	w->pool = pool;
	w->buf = w->bufs;
	return 0;
}

/*
 * n entries, each d more than the one before (mod 2^64; the first, d more
 * than the last one written): into runs, members flushed as they fill.
 * A member's first entry begins a run with its difference from 0.
 */
static int put_run(struct bach_time_writer *w, uint64_t d, uint64_t n)
{
	while (n) {
		uint64_t k = BACH_TIME_MEMBER_ENTRIES - w->nbuf;

		if (!w->nbuf) { /* from 0: the entry itself */
			w->last += d;
			w->run_d = w->last;
			w->run_n = 1;
			w->nbuf = 1;
			w->entries++;
			n--;
			continue;
		}
		if (k > n)
			k = n;
		if (d != w->run_d || !w->run_n) {
			close_run(w);
			w->run_d = d;
		}
		w->run_n += k;
		w->last += d * k;
		w->nbuf += (size_t)k;
		w->entries += k;
		n -= k;
		if (w->nbuf == BACH_TIME_MEMBER_ENTRIES) {
			int err = flush_member(w);

			if (err)
				return err;
		}
	}
	return 0;
}

int bach_time_writer_put(struct bach_time_writer *w, const uint64_t *t,
			 size_t n)
{
	int err = 0;

	bach_time_summary_add(&w->sum, t, n);
	for (size_t i = 0, j; i < n && !err; i = j) {
		uint64_t d = t[i] - w->last;

		/* the entries after it that are d apart too */
		for (j = i + 1; j < n && t[j] - t[j - 1] == d; j++)
			;
		err = put_run(w, d, j - i);
	}
	return err;
}

/*
 * How many of the n steps at p (n >= 1) equal p[0]: a compare of eight
 * at a time where SSE2 is (every x86-64), else one at a time.
 */
static size_t same_steps(const uint16_t *p, size_t n)
{
	size_t i = 1;
#if defined(__SSE2__)
	__m128i v = _mm_set1_epi16((short)p[0]);

	for (; i + 8 <= n; i += 8) {
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(
			_mm_loadu_si128((const __m128i *)(p + i)), v));

		if (m != 0xffff)
			return i + (size_t)__builtin_ctz(~m) / 2;
	}
#endif
	while (i < n && p[i] == p[0])
		i++;
	return i;
}

int bach_time_writer_steps(struct bach_time_writer *w, uint64_t base,
			   const uint16_t *step, const uint64_t *esc, size_t n)
{
	struct bach_time_summary *s = &w->sum;
	uint64_t v = base; /* the entry before the next one */
	size_t i = 0;
	int err = 0;

	while (i < n && !err) {
		uint16_t d = step[i];
		size_t j = i + 1;

		if (d == BACH_TIME_ESCAPE || !i) {
			/* a value of its own (the first one's, from base) */
			uint64_t x = d == BACH_TIME_ESCAPE ? *esc++ : v + d;

			if (v != BACH_TIME_NONE && i)
				s->last_clock = v;
			if (x != BACH_TIME_NONE && !s->has_clocks) {
				s->has_clocks = true;
				s->first_clock = x;
			}
			err = put_run(w, x - w->last, 1);
			v = x;
		} else {
			j = i + same_steps(step + i, n - i);
			err = put_run(w, d, j - i);
			v += (uint64_t)d * (j - i);
		}
		i = j;
	}
	if (n && v != BACH_TIME_NONE)
		s->last_clock = v;
	s->entries += n;
	return err;
}

int bach_time_writer_fill(struct bach_time_writer *w, uint64_t v, uint64_t n)
{
	int err;

	if (!n)
		return 0;
	bach_time_summary_add(&w->sum, &v, 1);
	w->sum.entries += n - 1;
	err = put_run(w, v - w->last, 1);
	return err ? err : put_run(w, 0, n - 1);
}

void bach_time_writer_clock(struct bach_time_writer *w, uint64_t clock_hz)
{
	w->clock_hz = clock_hz;
}

uint64_t bach_time_writer_entries(const struct bach_time_writer *w)
{
	return w->entries;
}

int bach_time_writer_close(struct bach_time_writer *w, bool sync)
{
	int err = flush_member(w);

	if (w->pool) {
		int e = drain(w, true);

		if (!err)
			err = e;
	}

	if (!err)
		err = write_out(w, bach_bgzf_eof, BACH_BGZF_EOF_SIZE);
	if (!err && sync && fdatasync(w->fd) < 0)
		err = -errno;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	w->fd = -1;
	if (!err && renameat(w->dirfd, w->part, w->dirfd, w->name) < 0)
		err = -errno;
	if (!err) {
		w->closed = true;
		bach_outfile_temp_forget(w->slot);
		w->slot = -1;
	}
	return err;
}

void bach_time_writer_summary(const struct bach_time_writer *w,
			      struct bach_time_summary *s)
{
	*s = w->sum;
}

void bach_time_summary_add(struct bach_time_summary *s, const uint64_t *e,
			   size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (e[i] != BACH_TIME_NONE) {
			if (!s->has_clocks)
				s->first_clock = e[i];
			s->has_clocks = true;
			s->last_clock = e[i];
		}
	s->entries += n;
}

void bach_time_writer_free(struct bach_time_writer *w)
{
	if (!w)
		return;
	if (w->pool) { /* its members pending in the pool are dropped */
		w->err = w->err ? w->err : -ECANCELED;
		drain(w, true);
	}
	free(w->bufs);
	if (w->fd >= 0)
		close(w->fd);
	if (!w->closed)
		unlinkat(w->dirfd, w->part, 0);
	bach_outfile_temp_forget(w->slot);
	bach_deflater_free(w->d);
	free(w);
}

/* ---- reading ------------------------------------------------------------ */

struct bach_times {
	char file[4096]; /* the trace file whose sidecar is open */
	char path[4096]; /* the sidecar */
	int fd;
	uint64_t size;	   /* the sidecar's bytes */
	uint64_t moff;	   /* offset of the member after the decoded one */
	uint64_t mstart;   /* offset of the decoded one */
	uint64_t first;	   /* entry index of mbuf[0] */
	size_t mlen;	   /* entries in mbuf */
	bool at_eof;	   /* the EOF block was reached */
	uint64_t clock_hz; /* of the first member */
	uint64_t next;	   /* entry after the last one asked for */
	struct libdeflate_decompressor *dd;
	uint64_t mbuf[BACH_TIME_MEMBER_ENTRIES];
	uint8_t cbuf[65536 + 64], raw[MEMBER_BYTES];
	uint64_t *out;
	size_t outcap;
	char msg[8400];
	bool untimed; /* the file has no sidecar and reads untimed */
	/* the last clock decoded (entries handed out never go back from
	 * it): its entry, and with clk_prev, the earlier segment's sidecar
	 * it is in */
	bool have_clk, clk_prev;
	uint64_t clk, clk_entry;
	char clk_path[4096];
	/* the manifest of the capture directory man_dir (man_err: why not) */
	struct bach_manifest man;
	char man_dir[4096];
	int man_err;
};

struct bach_times *bach_times_new(void)
{
	struct bach_times *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->fd = -1;
	t->dd = libdeflate_alloc_decompressor();
	if (!t->dd) {
		free(t);
		return NULL;
	}
	return t;
}

void bach_times_free(struct bach_times *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	libdeflate_free_decompressor(t->dd);
	bach_manifest_free(&t->man);
	free(t->out);
	free(t);
}

const char *bach_times_strerror(const struct bach_times *t)
{
	return t->msg;
}

uint64_t bach_times_clock_hz(const struct bach_times *t)
{
	return t->clock_hz;
}

static int tfail(struct bach_times *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int tfail(struct bach_times *t, int err, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(t->msg, sizeof(t->msg), "%s: ", t->path);

	va_start(ap, fmt);
	vsnprintf(t->msg + k, sizeof(t->msg) - (size_t)k, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * The number of a capture segment's path (DIR/seg-NNNNNN.*), -1 for any
 * other name; *dirlen: the length of its DIR/ (0 for none).
 */
static long seg_number(const char *path, size_t *dirlen)
{
	const char *b = strrchr(path, '/'), *d;
	long n = 0;

	b = b ? b + 1 : path;
	*dirlen = (size_t)(b - path);
	if (strncmp(b, "seg-", 4))
		return -1;
	for (d = b + 4; *d >= '0' && *d <= '9' && n < 100000000; d++)
		n = n * 10 + (*d - '0');
	return d > b + 4 && *d == '.' ? n : -1;
}

/* Whether next is a later segment of the capture directory prev is in. */
static bool later_segment(const char *prev, const char *next)
{
	size_t a, b;
	long p = seg_number(prev, &a), n = seg_number(next, &b);

	return p >= 0 && n > p && a == b && !strncmp(prev, next, a);
}

/* The manifest of the capture directory segment file is in, or NULL. */
static const struct bach_manifest *capture_manifest(struct bach_times *t,
						    const char *file)
{
	char dir[sizeof(t->man_dir)], why[512];
	size_t dl;
	int dfd;

	if (seg_number(file, &dl) < 0 || dl >= sizeof(dir))
		return NULL;
	/* the directory, without its last slash */
	snprintf(dir, sizeof(dir), "%.*s", (int)(dl > 1 ? dl - 1 : dl), file);
	if (!dl)
		snprintf(dir, sizeof(dir), ".");
	if (t->man_dir[0] && !strcmp(t->man_dir, dir))
		return t->man_err ? NULL : &t->man;
	bach_manifest_free(&t->man);
	snprintf(t->man_dir, sizeof(t->man_dir), "%s", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	t->man_err = dfd < 0 ? -errno
			     : bach_manifest_load(dfd, t->man_dir, &t->man, why,
						  sizeof(why));
	if (dfd >= 0)
		close(dfd);
	return t->man_err ? NULL : &t->man;
}

/*
 * A trace file without a sidecar (docs/formats.md 3.2): a segment of a
 * capture whose manifest names sidecars of other segments but none of
 * this one reads untimed; one named there is missing (damage); anything
 * else has no timing.
 */
static int missing_sidecar(struct bach_times *t, const char *file)
{
	const struct bach_manifest *m = capture_manifest(t, file);
	const struct bach_manifest_seg *ms;
	const char *base = strrchr(file, '/');

	base = base ? base + 1 : file;
	ms = m ? bach_manifest_find_seg(m, base) : NULL;
	if (ms && ms->timing[0])
		return tfail(t, -EBADMSG,
			     "missing: %s/%s line %llu says %s has it",
			     t->man_dir, BACH_MANIFEST_NAME,
			     (unsigned long long)ms->line, base);
	for (size_t i = 0; m && i < m->nsegs; i++)
		if (m->segs[i].timing[0]) {
			t->untimed = true;
			t->first = 0;
			t->mlen = 0;
			return 0;
		}
	return tfail(t, -ENOENT,
		     "no timing sidecar for %s (the trace has no timing)",
		     file);
}

/* From the first member of a sidecar of size bytes open on t->fd. */
static void walk_from_start(struct bach_times *t, uint64_t size)
{
	t->size = size;
	t->moff = 0;
	t->first = 0;
	t->mlen = 0;
	t->at_eof = false;
	t->clock_hz = 0;
}

static int open_sidecar(struct bach_times *t, const char *file)
{
	struct stat st;
	int fd;

	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->untimed = false;
	/* the clocks go on from the segment before, in a capture */
	if (!later_segment(t->file, file))
		t->have_clk = t->clk_prev = false;
	else if (t->have_clk && !t->clk_prev) {
		snprintf(t->clk_path, sizeof(t->clk_path), "%s", t->path);
		t->clk_prev = true;
	}
	snprintf(t->file, sizeof(t->file), "%s", file);
	if (bach_time_name(t->path, sizeof(t->path), file))
		return tfail(t, -ENAMETOOLONG, "name too long");
	/* a regular file only: a FIFO of that name would hang the reader */
	fd = bach_open_found(AT_FDCWD, t->path, NULL, false, &st, t->msg,
			     sizeof(t->msg));
	if (fd == -ENOENT)
		return missing_sidecar(t, file);
	if (fd < 0)
		return fd;
	t->fd = fd;
	walk_from_start(t, (uint64_t)st.st_size);
	return 0;
}

static int pread_all(struct bach_times *t, uint8_t *p, size_t len, uint64_t off)
{
	ssize_t k = pread(t->fd, p, len, (off_t)off);

	if (k < 0)
		return tfail(t, -errno, "byte offset %llu: %s",
			     (unsigned long long)off, strerror(errno));
	if ((size_t)k < len)
		return tfail(
			t, -EBADMSG,
			"truncated gzip member at byte offset %llu (file ends at %llu)",
			(unsigned long long)off, (unsigned long long)t->size);
	return 0;
}

/*
 * An unsigned LEB128 varint at *pp (before end): at most 10 bytes, the
 * 10th 0 or 1. false when it is not one.
 */
static bool get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t z;
	unsigned sh = 7;

	if (p == end)
		return false;
	z = *p++;
	if (z >= 0x80) {
		z &= 0x7f;
		for (;;) {
			if (p == end || (sh == 63 && *p > 1))
				return false;
			z |= (uint64_t)(*p & 0x7f) << sh;
			if (*p++ < 0x80)
				break;
			sh += 7;
		}
	}
	*pp = p;
	*v = z;
	return true;
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
}

/*
 * Encoding 1's data, len bytes at p, into its n entries at out: each a
 * zigzag varint of the difference from the entry before (mod 2^64; 0
 * before the first), exactly filling len. -1 when it is not that.
 */
static int deltas_entries(const uint8_t *p, size_t len, uint64_t *out, size_t n)
{
	const uint8_t *end = p + len;
	uint64_t v = 0, z;
	size_t i;

	for (i = 0; i < n && get_varint(&p, end, &z); i++)
		out[i] = v += unzigzag(z);
	return i == n && p == end ? 0 : -1;
}

/*
 * Encoding 2's: runs, each a zigzag varint difference d and a varint
 * count (at least 1): count entries, each d more than the one before.
 * The counts add up to n, the runs exactly fill len. -1 when not.
 */
static int runs_entries(const uint8_t *p, size_t len, uint64_t *out, size_t n)
{
	const uint8_t *end = p + len;
	uint64_t v = 0, z, k;
	size_t i = 0;

	while (i < n && get_varint(&p, end, &z) && get_varint(&p, end, &k) &&
	       k && k <= n - i) {
		uint64_t d = unzigzag(z);

		for (uint64_t e = i + k; i < e; i++)
			out[i] = v += d;
	}
	return i == n && p == end ? 0 : -1;
}

/*
 * The member at t->moff: decoded into mbuf when decode, else only
 * checked to hold a whole member's entries (one being passed over).
 */
static int next_member(struct bach_times *t, bool decode)
{
	uint64_t off = t->moff;
	uint8_t *p = t->cbuf;
	size_t hlen, xlen, isize, size, nent;
	unsigned enc = 0; /* TE's encoding, 0 for none (version 1) */
	int bs, err;

	t->first += t->mlen;
	t->mlen = 0;
	t->mstart = off;
	if (t->at_eof || off >= t->size)
		return tfail(
			t, -EBADMSG,
			"%s at byte offset %llu: fewer entries than records (%llu entries)",
			t->at_eof ? "EOF block" : "missing EOF block",
			(unsigned long long)off, (unsigned long long)t->first);
	hlen = t->size - off < 64 ? (size_t)(t->size - off) : 64;
	if ((err = pread_all(t, p, hlen, off)))
		return err;
	bs = bach_bgzf_member_size(p, hlen);
	if (bs < 0 || hlen < 12)
		return tfail(t, -EBADMSG,
			     "not a blocked gzip member at byte offset %llu",
			     (unsigned long long)off);
	size = (size_t)bs;
	xlen = bach_get_le16(p + 10);
	if (off + size > t->size)
		return tfail(
			t, -EBADMSG,
			"truncated gzip member at byte offset %llu (file ends at %llu)",
			(unsigned long long)off, (unsigned long long)t->size);
	if (size < 12 + xlen + 8)
		return tfail(t, -EBADMSG, "bad member size at byte offset %llu",
			     (unsigned long long)off);
	if ((err = pread_all(t, p, size, off)))
		return err;
	for (size_t i = 0; i + 4 <= xlen;
	     i += 4 + bach_get_le16(p + 12 + i + 2)) {
		const uint8_t *sf = p + 12 + i;
		size_t slen = bach_get_le16(sf + 2);

		if (i + 4 + slen > xlen)
			break;
		if (sf[0] == 'B' && sf[1] == 'T' && slen == 8 && !off)
			t->clock_hz = bach_get_le64(sf + 4);
		if (sf[0] == 'T' && sf[1] == 'E') {
			if (slen != 3 ||
			    (sf[4] != TE_DELTAS && sf[4] != TE_RUNS) ||
			    !bach_get_le16(sf + 5) ||
			    bach_get_le16(sf + 5) > BACH_TIME_MEMBER_ENTRIES)
				return tfail(
					t, -EBADMSG,
					"member at byte offset %llu: its TE subfield is not encoding 1 or 2 with 1 to %u entries",
					(unsigned long long)off,
					BACH_TIME_MEMBER_ENTRIES);
			enc = sf[4];
			nent = bach_get_le16(sf + 5);
		}
	}
	isize = bach_get_le32(p + size - 4);
	if (!isize) {
		if (off + size != t->size)
			return tfail(
				t, -EBADMSG,
				"trailing garbage after the EOF block at byte offset %llu",
				(unsigned long long)(off + size));
		t->at_eof = true;
		t->moff = off + size;
		return next_member(t, decode); /* says what is missing */
	}
	if (enc ? isize > MEMBER_BYTES
		: isize % BACH_TIME_ENTRY || isize > MEMBER_BYTES)
		return tfail(
			t, -EBADMSG,
			"member at byte offset %llu holds %zu bytes, not whole entries",
			(unsigned long long)off, isize);
	if (!enc)
		nent = isize / BACH_TIME_ENTRY;
	if (decode || nent != BACH_TIME_MEMBER_ENTRIES) {
		size_t got;

		if (libdeflate_deflate_decompress(
			    t->dd, p + 12 + xlen, size - 12 - xlen - 8, t->raw,
			    isize, &got) != LIBDEFLATE_SUCCESS ||
		    got != isize ||
		    libdeflate_crc32(0, t->raw, isize) !=
			    bach_get_le32(p + size - 8))
			return tfail(t, -EBADMSG,
				     "corrupt gzip member at byte offset %llu",
				     (unsigned long long)off);
		if (!enc)
			for (size_t i = 0; i < nent; i++)
				t->mbuf[i] = bach_get_le64(t->raw +
							   i * BACH_TIME_ENTRY);
		else if ((enc == TE_DELTAS ? deltas_entries : runs_entries)(
				 t->raw, isize, t->mbuf, nent))
			return tfail(
				t, -EBADMSG,
				"member at byte offset %llu: its data (%zu bytes) is not the %zu entries its TE subfield says, as %s",
				(unsigned long long)t->mstart, isize, nent,
				enc == TE_DELTAS ? "varints" : "runs");
	}
	t->mlen = nent;
	t->moff = off + size;
	/* only the last member may be short */
	if (nent != BACH_TIME_MEMBER_ENTRIES &&
	    t->moff + BACH_BGZF_EOF_SIZE != t->size)
		return tfail(
			t, -EBADMSG,
			"short member at byte offset %llu before the end (%zu entries, not %u)",
			(unsigned long long)off, t->mlen,
			BACH_TIME_MEMBER_ENTRIES);
	return 0;
}

/* Whether the capture's manifest has the board back (device_back) in the
 * segment being read: its clock started again from 0. */
static bool clock_restarted(struct bach_times *t)
{
	const struct bach_manifest *m = capture_manifest(t, t->file);
	const char *base = strrchr(t->file, '/');

	base = base ? base + 1 : t->file;
	for (size_t i = 0; m && i < m->nevents; i++)
		if (m->events[i].kind == BACH_EV_DEVICE_BACK &&
		    !strcmp(m->events[i].segment, base))
			return true;
	return false;
}

/* Entry i of the decoded member, clock c, is before the last clock. */
static int went_back(struct bach_times *t, size_t i, uint64_t c)
{
	char last[4200];

	if (t->clk_prev)
		snprintf(last, sizeof(last),
			 "%llu, the last clock of %s (entry %llu)",
			 (unsigned long long)t->clk, t->clk_path,
			 (unsigned long long)t->clk_entry);
	else
		snprintf(last, sizeof(last), "clock %llu of entry %llu",
			 (unsigned long long)t->clk,
			 (unsigned long long)t->clk_entry);
	return tfail(
		t, -EBADMSG,
		"entry %llu (in the member at byte offset %llu): clock %llu is before %s: the clocks go backwards%s",
		(unsigned long long)(t->first + i),
		(unsigned long long)t->mstart, (unsigned long long)c, last,
		t->clk_prev ? " from one segment to the next" : "");
}

/* The decoded member's clocks, after the last one: none may go back. */
static int check_clocks(struct bach_times *t)
{
	for (size_t i = 0; i < t->mlen; i++) {
		uint64_t c = t->mbuf[i];

		if (c == BACH_TIME_NONE)
			continue;
		if (t->have_clk && c < t->clk &&
		    !(t->clk_prev && clock_restarted(t)))
			return went_back(t, i, c);
		t->clk = c;
		t->clk_entry = t->first + i;
		t->have_clk = true;
		t->clk_prev = false;
	}
	return 0;
}

int bach_times_get(struct bach_times *t, const char *file, uint64_t rec,
		   size_t n, const uint64_t **out)
{
	size_t k = 0;
	int err;

	if (strcmp(file, t->file) || (t->fd < 0 && !t->untimed) ||
	    rec < t->first) {
		if ((err = open_sidecar(t, file)))
			return err;
	}
	if (n > t->outcap) {
		uint64_t *o = realloc(t->out, n * sizeof(*o));

		if (!o)
			return tfail(t, -ENOMEM, "out of memory");
		t->out = o;
		t->outcap = n;
	}
	if (t->untimed) { /* a segment without timing, in a timed capture */
		for (size_t i = 0; i < n; i++)
			t->out[i] = BACH_TIME_NONE;
		t->next = rec + n;
		*out = t->out;
		return 0;
	}
	while (k < n) {
		uint64_t e = rec + k;
		size_t m;

		if (e >= t->first + t->mlen) {
			/* pass over whole members before e undecoded */
			bool dec = e < t->first + t->mlen +
						   BACH_TIME_MEMBER_ENTRIES ||
				   !t->mlen;

			if ((err = next_member(t, dec)) ||
			    (dec && (err = check_clocks(t))))
				return err;
			continue;
		}
		m = (size_t)(t->first + t->mlen - e);
		if (m > n - k)
			m = n - k;
		memcpy(t->out + k, t->mbuf + (e - t->first),
		       m * sizeof(*t->out));
		k += m;
	}
	t->next = rec + n;
	*out = t->out;
	return 0;
}

static bool walk_at_eof(struct bach_times *t);

int bach_times_end(struct bach_times *t)
{
	if (t->fd < 0 || t->at_eof || t->untimed)
		return 0;
	if (t->next == t->first + t->mlen &&
	    t->moff + BACH_BGZF_EOF_SIZE == t->size) {
		/* the last 28 bytes must be the EOF block, not any 28 */
		if (walk_at_eof(t))
			return 0;
		return tfail(t, -EBADMSG,
			     "not the EOF block at byte offset %llu",
			     (unsigned long long)t->moff);
	}
	return tfail(
		t, -EBADMSG,
		"more entries than %s has records (%llu records; entry %llu follows, in the member ending at byte offset %llu)",
		t->file, (unsigned long long)t->next,
		(unsigned long long)t->next, (unsigned long long)t->moff);
}

/* ---- recovery ----------------------------------------------------------- */

/*
 * NAME in dirfd, for its members to be walked with next_member(): a
 * regular file, not through a symbolic link (rw: open for writing too).
 */
static int open_walk(struct bach_times *t, int dirfd, const char *name, bool rw)
{
	struct stat st;

	snprintf(t->path, sizeof(t->path), "%s", name);
	t->fd = openat(dirfd, name,
		       (rw ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK |
			       O_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	if (fstat(t->fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	walk_from_start(t, (uint64_t)st.st_size);
	return 0;
}

/* Whether the walk is at the EOF block, the file's last bytes. */
static bool walk_at_eof(struct bach_times *t)
{
	uint8_t b[BACH_BGZF_EOF_SIZE];

	return t->moff + BACH_BGZF_EOF_SIZE == t->size &&
	       pread(t->fd, b, sizeof(b), (off_t)t->moff) == sizeof(b) &&
	       !memcmp(b, bach_bgzf_eof, sizeof(b));
}

/* The member next_member() just read, from off, into s (clock_hz aside). */
static void summary_member(struct bach_time_summary *s,
			   const struct bach_times *t, uint64_t off)
{
	s->crc = libdeflate_crc32(s->crc, t->cbuf, (size_t)(t->moff - off));
	s->bytes = t->moff;
	bach_time_summary_add(s, t->mbuf, t->mlen);
}

int bach_time_measure(int dirfd, const char *name, struct bach_time_summary *s)
{
	struct bach_times *t = bach_times_new();
	int err;

	memset(s, 0, sizeof(*s));
	if (!t)
		return -ENOMEM;
	err = open_walk(t, dirfd, name, false);
	while (!err && !walk_at_eof(t)) {
		uint64_t off = t->moff;

		if (next_member(t, true))
			err = -EBADMSG;
		else
			summary_member(s, t, off);
	}
	if (!err) {
		s->crc = libdeflate_crc32(s->crc, bach_bgzf_eof,
					  BACH_BGZF_EOF_SIZE);
		s->bytes = t->size;
		s->clock_hz = t->clock_hz;
	}
	bach_times_free(t);
	return err;
}

int bach_time_recover(int dirfd, const char *name, uint64_t records,
		      struct bach_time_summary *s)
{
	struct bach_times *t = bach_times_new();
	struct bach_time_writer *w = NULL;
	char part[4200];
	uint64_t kept;	 /* entries of the whole members kept as they are */
	size_t tail = 0; /* entries of the next member, written again */
	int err;

	memset(s, 0, sizeof(*s));
	if (!t)
		return -ENOMEM;
	snprintf(part, sizeof(part), "%s.part", name);
	err = open_walk(t, dirfd, part, true);
	/* whole members of 8160 entries up to records are kept; the one the
	 * records end in, or a short last one, is written again */
	while (!err && s->entries < records && !walk_at_eof(t)) {
		uint64_t off = t->moff;

		if (next_member(t, true))
			break; /* cut by the crash: what follows is lost */
		if (t->mlen != BACH_TIME_MEMBER_ENTRIES ||
		    s->entries + t->mlen > records) {
			tail = (size_t)(records - s->entries < t->mlen
						? records - s->entries
						: t->mlen);
			break;
		}
		summary_member(s, t, off);
	}
	if (err || (!s->entries && !tail)) {
		bach_times_free(t);
		return err; /* 0: nothing whole, left alone */
	}
	kept = s->entries;
	w = writer_new(dirfd, name, t->clock_hz);
	if (!w || ftruncate(t->fd, (off_t)s->bytes) < 0 ||
	    lseek(t->fd, (off_t)s->bytes, SEEK_SET) < 0) {
		err = w ? -errno : -ENOMEM;
		goto out;
	}
	w->fd = t->fd;
	t->fd = -1;
	/* the kept members are its own, as if it had written them */
	s->clock_hz = t->clock_hz;
	w->sum = *s;
	w->entries = s->entries;
	err = bach_time_writer_put(w, t->mbuf, tail);
	if (!err)
		err = bach_time_writer_fill(w, BACH_TIME_NONE,
					    records - w->entries);
	if (!err)
		err = bach_time_writer_close(w, true);
	if (!err) {
		bach_time_writer_summary(w, s);
		s->filled = records - kept - tail;
	}
out:
	if (w)
		w->closed = true; /* never removed: it held the clocks */
	bach_time_writer_free(w);
	bach_times_free(t);
	return err ? err : 1;
}

bool bach_times_present(const char *trace)
{
	char name[4096];
	struct stat st;
	char **paths = NULL;
	size_t nparts = 0;
	ssize_t n;
	bool yes = false;

	if (stat(trace, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* any segment's: the others may read untimed */
		n = bach_capture_segments(trace, &paths, &nparts);
		for (ssize_t i = 0; i < n; i++) {
			yes = yes ||
			      (!bach_time_name(name, sizeof(name), paths[i]) &&
			       access(name, F_OK) == 0);
			free(paths[i]);
		}
		free(paths);
		return yes;
	}
	return !bach_time_name(name, sizeof(name), trace) &&
	       access(name, F_OK) == 0;
}
