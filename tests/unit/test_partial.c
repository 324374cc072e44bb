// SPDX-License-Identifier: MIT
/*
 * Partial results (lib/analysis/partial.h, docs/analysis.md section 7),
 * as a property over random traces and random splits: for bach stat's
 * counts and bach mrc's exact fully associative curve, the chunks run
 * apart, written to their JSON and read back, and combined in any tree
 * (a left fold, a random tree; empty chunks included) give exactly what
 * one pass over the whole gives, fully associative and set-associative.
 * For bach sim, Heidelberger and Stone's time partitioning: chunks run
 * cold, their counts and caches' state through JSON, joined by
 * re-simulating each chunk's start warm and cold until the states meet,
 * give the whole run's counts and state, for every policy.
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

#include "bach/record.h"
#include "lib/analysis/partial.h"

#define NREC  6000
#define SIZES 5

static uint8_t recs[NREC * BACH_REC_SIZE];
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* references over few lines (distances of every size), some gap markers,
 * some I/O and special cycles */
static void make_trace(void)
{
	static const uint8_t ctl[] = { BACH_T_I_FETCH << 4, BACH_T_D_READ << 4,
				       BACH_T_D_WRITE << 4, BACH_T_IO_READ << 4,
				       BACH_T_SPECIAL << 4 };

	for (size_t i = 0; i < NREC; i++) {
		uint8_t *p = recs + i * BACH_REC_SIZE;

		if (rnd(400) == 0)
			bach_rec_put(p, 1 + rnd(100), 0, BACH_GAP_CTL);
		else
			bach_rec_put(p, (rnd(2) ? rnd(300) : rnd(20000)) * 8,
				     (uint8_t)(rnd(2) ? 0 : rnd(256)),
				     ctl[rnd(sizeof(ctl))]);
	}
}

static const uint64_t sizes[SIZES] = { 64, 256, 1024, 4096, 65536 };
static uint32_t assoc;	  /* 0: fully associative */
static double sample = 1; /* SHARDS rate */

static struct bach_mrc *new_mrc(bool chunk)
{
	struct bach_mrc_config cfg = { .line = 32,
				       .kinds = BACH_MRC_KIND_ALL,
				       .sample = sample,
				       .sizes = sizes,
				       .assoc = assoc,
				       .nsizes = SIZES };
	struct bach_mrc *m;
	char why[200];

	assert_int_equal(bach_mrc_new(&m, &cfg, why, sizeof(why)), 0);
	if (chunk)
		assert_int_equal(bach_mrc_chunk(m), 0);
	return m;
}

/* a state's JSON, as a partial's line 2 goes to a file and back */
static json_t *roundtrip(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	json_t *back = json_loads(s, 0, NULL);

	assert_non_null(back);
	free(s);
	json_decref(j);
	return back;
}

/*
 * A state as a partial file holds it and bach merge reads it back: its
 * lists in the binary section (version 3) or, by chance, as base64 in
 * the JSON (version 2's lists), which a merge still takes.
 */
static struct bach_partial *as_partial(json_t *data,
				       struct bach_partial_words *words)
{
	json_t *head = json_pack(
		"{sssisssssos[]sIsnsI}", "format", BACH_PARTIAL_FORMAT,
		"version", BACH_PARTIAL_VERSION, "bach", "test", "command",
		"mrc", "options", json_object(), "trace", "start",
		(json_int_t)0, "end", "records", (json_int_t)0);
	struct bach_partial *p = calloc(1, sizeof(*p));
	char err[200], *text;
	size_t len;

	assert_non_null(data);
	assert_non_null(p);
	text = bach_partial_format_words(head, data, words, &len);
	assert_non_null(text);
	assert_int_equal(bach_partial_parse(text, len, p, err, sizeof(err)), 0);
	free(text);
	return p;
}

static void free_partial(struct bach_partial *p)
{
	bach_partial_free(p);
	free(p);
}

static struct bach_partial *mrc_state(struct bach_mrc *m)
{
	struct bach_partial_words words = { 0 };
	struct bach_partial *r;
	struct bach_mrc_part p;
	json_t *j;
	bool bin = rnd(4) != 0;

