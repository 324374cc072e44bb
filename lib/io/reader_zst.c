// SPDX-License-Identifier: MIT
/*
 * The trace reader's .byu.zst side (docs/formats.md section 3.3): the
 * file's zstd frames decompressed into blocks of records, skippable frames
 * passed over, and the last of them, the seek table of zstd's seekable
 * format (lib/io/zst.h), checked at the end against the frames read: a
 * file cut between frames, or whose table does not fit its frames, is
 * damaged. Errors name the file and the byte offset of the frame, and the
 * records of the frames before a damaged one are handed out first (a
 * frame's checksum vouches for its records: a frame that fits the block
 * being filled is decompressed whole into it before any is handed out).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "bach/bytes.h"
#include "lib/cpus.h"
#include "lib/io/reader_state.h"
#include "lib/io/zst.h"

/* The longest seek table collected: 64 MiB, 5.6 M frames, 340 GiB. */
#define TAB_MAX (64ull << 20)
/*
 * The largest frame decompressed whole into a grown buffer: the largest
 * bach writes (zstd_frame_kb 16384). A larger one (another tool's, or a
 * header that lies) is decompressed as a stream, never an allocation of
 * the size its header claims.
 */
#define WHOLE_FRAME_MAX ((uint64_t)16384 * 1024)
/* Compressed bytes at hand for a frame decompressed in one call. */
#define WHOLE_IN (1u << 17)

/*
 * Read-ahead on a second thread: the frames ahead of the one handed out
 * go into a ring of RING slots, each its compressed bytes, read here, and
 * the room for its records. A helper thread decompresses them in file
 * order, whole (ZSTD_decompressDCtx()), while the reader's thread hands out
 * the records of the slot before; when the slot it needs is not done, the
 * reader's thread decompresses the next one not begun itself, or waits
 * for the helper's. A slot goes whole from one thread to the other under
 * one lock, taken a few times per frame (8 MiB of records, bach's
 * default), never per record; and a done slot's records are handed out
 * by swapping its buffer for r->out, not copied (but after a partial
 * record carried over, never in bach's frames of whole records).
 *
 * Only frames of bach's kind go through it: a content size in the header,
 * of 1 byte to WHOLE_FRAME_MAX, their bytes whole before the file ends and
 * within what a zstd frame of that content can take, and all of their
 * records wanted (a range's end is not in them). Any other frame, and
 * skippable frames, wait until the slots before them are handed out and
 * go the way below, one thread's; one that begins as bach's but turns out
 * not to be (cut short, or damaged in a block's header) is given back to
 * it whole, and the ring takes no frame of the file after it. A slot that
 * does not decompress is a damaged frame as below: the slots before it
 * handed out, then the error naming its byte offset. The thread is
 * started for the first slot on a process that may run on two CPUs or
 * more (lib/cpus.h: taskset -c 0 starts none, and reads as before), and
 * joined when the file is closed, a seek or resync leaves its frames, or
 * a frame is damaged.
 */
#define RING 4

enum { SLOT_EMPTY, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };

struct zst_slot {
	uint8_t *cbuf, *dbuf; /* compressed bytes, records */
	size_t ccap, dcap;    /* at least IN_CAP and OUT_CAP */
	size_t c, fcs;	      /* the frame's compressed and content sizes */
	uint64_t off;	      /* its byte offset in the file */
	size_t got;	      /* bytes made, or a zstd error code */
	int state;	      /* under mu */
};

struct zst_ring {
	pthread_t tid;
	bool running;	/* tid is the helper, to be joined */
	bool no_thread; /* none could be started */
	pthread_mutex_t mu;
	pthread_cond_t work; /* a slot queued, or quit */
	pthread_cond_t done; /* a slot done */
	bool quit;
	ZSTD_DCtx *d; /* the helper's */
	/* s[head], and n slots after it (mod RING), in file order; changed
	 * by the reader's thread, under mu */
	struct zst_slot s[RING];
	unsigned head, n;
};

