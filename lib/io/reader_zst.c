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
#include <unistd.h>
#include <zstd.h>

#include "bach/bytes.h"
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
 * Frames decompressed two at a time: when several whole frames are at hand
 * and fit the block, a second thread takes them one by one, as the
 * reader's thread does, from the same list (a lock taken per 64 KiB frame,
 * never per record). The reader's thread never waits for a frame the
 * helper has not begun: on a machine busy with other work, where the
 * helper may not run for a while, it decompresses them all itself (waiting
 * each block for a thread that was not scheduled cost more than it gave).
 * Started with the first such block, on a machine of more than one CPU;
 * the frames' results are taken in file order, so damage is reported as a
 * read through one thread reports it.
 */
#define BATCH_MAX 8

struct zst_job {
	const uint8_t *src;
	size_t c, fcs; /* compressed size, content size */
	uint8_t *dst;
	size_t got; /* bytes made, or a zstd error code */
};

struct zst_helper {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;   /* jobs to take, or quit */
	pthread_cond_t done; /* the last job taken is finished */
	ZSTD_DCtx *d;
	/* under mu: jobs[next, njobs) are not taken yet, finished of them
	 * are */
	struct zst_job *jobs;
	size_t njobs, next, finished;
	bool quit;
};

static void run_job(ZSTD_DCtx *d, struct zst_job *j)
{
	j->got = ZSTD_decompressDCtx(d, j->dst, j->fcs, j->src, j->c);
}

/* Take and decompress the jobs left, with mu held (and held again on
 * return); d is the taking thread's. */
static void take_jobs(struct zst_helper *h, ZSTD_DCtx *d)
{
	while (h->next < h->njobs) {
		struct zst_job *j = &h->jobs[h->next++];

		pthread_mutex_unlock(&h->mu);
		run_job(d, j);
		pthread_mutex_lock(&h->mu);
		if (++h->finished == h->njobs)
			pthread_cond_signal(&h->done);
	}
}

static void *helper_main(void *arg)
{
	struct zst_helper *h = arg;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (h->next >= h->njobs && !h->quit)
			pthread_cond_wait(&h->cv, &h->mu);
		if (h->quit)
			break;
		take_jobs(h, h->d);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static void helper_stop(struct zst_helper *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->quit = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->tid, NULL);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	pthread_cond_destroy(&h->done);
	ZSTD_freeDCtx(h->d);
	free(h);
}

/* The helper thread, started once; NULL (and never tried again) when
 * there is one CPU, or no memory or thread for it. */
static struct zst_helper *helper(struct zst_in *z)
{
	struct zst_helper *h;

	if (z->helper || z->no_helper)
		return z->helper;
	z->no_helper = true;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || !(h = calloc(1, sizeof(*h))))
		return NULL;
	h->d = ZSTD_createDCtx();
	if (!h->d || pthread_mutex_init(&h->mu, NULL)) {
		ZSTD_freeDCtx(h->d);
		free(h);
		return NULL;
	}
	pthread_cond_init(&h->cv, NULL);
	pthread_cond_init(&h->done, NULL);
	if (pthread_create(&h->tid, NULL, helper_main, h)) {
		pthread_mutex_destroy(&h->mu);
		pthread_cond_destroy(&h->cv);
		pthread_cond_destroy(&h->done);
		ZSTD_freeDCtx(h->d);
		free(h);
		return NULL;
	}
	z->no_helper = false;
	return z->helper = h;
}

void reader_zst_restart(struct bach_reader *r)
{
	struct ZSTD_DCtx_s *dctx = r->zs.dctx;
	struct zst_helper *h = r->zs.helper;
	bool no_helper = r->zs.no_helper;

	free(r->zs.tab);
	memset(&r->zs, 0, sizeof(r->zs));
	r->zs.dctx = dctx;
	r->zs.helper = h;
	r->zs.no_helper = no_helper;
}

void reader_zst_end(struct bach_reader *r)
{
	reader_zst_restart(r);
	helper_stop(r->zs.helper);
	r->zs.helper = NULL;
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
		n = reader_gz_read(r, r->in + z->zlen, IN_CAP - z->zlen);
		if (n < 0)
			return (int)n;
		z->zlen += (size_t)n;
	}
	return 0;
}

bool reader_zst_done(const struct bach_reader *r)
{
	return !r->zs.in_frame && !r->zs.skip_left &&
	       r->zs.zpos == r->zs.zlen && r->file_eof;
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

/*
 * The whole zstd frames at hand from in[zpos] that fit room bytes at dst,
 * at most BATCH_MAX, into jobs; how many.
 */
static size_t frames_at_hand(struct bach_reader *r, uint8_t *dst, size_t room,
			     struct zst_job *jobs)
{
	struct zst_in *z = &r->zs;
	size_t pos = z->zpos, n = 0, out = 0;

	while (n < BATCH_MAX && z->zlen - pos >= ZST_HEADER_MAX &&
	       bach_get_le32(r->in + pos) == ZST_FRAME_MAGIC) {
		const uint8_t *p = r->in + pos;
		unsigned long long fcs =
			ZSTD_getFrameContentSize(p, z->zlen - pos);
		size_t c;

		if (fcs >= ZSTD_CONTENTSIZE_ERROR || fcs > room - out)
			break;
		c = ZSTD_findFrameCompressedSize(p, z->zlen - pos);
		if (ZSTD_isError(c) || c > z->zlen - pos)
			break;
		jobs[n++] = (struct zst_job){ p, c, (size_t)fcs, dst + out, 0 };
		out += (size_t)fcs;
		pos += c;
	}
	return n;
}

/*
 * Two or more whole frames at hand: decompressed by this thread and the
 * helper, each taking the next one left, into dst. Returns the frames done (0:
 * not two at hand, nothing done), their bytes added to *made; or -1 at a
 * damaged frame, the frames before it done and r->msg naming it.
 */
static int batch(struct bach_reader *r, uint8_t *dst, size_t room, size_t *made)
{
	struct zst_in *z = &r->zs;
	struct zst_job jobs[BATCH_MAX];
	struct zst_helper *h;
	size_t n;

	if (want(r, BATCH_MAX * WHOLE_IN / 2) < 0)
		return -1;
	n = frames_at_hand(r, dst, room, jobs);
	if (n < 2 || !(h = helper(z)))
		return 0;
	pthread_mutex_lock(&h->mu);
	h->jobs = jobs;
	h->njobs = n;
	h->next = h->finished = 0;
	pthread_cond_signal(&h->cv);
	take_jobs(h, z->dctx);
	/* only for a frame the helper is decompressing */
	while (h->finished < h->njobs)
		pthread_cond_wait(&h->done, &h->mu);
	h->jobs = NULL;
	h->njobs = h->next = 0;
	pthread_mutex_unlock(&h->mu);
	for (size_t i = 0; i < n; i++) {
		z->frame_start = zat(r);
		if (ZSTD_isError(jobs[i].got)) {
			z->bad = true;
			reader_fail(
				r, -BACH_EDATA,
				"%s: bad zstd frame at byte offset %llu: %s",
				bach_reader_file(r),
				(unsigned long long)z->frame_start,
				ZSTD_getErrorName(jobs[i].got));
			return -1;
		}
		z->zpos += jobs[i].c;
		z->frames++;
		z->csum = zat(r);
		z->dsum += jobs[i].got;
		*made += jobs[i].got;
	}
	return (int)n;
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
		if (!z->in_frame && !z->tab_done) {
			st = batch(r, dst + made, room - made, &made);
			if (st < 0)
				return damaged(r, made);
			good = made;
			if (st > 0)
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
