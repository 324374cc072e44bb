// SPDX-License-Identifier: MIT
/*
 * Reading on past a damaged gzip member (resync.h): the next member that
 * inflates whole, from the file's .gzi index or by looking for a gzip
 * member header after the damage, and the reader set there as a seek to a
 * member sets it (lib/io/reader_seek.c).
 */
#include <errno.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "bach/index.h"
#include "lib/io/reader_state.h"
#include "lib/io/resync.h"

#define SCAN (1u << 16) /* bytes looked through at a time */

struct scratch {
	uint8_t in[BACH_BGZF_MAX_BLOCK], out[BACH_BGZF_MAX_BLOCK];
	uint8_t scan[SCAN];
	struct libdeflate_decompressor *ld;
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

int reader_resync(struct bach_reader *r, uint64_t *from, uint64_t *to)
{
	uint64_t members = r->gz.members, c;
	bool blocked = r->gz.blocked;
	struct scratch *s;

	if (r->err != -BACH_EDATA || !r->open || r->kind != BACH_FILE_GZIP ||
	    !r->own_fd || !r->sized || !r->gz.in_member)
		return r->err;
	s = malloc(sizeof(*s));
	if (!s || !(s->ld = libdeflate_alloc_decompressor())) {
		free(s);
		return r->err;
	}
	*from = r->gz.member_start;
	c = next_member(r->paths[r->cur], r->fd, *from, r->size, s);
	libdeflate_free_decompressor(s->ld);
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
	gzin_restart(&r->gz);
	r->gz.members = members;
	r->gz.blocked = blocked;
	r->in_off = c;
	r->out_off = r->file_recs * BACH_REC_SIZE;
	r->file_eof = false;
	return 1;
}
