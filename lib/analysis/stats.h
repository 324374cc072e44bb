/* SPDX-License-Identifier: MIT */
/*
 * What a trace holds, accumulated a block at a time (bach stat). The hot
 * loop does one counter increment per record plus bitmap updates for
 * memory cycles; everything else is derived at the end.
 */
#ifndef BACH_STATS_H
#define BACH_STATS_H

#include <stdint.h>

#include "bach/record.h"

#define BACH_STATS_LANES 4

struct bach_stats {
	uint64_t by_ctl_be[256][256]; /* [control][BE#] */
	/*
	 * The hot loop counts into interleaved 32-bit lanes (so that runs of
	 * equal records do not wait on one counter), folded into by_ctl_be
	 * before they can overflow and at the end.
	 */
	uint32_t lane[BACH_STATS_LANES][65536];
	uint64_t in_lanes;   /* records counted since the last fold */
	uint64_t stop_grant; /* special FB cycles with A4 set */
	uint64_t addr_low;   /* records with address bits 2..0 set */
	uint64_t lost;	     /* sum of gap-marker counts */
	uint32_t lo, hi;     /* memory-cycle address range */
	uint64_t *lines;     /* bitmap of 32-byte lines, 2^27 bits */
	uint64_t *pages;     /* bitmap of 4 KiB pages, 2^20 bits */
};

/* Derived figures. */
struct bach_summary {
	uint64_t records;
	uint64_t by_type[BACH_NTYPES];
	uint64_t invalid;     /* INVALID types, gap markers excluded */
	uint64_t gaps, lost;  /* gap markers and records they stand for */
	uint64_t bad_ctl_low; /* valid type, control bits 3..0 set */
	uint64_t addr_low;
	uint64_t special[BACH_NSPECIAL];
	uint64_t reads, writes; /* memory and I/O */
	uint64_t bytes_hist[9]; /* memory and I/O cycles by bytes requested */
	uint64_t bytes;		/* sum over those cycles */
	uint64_t mem_cycles;
	uint64_t lines, pages; /* distinct ones touched by memory cycles */
	uint32_t lo, hi;       /* valid when mem_cycles */
};

int bach_stats_init(struct bach_stats *s);
void bach_stats_free(struct bach_stats *s);
void bach_stats_add(struct bach_stats *s, const uint8_t *recs, size_t n);
void bach_stats_summary(struct bach_stats *s, struct bach_summary *m);
/* The lanes into by_ctl_be (bach_stats_summary() does it first). */
void bach_stats_fold(struct bach_stats *s);

#endif