/* The first slot queued and not begun, in file order, or NULL; mu held. */
static struct zst_slot *queued(struct zst_ring *g)
{
	for (unsigned i = 0; i < g->n; i++) {
		struct zst_slot *s = &g->s[(g->head + i) % RING];

		if (s->state == SLOT_QUEUED)
			return s;
	}
	return NULL;
}

/* Decompress slot s on the calling thread (its dctx d); mu held, and held
 * again on return. */
static void run_slot(struct zst_ring *g, struct zst_slot *s, ZSTD_DCtx *d)
{
	s->state = SLOT_BUSY;
	pthread_mutex_unlock(&g->mu);
	s->got = ZSTD_decompressDCtx(d, s->dbuf, s->fcs, s->cbuf, s->c);
	pthread_mutex_lock(&g->mu);
	s->state = SLOT_DONE;
	pthread_cond_signal(&g->done);
}

static void *ring_main(void *arg)
{
	struct zst_ring *g = arg;
	struct zst_slot *s;

	pthread_mutex_lock(&g->mu);
	for (;;) {
		while (!g->quit && !(s = queued(g)))
			pthread_cond_wait(&g->work, &g->mu);
		if (g->quit)
			break;
		run_slot(g, s, g->d);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

/* The ring emptied: its helper joined, its slots dropped (their buffers
 * kept), nothing read ahead. */
static void ring_stop(struct zst_in *z)
{
	struct zst_ring *g = z->ring;

	if (!g)
		return;
	if (g->running) {
		pthread_mutex_lock(&g->mu);
		g->quit = true;
		pthread_cond_signal(&g->work);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->tid, NULL);
		g->running = g->quit = false;
	}
	for (unsigned i = 0; i < RING; i++)
		g->s[i].state = SLOT_EMPTY;
	g->head = g->n = 0;
	z->ahead = z->ahead_d = z->ring_given = 0;
}

static void ring_free(struct zst_in *z)
{
	struct zst_ring *g = z->ring;

	if (!g)
		return;
	ring_stop(z);
	for (unsigned i = 0; i < RING; i++) {
		free(g->s[i].cbuf);
		free(g->s[i].dbuf);
	}
	ZSTD_freeDCtx(g->d);
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->work);
	pthread_cond_destroy(&g->done);
	free(g);
	z->ring = NULL;
}

/* The ring, made when first wanted; NULL (and never tried again) on one
 * CPU, or with no memory for it. */
static struct zst_ring *ring(struct zst_in *z)
{
	struct zst_ring *g;

	if (z->ring || z->no_ring)
		return z->ring;
	z->no_ring = true;
	if (bach_cpus(2) < 2 || !(g = calloc(1, sizeof(*g))))
		return NULL;
	if (!(g->d = ZSTD_createDCtx()) || pthread_mutex_init(&g->mu, NULL)) {
		ZSTD_freeDCtx(g->d);
		free(g);
		return NULL;
	}
	pthread_cond_init(&g->work, NULL);
	pthread_cond_init(&g->done, NULL);
	z->no_ring = false;
	return z->ring = g;
}

/* *buf of at least want bytes (*cap), its contents kept; 0 or -ENOMEM. */
static int grow(uint8_t **buf, size_t *cap, size_t want)
{
	uint8_t *p;

	if (*cap >= want)
		return 0;
	if (!(p = realloc(*buf, want)))
		return -ENOMEM;
	*buf = p;
	*cap = want;
	return 0;
}

/*
 * Record bytes still wanted after the carry: all of them, or up to a
 * range's end (a seek's records to pass over included).
 */
static uint64_t wanted(const struct bach_reader *r)
{
	uint64_t recs, b;

	if (r->limit == UINT64_MAX || r->skip_recs)
		return UINT64_MAX;
	if (r->total_recs >= r->limit)
		return 0;
	recs = r->limit - r->total_recs;
	if (recs > (UINT64_MAX / 4) / BACH_REC_SIZE)
		return UINT64_MAX;
	b = r->skip + recs * BACH_REC_SIZE;
	return b > r->carry ? b - r->carry : 0;
}

