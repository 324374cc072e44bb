// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the cache simulator (lib/analysis/cachesim.h) on any
 * records. Byte 0 picks one of the hierarchies below (every policy, split and
 * unified L1, hashed and searched sets, lines that split references, a
 * TLB); the rest is records, cut to whole ones.
 *
 * Checks: the records are references, skipped records or flushes; no
 * cache misses more than it fetches, per kind; L1 fetches are the
 * references plus their splits; whole lines are read from below; the
 * TLB looks up every reference; and the counts are the same when the
 * records come in one block or in two.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/cachesim.h"

#include "fuzz_check.h"

static const char *const configs[][6] = {
	/* l1i, l1d, l1, l2, l3, tlb */
	{ "1k:32:2", "1k:32:2", NULL, "8k:32:4", NULL, "8:2" },
	{ NULL, NULL, "512:4:full", "2k:8:2:wt", "8k:64:4:nwa", NULL },
	{ NULL, NULL, "1k:16:4:fifo:wt:nwa", "4k:64:8:random", NULL, "4:full" },
	{ "256:32:full:random", "768:32:3:lru:wb:nwa", NULL, NULL, NULL, NULL },
	{ NULL, NULL, "2k:64:32:fifo", "6k:32:3:random:wt", "32k:128:full",
	  "16:4" },
	{ "64:8:1", "64:8:1:wt", NULL, "128:4:full:random:nwa", NULL, NULL },
};
#define NCONFIGS (sizeof(configs) / sizeof(*configs))

static struct bach_sim *make(unsigned pick)
{
	struct bach_sim_config cfg;
	struct bach_sim *s;
	char why[200];

	memset(&cfg, 0, sizeof(cfg));
	cfg.seed = pick;
	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		const char *t = configs[pick][i];

		if (!t)
			continue;
		if (i == BACH_SIM_TLB)
			CHECK(!bach_tlb_spec_parse(t, &cfg.spec[i], why,
						   sizeof(why)),
			      "%s: %s", t, why);
		else
			CHECK(!bach_cache_spec_parse(t, &cfg.spec[i], why,
						     sizeof(why)),
			      "%s: %s", t, why);
		cfg.have[i] = true;
	}
	CHECK(!bach_sim_new(&s, &cfg, why, sizeof(why)), "config %u: %s", pick,
	      why);
	return s;
}

static uint64_t sum(const uint64_t *v)
{
	return v[0] + v[1] + v[2];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bach_sim *one, *two;
	struct bach_sim_totals t;
	unsigned pick;
	size_t n, half;
	uint64_t l1 = 0, mb = 0;

	if (size < 1)
		return 0;
	pick = data[0] % NCONFIGS;
	n = (size - 1) / BACH_REC_SIZE;
	half = n / 2;
	one = make(pick);
	two = make(pick);
	bach_sim_add(one, data + 1, n);
	bach_sim_add(two, data + 1, half);
	bach_sim_add(two, data + 1 + half * BACH_REC_SIZE, n - half);
	bach_sim_finish(one);
	bach_sim_finish(two);

	bach_sim_get_totals(one, &t);
	CHECK(t.records == n && t.refs + t.skipped + t.flushes == n,
	      "records %llu refs %llu skipped %llu flushes %llu",
	      (unsigned long long)t.records, (unsigned long long)t.refs,
	      (unsigned long long)t.skipped, (unsigned long long)t.flushes);
	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		const struct bach_cache_stats *a = bach_sim_stats(one, i);
		const struct bach_cache_stats *b = bach_sim_stats(two, i);
		struct bach_cache_spec c;
		char why[200];

		if (!a)
			continue;
		CHECK(!memcmp(a, b, sizeof(*a)),
		      "%s: counts differ in two blocks",
		      bach_sim_cache_names[i]);
		for (int k = 0; k < BACH_REF_NKINDS; k++)
			CHECK(a->miss[k] <= a->fetch[k],
			      "%s: %llu misses of %llu",
			      bach_sim_cache_names[i],
			      (unsigned long long)a->miss[k],
			      (unsigned long long)a->fetch[k]);
		if (i == BACH_SIM_TLB) {
			CHECK(sum(a->fetch) == t.refs, "tlb: %llu lookups",
			      (unsigned long long)sum(a->fetch));
			continue;
		}
		bach_cache_spec_parse(configs[pick][i], &c, why, sizeof(why));
		CHECK(a->bytes_read % c.line == 0, "%s: %llu bytes read",
		      bach_sim_cache_names[i],
		      (unsigned long long)a->bytes_read);
		if (i <= BACH_SIM_L1) {
			l1 += sum(a->fetch);
			mb += a->multiblock;
		}
	}
	CHECK(l1 == t.refs + mb, "L1 fetched %llu for %llu references",
	      (unsigned long long)l1, (unsigned long long)t.refs);
	bach_sim_free(one);
	bach_sim_free(two);
	return 0;
}
