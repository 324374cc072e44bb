// SPDX-License-Identifier: MIT
/*
 * Blocked gzip members (docs/design.md section 4, after htslib's BGZF): each
 * member holds at most 64 KiB of whole records, carries its own total size in a
 * "BC" extra subfield, and falls back to a stored deflate block when
 * compression does not shrink the data. Whole blocks are compressed by
 * the record encoder (lib/io/recdeflate.h, the default), libdeflate (any
 * level asked for) or zlib (for comparison in bench/). The same deflater
 * makes .byu.zst's zstd frames (BACH_DEFLATE_ZSTD: lib/io/zst.h), so the
 * writers' compressing threads (lib/io/zpool.c) serve both.
 */
#include <errno.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "bach/bytes.h"
#include "bach/trace.h"
#include "lib/io/recdeflate.h"
#include "lib/io/zpool.h"

const uint8_t bach_bgzf_eof[BACH_BGZF_EOF_SIZE] = {
	0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C',
	2,    0,    0x1b, 0,	3, 0, 0, 0, 0, 0,    0, 0, 0,	0,
};

#define GZ_FEXTRA 0x04
#define GZ_FIXED  12 /* ID1 ID2 CM FLG MTIME(4) XFL OS XLEN(2) */

int bach_bgzf_member_size(const uint8_t *p, size_t len)
{
	static const uint8_t gzip_deflate[3] = { 0x1f, 0x8b, 8 };
	size_t xlen, i;

	if (memcmp(p, gzip_deflate, len < 3 ? len : 3))
		return -EILSEQ;
	if (len < GZ_FIXED)
		return -EAGAIN;
	if (!(p[3] & GZ_FEXTRA))
		return -ENOENT;
	xlen = bach_get_le16(p + 10);
	if (len < GZ_FIXED + xlen)
		return -EAGAIN;
	p += GZ_FIXED;
	for (i = 0; i + 4 <= xlen; i += 4 + bach_get_le16(p + i + 2)) {
		if (p[i] == 'B' && p[i + 1] == 'C' &&
		    bach_get_le16(p + i + 2) == 2)
			return i + 6 <= xlen ? bach_get_le16(p + i + 4) + 1
					     : -ENOENT;
	}
	return -ENOENT;
}

struct bach_deflater {
	enum bach_deflate_backend backend;
	struct libdeflate_compressor *ld;
	struct bach_recdeflate *rec;
	z_stream zs;
	bool zinit;
	ZSTD_CCtx *zc;
};

