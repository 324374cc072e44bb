// SPDX-License-Identifier: MIT
/*
 * The Pentium bus model (lib/bus/busmodel.h), written from the data
 * sheets. Every rule it follows is cited where it is applied:
 *
 *   [K6-2] AMD-K6-2 Processor Data Sheet, 21850J, February 2000,
 *          4.11 "BOFF# (Backoff)", page 93.
 *   [K6]   AMD-K6 Processor Data Sheet, 20695H, March 1998: 5.25 "HLDA",
 *          5.26 "HOLD", page 99; 5.32 "LOCK#", page 104 (LOCK# from the
 *          ADS# of a locked operation's first cycle, two to five cycles,
 *          to the last BRDY# of its last; negated for at least a clock
 *          between two locked operations); 6.3 "Memory Reads and
 *          Writes", page 126; "Bus Backoff (BOFF#)", chapter 6, page 150.
 *   [K5]   AMD-K5 Processor Technical Reference Manual, 18524C, November
 *          1996: 5.2.1 "A31-A3"; 5.2.5 "AHOLD", page 5-28; 5.2.10 "BOFF";
 *          5.3.1 "Cycle Definitions", table 5-19, page 5-136; 5.4.4 "Bus
 *          Arbitration and Inquire Cycles", page 5-156; 5.2.18 "D63-D0";
 *          5.2.46 "SCYC (Split Cycle)", page 5-114: SCYC is asserted in
 *          misaligned locked transfers, which take additional bus cycles,
 *          driven from the clock of a cycle's ADS# to its last expected
 *          BRDY#, meaningful only in locked memory cycles (in others not
 *          driven, or not meaningful).
 *   [P5]   Pentium Processor Family Developer's Manual, vol. 1 (Intel
 *          241428), EADS# and HITM#: HITM# is driven two clocks after the
 *          EADS# of an inquire that hit a modified line and stays
 *          asserted until the last BRDY# of its writeback; EADS# is
 *          ignored while HITM# is asserted. SCYC: asserted in misaligned
 *          locked transfers to say that more than two cycles are locked
 *          together; defined for locked cycles only.
 *   [D5]   docs/design.md section 5: KEN# sampled at a cycle's first BRDY# or
 *          NA#, at most two cycles open, BRDY#s in order.
 *
 * The model runs edge by edge. What stands on the pins before edge k was
 * decided off edge k-1, from what each side had sampled up to then: the
 * CPU's outputs, the chipset's (BRDY#, NA#, KEN#, BOFF#, AHOLD, EADS#,
 * and HOLD, which is not a channel), another master's. That is the word
 * of clock k; then both sides sample it at edge k.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bach/record.h"
#include "lib/bus/busdecode.h"
#include "lib/bus/busmodel.h"

#define B(sig) (1ull << (sig))
#define A_PINS (((1ull << 29) - 1) << BACH_SIG_A3)
/* what the CPU drives with ADS# (SCYC too [K5 5.2.46]); LOCK# too */
#define CYC_PINS                                                               \
	(A_PINS | (0xffull << BACH_SIG_BE0) | B(BACH_SIG_MIO) |                \
	 B(BACH_SIG_DC) | B(BACH_SIG_WR) | B(BACH_SIG_CACHE) |                 \
	 B(BACH_SIG_SCYC))
#define OUT_PINS (CYC_PINS | B(BACH_SIG_ADS) | B(BACH_SIG_LOCK))

#define AT_ADS	8 /* a back-off planned at the cycle's ADS# */
#define NO_BOFF 9

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

/* One of the CPU's bus cycles, with the chipset's plan for it. */
struct cyc {
	uint8_t rec[BACH_REC_SIZE]; /* the record it must give */
	uint64_t pins;		    /* driven with ADS# */
	bool read_ask;		    /* a memory read asked with CACHE# low */
	bool ken_hi;		    /* the system's KEN#: high, refused */
	uint8_t xfers;		    /* transfers the system will give */
	uint8_t need;		    /* transfers, as the CPU knows them */
	uint8_t got;
	bool ken_seen, na_seen;
	bool wb;      /* a writeback after an inquire hit */
	uint8_t lock; /* of a locked sequence: 1 its first, 2 its last,
			 3 between */
	bool scyc;    /* the first of a split one: SCYC */
	uint8_t tries;
	uint8_t boff_at;   /* back off at this transfer, AT_ADS, NO_BOFF */
	bool boff_in_wait; /* ... in a wait state before it */
	unsigned wait;	   /* wait states before the next transfer */
	size_t ads_at;	   /* its ADS# clock */
	size_t na_from;	   /* NA# from this clock (0: no NA#) */
	size_t ready;	   /* not issued before this clock */
	size_t idx;	   /* recs[idx]; SIZE_MAX: a writeback */
};

