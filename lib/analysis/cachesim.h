/* SPDX-License-Identifier: MIT */
/*
 * Trace-driven cache simulation (bach sim; docs/analysis.md section 2).
 *
 * A hierarchy of demand-fetch caches: L1 split into instructions and data
 * or unified, then optional unified L2 and L3, and an optional TLB beside
 * L1. Every number means what Dinero IV's report means by it (its man
 * page d4.3, "D4CACHE RESULT FIELDS", and cmdmain.c's report), so that the
 * two can be compared number for number on `bach convert --to dinx`:
 *
 * - each memory record is one reference (lib/analysis/refs.h); a reference that
 *   crosses a line is split at line boundaries, and each piece is a demand
 *   fetch of its kind (Dinero's "multi-block" references);
 * - a miss of a read or fetch reads its whole line from the next level; a
 *   write miss under write-allocate reads the line unless the write covers
 *   all of it; under no-write-allocate the write goes on to the next level
 *   and nothing is allocated;
 * - under write-back a write marks its line dirty, and a dirty line is
 *   written to the next level when it is replaced; under write-through
 *   every write goes on to the next level with its own size;
 * - what one miss sends down goes in Dinero's order: the line fetch, then
 *   the write-through, then the replaced dirty line;
 * - bytes from and to "memory" are what a cache reads from and writes to
 *   the level below it (memory for the last one);
 * - at the end of the trace dirty lines are copied back, level by level
 *   from the top of the data side (Dinero does this before its report);
 * - a gap marker flushes: dirty lines are copied back the same way, then
 *   every cache and the TLB is invalidated, as Dinero's -flushcount does.
 *
 * Replacement is LRU, FIFO or random (the victim drawn uniformly among the
 * ways of a full set by a counter-based draw keyed by the seed, the cache,
 * the record's position in the trace and the draws the cache made before
 * in that record: bach_sim_draw(), so that a run split anywhere draws what
 * the whole run draws); a set fills its empty ways first. Each call works
 * on the caller's thread; a simulator is not shared between threads.
 */
#ifndef BACH_CACHESIM_H
#define BACH_CACHESIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/refs.h"

#define BACH_SIM_MIN_LINE  4u
#define BACH_SIM_MAX_LINE  65536u
#define BACH_SIM_MAX_LINES (1u << 24) /* lines (ways) in one cache */
#define BACH_TLB_PAGE	   4096u

enum bach_repl {
	BACH_REPL_LRU,
	BACH_REPL_FIFO,
	BACH_REPL_RANDOM,
};

/* One cache, as a SPEC "SIZE:LINE:ASSOC[:POLICY]..." describes it. */
struct bach_cache_spec {
	uint64_t size;	     /* bytes */
	uint32_t line;	     /* bytes per line, a power of two */
	uint32_t assoc;	     /* ways per set: size / line when full */
	bool full;	     /* ASSOC was "full" */
	enum bach_repl repl; /* lru (default), fifo, random */
	bool write_through;  /* wt; default wb, write-back */
	bool no_allocate;    /* nwa; default wa, write-allocate */
};

/*
 * A byte count: decimal digits with an optional k, M or G (binary:
 * 1024, 2^20, 2^30; either case). 0 or -EINVAL (not a count, or above
 * 2^40).
 */
int bach_parse_bytes(const char *s, uint64_t *v);

/* The analyses' checks: the reason into why (len bytes), returns -EINVAL. */
__attribute__((format(printf, 3, 4))) int bach_why(char *why, size_t len,
						   const char *fmt, ...);

/*
 * Parse a SPEC: SIZE (bach_parse_bytes), LINE (a power of two from
 * BACH_SIM_MIN_LINE to BACH_SIM_MAX_LINE), ASSOC (a number or "full"),
 * then any of lru|fifo|random, wb|wt, wa|nwa, each kind at most once.
 * SIZE must be a multiple of LINE x ASSOC and hold at most
 * BACH_SIM_MAX_LINES lines. Returns 0, or -EINVAL with the reason in why.
 */
int bach_cache_spec_parse(const char *text, struct bach_cache_spec *c,
			  char *why, size_t whylen);

/*
 * A TLB, "ENTRIES:ASSOC" (ASSOC a number or "full"), as a cache of 4 KiB
 * pages with LRU replacement. 0 or -EINVAL with the reason in why.
 */
int bach_tlb_spec_parse(const char *text, struct bach_cache_spec *c, char *why,
			size_t whylen);

/* "16 KiB, 32-byte lines, 4-way, LRU, write-back, write-allocate" */
void bach_cache_spec_describe(const struct bach_cache_spec *c, char *buf,
			      size_t len);

enum bach_sim_cache {
	BACH_SIM_L1I,
	BACH_SIM_L1D,
	BACH_SIM_L1, /* unified L1 */
	BACH_SIM_L2,
	BACH_SIM_L3,
	BACH_SIM_TLB,
	BACH_SIM_NCACHES
};

