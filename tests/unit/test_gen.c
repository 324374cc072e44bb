// SPDX-License-Identifier: MIT
/* The synthetic workload: deterministic, independent of block sizes, valid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bach/record.h"
#include "lib/analysis/stats.h"
#include "lib/bus/gen.h"

#define N 200000

static void same_seed_same_stream(void **state)
{
	uint8_t *a = malloc(N * 6), *b = malloc(N * 6);
	struct bach_gen g;
	size_t off = 0, step = 1;

	(void)state;
	bach_gen_init(&g, 42);
	bach_gen_fill(&g, a, N);
	/* the same stream in ragged pieces: 1, 2, 3, ... records at a time */
	bach_gen_init(&g, 42);
	while (off < N) {
		size_t k = step < N - off ? step : N - off;

		bach_gen_fill(&g, b + off * 6, k);
		off += k;
		step = step % 97 + 1;
	}
	assert_memory_equal(a, b, N * 6);
	bach_gen_init(&g, 43);
	bach_gen_fill(&g, b, N);
	assert_memory_not_equal(a, b, 600);
	free(a);
	free(b);
}

static void workload_has_everything(void **state)
{
	uint8_t *a = malloc(N * 6);
	static struct bach_stats st;
	struct bach_summary m;
	struct bach_gen g;

	(void)state;
	bach_gen_init(&g, 1);
	bach_gen_fill(&g, a, N);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(bach_rec_check(a + i * 6), 0);
	assert_int_equal(bach_stats_init(&st), 0);
	bach_stats_add(&st, a, N);
	bach_stats_summary(&st, &m);
	assert_int_equal(m.records, N);
	assert_int_equal(m.invalid, 0);
	/* every kind of traffic the workload promises shows up */
	for (unsigned t = 0; t < BACH_NTYPES; t++)
		if (bach_type_valid(t))
			assert_true(m.by_type[t] > 0);
	assert_true(m.special[BACH_SP_HALT] > 0);
	assert_true(m.special[BACH_SP_FLUSH] > 0);
	assert_true(m.special[BACH_SP_BTM] > 0);
	assert_true(m.special[BACH_SP_STOP_GRANT] > 0);
	assert_int_equal(m.by_type[BACH_T_INT_ACK] % 2, 0); /* pairs */
	assert_true(m.bytes_hist[1] && m.bytes_hist[2] && m.bytes_hist[4] &&
		    m.bytes_hist[8]);
	bach_stats_free(&st);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_seed_same_stream),
		cmocka_unit_test(workload_has_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
