/* SPDX-License-Identifier: MIT */
/*
 * Inside the miss-ratio curves (lib/analysis/mrc.h): what their files share.
 * mrc.c checks a configuration, builds the curve and reads its points out
 * of the counts; mrc_pass.c takes the records in one pass and counts
 * them, with the distances of mrc_sdist.c's stack and, for a sampled
 * curve's small sizes, of the near stack kept beside the pass (its search
 * is compiled into the sampled loop). Nothing declared here leaves
 * libbach (hidden, and not in lib/libbach.map).
 */
#ifndef BACH_MRC_SHARED_H
#define BACH_MRC_SHARED_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/analysis/mrc.h"

#pragma GCC visibility push(hidden)

#define COLD	    UINT32_MAX /* no earlier reference */
#define SAMPLE_BITS 24	       /* SHARDS: hash mod P, P = 2^24 */

static inline unsigned pop64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

/*
 * Not the sampling hash's multiplier: its top bits are sample_hash()'s,
 * and the sampled lines, all below the threshold, would share a corner.
 * The top 32 - shift bits of line times a constant from MurmurHash3.
 */
static inline uint32_t line_hash(uint32_t line, uint32_t shift)
{
	return (line * 0x85ebca6bu) >> shift;
}

/* ---- stack distances (mrc_sdist.c) ------------------------------------- */

/* line -> value, one array over all lines, or a two-level table of
 * chunks made on first use (mrc_sdist.c) */
struct radix {
	uint32_t *flat; /* mapped, flat_len bytes; NULL: the chunks */
	size_t flat_len;
	uint32_t **dir;
	size_t ndir;
};

/*
 * line -> value, an open-addressed table for few, scattered lines. A
 * sampled curve tracks one line in 1/R, scattered over the space: in
 * the radix table each would make a chunk of its own (16 KiB, a fresh
 * page or four, at 1% the run's largest cost). Linear probing, at most
 * half full; lines are never removed (their value goes to 0), as in the
 * radix table.
 */
struct lhash {
	struct lh_slot {
		uint32_t key; /* line + 1; 0: empty */
		uint32_t val;
	} * slot;
	uint32_t mask, shift, n;
};

#define FAN_BITS   4 /* each count above the words sums 16 below it */
#define FAN	   (1u << FAN_BITS)
#define MAX_LEVELS 8

/*
 * Each live line has a time, the count of references (of other lines)
 * before its last one; bits marks the live times, cnt[0] counts them per
 * 64-bit word and cnt[k] per 16 of cnt[k-1]. A line's distance is the
 * number of live times after its own: the rest of its word, then at each
 * level the counts to the right of its own within their 16. When the
 * times run out they are renumbered 0, 1, ... in order, and the room
 * doubled once it is half full.
 */
struct sdist {
	struct radix where; /* line -> its time + 1; 0: not live */
	struct lhash few;   /* the same when sampled (hashed) */
	bool hashed;
	uint64_t *bits;
	uint32_t *cnt[MAX_LEVELS];
	unsigned nlev;
	uint32_t *owner; /* time -> line */
	uint32_t cap, now, live;
};

int sd_init(struct sdist *s, unsigned key_bits, bool hashed);
void sd_free(struct sdist *s);
/*
 * A reference to line: its distance (COLD for a first reference), with
 * the line made the most recent. *err is set when memory runs out.
 */
uint32_t sd_access(struct sdist *s, uint32_t line, int *err);
/*
 * lines (n of them, distinct) made the most recent in their order, as
 * sd_access() of each would, without their distances (a merge puts a
 * chunk's stack on top of its own): their counts made once, at the end.
 * *err is set when memory runs out.
 */
void sd_push(struct sdist *s, const uint32_t *lines, size_t n, int *err);
/* Everything cold again (a gap marker). */
void sd_reset(struct sdist *s);

#define CHUNK_BITS 12 /* lines per radix chunk: 4096 */

/*
 * Ask for the place where line's time is kept, ahead of its sd_access():
 * in the flat table, or in the radix table when its chunk is made (any
 * line: one beyond the table asks for nothing).
 */
static inline void sd_prefetch(const struct sdist *s, uint32_t line)
{
	if (s->hashed) {
		__builtin_prefetch(&s->few.slot[line_hash(line, s->few.shift)]);
	} else if (s->where.flat) {
		if (line < s->where.flat_len / sizeof(*s->where.flat))
			__builtin_prefetch(s->where.flat + line);
	} else if (line >> CHUNK_BITS < s->where.ndir) {
		const uint32_t *c = s->where.dir[line >> CHUNK_BITS];

		if (c)
			__builtin_prefetch(c +
					   (line & ((1u << CHUNK_BITS) - 1)));
	}
}

