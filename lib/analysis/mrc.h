/* SPDX-License-Identifier: MIT */
/*
 * Miss-ratio curves in one pass (bach mrc; docs/analysis.md section 3).
 *
 * A reference is what lib/analysis/refs.h says; its line is the line of its
 * first byte (LINE is at least 8, so a well-formed record never leaves
 * its line). The stack distance of a reference is the number of distinct
 * other lines referenced since its line was last referenced; an LRU
 * cache of C lines misses exactly the references whose distance is C or
 * more, and the first reference to each line (cold). So one pass that
 * records every distance gives the miss ratio of every fully associative
 * LRU size (Mattson et al., 1970). Distances come from an order-statistic
 * structure over the time of each line's last reference (a bitmap of the
 * live times with counts per 512 and per 32768 of them), not from a walk
 * down a list: a reference costs a few counter updates and a count of
 * the live times after its line's last one.
 *
 * With a sampling rate R < 1 (SHARDS, Waldspurger et al., FAST 2015),
 * only the lines whose hash falls below R x 2^24 are tracked; their
 * distances among the sampled lines, divided by R, estimate the real
 * ones, and the difference between the expected and the actual number of
 * sampled references is added to the smallest distance before the ratios
 * are taken (the paper's SHARDS_adj).
 *
 * A cache of C lines holds about C x R sampled lines: below 4 of them
 * the estimate is coarse. Those small sizes come instead from a second,
 * bounded LRU stack (the near stack: the K nearest lines, K the largest
 * such size in its lines) that samples at the rate R2 >= R giving the
 * smallest size 4 lines, with the same hash; R2 = 1 makes them exact.
 *
 * A set-associative curve (ASSOC ways, the sizes given) is simulated
 * directly, every size at once, each with its own LRU sets. None of this
 * shares code with the cache simulator (lib/analysis/cachesim.h): the two check
 * each other.
 *
 * A gap marker empties every structure: after it every line is cold, as
 * bach sim's flush makes it.
 */
#ifndef BACH_MRC_H
#define BACH_MRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/analysis/refs.h"

#define BACH_MRC_MIN_LINE     8u
#define BACH_MRC_MAX_LINE     65536u
#define BACH_MRC_MAX_SIZES    64
#define BACH_MRC_MAX_SIZE     (1ull << 32) /* 4 GiB: every line of the space */
#define BACH_MRC_HIST_BUCKETS 34 /* 0, 1, 2-3, ..., 2^31-2^32-1, more */

/* Kinds of reference counted: 1 << BACH_REF_* */
#define BACH_MRC_KIND_I	  (1u << BACH_REF_IFETCH)
#define BACH_MRC_KIND_D	  ((1u << BACH_REF_READ) | (1u << BACH_REF_WRITE))
#define BACH_MRC_KIND_ALL (BACH_MRC_KIND_I | BACH_MRC_KIND_D)

struct bach_mrc_config {
	uint32_t line;	       /* bytes per line: a power of two, 8 to 65536 */
	uint32_t assoc;	       /* ways; 0: fully associative */
	unsigned kinds;	       /* BACH_MRC_KIND_* */
	double sample;	       /* SHARDS rate in (0, 1]; 1: exact */
	const uint64_t *sizes; /* cache sizes in bytes, ascending, distinct */
	size_t nsizes;	       /* 1 to BACH_MRC_MAX_SIZES */
};

struct bach_mrc_point {
	uint64_t size;	 /* bytes */
	uint64_t refs;	 /* references of the kinds counted */
	uint64_t misses; /* exact, or the estimate rounded */
	double miss_ratio;
};

struct bach_mrc;

/* LINE is a power of two from 8 to 65536: 0, or -EINVAL with the reason. */
int bach_mrc_check_line(uint32_t line, char *why, size_t whylen);

/*
 * Check cfg (sizes multiples of LINE, or of LINE x ASSOC; sampling only
 * fully associative) and build the structures. Returns 0, -EINVAL with
 * the reason in why, or -ENOMEM.
 */
int bach_mrc_new(struct bach_mrc **mp, const struct bach_mrc_config *cfg,
		 char *why, size_t whylen);
