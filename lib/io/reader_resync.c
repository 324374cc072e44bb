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
#include <string.h>
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
 * error (it may be larger than that).
 */
static bool member_at(int fd, uint64_t off, struct scratch *s)
{
	ssize_t got = pread(fd, s->in, sizeof(s->in), (off_t)off);
	size_t in_used, out_used;
	z_stream zs = { 0 };
	int n, ret;

	if (got < 20 || s->in[0] != 0x1f || s->in[1] != 0x8b || s->in[2] != 8)
		return false;
	n = bach_bgzf_member_size(s->in, (size_t)got);
	if (n > 0)
		return n <= got &&
		       libdeflate_gzip_decompress_ex(
			       s->ld, s->in, (size_t)n, s->out, sizeof(s->out),
			       &in_used, &out_used) == LIBDEFLATE_SUCCESS &&
		       in_used == (size_t)n;
	if (n != -ENOENT || inflateInit2(&zs, 15 + 16) != Z_OK)
		return false;
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

/* The first member after byte from that inflates, or size when none. */
static uint64_t next_member(const char *path, int fd, uint64_t from,
			    uint64_t size, struct scratch *s)
{
	struct bach_index ix;
	char msg[256];
	uint64_t pos = from + 1;

	/* the index names the members' starts, if it fits the file */
	if (!bach_index_load(path, &ix, msg, sizeof(msg))) {
		uint64_t c = size;

		for (uint64_t i = 0; i <= ix.n && c == size; i++)
			if (ix.coff[i] > from && member_at(fd, ix.coff[i], s))
				c = ix.coff[i];
		bach_index_free(&ix);
		if (c < size)
			return c;
	}
	while (pos < size) {
		ssize_t got = pread(fd, s->scan, sizeof(s->scan), (off_t)pos);
		const uint8_t *q = s->scan,
			      *end = s->scan + (got > 0 ? got : 0);

		if (got <= 0)
			break;
		while ((q = memchr(q, 0x1f, (size_t)(end - q)))) {
			uint64_t c = pos + (uint64_t)(q - s->scan);

			/* the magic in view, or straddling the end */
			if ((end - q < 3 || (q[1] == 0x8b && q[2] == 8)) &&
			    member_at(fd, c, s))
				return c;
			q++;
		}
		pos += (uint64_t)got;
	}
	return size;
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
		return end <= size && end >= off + 8 + ZST_FOOTER &&
				       pread(fd, foot, 4, (off_t)(end - 4)) ==
					       4 &&
				       bach_get_le32(foot) == ZST_SEEKABLE_MAGIC
			       ? 2
			       : 0;
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

/* The first zstd frame or seek table after byte from, its kind in
 * *what (zst_at()); size when none. */
static uint64_t next_frame(int fd, uint64_t from, uint64_t size,
			   struct scratch *s, int *what)
{
	struct bach_index ix = { 0 };
	char msg[256];
	uint64_t pos = from + 1, c = size;

	/* the seek table names the frames' starts, if it fits the file */
	if (!zst_table_load(fd, size, &ix, msg, sizeof(msg)))
		for (uint64_t i = 0; i <= ix.n && c == size; i++)
			if (ix.coff[i] > from &&
			    (*what = zst_at(fd, ix.coff[i], size, s)))
				c = ix.coff[i];
	bach_index_free(&ix);
	if (c < size)
		return c;
	while (pos < size) {
		ssize_t got = pread(fd, s->scan, sizeof(s->scan), (off_t)pos);
		const uint8_t *q = s->scan,
			      *end = s->scan + (got > 0 ? got : 0);

		if (got <= 0)
			break;
		for (; q < end; q++) {
			/* the magic in view, or straddling the end */
			if ((*q == 0x28 || *q == 0x5e) &&
			    (end - q < 4 ||
			     bach_get_le32(q) == ZST_FRAME_MAGIC ||
			     bach_get_le32(q) == ZST_SEEK_MAGIC) &&
			    (*what = zst_at(fd, pos + (uint64_t)(q - s->scan),
					    size, s)))
				return pos + (uint64_t)(q - s->scan);
		}
		pos += (uint64_t)got;
	}
	return size;
}

int reader_resync(struct bach_reader *r, uint64_t *from, uint64_t *to)
{
	uint64_t members = r->gz.members, c;
	bool blocked = r->gz.blocked, zst = r->kind == BACH_FILE_ZSTD;
	int what = 1;
	struct scratch *s;

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
	c = zst ? next_frame(r->fd, *from, r->size, s, &what)
		: next_member(r->paths[r->cur], r->fd, *from, r->size, s);
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
