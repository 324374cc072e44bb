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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "bach/bytes.h"
#include "lib/io/reader_state.h"
#include "lib/io/zst.h"

/* The longest seek table collected: 64 MiB, 5.6 M frames, 340 GiB. */
#define TAB_MAX (64ull << 20)
/* Compressed bytes at hand for a frame decompressed in one call. */
#define WHOLE_IN (1u << 17)

void reader_zst_restart(struct bach_reader *r)
{
	struct ZSTD_DCtx_s *dctx = r->zs.dctx;

	free(r->zs.tab);
	memset(&r->zs, 0, sizeof(r->zs));
	r->zs.dctx = dctx;
}

void reader_zst_end(struct bach_reader *r)
{
	reader_zst_restart(r);
	ZSTD_freeDCtx(r->zs.dctx);
	r->zs.dctx = NULL;
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
	return 0;
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
	/*
	 * Frames after a seek table: another file's, concatenated (cat
	 * a.byu.zst b.byu.zst), whose frames its own table lists
	 */
	if (z->tab_done) {
		if ((err = reader_zst_check_end(r)) < 0)
			return err;
		free(z->tab);
		z->tab = NULL;
		z->tab_done = false;
		z->base = z->csum;
		z->dbase = z->dsum;
		z->frames = 0;
	}
	if ((magic & ~0xFu) == ZST_SKIP_MAGIC)
		return skippable(r, magic);
	fcs = ZSTD_getFrameContentSize(p, avail);
	if (made && fcs < ZSTD_CONTENTSIZE_ERROR && fcs > left)
		return 1;
	ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
	z->in_frame = true;
	if (fcs <= left) {
		/* a frame that fits goes in one call, with no copy through
		 * zstd's window (bach's are 64 KiB of records, well within
		 * WHOLE_IN compressed) */
		size_t c;

		if ((err = want(r, WHOLE_IN)) < 0)
			return err;
		c = ZSTD_findFrameCompressedSize(r->in + z->zpos,
						 z->zlen - z->zpos);
		if (!ZSTD_isError(c) && c <= z->zlen - z->zpos)
			z->whole = c;
	}
	return 0;
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
			if (z->whole) {
				size_t got = ZSTD_decompressDCtx(
					z->dctx, dst + made, room - made,
					r->in + z->zpos, z->whole);

				if (ZSTD_isError(got)) {
					z->whole = 0;
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
	if (!err && (ix.uoff[ix.n] != z->dsum - z->dbase ||
		     (!z->seeked &&
		      bach_get_le32(z->tab + z->tab_len - 9) != z->frames)))
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
