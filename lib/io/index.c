// SPDX-License-Identifier: MIT
/*
 * Member indexes of blocked gzip files (bach/index.h), in htslib's .gzi
 * layout. Building one reads the file once, sequentially, and looks only at
 * each member's header (its BC size) and trailer (its ISIZE).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/bytes.h"
#include "bach/index.h"
#include "bach/trace.h"
#include "lib/io/found.h"
#include "lib/io/outfile.h"

#define SCAN_BUF (1u << 20)
/* no index of a real file comes near this; a bigger count is garbage */
#define MAX_ENTRIES (1ull << 36)

__attribute__((format(printf, 4, 5))) static int
ifail(char *msg, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (len) {
		va_start(ap, fmt);
		vsnprintf(msg, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

void bach_index_free(struct bach_index *ix)
{
	free(ix->coff);
	free(ix->uoff);
	ix->coff = ix->uoff = NULL;
	ix->n = 0;
}

int bach_index_grow(struct bach_index *ix, uint64_t *cap)
{
	uint64_t *c, *u, ncap;

	if (ix->n + 1 < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 1024;
	c = realloc(ix->coff, ncap * sizeof(*c));
	if (!c)
		return -ENOMEM;
	ix->coff = c;
	u = realloc(ix->uoff, ncap * sizeof(*u));
	if (!u)
		return -ENOMEM;
	ix->uoff = u;
	*cap = ncap;
	return 0;
}

static ssize_t pread_full(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int bach_index_build(const char *path, struct bach_index *ix, char *msg,
		     size_t len)
{
	uint8_t *buf = malloc(SCAN_BUF);
	uint64_t cap = 0, at = 0, uoff = 0,
		 base = 0; /* base: file offset of buf[0] */
	size_t have = 0, pos = 0;
	bool eof = false, ended = false;
	int fd, err = 0;

	memset(ix, 0, sizeof(*ix));
	if (!buf)
		return -ENOMEM;
	/* only a regular file has members at offsets (a FIFO would block) */
	fd = bach_open_found(AT_FDCWD, path, NULL, false, NULL, msg, len);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (;;) {
		int bsize;
		uint32_t isize;

		/* a whole member (at most 64 KiB) at hand, or the file's end */
		if (have - pos < BACH_BGZF_MAX_BLOCK && !eof) {
			ssize_t n;

			memmove(buf, buf + pos, have - pos);
			base += pos;
			have -= pos;
			pos = 0;
			n = pread_full(fd, buf + have, SCAN_BUF - have,
				       base + have);
			if (n < 0) {
				err = ifail(
					msg, len, (int)n,
					"%s: read error at byte offset %llu: %s",
					path, (unsigned long long)(base + have),
					strerror((int)-n));
				goto out;
			}
			have += (size_t)n;
			eof = have < SCAN_BUF;
		}
		if (pos == have)
			break;
		at = base + pos;
		bsize = bach_bgzf_member_size(buf + pos, have - pos);
		if (bsize == -ENOENT) {
			err = ifail(
				msg, len, -ENOTSUP,
				"%s: gzip member at byte offset %llu has no BC field: not a blocked gzip file, so it has no index (bach convert writes a blocked copy)",
				path, (unsigned long long)at);
			goto out;
		}
		if (bsize == -EILSEQ) {
			err = ifail(
				msg, len, -BACH_EDATA,
				at ? "%s: not a gzip member at byte offset %llu (trailing garbage)"
				   : "%s: not gzip (byte offset %llu)",
				path, (unsigned long long)at);
			goto out;
		}
		if (bsize < 0 || (size_t)bsize > have - pos ||
		    bsize < BACH_BGZF_HDR + BACH_BGZF_TRAILER) {
			err = ifail(
				msg, len, -BACH_EDATA,
				"%s: truncated gzip member at byte offset %llu (file ends at %llu)",
				path, (unsigned long long)at,
				(unsigned long long)(base + have));
			goto out;
		}
		isize = bach_get_le32(buf + pos + (size_t)bsize - 4);
		if (isize > BACH_BGZF_MAX_BLOCK) {
			err = ifail(
				msg, len, -BACH_EDATA,
				"%s: gzip member at byte offset %llu says it holds %u bytes, more than a blocked member can",
				path, (unsigned long long)at, isize);
			goto out;
		}
		/* an empty member: the EOF block, or one inside the file */
		ended = isize == 0;
		if (isize) {
			if ((err = bach_index_grow(ix, &cap)) < 0)
				goto out;
			ix->coff[ix->n] = at;
			ix->uoff[ix->n] = uoff;
			ix->n++;
			uoff += isize;
		}
		pos += (size_t)bsize;
	}
	if (!ended) {
		err = ifail(
			msg, len, -BACH_EDATA,
			base + have
				? "%s: missing EOF block: blocked gzip file ends at byte offset %llu without it (truncated?)"
				: "%s: empty file: not gzip (byte offset %llu)",
			path, (unsigned long long)(base + have));
		goto out;
	}
	if ((err = bach_index_grow(ix, &cap)) < 0)
		goto out;
	ix->coff[ix->n] = at; /* the last empty member: the EOF block */
	ix->uoff[ix->n] = uoff;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	if (err == -ENOMEM)
		ifail(msg, len, err, "%s: out of memory", path);
	if (err)
		bach_index_free(ix);
	return err;
}

static bool older(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec < b->st_mtim.tv_sec ||
	       (a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
		a->st_mtim.tv_nsec < b->st_mtim.tv_nsec);
}

/* The member at off: its size from its header, or -1. */
static int member_at(int fd, uint64_t off)
{
	uint8_t hdr[64];
	ssize_t got = pread_full(fd, hdr, sizeof(hdr), off);

	return got > 0 ? bach_bgzf_member_size(hdr, (size_t)got) : -1;
}

/*
 * Read path.gzi and check it against path. With ix, every entry is read
 * into it and checked for order; without, only the first and the last
 * (what the uncompressed size depends on). *size: the uncompressed size.
 */
static int load(const char *path, struct bach_index *ix, uint64_t *size,
		char *msg, size_t len)
{
	char gzi[4096];
	struct stat ds, is;
	uint8_t *raw = NULL, ends[32], tail[4 + BACH_BGZF_EOF_SIZE];
	uint64_t count, c1 = 0, u1 = 0, last = 0, lastu = 0;
	int dfd = -1, ifd = -1, err = 0, bsize;
	ssize_t got;

	if ((size_t)snprintf(gzi, sizeof(gzi), "%s%s", path,
			     BACH_INDEX_SUFFIX) >= sizeof(gzi))
		return ifail(msg, len, -ENAMETOOLONG, "%s: name too long",
			     path);
	ifd = bach_open_found(AT_FDCWD, gzi, NULL, false, &is, msg, len);
	if (ifd < 0)
		return ifd;
	dfd = bach_open_found(AT_FDCWD, path, NULL, false, &ds, msg, len);
	if (dfd < 0) {
		err = dfd;
		goto out;
	}
	err = -ESTALE;
	if (older(&is, &ds)) {
		ifail(msg, len, err, "%s: older than %s: stale", gzi, path);
		goto out;
	}
	if (is.st_size < 8 || (is.st_size - 8) % 16) {
		ifail(msg, len, err, "%s: %lld bytes, not 8 + 16 per entry",
		      gzi, (long long)is.st_size);
		goto out;
	}
	count = (uint64_t)(is.st_size - 8) / 16;
	if (pread_full(ifd, ends, 24, 0) < 8 ||
	    (count &&
	     pread_full(ifd, ends + 8, 16, 8 + (count - 1) * 16) != 16)) {
		err = ifail(msg, len, -EIO, "%s: cannot read", gzi);
		goto out;
	}
	if (bach_get_le64(ends) != count) {
		ifail(msg, len, err, "%s: says %llu entries, holds %llu", gzi,
		      (unsigned long long)bach_get_le64(ends),
		      (unsigned long long)count);
		goto out;
	}
	if (count) {
		last = bach_get_le64(ends + 8);
		lastu = bach_get_le64(ends + 16);
	}
	if (ix) {
		if (count >= MAX_ENTRIES ||
		    !(raw = malloc((size_t)is.st_size)) ||
		    !(ix->coff = malloc((count + 2) * sizeof(uint64_t))) ||
		    !(ix->uoff = malloc((count + 2) * sizeof(uint64_t)))) {
			err = ifail(msg, len, -ENOMEM, "%s: out of memory",
				    gzi);
			goto out;
		}
		got = pread_full(ifd, raw, (size_t)is.st_size, 0);
		if (got != is.st_size) {
			err = ifail(msg, len, got < 0 ? (int)got : -EIO,
				    "%s: cannot read", gzi);
			goto out;
		}
		ix->coff[0] = ix->uoff[0] = 0;
		for (uint64_t i = 1; i <= count; i++) {
			ix->coff[i] = bach_get_le64(raw + 8 + (i - 1) * 16);
			ix->uoff[i] = bach_get_le64(raw + 16 + (i - 1) * 16);
			/* members of at most 64 KiB, holding at most 64 KiB */
			if (ix->coff[i] <= ix->coff[i - 1] ||
			    ix->coff[i] - ix->coff[i - 1] >
				    BACH_BGZF_MAX_BLOCK ||
			    ix->uoff[i] <= ix->uoff[i - 1] ||
			    ix->uoff[i] - ix->uoff[i - 1] >
				    BACH_BGZF_MAX_BLOCK) {
				ifail(msg, len, err,
				      "%s: entry %llu out of order: inconsistent",
				      gzi, (unsigned long long)i);
				goto out;
			}
		}
	}
	if (count) {
		pread_full(ifd, ends, 16, 8);
		c1 = bach_get_le64(ends);
		u1 = bach_get_le64(ends + 8);
	}
	/*
	 * The last member must be a blocked one ending right where the EOF
	 * block ends the file; its ISIZE gives the uncompressed size.
	 */
	bsize = member_at(dfd, last);
	if (count == 0 && bsize == BACH_BGZF_EOF_SIZE &&
	    ds.st_size == BACH_BGZF_EOF_SIZE) {
		/* the file is its EOF block alone: no data member */
		if (ix)
			ix->n = 0;
		*size = 0;
		err = 0;
		goto out;
	}
	if (bsize < BACH_BGZF_HDR + BACH_BGZF_TRAILER ||
	    (uint64_t)ds.st_size !=
		    last + (uint64_t)bsize + BACH_BGZF_EOF_SIZE ||
	    pread_full(dfd, tail, sizeof(tail), last + (uint64_t)bsize - 4) !=
		    (ssize_t)sizeof(tail) ||
	    memcmp(tail + 4, bach_bgzf_eof, BACH_BGZF_EOF_SIZE)) {
		ifail(msg, len, err,
		      "%s: its last member (byte offset %llu of %s) does not end before the EOF block: stale",
		      gzi, (unsigned long long)last, path);
		goto out;
	}
	*size = lastu + bach_get_le32(tail);
	/* and the first member must hold what the first entry says */
	if (count &&
	    (c1 > BACH_BGZF_MAX_BLOCK || member_at(dfd, 0) != (int)c1 ||
	     pread_full(dfd, tail, 4, c1 - 4) != 4 ||
	     bach_get_le32(tail) != u1)) {
		ifail(msg, len, err,
		      "%s: its first entry does not fit the first member of %s: stale",
		      gzi, path);
		goto out;
	}
	if (ix) {
		ix->n = count + 1;
		ix->coff[ix->n] = last + (uint64_t)bsize;
		ix->uoff[ix->n] = *size;
	}
	err = 0;
out:
	free(raw);
	if (dfd >= 0)
		close(dfd);
	close(ifd);
	return err;
}

int bach_index_load(const char *path, struct bach_index *ix, char *msg,
		    size_t len)
{
	uint64_t size;
	int err;

	memset(ix, 0, sizeof(*ix));
	err = load(path, ix, &size, msg, len);
	if (err)
		bach_index_free(ix);
	return err;
}

int bach_index_size(const char *path, uint64_t *size, char *msg, size_t len)
{
	return load(path, NULL, size, msg, len);
}

/* The .gzi bytes of ix, malloc'd; NULL when out of memory. */
static uint8_t *encode(const struct bach_index *ix, size_t *size)
{
	uint64_t count = ix->n ? ix->n - 1 : 0;
	uint8_t *raw;

	*size = 8 + 16 * (size_t)count;
	raw = malloc(*size);
	if (!raw)
		return NULL;
	bach_put_le64(raw, count);
	for (uint64_t i = 1; i <= count; i++) {
		bach_put_le64(raw + 8 + (i - 1) * 16, ix->coff[i]);
		bach_put_le64(raw + 16 + (i - 1) * 16, ix->uoff[i]);
	}
	return raw;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int bach_index_writeat(int dirfd, const char *name, const struct bach_index *ix)
{
	char gzi[256], tmp[272];
	size_t size;
	uint8_t *raw = encode(ix, &size);
	int fd, err;

	if (!raw)
		return -ENOMEM;
	snprintf(gzi, sizeof(gzi), "%s%s", name, BACH_INDEX_SUFFIX);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", gzi);
	fd = bach_tmp_openat(dirfd, tmp, 0644, NULL);
	if (fd < 0) {
		free(raw);
		return fd;
	}
	err = write_all(fd, raw, size);
	free(raw);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, gzi) < 0)
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

int bach_index_write(const char *path, const struct bach_index *ix, char *msg,
		     size_t len)
{
	char gzi[4096];
	struct bach_outfile f;
	struct stat st;
	uint8_t *raw;
	size_t size;
	int err;

	if ((size_t)snprintf(gzi, sizeof(gzi), "%s%s", path,
			     BACH_INDEX_SUFFIX) >= sizeof(gzi))
		return ifail(msg, len, -ENAMETOOLONG, "%s: name too long",
			     path);
	/*
	 * Replaced only when it is a regular file: one written in place
	 * through a FIFO would block, and a link or device is someone's own
	 */
	if (lstat(gzi, &st) == 0 && !S_ISREG(st.st_mode))
		return ifail(msg, len, -EINVAL,
			     "%s: not a regular file (%s), not replaced", gzi,
			     bach_file_type(st.st_mode));
	raw = encode(ix, &size);
	if (!raw)
		return ifail(msg, len, -ENOMEM, "%s: out of memory", gzi);
	err = bach_outfile_open(&f, gzi);
	if (err < 0) {
		free(raw);
		return ifail(msg, len, err, "%s: cannot create: %s", gzi,
			     strerror(-err));
	}
	err = write_all(f.fd, raw, size);
	free(raw);
	if (err) {
		bach_outfile_abort(&f);
		return ifail(msg, len, err, "%s: write error: %s", gzi,
			     strerror(-err));
	}
	err = bach_outfile_commit(&f);
	if (err < 0)
		return ifail(msg, len, err, "%s: cannot finish: %s", gzi,
			     strerror(-err));
	return 0;
}

uint64_t bach_index_find(const struct bach_index *ix, uint64_t off)
{
	uint64_t lo = 0, hi = ix->n;

	if (!ix->n || off >= ix->uoff[ix->n])
		return ix->n;
	/* the last member whose start is <= off */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ix->uoff[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
