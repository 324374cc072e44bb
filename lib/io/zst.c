// SPDX-License-Identifier: MIT
/*
 * The seek table of a .byu.zst file (lib/io/zst.h, docs/formats.md section
 * 3.3): written by the trace writer after the last frame, read by seeking
 * (lib/io/reader_seek.c) and checked at the end of a read through
 * (lib/io/reader_read.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "bach/bytes.h"
#include "bach/trace.h"
#include "lib/io/zst.h"

void zst_table_put(uint8_t *dst, const struct zst_entry *e, uint64_t n)
{
	bach_put_le32(dst, ZST_SEEK_MAGIC);
	bach_put_le32(dst + 4, (uint32_t)(zst_table_size(n) - 8));
	dst += 8;
	for (uint64_t i = 0; i < n; i++, dst += ZST_ENTRY) {
		bach_put_le32(dst, e[i].csize);
		bach_put_le32(dst + 4, e[i].dsize);
		bach_put_le32(dst + 8, e[i].sum);
	}
	bach_put_le32(dst, (uint32_t)n);
	dst[4] = ZST_CHECKSUM_FLAG;
	bach_put_le32(dst + 5, ZST_SEEKABLE_MAGIC);
}

int zst_table_add(struct zst_table *t, const uint8_t *frame, size_t len)
{
	if (len < 8)
		return -EINVAL;
	if (t->n == t->cap) {
		uint64_t ncap = t->cap ? t->cap * 2 : 1024;
		struct zst_entry *e;

		if (t->n >= ZST_MAX_FRAMES)
			return -E2BIG;
		e = realloc(t->e, ncap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		t->e = e;
		t->cap = ncap;
	}
	t->e[t->n++] = (struct zst_entry){
		(uint32_t)len,
		(uint32_t)ZSTD_getFrameContentSize(frame, len),
		bach_get_le32(frame + len - 4),
	};
	return 0;
}

uint8_t *zst_table_bytes(const struct zst_table *t, size_t *len)
{
	uint8_t *b = malloc(zst_table_size(t->n));

	*len = zst_table_size(t->n);
	if (b)
		zst_table_put(b, t->e, t->n);
	return b;
}

void zst_table_free(struct zst_table *t)
{
	free(t->e);
	t->e = NULL;
	t->n = t->cap = 0;
}

__attribute__((format(printf, 4, 5))) static int
zfail(char *msg, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return err;
}

int zst_table_parse(const uint8_t *tab, uint64_t tlen, uint64_t at,
		    uint64_t base, struct bach_index *ix, char *msg, size_t len)
{
	const uint8_t *foot = tab + tlen - ZST_FOOTER;
	uint64_t n, esize, coff = base, uoff = 0, cap = 0;
	int err;

	ix->n = 0;
	if (tlen < 8 + ZST_FOOTER || bach_get_le32(tab) != ZST_SEEK_MAGIC ||
	    bach_get_le32(foot + 5) != ZST_SEEKABLE_MAGIC)
		return -ENOENT;
	n = bach_get_le32(foot);
	esize = foot[4] & ZST_CHECKSUM_FLAG ? 12 : 8;
	if (foot[4] & 0x7c)
		return zfail(
			msg, len, -BACH_EDATA,
			"seek table at byte offset %llu: reserved bits set in its descriptor (0x%02x)",
			(unsigned long long)at, foot[4]);
	if (n > ZST_MAX_FRAMES || bach_get_le32(tab + 4) != tlen - 8 ||
	    8 + n * esize + ZST_FOOTER != tlen)
		return zfail(
			msg, len, -BACH_EDATA,
			"seek table at byte offset %llu: %llu frames do not fit its %llu bytes",
			(unsigned long long)at, (unsigned long long)n,
			(unsigned long long)tlen);
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *e = tab + 8 + i * esize;
		uint32_t c = bach_get_le32(e), d = bach_get_le32(e + 4);

		if (d && (err = bach_index_grow(ix, &cap)) < 0)
			return err;
		if (d) {
			ix->coff[ix->n] = coff;
			ix->uoff[ix->n] = uoff;
			ix->n++;
		}
		coff += c;
		uoff += d;
	}
	if (coff != at)
		return zfail(
			msg, len, -BACH_EDATA,
			"seek table at byte offset %llu: its frames end at byte offset %llu, not at the table",
			(unsigned long long)at, (unsigned long long)coff);
	if ((err = bach_index_grow(ix, &cap)) < 0)
		return err;
	ix->coff[ix->n] = at;
	ix->uoff[ix->n] = uoff;
	return 0;
}

int zst_table_load(int fd, uint64_t size, struct bach_index *ix, char *msg,
		   size_t len)
{
	uint8_t foot[ZST_FOOTER];
	uint64_t n, tlen;
	uint8_t *tab;
	int err;

	if (size < 8 + ZST_FOOTER ||
	    pread(fd, foot, ZST_FOOTER, (off_t)(size - ZST_FOOTER)) !=
		    ZST_FOOTER ||
	    bach_get_le32(foot + 5) != ZST_SEEKABLE_MAGIC)
		return -ENOENT;
	n = bach_get_le32(foot);
	tlen = 8 + n * (foot[4] & ZST_CHECKSUM_FLAG ? 12 : 8) + ZST_FOOTER;
	if (n > ZST_MAX_FRAMES || tlen > size)
		return zfail(
			msg, len, -BACH_EDATA,
			"seek table at the end: %llu frames do not fit in the file's %llu bytes",
			(unsigned long long)n, (unsigned long long)size);
	tab = malloc(tlen);
	if (!tab)
		return -ENOMEM;
	if (pread(fd, tab, tlen, (off_t)(size - tlen)) != (ssize_t)tlen) {
		free(tab);
		return -EIO;
	}
	err = zst_table_parse(tab, tlen, size - tlen, 0, ix, msg, len);
	free(tab);
	return err;
}

int zst_table_load_path(const char *path, struct bach_index *ix, char *msg,
			size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int err;

	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) < 0
		      ? -errno
		      : zst_table_load(fd, (uint64_t)st.st_size, ix, msg, len);
	close(fd);
	if (err)
		bach_index_free(ix);
	return err;
}

int zst_table_check(int fd, const struct bach_index *ix, char *msg, size_t len)
{
	uint8_t h[ZST_HEADER_MAX];

	for (uint64_t i = 0; i < ix->n; i++) {
		uint64_t room = ix->coff[i + 1] - ix->coff[i];
		uint64_t want = ix->uoff[i + 1] - ix->uoff[i];
		ssize_t got = pread(fd, h, room < sizeof(h) ? room : sizeof(h),
				    (off_t)ix->coff[i]);
		unsigned long long has;

		if (got < 0)
			return -errno;
		/* RFC 8878 3.1.1: a frame starts with its magic, and its
		 * header (up to 18 bytes) may carry the content size */
		if (got < 4 || bach_get_le32(h) != ZST_FRAME_MAGIC)
			return zfail(
				msg, len, -BACH_EDATA,
				"seek table entry %llu: no zstd frame at byte offset %llu, where the table puts one",
				(unsigned long long)i,
				(unsigned long long)ix->coff[i]);
		has = ZSTD_getFrameContentSize(h, (size_t)got);
		if (has != ZSTD_CONTENTSIZE_UNKNOWN && has != want)
			return zfail(
				msg, len, -BACH_EDATA,
				"seek table entry %llu: the frame at byte offset %llu holds %llu bytes, the table says %llu",
				(unsigned long long)i,
				(unsigned long long)ix->coff[i], has,
				(unsigned long long)want);
	}
	return 0;
}