/* "l1i", "l1d", "l1", "l2", "l3", "tlb" */
extern const char *const bach_sim_cache_names[BACH_SIM_NCACHES];

struct bach_sim_config {
	struct bach_cache_spec spec[BACH_SIM_NCACHES];
	bool have[BACH_SIM_NCACHES];
	uint64_t seed; /* random replacement: bach_sim_draw() */
};

/*
 * Random replacement's draw: the k-th victim (from 0) cache n (enum
 * bach_sim_cache) draws while simulating the record at position pos of
 * the trace is way bach_sim_draw(seed, n, pos, k) % ASSOC, where, with
 * sm(x) splitmix64's output for the state x (z = x + 0x9e3779b97f4a7c15,
 * z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9, z = (z ^ z >> 27) *
 * 0x94d049bb133111eb, z ^ z >> 31):
 *
 *	draw = sm(sm(sm(seed * 8 + n) ^ pos) ^ k)
 */
uint64_t bach_sim_draw(uint64_t seed, unsigned n, uint64_t pos, uint64_t k);

/* Counts of one cache, each with Dinero IV's meaning. */
struct bach_cache_stats {
	uint64_t fetch[BACH_REF_NKINDS]; /* demand fetches */
	uint64_t miss[BACH_REF_NKINDS];	 /* demand misses */
	uint64_t multiblock;	/* references split at a line boundary */
	uint64_t bytes_read;	/* read from the next level ("from memory") */
	uint64_t bytes_written; /* written to the next level ("to memory") */
};

struct bach_sim_totals {
	uint64_t records; /* records given to bach_sim_add() */
	uint64_t refs;	  /* references among them */
	uint64_t skipped; /* no reference: I/O, special, INT_ACK, INVALID */
	uint64_t flushes; /* gap markers, each a flush */
};

struct bach_sim;

/*
 * Build the hierarchy of cfg: L1I and L1D together or L1 alone, L3 only
 * with L2. Returns 0, -EINVAL with the reason in why, or -ENOMEM.
 */
int bach_sim_new(struct bach_sim **sp, const struct bach_sim_config *cfg,
		 char *why, size_t whylen);
void bach_sim_free(struct bach_sim *s);

/* n whole records, in trace order, at the positions after the last ones
 * bach_sim_add() was given (the first at 0). */
void bach_sim_add(struct bach_sim *s, const uint8_t *recs, size_t n);
/* n whole records, in trace order, record i at position base + off[i] of
 * the trace (off NULL: base + i): the positions random replacement draws
 * by, those of the unfiltered trace. */
void bach_sim_add_at(struct bach_sim *s, const uint8_t *recs, size_t n,
		     uint64_t base, const uint32_t *off);

/*
 * A record as the simulator takes it, decoded once (bach_sim_refs()) and
 * then given to any number of simulators (bach_sim_add_refs(); bach sim
 * --configs): kind is a bach_ref_kind, BACH_REF_NONE (skipped) or
 * BACH_SIM_GAP (a gap marker: a flush); addr and size are the
 * reference's (bach_ref_span()); pos is the record's position in the
 * trace, as bach_sim_add_at() takes it (base + off[i], or base + i when
 * off is NULL). bach_sim_add_at() is the two in turn.
 */
#define BACH_SIM_GAP (BACH_REF_NONE + 1)
struct bach_sim_ref {
	uint64_t pos;
	uint32_t addr;
	uint8_t size; /* 1 to 8 */
	uint8_t kind;
	uint16_t more; /* bach_sim_collapse(): bach_sim_add_runs() takes it */
};
void bach_sim_refs(struct bach_sim_ref *r, const uint8_t *recs, size_t n,
		   uint64_t base, const uint32_t *off);
void bach_sim_add_refs(struct bach_sim *s, const struct bach_sim_ref *r,
		       size_t n);

/*
 * A run of references to one block of 2^lg bytes, each within it, takes
 * one entry: the first (of any kind), with in more the number after it,
 * each an instruction fetch when the first is one and a data read when
 * it is a read or a write. To a simulator whose L1 lines (and TLB pages)
 * are of 2^lg bytes or more and whose L1 and TLB allocate on a write
 * miss, every reference after the first of a run is
 * a hit on the line the first left in its L1 and the page in its TLB,
 * changing nothing but the counts, so the entries give it the same
 * counts and state as the references (bach sim --configs: fewer entries
 * for every configuration, decoded once). The last of r[0..n) stays an
 * entry of its own: its position is where a simulator ends. The entries
 * into out (room for n); their count. bach_sim_collapse_lg(): the lg a
 * simulator takes such entries for, or -1 when it can not.
 */
size_t bach_sim_collapse(struct bach_sim_ref *out, const struct bach_sim_ref *r,
			 size_t n, unsigned lg);
int bach_sim_collapse_lg(const struct bach_sim *s);
/* bach_sim_add_refs() of such entries (it takes each more as 0) */
void bach_sim_add_runs(struct bach_sim *s, const struct bach_sim_ref *r,
		       size_t n);

