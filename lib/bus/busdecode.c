// SPDX-License-Identifier: MIT
/*
 * The bus decoder (lib/bus/busdecode.h, docs/design.md section 5):
 * built from a resolved channel map (busdecode_map.c), it turns samples
 * into records, a clock at a time.
 *
 * Speed comes from two things. Most bus clocks open no cycle, so a clock
 * costs one byte test of ADS# (and, in clock mode, one of clk) and nothing
 * else. When a clock does open one, the record is assembled from per-byte
 * lookup tables: for each byte of the sample, a table gives that byte's
 * contribution to the 48-bit record, so any channel order costs `unitsize`
 * loads and ORs rather than one bit shuffle per signal. What takes the
 * CPU off the bus (BOFF#, HLDA, AHOLD) and NA# are rare: a clock where
 * none is active, after one where none was, costs one mask test for them.
 *
 * The rules, and the data sheets they come from, are in docs/decoding.md;
 * the tags in the comments below cite them:
 *   [K6-2] AMD-K6-2 Processor Data Sheet 21850J, 4.11 BOFF#, page 93;
 *   [K6]   AMD-K6 Processor Data Sheet 20695H, 5.25 HLDA, page 99, and
 *          "Bus Backoff (BOFF#)", page 150;
 *   [K5]   AMD-K5 Processor Technical Reference Manual 18524C, 5.2.1
 *          A31-A3, 5.2.5 AHOLD, 5.2.10 BOFF, 5.2.18 D63-D0, table 5-19;
 *   [P5]   Pentium Processor Family Developer's Manual, vol. 1 (Intel
 *          241428), the EADS# and HITM# signal descriptions: EADS# is
 *          ignored while HITM# is asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/record.h"
#include "lib/bus/busdecode_map.h"

/* The record bit (of rec48: address 47..16, BE# 15..8, control 7..0). */
static int rec_bit(int sig)
{
	if (sig >= BACH_SIG_A3 && sig < BACH_SIG_A3 + 29)
		return 16 + 3 + (sig - BACH_SIG_A3);
	if (sig >= BACH_SIG_BE0 && sig < BACH_SIG_BE0 + 8)
		return 8 + (sig - BACH_SIG_BE0);
	switch (sig) {
	case BACH_SIG_MIO:
		return 7;
	case BACH_SIG_DC:
		return 6;
	case BACH_SIG_WR:
		return 5;
	case BACH_SIG_CACHE:
		return 4;
	default:
		return -1;
	}
}

/* ---- the decoder ------------------------------------------------------- */

struct pin {
	bool on;       /* captured */
	uint8_t level; /* when not */
	uint16_t byte;
	uint8_t mask;
};

#define PIPE	     2	  /* the Pentium keeps at most two cycles open */
#define NEED_UNKNOWN 0xff /* transfers, until KEN# has been sampled */

struct cyc {
	uint64_t rec;
	uint64_t at; /* the sample its ADS# was read from */
	uint8_t xfers, need;
	bool ken_done, na_seen;
};

/*
 * Without cycle tracking, a cycle recorded at its ADS# that may still be
 * open: BRDY#s seen for it, and the most it can take.
 */
struct lcyc {
	uint8_t got, most;
};

/*
 * The strobes of a clock, as S_* bits holding their pin levels. They are
 * gathered like the record: per sample byte that carries one, a table of
 * its bits.
 */
#define S_ADS	0x01
#define S_BRDY	0x02
#define S_NA	0x04
#define S_BOFF	0x08
#define S_KEN	0x10
#define S_HLDA	0x20
#define S_AHOLD 0x40
#define S_EADS	0x80
#define NSTROBE 8
/* levels on a quiet bus; strobes whose activity is rare (the slow path) */
#define S_QUIET (S_ADS | S_BRDY | S_NA | S_BOFF | S_EADS)
#define S_RARE	(S_NA | S_BOFF | S_HLDA | S_AHOLD | S_EADS)
#define SB_FAST 3 /* strobe bytes looked up without a loop */

static const int strobe_sig[NSTROBE] = {
	BACH_SIG_ADS, BACH_SIG_BRDY, BACH_SIG_NA,    BACH_SIG_BOFF,
	BACH_SIG_KEN, BACH_SIG_HLDA, BACH_SIG_AHOLD, BACH_SIG_EADS,
};

