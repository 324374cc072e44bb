// SPDX-License-Identifier: MIT
/*
 * Reading on past a damaged gzip member or zstd frame (resync.h): the next
 * member that inflates whole, from the file's .gzi index or by looking for
 * a gzip member header after the damage, or the next zstd frame that
 * decompresses (or the seek table), from the seek table or by looking for
 * their magic; and the reader set there as a seek to a member sets it
 * (lib/io/reader_seek.c).
 */
#include <errno.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "bach/bytes.h"
#include "bach/index.h"
#include "lib/io/reader_state.h"
#include "lib/io/resync.h"
#include "lib/io/zst.h"

#define SCAN (1u << 16) /* bytes looked through at a time */

struct scratch {
	uint8_t in[BACH_BGZF_MAX_BLOCK], out[BACH_BGZF_MAX_BLOCK];
	uint8_t scan[SCAN];
	struct libdeflate_decompressor *ld;
	ZSTD_DCtx *zd;
};

/*
 * Whether a gzip member that inflates starts at byte off: a blocked one
 * whole, with its CRC; any other as far as 64 KiB of it go without an
 * error (it may be larger than that). 1 if so, else 0.
 */
static int member_at(int fd, uint64_t off, uint64_t size, struct scratch *s)
{
	ssize_t got = pread(fd, s->in, sizeof(s->in), (off_t)off);
	size_t in_used, out_used;
	z_stream zs = { 0 };
	int n, ret;

	(void)size;
	if (got < 20 || s->in[0] != 0x1f || s->in[1] != 0x8b || s->in[2] != 8)
		return 0;
	n = bach_bgzf_member_size(s->in, (size_t)got);
	if (n > 0)
		return n <= got &&
		       libdeflate_gzip_decompress_ex(
			       s->ld, s->in, (size_t)n, s->out, sizeof(s->out),
			       &in_used, &out_used) == LIBDEFLATE_SUCCESS &&
		       in_used == (size_t)n;
	if (n != -ENOENT || inflateInit2(&zs, 15 + 16) != Z_OK)
		return 0;
	zs.next_in = s->in;
	zs.avail_in = (uInt)got;
	do {
		zs.next_out = s->out;
		zs.avail_out = sizeof(s->out);
		ret = inflate(&zs, Z_NO_FLUSH);
	} while (ret == Z_OK && zs.avail_in);
	inflateEnd(&zs);
	return ret == Z_STREAM_END || ret == Z_OK || ret == Z_BUF_ERROR;
}

static bool gzip_magic(const uint8_t *q)
{
	return q[1] == 0x8b && q[2] == 8;
}

/*
 * What starts at byte off of a zstd file of size bytes: 1 a zstd frame
 * that decompresses, whole with its checksum when it is in view (else as
 * far as the bytes in view go); 2 a seek table (its skippable frame, ended
 * by the seekable magic, within the file); 0 neither.
 */
static int zst_at(int fd, uint64_t off, uint64_t size, struct scratch *s)
{
	ssize_t got = pread(fd, s->in, sizeof(s->in), (off_t)off);
	ZSTD_inBuffer ib = { s->in, got > 0 ? (size_t)got : 0, 0 };
	uint8_t foot[4];
	uint64_t end;

	if (got < 8)
		return 0;
	if (bach_get_le32(s->in) == ZST_SEEK_MAGIC) {
		end = off + 8 + bach_get_le32(s->in + 4);
		if (end > size || end < off + 8 + ZST_FOOTER ||
		    pread(fd, foot, 4, (off_t)(end - 4)) != 4)
			return 0;
		return bach_get_le32(foot) == ZST_SEEKABLE_MAGIC ? 2 : 0;
	}
	if (bach_get_le32(s->in) != ZST_FRAME_MAGIC)
		return 0;
	ZSTD_DCtx_reset(s->zd, ZSTD_reset_session_only);
	while (ib.pos < ib.size) {
		ZSTD_outBuffer ob = { s->out, sizeof(s->out), 0 };
		size_t ret = ZSTD_decompressStream(s->zd, &ob, &ib);

		if (ZSTD_isError(ret))
			return 0;
		if (!ret)
			return 1;
	}
	return 1;
}