/* Another bus master's cycle, while the CPU is off the bus. */
struct foreign {
	unsigned left; /* cycles still to run */
	bool busy;
	unsigned wait, need, got;
	size_t ads_at;
};

enum episode { EP_NONE, EP_HOLD, EP_AHOLD };

struct sim {
	const struct bach_busmodel_opts *o;
	uint64_t rng, noise;
	uint64_t *w;
	size_t len, cap;
	uint8_t *truth;
	size_t tcap;
	struct bach_busmodel_stats st;
	const uint8_t *recs;
	size_t n, next;	     /* the next record not yet issued */
	size_t trig;	     /* an episode ran before this record */
	struct cyc front[6]; /* to issue before recs[next] */
	unsigned nfront;
	struct cyc open[2];
	unsigned nopen;
	/* the CPU's view, sampled at the last edge */
	bool boff_prev; /* BOFF# sampled low, and effective */
	bool ahold_prev;
	bool hold_seen;
	size_t hlda_from, hlda_to; /* HLDA high in [from, to) */
	/* the chipset */
	unsigned boff_left; /* BOFF# clocks still to drive */
	size_t boff_start;
	size_t inq_at; /* an inquire (EADS#) in a back-off */
	enum episode ep;
	size_t ep_drop, inq_next; /* HOLD or AHOLD goes; next EADS# */
	unsigned inq_left;
	bool drop_after_wb, wb_waits; /* a hit's writeback not yet issued */
	uint32_t inq_line;
	size_t hitm_from;	     /* HITM# low from this clock (0: high) */
	bool hold_inq;		     /* an inquire under this HLDA */
	size_t td_at;		     /* the last dead clock (TD) */
	bool lock_on;		     /* LOCK# asserted */
	size_t unlock_at;	     /* LOCK# negated in this clock */
	unsigned lock_left;	     /* records of the locked sequence
					still to come */
	size_t ahold_from, ahold_to; /* AHOLD at HLDA's end: [from, to) */
	struct foreign fm;
};

static bool emit_word(struct sim *s, uint64_t w)
{
	if (s->len == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		uint64_t *p = realloc(s->w, cap * sizeof *p);

		if (!p)
			return false;
		s->w = p;
		s->cap = cap;
	}
	s->w[s->len++] = w;
	return true;
}

static bool emit_truth(struct sim *s, const uint8_t *rec)
{
	if (s->st.truth == s->tcap) {
		size_t cap = s->tcap ? 2 * s->tcap : 4096;
		uint8_t *p = realloc(s->truth, cap * BACH_REC_SIZE);

		if (!p)
			return false;
		s->truth = p;
		s->tcap = cap;
	}
	memcpy(s->truth + s->st.truth++ * BACH_REC_SIZE, rec, BACH_REC_SIZE);
	return true;
}

/* The pins of a cycle's address phase; CACHE# low when the CPU asks. */
static uint64_t cycle_pins(const uint8_t *r, bool ask)
{
	uint32_t addr = bach_get_be32(r);
	uint64_t p = 0;

	p |= (uint64_t)(addr >> 3) << BACH_SIG_A3;
	p |= (uint64_t)r[4] << BACH_SIG_BE0;
	if (r[5] & BACH_CTL_MIO)
		p |= B(BACH_SIG_MIO);
	if (r[5] & BACH_CTL_DC)
		p |= B(BACH_SIG_DC);
	if (r[5] & BACH_CTL_WR)
		p |= B(BACH_SIG_WR);
	if (!ask)
		p |= B(BACH_SIG_CACHE);
	return p;
}

static bool data_read(const uint8_t *r)
{
	const uint8_t m = BACH_CTL_MIO | BACH_CTL_DC | BACH_CTL_WR;

	return (r[5] & m) == (BACH_CTL_MIO | BACH_CTL_DC);
}

