// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: one reader over several files, one of which may be
 * standard input, skipping damaged files with bach_reader_next_file().
 *
 * Input: byte 0 = number of files - 1 (low 2 bits); byte 1 = how each file
 * is added, 2 bits per file: 0 bach_reader_add (raw by its name), 1 as
 * gzip, 2 as raw, 3 standard input ("-", sniffed; the first such file only,
 * later ones are added as gzip). Then a 2-byte little-endian length for
 * every file but the last, which takes the rest; each file's bytes follow
 * in order.
 *
 * Oracle: each file read alone by a fresh reader (standard input read from
 * its path as the kind its first two bytes name). The shared reader must
 * give every file the same records and the same result: nothing a file
 * leaves behind (a partial record, zlib state, an error) may leak into the
 * next.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "bach/trace.h"

#include "fuzz_check.h"

#define MAX_FILES 4

enum how { ADD, AS_GZIP, AS_RAW, STDIN };

struct file {
	enum how how;
	int fd;
	char path[64];
	const uint8_t *data;
	size_t size;
};

/* What a file read gives: record bytes (as length and CRC) and the end. */
struct result {
	uint64_t bytes;
	uint32_t crc;
	ssize_t end; /* 0, or the error */
};

static void put_file(struct file *f)
{
	size_t off = 0;

	if (f->fd < 0) {
		f->fd = memfd_create("fuzz", MFD_CLOEXEC);
		CHECK(f->fd >= 0, "memfd_create: %s", strerror(errno));
		snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
	}
	CHECK(ftruncate(f->fd, 0) == 0, "ftruncate: %s", strerror(errno));
	while (off < f->size) {
		ssize_t n =
			pwrite(f->fd, f->data + off, f->size - off, (off_t)off);

		CHECK(n > 0, "pwrite: %s", strerror(errno));
		off += (size_t)n;
	}
}

static enum bach_file_kind sniff(const struct file *f)
{
	return f->size >= 2 && f->data[0] == 0x1f && f->data[1] == 0x8b
		       ? BACH_FILE_GZIP
		       : BACH_FILE_RAW;
}

static int add(struct bach_reader *r, const struct file *f)
{
	switch (f->how) {
	case ADD:
		return bach_reader_add(r, f->path);
	case AS_GZIP:
		return bach_reader_add_as(r, f->path, BACH_FILE_GZIP);
	case AS_RAW:
		return bach_reader_add_as(r, f->path, BACH_FILE_RAW);
	default:
		return bach_reader_add(r, "-");
	}
}

static void alone(const struct file *f, struct result *res)
{
	struct bach_reader *r = bach_reader_new();
	const uint8_t *recs;
	ssize_t n;
	int err;

	CHECK(r, "out of memory");
	if (f->how == STDIN)
		err = bach_reader_add_as(r, f->path, sniff(f));
	else
		err = add(r, f);
	CHECK(err == 0, "add: %s", bach_reader_strerror(r));
	memset(res, 0, sizeof(*res));
	while ((n = bach_reader_read(r, &recs)) > 0) {
		res->crc = (uint32_t)crc32(res->crc, recs, (uInt)(n * 6));
		res->bytes += (uint64_t)n * 6;
	}
	res->end = n;
	bach_reader_free(r);
}

/* Index of the file the reader is on, by the name it reports. */
static size_t which(struct bach_reader *r, const struct file *f, size_t nf)
{
	const char *name = bach_reader_file(r);

	for (size_t i = 0; i < nf; i++)
		if (!strcmp(name, f[i].how == STDIN ? "<stdin>" : f[i].path))
			return i;
	CHECK(0, "reader names an unknown file '%s'", name);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct file files[MAX_FILES] = {
		{ .fd = -1 },
		{ .fd = -1 },
		{ .fd = -1 },
		{ .fd = -1 },
	};
	struct result want[MAX_FILES], got[MAX_FILES];
	struct bach_reader *r;
	const uint8_t *recs;
	bool have_stdin = false;
	size_t nf, pos;
	ssize_t n;

	if (size < 2)
		return 0;
	nf = (data[0] & 3) + 1u;
	pos = 2 + 2 * (nf - 1);
	if (pos > size)
		return 0;
	for (size_t i = 0; i < nf; i++) {
		struct file *f = &files[i];
		size_t len = size - pos;

		if (i + 1 < nf) {
			size_t l = (size_t)(data[2 + 2 * i] | data[3 + 2 * i]
								      << 8);

			len = l < len ? l : len;
		}
		f->how = (enum how)(data[1] >> (2 * i) & 3);
		if (f->how == STDIN && have_stdin)
			f->how = AS_GZIP;
		have_stdin |= f->how == STDIN;
		f->data = data + pos;
		f->size = len;
		pos += len;
		put_file(f);
		alone(f, &want[i]);
	}
	for (size_t i = 0; i < nf; i++) {
		if (files[i].how != STDIN)
			continue;
		CHECK(dup2(files[i].fd, 0) == 0, "dup2: %s", strerror(errno));
		CHECK(lseek(0, 0, SEEK_SET) == 0, "lseek: %s", strerror(errno));
	}

	r = bach_reader_new();
	CHECK(r, "out of memory");
	for (size_t i = 0; i < nf; i++)
		CHECK(add(r, &files[i]) == 0, "add: %s",
		      bach_reader_strerror(r));
	CHECK(bach_reader_nfiles(r) == nf, "%zu files", bach_reader_nfiles(r));
	memset(got, 0, sizeof(got));
	for (;;) {
		size_t i;

		n = bach_reader_read(r, &recs);
		if (n == 0)
			break;
		i = which(r, files, nf);
		if (n < 0) {
			CHECK(n == -EBADMSG, "file %zu: %zd: %s", i, n,
			      bach_reader_strerror(r));
			got[i].end = n;
			if (!bach_reader_next_file(r))
				break;
			continue;
		}
		got[i].crc = (uint32_t)crc32(got[i].crc, recs, (uInt)(n * 6));
		got[i].bytes += (uint64_t)n * 6;
	}
	for (size_t i = 0; i < nf; i++)
		CHECK(got[i].bytes == want[i].bytes &&
			      got[i].crc == want[i].crc &&
			      got[i].end == want[i].end,
		      "file %zu of %zu (how %d): %llu bytes crc %08x end %zd, alone %llu bytes crc %08x end %zd",
		      i, nf, files[i].how, (unsigned long long)got[i].bytes,
		      got[i].crc, got[i].end, (unsigned long long)want[i].bytes,
		      want[i].crc, want[i].end);
	CHECK(bach_reader_read(r, &recs) == 0, "read after the last file");
	bach_reader_free(r);
	return 0;
}