	assert_int_equal(bach_mrc_part_get(m, &p), 0);
	j = bach_mrc_part_to_json(&p, bin ? &words : NULL);
	bach_mrc_part_free(&p);
	r = as_partial(j, &words);
	assert_true(bin || !r->words.n);
	return r;
}

static void mrc_add_state(struct bach_mrc *m, const struct bach_partial *s)
{
	struct bach_mrc_part p;
	char err[200];

	assert_int_equal(bach_mrc_part_from_json(&p, SIZES + 1,
						 assoc ? SIZES : 0, s->data,
						 &s->words, err, sizeof(err)),
			 0);
	assert_int_equal(bach_mrc_combine(m, &p), 0);
	bach_mrc_part_release(&p);
}

/* the states of parts i..j-1 combined as a random tree */
static struct bach_partial *mrc_tree(struct bach_partial **st, size_t i,
				     size_t j)
{
	struct bach_mrc *m = new_mrc(true);
	struct bach_partial *r;

	if (j - i <= 1) {
		if (j > i)
			mrc_add_state(m, st[i]);
	} else {
		size_t k = i + 1 + rnd((uint32_t)(j - i - 1));
		struct bach_partial *a = mrc_tree(st, i, k),
				    *b = mrc_tree(st, k, j);

		mrc_add_state(m, a);
		mrc_add_state(m, b);
		free_partial(a);
		free_partial(b);
	}
	r = mrc_state(m);
	bach_mrc_free(m);
	return r;
}

static void mrc_result(struct bach_mrc *m, struct bach_mrc_point *pt,
		       uint64_t *hist, uint64_t *cold)
{
	bach_mrc_points(m, pt);
	bach_mrc_reuse(m, hist, cold);
}

static void check_mrc_same(struct bach_mrc *m, const struct bach_mrc *whole)
{
	struct bach_mrc_point a[SIZES], b[SIZES];
	uint64_t ha[BACH_MRC_HIST_BUCKETS], hb[BACH_MRC_HIST_BUCKETS], ca, cb;

	bach_mrc_settle(m);
	mrc_result(m, a, ha, &ca);
	mrc_result((struct bach_mrc *)whole, b, hb, &cb);
	for (size_t i = 0; i < SIZES; i++) {
		assert_int_equal(a[i].refs, b[i].refs);
		assert_int_equal(a[i].misses, b[i].misses);
	}
	for (size_t i = 0; i < SIZES; i++)
		assert_true(a[i].miss_ratio == b[i].miss_ratio);
	if (!assoc) { /* the histogram is the fully associative stack's */
		assert_memory_equal(ha, hb, sizeof(ha));
		assert_int_equal(ca, cb);
	}
	assert_int_equal(bach_mrc_flushes(m), bach_mrc_flushes(whole));
}

/* random cuts, some equal (empty chunks), some at a gap marker */
static size_t cuts(size_t *at, size_t max)
{
	size_t n = 1 + rnd((uint32_t)max);

	at[0] = 0;
	for (size_t k = 1; k < n; k++) {
		at[k] = rnd(NREC + 1);
		if (rnd(4) == 0)
			at[k] = at[k - 1];
	}
	at[n] = NREC;
	for (size_t a = 1; a < n; a++) /* sort */
		for (size_t b = a; b > 0 && at[b] < at[b - 1]; b--) {
			size_t t = at[b];

			at[b] = at[b - 1];
			at[b - 1] = t;
		}
	return n;
}

