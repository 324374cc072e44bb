/* SPDX-License-Identifier: MIT */
/*
 * A Pentium bus model: a CPU, its chipset and, when asked, another bus
 * master, driving the bus pins clock by clock. It is the other side of
 * the bus decoder, for its tests, its benchmark and `bach gen --pins`.
 *
 * The model is written from the processor data sheets, not from the
 * decoder (a model that shares the decoder's assumptions proves nothing).
 * Its sources, and the rule each gives, are cited in lib/bus/busmodel.c and
 * listed in docs/decoding.md ("The rules").
 *
 * Each clock is one 64-bit word: bit n is the level of signal n (enum
 * bach_sig) as it stands just before the clock's rising edge, where the
 * CPU and the chipset sample it. Pins nobody drives (the CPU's outputs
 * while BOFF# or HLDA has it off the bus, the address bus under AHOLD)
 * carry pseudo-random levels, ADS# included: a decoder that reads a
 * floating pin is caught. So are pins driven but meaningless (the address
 * between cycles, KEN# away from its sampling point). The chipset does
 * what the data sheets allow and a decoder may get wrong: several
 * inquires of different lines in one AHOLD episode, some while HITM#
 * still answers an earlier hit (the CPU ignores those); inquires, AHOLD
 * and BOFF# while HLDA is high (sampled, without effect), AHOLD lasting
 * past HLDA's end or falling with it.
 *
 * The records played are the CPU's own cycles. What the CPU really
 * completed on the bus, in order, is the model's truth: the records
 * given, plus the writebacks of modified lines that inquire cycles hit.
 * Record types follow docs/decoding.md: a read is cacheable (D_READ,
 * I_FETCH) only when the CPU asked with CACHE# and the system answered
 * KEN# low; such a read is a line fill, four transfers, whatever its
 * quadword in the line.
 */
#ifndef BACH_BUSMODEL_H
#define BACH_BUSMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/bus/busdecode.h"

struct bach_busmodel_opts {
	uint64_t seed;	       /* timing choices and noise */
	unsigned max_wait;     /* wait states per transfer: 0 .. max_wait */
	unsigned pipeline_pct; /* cycles given NA# (percent) */
	unsigned boff_every;   /* back off every Nth cycle (0: never) */
	unsigned ken_pct;      /* noncacheable reads asked with CACHE#,
				  refused by KEN# (percent) */
	/* appended */
	unsigned boff_max;    /* longest back-off, clocks (0: 3) */
	unsigned hold_every;  /* HOLD before every Nth cycle: HLDA, and
				 another master's cycles (0: never) */
	unsigned snoop_every; /* an inquire under AHOLD before every Nth
				 cycle, hitting a modified line: its
				 writeback (0: never) */
	/* appended */
	unsigned lock_every; /* a locked read-modify-write (LOCK#) from
				every Nth record (N >= 2) that is a data
				read followed by a data write, or a split
				one with SCYC (two data reads of the parts
				of a misaligned operand, then two data
				writes of the same parts) (0: never) */
};

/* What the model did, for tests to hold the decoder's counts against. */
struct bach_busmodel_stats {
	size_t clocks;
	size_t truth;	       /* cycles the CPU completed: records */
	size_t aborted;	       /* attempts BOFF# aborted (ADS# seen) */
	size_t backoffs;       /* BOFF# assertions */
	size_t refused;	       /* KEN# sampled high for a read asked
				  with CACHE# (aborted attempts too) */
	size_t off_bus;	       /* clocks ADS# was low with the CPU off
				  the bus: another master's, floating */
	size_t foreign;	       /* another master's cycles */
	size_t snoops;	       /* writebacks after an inquire hit */
	size_t snoops_floated; /* ... whose ADS# came under AHOLD */
	/* appended */
	size_t eads_ignored; /* inquires while HITM# was asserted */
	size_t eads_hits;    /* inquires that hit: HITM# */
	size_t hold_ahold;   /* AHOLD sampled under HLDA (no effect) */
	size_t hold_boff;    /* BOFF# sampled under HLDA (no effect) */
	size_t hold_eads;    /* inquires under HLDA */
	size_t dead_clocks;  /* TD: pipelined cycles turning W/R# round */
	size_t na_t12;	     /* NA# with two cycles open */
	size_t na_td;	     /* NA# in a dead clock */
	size_t locked;	     /* locked sequences (LOCK#) */
	/* appended */
	size_t split_locked; /* ... of four cycles, split: SCYC */
};

/* The signals the system drives (CPU inputs): their timing differs. */
#define BACH_BUSMODEL_INPUTS                                                   \
	((1ull << BACH_SIG_BRDY) | (1ull << BACH_SIG_NA) |                     \
	 (1ull << BACH_SIG_KEN) | (1ull << BACH_SIG_BOFF) |                    \
	 (1ull << BACH_SIG_AHOLD) | (1ull << BACH_SIG_EADS))
/* HITM# is the CPU's: an output, driven two clocks after EADS# */

/*
 * Play recs[0 .. n) on the bus. Returns the number of clocks and sets
 * *clocks to a malloc'ed array of them; when truth is not NULL, *truth
 * to a malloc'ed array of the records the CPU completed (st->truth of
 * them). st may be NULL. Returns 0 with errno set on failure.
 */
size_t bach_busmodel_play(const uint8_t *recs, size_t n,
			  const struct bach_busmodel_opts *o, uint64_t **clocks,
			  uint8_t **truth, struct bach_busmodel_stats *st);

/* The same, clocks only: with no inquires the truth is recs. */
size_t bach_busmodel_run(const uint8_t *recs, size_t n,
			 const struct bach_busmodel_opts *o, uint64_t **clocks);

#endif