static bool data_write(const uint8_t *r)
{
	const uint8_t wm =
		BACH_CTL_MIO | BACH_CTL_DC | BACH_CTL_WR | BACH_CTL_CACHE;

	return (r[5] & wm) == wm;
}

/*
 * Does a locked read-modify-write start at record idx, every
 * lock_every-th record, and how many cycles has it? A data read then a
 * data write: two. A misaligned operand split in two parts (two data
 * reads of distinct bytes, in one quadword or the next, then two data
 * writes of the same parts in the same order): four, the split locked
 * sequence SCYC announces [K5 5.2.46; P5, SCYC]. LOCK# is asserted from
 * the first cycle's ADS# to the last one's last BRDY#, and HOLD is not
 * answered in between [K6 5.26, 5.32; P5, LOCK#]. The model gives locked
 * cycles no NA#, starts them on an idle bus, and backs none off nor
 * inquires in them: the chipset's choices, which the data sheets allow.
 */
static unsigned locked_at(const struct sim *s, size_t idx)
{
	const uint8_t *r = s->recs + idx * BACH_REC_SIZE;

	if (s->o->lock_every < 2 || idx % s->o->lock_every || idx + 1 >= s->n ||
	    !data_read(r))
		return 0;
	if (idx + 3 < s->n && data_read(r + 6) && data_write(r + 12) &&
	    data_write(r + 18) && !memcmp(r, r + 12, 5) &&
	    !memcmp(r + 6, r + 18, 5) && (r[4] | r[10]) == 0xff &&
	    r[4] != 0xff && r[10] != 0xff &&
	    (bach_get_be32(r + 6) == bach_get_be32(r) ||
	     bach_get_be32(r + 6) == bach_get_be32(r) + 8))
		return 4;
	return data_write(r + 6) ? 2 : 0;
}

/*
 * A record as the CPU runs it. CACHE# low asks for a burst: a writeback,
 * or a read the system must confirm with KEN#, else it is one transfer
 * [K5 table 5-19]; the two must agree for a read to be cacheable [K6
 * 6.3]. A read the record calls noncacheable is sometimes asked with
 * CACHE# all the same, and refused by KEN#: a BIOS ROM, video memory.
 */
static struct cyc fresh(struct sim *s, size_t idx)
{
	const uint8_t *r = s->recs + idx * BACH_REC_SIZE;
	struct cyc c = { .boff_at = NO_BOFF, .idx = idx };
	uint8_t ctl = r[5];
	bool mem = ctl & BACH_CTL_MIO, write = ctl & BACH_CTL_WR;
	bool nc = ctl & BACH_CTL_CACHE;
	bool ask =
		mem && (!nc || (!write && pick(&s->rng, 100) < s->o->ken_pct));

	memcpy(c.rec, r, BACH_REC_SIZE);
	if (s->lock_left) {
		c.lock = --s->lock_left ? 3 : 2;
	} else {
		unsigned len = locked_at(s, idx);

		s->lock_left = len ? len - 1 : 0;
		c.lock = len ? 1 : 0;
		c.scyc = len > 2;
	}
	if (c.lock) {
		/* a locked read runs noncacheable, one transfer [P5,
		 * LOCK#]: the record the CPU completes says so */
		ask = false;
		c.rec[5] |= BACH_CTL_CACHE;
	}
	c.pins = cycle_pins(r, ask);
	c.read_ask = ask && !write;
	c.ken_hi = nc;
	c.xfers = ask && (write || !nc) ? 4 : 1;
	if (!c.read_ask)
		c.need = c.xfers;
	return c;
}

/* The line an inquire hit, written back: four transfers [K5 5.2.5]. */
static struct cyc writeback(uint32_t line, size_t ready)
{
	struct cyc c = { .boff_at = NO_BOFF,
			 .wb = true,
			 .xfers = 4,
			 .need = 4,
			 .ready = ready,
			 .idx = SIZE_MAX };

	bach_put_be32(c.rec, line);
	c.rec[4] = 0x00;
	c.rec[5] = BACH_T_WRITE_BACK << 4;
	c.pins = cycle_pins(c.rec, true);
	return c;
}

static void push_front(struct sim *s, const struct cyc *c, unsigned n)
{
	memmove(s->front + n, s->front, s->nfront * sizeof *s->front);
	memcpy(s->front, c, n * sizeof *c);
	s->nfront += n;
}