static int want(struct bach_reader *r, size_t k);
static uint64_t zat(const struct bach_reader *r);

/*
 * The bytes of a frame that turned out not to be bach's, s->cbuf[0, len),
 * given back to the one-thread way as its input (the slot keeps r->in's
 * buffer in exchange); the ring takes no more of this file's frames.
 */
static void give_back(struct bach_reader *r, struct zst_slot *s, size_t len)
{
	uint8_t *in = r->in;
	size_t cap = r->in_cap;

	r->in = r->gz.in = s->cbuf;
	r->in_cap = s->ccap;
	s->cbuf = in;
	s->ccap = cap;
	r->zs.zpos = 0;
	r->zs.zlen = len;
	r->zs.ring_off = true;
}

/*
 * The next frame into the ring's next slot, when it is bach's kind (above)
 * and all of it wanted. 1 when queued, 0 when not (the frame goes the
 * one-thread way), or r->err: a read that failed, or no memory.
 */
static int fill_one(struct bach_reader *r, struct zst_ring *g)
{
	struct zst_in *z = &r->zs;
	struct zst_slot *s = &g->s[(g->head + g->n) % RING];
	unsigned long long fcs;
	size_t avail, c, len, bound;
	uint64_t off;
	const uint8_t *p;
	int err;

	if (z->in_frame || z->skip_left || z->tab_done || z->ring_off)
		return 0;
	if ((err = want(r, ZST_HEADER_MAX)) < 0)
		return err;
	avail = z->zlen - z->zpos;
	p = r->in + z->zpos;
	if (avail < 4 || bach_get_le32(p) != ZST_FRAME_MAGIC)
		return 0;
	fcs = ZSTD_getFrameContentSize(p, avail);
	if (fcs >= ZSTD_CONTENTSIZE_ERROR || !fcs || fcs > WHOLE_FRAME_MAX ||
	    wanted(r) < z->ahead_d || wanted(r) - z->ahead_d < fcs)
		return 0;
	if (grow(&s->dbuf, &s->dcap, fcs > OUT_CAP ? (size_t)fcs : OUT_CAP) ||
	    grow(&s->cbuf, &s->ccap, IN_CAP))
		return reader_fail(r, -ENOMEM, "%s: out of memory",
				   bach_reader_file(r));
	off = zat(r);
	c = ZSTD_findFrameCompressedSize(p, avail);
	if (!ZSTD_isError(c) && c <= avail) {
		if (grow(&s->cbuf, &s->ccap, c))
			return reader_fail(r, -ENOMEM, "%s: out of memory",
					   bach_reader_file(r));
		memcpy(s->cbuf, p, c);
		z->zpos += c;
	} else {
		/* the frame's bytes at hand, and the rest read into the
		 * slot; what is read past its end goes back to r->in */
		bound = ZSTD_compressBound((size_t)fcs) + 64;
		if (bound < avail)
			bound = avail;
		if (grow(&s->cbuf, &s->ccap, bound))
			return reader_fail(r, -ENOMEM, "%s: out of memory",
					   bach_reader_file(r));
		memcpy(s->cbuf, p, avail);
		len = avail;
		z->zpos = z->zlen = 0;
		for (;;) {
			ssize_t n;

			c = ZSTD_findFrameCompressedSize(s->cbuf, len);
			if (!ZSTD_isError(c) && c <= len)
				break;
			if ((ZSTD_isError(c) &&
			     ZSTD_getErrorCode(c) !=
				     ZSTD_error_srcSize_wrong) ||
			    len == bound || r->file_eof) {
				give_back(r, s, len);
				return 0;
			}
			n = reader_gz_read(r, s->cbuf + len,
					   bound - len < IN_CAP ? bound - len
								: IN_CAP);
			if (n < 0) {
				give_back(r, s, len);
				return (int)n;
			}
			len += (size_t)n;
		}
		memcpy(r->in, s->cbuf + c, len - c);
		z->zlen = len - c;
	}
	s->c = c;
	s->fcs = (size_t)fcs;
	s->off = off;
	z->ahead += c;
	z->ahead_d += fcs;
	pthread_mutex_lock(&g->mu);
	s->state = SLOT_QUEUED;
	g->n++;
	pthread_cond_signal(&g->work);
	pthread_mutex_unlock(&g->mu);
	/* the helper, for the first slot (none: this thread does them all) */
	if (!g->running && !g->no_thread)
		g->no_thread = !(g->running = !pthread_create(&g->tid, NULL,
							      ring_main, g));
	return 1;
}