static void mrc_splits(void)
{
	struct bach_mrc *whole = new_mrc(false);

	make_trace();
	bach_mrc_add(whole, recs, NREC);
	for (int round = 0; round < 40; round++) {
		size_t at[17], n = cuts(at, 16);
		struct bach_partial *st[16], *t;
		struct bach_mrc *m;

		for (size_t k = 0; k < n; k++) {
			m = new_mrc(true);
			bach_mrc_add(m, recs + at[k] * BACH_REC_SIZE,
				     at[k + 1] - at[k]);
			st[k] = mrc_state(m);
			bach_mrc_free(m);
		}
		/* left fold, then a random tree */
		m = new_mrc(true);
		for (size_t k = 0; k < n; k++)
			mrc_add_state(m, st[k]);
		check_mrc_same(m, whole);
		bach_mrc_free(m);
		t = mrc_tree(st, 0, n);
		m = new_mrc(true);
		mrc_add_state(m, t);
		check_mrc_same(m, whole);
		bach_mrc_free(m);
		free_partial(t);
		for (size_t k = 0; k < n; k++)
			free_partial(st[k]);
	}
	bach_mrc_free(whole);
}

static void test_mrc_splits(void **state)
{
	(void)state;
	assoc = 0;
	mrc_splits();
}

/* --assoc: each size's sets split the same way */
static void test_mrc_assoc_splits(void **state)
{
	(void)state;
	for (assoc = 1; assoc <= 2; assoc++)
		mrc_splits();
	assoc = 0;
}

/* --sample: the SHARDS stack and the near stack (a ring of few lines,
 * a table of many) split the same way */
static void test_mrc_sampled_splits(void **state)
{
	(void)state;
	for (sample = 0.5; sample > 0.005; sample /= 4)
		mrc_splits();
	sample = 1;
}

/* --window: windows aligned at record 0, the cut ones united */
static void test_wss_splits(void **state)
{
	const struct bach_wss_window *want;
	struct bach_wss_window got[NREC + 2];
	struct bach_wss *whole;
	char why[200];
	size_t nw;

	(void)state;
	make_trace();
	for (uint64_t win = 1; win <= 4096; win *= 8) {
		assert_int_equal(bach_wss_new(&whole, win, 32,
					      BACH_MRC_KIND_ALL, why,
					      sizeof(why)),
				 0);
		bach_wss_add(whole, recs, NREC);
		nw = bach_wss_finish(whole, &want);
		for (int round = 0; round < 8; round++) {
			size_t at[9], n = cuts(at, 8);
			struct bach_wss_merge acc = { 0 }, left = { 0 };

			for (size_t k = 0; k < n; k++) {
				struct bach_wss *w;
				struct bach_partial_words words = { 0 };
				struct bach_wss_piece *pc, *back;
				struct bach_partial *j;
				size_t np, nb;

				assert_int_equal(bach_wss_new(&w, win, 32,
							      BACH_MRC_KIND_ALL,
							      why, sizeof(why)),
						 0);
				assert_int_equal(bach_wss_chunk(w, at[k]), 0);
				bach_wss_add(w, recs + at[k] * BACH_REC_SIZE,
					     at[k + 1] - at[k]);
				assert_int_equal(bach_wss_pieces(w, &pc, &np),
						 0);
				j = as_partial(
					bach_wss_pieces_to_json(pc, np, &words),
					&words);
				assert_int_equal(bach_wss_pieces_from_json(
							 &back, &nb, j->data,
							 &j->words, why,
							 sizeof(why)),
						 0);
				/* the first half through a merge of its own */
				assert_int_equal(
					bach_wss_merge_add(k < n / 2 ? &left
								     : &acc,
							   back, nb),
					0);
				if (k + 1 == n / 2) {
					/* its sets as version 2 wrote them */
					struct bach_partial *l = as_partial(
						bach_wss_pieces_to_json(
							left.p, left.n, NULL),
						NULL);
					struct bach_wss_piece *lp;
					size_t nl;

					assert_int_equal(
						bach_wss_pieces_from_json(
							&lp, &nl, l->data,
							&l->words, why,
							sizeof(why)),
						0);
					assert_int_equal(bach_wss_merge_add(
								 &acc, lp, nl),
							 0);
					bach_wss_pieces_free(lp, nl);
					free_partial(l);
				}
				bach_wss_pieces_free(back, nb);
				bach_wss_pieces_free(pc, np);
				free_partial(j);
				bach_wss_free(w);
			}
			assert_int_equal(bach_wss_merge_windows(&acc, 0, got),
					 nw);
			assert_memory_equal(got, want, nw * sizeof(*got));
			bach_wss_merge_free(&acc);
			bach_wss_merge_free(&left);
		}
		bach_wss_free(whole);
	}
}

