// SPDX-License-Identifier: MIT
/*
 * The bus decoder against the bus model: whatever the timing (wait states,
 * bursts, NA# pipelining, BOFF# restarts, KEN# refusals), in state and in
 * clock mode, fed whole or in ragged pieces, decoding the model's pins gives
 * back exactly the records the model played. And the map files: every
 * mistake is named with its line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bach/busdecode.h"
#include "bach/busmodel.h"
#include "bach/gen.h"
#include "bach/record.h"

#define N 20000
#define UNIT 6	/* 48 channels: every signal but hlda */

static uint8_t *gen(size_t n, uint64_t seed)
{
	uint8_t *r = malloc(n * BACH_REC_SIZE);
	struct bach_gen g;

	assert_non_null(r);
	bach_gen_init(&g, seed);
	bach_gen_fill(&g, r, n);
	return r;
}

/*
 * Samples, channel i = signal i. ov == 0: state mode, one sample per clock
 * and channel 0 (clk) low. Otherwise ov samples per clock, clk low for the
 * first half; the pins change at the rising edge, as a bus's outputs do.
 */
static uint8_t *samples(const uint64_t *clk, size_t nclk, unsigned ov,
			size_t *ns)
{
	size_t per = ov ? ov : 1, n = nclk * per;
	uint8_t *s = malloc(n * UNIT), *p = s;

	assert_non_null(s);
	for (size_t c = 0; c < nclk; c++)
		for (size_t k = 0; k < per; k++, p += UNIT) {
			uint64_t w = clk[c];
			bool high = ov && k >= per / 2;

			if (high && c + 1 < nclk)
				w = clk[c + 1];
			w &= ~1ull;
			if (high)
				w |= 1;
			for (unsigned b = 0; b < UNIT; b++)
				p[b] = (uint8_t)(w >> (8 * b));
		}
	*ns = n;
	return s;
}

/* Channel names: the defaults, with `drop` (a bit mask of signals) unnamed. */
static const char **names_without(uint64_t drop)
{
	static char other[UNIT * 8][16];
	static const char *names[UNIT * 8];

	for (int i = 0; i < UNIT * 8; i++) {
		snprintf(other[i], sizeof other[i], "other%d", i);
		names[i] = drop >> i & 1 ? other[i] : bach_sig_name(i);
	}
	return names;
}

#define SIG(s) (1ull << (s))
static bool edge_mode;	/* decode() opens cycles where ADS# falls */
#define TRACKING (SIG(BACH_SIG_BRDY) | SIG(BACH_SIG_NA) | SIG(BACH_SIG_KEN) | SIG(BACH_SIG_BOFF))

/* Decode in pieces of `piece` samples into an output of `cap` records. */
static uint8_t *decode(const uint8_t *s, size_t ns, uint64_t drop,
		       size_t piece, size_t cap, size_t *nrec,
		       struct bach_busdec_stats *st)
{
	struct bach_busmap map;
	struct bach_busdec *d;
	char err[512];
	uint8_t *out = malloc((ns + 8) * BACH_REC_SIZE);
	size_t k = 0, off = 0;

	assert_non_null(out);
	assert_int_equal(bach_busmap_resolve(&map, NULL, names_without(drop),
					     UNIT * 8, err, sizeof err),
			 0);
	map.ads_edge = edge_mode;
	d = bach_busdec_new(&map, UNIT, err, sizeof err);
	assert_non_null(d);
	while (off < ns) {
		size_t want = ns - off < piece ? ns - off : piece, used;

		k += bach_busdec_feed(d, s + off * UNIT, want, &used,
				      out + k * BACH_REC_SIZE, cap);
		assert_true(used <= want);
		assert_true(used > 0);
		off += used;
	}
	for (size_t m; (m = bach_busdec_finish(d, out + k * BACH_REC_SIZE,
					       cap)) > 0;)
		k += m;
	bach_busdec_stats(d, st);
	bach_busdec_free(d);
	*nrec = k;
	return out;
}

