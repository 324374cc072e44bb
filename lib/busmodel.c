// SPDX-License-Identifier: MIT
/* The Pentium bus model (include/bach/busmodel.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bach/busdecode.h"
#include "bach/busmodel.h"
#include "bach/record.h"

#define B(sig) (1ull << (sig))
/* strobes idle high; hlda, clk low */
#define IDLE                                                                  \
	(B(BACH_SIG_ADS) | B(BACH_SIG_BRDY) | B(BACH_SIG_NA) |               \
	 B(BACH_SIG_KEN) | B(BACH_SIG_BOFF) | B(BACH_SIG_LOCK))
/* the pins a cycle's address phase drives */
#define ADDR_PINS (((1ull << 29) - 1) << BACH_SIG_A3)
#define CYCLE_PINS                                                            \
	(ADDR_PINS | (0xffull << BACH_SIG_BE0) | B(BACH_SIG_MIO) |            \
	 B(BACH_SIG_DC) | B(BACH_SIG_WR) | B(BACH_SIG_CACHE))

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned pick(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(next(s) % n) : 0;
}

struct tl {
	uint64_t *w;	/* per clock: the strobes asserted (set bits) */
	uint64_t *pins;	/* per clock: the cycle's pins, where ADS# */
	size_t len, cap;
};

static bool grow(struct tl *t, size_t upto)
{
	if (upto < t->cap)
		return true;
	size_t cap = t->cap ? t->cap : 4096;

	while (cap <= upto)
		cap *= 2;
	uint64_t *w = realloc(t->w, cap * sizeof *w);

	if (!w)
		return false;
	t->w = w;
	uint64_t *p = realloc(t->pins, cap * sizeof *p);

	if (!p)
		return false;
	t->pins = p;
	for (size_t i = t->cap; i < cap; i++)
		t->w[i] = t->pins[i] = 0;
	t->cap = cap;
	return true;
}

/* Assert a strobe (active low: recorded here as a set bit, flipped later). */
static bool mark(struct tl *t, size_t clk, int sig)
{
	if (!grow(t, clk))
		return false;
	t->w[clk] |= B(sig);
	if (clk + 1 > t->len)
		t->len = clk + 1;
	return true;
}

static uint64_t cycle_pins(const uint8_t *r, bool ask_cache)
{
	uint32_t addr = get_be32(r);
	uint64_t p = 0;

	p |= (uint64_t)(addr >> 3) << BACH_SIG_A3;
	p |= (uint64_t)r[4] << BACH_SIG_BE0;
	if (r[5] & BACH_CTL_MIO)
		p |= B(BACH_SIG_MIO);
	if (r[5] & BACH_CTL_DC)
		p |= B(BACH_SIG_DC);
	if (r[5] & BACH_CTL_WR)
		p |= B(BACH_SIG_WR);
	if ((r[5] & BACH_CTL_CACHE) && !ask_cache)
		p |= B(BACH_SIG_CACHE);
	return p;
}

size_t bach_busmodel_run(const uint8_t *recs, size_t n,
			 const struct bach_busmodel_opts *o, uint64_t **clocks)
{
	struct tl t = { 0 };
	uint64_t rng = o->seed ^ 0x62757321ull, noise = o->seed;
	size_t next_ads = 2, last_prev = 1;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = recs + i * BACH_REC_SIZE;
		uint8_t ctl = r[5];
		bool mem = ctl & BACH_CTL_MIO, write = ctl & BACH_CTL_WR;
		bool cacheable = mem && !(ctl & BACH_CTL_CACHE);
		bool ask = mem && !write && (ctl & BACH_CTL_CACHE) &&
			   pick(&rng, 100) < o->ken_pct;
		bool boff = o->boff_every && i % o->boff_every ==
						     o->boff_every - 1;
		bool pipe = !boff && pick(&rng, 100) < o->pipeline_pct;
		unsigned need = cacheable ? 4 : 1;
		size_t t_ads, na = 0, first, c;

		for (int attempt = boff ? 0 : 1; attempt < 2; attempt++) {
			t_ads = next_ads;
			if (attempt == 0 && t_ads <= last_prev)
				t_ads = last_prev + 1; /* alone on the bus */
			if (!mark(&t, t_ads, BACH_SIG_ADS))
				goto oom;
			t.pins[t_ads] = cycle_pins(r, ask);
			first = t_ads + 1 + pick(&rng, o->max_wait + 1);
			if (first <= last_prev)
				first = last_prev + 1;
			if (pipe) {
				na = t_ads + 1;
				if (!mark(&t, na, BACH_SIG_NA))
					goto oom;
				if (first < na)
					first = na;
			}
			/* KEN# low, where it is sampled, for a line fill */
			if (cacheable && !write &&
			    !mark(&t, pipe ? na : first, BACH_SIG_KEN))
				goto oom;
			if (attempt == 0) {
				/* aborted: maybe after a first transfer */
				size_t at = first;

				if (need == 4 && pick(&rng, 2)) {
					if (!mark(&t, at, BACH_SIG_BRDY))
						goto oom;
					at++;
				}
				unsigned hold = 1 + pick(&rng, 2);

				for (unsigned h = 0; h < hold; h++)
					if (!mark(&t, at + h, BACH_SIG_BOFF) ||
					    (h == 0 &&
					     !mark(&t, at, BACH_SIG_BRDY)))
						goto oom;
				next_ads = at + hold;
				continue;
			}
			c = first;
			for (unsigned k = 0; k < need; k++) {
				if (!mark(&t, c, BACH_SIG_BRDY))
					goto oom;
				if (k + 1 < need)
					c += 1 + pick(&rng, o->max_wait ? 2 : 1);
			}
			/* at most two open: the one before must be done */
			next_ads = pipe ? na + 1 : c + 1;
			if (next_ads < last_prev)
				next_ads = last_prev;
			last_prev = c;
		}
	}
	/* a few idle clocks at the end */
	if (!grow(&t, t.len + 2))
		goto oom;
	t.len += 2;
	for (size_t k = 0; k < t.len; k++) {
		uint64_t w = t.w[k], pins;

		if (w & B(BACH_SIG_ADS))
			pins = t.pins[k] & CYCLE_PINS;
		else
			pins = next(&noise) & CYCLE_PINS;
		t.w[k] = (IDLE & ~w) | pins;
	}
	free(t.pins);
	*clocks = t.w;
	return t.len;
oom:
	free(t.w);
	free(t.pins);
	errno = ENOMEM;
	return 0;
}