static struct bach_stats sw, sa, sb;

static void test_stats_splits(void **state)
{
	struct bach_summary want, got;
	char err[200];

	(void)state;
	make_trace();
	assert_int_equal(bach_stats_init(&sw), 0);
	bach_stats_add(&sw, recs, NREC);
	bach_stats_summary(&sw, &want);
	for (int round = 0; round < 10; round++) {
		size_t at[9], n = cuts(at, 8);
		json_t *st[8];

		for (size_t k = 0; k < n; k++) {
			assert_int_equal(bach_stats_init(&sa), 0);
			bach_stats_add(&sa, recs + at[k] * BACH_REC_SIZE,
				       at[k + 1] - at[k]);
			st[k] = roundtrip(bach_stats_to_json(&sa));
			bach_stats_free(&sa);
		}
		/* (first half) then (second half), folded in reverse */
		assert_int_equal(bach_stats_init(&sa), 0);
		assert_int_equal(bach_stats_init(&sb), 0);
		for (size_t k = n; k-- > n / 2;)
			assert_int_equal(bach_stats_from_json(&sb, st[k], err,
							      sizeof(err)),
					 0);
		for (size_t k = 0; k < n / 2; k++)
			assert_int_equal(bach_stats_from_json(&sa, st[k], err,
							      sizeof(err)),
					 0);
		{
			json_t *b = roundtrip(bach_stats_to_json(&sb));

			assert_int_equal(
				bach_stats_from_json(&sa, b, err, sizeof(err)),
				0);
			json_decref(b);
		}
		bach_stats_summary(&sa, &got);
		assert_memory_equal(&got, &want, sizeof(got));
		bach_stats_free(&sa);
		bach_stats_free(&sb);
		for (size_t k = 0; k < n; k++)
			json_decref(st[k]);
	}
	bach_stats_free(&sw);
}

/* a partial's text: two lines, the header's range checked */
static void test_parse(void **state)
{
	static const char good[] =
		"{\"format\":\"bach-partial\",\"version\":1,\"bach\":\"x\",\"command\":\"stat\",\"options\":{},\"trace\":[],\"start\":5,\"end\":null,\"records\":3}\n{}\n";
	struct bach_partial p;
	char err[300], buf[400];

	(void)state;
	assert_int_equal(
		bach_partial_parse(good, strlen(good), &p, err, sizeof(err)),
		0);
	assert_int_equal(p.start, 5);
	assert_int_equal(p.end, UINT64_MAX);
	assert_string_equal(p.command, "stat");
	bach_partial_free(&p);
	/* cut short, a third line, a range backwards, another version */
	assert_int_equal(bach_partial_parse(good, strlen(good) - 1, &p, err,
					    sizeof(err)),
			 -EBADMSG);
	snprintf(buf, sizeof(buf), "%s{}\n", good);
	assert_int_equal(
		bach_partial_parse(buf, strlen(buf), &p, err, sizeof(err)),
		-EBADMSG);
	snprintf(buf, sizeof(buf), "%s", good);
	memcpy(strstr(buf, "null"), "2   ", 4);
	assert_int_equal(
		bach_partial_parse(buf, strlen(buf), &p, err, sizeof(err)),
		-EBADMSG);
	assert_non_null(strstr(err, "\"start\""));
	snprintf(buf, sizeof(buf), "%s", good);
	strstr(buf, "\"version\":1")[10] = '4'; /* 1 to 3 are read */
	assert_int_equal(
		bach_partial_parse(buf, strlen(buf), &p, err, sizeof(err)),
		-EBADMSG);
	assert_non_null(strstr(err, "version"));
}

