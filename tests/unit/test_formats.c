// SPDX-License-Identifier: MIT
/*
 * bach_formats[], the one list of the formats bach convert reads and
 * writes: every descriptor is whole and consistent, the lookups find
 * each by its name (and alias) exactly the ways it goes, and what a
 * format keeps of a trace (bach diff --as) it keeps again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bach/record.h"
#include "lib/formats/formats.h"

static size_t count(void)
{
	size_t n = 0;

	while (bach_formats[n])
		n++;
	return n;
}

static void descriptors(void **state)
{
	size_t n = count();

	(void)state;
	assert_true(n >= 2);
	for (size_t i = 0; i < n; i++) {
		const struct bach_format *f = bach_formats[i];

		assert_non_null(f->name);
		assert_true(f->name[0] != 0);
		/* a row of `bach help convert` fits 80 columns */
		assert_true(strlen(f->name) <= 12);
		assert_non_null(f->help);
		assert_in_range(strlen(f->help), 1, 80 - 24);
		if (f->kind == BACH_FORMAT_FOREIGN) {
			assert_true(f->line || f->write);
		} else {
			/* the trace reader and writer, not these */
			assert_null(f->line);
			assert_null(f->write);
		}
		if (f->timed || f->header)
			assert_non_null(f->write);
		if (f->units)
			assert_non_null(f->line);
		if (f->ext)
			assert_true(f->ext[0] == '.');
		/* no name, alias or ending twice */
		for (size_t j = 0; j < i; j++) {
			const struct bach_format *g = bach_formats[j];

			assert_string_not_equal(f->name, g->name);
			if (f->alias)
				assert_string_not_equal(f->alias, g->name);
			if (g->alias)
				assert_string_not_equal(f->name, g->alias);
			if (f->ext && g->ext)
				assert_string_not_equal(f->ext, g->ext);
		}
	}
	/* one of each trace kind, as convert writes them */
	assert_int_equal(bach_format_find("byu", BACH_FORMAT_OUT)->kind,
			 BACH_FORMAT_BYU);
	assert_int_equal(bach_format_find("byu.gz", BACH_FORMAT_OUT)->kind,
			 BACH_FORMAT_BYU_GZ);
}

/* Each name finds its descriptor exactly the ways it goes. */
static void lookups(void **state)
{
	static const enum bach_format_dir dirs[] = { BACH_FORMAT_IN,
						     BACH_FORMAT_OUT };

	(void)state;
	for (size_t i = 0; bach_formats[i]; i++) {
		const struct bach_format *f = bach_formats[i];

		for (size_t d = 0; d < 2; d++) {
			const struct bach_format *want =
				bach_format_can(f, dirs[d]) ? f : NULL;

			assert_ptr_equal(bach_format_find(f->name, dirs[d]),
					 want);
			if (f->alias)
				assert_ptr_equal(
					bach_format_find(f->alias, dirs[d]),
					want);
		}
		if (f->kind == BACH_FORMAT_FOREIGN) {
			assert_int_equal(bach_format_can(f, BACH_FORMAT_IN),
					 f->line != NULL);
			assert_int_equal(bach_format_can(f, BACH_FORMAT_OUT),
					 f->write != NULL);
		}
	}
	assert_null(bach_format_find("", BACH_FORMAT_IN));
	assert_null(bach_format_find("BYU", BACH_FORMAT_IN));
}

/* An empty block writes nothing and skips nothing, in every export. */
static void empty_blocks(void **state)
{
	char dst[1] = { 'x' };
	uint8_t rec[BACH_REC_SIZE] = { 0 };

	(void)state;
	for (size_t i = 0; bach_formats[i]; i++) {
		const struct bach_format *f = bach_formats[i];
		struct bach_export_carry carry = { 0 };
		uint64_t skipped = 0;

		if (!f->write)
			continue;
		assert_int_equal(f->write(dst, rec, 0, 0, NULL, &skipped, NULL),
				 0);
		assert_int_equal(
			f->write(dst, rec, 0, 0, NULL, &skipped, &carry), 0);
		assert_int_equal(skipped, 0);
		assert_int_equal(dst[0], 'x');
	}
}

/*
 * What a format keeps, it keeps (bach diff --as): a trace's projection
 * through a format that goes both ways projects to itself, so a trace and
 * its export read back compare equal; byu keeps everything; the other
 * formats go BACH_FORMAT_BOTH exactly when they go both ways.
 */
static void projections(void **state)
{
	static const uint8_t bes[] = { 0x00, 0xff, 0x0f, 0xf0, 0x7e,
				       0xfe, 0x7f, 0xe7, 0xfc, 0x3f };
	enum { N = 16 * sizeof(bes) * 3 };
	static uint8_t recs[N * BACH_REC_SIZE], p1[N * 64 * BACH_REC_SIZE],
		p2[N * 64 * BACH_REC_SIZE];
	static char text[N * BACH_TEXT_MAX];
	size_t n = 0, kept = 0;

	(void)state;
	for (unsigned t = 0; t < 16; t++)
		for (size_t b = 0; b < sizeof(bes); b++)
			for (unsigned a = 0; a < 3; a++)
				bach_rec_put(recs + BACH_REC_SIZE * n++,
					     0x1000u + 8 * (a + b % 3) +
						     (a == 2 ? 0xfffe0000u : 0),
					     bes[b], (uint8_t)(t << 4));
	for (size_t i = 0; bach_formats[i]; i++) {
		const struct bach_format *f = bach_formats[i];
		struct bach_export_carry c1 = { 0 }, c2 = { 0 };
		const char *why = NULL;
		uint64_t at = 0;
		ssize_t m1, m2;

		assert_int_equal(bach_format_can(f, BACH_FORMAT_BOTH),
				 bach_format_can(f, BACH_FORMAT_IN) &&
					 bach_format_can(f, BACH_FORMAT_OUT));
		if (!bach_format_can(f, BACH_FORMAT_BOTH))
			continue;
		m1 = bach_format_project(f, recs, n, 0, text, p1, &c1, &at,
					 &why);
		assert_true(m1 >= 0);
		m2 = bach_format_project(f, p1, (size_t)m1, 0, text, p2, &c2,
					 &at, &why);
		assert_int_equal(m2, m1);
		assert_memory_equal(p1, p2, (size_t)m1 * BACH_REC_SIZE);
		if (f->kind != BACH_FORMAT_FOREIGN) {
			assert_int_equal(m1, n);
			assert_memory_equal(p1, recs, n * BACH_REC_SIZE);
		} else {
			assert_true(m1 > 0);
			kept++;
		}
	}
	assert_true(kept >= 6); /* din, dinx, laplace, laplace-bin, ... */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptors),
		cmocka_unit_test(lookups),
		cmocka_unit_test(empty_blocks),
		cmocka_unit_test(projections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
