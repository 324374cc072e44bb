// SPDX-License-Identifier: MIT
/*
 * lib/analysis/cachesim.h: SPEC parsing, and small hierarchies worked by hand
 * from Dinero IV's rules (its man page d4.3 and ref.c, as docs/analysis.md
 * section 2 restates them). tests/cli/analysis_sim.sh checks whole traces
 * against the Python model in tests/models/.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/analysis/cachesim.h"

#define RD 0xc0 /* D_READ */
#define WR 0xf0 /* D_WRITE */
#define IF 0x80 /* I_FETCH */
#define IO 0x50 /* IO_READ */

static uint8_t recs[64 * BACH_REC_SIZE];
static size_t nrecs;

static void put(uint32_t addr, uint8_t be, uint8_t ctl)
{
	bach_rec_put(recs + nrecs++ * BACH_REC_SIZE, addr, be, ctl);
}

static void gap(uint32_t lost)
{
	put(lost, 0xff, BACH_GAP_CTL);
}

/* Simulate recs with cfg; the caller frees. */
static struct bach_sim *run(struct bach_sim_config *cfg)
{
	struct bach_sim *s;
	char why[200] = "";

	assert_int_equal(bach_sim_new(&s, cfg, why, sizeof(why)), 0);
	bach_sim_add(s, recs, nrecs);
	bach_sim_finish(s);
	return s;
}

static void spec(struct bach_sim_config *cfg, enum bach_sim_cache c,
		 const char *text)
{
	char why[200] = "";

	if (c == BACH_SIM_TLB)
		assert_int_equal(bach_tlb_spec_parse(text, &cfg->spec[c], why,
						     sizeof(why)),
				 0);
	else
		assert_int_equal(bach_cache_spec_parse(text, &cfg->spec[c], why,
						       sizeof(why)),
				 0);
	cfg->have[c] = true;
}

static int reset(void **state)
{
	(void)state;
	nrecs = 0;
	return 0;
}