/*
 * The chipset's inquire (EADS#) of `line` at clock k. The CPU ignores
 * EADS# while HITM# is asserted [P5] (the model never drives it in the
 * clock right after another, before HITM# can answer). One that hits a
 * modified line: HITM# low from two clocks later until the last BRDY# of
 * the line's writeback [P5], which comes before the CPU's other cycles,
 * restarts too [K5 5.2.5; K6 page 150]. Returns whether it hit.
 */
static bool inquire(struct sim *s, size_t k, uint32_t line, bool hit, bool hitm)
{
	struct cyc c;

	if (hitm || s->hitm_from) {
		s->st.eads_ignored++;
		return false;
	}
	if (!hit)
		return false;
	s->st.eads_hits++;
	c = writeback(line, k + 2);
	push_front(s, &c, 1);
	s->hitm_from = k + 2;
	return true;
}

static const struct cyc *pending(const struct sim *s)
{
	return s->nfront ? &s->front[0] : NULL;
}

static bool hlda_at(const struct sim *s, size_t k)
{
	return s->hlda_from && k >= s->hlda_from &&
	       (!s->hlda_to || k < s->hlda_to);
}

/* The chipset decides to back off from clock k, for 1 .. boff_max. */
static void back_off(struct sim *s, size_t k)
{
	unsigned max = s->o->boff_max ? s->o->boff_max : 3;
	unsigned len = 1 + pick(&s->rng, max);

	s->boff_left = len;
	s->boff_start = k;
	s->inq_at = 0;
	/* in a long one, an inquire (EADS#), when inquires are asked for,
	 * and another master's cycle */
	if (len >= 3 && s->o->snoop_every && pick(&s->rng, 2))
		s->inq_at = k + 1 + pick(&s->rng, len - 1);
	if (len >= 3 && !s->fm.busy && pick(&s->rng, 2)) {
		s->fm.left = 1;
		s->fm.need = 1;
		s->fm.wait = 0;
	}
}

/* The CPU starts a cycle at clock k: the chipset plans its answers. */
static void plan(struct sim *s, struct cyc *c, size_t k, bool boff)
{
	c->ads_at = k;
	c->got = 0;
	c->ken_seen = c->na_seen = false;
	if (c->read_ask)
		c->need = 0; /* until KEN# is sampled */
	c->wait = pick(&s->rng, s->o->max_wait + 1);
	c->na_from = 0;
	if (c->lock)
		return;
	if (pick(&s->rng, 100) < s->o->pipeline_pct)
		c->na_from = k + 1 + pick(&s->rng, 2 + 2 * s->o->max_wait);
	if (boff && c->tries == 0) {
		unsigned r = pick(&s->rng, 8);

		c->boff_at = r < 2   ? AT_ADS
			     : r < 4 ? 0
				     : (uint8_t)pick(&s->rng, c->xfers);
		c->boff_in_wait = r >= 6;
	}
}

/*
 * May the CPU start a cycle at clock k? Not while its outputs float:
 * from the edge BOFF# is sampled low to the one it is sampled high
 * [K6-2 4.11], nor while HLDA is high [K6 5.25], nor once it has seen
 * HOLD [K6 5.26]. Under AHOLD it has no address bus [K5 5.2.1]; the
 * writeback of a line an inquire hit may run all the same [K5 5.2.5],
 * nothing else starts. A new cycle comes after the last BRDY# of the one
 * before, off the next edge or later [K6 6.3: the K6 leaves an idle clock
 * there; the model may not, the harder case for a decoder], or, once NA#
 * was sampled for it, while it still runs: at most two open [D5].
 */
static bool may_issue(const struct sim *s, size_t k, const struct cyc *c)
{
	if (!c || k < c->ready || s->boff_prev || hlda_at(s, k) ||
	    (s->hold_seen && !s->lock_on))
		return false;
	/* a locked sequence on an idle bus, LOCK# negated for a clock
	 * after the one before [K6 5.32] */
	if (c->lock == 1 && (s->nopen || k <= s->unlock_at))
		return false;
	if (s->ahold_prev && !(c->wb && s->nopen == 0))
		return false;
	if (s->nopen == 0)
		return true;
	return s->nopen == 1 && s->open[0].na_seen && !c->wb;
}

