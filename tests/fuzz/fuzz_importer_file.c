// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bach_importer_open()/read() over a file, the line (or
 * binary record) splitting and the gzip input in lib/formats/import.c. Byte 0
 * picks the format as fuzz_import's does (bits 2..0, then 7..5: the k-th
 * import of bach_formats[]), bit 3 sets BACH_IMPORT_MASK_ADDRESS, and bit
 * 4 has the file written gzip-compressed
 * (by zlib here: the importer must read exactly what it would read
 * plain); the rest is the file.
 *
 * Oracle: the same file split here, in the simplest way (lines end at
 * '\n', a '\r' before it is dropped, a last line needs no newline; a
 * binary format is records of its unit bytes with nothing left
 * over; an empty file is a valid empty
 * trace, docs/formats.md section 4), each
 * unit passed to the format's line(). The importer must deliver a prefix of
 * the oracle's records, all of them when it reaches the end, fail exactly
 * when the oracle does (naming the line), and keep the same counts.
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

#include "bach/record.h"
#include "lib/formats/formats.h"

#include "fuzz_check.h"

struct oracle {
	uint8_t *recs;
	size_t cap;
	struct bach_import_stats st;
	int err; /* 0 or -EBADMSG */
};

static void one(struct oracle *o, const struct bach_format *f, unsigned flags,
		const char *p, size_t len)
{
	uint8_t out[BACH_IMPORT_MAX_RECS * BACH_REC_SIZE];
	const char *why;
	size_t need;
	int n;

	o->st.lines++;
	n = f->line(p, len, flags, out, &o->st.skipped, &why);
	if (n <= 0) {
		o->err = n;
		return;
	}
	need = (o->st.records + (size_t)n) * BACH_REC_SIZE;
	if (need > o->cap) {
		o->cap = need * 2;
		o->recs = realloc(o->recs, o->cap);
		CHECK(o->recs, "out of memory");
	}
	memcpy(o->recs + o->st.records * BACH_REC_SIZE, out,
	       (size_t)n * BACH_REC_SIZE);
	o->st.records += (uint64_t)n;
}

static void split(struct oracle *o, const struct bach_format *f, unsigned flags,
		  const char *p, size_t size)
{
	size_t pos = 0;

	o->st = (struct bach_import_stats){ 0 };
	o->err = 0;
	if (f->unit) {
		size_t u = f->unit;

		for (; !o->err && pos + u <= size; pos += u)
			one(o, f, flags, p + pos, u);
		if (!o->err && pos < size)
			o->err = -EBADMSG;
		return;
	}
	while (!o->err && pos < size) {
		const char *nl = memchr(p + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (p + pos)) : size - pos;
		size_t next = pos + len + (nl ? 1 : 0);

		if (len && p[pos + len - 1] == '\r')
			len--;
		one(o, f, flags, p + pos, len);
		pos = next;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct oracle o;
	const struct bach_format *f;
	const char *fmt;
	struct bach_importer *im;
	struct bach_import_stats st;
	const char *path;
	const uint8_t *recs;
	unsigned flags;
	bool gz;
	size_t off = 0;
	ssize_t n;
	int err;

	if (size < 1)
		return 0;
	f = fuzz_format(BACH_FORMAT_IN,
			(data[0] & 7u) | (unsigned)(data[0] >> 5) << 3);
	fmt = f->name;
	flags = data[0] & 8 ? BACH_IMPORT_MASK_ADDRESS : 0;
	gz = data[0] & 16;
	data++;
	size--;
	split(&o, f, flags, (const char *)data, size);
	if (gz) {
		static uint8_t z[8192];
		z_stream zs = { 0 };

		CHECK(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8,
				   Z_DEFAULT_STRATEGY) == Z_OK,
		      "deflateInit2");
		zs.next_in = (Bytef *)data;
		zs.avail_in = (uInt)size;
		zs.next_out = z;
		zs.avail_out = sizeof(z);
		CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate");
		path = fuzz_put_file(z, zs.total_out);
		deflateEnd(&zs);
	} else {
		path = fuzz_put_file(data, size);
	}

	err = bach_importer_open(&im, f, path, flags);
	CHECK(err == 0, "open: %d", err);
	while ((n = bach_importer_read(im, &recs)) > 0) {
		size_t len = (size_t)n * BACH_REC_SIZE;

		CHECK(off + len <= o.st.records * BACH_REC_SIZE,
		      "%s: %zd records past the oracle's %llu", fmt, n,
		      (unsigned long long)o.st.records);
		CHECK(!memcmp(recs, o.recs + off, len),
		      "%s: records from %zu differ", fmt, off / BACH_REC_SIZE);
		off += len;
	}
	bach_importer_stats(im, &st);
	CHECK(n == o.err, "%s: importer ends %zd (%s), oracle %d", fmt, n,
	      bach_importer_strerror(im), o.err);
	CHECK(st.lines == o.st.lines && st.records == o.st.records &&
		      st.skipped == o.st.skipped,
	      "%s: stats lines %llu records %llu skipped %llu, oracle %llu %llu %llu",
	      fmt, (unsigned long long)st.lines, (unsigned long long)st.records,
	      (unsigned long long)st.skipped, (unsigned long long)o.st.lines,
	      (unsigned long long)o.st.records,
	      (unsigned long long)o.st.skipped);
	if (n == 0) {
		CHECK(off == o.st.records * BACH_REC_SIZE,
		      "%s: %zu of %llu records delivered", fmt,
		      off / BACH_REC_SIZE, (unsigned long long)o.st.records);
		CHECK(bach_importer_read(im, &recs) == 0, "read after the end");
	} else {
		const char *msg = bach_importer_strerror(im);
		char where[48];

		CHECK(strstr(msg, path), "message does not name the file: %s",
		      msg);
		if (!f->unit) {
			snprintf(where, sizeof(where),
				 "line %llu:", (unsigned long long)o.st.lines);
			CHECK(strstr(msg, where), "message lacks '%s': %s",
			      where, msg);
		}
		CHECK(bach_importer_read(im, &recs) == n, "error not sticky");
	}
	bach_importer_free(im);
	return 0;
}
