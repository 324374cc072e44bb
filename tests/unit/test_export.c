// SPDX-License-Identifier: MIT
/* The exports' write(): din, dinx, laplace, tracematcher and csv text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bach/record.h"
#include "lib/formats/formats.h"

/* One of every kind of record din and its relatives meet. */
static const struct bach_rec mix[] = {
	{ 0x04016a08, 0x3f, 0x90 }, /* NC_I_FETCH bytes 6..7 */
	{ 0x04016a10, 0xfe, 0x80 }, /* I_FETCH byte 0 */
	{ 0x00001000, 0x0f, 0xd0 }, /* NC_D_READ bytes 4..7 */
	{ 0x00001000, 0x00, 0xc0 }, /* D_READ all */
	{ 0x00002000, 0xf0, 0xf0 }, /* D_WRITE bytes 0..3 */
	{ 0x00003000, 0x00, 0xe0 }, /* WRITE_BACK all */
	{ 0x000003f8, 0xfe, 0x50 }, /* IO_READ: skipped */
	{ 0x00000cf8, 0x0f, 0x70 }, /* IO_WRITE: skipped */
	{ 0x00000000, 0xfe, 0x10 }, /* INT_ACK: skipped */
	{ 0x00000000, 0xfb, 0x30 }, /* SPECIAL halt: skipped */
	{ 0x00000005, 0xff, 0x0f }, /* gap marker: skipped */
	{ 0x12345678, 0x00, 0x60 }, /* INVALID type: skipped */
	{ 0xfffffff8, 0x7e, 0xd0 }, /* bytes 0 and 7 only: a gap inside */
	{ 0x00004000, 0xff, 0xf0 }, /* BE# 0xff: taken as the quadword */
	{ 0x00000008, 0xef, 0xd0 }, /* byte 4 */
};

#define NMIX (sizeof(mix) / sizeof(*mix))

static uint8_t recs[NMIX * BACH_REC_SIZE];
static char buf[NMIX * BACH_TEXT_MAX + 1];

static int setup(void **state)
{
	(void)state;
	for (size_t i = 0; i < NMIX; i++)
		bach_rec_pack(recs + i * BACH_REC_SIZE, &mix[i]);
	return 0;
}

/*
 * records[0..n) through the write() of the export called name, with the
 * times t (NULL: the positions from index); the bytes written.
 */
static size_t write_as(const char *name, char *dst, const uint8_t *r, size_t n,
		       uint64_t index, const uint64_t *t, uint64_t *skipped)
{
	const struct bach_format *f = bach_format_find(name, BACH_FORMAT_OUT);

	assert_non_null(f);
	assert_non_null(f->write);
	return f->write(dst, r, n, index, t, skipped, NULL);
}

static void check(const char *fmt, uint64_t index, uint64_t want_skipped,
		  const char *want)
{
	uint64_t skipped = 100; /* added to, never reset */
	size_t n;

	memset(buf, 0, sizeof(buf));
	n = write_as(fmt, buf, recs, NMIX, index, NULL, &skipped);
	assert_int_equal(n, strlen(want));
	assert_string_equal(buf, want);
	assert_int_equal(skipped, 100 + want_skipped);
}

static void din(void **state)
{
	(void)state;
	check("din", 0, 6,
	      "2 4016a0e\n"
	      "2 4016a10\n"
	      "0 1004\n"
	      "0 1000\n"
	      "1 2000\n"
	      "1 3000\n"
	      "0 fffffff8\n"
	      "1 4000\n"
	      "0 c\n");
}

static void dinx(void **state)
{
	(void)state;
	check("dinx", 0, 6,
	      "i 4016a0e 2\n"
	      "i 4016a10 1\n"
	      "r 1004 4\n"
	      "r 1000 8\n"
	      "w 2000 4\n"
	      "w 3000 8\n"
	      "r fffffff8 8\n"
	      "w 4000 8\n"
	      "r c 1\n");
}

static void laplace(void **state)
{
	(void)state;
	/* the timestamp is the record's trace position, in hex */
	check("laplace", 0xfff0, 6,
	      "i fff0 2 0 4016a0e\n"
	      "i fff1 1 0 4016a10\n"
	      "r fff2 4 0 1004\n"
	      "r fff3 8 0 1000\n"
	      "w fff4 4 0 2000\n"
	      "w fff5 8 0 3000\n"
	      "r fffc 8 0 fffffff8\n"
	      "w fffd 8 0 4000\n"
	      "r fffe 1 0 c\n");
}