/* KEN# sampled for c: its length is known [K5 table 5-19, D5]. */
static void sample_ken(struct sim *s, struct cyc *c, bool ken_hi)
{
	c->ken_seen = true;
	if (!c->read_ask)
		return;
	c->need = ken_hi ? 1 : 4;
	s->st.refused += ken_hi;
}

/* Before another record: HOLD, or AHOLD for an inquire, now and then. */
static void episodes(struct sim *s, size_t k)
{
	const struct bach_busmodel_opts *o = s->o;
	size_t i = s->next;

	if (s->ep != EP_NONE || s->boff_left || s->nfront || s->lock_on ||
	    i >= s->n || s->trig == i + 1)
		return;
	if (o->hold_every && i % o->hold_every == o->hold_every - 1) {
		s->trig = i + 1;
		s->ep = EP_HOLD;
		s->ep_drop = 0;
		s->hold_inq = false;
		s->fm.left = 1 + pick(&s->rng, 3);
		s->fm.busy = false;
	} else if (o->snoop_every && i % o->snoop_every == o->snoop_every - 1) {
		s->trig = i + 1;
		s->ep = EP_AHOLD;
		s->ep_drop = 0;
		/* EADS# no sooner than the address bus floats; up to three,
		 * each of its own line, the later ones while HITM# still
		 * answers an earlier hit (ignored) or after its writeback */
		s->inq_next = k + 2 + pick(&s->rng, 3);
		s->inq_left = 1 + pick(&s->rng, 3);
		s->wb_waits = false;
		s->drop_after_wb = pick(&s->rng, 4) != 0;
	}
}

/* The other master's cycles: one ADS#, then BRDY#s from the chipset. */
static void foreign_clock(struct sim *s, size_t k, bool start, bool *ads,
			  bool *brdy)
{
	struct foreign *f = &s->fm;

	*ads = *brdy = false;
	if (f->busy && f->ads_at < k) {
		if (f->wait) {
			f->wait--;
		} else {
			*brdy = true;
			if (++f->got == f->need) {
				f->busy = false;
				f->left--;
			}
		}
	} else if (!f->busy && f->left && (start || pick(&s->rng, 2))) {
		*ads = true;
		f->busy = true;
		f->ads_at = k;
		f->got = 0;
		if (s->ep == EP_HOLD) {
			f->need = pick(&s->rng, 2) ? 4 : 1;
			f->wait = pick(&s->rng, s->o->max_wait + 1);
		}
		s->st.foreign++;
	}
}