static void round_trip(const struct bach_busmodel_opts *o, unsigned ov,
		       uint64_t drop, size_t piece, size_t cap)
{
	uint8_t *recs = gen(N, o->seed), *s, *out;
	uint64_t *clk;
	size_t nclk = bach_busmodel_run(recs, N, o, &clk), ns, nrec;
	struct bach_busdec_stats st;

	assert_true(nclk > 2 * N);
	s = samples(clk, nclk, ov, &ns);
	out = decode(s, ns, drop, piece, cap, &nrec, &st);
	assert_int_equal(nrec, N);
	assert_int_equal(st.records, N);
	assert_int_equal(st.unfinished, 0);
	assert_int_equal(st.stray_brdy, 0);
	assert_int_equal(st.overlapped, 0);
	assert_int_equal(st.clocks, nclk);
	if (o->boff_every && !(drop & SIG(BACH_SIG_BRDY)))
		assert_int_equal(st.aborted, N / o->boff_every);
	for (size_t i = 0; i < N; i++)
		if (memcmp(out + i * 6, recs + i * 6, 6)) {
			fail_msg("record %zu: %02x%02x%02x%02x %02x %02x, "
				 "played %02x%02x%02x%02x %02x %02x",
				 i, out[i * 6], out[i * 6 + 1], out[i * 6 + 2],
				 out[i * 6 + 3], out[i * 6 + 4], out[i * 6 + 5],
				 recs[i * 6], recs[i * 6 + 1], recs[i * 6 + 2],
				 recs[i * 6 + 3], recs[i * 6 + 4],
				 recs[i * 6 + 5]);
		}
	free(recs);
	free(clk);
	free(s);
	free(out);
}

static const struct bach_busmodel_opts top_rate = { .seed = 1 };
static const struct bach_busmodel_opts everything = {
	.seed = 7, .max_wait = 3, .pipeline_pct = 40, .boff_every = 37,
	.ken_pct = 30,
};

static void state_mode_top_rate(void **state)
{
	(void)state;
	round_trip(&top_rate, 0, SIG(BACH_SIG_CLK), SIZE_MAX, N + 8);
}

static void state_mode_without_brdy(void **state)
{
	/* plain timing: with no BRDY#, each ADS# is a record at once */
	struct bach_busmodel_opts o = { .seed = 3, .max_wait = 2,
					.pipeline_pct = 50 };

	(void)state;
	round_trip(&o, 0, TRACKING | SIG(BACH_SIG_CLK), SIZE_MAX, N + 8);
	round_trip(&o, 0, TRACKING | SIG(BACH_SIG_CLK), 7, 3);
}

static void state_mode_everything(void **state)
{
	(void)state;
	round_trip(&everything, 0, SIG(BACH_SIG_CLK), SIZE_MAX, N + 8);
}

static void clock_mode_everything(void **state)
{
	(void)state;
	round_trip(&everything, 4, 0, SIZE_MAX, N + 8);
	round_trip(&everything, 2, 0, SIZE_MAX, N + 8);
	/* clock mode without BRDY#: plain timing */
	struct bach_busmodel_opts o = { .seed = 3, .max_wait = 2,
					.pipeline_pct = 50 };

	round_trip(&o, 6, TRACKING, SIZE_MAX, N + 8);
}

/* On a Pentium bus ADS# lasts one clock: edge mode gives the same records,
 * with and without BRDY#, in both modes. */
static void edge_mode_same_records(void **state)
{
	struct bach_busmodel_opts o = { .seed = 9, .max_wait = 2,
					.pipeline_pct = 40 };

	(void)state;
	edge_mode = true;
	round_trip(&o, 4, TRACKING, SIZE_MAX, N + 8);
	round_trip(&o, 0, TRACKING | SIG(BACH_SIG_CLK), 5, 3);
	round_trip(&everything, 4, 0, 7, 2);
	round_trip(&everything, 0, SIG(BACH_SIG_CLK), SIZE_MAX, N + 8);
	edge_mode = false;
}

static void ragged_pieces_and_small_output(void **state)
{
	(void)state;
	/* the edge's previous sample lies in the previous piece */
	round_trip(&everything, 4, 0, 1, 2);
	round_trip(&everything, 4, 0, 5, 3);
	round_trip(&everything, 0, SIG(BACH_SIG_CLK), 3, 2);
}