static void csv(void **state)
{
	(void)state;
	/* every record, nothing skipped; the header is convert.c's */
	check("csv", 7, 0,
	      "7,0x04016a08,0x3f,0x90,NC_I_FETCH\n"
	      "8,0x04016a10,0xfe,0x80,I_FETCH\n"
	      "9,0x00001000,0x0f,0xd0,NC_D_READ\n"
	      "10,0x00001000,0x00,0xc0,D_READ\n"
	      "11,0x00002000,0xf0,0xf0,D_WRITE\n"
	      "12,0x00003000,0x00,0xe0,WRITE_BACK\n"
	      "13,0x000003f8,0xfe,0x50,IO_READ\n"
	      "14,0x00000cf8,0x0f,0x70,IO_WRITE\n"
	      "15,0x00000000,0xfe,0x10,INT_ACK\n"
	      "16,0x00000000,0xfb,0x30,SPECIAL\n"
	      "17,0x00000005,0xff,0x0f,INVALID\n"
	      "18,0x12345678,0x00,0x60,INVALID\n"
	      "19,0xfffffff8,0x7e,0xd0,NC_D_READ\n"
	      "20,0x00004000,0xff,0xf0,D_WRITE\n"
	      "21,0x00000008,0xef,0xd0,NC_D_READ\n");
}

/* Every BE# pattern: address of the lowest byte, size to the highest. */
static void every_be(void **state)
{
	uint8_t r[BACH_REC_SIZE];
	uint64_t skipped = 0;
	char line[BACH_TEXT_MAX], want[BACH_TEXT_MAX];
	size_t n;

	(void)state;
	for (unsigned be = 0; be < 256; be++) {
		unsigned lo = 0, hi = 7;

		if (be != 0xff) {
			while (be >> lo & 1)
				lo++;
			while (be >> hi & 1)
				hi--;
		}
		bach_rec_put(r, 0xabcdef00, (uint8_t)be, 0xf0);
		n = write_as("dinx", line, r, 1, 0, NULL, &skipped);
		line[n] = 0;
		snprintf(want, sizeof(want), "w %x %u\n", 0xabcdef00 + lo,
			 hi - lo + 1);
		assert_string_equal(line, want);
	}
	assert_int_equal(skipped, 0);
}

/* Long indexes and the widest lines still fit BACH_TEXT_MAX. */
static void widths(void **state)
{
	uint8_t r[BACH_REC_SIZE];
	uint64_t skipped = 0;
	char line[BACH_TEXT_MAX + 1];
	size_t n;

	(void)state;
	bach_rec_put(r, 0xfffffff8, 0x7f, 0x80);
	n = write_as("laplace", line, r, 1, UINT64_MAX, NULL, &skipped);
	line[n] = 0;
	assert_string_equal(line, "i ffffffffffffffff 1 0 ffffffff\n");
	n = write_as("csv", line, r, 1, UINT64_MAX, NULL, &skipped);
	line[n] = 0;
	assert_string_equal(
		line, "18446744073709551615,0xfffffff8,0x7f,0x80,I_FETCH\n");
	bach_rec_put(r, 0, 0x00, 0xd0);
	n = write_as("din", line, r, 1, 0, NULL, &skipped);
	line[n] = 0;
	assert_string_equal(line, "0 0\n");
	/* an empty block writes nothing */
	assert_int_equal(write_as("din", line, r, 0, 0, NULL, &skipped), 0);
	assert_int_equal(skipped, 0);
}

/*
 * Times from a sidecar in place of the position: Laplace's timestamp
 * (hex, and little-endian at offset 1 of the binary record, per "Laplace:
 * Raw Trace Formats"), Trace Matcher's time (decimal); din has none.
 */
static void timed(void **state)
{
	uint8_t r[2 * BACH_REC_SIZE];
	const uint64_t t[2] = { 0x1234567890ull, UINT64_MAX - 1 };
	uint64_t skipped = 0;
	char out[2 * BACH_TEXT_MAX + 1];
	size_t n;

	(void)state;
	bach_rec_put(r, 0x1000, 0x0f, 0xd0);		     /* NC_D_READ */
	bach_rec_put(r + BACH_REC_SIZE, 0x2000, 0x00, 0xf0); /* D_WRITE */
	n = write_as("laplace", out, r, 2, 7, t, &skipped);
	out[n] = 0;
	assert_string_equal(out, "r 1234567890 4 0 1004\n"
				 "w fffffffffffffffe 8 0 2000\n");
	n = write_as("tracematcher", out, r, 2, 7, t, &skipped);
	out[n] = 0;
	assert_string_equal(
		out,
		"78187493520 clk MR4 00001004 00000000\n"
		"18446744073709551614 clk MW8 00002000 0000000000000000\n");
	n = write_as("laplace-bin", out, r, 1, 7, t, &skipped);
	assert_int_equal(n, BACH_LAPLACE_BIN_SIZE);
	assert_memory_equal(out + 1, "\x90\x78\x56\x34\x12\0\0\0", 8);
	/* NULL: the position */
	n = write_as("laplace", out, r, 1, 7, NULL, &skipped);
	out[n] = 0;
	assert_string_equal(out, "r 7 4 0 1004\n");
	assert_int_equal(skipped, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(din),	    cmocka_unit_test(dinx),
		cmocka_unit_test(laplace),  cmocka_unit_test(csv),
		cmocka_unit_test(every_be), cmocka_unit_test(widths),
		cmocka_unit_test(timed),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