static int clock(struct sim *s, size_t k)
{
	const struct bach_busmodel_opts *o = s->o;
	uint64_t w = 0, rnd = next(&s->noise);
	bool hlda = hlda_at(s, k), cpu_float = s->boff_prev || hlda;
	bool brdy = false, brdy_shown = false, na = false, boff = false;
	bool ahold = false, eads = false, hold = false, f_ads = false;
	bool boff_pin = false, hitm = s->hitm_from && k >= s->hitm_from;
	bool f_brdy = false, ken_drive = false, ken_hi = false;
	struct cyc *head = NULL, *issued = NULL;
	unsigned na_idx = 0, nopen0 = s->nopen;
	bool issued_wb = false;

	episodes(s, k);
	/* ---- the CPU: a new cycle? ------------------------------------ */
	if (!s->nfront && s->next < s->n) {
		s->front[0] = fresh(s, s->next++);
		s->front[0].ready = k;
		s->nfront = 1;
	}
	if (may_issue(s, k, pending(s)) &&
	    (o->max_wait == 0 || pick(&s->rng, 4) != 0)) {
		struct cyc c = s->front[0];
		bool planned = !c.wb && o->boff_every &&
			       c.idx % o->boff_every == o->boff_every - 1;

		memmove(s->front, s->front + 1, --s->nfront * sizeof *s->front);
		plan(s, &c, k, planned && s->ep == EP_NONE);
		if (c.wb && s->ahold_prev)
			s->st.snoops_floated++;
		if (c.lock == 1) {
			s->lock_on = true;
			s->st.locked++;
			s->st.split_locked += c.scyc;
		}
		s->open[s->nopen++] = c;
		issued = &s->open[s->nopen - 1];
		issued_wb = c.wb;
	}

	/* ---- the chipset ---------------------------------------------- */
	if (s->boff_left) {
		boff = true;
	} else if (s->ep == EP_NONE && !hlda) {
		if (issued && issued->tries == 0 && issued->boff_at == AT_ADS) {
			back_off(s, k); /* in the clock of the ADS# */
			boff = true;
		} else if (o->boff_every && nopen0 == 0 && !issued &&
			   !s->lock_on &&
			   pick(&s->rng, 8 * o->boff_every) == 0) {
			back_off(s, k); /* on an idle bus */
			boff = true;
		}
	}
	if (nopen0 && s->open[0].ads_at < k && !hlda)
		head = &s->open[0];
	if (head && !boff) {
		bool planned = head->tries == 0 && head->boff_at == head->got &&
			       s->ep == EP_NONE;

		if (head->wait) {
			head->wait--;
			if (planned && head->boff_in_wait) {
				back_off(s, k);
				boff = true;
			}
		} else if (planned) {
			/* BOFF# wins over a BRDY# in the same clock [K6-2] */
			back_off(s, k);
			boff = true;
			brdy_shown = pick(&s->rng, 2);
		} else {
			brdy = brdy_shown = true;
		}
	}
	/* NA# for the newest cycle the chipset has seen [D5] */
	if (nopen0 && !boff && !hlda) {
		struct cyc *y = &s->open[nopen0 - 1];

		na_idx = nopen0 - 1;
		na = y->na_from && k >= y->na_from && !y->na_seen;
		/* never two KEN# points in a clock: the older cycle's came
		 * with its NA#, before the newer one could start */
		if (na && brdy && na_idx && !head->ken_seen && !y->ken_seen)
			na = false;
		/* NA# in T12 (two open) and in TD are the newer cycle's */
		s->st.na_t12 += na && nopen0 == 2;
		s->st.na_td += na && k == s->td_at;
	}
	/* KEN# is driven right where the CPU samples it, else anything */
	if (brdy && !head->ken_seen) {
		ken_drive = true;
		ken_hi = head->ken_hi;
	}
	if (na && !s->open[na_idx].ken_seen) {
		ken_drive = true;
		ken_hi = s->open[na_idx].ken_hi;
	}
	/* HOLD, and the other master under HLDA */
	if (s->ep == EP_HOLD) {
		hold = !s->ep_drop;
		if (hlda && !s->ep_drop) {
			foreign_clock(s, k, false, &f_ads, &f_brdy);
			if (!s->fm.left && !s->fm.busy)
				s->ep_drop = k + 1 + pick(&s->rng, 2);
		}
		if (s->ep_drop && k >= s->ep_drop)
			hold = false;
		/* the chipset snoops the other master's cycles (EADS#) and
		 * may drive BOFF#: sampled under HLDA, without effect [K5
		 * 5.2.10]; while HOLD lasts, HLDA does too */
		if (hlda && o->snoop_every && !s->hold_inq &&
		    pick(&s->rng, 4) == 0) {
			eads = s->hold_inq = true;
			s->st.hold_eads++;
		}
		if (hlda && hold && o->boff_every && pick(&s->rng, 6) == 0) {
			boff_pin = true;
			s->st.hold_boff++;
		}
	}
	/* in a back-off: one transfer, ADS# at its second clock */
	if (boff && s->fm.left && k > s->boff_start)
		foreign_clock(s, k, true, &f_ads, &f_brdy);
	/* AHOLD, and inquires (EADS#) while the address bus is free */
	if (s->ep == EP_AHOLD) {
		ahold = !(s->ep_drop && k >= s->ep_drop);
		if (ahold && s->inq_left && k >= s->inq_next) {
			eads = true;
			s->inq_next = k + 2 + pick(&s->rng, 8);
		}
	}
	/* AHOLD at the end of HLDA: sampled, effective once HLDA is low */
	if (s->ahold_to && k >= s->ahold_from && k < s->ahold_to) {
		ahold = true;
		s->st.hold_ahold += hlda;
	}
	if (boff && s->inq_at == k && k > s->boff_start)
		eads = true;

	/* ---- the pins of clock k ---------------------------------------- */
	if (cpu_float) {
		w = rnd & OUT_PINS; /* floating, ADS# with the rest */
	} else {
		if (issued)
			w = issued->pins;
		else if (s->nopen)
			w = s->open[s->nopen - 1].pins;
		else
			w = rnd & CYC_PINS;
		if (!s->lock_on)
			w |= B(BACH_SIG_LOCK);
		/* SCYC from the ADS# of a split locked sequence's first
		 * cycle to its last BRDY#, low in the sequence's other
		 * cycles; undefined outside locked cycles [P5; K5 5.2.46]:
		 * random levels there */
		w &= ~B(BACH_SIG_SCYC);
		if (!s->lock_on)
			w |= rnd & B(BACH_SIG_SCYC);
		else if (issued ? issued->scyc : s->nopen && s->open[0].scyc)
			w |= B(BACH_SIG_SCYC);
		if (!issued)
			w |= B(BACH_SIG_ADS);
		/* A31-A3 float a clock after AHOLD [K5 5.2.1] */
		if (s->ahold_prev)
			w = (w & ~A_PINS) | (next(&s->noise) & A_PINS);
	}
	if (f_ads)
		w = (w & ~OUT_PINS) | (next(&s->noise) & CYC_PINS) |
		    B(BACH_SIG_LOCK);
	if (eads) {
		uint32_t a = (uint32_t)next(&s->rng) & ~31u;

		s->inq_line = a;
		/* A4-A3 need only be valid levels [K5 5.2.1] */
		a |= (uint32_t)pick(&s->rng, 4) << 3;
		w = (w & ~A_PINS) | ((uint64_t)(a >> 3) << BACH_SIG_A3);
	}
	if (hlda)
		w |= B(BACH_SIG_HLDA);
	if (!(brdy_shown || f_brdy))
		w |= B(BACH_SIG_BRDY);
	if (!na)
		w |= B(BACH_SIG_NA);
	if (!(boff || boff_pin))
		w |= B(BACH_SIG_BOFF);
	if (!hitm)
		w |= B(BACH_SIG_HITM);
	if (ahold)
		w |= B(BACH_SIG_AHOLD);
	if (!eads)
		w |= B(BACH_SIG_EADS);
	if (ken_drive ? ken_hi : (rnd >> 63))
		w |= B(BACH_SIG_KEN);
	if ((cpu_float || hlda) && !(w & B(BACH_SIG_ADS)))
		s->st.off_bus++;
	if (!emit_word(s, w))
		return -1;

	/* ---- edge k: both sides sample ---------------------------------- */
	/* HLDA: BOFF# is sampled but not effective [K5 5.2.10] */
	bool boff_eff = boff && !hlda;

	if (boff_eff && !s->boff_prev) {
		/* every open cycle is aborted, restarted later in order,
		 * whatever it had transferred [K6-2 4.11]; an ADS# in this
		 * very clock too [K6 page 150] */
		s->st.backoffs++;
		s->st.aborted += s->nopen;
		for (unsigned i = 0; i < s->nopen; i++)
			s->open[i].tries++;
		push_front(s, s->open, s->nopen);
		s->nopen = 0;
	}
	if (!boff_eff) {
		if (na) {
			struct cyc *y = &s->open[na_idx];

			y->na_seen = true;
			if (!y->ken_seen)
				sample_ken(s, y, w & B(BACH_SIG_KEN));
		}
		if (brdy) {
			if (!head->ken_seen)
				sample_ken(s, head, w & B(BACH_SIG_KEN));
			head->wait = pick(&s->rng, o->max_wait ? 2 : 1);
			if (++head->got == head->need) {
				if (!emit_truth(s, head->rec))
					return -1;
				s->st.snoops += head->wb;
				uint64_t was = head->pins;

				if (head->wb)
					s->hitm_from = 0;
				if (head->lock == 2) {
					s->lock_on = false;
					s->unlock_at = k + 1;
				}
				s->open[0] = s->open[1];
				s->nopen--;
				/* TD: a dead clock turns the data bus round
				 * between pipelined cycles of opposite
				 * directions, no BRDY# in it [P5, bus
				 * states] */
				if (s->nopen && ((s->open[0].pins ^ was) &
						 B(BACH_SIG_WR))) {
					s->st.dead_clocks++;
					s->td_at = k + 1;
					if (!s->open[0].wait)
						s->open[0].wait = 1;
				}
			}
		}
	}
	if (eads && s->ep == EP_AHOLD) {
		if (inquire(s, k, s->inq_line, pick(&s->rng, 8) < 5, hitm))
			s->wb_waits = true;
		if (--s->inq_left == 0 && !(s->wb_waits && s->drop_after_wb))
			s->ep_drop = k + 1 + pick(&s->rng, 2);
	} else if (eads) {
		/* in a back-off or under HLDA: a hit's writeback comes before
		 * the restarts [K6 page 150] */
		inquire(s, k, s->inq_line, pick(&s->rng, 2), hitm);
	}
	if (s->ep == EP_AHOLD && issued_wb) {
		s->wb_waits = false;
		if (!s->inq_left && !s->ep_drop)
			s->ep_drop = k + pick(&s->rng, 4);
	}
	if (s->ep == EP_AHOLD && s->ep_drop && k >= s->ep_drop && !ahold)
		s->ep = EP_NONE;
	s->boff_prev = boff_eff;
	/* AHOLD: sampled but not effective while BOFF# or HLDA is [K5
	 * 5.2.5] */
	s->ahold_prev = ahold && !hlda && !boff_eff;
	s->hold_seen = hold;
	if (s->boff_left && --s->boff_left == 0) {
		s->inq_at = 0;
		s->fm.left = 0;
		s->fm.busy = false;
	}
	/* HLDA a clock edge after HOLD, once the last BRDY# is in; low a
	 * clock edge after HOLD goes [K6 5.25] */
	if (hold && !s->hlda_from && s->nopen == 0 && !boff_eff && !s->lock_on)
		s->hlda_from = k + 2;
	if (s->ep == EP_HOLD && !hold && s->hlda_from && !s->hlda_to) {
		s->hlda_to = k + 2;
		/* now and then AHOLD from HLDA's last clock, falling with it
		 * or up to two clocks after */
		if (o->snoop_every && pick(&s->rng, 2)) {
			s->ahold_from = k + 1;
			s->ahold_to = k + 2 + pick(&s->rng, 3);
		}
	}
	if (s->ahold_to && k + 1 >= s->ahold_to)
		s->ahold_from = s->ahold_to = 0;
	if (s->hlda_to && k + 1 >= s->hlda_to) {
		s->hlda_from = s->hlda_to = 0;
		s->ep = EP_NONE;
	}
	return 0;
}

