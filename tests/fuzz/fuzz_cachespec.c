// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bach_cache_spec_parse(), bach_tlb_spec_parse(),
 * bach_parse_bytes() and bach_mrc_parse_sizes(), the parsers of bach
 * sim's, bach mrc's and bach plot's options.
 * The input, up to its first NUL, is the text.
 *
 * Checks: an accepted SPEC describes a cache bach_sim_new() builds (LINE a
 * power of two in range, SIZE a multiple of LINE x ASSOC, at most
 * BACH_SIM_MAX_LINES lines, "full" exactly when ASSOC is SIZE / LINE by
 * that word), and describes itself in a bounded line; a refused one is
 * -EINVAL with a reason; a byte count is what its digits and suffix say;
 * an accepted size list is ascending, 1 to BACH_MRC_MAX_SIZES sizes of at
 * most 4 GiB, each what bach_parse_bytes() reads its item as.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/cachesim.h"
#include "lib/analysis/mrc.h"

#include "fuzz_check.h"

static void check_cache(const struct bach_cache_spec *c, const char *text)
{
	uint64_t lines = c->size / c->line;
	char desc[160];

	CHECK(c->line >= BACH_SIM_MIN_LINE && c->line <= BACH_SIM_MAX_LINE &&
		      !(c->line & (c->line - 1)),
	      "'%s': line %u", text, c->line);
	CHECK(c->assoc >= 1 && lines % c->assoc == 0 && c->size % c->line == 0,
	      "'%s': size %llu line %u assoc %u", text,
	      (unsigned long long)c->size, c->line, c->assoc);
	CHECK(lines >= 1 && lines <= BACH_SIM_MAX_LINES, "'%s': %llu lines",
	      text, (unsigned long long)lines);
	CHECK(!c->full || c->assoc == lines, "'%s': full but %u ways", text,
	      c->assoc);
	CHECK(c->repl <= BACH_REPL_RANDOM, "'%s': policy %d", text, c->repl);
	bach_cache_spec_describe(c, desc, sizeof(desc));
	CHECK(strlen(desc) < sizeof(desc) - 1, "'%s': description cut", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bach_cache_spec c;
	char *text = malloc(size + 1), why[200];
	uint64_t v;
	int err;

	CHECK(text, "out of memory");
	memcpy(text, data, size);
	text[size] = 0;

	why[0] = 0;
	err = bach_cache_spec_parse(text, &c, why, sizeof(why));
	if (err) {
		CHECK(err == -EINVAL && why[0], "'%s': %d without a reason",
		      text, err);
	} else {
		CHECK(strncmp(text, ":", 1), "'%s' accepted", text);
		check_cache(&c, text);
		if (c.full)
			CHECK(strstr(text, ":full"), "'%s': full unasked",
			      text);
	}

	why[0] = 0;
	err = bach_tlb_spec_parse(text, &c, why, sizeof(why));
	if (err) {
		CHECK(err == -EINVAL && why[0], "tlb '%s': %d without a reason",
		      text, err);
	} else {
		check_cache(&c, text);
		CHECK(c.line == BACH_TLB_PAGE, "tlb '%s': page %u", text,
		      c.line);
	}

	if (!bach_parse_bytes(text, &v)) {
		size_t n = strspn(text, "0123456789");
		uint64_t digits = strtoull(text, NULL, 10);
		unsigned shift = 0;

		CHECK(n >= 1 && n + 1 >= strlen(text), "'%s' accepted", text);
		if (text[n])
			shift = strchr("kK", text[n])	? 10
				: strchr("mM", text[n]) ? 20
							: 30;
		CHECK(v == digits << shift && v <= (1ull << 40),
		      "'%s' read as %llu", text, (unsigned long long)v);
	}
	{
		uint64_t sizes[BACH_MRC_MAX_SIZES], one;
		char *copy = strdup(text), *save = NULL, *t;
		int n;

		CHECK(copy, "out of memory");
		why[0] = 0;
		n = bach_mrc_parse_sizes(text, NULL, NULL, sizes, why,
					 sizeof(why));
		if (n < 0) {
			CHECK(n == -EINVAL && why[0], "sizes '%s': %d", text,
			      n);
		} else {
			CHECK(n >= 1 && n <= BACH_MRC_MAX_SIZES,
			      "sizes '%s': %d", text, n);
			t = strtok_r(copy, ",", &save);
			for (int i = 0; i < n;
			     i++, t = strtok_r(NULL, ",", &save)) {
				CHECK(t && !bach_parse_bytes(t, &one) &&
					      one == sizes[i],
				      "sizes '%s': item %d", text, i);
				CHECK(sizes[i] &&
					      sizes[i] <= BACH_MRC_MAX_SIZE &&
					      (!i || sizes[i] > sizes[i - 1]),
				      "sizes '%s': %d not ascending", text, i);
			}
			CHECK(!t, "sizes '%s': more items than sizes", text);
		}
		free(copy);
	}
	free(text);
	return 0;
}