/* version 3: the header's "words" after line 2, which the lists point into */
static void test_parse_words(void **state)
{
	static const char head[] =
		"{\"format\":\"bach-partial\",\"version\":3,\"bach\":\"x\",\"command\":\"mrc\",\"options\":{},\"trace\":[],\"start\":0,\"end\":null,\"records\":0,\"words\":2}\n";
	static const char *const lists[] = {
		"{\"first\":{\"at\":0,\"n\":1},\"last\":{\"at\":1,\"n\":1}}\n",
		"{\"first\":{\"at\":1,\"n\":2},\"last\":{\"at\":0,\"n\":0}}\n",
		"{\"first\":{\"at\":3,\"n\":0},\"last\":{\"at\":0,\"n\":0}}\n",
	};
	/* two words, little-endian: 5 and 0x01020304 */
	static const uint8_t words[8] = { 5, 0, 0, 0, 4, 3, 2, 1 };
	struct bach_mrc_part mp;
	struct bach_partial p;
	char err[300], buf[600];
	size_t len;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		len = (size_t)snprintf(buf, sizeof(buf), "%s%s", head,
				       lists[i]);
		memcpy(buf + len, words, sizeof(words));
		/* cut short by a byte, by a word; a word too many */
		for (size_t cut = 1; cut <= 4; cut += 3)
			assert_int_equal(bach_partial_parse(buf, len + 8 - cut,
							    &p, err,
							    sizeof(err)),
					 -EBADMSG);
		assert_non_null(strstr(err, "\"words\""));
		assert_int_equal(
			bach_partial_parse(buf, len + 12, &p, err, sizeof(err)),
			-EBADMSG);
		assert_int_equal(
			bach_partial_parse(buf, len + 8, &p, err, sizeof(err)),
			0);
		assert_int_equal(p.words.n, 2);
		assert_int_equal(p.words.w[1], 0x01020304);
		/* the mrc state's lists: the first in the section, the
		 * others beyond it */
		json_object_update_new(
			p.data,
			json_pack("{sIsIsIs[iii]s[" /* 34 buckets */
				  "iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii]sb}",
				  "refs", (json_int_t)0, "flushes",
				  (json_int_t)0, "cold", (json_int_t)0,
				  "counts", 0, 0, 0, "hist", 0, 0, 0, 0, 0, 0,
				  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "gap",
				  0));
		assert_int_equal(bach_mrc_part_from_json(&mp, 3, 0, p.data,
							 &p.words, err,
							 sizeof(err)),
				 i ? -EBADMSG : 0);
		if (!i) {
			assert_int_equal(mp.nfirst, 1);
			assert_int_equal(mp.first[0], 5);
			assert_int_equal(mp.nlast, 1);
			assert_int_equal(mp.last[0], 0x01020304);
			bach_mrc_part_release(&mp);
		}
		/* without the section, nothing to point into */
		assert_int_equal(bach_mrc_part_from_json(&mp, 3, 0, p.data,
							 NULL, err,
							 sizeof(err)),
				 -EBADMSG);
		bach_partial_free(&p);
	}
}

/* ---- bach sim ----------------------------------------------------------- */

static const char *const sim_cfgs[][6] = {
	/* l1i, l1d, l1, l2, l3, tlb */
	{ NULL, NULL, "1k:32:2", NULL, NULL, NULL },
	{ "512:32:2", "1k:32:4", NULL, "4k:32:8", NULL, "8:2" },
	{ NULL, NULL, "1k:16:4:fifo:wt:nwa", "4k:64:8:random", NULL, NULL },
	{ "256:32:full:random", "768:32:3:lru:wb:nwa", NULL, "2k:8:2:wt",
	  "8k:64:4:nwa", "4:full" },
	{ NULL, NULL, "2k:32:64:random", "8k:16:4:fifo", NULL, NULL },
	{ NULL, NULL, "2k:64:full:fifo", "16k:32:32:lru", NULL, NULL },
};
static unsigned sim_pick;

static struct bach_sim *new_sim(void)
{
	struct bach_sim_config cfg;
	struct bach_sim *s;
	char why[200];

	memset(&cfg, 0, sizeof(cfg));
	cfg.seed = 3 + sim_pick;
	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		const char *t = sim_cfgs[sim_pick][i];

