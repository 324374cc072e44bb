// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: blocks made by bach_bgzf_block(), read back through
 * the trace reader. Byte 0: bit 5 picks the record encoder, else bit 7
 * zlib over libdeflate; bit 6 appends the EOF block; bits 3..0 the level
 * (mod 13, mod 10 for zlib, mod the record encoder's levels + 1, 0 being
 * its default);
 * byte 1: records per block (0 = as many as fit); the rest is the data,
 * cut to whole records and to 8 blocks' worth.
 *
 * Checks: each block fits BACH_BGZF_MAX_BLOCK (written into an allocation
 * of exactly that size) and carries its own size, CRC and length; the
 * reader gives back exactly the data, counts every block as a member, sees
 * the blocked form, and ends cleanly exactly when the last member is empty
 * (the EOF block, or an empty data block), else with "missing EOF block".
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

#include "bach/bytes.h"
#include "bach/trace.h"
#include "lib/io/recdeflate.h"

#include "fuzz_check.h"

#define MAX_BLOCKS 8

static int memfd = -1;
static char path[64];

static void put(const void *p, size_t len, size_t *off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(memfd, (const uint8_t *)p + done, len - done,
				   (off_t)(*off + done));

		CHECK(n > 0, "pwrite: %s", strerror(errno));
		done += (size_t)n;
	}
	*off += len;
}

static struct bach_deflater *deflater(enum bach_deflate_backend b, int level)
{
	static struct bach_deflater *cache[BACH_DEFLATE_RECORD + 1][13];
	struct bach_deflater **d = &cache[b][level];

	if (!*d)
		*d = bach_deflater_new(b, level);
	CHECK(*d, "bach_deflater_new(%d, %d) failed", (int)b, level);
	return *d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *block;
	enum bach_deflate_backend backend;
	bool eof;
	int level;
	size_t chunk, len, pos = 0, fsize = 0, off = 0;
	uint64_t blocks = 0;
	const uint8_t *recs;
	struct bach_reader *r;
	struct bach_file_info fi;
	bool last_empty = false;
	ssize_t n;

	if (size < 2)
		return 0;
	eof = data[0] & 0x40;
	if (data[0] & 0x20) {
		backend = BACH_DEFLATE_RECORD;
		level = (data[0] & 15) % (BACH_RECDEFLATE_MAX_LEVEL + 1);
	} else if (data[0] & 0x80) {
		backend = BACH_DEFLATE_ZLIB;
		level = (data[0] & 15) % 10;
	} else {
		backend = BACH_DEFLATE_LIBDEFLATE;
		level = (data[0] & 15) % 13;
	}
	chunk = data[1] ? data[1] * 6u : BACH_BGZF_MAX_INPUT;
	data += 2;
	size -= 2;
	len = size - size % 6;
	if (len > (size_t)MAX_BLOCKS * chunk)
		len = MAX_BLOCKS * chunk;

	if (memfd < 0) {
		memfd = memfd_create("fuzz.byu.gz", MFD_CLOEXEC);
		CHECK(memfd >= 0, "memfd_create: %s", strerror(errno));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	if (!block)
		block = malloc(BACH_BGZF_MAX_BLOCK);
	CHECK(block, "out of memory");
	CHECK(ftruncate(memfd, 0) == 0, "ftruncate: %s", strerror(errno));

	/* at least one block, even for no data */
	do {
		size_t in = len - pos < chunk ? len - pos : chunk;
		size_t out = bach_bgzf_block(deflater(backend, level), block,
					     data + pos, in);

		CHECK(out >= BACH_BGZF_HDR + BACH_BGZF_TRAILER + 2 &&
			      out <= BACH_BGZF_MAX_BLOCK,
		      "block of %zu bytes from %zu", out, in);
		CHECK(block[0] == 0x1f && block[1] == 0x8b && block[3] & 4,
		      "not a gzip member with an extra field");
		CHECK(bach_get_le16(block + 16) + 1u == out,
		      "BSIZE %u, size %zu", bach_get_le16(block + 16), out);
		CHECK(bach_get_le32(block + out - 4) == (uint32_t)in, "ISIZE");
		CHECK(bach_get_le32(block + out - 8) ==
			      (uint32_t)crc32(0, data + pos, (uInt)in),
		      "CRC");
		put(block, out, &fsize);
		last_empty = in == 0;
		pos += in;
		blocks++;
	} while (pos < len);
	if (eof) {
		put(bach_bgzf_eof, BACH_BGZF_EOF_SIZE, &fsize);
		blocks++;
		last_empty = true;
	}

	r = bach_reader_new();
	CHECK(r, "out of memory");
	CHECK(bach_reader_add_as(r, path, BACH_FILE_GZIP) == 0, "add: %s",
	      bach_reader_strerror(r));
	while ((n = bach_reader_read(r, &recs)) > 0) {
		size_t got = (size_t)n * 6;

		CHECK(off + got <= len, "%zu bytes past the %zu written",
		      off + got, len);
		CHECK(!memcmp(recs, data + off, got), "bytes from %zu differ",
		      off);
		off += got;
	}
	bach_reader_info(r, &fi);
	CHECK(off == len, "%zu of %zu bytes back", off, len);
	CHECK(fi.blocked, "not seen as blocked");
	CHECK(fi.members == blocks, "%llu members, wrote %llu",
	      (unsigned long long)fi.members, (unsigned long long)blocks);
	if (last_empty) {
		CHECK(n == 0, "read ends %zd: %s", n, bach_reader_strerror(r));
		CHECK(fi.eof_block, "EOF block not seen");
		CHECK(fi.in_bytes == fsize, "in_bytes %llu of %zu",
		      (unsigned long long)fi.in_bytes, fsize);
	} else {
		CHECK(n == -EBADMSG && strstr(bach_reader_strerror(r),
					      "missing EOF block"),
		      "read ends %zd: %s", n, bach_reader_strerror(r));
	}
	bach_reader_free(r);
	return 0;
}