/* A31..A5 of a record: the line an inquire (EADS#) names; A31..A3 */
#define LINE_BITS (((1ull << 27) - 1) << 21)
#define ADDR_BITS (((1ull << 29) - 1) << 19)

struct bach_busdec {
	unsigned unit;
	unsigned nrb;		       /* bytes that carry record signals */
	uint8_t rb[BACH_BUS_MAX_UNIT]; /* which */
	uint8_t row[8];		       /* their table rows; ZERO_ROW beyond */
	uint64_t konst;		       /* constant levels, as record bits */
	struct pin clk, ads;
	unsigned nsb; /* sample bytes with strobes */
	uint16_t sb_byte[NSTROBE];
	uint8_t sb_konst; /* levels of the strobes not captured */
	uint8_t rare;	  /* S_RARE less what never stirs */
	bool clock_mode, track, edge, fast, inquire;
	/* state between blocks */
	bool ads_prev, clk_prev, boff_prev, ahold_prev, inq_ok;
	uint64_t inq;
	uint8_t prev[BACH_BUS_MAX_UNIT]; /* the last sample fed */
	struct cyc q[PIPE];
	unsigned qn;
	struct bach_busdec_stats st;
	uint8_t sb_tbl[NSTROBE + 1][256];	  /* + a row of zeros */
	uint64_t tbl[BACH_BUS_MAX_UNIT + 1][256]; /* + ZERO_ROW */
	/* what the rarer rules need, out of the way of the tables */
	struct pin hitm;
	bool light;	  /* no tracking, boff_n captured: count repeats */
	uint8_t ask_most; /* transfers of a read asked with CACHE#, at most */
	uint8_t inq_n;	  /* state between blocks, as above */
	struct lcyc lq[PIPE];
	unsigned lqn;
};

#define ZERO_ROW BACH_BUS_MAX_UNIT

static struct pin pin_of(const struct bach_busmap *map, int sig)
{
	struct pin p = { .level = map->level[sig] };

	if (map->chan[sig] >= 0) {
		p.on = true;
		p.byte = (uint16_t)(map->chan[sig] / 8);
		p.mask = (uint8_t)(1u << (map->chan[sig] % 8));
	}
	return p;
}