/* ---- the near stack (mrc_pass.c) --------------------------------------- */

#define NEAR_MAX_LINES 1024u	  /* the largest K */
#define NEAR_STAMPS    8192u	  /* stamps between renumberings, > K */
#define NEAR_FAR       UINT32_MAX /* not among the K nearest, or cold */
#define NEAR_SAMPLED   4u  /* the near stack below this many sampled lines */
#define NEAR_MIN_LINES 4u  /* its rate: the smallest size holds this many */
#define NEAR_RING_MAX  64u /* up to this K a ring, beyond it the table */

/* The K most recently referenced lines: a ring, or a table (mrc_pass.c). */
struct near {
	uint32_t k, mask, shift, live, now, oldest;
	uint32_t *key;			 /* slot: line + 1; 0: empty */
	uint32_t *stamp;		 /* slot: its line's last stamp */
	uint32_t *slot;			 /* live stamp: its line's slot */
	uint64_t bits[NEAR_STAMPS / 64]; /* live stamps */
	uint32_t *ring;	    /* K <= NEAR_RING_MAX: lines + 1, nearest first */
	uint32_t ring_size; /* a power of two >= K, at least 4 */
	bool avx2;	    /* the ring searched and moved with AVX2 */
};

int near_init(struct near *n, uint32_t k);

/* A chunk's first reference to line, before its first gap marker. */
void mrc_pend(struct bach_mrc *m, uint32_t line);
/* The near stack's lines, oldest first, into out (room for K). */
size_t mrc_near_last(const struct bach_mrc *m, uint32_t *out);
/* The same for a set-associative size. */
struct sa;
void sa_pend(struct bach_mrc *m, struct sa *a, uint32_t line);
void near_free(struct near *n);

/* ---- set-associative LRU, one cache per size --------------------------- */

struct sa {
	uint32_t nsets, assoc;
	uint32_t *tag;	 /* line + 1; 0: empty */
	uint64_t *stamp; /* last use */
	uint64_t misses;
	/* a chunk: the misses that filled an empty way before its first
	 * gap marker, the lines only the merge can tell hit or miss */
	uint32_t *first;
	size_t nfirst, capfirst;
};

/* ---- the curve --------------------------------------------------------- */

struct bach_mrc {
	struct bach_mrc_config cfg;
	uint64_t sizes[BACH_MRC_MAX_SIZES];
	unsigned lg_line;
	unsigned types;	    /* bit t: records of type t are counted */
	uint8_t cls[256];   /* by control byte: 1 counted, 2 a gap marker */
	uint16_t gap_types; /* bit t: type t with the low 4 bits set a gap */
	/* by a mask of 8 lanes: the lanes set, in order, a byte each */
	uint64_t squeeze[256];
	bool sampled;
	double rate;
	uint32_t threshold; /* sampled: hash below this */
	/* fully associative */
	struct sdist sd;
	uint64_t th[BACH_MRC_MAX_SIZES]; /* a distance this or more misses size
					    i */
	uint64_t cnt[BACH_MRC_MAX_SIZES +
		     1]; /* by how many th[] a distance reaches */
	/* bucket b of the histogram: how many th[] its least distance
	 * reaches, and its greatest (a distance in it reaches th_below[b],
	 * and of the th[] from there up to th_upto[b], those at most it) */
	uint8_t th_below[BACH_MRC_HIST_BUCKETS], th_upto[BACH_MRC_HIST_BUCKETS];
	uint64_t hist[BACH_MRC_HIST_BUCKETS];
	uint64_t cold;
	/* sampled: the first nnear sizes from the near stack, at a rate */
	size_t nnear;
	struct near near;
	uint32_t nthreshold; /* of the near stack's lines: hash below this */
	double nrate;
	uint32_t nth[BACH_MRC_MAX_SIZES];      /* size i in its lines */
	uint64_t ncnt[BACH_MRC_MAX_SIZES + 1]; /* by how many nth[] reached */
	/* set-associative */
	struct sa *sa;
	uint64_t clock;
	/*
	 * a chunk of a split run (bach_mrc_chunk()): its first references
	 * before its first gap marker, whose distances only the merge knows
	 */
	bool chunk, gap;
	uint32_t *first;
	size_t nfirst, capfirst;
	/* sampled: the same for the near stack, while it has room */
	uint32_t *near_first;
	size_t nnear_first, capnear_first;
	uint32_t near_seen; /* lines it took before the first gap marker */
	/* all */
	uint32_t last; /* the last line counted, or COLD */
	uint64_t refs, flushes;
	int err;
};

#pragma GCC visibility pop

#endif