static bool zst_magic(const uint8_t *q)
{
	return bach_get_le32(q) == ZST_FRAME_MAGIC ||
	       bach_get_le32(q) == ZST_SEEK_MAGIC;
}

/* What reading goes on at in a file of one kind. */
struct kind {
	uint8_t first, first2; /* the first byte of one, or of the other */
	size_t magic;	       /* bytes magic_at() looks at */
	bool (*magic_at)(const uint8_t *q);
	/* the kind of start at off (not 0), or 0: none there */
	int (*at)(int fd, uint64_t off, uint64_t size, struct scratch *s);
};

static const struct kind gzip_kind = { 0x1f, 0x1f, 3, gzip_magic, member_at };
static const struct kind zst_kind = { 0x28, 0x5e, 4, zst_magic, zst_at };

/*
 * The first place after byte from where k's at() finds a start (its
 * value in *what): of the places ix names, if any (an index that fits the
 * file), else by looking for the start's magic; size when none.
 */
static uint64_t next_start(int fd, uint64_t from, uint64_t size,
			   const struct bach_index *ix, const struct kind *k,
			   struct scratch *s, int *what)
{
	uint64_t pos = from + 1;

	for (uint64_t i = 0; ix && i <= ix->n; i++)
		if (ix->coff[i] > from &&
		    (*what = k->at(fd, ix->coff[i], size, s)))
			return ix->coff[i];
	while (pos < size) {
		ssize_t got = pread(fd, s->scan, sizeof(s->scan), (off_t)pos);
		const uint8_t *q = s->scan,
			      *end = s->scan + (got > 0 ? got : 0);

		if (got <= 0)
			break;
		for (; q < end; q++)
			/* the magic in view, or straddling the end */
			if ((*q == k->first || *q == k->first2) &&
			    ((size_t)(end - q) < k->magic || k->magic_at(q)) &&
			    (*what = k->at(fd, pos + (uint64_t)(q - s->scan),
					   size, s)))
				return pos + (uint64_t)(q - s->scan);
		pos += (uint64_t)got;
	}
	return size;
}

int reader_resync(struct bach_reader *r, uint64_t *from, uint64_t *to)
{
	uint64_t members = r->gz.members, c;
	bool blocked = r->gz.blocked, zst = r->kind == BACH_FILE_ZSTD, have_ix;
	struct bach_index ix = { 0 };
	int what = 1;
	struct scratch *s;
	char msg[256];

	if (r->err != -BACH_EDATA || !r->open || !r->own_fd || !r->sized ||
	    !(zst ? r->zs.bad : r->kind == BACH_FILE_GZIP && r->gz.in_member))
		return r->err;
	s = calloc(1, sizeof(*s));
	if (!s || !(zst ? (s->zd = ZSTD_createDCtx()) != NULL
			: (s->ld = libdeflate_alloc_decompressor()) != NULL)) {
		free(s);
		return r->err;
	}
	*from = zst ? r->zs.frame_start : r->gz.member_start;
	/* the index names the starts, if it fits the file */
	have_ix =
		zst ? !zst_table_load(r->fd, r->size, &ix, msg, sizeof(msg))
		    : !bach_index_load(r->paths[r->cur], &ix, msg, sizeof(msg));
	c = next_start(r->fd, *from, r->size, have_ix ? &ix : NULL,
		       zst ? &zst_kind : &gzip_kind, s, &what);
	bach_index_free(&ix);
	if (s->ld)
		libdeflate_free_decompressor(s->ld);
	ZSTD_freeDCtx(s->zd);
	free(s);
	*to = c;
	r->err = r->deferred = 0;
	r->msg[0] = 0;
	r->carry = r->tail = 0;
	r->skip_acc = 0;
	if (c >= r->size || lseek(r->fd, (off_t)c, SEEK_SET) < 0) {
		/* nothing after it: the file is done, as at its end */
		*to = r->size;
		reader_close_file(r);
		r->cur++; /* file_recs stays until the next opens */
		return 0;
	}
	if (zst) {
		reader_zst_resume(r, *from, c);
	} else {
		gzin_restart(&r->gz);
		r->gz.members = members;
		r->gz.blocked = blocked;
	}
	r->in_off = c;
	r->out_off = r->file_recs * BACH_REC_SIZE;
	r->file_eof = false;
	return what;
}