/*
 * A configuration whose L1 is another's (bach sim --configs): what an L1
 * does depends on nothing below it, so two simulators whose L1 caches are
 * the same (bach_sim_same_l1(): geometry, policies and, for random
 * replacement, seed) count the same there and hold the same lines. One
 * without an L2 is then the other's L1 and its own TLB: it takes the
 * references for its TLB alone (bach_sim_add_tlb(), with the same
 * entries as the other), and after the last, bach_sim_adopt_l1() copies
 * the other's L1 counts and state, totals and position into it (0, or
 * -ENOMEM); its bach_sim_finish() then copies back as the other's would.
 */
bool bach_sim_same_l1(const struct bach_sim *a, const struct bach_sim *b);
void bach_sim_add_tlb(struct bach_sim *s, const struct bach_sim_ref *r,
		      size_t n);
int bach_sim_adopt_l1(struct bach_sim *s, const struct bach_sim *from);

/*
 * One with an L2 takes, besides, what the other's L1 sent below it: a
 * simulator with an L2 records, while it takes references, what its L1
 * sends down (bach_sim_record(): appended to *d, which grows; NULL
 * stops), and a gap marker's flush after the L1's copy-back (kind
 * BACH_SIM_GAP); bach_sim_add_below() gives those to another's L2, in
 * the same order, at the same positions.
 */
struct bach_sim_down {
	uint64_t pos;
	uint32_t addr, size;
	unsigned kind;
};
struct bach_sim_downs {
	struct bach_sim_down *v;
	size_t n, cap;
	bool oom; /* one was lost: the counts are not to be used */
};
void bach_sim_record(struct bach_sim *s, struct bach_sim_downs *d);
void bach_sim_add_below(struct bach_sim *s, const struct bach_sim_down *d,
			size_t n);

/* The end of the trace: copy dirty lines back. Call once, after the last add.
 */
void bach_sim_finish(struct bach_sim *s);

/* Counts of a cache, or NULL when it is not in the hierarchy. */
const struct bach_cache_stats *bach_sim_stats(const struct bach_sim *s,
					      enum bach_sim_cache c);
void bach_sim_get_totals(const struct bach_sim *s, struct bach_sim_totals *t);

/*
 * A split run (docs/analysis.md section 7): every count of a simulator,
 * set or read whole, and its caches' state, which decides what follows.
 * Counts add and subtract as unsigned 64-bit words (bach_sim_counts_add:
 * a += b - c).
 */
struct bach_sim_counts {
	struct bach_cache_stats st[BACH_SIM_NCACHES];
	struct bach_sim_totals t;
};
void bach_sim_get_counts(const struct bach_sim *s, struct bach_sim_counts *c);
void bach_sim_set_counts(struct bach_sim *s, const struct bach_sim_counts *c);
void bach_sim_counts_add(struct bach_sim_counts *a,
			 const struct bach_sim_counts *b,
			 const struct bach_sim_counts *c);

/*
 * The state of cache c as 32-bit words (docs/formats.md section 11): for
 * each set holding lines, in ascending order, SET, N and N pairs TAG (the
 * line number, address / LINE), FLAGS (RANK << 1 | DIRTY; RANK 0 the
 * oldest: the least recently used under LRU, the first filled under FIFO
 * and random). LRU and FIFO list a set's lines oldest first (RANK is
 * their place), random in the order of its ways (the victim is a way).
 * Two simulators whose states are the same words behave the same from
 * there on (a TLB's dirty bits count the bytes it would write, never
 * printed, but they are its state too). get: malloc'd into *w,
 * its count in *n; 0 or -ENOMEM. set: the cache emptied, then filled so;
 * 0, or -EBADMSG with the reason (the word) in why.
 */
int bach_sim_state_get(const struct bach_sim *s, enum bach_sim_cache c,
		       uint32_t **w, size_t *n);
int bach_sim_state_set(struct bach_sim *s, enum bach_sim_cache c,
		       const uint32_t *w, size_t n, char *why, size_t whylen);
/* Whether a and b (of one configuration) hold the same state: every
 * cache's words would be equal. */
bool bach_sim_same_state(struct bach_sim *a, struct bach_sim *b);
/*
 * The position of the last record given, and the victims each cache drew
 * while simulating it (random replacement; 0 for the others): the
 * copy-back at the end draws on from there, so a simulator restored from
 * a partial takes them too (set, after bach_sim_state_set()).
 */
uint64_t bach_sim_last_get(const struct bach_sim *s,
			   uint64_t draws[BACH_SIM_NCACHES]);
void bach_sim_last_set(struct bach_sim *s, uint64_t pos,
		       const uint64_t draws[BACH_SIM_NCACHES]);
/* The ways of every cache: what bach_sim_same_state() costs at most. */
uint64_t bach_sim_ways(const struct bach_sim *s);

#endif