void bach_mrc_free(struct bach_mrc *m);

/* n whole records, in trace order. */
void bach_mrc_add(struct bach_mrc *m, const uint8_t *recs, size_t n);

/* One point per size of the configuration, in its order. */
void bach_mrc_points(const struct bach_mrc *m, struct bach_mrc_point *out);

/*
 * The reuse-distance histogram (fully associative only): out[0] counts
 * distance 0, out[b] distances from 2^(b-1) to 2^b - 1, the last bucket
 * everything beyond; *cold the first references to lines. Sampled counts
 * are scaled by 1/R. Returns the number of buckets (BACH_MRC_HIST_BUCKETS).
 */
size_t bach_mrc_reuse(const struct bach_mrc *m, uint64_t *out, uint64_t *cold);

/*
 * Sampled curves: the largest size estimated by the near stack (0: none)
 * and the rate at which it samples lines (1: those sizes are exact).
 */
uint64_t bach_mrc_near(const struct bach_mrc *m, double *rate);

/* 0, or -ENOMEM when memory ran out: the counts stopped there. */
int bach_mrc_error(const struct bach_mrc *m);

/* References counted, and gap markers seen. */
uint64_t bach_mrc_refs(const struct bach_mrc *m);
uint64_t bach_mrc_flushes(const struct bach_mrc *m);

/*
 * Byte sizes from text: a comma-separated list ("1k,2k,8k") or, when
 * list is NULL, the powers of two from min to max. Checks that they are
 * ascending, distinct, at most BACH_MRC_MAX_SIZES and each from 1 to
 * BACH_MRC_MAX_SIZE. Returns the count, or -EINVAL with the reason.
 */
int bach_mrc_parse_sizes(const char *list, const char *min, const char *max,
			 uint64_t *sizes, char *why, size_t whylen);

/*
 * Split runs (docs/analysis.md section 7; PARDA, Niu et al., IPDPS 2012):
 * stack distances split by time. A chunk is run cold, as a curve made
 * with bach_mrc_chunk() before its first record: a reference whose line
 * was referenced before in the chunk already has its true distance (the
 * lines in between are all the chunk's), and so does any after a gap
 * marker; the first references before the chunk's first gap marker are
 * kept apart, in order, for the merge. bach_mrc_part_get() gives the
 * chunk's state: its counts, those first references, and its lines in
 * last-reference order after its last gap marker (all of them without
 * one), which is its LRU stack at its end.
 *
 * bach_mrc_combine() merges the state of the next chunk into a curve made
 * with bach_mrc_chunk() (the chunks before it): it replays the chunk's
 * first references against its own stack, each at its true distance or,
 * not found there, cold when a gap marker came before and kept apart
 * again when none did; then its stack becomes the chunk's lines on top
 * of its own (or the chunk's alone after a gap marker). Merging is
 * associative, and its state is a chunk's again. bach_mrc_settle(): the
 * range starts cold, so the first references still kept apart are cold;
 * call it before reading the points or the histogram of a merge.
 *
 * A set-associative curve (--assoc N) splits the same way, each size's
 * sets apart: in a chunk, a miss that fills an empty way before the first
 * gap marker is a first reference whose fate the merge decides (a hit
 * when the sets before hold its line among the nearest ones); once a set
 * is full, a line new to the chunk misses whatever came before. Its state
 * per size: the misses, those lines in order and the sets' lines at the
 * end, oldest first.
 *
 * A sampled curve (--sample R) splits its SHARDS stack as the exact one,
 * over the sampled lines, and its near stack of K lines as a set of K
 * ways: a line it does not find is a first reference only before the
 * chunk's first gap marker and while no line has fallen off. The counts
 * add; the SHARDS adjustment is made once, when the points are read.
 */
