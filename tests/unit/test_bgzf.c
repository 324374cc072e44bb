// SPDX-License-Identifier: MIT
/*
 * Blocked gzip member headers: bach_bgzf_member_size(), the one parser of
 * them (the trace reader and crash recovery both use it), on good
 * headers and on each way one can be wrong; and the reader on a member
 * whose header straddles the end of what it has read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bach/bytes.h"
#include "bach/trace.h"

static uint8_t block[BACH_BGZF_MAX_BLOCK];

/* Bytes deflate cannot shrink: members of them are stored, 31 bytes more. */
static void noise(uint8_t *p, size_t n)
{
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 32);
	}
}

/* A member bach writes: its size, as its header says. */
static void written_members(void **state)
{
	struct bach_deflater *d = bach_deflater_new(BACH_DEFLATE_AUTO, 0);
	static uint8_t in[BACH_BGZF_MAX_INPUT];
	size_t lens[] = { 0, 6, 600, 65280 };

	(void)state;
	assert_non_null(d);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 / 6);
	for (size_t i = 0; i < sizeof(lens) / sizeof(*lens); i++) {
		size_t n = bach_bgzf_block(d, block, in, lens[i]);

		assert_int_equal(bach_bgzf_member_size(block, n), n);
		/* the header alone is enough */
		assert_int_equal(bach_bgzf_member_size(block, BACH_BGZF_HDR),
				 n);
	}
	/* incompressible: a stored block, the largest member */
	noise(in, sizeof(in));
	assert_int_equal(
		bach_bgzf_member_size(
			block, bach_bgzf_block(d, block, in, sizeof(in))),
		BACH_BGZF_MAX_INPUT + BACH_BGZF_HDR + 5 + BACH_BGZF_TRAILER);
	assert_int_equal(
		bach_bgzf_member_size(bach_bgzf_eof, BACH_BGZF_EOF_SIZE),
		BACH_BGZF_EOF_SIZE);
	bach_deflater_free(d);
}

/* A header: FEXTRA (and flags), then the extra field given. */
static size_t head(uint8_t *h, uint8_t flags, const uint8_t *extra, size_t xlen)
{
	memcpy(h, bach_bgzf_eof, 10);
	h[3] = flags;
	bach_put_le16(h + 10, (uint16_t)xlen);
	memcpy(h + 12, extra, xlen);
	return 12 + xlen;
}

/* Other subfields, other flags: BC is found wherever it is. */
static void other_subfields(void **state)
{
	static const uint8_t before[] = { 'R', 'A', 3, 0, 1,	2,   3,
					  'B', 'C', 2, 0, 0x34, 0x12 };
	static const uint8_t after[] = { 'B',  'C', 2,	 0, 0xff,
					 0xff, 'Z', 'Z', 0, 0 };
	static const uint8_t empty_first[] = { 'A', 'B', 0, 0, 'B',
					       'C', 2,	 0, 9, 0 };
	uint8_t h[256];
	size_t n;

	(void)state;
	n = head(h, 0x04, before, sizeof(before));
	assert_int_equal(bach_bgzf_member_size(h, n), 0x1235);
	n = head(h, 0x04, after, sizeof(after));
	assert_int_equal(bach_bgzf_member_size(h, n), 0x10000);
	n = head(h, 0x04, empty_first, sizeof(empty_first));
	assert_int_equal(bach_bgzf_member_size(h, n), 10);
	/* a name and a header CRC follow the extra field: no matter */
	n = head(h, 0x04 | 0x08 | 0x02, before, sizeof(before));
	memcpy(h + n, "name\0", 5);
	assert_int_equal(bach_bgzf_member_size(h, n + 5), 0x1235);
	/* a BC subfield behind 64 bytes of others */
	memset(h + 12, 0, 100);
	h[12] = 'X';
	h[13] = 'X';
	bach_put_le16(h + 14, 96);
	memcpy(h + 112, "BC\2\0\1\0", 6);
	bach_put_le16(h + 10, 106);
	assert_int_equal(bach_bgzf_member_size(h, 118), 2);
}

