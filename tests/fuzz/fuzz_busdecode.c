// SPDX-License-Identifier: MIT
/*
 * The map file parser and the bus decoder. Input: a map file's text, a NUL,
 * one byte choosing the sample size and the channel names, then samples.
 * Whatever they hold: no crash, no read outside the samples, at most one
 * record per cycle opened, and the same records and counts whether the
 * samples come whole into a large output or one at a time into the
 * smallest. Map lines such as 'ken_n = low' switch cycle tracking on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "lib/bus/busdecode.h"

static size_t decode(const struct bach_busmap *map, unsigned unit,
		     const uint8_t *s, size_t n, size_t piece, size_t cap,
		     uint8_t *out, struct bach_busdec_stats *st)
{
	char err[256];
	struct bach_busdec *d = bach_busdec_new(map, unit, err, sizeof err);
	size_t k = 0, off = 0;
	uint64_t *at;

	if (!d)
		return SIZE_MAX;
	at = malloc((n + 2) * sizeof *at);
	CHECK(at, "out of memory");
	while (off < n) {
		size_t want = n - off < piece ? n - off : piece, used;

		k += bach_busdec_feed(d, s + off * unit, want, &used,
				      out + k * 6, at + k, cap);
		CHECK(used <= want, "used %zu of %zu", used, want);
		CHECK(used > 0 || cap < 2, "no progress");
		off += used;
	}
	for (size_t m;
	     (m = bach_busdec_finish(d, out + k * 6, at + k, cap)) > 0;)
		k += m;
	/* records leave in the order of their ADS#, each from a sample fed */
	for (size_t j = 0; j < k; j++)
		CHECK(at[j] < n && (!j || at[j] >= at[j - 1]),
		      "record %zu: sample %llu", j, (unsigned long long)at[j]);
	free(at);
	bach_busdec_stats(d, st);
	bach_busdec_free(d);
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	static char names_buf[128][8];
	const char *names[128];
	struct bach_mapspec spec;
	struct bach_busmap map;
	struct bach_busdec_stats a, b;
	unsigned unit, sel;
	size_t n, ka, kb;
	uint8_t *oa, *ob;
	char err[1024];

	if (!nul || nul + 2 > data + size)
		return 0;
	if (bach_mapspec_load(&spec, fuzz_put_file(data, (size_t)(nul - data)),
			      err, sizeof err))
		return 0;
	sel = nul[1];
	unit = 1 + sel % 8;
	/* channels: default names, or c0 c1 ... for a map to name */
	for (unsigned i = 0; i < unit * 8; i++) {
		snprintf(names_buf[i], sizeof names_buf[i], "c%u", i);
		names[i] = (sel & 0x80) && i < BACH_NSIG ? bach_sig_name((int)i)
							 : names_buf[i];
	}
	if (bach_busmap_resolve(&map, &spec, names, unit * 8, err,
				sizeof err)) {
		bach_mapspec_free(&spec);
		return 0;
	}
	bach_mapspec_free(&spec);
	map.ads_edge = sel & 0x40;
	n = (size - (size_t)(nul + 2 - data)) / unit;
	oa = malloc(n * 6 + 12);
	ob = malloc(n * 6 + 12);
	CHECK(oa && ob, "out of memory");
	ka = decode(&map, unit, nul + 2, n, SIZE_MAX, n + 2, oa, &a);
	kb = decode(&map, unit, nul + 2, n, 1, 2, ob, &b);
	if (ka != SIZE_MAX) {
		CHECK(ka == kb, "%zu records whole, %zu in pieces", ka, kb);
		CHECK(!memcmp(oa, ob, ka * 6), "records differ");
		CHECK(a.records == ka, "stats say %llu, %zu out",
		      (unsigned long long)a.records, ka);
		CHECK(ka <= a.cycles, "%zu records from %llu cycles", ka,
		      (unsigned long long)a.cycles);
		CHECK(a.samples == n, "samples %llu of %zu",
		      (unsigned long long)a.samples, n);
		CHECK(a.off_bus_clocks <= a.clocks &&
			      a.inquire_addr <= a.cycles,
		      "off the bus %llu of %llu clocks, %llu inquire addresses of %llu cycles",
		      (unsigned long long)a.off_bus_clocks,
		      (unsigned long long)a.clocks,
		      (unsigned long long)a.inquire_addr,
		      (unsigned long long)a.cycles);
		CHECK(a.off_bus == b.off_bus && a.backoffs == b.backoffs &&
			      a.inquire_unsure == b.inquire_unsure &&
			      a.boff_unsure == b.boff_unsure,
		      "counts differ whole and in pieces");
		CHECK(a.inquire_unsure <= a.inquire_addr &&
			      a.boff_unsure <= 2 * a.backoffs,
		      "%llu unsure of %llu inquire addresses, %llu perhaps repeated for %llu back-offs",
		      (unsigned long long)a.inquire_unsure,
		      (unsigned long long)a.inquire_addr,
		      (unsigned long long)a.boff_unsure,
		      (unsigned long long)a.backoffs);
		for (size_t i = 0; i < ka; i++)
			CHECK((oa[i * 6 + 3] & 7) == 0 &&
				      (oa[i * 6 + 5] & 15) == 0,
			      "record %zu: bits below A3 or the control nibble set",
			      i);
	}
	free(oa);
	free(ob);
	return 0;
}