/*
 * The free slots filled, a read's error kept for after them. As many
 * frames ahead as were handed out since the file was opened or a seek,
 * up to RING: a few records read after a seek decompress one frame more,
 * not RING.
 */
static void ring_fill(struct bach_reader *r, struct zst_ring *g)
{
	struct zst_in *z = &r->zs;
	uint64_t ahead = z->ring_given < 1 ? 1 : z->ring_given;
	int st = 1;

	while (g->n < RING && g->n < ahead && !z->ring_err &&
	       (st = fill_one(r, g)) > 0)
		;
	if (st < 0) {
		z->ring_err = r->err;
		z->ring_off = true;
		r->err = 0;
	}
}

/* The slot at the ring's head, decompressed. */
static struct zst_slot *ring_take(struct zst_in *z, struct zst_ring *g)
{
	struct zst_slot *s = &g->s[g->head], *o;

	pthread_mutex_lock(&g->mu);
	while (s->state != SLOT_DONE) {
		if (s->state == SLOT_QUEUED)
			run_slot(g, s, z->dctx);
		else if ((o = queued(g)))
			run_slot(g, o, z->dctx); /* while the helper does s */
		else
			pthread_cond_wait(&g->done, &g->mu);
	}
	pthread_mutex_unlock(&g->mu);
	return s;
}

/*
 * The records of the ring's next frame, after the carry: bytes, 0 when the
 * ring holds none (the one-thread way goes on), or r->err.
 */
static ssize_t ring_produce(struct bach_reader *r)
{
	struct zst_in *z = &r->zs;
	struct zst_ring *g = ring(z);
	struct zst_slot *s;
	size_t n;

	if (!g)
		return 0;
	ring_fill(r, g);
	if (!g->n) {
		if (!z->ring_err)
			return 0;
		r->err = z->ring_err; /* r->msg says it */
		z->ring_err = 0;
		return r->err;
	}
	s = ring_take(z, g);
	z->frame_start = s->off;
	if (ZSTD_isError(s->got)) {
		z->bad = true;
		reader_fail(r, -BACH_EDATA,
			    "%s: bad zstd frame at byte offset %llu: %s",
			    bach_reader_file(r), (unsigned long long)s->off,
			    ZSTD_getErrorName(s->got));
		ring_stop(z);
		z->ring_err = 0;
		return r->err;
	}
	n = s->got;
	if (!r->carry) {
		uint8_t *o = r->out;
		size_t cap = r->out_cap;

		r->out = s->dbuf;
		r->out_cap = s->dcap;
		s->dbuf = o;
		s->dcap = cap;
	} else {
		if (grow(&r->out, &r->out_cap, r->carry + n))
			return reader_fail(r, -ENOMEM, "%s: out of memory",
					   bach_reader_file(r));
		memcpy(r->out + r->carry, s->dbuf, n);
	}
	z->frames++;
	z->ring_given++;
	z->csum = s->off + s->c;
	z->dsum += n;
	z->ahead -= s->c;
	z->ahead_d -= s->fcs;
	pthread_mutex_lock(&g->mu);
	s->state = SLOT_EMPTY;
	g->head = (g->head + 1) % RING;
	g->n--;
	pthread_mutex_unlock(&g->mu);
	ring_fill(r, g); /* the helper's next while these are read */
	return (ssize_t)n;
}