/* Each way a header can be wrong, and too short to tell. */
static void wrong_headers(void **state)
{
	static const uint8_t no_bc[] = { 'B', 'D', 2, 0, 1, 0 };
	static const uint8_t bc_long[] = { 'B', 'C', 4, 0, 1, 0, 0, 0 };
	static const uint8_t bc_cut[] = { 'X', 'Y', 0, 0, 'B', 'C', 2, 0, 7 };
	static const uint8_t overrun[] = {
		'X', 'Y', 9, 0, 'B', 'C', 2, 0, 7, 0
	};
	uint8_t h[64];
	size_t n;

	(void)state;
	memcpy(h, bach_bgzf_eof, BACH_BGZF_EOF_SIZE);
	/* the magic, the method */
	for (int i = 0; i < 3; i++) {
		h[i] ^= 0x40;
		assert_int_equal(bach_bgzf_member_size(h, BACH_BGZF_EOF_SIZE),
				 -EILSEQ);
		assert_int_equal(bach_bgzf_member_size(h, (size_t)i + 1),
				 -EILSEQ);
		h[i] ^= 0x40;
	}
	/* not blocked: no extra field, none in it, no BC in it */
	h[3] = 0;
	assert_int_equal(bach_bgzf_member_size(h, BACH_BGZF_EOF_SIZE), -ENOENT);
	n = head(h, 0x04, no_bc, 0);
	assert_int_equal(bach_bgzf_member_size(h, n), -ENOENT);
	n = head(h, 0x04, no_bc, sizeof(no_bc));
	assert_int_equal(bach_bgzf_member_size(h, n), -ENOENT);
	/* BC of another length; BC cut off by XLEN; a subfield over XLEN */
	n = head(h, 0x04, bc_long, sizeof(bc_long));
	assert_int_equal(bach_bgzf_member_size(h, n), -ENOENT);
	n = head(h, 0x04, bc_cut, sizeof(bc_cut));
	assert_int_equal(bach_bgzf_member_size(h, n + 8), -ENOENT);
	n = head(h, 0x04, overrun, sizeof(overrun));
	assert_int_equal(bach_bgzf_member_size(h, n), -ENOENT);
	/* too short to tell: every cut of a good header */
	for (size_t k = 0; k < BACH_BGZF_HDR; k++)
		assert_int_equal(bach_bgzf_member_size(bach_bgzf_eof, k),
				 -EAGAIN);
	/* an XLEN beyond what is at hand */
	n = head(h, 0x04, no_bc, sizeof(no_bc));
	bach_put_le16(h + 10, 40);
	assert_int_equal(bach_bgzf_member_size(h, n), -EAGAIN);
}

/*
 * The reader sees a member's BC subfield even when its header straddles
 * the end of the 1 MiB it reads at a time: a file of blocked members
 * without the EOF block is truncated, with it whole.
 */
static void header_across_reads(void **state)
{
	struct bach_deflater *d = bach_deflater_new(BACH_DEFLATE_AUTO, 0);
	static uint8_t in[BACH_BGZF_MAX_INPUT];
	const size_t read_size = 1u << 20;
	char path[] = "/tmp/bach-test-bgzf.XXXXXX";

	(void)state;
	assert_non_null(d);
	noise(in, sizeof(in));
	for (size_t cut = 1; cut < BACH_BGZF_HDR + 6; cut += 4) {
		for (int eof = 0; eof < 2; eof++) {
			int fd = mkstemp(path);
			struct bach_reader *r = bach_reader_new();
			struct bach_file_info fi;
			const uint8_t *recs;
			size_t off = 0, recbytes = 0;
			ssize_t k;

			assert_true(fd >= 0);
			assert_non_null(r);
			/* stored members up to cut bytes before the boundary */
			while (off < read_size - cut) {
				size_t left = read_size - cut - off, len;

				len = left > sizeof(in) + 31 + 31 ? sizeof(in)
				      : left > 31 + 31 + 600
					      ? left - 31 - 600 - 31
					      : left - 31;
				assert_int_equal(
					bach_bgzf_block(d, block, in, len),
					len + 31);
				assert_int_equal(write(fd, block, len + 31),
						 (ssize_t)(len + 31));
				off += len + 31;
				recbytes += len;
			}
			assert_int_equal(off, read_size - cut);
			/* the one that straddles: whole records in all */
			off = 6000 + (6 - recbytes % 6) % 6;
			off = bach_bgzf_block(d, block, in, off);
			assert_int_equal(write(fd, block, off), (ssize_t)off);
			if (eof)
				assert_int_equal(write(fd, bach_bgzf_eof,
						       BACH_BGZF_EOF_SIZE),
						 BACH_BGZF_EOF_SIZE);
			close(fd);
			assert_int_equal(
				bach_reader_add_as(r, path, BACH_FILE_GZIP), 0);
			while ((k = bach_reader_read(r, &recs)) > 0)
				;
			bach_reader_info(r, &fi);
			if (eof) {
				assert_int_equal(k, 0);
				assert_true(fi.blocked && fi.eof_block);
			} else {
				assert_int_equal(k, -BACH_EDATA);
				assert_non_null(strstr(bach_reader_strerror(r),
						       "missing EOF block"));
			}
			bach_reader_free(r);
			unlink(path);
			memcpy(path + strlen(path) - 6, "XXXXXX", 6);
		}
	}
	bach_deflater_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(written_members),
		cmocka_unit_test(other_subfields),
		cmocka_unit_test(wrong_headers),
		cmocka_unit_test(header_across_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