/* Without KEN# and BOFF#, their effects cannot be seen: the decoder must
 * not pretend. A refused read then looks cacheable. */
static void missing_ken_is_not_guessed(void **state)
{
	struct bach_busmodel_opts o = { .seed = 5, .ken_pct = 100 };
	uint8_t *recs = gen(N, 5), *s, *out;
	uint64_t *clk;
	size_t nclk = bach_busmodel_run(recs, N, &o, &clk), ns, nrec;
	struct bach_busdec_stats st;
	size_t differ = 0;

	(void)state;
	s = samples(clk, nclk, 0, &ns);
	out = decode(s, ns, SIG(BACH_SIG_CLK) | TRACKING, SIZE_MAX, N + 8,
		     &nrec, &st);
	assert_int_equal(nrec, N);
	for (size_t i = 0; i < N; i++)
		if (memcmp(out + i * 6, recs + i * 6, 6)) {
			/* only the CACHE# bit of a refused read */
			assert_int_equal(out[i * 6 + 5] ^ recs[i * 6 + 5],
					 BACH_CTL_CACHE);
			differ++;
		}
	assert_true(differ > 0);
	free(out);
	/* with KEN# and BRDY#, the refusals are seen and counted */
	out = decode(s, ns, SIG(BACH_SIG_CLK), SIZE_MAX, N + 8, &nrec, &st);
	assert_memory_equal(out, recs, N * 6);
	assert_int_equal(st.ken_uncached, differ);
	free(recs);
	free(clk);
	free(s);
	free(out);
}

static void open_cycle_at_the_end(void **state)
{
	/* ADS# at the last clock: no BRDY# ever comes */
	const char *names[8] = { "x", "ads_n", "brdy_n", "mio", "dc", "wr",
				 "a3", "cache_n" };
	struct bach_busmap map;
	struct bach_busdec_stats st;
	struct bach_busdec *d;
	uint8_t s[3] = { 0xff & ~0x40, 0xff & ~0x04, 0xff & ~0x02 }, out[12];
	char err[256];
	size_t used;

	(void)state;
	assert_int_equal(bach_busmap_resolve(&map, NULL, names, 8, err,
					     sizeof err),
			 0);
	d = bach_busdec_new(&map, 1, err, sizeof err);
	assert_non_null(d);
	/* clock 0: idle; 1: stray BRDY#; 2: ADS# */
	assert_int_equal(bach_busdec_feed(d, s, 3, &used, out, 2), 0);
	assert_int_equal(used, 3);
	assert_int_equal(bach_busdec_finish(d, out, 2), 1);
	bach_busdec_stats(d, &st);
	assert_int_equal(st.unfinished, 1);
	assert_int_equal(st.stray_brdy, 1);
	/* a3 was high at ADS#; mio, dc, wr, cache_n high: D_WRITE */
	assert_int_equal(out[3], 0x08);
	assert_int_equal(out[5], 0xf0);
	bach_busdec_free(d);
}

/* ---- map files ------------------------------------------------------------ */

static char mapfile[64];

static int write_map(const char *text)
{
	FILE *f;

	strcpy(mapfile, "/tmp/bach-map-XXXXXX");
	int fd = mkstemp(mapfile);

	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return 0;
}

static void map_error(const char *text, const char *const *names, size_t n,
		      const char *want)
{
	struct bach_mapspec spec;
	struct bach_busmap map;
	char err[512], expect[128];
	int rc;

	assert_int_equal(write_map(text), 0);
	rc = bach_mapspec_load(&spec, mapfile, err, sizeof err);
	if (rc == 0) {
		rc = bach_busmap_resolve(&map, &spec, names, n, err,
					 sizeof err);
		bach_mapspec_free(&spec);
	}
	unlink(mapfile);
	assert_int_equal(rc, -1);
	/* want: the message, "FILE" standing for the map file's name */
	const char *at = strstr(want, "FILE");

	if (at)
		snprintf(expect, sizeof expect, "%.*s%s%s", (int)(at - want),
			 want, mapfile, at + 4);
	else
		snprintf(expect, sizeof expect, "%s", want);
	if (!strstr(err, expect))
		fail_msg("error '%s' lacks '%s'", err, expect);
}