struct bach_busdec *bach_busdec_new(const struct bach_busmap *map,
				    unsigned unitsize, char *err, size_t errlen)
{
	struct bach_busdec *d;
	bool used[BACH_BUS_MAX_UNIT] = { false };

	if (unitsize < 1 || unitsize > BACH_BUS_MAX_UNIT) {
		snprintf(err, errlen,
			 "samples of %u bytes: the decoder takes 1 to %u",
			 unitsize, BACH_BUS_MAX_UNIT);
		return NULL;
	}
	for (int s = 0; s < BACH_NSIG; s++)
		if (map->chan[s] >= (int)(unitsize * 8)) {
			snprintf(
				err, errlen,
				"%s is channel %d, beyond the %u channels of a sample",
				bach_sig_name(s), map->chan[s], unitsize * 8);
			return NULL;
		}
	if (map->chan[BACH_SIG_ADS] < 0) {
		snprintf(err, errlen, "ads_n is not captured");
		return NULL;
	}
	d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->unit = unitsize;
	for (int s = 0; s < BACH_NSIG; s++) {
		int bit = rec_bit(s);

		if (bit < 0)
			continue;
		if (map->chan[s] < 0) {
			d->konst |= (uint64_t)(map->level[s] & 1) << bit;
			continue;
		}
		unsigned byte = (unsigned)map->chan[s] / 8;
		unsigned mask = 1u << (map->chan[s] % 8);

		used[byte] = true;
		for (unsigned v = 0; v < 256; v++)
			if (v & mask)
				d->tbl[byte][v] |= 1ull << bit;
	}
	for (unsigned b = 0; b < unitsize; b++)
		if (used[b])
			d->rb[d->nrb++] = (uint8_t)b;
	for (unsigned i = 0; i < 8; i++)
		d->row[i] = i < d->nrb ? d->rb[i] : ZERO_ROW;
	d->clk = pin_of(map, BACH_SIG_CLK);
	d->ads = pin_of(map, BACH_SIG_ADS);
	d->hitm = pin_of(map, BACH_SIG_HITM);
	d->track = busmap_tracking(map);
	d->rare = S_RARE & (d->track ? 0xff : ~S_NA);
	for (unsigned i = 0; i < NSTROBE; i++) {
		struct pin p = pin_of(map, strobe_sig[i]);
		unsigned j;

		if (!p.on) {
			d->sb_konst |= (uint8_t)(p.level << i);
			/* a constant at its quiet level never stirs */
			if (((p.level << i) ^ S_QUIET) & (1u << i))
				continue;
			d->rare &= (uint8_t) ~(1u << i);
			continue;
		}
		for (j = 0; j < d->nsb; j++)
			if (d->sb_byte[j] == p.byte)
				break;
		if (j == d->nsb)
			d->sb_byte[d->nsb++] = p.byte;
		for (unsigned v = 0; v < 256; v++)
			if (v & p.mask)
				d->sb_tbl[j][v] |= (uint8_t)(1u << i);
	}
	d->clock_mode = d->clk.on;
	d->edge = map->ads_edge;
	d->fast = !d->clock_mode && !d->track && !d->edge && !d->rare;
	d->inquire =
		map->chan[BACH_SIG_AHOLD] >= 0 && map->chan[BACH_SIG_EADS] >= 0;
	d->light = !d->track && map->chan[BACH_SIG_BOFF] >= 0;
	/* a level a map line fixed is the user's word (busmap_tracking) */
	d->ask_most = map->chan[BACH_SIG_KEN] < 0 && map->fixed[BACH_SIG_KEN] &&
				      map->level[BACH_SIG_KEN]
			      ? 1
			      : 4;
	d->clk_prev = true; /* the first sample is never an edge */
	d->q[0] = d->q[1] = (struct cyc){ .need = NEED_UNKNOWN };
	return d;
}

void bach_busdec_free(struct bach_busdec *d)
{
	free(d);
}

static inline uint64_t rec_of(const struct bach_busdec *d, const uint8_t *s)
{
	uint64_t r = d->konst;

	if (d->nrb <= 8) {
		/* eight lookups, no loop; spare slots read a row of zeros */
		const uint8_t *row = d->row, *rb = d->rb;

		return r | d->tbl[row[0]][s[rb[0]]] | d->tbl[row[1]][s[rb[1]]] |
		       d->tbl[row[2]][s[rb[2]]] | d->tbl[row[3]][s[rb[3]]] |
		       d->tbl[row[4]][s[rb[4]]] | d->tbl[row[5]][s[rb[5]]] |
		       d->tbl[row[6]][s[rb[6]]] | d->tbl[row[7]][s[rb[7]]];
	}
	for (unsigned i = 0; i < d->nrb; i++)
		r |= d->tbl[d->rb[i]][s[d->rb[i]]];
	return r;
}

static inline void put_rec(uint8_t *o, uint64_t r)
{
	o[0] = (uint8_t)(r >> 40);
	o[1] = (uint8_t)(r >> 32);
	o[2] = (uint8_t)(r >> 24);
	o[3] = (uint8_t)(r >> 16);
	o[4] = (uint8_t)(r >> 8);
	o[5] = (uint8_t)r;
}

/* A memory read the CPU asked to cache (CACHE# low). */
static inline bool asks_cache(uint64_t rec)
{
	return ((uint8_t)rec & (BACH_CTL_MIO | BACH_CTL_WR | BACH_CTL_CACHE)) ==
	       BACH_CTL_MIO;
}

/* A writeback: a memory write with CACHE# low [K5 table 5-19]. */
static inline bool is_writeback(uint64_t rec)
{
	return ((uint8_t)rec & (BACH_CTL_MIO | BACH_CTL_WR | BACH_CTL_CACHE)) ==
	       (BACH_CTL_MIO | BACH_CTL_WR);
}

/*
 * What a block changes, held in locals while it is decoded: records go
 * out through a uint8_t pointer, which may alias anything, so state kept
 * in *d would be reloaded after every record.
 */