struct bach_mrc_sa_part {
	uint64_t misses;
	const uint32_t *first; /* lines, in order */
	size_t nfirst;
	uint32_t *last; /* the ways' lines, oldest first (malloc'd) */
	size_t nlast;
};
struct bach_mrc_part {
	uint64_t refs, flushes, cold;
	uint64_t cnt[BACH_MRC_MAX_SIZES + 1];
	size_t ncnt; /* sizes + 1 */
	uint64_t hist[BACH_MRC_HIST_BUCKETS];
	bool gap;	       /* a gap marker in the chunk */
	const uint32_t *first; /* first references before it */
	size_t nfirst;
	uint32_t *last; /* the stack at the end, oldest first (malloc'd) */
	size_t nlast;
	/* sampled: the near stack's counts (nnear_cnt: its sizes + 1), its
	 * first references while it had room and its lines at the end */
	uint64_t near_cnt[BACH_MRC_MAX_SIZES + 1];
	size_t nnear_cnt;
	const uint32_t *near_first;
	size_t nnear_first;
	uint32_t *near_last; /* malloc'd */
	size_t nnear_last;
	/* set-associative: one per size (nsa), the above then unused */
	struct bach_mrc_sa_part sa[BACH_MRC_MAX_SIZES];
	size_t nsa;
};
int bach_mrc_chunk(struct bach_mrc *m);
/*
 * 0 or -ENOMEM; bach_mrc_part_free() after (the lists of first references
 * are m's, valid while it is).
 */
int bach_mrc_part_get(const struct bach_mrc *m, struct bach_mrc_part *p);
/* 0, -ENOMEM, or -EINVAL for a part of another configuration. */
int bach_mrc_combine(struct bach_mrc *m, const struct bach_mrc_part *p);
void bach_mrc_settle(struct bach_mrc *m);
/* The last lists of p (those part_get made). */
void bach_mrc_part_free(struct bach_mrc_part *p);

/* ---- working sets ------------------------------------------------------ */

/* Distinct lines and 4 KiB pages referenced in each window of records. */
struct bach_wss_window {
	uint64_t start;	  /* index of the window's first record */
	uint64_t records; /* records in the window (the last may be short) */
	uint64_t refs;	  /* references of the kinds counted */
	uint64_t lines, pages; /* distinct ones among them */
};

struct bach_wss;

/* window records at a time; line as for the curves. 0, -EINVAL, -ENOMEM. */
int bach_wss_new(struct bach_wss **wp, uint64_t window, uint32_t line,
		 unsigned kinds, char *why, size_t whylen);
void bach_wss_free(struct bach_wss *w);
void bach_wss_add(struct bach_wss *w, const uint8_t *recs, size_t n);
/* 0, or -ENOMEM when memory ran out: the windows stopped there. */
int bach_wss_error(const struct bach_wss *w);
/* Close the last window; the windows stay owned by w. Returns their count. */
size_t bach_wss_finish(struct bach_wss *w, const struct bach_wss_window **out);

/*
 * Split runs (docs/analysis.md section 7): windows are aligned at record 0
 * of the trace. A chunk starting at record start (bach_wss_chunk() before
 * its first record) gives its windows as pieces: whole windows counted,
 * and the window it starts in the middle of and the one it ends in as the
 * sets of their lines and pages (ascending), to be united with the
 * neighbours' in the merge. bach_wss_merge_add() takes the pieces of each
 * chunk in order; its pieces are those of the union (the first and last
 * still sets), and bach_wss_merge_windows() gives the windows, their
 * starts less origin (out: room for m->n). -EINVAL for pieces out of order.
 */
struct bach_wss_piece {
	uint64_t wstart; /* the window's first record in the trace */
	uint64_t records, refs;
	bool full;	       /* lines and pages counted */
	uint64_t lines, pages; /* full */
	uint32_t *line, *page; /* else: the sets (malloc'd) */
	size_t nline, npage;
};
struct bach_wss_merge {
	struct bach_wss_piece *p;
	size_t n, cap;
};
int bach_wss_chunk(struct bach_wss *w, uint64_t start);
int bach_wss_pieces(struct bach_wss *w, struct bach_wss_piece **out, size_t *n);
void bach_wss_pieces_free(struct bach_wss_piece *p, size_t n);
int bach_wss_merge_add(struct bach_wss_merge *m, const struct bach_wss_piece *p,
		       size_t n);
size_t bach_wss_merge_windows(const struct bach_wss_merge *m, uint64_t origin,
			      struct bach_wss_window *out);
void bach_wss_merge_free(struct bach_wss_merge *m);

#endif