static bool busy(const struct sim *s)
{
	return s->next < s->n || s->nfront || s->nopen || s->boff_left ||
	       s->ep != EP_NONE || s->hlda_from || s->ahold_to;
}

size_t bach_busmodel_play(const uint8_t *recs, size_t n,
			  const struct bach_busmodel_opts *o, uint64_t **clocks,
			  uint8_t **truth, struct bach_busmodel_stats *st)
{
	struct sim s = { .o = o, .recs = recs, .n = n };
	size_t k = 0, limit = 1000 + 400 * n;

	s.rng = o->seed ^ 0x62757321ull;
	s.noise = o->seed;
	/* a few idle clocks first, so that clk has edges before ADS# */
	for (; k < 2; k++)
		if (!emit_word(&s, (next(&s.noise) & CYC_PINS) |
					   B(BACH_SIG_ADS) | B(BACH_SIG_BRDY) |
					   B(BACH_SIG_NA) | B(BACH_SIG_BOFF) |
					   B(BACH_SIG_LOCK) | B(BACH_SIG_EADS) |
					   B(BACH_SIG_HITM)))
			goto fail;
	for (; busy(&s); k++) {
		if (k == limit) {
			errno = EDEADLK; /* a model that never ends */
			goto out;
		}
		if (clock(&s, k))
			goto fail;
	}
	for (unsigned i = 0; i < 2; i++)
		if (clock(&s, k++))
			goto fail;
	s.st.clocks = s.len;
	*clocks = s.w;
	if (truth)
		*truth = s.truth;
	else
		free(s.truth);
	if (st)
		*st = s.st;
	return s.len;
fail:
	errno = ENOMEM;
out:
	free(s.w);
	free(s.truth);
	return 0;
}

size_t bach_busmodel_run(const uint8_t *recs, size_t n,
			 const struct bach_busmodel_opts *o, uint64_t **clocks)
{
	return bach_busmodel_play(recs, n, o, clocks, NULL, NULL);
}