struct trk {
	struct cyc q[PIPE];
	unsigned qn;
	bool ads_prev, boff_prev, ahold_prev, inq_ok;
	uint8_t inq_n;	 /* inquires (EADS#) taken in this AHOLD episode */
	unsigned window; /* the next clock takes the slow path */
	uint64_t now;	 /* the index of the sample being decoded */
	uint64_t inq;
	struct lcyc lq[PIPE];
	unsigned lqn;
	uint64_t cycles, records, aborted, ken_uncached, stray_brdy, overlapped,
		off_bus, off_bus_clocks, backoffs, ken_unknown, inquire_addr,
		inquire_unsure, boff_unsure;
	/* the strobes' lookup, copied */
	const uint8_t *t0, *t1, *t2;
	uint16_t b0, b1, b2;
	unsigned konst, rare;
	bool edge, more; /* more: strobes in more than SB_FAST bytes */
};

static inline void trk_load(const struct bach_busdec *d, struct trk *t)
{
	memset(t, 0, sizeof *t);
	t->q[0] = d->q[0];
	t->q[1] = d->q[1];
	t->qn = d->qn;
	t->ads_prev = d->ads_prev;
	t->boff_prev = d->boff_prev;
	t->ahold_prev = d->ahold_prev;
	t->window = d->boff_prev | d->ahold_prev | (d->inq_n != 0);
	t->inq_ok = d->inq_ok;
	t->inq_n = d->inq_n;
	t->inq = d->inq;
	t->lq[0] = d->lq[0];
	t->lq[1] = d->lq[1];
	t->lqn = d->lqn;
	/* rows past nsb are all zero: three lookups cover the usual case */
	t->t0 = d->sb_tbl[0];
	t->t1 = d->sb_tbl[d->nsb > 1 ? 1 : NSTROBE];
	t->t2 = d->sb_tbl[d->nsb > 2 ? 2 : NSTROBE];
	t->b0 = d->sb_byte[0];
	t->b1 = d->sb_byte[1];
	t->b2 = d->sb_byte[2];
	t->konst = d->sb_konst;
	t->rare = d->rare;
	t->edge = d->edge;
	t->more = d->nsb > SB_FAST;
}

static inline void trk_store(struct bach_busdec *d, const struct trk *t)
{
	d->q[0] = t->q[0];
	d->q[1] = t->q[1];
	d->qn = t->qn;
	d->ads_prev = t->ads_prev;
	d->boff_prev = t->boff_prev;
	d->ahold_prev = t->ahold_prev;
	d->inq_ok = t->inq_ok;
	d->inq_n = t->inq_n;
	d->inq = t->inq;
	d->lq[0] = t->lq[0];
	d->lq[1] = t->lq[1];
	d->lqn = t->lqn;
	d->st.cycles += t->cycles;
	d->st.records += t->records;
	d->st.aborted += t->aborted;
	d->st.ken_uncached += t->ken_uncached;
	d->st.stray_brdy += t->stray_brdy;
	d->st.overlapped += t->overlapped;
	d->st.off_bus += t->off_bus;
	d->st.off_bus_clocks += t->off_bus_clocks;
	d->st.backoffs += t->backoffs;
	d->st.ken_unknown += t->ken_unknown;
	d->st.inquire_addr += t->inquire_addr;
	d->st.inquire_unsure += t->inquire_unsure;
	d->st.boff_unsure += t->boff_unsure;
}

/* nsb: the strobe bytes of the layout, when two or fewer (else 3) */
static inline unsigned strobes(const struct bach_busdec *d, const struct trk *t,
			       const uint8_t *s, const unsigned nsb)
{
	unsigned c = t->konst | t->t0[s[t->b0]] | t->t1[s[t->b1]];

	if (nsb > 2)
		c |= t->t2[s[t->b2]];
	if (nsb > 2 && t->more)
		for (unsigned j = SB_FAST; j < d->nsb; j++)
			c |= d->sb_tbl[j][s[d->sb_byte[j]]];
	return c;
}