static void test_parse_bytes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(bach_parse_bytes("16k", &v), 0);
	assert_int_equal(v, 16384);
	assert_int_equal(bach_parse_bytes("3M", &v), 0);
	assert_int_equal(v, 3u << 20);
	assert_int_equal(bach_parse_bytes("1G", &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(bach_parse_bytes("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(bach_parse_bytes("", &v), -EINVAL);
	assert_int_equal(bach_parse_bytes("k", &v), -EINVAL);
	assert_int_equal(bach_parse_bytes("16kb", &v), -EINVAL);
	assert_int_equal(bach_parse_bytes("-1", &v), -EINVAL);
	assert_int_equal(bach_parse_bytes("1.5k", &v), -EINVAL);
	assert_int_equal(bach_parse_bytes("2048G", &v), -EINVAL);
	assert_int_equal(bach_parse_bytes("99999999999999999999", &v), -EINVAL);
}

static void test_spec(void **state)
{
	struct bach_cache_spec c;
	char why[200];

	(void)state;
	assert_int_equal(
		bach_cache_spec_parse("16k:32:4", &c, why, sizeof(why)), 0);
	assert_int_equal(c.size, 16384);
	assert_int_equal(c.line, 32);
	assert_int_equal(c.assoc, 4);
	assert_false(c.full);
	assert_int_equal(c.repl, BACH_REPL_LRU);
	assert_false(c.write_through);
	assert_false(c.no_allocate);
	assert_int_equal(bach_cache_spec_parse("1M:64:full:random:wt:nwa", &c,
					       why, sizeof(why)),
			 0);
	assert_true(c.full);
	assert_int_equal(c.assoc, 16384);
	assert_int_equal(c.repl, BACH_REPL_RANDOM);
	assert_true(c.write_through);
	assert_true(c.no_allocate);
	assert_int_equal(bach_cache_spec_parse("24k:32:3:nwa:fifo", &c, why,
					       sizeof(why)),
			 0);
	assert_int_equal(c.repl, BACH_REPL_FIFO);
	assert_true(c.no_allocate);

	assert_int_equal(
		bach_cache_spec_parse("16k:32:3", &c, why, sizeof(why)),
		-EINVAL);
	assert_string_equal(
		why, "SIZE 16384 is not a multiple of LINE x ASSOC (96)");
	assert_int_equal(
		bach_cache_spec_parse("16k:24:4", &c, why, sizeof(why)),
		-EINVAL);
	assert_string_equal(
		why, "LINE 24 is not a power of two from 4 to 65536 bytes");
	assert_int_equal(
		bach_cache_spec_parse("16k:32:4:wt:wb", &c, why, sizeof(why)),
		-EINVAL);
	assert_string_equal(why, "two write policies ('wb')");
	assert_int_equal(
		bach_cache_spec_parse("16k:32:4:lru:", &c, why, sizeof(why)),
		-EINVAL);
	assert_int_equal(bach_cache_spec_parse("0:32:4", &c, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(
		bach_cache_spec_parse("16k:32:0", &c, why, sizeof(why)),
		-EINVAL);
	assert_int_equal(
		bach_cache_spec_parse("16k:32:4k", &c, why, sizeof(why)),
		-EINVAL);
	assert_int_equal(bach_cache_spec_parse("16k:32:4:a:b:c:d:e:f", &c, why,
					       sizeof(why)),
			 -EINVAL);
	assert_int_equal(bach_tlb_spec_parse("64:4", &c, why, sizeof(why)), 0);
	assert_int_equal(c.size, 64 * 4096);
	assert_int_equal(c.assoc, 4);
	assert_int_equal(bach_tlb_spec_parse("64:full", &c, why, sizeof(why)),
			 0);
	assert_int_equal(c.assoc, 64);
	assert_int_equal(bach_tlb_spec_parse("64:3", &c, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "ENTRIES 64 is not a multiple of ASSOC 3");
	assert_int_equal(bach_tlb_spec_parse("64:4:2", &c, why, sizeof(why)),
			 -EINVAL);
}

static void test_hierarchy_rules(void **state)
{
	struct bach_sim_config cfg = { 0 };
	struct bach_sim *s;
	char why[200];

	(void)state;
	assert_int_equal(bach_sim_new(&s, &cfg, why, sizeof(why)), -EINVAL);
	spec(&cfg, BACH_SIM_L1I, "8k:32:2");
	assert_int_equal(bach_sim_new(&s, &cfg, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "--l1i and --l1d go together");
	spec(&cfg, BACH_SIM_L1D, "8k:32:2");
	spec(&cfg, BACH_SIM_L3, "1M:64:8");
	assert_int_equal(bach_sim_new(&s, &cfg, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "--l3 needs --l2");
	spec(&cfg, BACH_SIM_L2, "256k:32:4");
	assert_int_equal(bach_sim_new(&s, &cfg, why, sizeof(why)), 0);
	assert_null(bach_sim_stats(s, BACH_SIM_L1));
	assert_non_null(bach_sim_stats(s, BACH_SIM_L3));
	bach_sim_free(s);
}

/*
 * Direct-mapped, two sets of 32-byte lines, write-back, write-allocate:
 *   read  000  miss: the line is read (32 bytes)
 *   read  008  hit
 *   write 040  miss in set 0: the clean line 000 goes, the line is read
 *              (8 bytes do not cover it) and becomes dirty
 *   read  000  miss: dirty 040 is written back (32), 000 read (32)
 *   I/O        skipped
 * At the end nothing is dirty.
 */
static void test_write_back(void **state)
{
	struct bach_sim_config cfg = { 0 };
	const struct bach_cache_stats *st;
	struct bach_sim_totals t;
	struct bach_sim *s;

	(void)state;
	spec(&cfg, BACH_SIM_L1, "64:32:1");
	put(0x000, 0x00, RD);
	put(0x008, 0x00, RD);
	put(0x040, 0x00, WR);
	put(0x000, 0x00, RD);
	put(0x3f8, 0xfe, IO);
	s = run(&cfg);
	st = bach_sim_stats(s, BACH_SIM_L1);
	assert_int_equal(st->fetch[BACH_REF_READ], 3);
	assert_int_equal(st->fetch[BACH_REF_WRITE], 1);
	assert_int_equal(st->miss[BACH_REF_READ], 2);
	assert_int_equal(st->miss[BACH_REF_WRITE], 1);
	assert_int_equal(st->bytes_read, 96);
	assert_int_equal(st->bytes_written, 32);
	bach_sim_get_totals(s, &t);
	assert_int_equal(t.records, 5);
	assert_int_equal(t.refs, 4);
	assert_int_equal(t.skipped, 1);
	bach_sim_free(s);
}

/*
 * Write-through, no-write-allocate: a write miss goes down with its own
 * size and allocates nothing; a write hit goes down too; no line is ever
 * dirty, so the end copies nothing back.
 *   write 100 (bytes 0..3)  miss: 4 bytes down
 *   read  100               miss: line read (32)
 *   write 104 (bytes 4..7)  hit: 4 bytes down
 *   write 108 (all)         hit: 8 bytes down
 */
static void test_write_through(void **state)
{
	struct bach_sim_config cfg = { 0 };
	const struct bach_cache_stats *st;
	struct bach_sim *s;

	(void)state;
	spec(&cfg, BACH_SIM_L1, "1k:32:2:wt:nwa");
	put(0x100, 0xf0, WR);
	put(0x100, 0x00, RD);
	put(0x100, 0x0f, WR);
	put(0x108, 0x00, WR);
	s = run(&cfg);
	st = bach_sim_stats(s, BACH_SIM_L1);
	assert_int_equal(st->fetch[BACH_REF_WRITE], 3);
	assert_int_equal(st->miss[BACH_REF_WRITE], 1);
	assert_int_equal(st->miss[BACH_REF_READ], 1);
	assert_int_equal(st->bytes_read, 32);
	assert_int_equal(st->bytes_written, 16);
	bach_sim_free(s);
}

/*
 * 4-byte lines: an 8-byte fetch touches two lines, two demand fetches
 * and one multi-block reference (d4.3: "an original reference touching n
 * cache blocks will ultimately cause multiblock to be incremented n-1
 * times"); bytes 6..7 alone touch one line. With 8-byte lines a write of
 * the whole quadword covers the line: write-allocate reads nothing.
 */
static void test_multiblock(void **state)
{
	struct bach_sim_config cfg = { 0 }, cfg8 = { 0 };
	const struct bach_cache_stats *st;
	struct bach_sim *s;

	(void)state;
	spec(&cfg, BACH_SIM_L1, "64:4:full");
	put(0x200, 0x00, IF);
	put(0x200, 0x3f, IF);
	s = run(&cfg);
	st = bach_sim_stats(s, BACH_SIM_L1);
	assert_int_equal(st->fetch[BACH_REF_IFETCH], 3);
	assert_int_equal(st->miss[BACH_REF_IFETCH], 2);
	assert_int_equal(st->multiblock, 1);
	assert_int_equal(st->bytes_read, 8);
	bach_sim_free(s);

	spec(&cfg8, BACH_SIM_L1, "64:8:1");
	nrecs = 0;
	put(0x300, 0x00, WR);
	put(0x308, 0xf0, WR);
	s = run(&cfg8);
	st = bach_sim_stats(s, BACH_SIM_L1);
	assert_int_equal(st->miss[BACH_REF_WRITE], 2);
	assert_int_equal(st->bytes_read, 8); /* only the partial write */
	assert_int_equal(st->bytes_written,
			 16); /* both copied back at the end */
	bach_sim_free(s);
}

/*
 * A gap marker copies dirty lines back and invalidates: the line written
 * before it misses after it, and its write-back is counted once.
 */
static void test_gap_flush(void **state)
{
	struct bach_sim_config cfg = { 0 };
	const struct bach_cache_stats *st;
	struct bach_sim_totals t;
	struct bach_sim *s;

	(void)state;
	spec(&cfg, BACH_SIM_L1, "1k:32:2");
	spec(&cfg, BACH_SIM_TLB, "4:full");
	put(0x000, 0x00, WR);
	put(0x000, 0x00, RD);
	gap(1000);
	put(0x000, 0x00, RD);
	s = run(&cfg);
	st = bach_sim_stats(s, BACH_SIM_L1);
	assert_int_equal(st->miss[BACH_REF_WRITE], 1);
	assert_int_equal(st->miss[BACH_REF_READ], 1);
	assert_int_equal(st->bytes_read, 64);
	assert_int_equal(st->bytes_written, 32);
	st = bach_sim_stats(s, BACH_SIM_TLB);
	assert_int_equal(st->fetch[BACH_REF_READ] + st->fetch[BACH_REF_WRITE],
			 3);
	assert_int_equal(st->miss[BACH_REF_READ] + st->miss[BACH_REF_WRITE], 2);
	bach_sim_get_totals(s, &t);
	assert_int_equal(t.flushes, 1);
	assert_int_equal(t.skipped, 0);
	bach_sim_free(s);
}

/*
 * What L1 sends down is what L2 counts: a write miss under write-allocate
 * reads its line (a read at L2); the replaced dirty line is a write at
 * L2; an instruction miss stays an instruction fetch.
 */
static void test_two_levels(void **state)
{
	struct bach_sim_config cfg = { 0 };
	const struct bach_cache_stats *st;
	struct bach_sim *s;

	(void)state;
	spec(&cfg, BACH_SIM_L1I, "32:32:1");
	spec(&cfg, BACH_SIM_L1D, "32:32:1");
	spec(&cfg, BACH_SIM_L2, "1k:64:2");
	put(0x1000, 0x00, IF);
	put(0x0000, 0x00, WR);
	put(0x0020, 0x00, RD); /* evicts dirty 0x0000 */
	s = run(&cfg);
	st = bach_sim_stats(s, BACH_SIM_L2);
	assert_int_equal(st->fetch[BACH_REF_IFETCH], 1);
	assert_int_equal(st->fetch[BACH_REF_READ], 2);
	assert_int_equal(st->fetch[BACH_REF_WRITE], 1);
	assert_int_equal(st->miss[BACH_REF_IFETCH], 1);
	/* 0x0000 and 0x0020 share a 64-byte L2 line: one read miss */
	assert_int_equal(st->miss[BACH_REF_READ], 1);
	assert_int_equal(st->miss[BACH_REF_WRITE], 0);
	assert_int_equal(st->bytes_read, 128);
	/* the L2 line holding 0x0000 is dirty and copied back at the end */
	assert_int_equal(st->bytes_written, 64);
	bach_sim_free(s);
}

/*
 * bach_sim_collapse(): a run of fetches, or of reads after a read or a
 * write, within one block is one entry; a write, another block, a
 * record that is no reference, a gap marker and the last record end it.
 */
static void test_collapse_entries(void **state)
{
	struct bach_sim_ref r[16], c[16];
	size_t k;

	(void)state;
	put(0x100, 0x00, IF);
	put(0x108, 0x00, IF); /* a run of 3 fetches */
	put(0x110, 0x00, IF);
	put(0x120, 0x00, RD); /* another 32-byte block */
	put(0x128, 0x00, RD);
	put(0x120, 0x00, WR); /* a write starts a run */
	put(0x130, 0x00, RD);
	put(0x138, 0x00, IF); /* a fetch after data: its own */
	put(0x138, 0x00, IO); /* no reference */
	put(0x138, 0x00, IF);
	gap(5);
	put(0x138, 0x00, IF);
	put(0x138, 0x00, IF); /* the last record: its own */
	bach_sim_refs(r, recs, nrecs, 100, NULL);
	k = bach_sim_collapse(c, r, nrecs, 5);
	assert_int_equal(k, 9);
	assert_int_equal(c[0].pos, 100);
	assert_int_equal(c[0].more, 2);
	assert_int_equal(c[1].addr, 0x120);
	assert_int_equal(c[1].more, 1);
	assert_int_equal(c[2].kind, BACH_REF_WRITE);
	assert_int_equal(c[2].more, 1);
	assert_int_equal(c[3].kind, BACH_REF_IFETCH);
	assert_int_equal(c[3].more, 0);
	assert_int_equal(c[4].kind, BACH_REF_NONE);
	assert_int_equal(c[5].more, 0);
	assert_int_equal(c[6].kind, BACH_SIM_GAP);
	assert_int_equal(c[7].more, 0);
	assert_int_equal(c[8].pos, 100 + nrecs - 1);
	/* blocks of 8 bytes: no two fetches share one */
	assert_int_equal(bach_sim_collapse(c, r, 3, 3), 3);
}

/* 32-bit xorshift: the property test's references */
static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/*
 * The property tests' trace: n records in runs over a working set of
 * nlines 32-byte lines (the next line one time in jump, a line anywhere
 * one jump in 8), kinds from ctl, and a gap marker one record in gap
 */
static void runs_trace(uint8_t *t, size_t n, uint32_t x, unsigned nlines,
		       unsigned jump, unsigned gap, const uint8_t ctl[6])
{
	uint32_t lines[128];

	assert_true(nlines <= 128);
	for (unsigned i = 0; i < nlines; i++)
		lines[i] = (rnd(&x) % (nlines * 64)) * 32;
	for (size_t i = 0, at = 0; i < n; i++) {
		uint32_t v = rnd(&x);

		if (v % jump == 0)
			at = v % 8 ? lines[(v >> 4) % nlines] : v & ~7u;
		if (v % gap == 0)
			bach_rec_put(t + i * BACH_REC_SIZE, 9, 0xff,
				     BACH_GAP_CTL);
		else
			bach_rec_put(t + i * BACH_REC_SIZE,
				     (uint32_t)at + (v >> 8) % 4 * 8, 0x00,
				     ctl[(v >> 16) % 6]);
	}
}

/* cfg from texts h: L1 (or "L1I,L1D"), L2, L3, TLB (NULL: none) */
static void hier_cfg(struct bach_sim_config *cfg, const char *const h[4],
		     uint64_t seed)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = seed;
	if (strchr(h[0], ',')) {
		char a[64], *b;

		strcpy(a, h[0]);
		b = strchr(a, ',');
		*b++ = 0;
		spec(cfg, BACH_SIM_L1I, a);
		spec(cfg, BACH_SIM_L1D, b);
	} else {
		spec(cfg, BACH_SIM_L1, h[0]);
	}
	if (h[1])
		spec(cfg, BACH_SIM_L2, h[1]);
	if (h[2])
		spec(cfg, BACH_SIM_L3, h[2]);
	if (h[3])
		spec(cfg, BACH_SIM_TLB, h[3]);
}

/* b, fed otherwise, in a's state and position, and counting as a does
 * after both end; both freed */
static void same_run(struct bach_sim *a, struct bach_sim *b)
{
	uint64_t da[BACH_SIM_NCACHES], db[BACH_SIM_NCACHES];
	struct bach_sim_counts ca, cb;

	assert_true(bach_sim_same_state(a, b));
	assert_int_equal(bach_sim_last_get(a, da), bach_sim_last_get(b, db));
	assert_memory_equal(da, db, sizeof(da));
	bach_sim_finish(a);
	bach_sim_finish(b);
	bach_sim_get_counts(a, &ca);
	bach_sim_get_counts(b, &cb);
	assert_memory_equal(&ca, &cb, sizeof(ca));
	assert_true(ca.t.flushes > 10);
	bach_sim_free(a);
	bach_sim_free(b);
}

/*
 * The collapsed entries give a simulator that takes them
 * (bach_sim_collapse_lg() >= 0) exactly the counts, state and position
 * the references one by one do, under every policy, with a TLB, an L2 and
 * gap markers; a cache that does not allocate on a write miss can not
 * take them.
 */
static void test_collapse_same(void **state)
{
	static const char *const hier[][4] = {
		{ "1k:32:2", NULL, NULL, "8:2" },
		{ "1k:16:1,2k:64:4:fifo", NULL, NULL, NULL },
		{ "2k:32:4:random", "8k:64:2:random", NULL, "4:full" },
		{ "512:32:2:wt", "4k:32:4", NULL, NULL },
		{ "512:32:full", NULL, NULL, "32:full" },
		{ "1k:4:2", "2k:8:2:fifo", NULL, "2:2" },
		{ "1k:32:16:fifo,1k:64:full:random", "16k:64:4", NULL, "16:4" },
	};
	static const uint8_t ctl[] = { IF, IF, RD, RD, WR, IO };
	enum { N = 60000, CH = 700 };
	static uint8_t t[N * BACH_REC_SIZE];
	static struct bach_sim_ref r[CH], c[CH];
	size_t total = 0;

	(void)state;
	runs_trace(t, N, 7, 64, 3, 997, ctl);
	for (size_t h = 0; h < sizeof(hier) / sizeof(*hier); h++) {
		struct bach_sim_config cfg;
		struct bach_sim *a, *b;
		char why[200] = "";
		int lg;

		hier_cfg(&cfg, hier[h], h);
		assert_int_equal(bach_sim_new(&a, &cfg, why, sizeof(why)), 0);
		assert_int_equal(bach_sim_new(&b, &cfg, why, sizeof(why)), 0);
		lg = bach_sim_collapse_lg(b);
		assert_true(lg >= 2);
		for (size_t i = 0; i < N; i += CH) {
			size_t n = N - i < CH ? N - i : CH, k;

			bach_sim_refs(r, t + i * BACH_REC_SIZE, n, i, NULL);
			bach_sim_add_refs(a, r, n);
			k = bach_sim_collapse(c, r, n, (unsigned)lg);
			assert_true(k <= n);
			total += n - k;
			bach_sim_add_runs(b, c, k);
		}
		same_run(a, b);
	}
	assert_true(total > N / 2); /* runs were collapsed (58853 here) */

	{ /* no write allocation in L1 or the TLB: not for it */
		struct bach_sim_config cfg = { 0 };
		struct bach_sim *s;
		char why[200] = "";

		spec(&cfg, BACH_SIM_L1, "1k:32:2:wt:nwa");
		assert_int_equal(bach_sim_new(&s, &cfg, why, sizeof(why)), 0);
		assert_int_equal(bach_sim_collapse_lg(s), -1);
		bach_sim_free(s);
		spec(&cfg, BACH_SIM_L1, "1k:32:2");
		spec(&cfg, BACH_SIM_L2, "4k:32:2:wt:nwa");
		assert_int_equal(bach_sim_new(&s, &cfg, why, sizeof(why)), 0);
		assert_int_equal(bach_sim_collapse_lg(s), 5);
		bach_sim_free(s);
	}
	{ /* lines larger than a page: blocks of a page */
		struct bach_sim_config cfg = { 0 };
		struct bach_sim *s;
		char why[200] = "";

		spec(&cfg, BACH_SIM_L1, "64k:8k:2");
		spec(&cfg, BACH_SIM_TLB, "4:full");
		assert_int_equal(bach_sim_new(&s, &cfg, why, sizeof(why)), 0);
		assert_int_equal(bach_sim_collapse_lg(s), 12);
		bach_sim_free(s);
	}
}

/*
 * A configuration whose L1 is another's (sim --configs): its TLB given
 * the references, its L2 what the other's L1 sent below it, then the
 * other's L1 taken, it counts and ends as it does on its own, gap
 * markers, random L2s and L3s and the end's copy-back included.
 */
static void test_shared_l1(void **state)
{
	static const char *const pairs[][2][4] = {
		/* the one simulated, the one that takes its L1 */
		{ { "1k:32:2", "8k:64:4:random", NULL, "8:2" },
		  { "1k:32:2", "4k:32:2:fifo", "16k:64:4:random", "4:full" } },
		{ { "512:16:1,2k:64:4:random", "8k:64:2:wt", NULL, NULL },
		  { "512:16:1,2k:64:4:random", "16k:32:8:random", NULL,
		    NULL } },
		{ { "1k:32:2:wt:nwa", "4k:32:4", NULL, NULL },
		  { "1k:32:2:wt:nwa", "8k:64:2:nwa", "32k:64:4", "2:2" } },
		{ { "512:32:full", "4k:64:full:random", NULL, NULL },
		  { "512:32:full", "2k:32:2", NULL, "16:4" } },
		{ { "1k:4:2", "2k:8:2:fifo", NULL, NULL },
		  { "1k:4:2", "4k:64:1:wt", NULL, NULL } },
		{ { "2k:32:4:random", NULL, NULL, NULL }, /* no L2 either */
		  { "2k:32:4:random", NULL, NULL, "8:full" } },
	};
	static const uint8_t ctl[] = { IF, RD, RD, WR, WR, IO };
	enum { N = 40000, CH = 900 };
	static uint8_t t[N * BACH_REC_SIZE];
	static struct bach_sim_ref r[CH];

	(void)state;
	runs_trace(t, N, 11, 128, 2, 1499, ctl);
	for (size_t p = 0; p < sizeof(pairs) / sizeof(*pairs); p++) {
		struct bach_sim_config ca, cb;
		struct bach_sim *lead, *own, *shared;
		struct bach_sim_downs d = { 0 };
		char why[200] = "";

		hier_cfg(&ca, pairs[p][0], p);
		hier_cfg(&cb, pairs[p][1], p);
		assert_int_equal(bach_sim_new(&lead, &ca, why, sizeof(why)), 0);
		assert_int_equal(bach_sim_new(&own, &cb, why, sizeof(why)), 0);
		assert_int_equal(bach_sim_new(&shared, &cb, why, sizeof(why)),
				 0);
		assert_true(bach_sim_same_l1(lead, shared));
		if (pairs[p][0][1])
			bach_sim_record(lead, &d);
		for (size_t i = 0; i < N; i += CH) {
			size_t n = N - i < CH ? N - i : CH;

			bach_sim_refs(r, t + i * BACH_REC_SIZE, n, i, NULL);
			bach_sim_add_refs(own, r, n);
			d.n = 0;
			bach_sim_add_refs(lead, r, n);
			bach_sim_add_tlb(shared, r, n);
			bach_sim_add_below(shared, d.v, d.n);
		}
		assert_false(d.oom);
		bach_sim_record(lead, NULL);
		assert_int_equal(bach_sim_adopt_l1(shared, lead), 0);
		same_run(own, shared);
		free(d.v);
		bach_sim_free(lead);
	}
	{ /* not the same L1: another seed for a random one, another size */
		static const char *const a[4] = { "2k:32:4:random" },
					 *b[4] = { "2k:32:2" };
		struct bach_sim_config ca, cb;
		struct bach_sim *s1, *s2;
		char why[200] = "";

		hier_cfg(&ca, a, 1);
		hier_cfg(&cb, a, 2);
		assert_int_equal(bach_sim_new(&s1, &ca, why, sizeof(why)), 0);
		assert_int_equal(bach_sim_new(&s2, &cb, why, sizeof(why)), 0);
		assert_false(bach_sim_same_l1(s1, s2));
		bach_sim_free(s2);
		hier_cfg(&cb, b, 1);
		assert_int_equal(bach_sim_new(&s2, &cb, why, sizeof(why)), 0);
		assert_false(bach_sim_same_l1(s1, s2));
		bach_sim_free(s1);
		bach_sim_free(s2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_bytes),
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_hierarchy_rules),
		cmocka_unit_test_setup(test_write_back, reset),
		cmocka_unit_test_setup(test_write_through, reset),
		cmocka_unit_test_setup(test_multiblock, reset),
		cmocka_unit_test_setup(test_gap_flush, reset),
		cmocka_unit_test_setup(test_two_levels, reset),
		cmocka_unit_test_setup(test_collapse_entries, reset),
		cmocka_unit_test(test_collapse_same),
		cmocka_unit_test(test_shared_l1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
