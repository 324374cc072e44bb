/* SPDX-License-Identifier: MIT */
/*
 * A Pentium bus model: plays a list of records as bus cycles, clock by
 * clock, with the pin levels of design section 5. It is the other side of
 * the bus decoder, for its tests and its benchmark: decoding the model's
 * pins must give back exactly the records it was given.
 *
 * Each clock is one 64-bit word, bit n = the level of signal n (enum
 * bach_sig). Cycles follow the Pentium's rules: ADS# for one clock, wait
 * states, one BRDY# per transfer (four for line fills and writebacks),
 * KEN# valid at the first BRDY# or NA#, at most two cycles open, in-order
 * completion. Options add NA# pipelining, BOFF# back-offs (the attempt is
 * aborted, sometimes mid-burst, and restarted) and noncacheable reads that
 * ask with CACHE# and are refused by KEN#. Pins that no cycle drives carry
 * noise, so a decoder that looks at the wrong clock is caught.
 */
#ifndef BACH_BUSMODEL_H
#define BACH_BUSMODEL_H

#include <stddef.h>
#include <stdint.h>

struct bach_busmodel_opts {
	uint64_t seed;		/* timing choices and noise */
	unsigned max_wait;	/* wait states per cycle: 0 .. max_wait */
	unsigned pipeline_pct;	/* cycles that assert NA# (percent) */
	unsigned boff_every;	/* back off every Nth cycle (0: never) */
	unsigned ken_pct;	/* noncacheable reads asked with CACHE#, refused
				   by KEN# (percent) */
};

/*
 * Play recs[0 .. n) on the bus. Returns the number of clocks and sets
 * *clocks to a malloc'ed array of them, or returns 0 with errno set.
 */
size_t bach_busmodel_run(const uint8_t *recs, size_t n,
			 const struct bach_busmodel_opts *o, uint64_t **clocks);

#endif
