/* SPDX-License-Identifier: MIT */
/* Shared by the fuzz targets: a check that names itself and aborts. */
#ifndef BACH_FUZZ_CHECK_H
#define BACH_FUZZ_CHECK_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bach/trace.h"
#include "lib/formats/formats.h"

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/* The input as a file: one memfd, rewritten each run, opened by path. */
static inline const char *fuzz_put_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	size_t off = 0;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	CHECK(ftruncate(fd, 0) == 0, "ftruncate: %s", strerror(errno));
	while (off < size) {
		ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);

		CHECK(n > 0, "pwrite: %s", strerror(errno));
		off += (size_t)n;
	}
	return path;
}

/*
 * Read r to its end or its first error against an oracle's decoding,
 * want[0..len) (the bytes of the members or frames it decoded whole; ok:
 * all of the file): every record handed out before len matches it, none
 * past it when ok, and the record count follows. *off: record bytes read.
 * Returns the last read's result (0 or an error).
 */
static inline ssize_t fuzz_read_against(struct bach_reader *r,
					const uint8_t *want, size_t len,
					bool ok, size_t *off)
{
	const uint8_t *recs;
	ssize_t n;

	*off = 0;
	while ((n = bach_reader_read(r, &recs)) > 0) {
		size_t got = (size_t)n * 6;
		size_t cmp = *off < len ? len - *off : 0;

		if (cmp > got)
			cmp = got;
		CHECK(!ok || *off + got <= len,
		      "%zu record bytes past the %zu decoded", *off + got, len);
		CHECK(!memcmp(recs, want + *off, cmp),
		      "records at byte %zu differ from the oracle's", *off);
		*off += got;
		CHECK(bach_reader_records(r) == *off / 6, "record count");
	}
	return n;
}

/* The bytes as the file PATH, created or replaced (a named file, for the
 * targets that need one beside another: a trace and its index). */
static inline void fuzz_put_path(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	CHECK(write(fd, p, n) == (ssize_t)n, "%s: short write", path);
	close(fd);
}

/* The formats of bach_formats[] that import (in) or export (out). */
static inline int fuzz_goes(const struct bach_format *f,
			    enum bach_format_dir dir)
{
	return f->kind == BACH_FORMAT_FOREIGN && bach_format_can(f, dir);
}

static inline unsigned fuzz_nformats(enum bach_format_dir dir)
{
	unsigned n = 0;

	for (size_t i = 0; bach_formats[i]; i++)
		n += (unsigned)fuzz_goes(bach_formats[i], dir);
	return n;
}

/*
 * The k-th of them (counted around), in the table's order: the import
 * and export targets pick one by a byte of their input.
 */
static inline const struct bach_format *fuzz_format(enum bach_format_dir dir,
						    unsigned k)
{
	unsigned n = fuzz_nformats(dir);

	CHECK(n, "no format goes %d", dir);
	k %= n;
	for (size_t i = 0; bach_formats[i]; i++)
		if (fuzz_goes(bach_formats[i], dir) && !k--)
			return bach_formats[i];
	return NULL;
}

#endif
