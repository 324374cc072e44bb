// SPDX-License-Identifier: MIT
/*
 * The bus decoder's speed, in one process: 48-channel samples (6 bytes,
 * channel i = signal i of docs/design.md section 5) of the bach gen workload
 * played by the bus model, decoded whole several times; the best pass counts.
 * Case 4 has every signal (56 channels, 7 bytes: hlda, ahold, eads_n too)
 * on a bus with HOLD and inquires, the decoder's slow path at work.
 * Time is the thread's CPU time: the figure is per core, and a machine
 * shared with other jobs would otherwise lend it their load.
 * usage: busdecode [RECORDS [CASE]]   (CASE 1 to 4: only that one)
 * Prints one line per case: "NAME samples/s records/s".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bach/record.h"
#include "lib/bus/busdecode.h"
#include "lib/bus/busmodel.h"
#include "lib/bus/gen.h"

#define UNIT	 6
#define UNIT_ALL 7
#define PASSES	 5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ov 0: state mode, one sample per clock; else ov samples per clock. */
static uint8_t *samples(const uint64_t *clk, size_t nclk, unsigned ov,
			unsigned unit, size_t *ns)
{
	size_t per = ov ? ov : 1, n = nclk * per;
	uint8_t *s = malloc(n * unit), *p = s;

	if (!s)
		exit(1);
	for (size_t c = 0; c < nclk; c++)
		for (size_t k = 0; k < per; k++, p += unit) {
			bool high = ov && k >= per / 2;
			uint64_t w = high && c + 1 < nclk ? clk[c + 1] : clk[c];

			w = (w & ~1ull) | (high ? 1u : 0u);
			for (unsigned b = 0; b < unit; b++)
				p[b] = (uint8_t)(w >> (8 * b));
		}
	*ns = n;
	return s;
}

static void run(const char *name, const uint8_t *s, size_t ns, unsigned unit,
		bool clock, bool brdy, const uint8_t *want, size_t nwant)
{
	const char *names[UNIT_ALL * 8];
	struct bach_busmap map;
	struct bach_busdec_stats st;
	char err[256];
	size_t cap = 1 << 16;
	uint8_t *out = malloc(cap * BACH_REC_SIZE);
	uint64_t *at = malloc(cap * sizeof *at);
	double best = 1e30;
	size_t recs = 0;

	for (unsigned i = 0; i < unit * 8; i++)
		names[i] = i < BACH_NSIG ? bach_sig_name((int)i) : "unused";
	if (!clock)
		names[BACH_SIG_CLK] = "unused";
	if (!brdy) {
		names[BACH_SIG_BRDY] = names[BACH_SIG_NA] = "unused";
		names[BACH_SIG_KEN] = names[BACH_SIG_BOFF] = "unused";
	}
	if (!out ||
	    bach_busmap_resolve(&map, NULL, names, unit * 8, err, sizeof err)) {
		fprintf(stderr, "busdecode: %s\n", err);
		exit(1);
	}
	for (int pass = 0; pass < PASSES; pass++) {
		struct bach_busdec *d =
			bach_busdec_new(&map, unit, err, sizeof err);
		size_t off = 0, k = 0, used;
		double t0 = now(), t;
		bool same = true;

		while (off < ns) {
			size_t got =
				bach_busdec_feed(d, s + off * unit, ns - off,
						 &used, out, at, cap);

			/* check as we go, outside nothing but the memcmp */
			if (want && k + got <= nwant)
				same = same &&
				       !memcmp(out, want + k * 6, got * 6);
			k += got;
			off += used;
		}
		k += bach_busdec_finish(d, out, at, cap);
		t = now() - t0;
		bach_busdec_stats(d, &st);
		bach_busdec_free(d);
		if (want && (!same || k != nwant)) {
			fprintf(stderr, "busdecode: %s: wrong records\n", name);
			exit(1);
		}
		recs = k;
		if (t < best)
			best = t;
	}
	printf("%-34s %8.1f M samples/s %7.1f M records/s\n", name,
	       (double)ns / best / 1e6, (double)recs / best / 1e6);
	free(out);
	free(at);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 4000000;
	int only = argc > 2 ? atoi(argv[2]) : 0;
	struct bach_busmodel_opts plain = { .seed = 1, .max_wait = 1 };
	struct bach_busmodel_opts full = { .seed = 1,
					   .max_wait = 2,
					   .pipeline_pct = 20,
					   .boff_every = 500,
					   .ken_pct = 10 };
	struct bach_busmodel_opts all = full;
	struct bach_busmodel_stats ms;
	uint8_t *recs = malloc(n * BACH_REC_SIZE), *s, *truth;
	uint64_t *clk;
	size_t nclk, ns;
	struct bach_gen g;

	if (!recs)
		return 1;
	bach_gen_init(&g, 1);
	bach_gen_fill(&g, recs, n);

	nclk = bach_busmodel_run(recs, n, &plain, &clk);
	s = samples(clk, nclk, 0, UNIT, &ns);
	if (!only || only == 1)
		run("state mode, no BRDY# (fast path)", s, ns, UNIT, false,
		    false, recs, n);
	free(s);
	free(clk);

	nclk = bach_busmodel_run(recs, n, &full, &clk);
	s = samples(clk, nclk, 0, UNIT, &ns);
	if (!only || only == 2)
		run("state mode, 48 ch, BRDY#/KEN#/BOFF#", s, ns, UNIT, false,
		    true, recs, n);
	free(s);
	s = samples(clk, nclk, 4, UNIT, &ns);
	if (!only || only == 3)
		run("clock mode x4, 48 ch, BRDY#/KEN#", s, ns, UNIT, true, true,
		    recs, n);
	free(s);
	free(clk);

	all.hold_every = 500;
	all.snoop_every = 300;
	if (!only || only == 4) {
		nclk = bach_busmodel_play(recs, n, &all, &clk, &truth, &ms);
		if (!nclk)
			return 1;
		s = samples(clk, nclk, 0, UNIT_ALL, &ns);
		run("state mode, 56 ch, HOLD/AHOLD too", s, ns, UNIT_ALL, false,
		    true, truth, ms.truth);
		free(s);
		free(clk);
		free(truth);
	}
	free(recs);
	return 0;
}