/* KEN#, sampled now, settles the cycle's cacheability and length. */
static inline void decide(struct trk *t, struct cyc *c, bool ken_n)
{
	uint8_t ctl = (uint8_t)c->rec;
	bool mem = ctl & BACH_CTL_MIO, write = ctl & BACH_CTL_WR;
	bool cache_req = !(ctl & BACH_CTL_CACHE);

	c->ken_done = true;
	if (mem && cache_req && !write && ken_n) {
		c->rec |= BACH_CTL_CACHE; /* the system said no */
		t->ken_uncached++;
		cache_req = false;
	}
	/* line fills and writebacks are bursts of four transfers */
	c->need = mem && cache_req ? 4 : 1;
}

static inline void pop(struct trk *t, uint8_t *out, uint64_t *at)
{
	put_rec(out, t->q[0].rec);
	*at = t->q[0].at;
	t->records++;
	t->q[0] = t->q[1];
	t->q[1] = (struct cyc){ .need = NEED_UNKNOWN };
	t->qn--;
}

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * A writeback under AHOLD, its address pins floating: the line of the
 * inquire that hit [K5 5.2.5, 5.2.18]. Without hitm_n, after several
 * inquires in the episode that is the last one's, perhaps not the one
 * that hit: counted.
 */
static inline uint64_t inquired(const struct bach_busdec *d, struct trk *t,
				uint64_t r)
{
	t->inquire_addr++;
	t->inquire_unsure += t->inq_n > 1 && !d->hitm.on;
	t->inq_n = 0;
	return (r & ~ADDR_BITS) | t->inq;
}

/*
 * No cycle tracking, BOFF# captured: the cycles recorded at their ADS#
 * that may still be open, for a back-off to count. BRDY#s go to the
 * oldest in order; one leaves when it has had the most transfers it can
 * take, or when a third starts (never more than two open [D5]). A read
 * asked with CACHE# takes one transfer or four, KEN# unknown: giving it
 * the BRDY#s of the next cycle only ever leaves that one open longer, so
 * the count errs on the side of too many.
 */
static inline void light_brdy(struct trk *t, bool brdy)
{
	if (brdy && t->lqn && ++t->lq[0].got >= t->lq[0].most) {
		t->lq[0] = t->lq[1];
		t->lqn--;
	}
}

static inline void light_ads(const struct bach_busdec *d, struct trk *t,
			     uint64_t r)
{
	if (t->lqn == PIPE) {
		t->lq[0] = t->lq[1];
		t->lqn--;
	}
	t->lq[t->lqn++] = (struct lcyc){ .most = asks_cache(r)	   ? d->ask_most
						 : is_writeback(r) ? 4
								   : 1 };
}

/*
 * A clock with the CPU on the bus. rare: the slow path, where NA# may be
 * low and the address may come from an inquire. Returns records written.
 */
static inline __attribute__((always_inline)) unsigned
on_bus(const struct bach_busdec *d, struct trk *t, const uint8_t *s,
       uint8_t *out, uint64_t *at, unsigned c, bool ads, const bool track,
       const bool rare, bool inq)
{
	unsigned k = 0, brdy;
	struct cyc *h = &t->q[0];
	uint64_t r;

	t->cycles += ads;
	if (!track) {
		if (d->light)
			light_brdy(t, !(c & S_BRDY));
		if (!ads)
			return 0;
		r = rec_of(d, s);
		if (rare && inq && is_writeback(r))
			r = inquired(d, t, r);
		if (d->light)
			light_ads(d, t, r);
		t->ken_unknown += asks_cache(r);
		put_rec(out, r);
		*at = t->now;
		t->records++;
		return 1;
	}
	/*
	 * Branches here cost more than work: a wait state, a transfer and an
	 * idle clock take the same path, and what branches there are fire
	 * about once per cycle (its ADS#, its first BRDY#, its end).
	 */
	if (rare && !(c & S_NA) && t->qn) {
		/* NA# is the newest open cycle's: KEN#'s point if first */
		struct cyc *y = &t->q[t->qn - 1];

		if (!y->na_seen) {
			y->na_seen = true;
			if (!y->ken_done)
				decide(t, y, c & S_KEN);
		}
	}
	brdy = !(c & S_BRDY);
	t->stray_brdy += brdy & (t->qn == 0);
	brdy &= t->qn != 0;
	if (unlikely(brdy & !h->ken_done))
		decide(t, h, c & S_KEN);
	h->xfers = (uint8_t)(h->xfers + brdy);
	/* never true of an empty slot: its need is NEED_UNKNOWN */
	if (h->xfers >= h->need)
		pop(t, out + BACH_REC_SIZE * k, at + k), k++;
	if (ads) {
		if (unlikely(t->qn == PIPE)) {
			t->overlapped++;
			pop(t, out + BACH_REC_SIZE * k, at + k), k++;
		}
		r = rec_of(d, s);
		if (rare && inq && is_writeback(r))
			r = inquired(d, t, r);
		t->q[t->qn++] = (struct cyc){ .rec = r,
					      .at = t->now,
					      .need = NEED_UNKNOWN };
	}
	return k;
}