struct bach_deflater *bach_deflater_new(enum bach_deflate_backend backend,
					int level)
{
	struct bach_deflater *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (backend == BACH_DEFLATE_AUTO)
		backend = level ? BACH_DEFLATE_LIBDEFLATE : BACH_DEFLATE_RECORD;
	d->backend = backend;
	if (backend == BACH_DEFLATE_RECORD) {
		d->rec = bach_recdeflate_new(
			level ? level : BACH_RECDEFLATE_DEFAULT_LEVEL);
		if (!d->rec)
			goto out_free;
		return d;
	}
	if (backend == BACH_DEFLATE_ZSTD) {
		/*
		 * one frame per block or frame job: its size and checksum in
		 * it; an 8 MiB window (zstd shrinks it to a smaller frame), so
		 * that a frame of 8 MiB finds repeats across all of it
		 */
		d->zc = ZSTD_createCCtx();
		if (!d->zc ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(
			    d->zc, ZSTD_c_compressionLevel,
			    level ? level : ZSTD_CLEVEL_DEFAULT)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(
			    d->zc, ZSTD_c_checksumFlag, 1)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(
			    d->zc, ZSTD_c_contentSizeFlag, 1)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(
			    d->zc, ZSTD_c_windowLog, BACH_ZSTD_WINDOW_LOG))) {
			ZSTD_freeCCtx(d->zc);
			goto out_free;
		}
		return d;
	}
	if (backend == BACH_DEFLATE_LIBDEFLATE) {
		d->ld = libdeflate_alloc_compressor(level);
		if (!d->ld)
			goto out_free;
		return d;
	}
	if (deflateInit2(&d->zs, level > 9 ? 9 : level, Z_DEFLATED, -15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		goto out_free;
	d->zinit = true;
	return d;
out_free:
	free(d);
	return NULL;
}

void bach_deflater_free(struct bach_deflater *d)
{
	if (!d)
		return;
	if (d->ld)
		libdeflate_free_compressor(d->ld);
	bach_recdeflate_free(d->rec);
	ZSTD_freeCCtx(d->zc);
	if (d->zinit)
		deflateEnd(&d->zs);
	free(d);
}

/* raw deflate into dst[0..cap); 0 when it does not fit */
static size_t deflate_raw(struct bach_deflater *d, uint8_t *dst, size_t cap,
			  const uint8_t *src, size_t len)
{
	if (d->rec)
		return bach_recdeflate(d->rec, src, len, dst, cap);
	if (d->ld)
		return libdeflate_deflate_compress(d->ld, src, len, dst, cap);
	deflateReset(&d->zs);
	d->zs.next_in = (Bytef *)src;
	d->zs.avail_in = (uInt)len;
	d->zs.next_out = dst;
	d->zs.avail_out = (uInt)cap;
	if (deflate(&d->zs, Z_FINISH) != Z_STREAM_END)
		return 0;
	return cap - d->zs.avail_out;
}

size_t bach_zstd_frame(struct bach_deflater *d, uint8_t *dst, size_t cap,
		       const struct bach_piece *in, size_t n)
{
	ZSTD_outBuffer ob = { dst, cap, 0 };
	unsigned long long total = 0;
	bool contiguous = true;

	if (!d->zc)
		return 0;
	for (size_t i = 0; i < n; i++) {
		total += in[i].len;
		if (i && in[i - 1].p + in[i - 1].len != in[i].p)
			contiguous = false;
	}
	/* pieces one after the other in memory (a ring's blocks): one call,
	 * with no copy into zstd's window */
	if (contiguous && n) {
		size_t c =
			ZSTD_compress2(d->zc, dst, cap, in[0].p, (size_t)total);

		return ZSTD_isError(c) ? 0 : c;
	}
	/* the content size goes in the frame's header, as in one call */
	if (ZSTD_isError(ZSTD_CCtx_reset(d->zc, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(d->zc, total)))
		return 0;
	for (size_t i = 0; i < n; i++) {
		ZSTD_inBuffer ib = { in[i].p, in[i].len, 0 };
		ZSTD_EndDirective op =
			i + 1 == n ? ZSTD_e_end : ZSTD_e_continue;
		size_t ret;

		do {
			ret = ZSTD_compressStream2(d->zc, &ob, &ib, op);
			if (ZSTD_isError(ret) || (ret && ob.pos == ob.size))
				return 0;
		} while (op == ZSTD_e_end ? ret != 0 : ib.pos < ib.size);
	}
	return ob.pos;
}

size_t bach_bgzf_block(struct bach_deflater *d, uint8_t *dst,
		       const uint8_t *src, size_t len)
{
	uint8_t *body = dst + BACH_BGZF_HDR;
	size_t clen;
	uint32_t crc;
	size_t total;

	if (d->zc) {
		/*
		 * Raw blocks when zstd does not shrink the data: at most a
		 * 14-byte header, 3 a block and the 4-byte checksum more
		 * than len, within BACH_BGZF_MAX_BLOCK.
		 */
		total = ZSTD_compress2(d->zc, dst, BACH_BGZF_MAX_BLOCK, src,
				       len);
		return ZSTD_isError(total) ? 0 : total;
	}
	/* a deflate result no smaller than the input is stored instead */
	clen = len ? deflate_raw(d, body, len, src, len) : 0;
	if (clen == 0) {
		body[0] = 1; /* BFINAL, stored */
		bach_put_le16(body + 1, (uint16_t)len);
		bach_put_le16(body + 3, (uint16_t)~len);
		memcpy(body + 5, src, len);
		clen = len + 5;
	}
	if (d->backend == BACH_DEFLATE_ZLIB)
		crc = (uint32_t)crc32(0, src, (uInt)len);
	else
		crc = libdeflate_crc32(0, src, len);
	total = BACH_BGZF_HDR + clen + BACH_BGZF_TRAILER;

	memcpy(dst, bach_bgzf_eof, 16); /* same fixed header up to SLEN */
	bach_put_le16(dst + 16, (uint16_t)(total - 1));
	bach_put_le32(body + clen, crc);
	bach_put_le32(body + clen + 4, (uint32_t)len);
	return total;
}