void reader_zst_restart(struct bach_reader *r)
{
	struct ZSTD_DCtx_s *dctx = r->zs.dctx;
	struct zst_ring *g = r->zs.ring;
	bool no_ring = r->zs.no_ring;

	ring_stop(&r->zs);
	free(r->zs.tab);
	memset(&r->zs, 0, sizeof(r->zs));
	r->zs.dctx = dctx;
	r->zs.ring = g;
	r->zs.no_ring = no_ring;
}

void reader_zst_close(struct bach_reader *r)
{
	ring_stop(&r->zs);
}

void reader_zst_end(struct bach_reader *r)
{
	reader_zst_restart(r);
	ring_free(&r->zs);
	ZSTD_freeDCtx(r->zs.dctx);
	r->zs.dctx = NULL;
}

void reader_zst_resume(struct bach_reader *r, uint64_t from, uint64_t at)
{
	struct zst_in *z = &r->zs;

	if (!z->resumed) {
		z->first_bad = from;
		z->first_dsum = z->dsum;
	}

	ring_stop(z);
	z->ring_err = 0;
	z->ring_off = false;
	free(z->tab);
	z->tab = NULL;
	z->tab_len = z->skip_left = 0;
	z->zpos = z->zlen = z->whole = 0;
	z->in_frame = z->tab_done = z->bad = false;
	z->frame_start = z->csum = at;
	/* the seek table is checked against the frames before the first
	 * damage and from here on */
	z->resumed = true;
	z->resume_at = at;
	z->resume_dsum = z->dsum;
}

/* The file offset of the next input byte. */
static uint64_t zat(const struct bach_reader *r)
{
	return r->in_off - (r->zs.zlen - r->zs.zpos);
}

/* At least k bytes of input at hand, unless the file ends first. */
static int want(struct bach_reader *r, size_t k)
{
	struct zst_in *z = &r->zs;

	while (z->zlen - z->zpos < k && !r->file_eof) {
		ssize_t n;

		if (z->zpos) {
			memmove(r->in, r->in + z->zpos, z->zlen - z->zpos);
			z->zlen -= z->zpos;
			z->zpos = 0;
		}
		n = reader_gz_read(r, r->in + z->zlen, r->in_cap - z->zlen);
		if (n < 0)
			return (int)n;
		z->zlen += (size_t)n;
	}
	return 0;
}

bool reader_zst_done(const struct bach_reader *r)
{
	return !(r->zs.ring && r->zs.ring->n) && !r->zs.in_frame &&
	       !r->zs.skip_left && r->zs.zpos == r->zs.zlen && r->file_eof;
}

/* The bytes of a skippable frame at hand, passed over or collected. */
static void pass_skippable(struct bach_reader *r)
{
	struct zst_in *z = &r->zs;
	size_t k = z->zlen - z->zpos;

	if (k > z->skip_left)
		k = (size_t)z->skip_left;
	if (z->tab) {
		memcpy(z->tab + z->tab_len, r->in + z->zpos, k);
		z->tab_len += k;
	}
	z->zpos += k;
	z->skip_left -= k;
	if (!z->skip_left) {
		z->csum = zat(r);
		if (z->tab)
			z->tab_done = true;
		else
			z->frames++;
	}
}

/* A skippable frame's header at hand: pass over it, or collect it when it
 * may be the seek table (the last one is). */