/*
 * The slow path: a clock where BOFF#, HLDA, AHOLD, EADS# or NA# is
 * active, or the one after BOFF# or AHOLD.
 *
 * The CPU floats its outputs from the edge where it samples BOFF# low to
 * the edge where it samples BOFF# high [K6-2 4.11]: nothing it drives is
 * read from a clock with BOFF# low through the first clock with BOFF#
 * high. Cycles open at the first BOFF# clock are aborted, an ADS# of that
 * very clock too; the CPU restarts them [K6 page 150]. While HLDA is high
 * the bus is another master's [K6 5.25], and BOFF# has no effect [K5
 * 5.2.10]. Under AHOLD the CPU floats A31-A3 from the next clock [K5
 * 5.2.1]; AHOLD is sampled but not effective while BOFF# or HLDA is [K5
 * 5.2.5]. Only the writeback of a line an inquire hit runs under it [K5
 * 5.2.5, 5.2.18]: with ahold and eads_n captured, a writeback whose ADS#
 * comes a clock after an effective AHOLD takes the inquire's address.
 * EADS# is ignored while HITM# is asserted [P5]: with hitm_n, such an
 * inquire's address is not taken.
 */
static __attribute__((noinline)) unsigned
clock_rare(const struct bach_busdec *d, struct trk *t, const uint8_t *s,
	   uint8_t *out, uint64_t *at, unsigned c, bool ads, const bool track)
{
	bool hlda = c & S_HLDA, boff = !(c & S_BOFF) && !hlda;
	bool was_boff = t->boff_prev, floated_a = t->ahold_prev;
	bool ahold = c & S_AHOLD;
	unsigned k;

	t->boff_prev = boff;
	t->ahold_prev = ahold && !hlda && !boff;
	/* and the clock after AHOLD, to end its episode's count */
	t->window = t->boff_prev | ahold;
	if (!(c & S_EADS) &&
	    !(d->hitm.on && !(s[d->hitm.byte] & d->hitm.mask))) {
		t->inq = rec_of(d, s) & LINE_BITS;
		t->inq_ok = true;
		t->inq_n = (uint8_t)(t->inq_n + (ahold && t->inq_n < 2));
	}
	if (hlda | boff | was_boff) {
		t->off_bus_clocks++;
		if (boff && !was_boff) {
			t->backoffs++;
			t->cycles += ads;
			t->aborted += t->qn + ads;
			t->qn = 0;
			t->q[0] = t->q[1] =
				(struct cyc){ .need = NEED_UNKNOWN };
			/* untracked, each perhaps recorded twice */
			t->boff_unsure += t->lqn;
			t->lqn = 0;
		} else {
			t->off_bus += ads;
		}
		/* HLDA comes once the CPU's cycles are done [K6 5.25] */
		if (hlda)
			t->lqn = 0;
		t->ads_prev = false; /* the CPU's next ADS# is a fall */
		k = 0;
	} else {
		k = on_bus(d, t, s, out, at, c, ads, track, true,
			   floated_a && d->inquire && t->inq_ok);
	}
	if (!ahold)
		t->inq_n = 0;
	return k;
}

/*
 * One bus clock: following cycles to their end (track), or one record
 * per ADS#; in edge mode, ADS# only where it falls. Clocks are counted
 * by the caller.
 */
