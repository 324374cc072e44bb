// SPDX-License-Identifier: MIT
/*
 * Miss-ratio curves (lib/analysis/mrc.h): stack distances over an
 * order-statistic structure, SHARDS sampling, and set-associative LRU for a
 * list of sizes. Written apart from lib/analysis/cachesim.c on purpose: the
 * exactness test compares the two.
 *
 * This file checks a configuration, builds the structures and reads the
 * points out of the counts; the pass over the records is mrc_pass.c's,
 * the stack distances it counts mrc_sdist.c's. mrc_shared.h holds what
 * they share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/cachesim.h" /* bach_parse_bytes() */
#include "lib/analysis/mrc_shared.h"

int bach_mrc_parse_sizes(const char *list, const char *min, const char *max,
			 uint64_t *sizes, char *why, size_t whylen)
{
	int n = 0;

	if (list) {
		char buf[1024], *save = NULL;

		if (strlen(list) >= sizeof(buf))
			return bach_why(why, whylen, "the list is too long");
		strcpy(buf, list);
		for (char *t = strtok_r(buf, ",", &save); t;
		     t = strtok_r(NULL, ",", &save)) {
			if (n == BACH_MRC_MAX_SIZES)
				return bach_why(why, whylen,
						"more than %d sizes",
						BACH_MRC_MAX_SIZES);
			if (bach_parse_bytes(t, &sizes[n]) || !sizes[n])
				return bach_why(
					why, whylen,
					"'%s' is not a size (16k, 1M, ...)", t);
			if (n && sizes[n] <= sizes[n - 1])
				return bach_why(
					why, whylen,
					"'%s' is not larger than the size before it",
					t);
			n++;
		}
		if (!n)
			return bach_why(why, whylen, "no size in '%s'", list);
	} else {
		uint64_t lo, hi;

		if (bach_parse_bytes(min, &lo) || !lo)
			return bach_why(why, whylen,
					"--min: '%s' is not a size", min);
		if (bach_parse_bytes(max, &hi) || !hi)
			return bach_why(why, whylen,
					"--max: '%s' is not a size", max);
		if (hi < lo)
			return bach_why(why, whylen,
					"--max %s is below --min %s", max, min);
		for (uint64_t s = lo; s <= hi; s *= 2) {
			if (n == BACH_MRC_MAX_SIZES)
				return bach_why(
					why, whylen,
					"--min to --max doubles more than %d times",
					BACH_MRC_MAX_SIZES);
			sizes[n++] = s;
		}
	}
	if (sizes[n - 1] > BACH_MRC_MAX_SIZE)
		return bach_why(why, whylen, "%llu bytes is above 4 GiB",
				(unsigned long long)sizes[n - 1]);
	return n;
}

static uint64_t round_u64(double x)
{
	return x > 0 ? (uint64_t)(x + 0.5) : 0;
}

int bach_mrc_check_line(uint32_t line, char *why, size_t whylen)
{
	if (line < BACH_MRC_MIN_LINE || line > BACH_MRC_MAX_LINE ||
	    (line & (line - 1)))
		return bach_why(why, whylen,
				"--line %u is not a power of two from %u to %u",
				line, BACH_MRC_MIN_LINE, BACH_MRC_MAX_LINE);
	return 0;
}

/*
 * The sizes that hold fewer than NEAR_SAMPLED sampled lines go to the
 * near stack, which samples at the rate that gives the smallest size
 * NEAR_MIN_LINES lines (every line when that rate reaches 1), as long as
 * it tracks at most NEAR_MAX_LINES of them.
 */
static void near_sizes(struct bach_mrc *m)
{
	uint64_t first = m->sizes[0] >> m->lg_line, t;

	t = (((uint64_t)NEAR_MIN_LINES << SAMPLE_BITS) + first - 1) / first;
	if (t > 1u << SAMPLE_BITS)
		t = 1u << SAMPLE_BITS;
	if (t < m->threshold)
		t = m->threshold;
	m->nthreshold = (uint32_t)t;
	m->nrate = (double)t / (double)(1u << SAMPLE_BITS);
	for (size_t i = 0; i < m->cfg.nsizes; i++) {
		uint64_t lines = m->sizes[i] >> m->lg_line;
		uint64_t in =
			(lines * t + (1u << SAMPLE_BITS) - 1) >> SAMPLE_BITS;

		if (lines * m->threshold >= (uint64_t)NEAR_SAMPLED
						    << SAMPLE_BITS ||
		    in > NEAR_MAX_LINES)
			break;
		m->nth[m->nnear++] = (uint32_t)in;
	}
	if (!m->nnear)
		m->nthreshold = 0;
}

