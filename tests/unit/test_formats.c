// SPDX-License-Identifier: MIT
/*
 * bach_formats[], the one list of the formats bach convert reads and
 * writes: every descriptor is whole and consistent, and the lookups find
 * each by its name (and alias) exactly the ways it goes.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(descriptors),
		cmocka_unit_test(lookups),
		cmocka_unit_test(empty_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