static const char *const kc85[] = { "CLK", "/M1", "A3", "A4", "/MREQ",
				    "D0" };

static void map_files(void **state)
{
	struct bach_mapspec spec;
	struct bach_busmap map;
	char err[512], desc[1024];

	(void)state;
	assert_int_equal(write_map("# a Z80 as a Pentium\n"
				   "ads_n = /M1   # one record per M1\n"
				   "\n  a3=A3\n"
				   "A4 = A4\n"
				   "dc = low\n"
				   "mio = HIGH\n"),
			 0);
	assert_int_equal(bach_mapspec_load(&spec, mapfile, err, sizeof err),
			 0);
	unlink(mapfile);
	assert_int_equal(spec.n, 5);
	assert_int_equal(bach_busmap_resolve(&map, &spec, kc85, 6, err,
					     sizeof err),
			 0);
	bach_mapspec_free(&spec);
	assert_int_equal(map.chan[BACH_SIG_ADS], 1);
	assert_int_equal(map.chan[BACH_SIG_A3], 2);
	assert_int_equal(map.chan[BACH_SIG_A3 + 1], 3);
	/* clk by its default name, case aside */
	assert_int_equal(map.chan[BACH_SIG_CLK], 0);
	assert_int_equal(map.chan[BACH_SIG_DC], -1);
	assert_int_equal(map.level[BACH_SIG_DC], 0);
	assert_int_equal(map.level[BACH_SIG_MIO], 1);
	bach_busmap_describe(&map, desc, sizeof desc);
	assert_non_null(strstr(desc, "clock mode"));
	assert_non_null(strstr(desc, " a5-a31=0"));
	assert_non_null(strstr(desc, " mio=1 dc-wr=0 cache_n=1 ken_n=0\n"));
	assert_non_null(strstr(desc, "brdy_n not captured"));

	map_error("ads_n = /M1\nbogus = A3\n", kc85, 6,
		  "FILE:2: unknown signal 'bogus'");
	map_error("ads_n /M1\n", kc85, 6, "FILE:1: expected 'signal = channel'");
	map_error("ads_n =\n", kc85, 6, "FILE:1: expected a channel name");
	map_error("ads_n = /M1\n\nads_n = CLK\n", kc85, 6,
		  "FILE:3: ads_n already mapped on line 1");
	map_error("ads_n = /M1\na5 = A5\n", kc85, 6,
		  "FILE:2: a5 = A5: the capture has no channel 'A5'");
	map_error("a3 = A3\n", kc85, 6, "ads_n is not captured");
	assert_int_equal(bach_mapspec_load(&spec, "/nonexistent/map", err,
					   sizeof err),
			 -1);
	assert_non_null(strstr(err, "/nonexistent/map: No such file"));
}

static void channel_beyond_sample(void **state)
{
	const char *names[16] = { [12] = "ads_n" };
	struct bach_busmap map;
	char err[256];

	(void)state;
	assert_int_equal(bach_busmap_resolve(&map, NULL, names, 16, err,
					     sizeof err),
			 0);
	assert_null(bach_busdec_new(&map, 1, err, sizeof err));
	assert_non_null(strstr(err, "ads_n is channel 12"));
	assert_null(bach_busdec_new(&map, 0, err, sizeof err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(state_mode_top_rate),
		cmocka_unit_test(state_mode_without_brdy),
		cmocka_unit_test(state_mode_everything),
		cmocka_unit_test(clock_mode_everything),
		cmocka_unit_test(ragged_pieces_and_small_output),
		cmocka_unit_test(edge_mode_same_records),
		cmocka_unit_test(missing_ken_is_not_guessed),
		cmocka_unit_test(open_cycle_at_the_end),
		cmocka_unit_test(map_files),
		cmocka_unit_test(channel_beyond_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