int bach_mrc_new(struct bach_mrc **mp, const struct bach_mrc_config *cfg,
		 char *why, size_t whylen)
{
	struct bach_mrc *m;
	uint32_t line = cfg->line;

	*mp = NULL;
	if (bach_mrc_check_line(line, why, whylen))
		return -EINVAL;
	if (!cfg->nsizes || cfg->nsizes > BACH_MRC_MAX_SIZES)
		return bach_why(why, whylen, "%zu sizes: give 1 to %d",
				cfg->nsizes, BACH_MRC_MAX_SIZES);
	if (!(cfg->sample > 0 && cfg->sample <= 1))
		return bach_why(why, whylen,
				"--sample %g is not a rate in (0, 1]",
				cfg->sample);
	if (cfg->sample < 1 && cfg->assoc)
		return bach_why(
			why, whylen,
			"--sample needs --assoc full (sets are not sampled)");
	if (!cfg->kinds || (cfg->kinds & ~BACH_MRC_KIND_ALL))
		return bach_why(why, whylen, "no kind of reference to count");
	for (size_t i = 0; i < cfg->nsizes; i++) {
		uint64_t unit = (uint64_t)line * (cfg->assoc ? cfg->assoc : 1);
		uint64_t s = cfg->sizes[i];

		if (i && s <= cfg->sizes[i - 1])
			return bach_why(why, whylen,
					"the sizes are not ascending");
		if (s % unit || s > BACH_MRC_MAX_SIZE)
			return bach_why(
				why, whylen,
				"size %llu is not a multiple of %s (%llu) up to 4 GiB",
				(unsigned long long)s,
				cfg->assoc ? "LINE x ASSOC" : "LINE",
				(unsigned long long)unit);
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->cfg = *cfg;
	memcpy(m->sizes, cfg->sizes, cfg->nsizes * sizeof(*m->sizes));
	m->cfg.sizes = m->sizes;
	m->lg_line = (unsigned)__builtin_ctz(line);
	for (unsigned t = 0; t < BACH_NTYPES; t++)
		if (cfg->kinds >> bach_ref_kind((uint8_t)(t << 4)) & 1)
			m->types |= 1u << t;
	for (unsigned c = 0; c < 256; c++) {
		uint8_t rec[BACH_REC_SIZE] = { 0, 0, 0, 0, 0, (uint8_t)c };

		m->cls[c] = (uint8_t)((m->types >> (c >> 4) & 1) |
				      (unsigned)bach_rec_is_gap(rec) << 1);
	}
	/* a gap marker: its type's bit, and the control byte's low 4 set */
	for (unsigned t = 0; t < BACH_NTYPES; t++)
		m->gap_types |= (uint16_t)((m->cls[t << 4 | 15] >> 1) << t);
	for (unsigned v = 0; v < 256; v++) {
		unsigned j = 0;

		for (unsigned l = 0; l < 8; l++)
			if (v >> l & 1)
				m->squeeze[v] |= (uint64_t)l << (8 * j++);
	}
	m->rate = cfg->sample;
	m->sampled = cfg->sample < 1;
	m->last = COLD;
	if (m->sampled) {
		double t = cfg->sample * (double)(1u << SAMPLE_BITS);

		m->threshold = (uint32_t)(t + 0.5);
		if (!m->threshold) {
			free(m);
			return bach_why(why, whylen,
					"--sample %g is below one line in 2^24",
					cfg->sample);
		}
		m->rate = (double)m->threshold / (double)(1u << SAMPLE_BITS);
	}
	if (!cfg->assoc) {
		if (sd_init(&m->sd, 32 - m->lg_line, m->sampled)) {
			bach_mrc_free(m);
			return -ENOMEM;
		}
		/* th = ceil(lines x R), R = threshold / 2^24; 1 when exact */
		for (size_t i = 0; i < cfg->nsizes; i++) {
			uint64_t lines = cfg->sizes[i] >> m->lg_line;

			m->th[i] = !m->sampled ? lines
					       : (lines * m->threshold +
						  (1u << SAMPLE_BITS) - 1) >>
							 SAMPLE_BITS;
		}
		for (unsigned b = 0; b < BACH_MRC_HIST_BUCKETS; b++) {
			/* bucket b: 0, then 2^(b - 1) to 2^b - 1 */
			uint64_t least = b ? 1ull << (b - 1) : 0;
			uint64_t most = b ? (1ull << b) - 1 : 0;
			size_t i = 0;

			while (i < cfg->nsizes && m->th[i] <= least)
				i++;
			m->th_below[b] = (uint8_t)i;
			while (i < cfg->nsizes && m->th[i] <= most)
				i++;
			m->th_upto[b] = (uint8_t)i;
		}
		if (m->sampled)
			near_sizes(m);
		if (m->nnear && near_init(&m->near, m->nth[m->nnear - 1])) {
			bach_mrc_free(m);
			return -ENOMEM;
		}
		*mp = m;
		return 0;
	}
	m->sa = calloc(cfg->nsizes, sizeof(*m->sa));
	if (!m->sa) {
		bach_mrc_free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cfg->nsizes; i++) {
		struct sa *a = &m->sa[i];
		size_t ways = cfg->sizes[i] >> m->lg_line;

		a->assoc = cfg->assoc;
		a->nsets = (uint32_t)(ways / cfg->assoc);
		a->tag = calloc(ways, sizeof(*a->tag));
		a->stamp = calloc(ways, sizeof(*a->stamp));
		if (!a->tag || !a->stamp) {
			bach_mrc_free(m);
			return -ENOMEM;
		}
	}
	*mp = m;
	return 0;
}

void bach_mrc_free(struct bach_mrc *m)
{
	if (!m)
		return;
	free(m->first);
	free(m->near_first);
	if (!m->cfg.assoc)
		sd_free(&m->sd);
	near_free(&m->near);
	for (size_t i = 0; m->sa && i < m->cfg.nsizes; i++) {
		free(m->sa[i].first);
		free(m->sa[i].tag);
		free(m->sa[i].stamp);
	}
	free(m->sa);
	free(m);
}

void bach_mrc_points(const struct bach_mrc *m, struct bach_mrc_point *out)
{
	size_t k = m->cfg.nsizes;
	/* SHARDS_adj: the expected samples, the difference in bucket 0 */
	double total = m->sampled ? (double)m->refs * m->rate : (double)m->refs;
	uint64_t above = m->cold, near = 0;

	for (size_t i = k; i-- > 0;) {
		struct bach_mrc_point *pt = &out[i];
		double ratio;

		pt->size = m->sizes[i];
		pt->refs = m->refs;
		if (m->cfg.assoc) {
			pt->misses = m->sa[i].misses;
			pt->miss_ratio =
				m->refs ? (double)pt->misses / (double)m->refs
					: 0;
			continue;
		}
		above += m->cnt[i + 1]; /* distances reaching th[i] */
		if (i < m->nnear) {	/* the same, from the near stack */
			double exp = (double)m->refs * m->nrate;

			near += m->ncnt[i + 1];
			ratio = exp > 0 ? (double)near / exp : 0;
			pt->miss_ratio = ratio < 1 ? ratio : 1;
			pt->misses = m->nrate == 1 ? near
						   : round_u64(pt->miss_ratio *
							       (double)m->refs);
			continue;
		}
		ratio = total > 0 ? (double)above / total : 0;
		if (ratio > 1)
			ratio = 1;
		pt->miss_ratio = ratio;
		pt->misses =
			m->sampled ? round_u64(ratio * (double)m->refs) : above;
	}
}

size_t bach_mrc_reuse(const struct bach_mrc *m, uint64_t *out, uint64_t *cold)
{
	double scale = m->sampled ? 1 / m->rate : 1;

	for (size_t b = 0; b < BACH_MRC_HIST_BUCKETS; b++)
		out[b] = round_u64((double)m->hist[b] * scale);
	*cold = round_u64((double)m->cold * scale);
	return BACH_MRC_HIST_BUCKETS;
}

uint64_t bach_mrc_near(const struct bach_mrc *m, double *rate)
{
	*rate = m->nnear ? m->nrate : 0;
	return m->nnear ? m->sizes[m->nnear - 1] : 0;
}

uint64_t bach_mrc_refs(const struct bach_mrc *m)
{
	return m->refs;
}

uint64_t bach_mrc_flushes(const struct bach_mrc *m)
{
	return m->flushes;
}

int bach_mrc_error(const struct bach_mrc *m)
{
	return m->err;
}

int bach_mrc_chunk(struct bach_mrc *m)
{
	if (m->refs || m->flushes)
		return -ENOTSUP;
	m->chunk = true;
	return 0;
}

static int by_stamp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* a set-associative size's lines, oldest first */
static int sa_last(const struct sa *a, struct bach_mrc_sa_part *q)
{
	size_t ways = (size_t)a->nsets * a->assoc, n = 0;
	uint64_t *v = malloc((2 * ways + 2) * sizeof(*v));

	q->last = malloc((ways + 1) * sizeof(*q->last));
	if (!v || !q->last) {
		free(v);
		return -ENOMEM;
	}
	for (size_t w = 0; w < ways; w++)
		if (a->tag[w]) {
			v[2 * n] = a->stamp[w];
			v[2 * n++ + 1] = a->tag[w] - 1;
		}
	qsort(v, n, 2 * sizeof(*v), by_stamp);
	for (size_t i = 0; i < n; i++)
		q->last[i] = (uint32_t)v[2 * i + 1];
	q->nlast = n;
	free(v);
	return 0;
}

int bach_mrc_part_get(const struct bach_mrc *m, struct bach_mrc_part *p)
{
	const struct sdist *s = &m->sd;

	memset(p, 0, sizeof(*p));
	if (!m->chunk)
		return -EINVAL;
	p->refs = m->refs;
	p->flushes = m->flushes;
	p->cold = m->cold;
	p->ncnt = m->cfg.nsizes + 1;
	memcpy(p->cnt, m->cnt, p->ncnt * sizeof(*p->cnt));
	memcpy(p->hist, m->hist, sizeof(p->hist));
	p->gap = m->gap;
	if (m->cfg.assoc) {
		p->nsa = m->cfg.nsizes;
		for (size_t i = 0; i < p->nsa; i++) {
			p->sa[i].misses = m->sa[i].misses;
			p->sa[i].first = m->sa[i].first;
			p->sa[i].nfirst = m->sa[i].nfirst;
			if (sa_last(&m->sa[i], &p->sa[i])) {
				bach_mrc_part_free(p);
				return -ENOMEM;
			}
		}
		return 0;
	}
	p->first = m->first;
	p->nfirst = m->nfirst;
	if (m->nnear) {
		p->nnear_cnt = m->nnear + 1;
		memcpy(p->near_cnt, m->ncnt, p->nnear_cnt * sizeof(*m->ncnt));
		p->near_first = m->near_first;
		p->nnear_first = m->nnear_first;
		p->near_last =
			malloc(((size_t)m->near.k + 1) * sizeof(*p->near_last));
		if (!p->near_last)
			return -ENOMEM;
		p->nnear_last = mrc_near_last(m, p->near_last);
	}
	p->last = malloc(((size_t)s->live + 1) * sizeof(*p->last));
	if (!p->last) {
		bach_mrc_part_free(p);
		return -ENOMEM;
	}
	/* the live lines by the time of their last reference */
	for (uint32_t w = 0; w < (s->now + 63) >> 6; w++)
		for (uint64_t b = s->bits[w]; b; b &= b - 1)
			p->last[p->nlast++] =
				s->owner[w << 6 | (uint32_t)__builtin_ctzll(b)];
	return 0;
}

void bach_mrc_part_free(struct bach_mrc_part *p)
{
	free(p->last);
	free(p->near_last);
	p->last = p->near_last = NULL;
	for (size_t i = 0; i < p->nsa; i++) {
		free(p->sa[i].last);
		p->sa[i].last = NULL;
	}
}

void bach_mrc_settle(struct bach_mrc *m)
{
	m->cold += m->nfirst;
	m->nfirst = 0;
	/* the near stack's: far, as cold lines are */
	m->ncnt[m->nnear] += m->nnear_first;
	m->nnear_first = 0;
	/* set-associative: the first references were counted as misses */
	for (size_t i = 0; m->sa && i < m->cfg.nsizes; i++)
		m->sa[i].nfirst = 0;
}
