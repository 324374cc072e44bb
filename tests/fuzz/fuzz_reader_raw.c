// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the trace reader on a raw .byu file (the input, as is).
 * The file's name (/proc/self/fd/N) does not say raw as a .byu name would,
 * so the kind is given: sniffed, an input that starts with the gzip magic
 * would be read as gzip (fuzz_reader_multi fuzzes the sniffing).
 * A raw file has an exact oracle: the reader must hand back every whole
 * record of the input, in order, and end with -EBADMSG exactly when the
 * file ends in a partial record.  An empty file is a valid empty trace
 * (docs/formats.md section 2).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bach/trace.h"

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_put_file(data, size);
	struct bach_reader *r = bach_reader_new();
	struct bach_file_info fi;
	size_t whole = size - size % 6;
	size_t off = 0;
	const uint8_t *recs;
	ssize_t n;

	CHECK(r, "bach_reader_new failed");
	CHECK(bach_reader_add_as(r, path, BACH_FILE_RAW) == 0, "add: %s",
	      bach_reader_strerror(r));
	while ((n = bach_reader_read(r, &recs)) > 0) {
		size_t len = (size_t)n * 6;

		CHECK(off + len <= whole, "%zd records past the end", n);
		CHECK(!memcmp(recs, data + off, len),
		      "records at byte %zu differ from the input", off);
		off += len;
		CHECK(bach_reader_records(r) == off / 6, "record count");
	}
	bach_reader_info(r, &fi);
	CHECK(fi.kind == BACH_FILE_RAW, "kind %d", fi.kind);
	CHECK(off == whole, "%zu of %zu record bytes delivered", off, whole);
	if (size % 6) {
		CHECK(n == -EBADMSG, "size %zu: got %zd, want -EBADMSG", size,
		      n);
		CHECK(strstr(bach_reader_strerror(r), path),
		      "message does not name the file: %s",
		      bach_reader_strerror(r));
		/* errors are sticky until the next file */
		CHECK(bach_reader_read(r, &recs) == n, "error not sticky");
		CHECK(bach_reader_next_file(r) == 0, "a second file?");
		CHECK(bach_reader_read(r, &recs) == 0,
		      "read after the last file");
	} else {
		CHECK(n == 0, "size %zu: got %zd (%s)", size, n,
		      bach_reader_strerror(r));
		CHECK(fi.in_bytes == size && fi.out_bytes == size,
		      "info: in %llu out %llu, size %zu",
		      (unsigned long long)fi.in_bytes,
		      (unsigned long long)fi.out_bytes, size);
		CHECK(bach_reader_read(r, &recs) == 0, "read after the end");
	}
	bach_reader_free(r);
	return 0;
}