		if (!t)
			continue;
		assert_int_equal(
			i == BACH_SIM_TLB
				? bach_tlb_spec_parse(t, &cfg.spec[i], why,
						      sizeof(why))
				: bach_cache_spec_parse(t, &cfg.spec[i], why,
							sizeof(why)),
			0);
		cfg.have[i] = true;
	}
	assert_int_equal(bach_sim_new(&s, &cfg, why, sizeof(why)), 0);
	return s;
}

/* a simulator through its JSON and back into a new one */
static struct bach_sim *sim_roundtrip(struct bach_sim *s)
{
	json_t *j = roundtrip(bach_sim_to_json(s));
	struct bach_sim *t = new_sim();
	char err[300];

	assert_int_equal(bach_sim_from_json(t, j, err, sizeof(err)), 0);
	assert_true(bach_sim_same_state(s, t));
	json_decref(j);
	bach_sim_free(s);
	return t;
}

/* acc, the chunks before record a, then r, the chunk a..b run cold */
static struct bach_sim *sim_join(struct bach_sim *acc, struct bach_sim *r,
				 size_t a, size_t b)
{
	struct bach_sim *cold = new_sim();
	struct bach_sim_counts ca, cr, cc;
	bool same = bach_sim_same_state(acc, cold);

	for (size_t i = a; !same && i < b; i += 7) {
		size_t n = b - i < 7 ? b - i : 7;

		bach_sim_add_at(acc, recs + i * BACH_REC_SIZE, n, i, NULL);
		bach_sim_add_at(cold, recs + i * BACH_REC_SIZE, n, i, NULL);
		same = bach_sim_same_state(acc, cold);
	}
	if (same) {
		bach_sim_get_counts(acc, &ca);
		bach_sim_get_counts(r, &cr);
		bach_sim_get_counts(cold, &cc);
		bach_sim_counts_add(&ca, &cr, &cc);
		bach_sim_set_counts(r, &ca);
		bach_sim_free(acc);
		acc = r;
	} else {
		bach_sim_free(r);
	}
	bach_sim_free(cold);
	return acc;
}

static void check_sim_same(struct bach_sim *a, struct bach_sim *b)
{
	json_t *x = bach_sim_to_json(a), *y = bach_sim_to_json(b);

	assert_true(bach_sim_same_state(a, b));
	assert_true(json_equal(x, y));
	json_decref(x);
	json_decref(y);
	bach_sim_finish(a);
	bach_sim_finish(b);
	x = bach_sim_to_json(a);
	y = bach_sim_to_json(b);
	assert_true(json_equal(x, y));
	json_decref(x);
	json_decref(y);
}

static void test_sim_splits(void **state)
{
	(void)state;
	make_trace();
	for (sim_pick = 0; sim_pick < sizeof(sim_cfgs) / sizeof(*sim_cfgs);
	     sim_pick++) {
		for (int round = 0; round < 12; round++) {
			struct bach_sim *whole = new_sim(), *acc = NULL;
			size_t at[17], n = cuts(at, 16);

			bach_sim_add(whole, recs, NREC);
			for (size_t k = 0; k < n; k++) {
				struct bach_sim *r = new_sim();

				bach_sim_add_at(r, recs + at[k] * BACH_REC_SIZE,
						at[k + 1] - at[k], at[k], NULL);
				r = sim_roundtrip(r);
				acc = !acc ? r
				      : at[k + 1] == at[k]
					      ? (bach_sim_free(r), acc)
					      : sim_join(acc, r, at[k],
							 at[k + 1]);
				acc = sim_roundtrip(acc);
			}
			check_sim_same(acc, whole);
			bach_sim_free(acc);
			bach_sim_free(whole);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_words),
		cmocka_unit_test(test_stats_splits),
		cmocka_unit_test(test_mrc_splits),
		cmocka_unit_test(test_mrc_assoc_splits),
		cmocka_unit_test(test_mrc_sampled_splits),
		cmocka_unit_test(test_wss_splits),
		cmocka_unit_test(test_sim_splits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