static int skippable(struct bach_reader *r, uint32_t magic)
{
	struct zst_in *z = &r->zs;
	uint32_t size = bach_get_le32(r->in + z->zpos + 4);

	z->skip_left = size;
	if (magic == ZST_SEEK_MAGIC && size + 8ull <= TAB_MAX) {
		z->tab = malloc(size + 8ull);
		if (!z->tab)
			return reader_fail(r, -ENOMEM, "%s: out of memory",
					   bach_reader_file(r));
		memcpy(z->tab, r->in + z->zpos, 8);
		z->tab_len = 8;
		z->tab_at = z->frame_start;
	}
	z->zpos += 8;
	if (!size)
		pass_skippable(r); /* an empty one ends here */
	return 0;
}

/*
 * A zstd frame begun that fits left bytes goes in one call, with no copy
 * through zstd's window, when it is all at hand (within WHOLE_IN, or what
 * the input holds); else it is streamed. 0, or r->err.
 */
static int frame_start_whole(struct bach_reader *r, size_t left)
{
	struct zst_in *z = &r->zs;
	size_t c;
	int err;

	if (z->fcs > left)
		return 0;
	if ((err = want(r, WHOLE_IN)) < 0)
		return err;
	c = ZSTD_findFrameCompressedSize(r->in + z->zpos, z->zlen - z->zpos);
	if (!ZSTD_isError(c) && c <= z->zlen - z->zpos)
		z->whole = c;
	return 0;
}

/*
 * The start of a frame at hand: a skippable one, or a zstd frame begun.
 * Returns 1 when the frame should wait for the next block (it does not fit
 * what is left of this one), 0, or r->err.
 */
static int frame_start(struct bach_reader *r, size_t left, bool made)
{
	struct zst_in *z = &r->zs;
	const uint8_t *p;
	size_t avail;
	uint32_t magic;
	unsigned long long fcs;
	int err = want(r, ZST_HEADER_MAX);

	if (err)
		return err;
	avail = z->zlen - z->zpos;
	p = r->in + z->zpos;
	z->frame_start = zat(r);
	/*
	 * Bytes after a seek table: another file's frames, concatenated (cat
	 * a.byu.zst b.byu.zst), which its own table lists; the table before
	 * them is checked first
	 */
	if (z->tab_done) {
		if ((err = reader_zst_check_end(r)) < 0)
			return err;
		free(z->tab);
		z->tab = NULL;
		z->tab_done = z->resumed = false;
		z->base = z->csum;
		z->dbase = z->dsum;
		z->frames = 0;
	}
	z->bad = true; /* until it is seen to be a frame */
	if (avail < 4 ||
	    (avail < 8 && (bach_get_le32(p) & ~0xFu) == ZST_SKIP_MAGIC))
		return reader_fail(
			r, -BACH_EDATA,
			"%s: truncated zstd frame at byte offset %llu (the file ends %zu bytes into its header)",
			bach_reader_file(r), (unsigned long long)z->frame_start,
			avail);
	magic = bach_get_le32(p);
	if (magic != ZST_FRAME_MAGIC && (magic & ~0xFu) != ZST_SKIP_MAGIC)
		return reader_fail(
			r, -BACH_EDATA,
			z->frame_start
				? "%s: trailing garbage at byte offset %llu: not a zstd frame"
				: "%s: not zstd: no zstd frame at byte offset %llu",
			bach_reader_file(r),
			(unsigned long long)z->frame_start);
	z->bad = false;
	if ((magic & ~0xFu) == ZST_SKIP_MAGIC)
		return skippable(r, magic);
	fcs = ZSTD_getFrameContentSize(p, avail);
	z->fcs = fcs;
	if (made && fcs < ZSTD_CONTENTSIZE_ERROR && fcs > left)
		return 1;
	ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
	z->in_frame = true;
	return frame_start_whole(r, left);
}

static ssize_t damaged(struct bach_reader *r, size_t good)
{
	/* the frames before the damage are handed out first */
	if (good) {
		r->deferred = r->err;
		r->err = 0;
		return (ssize_t)good;
	}
	return r->err;
}

