// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the trace reader on a .byu.zst file (the input, as is:
 * zstd frames, skippable frames, the seek table of zstd's seekable format,
 * or anything else; docs/formats.md section 10).
 *
 * Oracle: libzstd's one-shot decoder, frame by frame (ZSTD_decompress() of
 * each frame ZSTD_findFrameCompressedSize() delimits; skippable frames
 * passed over). Whatever the reader hands out before the first frame the
 * oracle rejects must match it byte for byte; a file the reader reads to
 * the end must decode completely to the same bytes; and a file the oracle
 * decodes that the reader rejects must have a reason the format names (a
 * missing or wrong seek table, a partial record, an empty file).
 *
 * Then read again as bach verify reads, on past each damaged frame
 * (lib/io/resync.h): each damage named with the file and a byte offset,
 * reading always going on further in the file, never back.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "bach/trace.h"
#include "lib/io/resync.h"

#include "fuzz_check.h"

#define ORACLE_CAP (16u << 20)

struct oracle {
	bool ok;    /* every frame decoded, up to the end */
	bool big;   /* a frame too large for the oracle: no verdict */
	size_t len; /* bytes decoded from the good frames */
};

static void decode(const uint8_t *data, size_t size, uint8_t *out,
		   struct oracle *o)
{
	size_t pos = 0;

	memset(o, 0, sizeof(*o));
	while (pos < size) {
		size_t c = ZSTD_findFrameCompressedSize(data + pos, size - pos);
		unsigned long long fcs;
		size_t d;

		if (ZSTD_isError(c))
			return;
		if (size - pos >= 4 &&
		    ((uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8 |
		     (uint32_t)data[pos + 2] << 16 |
		     (uint32_t)data[pos + 3] << 24) >>
				    4 ==
			    0x184D2A5u) {
			pos += c;
			continue;
		}
		fcs = ZSTD_getFrameContentSize(data + pos, c);
		if (fcs == ZSTD_CONTENTSIZE_UNKNOWN ||
		    fcs > ORACLE_CAP - o->len) {
			o->big = true;
			return;
		}
		d = ZSTD_decompress(out + o->len, ORACLE_CAP - o->len,
				    data + pos, c);
		if (ZSTD_isError(d))
			return;
		o->len += d;
		pos += c;
	}
	o->ok = true;
}

static void read_on(const char *path, size_t size)
{
	struct bach_reader *r = bach_reader_new();
	uint64_t from, to, last = 0;
	const uint8_t *recs;
	const char *m;
	ssize_t n;
	int rs;

	CHECK(r && bach_reader_add_as(r, path, BACH_FILE_ZSTD) == 0,
	      "out of memory");
	for (;;) {
		n = bach_reader_read(r, &recs);
		if (n > 0)
			continue;
		if (n != -EBADMSG)
			break;
		m = bach_reader_strerror(r);
		CHECK(strstr(m, path) && (strstr(m, "byte offset") ||
					  strstr(m, "empty file")),
		      "message names no file and offset: %s", m);
		rs = reader_resync(r, &from, &to);
		if (rs < 0)
			break;
		CHECK(from >= last && to > from && to <= size,
		      "read on from %llu to %llu after %llu, size %zu",
		      (unsigned long long)from, (unsigned long long)to,
		      (unsigned long long)last, size);
		last = to;
	}
	CHECK(n == 0 || n == -EBADMSG, "got %zd: %s", n,
	      bach_reader_strerror(r));
	bach_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *want;
	const char *path = fuzz_put_file(data, size);
	struct bach_reader *r = bach_reader_new();
	struct bach_file_info fi;
	struct oracle o;
	size_t off;
	const uint8_t *recs;
	const char *m;
	ssize_t n;

	if (!want)
		want = malloc(ORACLE_CAP);
	CHECK(r && want, "out of memory");
	decode(data, size, want, &o);

	CHECK(bach_reader_add_as(r, path, BACH_FILE_ZSTD) == 0, "add: %s",
	      bach_reader_strerror(r));
	n = fuzz_read_against(r, want, o.big ? 0 : o.len, o.ok, &off);
	bach_reader_info(r, &fi);
	CHECK(fi.kind == BACH_FILE_ZSTD, "kind %d", fi.kind);
	m = bach_reader_strerror(r);
	if (n == 0) {
		CHECK(o.ok || o.big,
		      "reader read to the end what libzstd rejects");
		CHECK(o.big || off == o.len, "%zu of %zu bytes", off, o.len);
		CHECK(fi.in_bytes == size && fi.out_bytes == off,
		      "info: in %llu out %llu, size %zu, delivered %zu",
		      (unsigned long long)fi.in_bytes,
		      (unsigned long long)fi.out_bytes, size, off);
		CHECK(fi.eof_block, "read whole without a seek table");
	} else {
		CHECK(n == -EBADMSG, "got %zd: %s", n, m);
		CHECK(strstr(m, path), "message does not name the file: %s", m);
		CHECK(strstr(m, "byte offset") || strstr(m, "empty file"),
		      "message names no offset: %s", m);
		CHECK(!o.ok || strstr(m, "seek table") ||
			      strstr(m, "truncated record") ||
			      strstr(m, "empty file"),
		      "reader rejects a good file: %s", m);
		CHECK(bach_reader_read(r, &recs) == n, "error not sticky");
	}
	bach_reader_free(r);
	read_on(path, size);
	return 0;
}
