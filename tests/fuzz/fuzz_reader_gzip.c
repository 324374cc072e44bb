// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the trace reader on a gzip .byu.gz file (the input, as
 * is: one member, concatenated members, the blocked form with its EOF
 * block, or anything else).
 *
 * Oracle: libdeflate's gzip decoder, member by member. Whatever the reader
 * hands out before the first member libdeflate rejects must match it byte
 * for byte; a file the reader reads to the end must decode completely with
 * libdeflate to the same bytes and member count; and a file libdeflate
 * decodes that the reader rejects must have a reason the design names
 * (partial record, empty file, blocked without its EOF block) or one zlib
 * checks and libdeflate does not (the header CRC).
 */
#include <errno.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bach/trace.h"

#include "fuzz_check.h"

/* Deflate expands at most about 1032:1; inputs are capped well below. */
#define ORACLE_CAP (80u << 20)

struct oracle {
	bool ok;    /* every member decoded, up to the end */
	size_t len; /* bytes decoded from the good members */
	uint64_t members;
	bool fhcrc;	/* some member has a header CRC */
	bool blocked;	/* the first member has a BC subfield */
	bool last_bc;	/* so has the last: then the EOF block must end it */
	bool eof_block; /* the last member is BC and empty */
};

/* Whether the gzip header at p (n bytes available) has a BC subfield. */
static bool has_bc(const uint8_t *p, size_t n, bool *fhcrc)
{
	size_t xlen;

	if (n < 12)
		return false;
	if (p[3] & 0x02)
		*fhcrc = true;
	if (!(p[3] & 0x04))
		return false;
	xlen = (size_t)(p[10] | p[11] << 8);
	if (12 + xlen > n)
		return false;
	for (size_t i = 12; i + 4 <= 12 + xlen;) {
		size_t slen = (size_t)(p[i + 2] | p[i + 3] << 8);

		if (p[i] == 'B' && p[i + 1] == 'C' && slen == 2)
			return true;
		i += 4 + slen;
	}
	return false;
}

static void decode(const uint8_t *data, size_t size, uint8_t *out,
		   struct oracle *o)
{
	static struct libdeflate_decompressor *d;
	size_t pos = 0;

	if (!d)
		d = libdeflate_alloc_decompressor();
	CHECK(d, "libdeflate_alloc_decompressor");
	memset(o, 0, sizeof(*o));
	while (pos < size) {
		size_t in_used, out_used;
		bool bc = has_bc(data + pos, size - pos, &o->fhcrc);
		enum libdeflate_result res = libdeflate_gzip_decompress_ex(
			d, data + pos, size - pos, out + o->len,
			ORACLE_CAP - o->len, &in_used, &out_used);

		if (res != LIBDEFLATE_SUCCESS)
			return;
		if (o->members == 0)
			o->blocked = bc;
		o->eof_block = bc && out_used == 0;
		o->last_bc = bc;
		o->members++;
		o->len += out_used;
		pos += in_used;
	}
	o->ok = true;
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
	ssize_t n;

	if (!want)
		want = malloc(ORACLE_CAP);
	CHECK(r && want, "out of memory");
	decode(data, size, want, &o);

	CHECK(bach_reader_add_as(r, path, BACH_FILE_GZIP) == 0, "add: %s",
	      bach_reader_strerror(r));
	n = fuzz_read_against(r, want, o.len, o.ok, &off);
	bach_reader_info(r, &fi);
	CHECK(fi.kind == BACH_FILE_GZIP, "kind %d", fi.kind);
	if (n == 0) {
		CHECK(o.ok,
		      "reader read to the end what libdeflate rejects after %llu members",
		      (unsigned long long)o.members);
		CHECK(off == o.len, "%zu of %zu bytes", off, o.len);
		CHECK(fi.members == o.members, "members %llu, want %llu",
		      (unsigned long long)fi.members,
		      (unsigned long long)o.members);
		CHECK(fi.in_bytes == size && fi.out_bytes == off,
		      "info: in %llu out %llu, size %zu, delivered %zu",
		      (unsigned long long)fi.in_bytes,
		      (unsigned long long)fi.out_bytes, size, off);
		CHECK(!o.last_bc || fi.eof_block,
		      "ends with a blocked member but no EOF block");
	} else {
		CHECK(n == -EBADMSG, "got %zd: %s", n, bach_reader_strerror(r));
		CHECK(strstr(bach_reader_strerror(r), path),
		      "message does not name the file: %s",
		      bach_reader_strerror(r));
		CHECK(!o.ok || o.len % 6 || size == 0 ||
			      (o.last_bc && !o.eof_block) || o.fhcrc,
		      "reader rejects a good file: %s",
		      bach_reader_strerror(r));
		CHECK(bach_reader_read(r, &recs) == n, "error not sticky");
	}
	bach_reader_free(r);
	return 0;
}