ssize_t reader_zst_produce(struct bach_reader *r, size_t room)
{
	struct zst_in *z = &r->zs;
	uint8_t *dst = r->out + r->carry;
	size_t made = 0, good = 0, fmade = 0;

	if (!z->dctx && !(z->dctx = ZSTD_createDCtx()))
		return reader_fail(r, -ENOMEM, "%s: out of memory",
				   bach_reader_file(r));
	if (!z->no_ring) {
		ssize_t n = ring_produce(r);

		if (n)
			return n;
	}
	while (made < room) {
		ZSTD_inBuffer ib;
		ZSTD_outBuffer ob = { dst, room, made };
		size_t ret;
		int st;

		if (z->zpos == z->zlen) {
			if (want(r, 1) < 0)
				return damaged(r, good);
			if (z->zpos == z->zlen) {
				z->bad = z->in_frame || z->skip_left;
				if (z->in_frame)
					reader_fail(
						r, -BACH_EDATA,
						"%s: truncated zstd frame at byte offset %llu (the file ends at byte offset %llu)",
						bach_reader_file(r),
						(unsigned long long)
							z->frame_start,
						(unsigned long long)r->in_off);
				else if (z->skip_left)
					reader_fail(
						r, -BACH_EDATA,
						"%s: truncated skippable frame at byte offset %llu (%llu bytes missing)",
						bach_reader_file(r),
						(unsigned long long)
							z->frame_start,
						(unsigned long long)
							z->skip_left);
				return r->err ? damaged(r, good)
					      : (ssize_t)made;
			}
		}
		if (z->skip_left) {
			pass_skippable(r);
			continue;
		}
		if (!z->in_frame) {
			st = frame_start(r, room - made, made > 0);
			if (st < 0)
				return damaged(r, good);
			if (st > 0)
				break;
			fmade = 0;
			/*
			 * A frame larger than the whole buffer (of several
			 * blocks): the buffer grows to hold it, so that its
			 * records go out only once its checksum vouched for
			 * them (a range's end in sight asks for less: not
			 * grown).
			 */
			if (z->in_frame && !made && z->fcs > room &&
			    z->fcs < ZSTD_CONTENTSIZE_ERROR &&
			    z->fcs <= WHOLE_FRAME_MAX &&
			    room == r->out_cap - r->carry) {
				size_t cap = r->carry + (size_t)z->fcs;
				uint8_t *o = realloc(r->out, cap);

				if (!o)
					return reader_fail(r, -ENOMEM,
							   "%s: out of memory",
							   bach_reader_file(r));
				r->out = o;
				r->out_cap = cap;
				dst = o + r->carry;
				room = (size_t)z->fcs;
				if (frame_start_whole(r, room) < 0)
					return damaged(r, good);
			}
			if (z->whole) {
				size_t got = ZSTD_decompressDCtx(
					z->dctx, dst + made, room - made,
					r->in + z->zpos, z->whole);

				if (ZSTD_isError(got)) {
					z->whole = 0;
					z->bad = true;
					reader_fail(
						r, -BACH_EDATA,
						"%s: bad zstd frame at byte offset %llu: %s",
						bach_reader_file(r),
						(unsigned long long)
							z->frame_start,
						ZSTD_getErrorName(got));
					return damaged(r, good);
				}
				z->zpos += z->whole;
				z->whole = 0;
				z->in_frame = false;
				z->frames++;
				z->csum = zat(r);
				z->dsum += got;
				made += got;
				good = made;
			}
			continue;
		}
		ib = (ZSTD_inBuffer){ r->in, z->zlen, z->zpos };
		ret = ZSTD_decompressStream(z->dctx, &ob, &ib);
		z->zpos = ib.pos;
		if (ZSTD_isError(ret)) {
			z->bad = true;
			reader_fail(
				r, -BACH_EDATA,
				"%s: bad zstd frame at byte offset %llu: %s",
				bach_reader_file(r),
				(unsigned long long)z->frame_start,
				ZSTD_getErrorName(ret));
			return damaged(r, good);
		}
		fmade += ob.pos - made;
		made = ob.pos;
		if (ret == 0) {
			z->in_frame = false;
			z->frames++;
			z->csum = zat(r);
			z->dsum += fmade;
			fmade = 0;
			good = made;
		}
	}
	/* a frame larger than the block: its bytes so far count as read */
	z->dsum += fmade;
	return (ssize_t)made;
}