static inline __attribute__((always_inline)) unsigned
clock_one(const struct bach_busdec *d, struct trk *t, const uint8_t *s,
	  uint8_t *out, uint64_t *at, const bool track, const unsigned nsb)
{
	unsigned c = strobes(d, t, s, nsb);
	bool ads = !(c & S_ADS);

	if (unlikely(t->edge)) {
		bool low = ads;

		ads = low && !t->ads_prev;
		t->ads_prev = low;
	}
	if (unlikely(((c ^ S_QUIET) & t->rare) | t->window))
		return clock_rare(d, t, s, out, at, c, ads, track);
	return on_bus(d, t, s, out, at, c, ads, track, false, false);
}

/* State mode through clock_one(): n samples, room for cap records. */
static size_t feed_state(struct bach_busdec *d, struct trk *t, const uint8_t *s,
			 size_t n, size_t *used, uint8_t *out, uint64_t *at,
			 size_t cap)
{
	const unsigned unit = d->unit;
	const uint64_t base = d->st.samples;
	size_t i = 0, k = 0;

	/* the usual layouts, each its own loop: strobes in two bytes */
	if (d->track && d->nsb <= 2)
		for (; i < n && k + 2 <= cap; i++)
			t->now = base + i,
			k += clock_one(d, t, s + i * unit,
				       out + BACH_REC_SIZE * k, at + k, true,
				       2);
	else if (d->track)
		for (; i < n && k + 2 <= cap; i++)
			t->now = base + i,
			k += clock_one(d, t, s + i * unit,
				       out + BACH_REC_SIZE * k, at + k, true,
				       3);
	else
		for (; i < n && k < cap; i++)
			t->now = base + i,
			k += clock_one(d, t, s + i * unit,
				       out + BACH_REC_SIZE * k, at + k, false,
				       3);
	d->st.clocks += i;
	*used = i;
	return k;
}

size_t bach_busdec_feed(struct bach_busdec *d, const uint8_t *samples, size_t n,
			size_t *used, uint8_t *out, uint64_t *at, size_t cap)
{
	const uint64_t base = d->st.samples;
	const unsigned unit = d->unit;
	const uint16_t ab = d->ads.byte;
	const uint8_t am = d->ads.mask;
	size_t i = 0, k = 0;
	struct trk t;

	if (d->fast) {
		/* the fast path: state mode, one record per ADS#, nothing
		 * that takes the CPU off the bus captured */
		const uint8_t *s = samples;
		uint64_t asked = 0;

		for (; i < n && k < cap; i++, s += unit)
			if (!(s[ab] & am)) {
				uint64_t r = rec_of(d, s);

				asked += asks_cache(r);
				at[k] = base + i;
				put_rec(out + BACH_REC_SIZE * k++, r);
			}
		d->st.clocks += i;
		d->st.cycles += k;
		d->st.records += k;
		d->st.ken_unknown += asked;
	} else if (!d->clock_mode) {
		trk_load(d, &t);
		k = feed_state(d, &t, samples, n, &i, out, at, cap);
		trk_store(d, &t);
	} else {
		const uint16_t cb = d->clk.byte;
		const uint8_t cm = d->clk.mask;
		const size_t room = d->track ? 2 : 1;
		bool prev = d->clk_prev;

		trk_load(d, &t);
		for (; i < n && k + room <= cap; i++) {
			const uint8_t *s = samples + i * unit;
			bool c = (s[cb] & cm) != 0;

			if (c && !prev) {
				/* the pins as they stood at the edge */
				const uint8_t *p = i ? s - unit : d->prev;

				d->st.clocks++;
				t.now = base + i - 1;
				k += clock_one(d, &t, p,
					       out + BACH_REC_SIZE * k, at + k,
					       d->track, 3);
			}
			prev = c;
		}
		trk_store(d, &t);
		d->clk_prev = prev;
	}
	if (i)
		memcpy(d->prev, samples + (i - 1) * unit, unit);
	d->st.samples += i;
	*used = i;
	return k;
}

size_t bach_busdec_finish(struct bach_busdec *d, uint8_t *out, uint64_t *at,
			  size_t cap)
{
	size_t k = 0;
	struct trk t;

	trk_load(d, &t);
	while (t.qn && k < cap) {
		d->st.unfinished++;
		pop(&t, out + BACH_REC_SIZE * k, at + k);
		k++;
	}
	trk_store(d, &t);
	return k;
}

void bach_busdec_stats(const struct bach_busdec *d,
		       struct bach_busdec_stats *st)
{
	*st = d->st;
}