int reader_zst_check_end(struct bach_reader *r)
{
	struct zst_in *z = &r->zs;
	struct bach_index ix = { 0 };
	char msg[256];
	int err;

	if (r->in_off == 0)
		return reader_fail(r, -BACH_EDATA, "%s: empty file: not zstd",
				   bach_reader_file(r));
	if (!z->tab_done)
		return reader_fail(
			r, -BACH_EDATA,
			"%s: missing seek table: zstd file ends at byte offset %llu without it (%s)",
			bach_reader_file(r), (unsigned long long)r->in_off,
			reader_cut_why(r));
	err = zst_table_parse(z->tab, z->tab_len, z->tab_at, z->base, &ix, msg,
			      sizeof(msg));
	if (err == -ENOENT) {
		err = -BACH_EDATA;
		snprintf(
			msg, sizeof(msg),
			"missing seek table: the skippable frame at byte offset %llu ends without the seekable magic",
			(unsigned long long)z->tab_at);
	}
	if (!err && z->resumed) {
		/* read on after damage: the frames before the first damaged
		 * one, and those from the one reading went on at */
		uint64_t k = 0, k0;

		while (k < ix.n && ix.coff[k] < z->first_bad)
			k++;
		k0 = k;
		while (k < ix.n && ix.coff[k] < z->resume_at)
			k++;
		if (ix.coff[k0] != z->first_bad || ix.coff[k] != z->resume_at)
			err = reader_fail(
				r, -BACH_EDATA,
				"%s: seek table at byte offset %llu does not match the frames before it: it lists no frame at byte offset %llu",
				bach_reader_file(r),
				(unsigned long long)z->tab_at,
				(unsigned long long)(ix.coff[k0] != z->first_bad
							     ? z->first_bad
							     : z->resume_at));
		else if (ix.uoff[k0] != z->first_dsum - z->dbase ||
			 ix.uoff[ix.n] - ix.uoff[k] !=
				 z->dsum - z->resume_dsum) {
			/* the frames before the damage, or those after it */
			bool pre = ix.uoff[k0] != z->first_dsum - z->dbase;

			err = reader_fail(
				r, -BACH_EDATA,
				"%s: seek table at byte offset %llu does not match the frames before it: %llu bytes read %s byte offset %llu%s, the table lists %llu",
				bach_reader_file(r),
				(unsigned long long)z->tab_at,
				(unsigned long long)(pre ? z->first_dsum -
								     z->dbase
							 : z->dsum - z->resume_dsum),
				pre ? "before" : "from",
				(unsigned long long)(pre ? z->first_bad
							 : z->resume_at),
				pre ? "" : " on",
				(unsigned long long)(pre ? ix.uoff[k0]
							 : ix.uoff[ix.n] -
								     ix.uoff[k]));
		}
	} else if (!err && (ix.uoff[ix.n] != z->dsum - z->dbase ||
			    (!z->seeked && bach_get_le32(z->tab + z->tab_len -
							 9) != z->frames)))
		err = reader_fail(
			r, -BACH_EDATA,
			"%s: seek table at byte offset %llu does not match the frames before it: %llu frames of %llu bytes read, the table lists %llu of %llu",
			bach_reader_file(r), (unsigned long long)z->tab_at,
			(unsigned long long)z->frames,
			(unsigned long long)(z->dsum - z->dbase),
			(unsigned long long)bach_get_le32(z->tab + z->tab_len -
							  9),
			(unsigned long long)ix.uoff[ix.n]);
	else if (err)
		reader_fail(r, err, "%s: %s", bach_reader_file(r), msg);
	bach_index_free(&ix);
	return err;
}
