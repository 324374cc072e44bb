// SPDX-License-Identifier: MIT
/*
 * Miss-ratio curves (bach/mrc.h): stack distances over an order-statistic
 * structure, SHARDS sampling, and set-associative LRU for a list of
 * sizes. Written apart from lib/cachesim.c on purpose: the exactness test
 * compares the two.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/cachesim.h" /* bach_parse_bytes() */
#include "bach/mrc.h"

#define CHUNK_BITS  12	       /* lines per radix chunk: 4096 */
#define GROUP_BITS  15	       /* times per second-level count: 32768 */
#define COLD	    UINT32_MAX /* no earlier reference */
#define SAMPLE_BITS 24	       /* SHARDS: hash mod P, P = 2^24 */

/* ---- line -> value, a two-level table of chunks made on first use ------- */

struct radix {
	uint32_t **dir;
	size_t ndir;
};

static int radix_init(struct radix *r, unsigned key_bits)
{
	r->ndir = (size_t)1
		  << (key_bits > CHUNK_BITS ? key_bits - CHUNK_BITS : 0);
	r->dir = calloc(r->ndir, sizeof(*r->dir));
	return r->dir ? 0 : -ENOMEM;
}

static void radix_free(struct radix *r)
{
	for (size_t i = 0; r->dir && i < r->ndir; i++)
		free(r->dir[i]);
	free(r->dir);
	r->dir = NULL;
}

/* The value of key, made (zero) when new; NULL when out of memory. */
static inline uint32_t *radix_slot(struct radix *r, uint32_t key)
{
	uint32_t **d = &r->dir[key >> CHUNK_BITS];

	if (__builtin_expect(!*d, 0)) {
		*d = calloc((size_t)1 << CHUNK_BITS, sizeof(**d));
		if (!*d)
			return NULL;
	}
	return *d + (key & ((1u << CHUNK_BITS) - 1));
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

/* ---- line -> value, an open-addressed table for few, scattered lines --- */

/*
 * A sampled curve tracks one line in 1/R, scattered over the space: in
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

static int lh_init(struct lhash *t, uint32_t lg_slots)
{
	t->slot = calloc((size_t)1 << lg_slots, sizeof(*t->slot));
	t->mask = (1u << lg_slots) - 1;
	t->shift = 32 - lg_slots;
	t->n = 0;
	return t->slot ? 0 : -ENOMEM;
}

static inline uint32_t *lh_find(struct lhash *t, uint32_t line);

/* Twice the slots, every line moved over. */
static int lh_grow(struct lhash *t)
{
	struct lhash old = *t;

	if (t->shift < 2 || lh_init(t, 33 - old.shift)) {
		*t = old;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i <= old.mask; i++) {
		if (old.slot[i].key)
			*lh_find(t, old.slot[i].key - 1) = old.slot[i].val;
	}
	free(old.slot);
	return 0;
}

/* The value of line, made (zero) when new; NULL when out of memory. */
static inline uint32_t *lh_find(struct lhash *t, uint32_t line)
{
	uint32_t i = line_hash(line, t->shift);

	for (;;) {
		struct lh_slot *e = &t->slot[i];

		if (e->key == line + 1)
			return &e->val;
		if (!e->key)
			break;
		i = (i + 1) & t->mask;
	}
	if (t->n >= t->mask / 2) {
		if (lh_grow(t))
			return NULL;
		return lh_find(t, line);
	}
	t->n++;
	t->slot[i].key = line + 1;
	t->slot[i].val = 0;
	return &t->slot[i].val;
}

/* ---- stack distances --------------------------------------------------- */

#define FAN_BITS   4 /* each count above the words sums 16 below it */
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

static inline unsigned pop64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

static size_t level_len(uint32_t cap, unsigned k)
{
	size_t n = ((size_t)cap >> 6) >> (FAN_BITS * k);

	return n ? n : 1;
}

static int sd_alloc(struct sdist *s, uint32_t cap)
{
	uint64_t *bits = realloc(s->bits, cap / 8);
	uint32_t *owner;

	if (!bits)
		return -ENOMEM;
	s->bits = bits;
	owner = realloc(s->owner, cap * sizeof(*owner));
	if (!owner)
		return -ENOMEM;
	s->owner = owner;
	s->nlev = 0;
	for (unsigned k = 0; k < MAX_LEVELS; k++) {
		uint32_t *c =
			realloc(s->cnt[k], level_len(cap, k) * sizeof(*c));

		if (!c)
			return -ENOMEM;
		s->cnt[k] = c;
		s->nlev = k + 1;
		if (level_len(cap, k) == 1)
			break;
	}
	s->cap = cap;
	return 0;
}

/* Count cnt[] again from the words in use. */
static void sd_recount(struct sdist *s)
{
	uint32_t words = (s->now + 63) >> 6;

	for (unsigned k = 0; k < s->nlev; k++)
		memset(s->cnt[k], 0, level_len(s->cap, k) * sizeof(*s->cnt[k]));
	for (uint32_t w = 0; w < words; w++) {
		unsigned n = pop64(s->bits[w]);

		for (unsigned k = 0; k < s->nlev && n; k++)
			s->cnt[k][w >> (FAN_BITS * k)] += n;
	}
}

/* Where line's time is kept, made when new; NULL when out of memory. */
static inline uint32_t *sd_where(struct sdist *s, uint32_t line)
{
	return s->hashed ? lh_find(&s->few, line) : radix_slot(&s->where, line);
}

static int sd_init(struct sdist *s, unsigned key_bits, bool hashed)
{
	memset(s, 0, sizeof(*s));
	s->hashed = hashed;
	if ((hashed ? lh_init(&s->few, 12) : radix_init(&s->where, key_bits)) ||
	    sd_alloc(s, 1u << 16))
		return -ENOMEM;
	memset(s->bits, 0, s->cap / 8);
	sd_recount(s);
	return 0;
}

static void sd_free(struct sdist *s)
{
	radix_free(&s->where);
	free(s->few.slot);
	free(s->bits);
	for (unsigned k = 0; k < MAX_LEVELS; k++)
		free(s->cnt[k]);
	free(s->owner);
}

static inline void sd_count(struct sdist *s, uint32_t t, uint32_t delta)
{
	uint32_t i = t >> 6;

	for (unsigned k = 0; k < s->nlev; k++, i >>= FAN_BITS)
		s->cnt[k][i] += delta;
}

/* Live times after t (t < now). */
static uint32_t sd_after(const struct sdist *s, uint32_t t)
{
	uint32_t i = t >> 6, last = (s->now - 1) >> 6, n;

	n = pop64(s->bits[i] >> (t & 63) >> 1);
	for (unsigned k = 0; k < s->nlev && i != last; k++) {
		uint32_t end = (i | ((1u << FAN_BITS) - 1)) < last
				       ? (i | ((1u << FAN_BITS) - 1))
				       : last;
		const uint32_t *c = s->cnt[k];

		for (uint32_t j = i + 1; j <= end; j++)
			n += c[j];
		i >>= FAN_BITS;
		last >>= FAN_BITS;
	}
	return n;
}

/* Renumber the live times from 0; double the room when half of it is live. */
static int sd_compact(struct sdist *s)
{
	uint32_t k = 0;

	for (uint32_t w = 0; w < (s->now + 63) >> 6; w++) {
		for (uint64_t b = s->bits[w]; b; b &= b - 1) {
			uint32_t t = w << 6 | (uint32_t)__builtin_ctzll(b);
			uint32_t line = s->owner[t];

			s->owner[k] = line;
			*sd_where(s, line) = ++k; /* it exists: no growth */
		}
	}
	if (k >= s->cap / 2) {
		if ((uint64_t)s->cap * 2 > (1ull << 31) ||
		    sd_alloc(s, s->cap * 2))
			return -ENOMEM;
	}
	memset(s->bits, 0, s->cap / 8);
	for (uint32_t t = 0; t < k; t += 64)
		s->bits[t >> 6] = k - t >= 64 ? ~0ull : (1ull << (k - t)) - 1;
	s->now = k;
	sd_recount(s);
	return 0;
}

/*
 * A reference to line: its distance (COLD for a first reference), with
 * the line made the most recent. *err is set when memory runs out.
 */
static inline uint32_t sd_access(struct sdist *s, uint32_t line, int *err)
{
	uint32_t *slot, prev, d = COLD;

	if (__builtin_expect(s->now == s->cap, 0) && sd_compact(s)) {
		*err = -ENOMEM;
		return COLD;
	}
	slot = sd_where(s, line);
	if (!slot) {
		*err = -ENOMEM;
		return COLD;
	}
	prev = *slot;
	if (prev == s->now && prev) /* already the most recent */
		return 0;
	if (prev) {
		d = sd_after(s, prev - 1);
		s->bits[(prev - 1) >> 6] &= ~(1ull << ((prev - 1) & 63));
		sd_count(s, prev - 1, (uint32_t)-1);
	} else {
		s->live++;
	}
	s->bits[s->now >> 6] |= 1ull << (s->now & 63);
	sd_count(s, s->now, 1);
	s->owner[s->now] = line;
	*slot = ++s->now;
	return d;
}

/* Everything cold again (a gap marker). */
static void sd_reset(struct sdist *s)
{
	for (uint32_t w = 0; w < (s->now + 63) >> 6; w++)
		for (uint64_t b = s->bits[w]; b; b &= b - 1)
			*sd_where(s, s->owner[w << 6 |
					      (uint32_t)__builtin_ctzll(b)]) =
				0;
	memset(s->bits, 0, ((size_t)(s->now + 63) >> 6) * sizeof(*s->bits));
	s->now = s->live = 0;
	sd_recount(s);
}

/* ---- the nearest lines exactly, for sampled curves' small sizes -------- */

/*
 * The K most recently referenced lines and each one's stack distance,
 * exactly: an open-addressed table (linear probing, Fibonacci hashing,
 * four slots per line, so it stays in the L1 cache) maps a line to the
 * stamp of its last reference, and a bitmap of the live stamps gives the
 * distance as a popcount from that stamp to now. When K lines are
 * tracked, a new one evicts the oldest live stamp's line; when the stamps
 * run out they are renumbered from 0. A reference costs a probe, a few
 * popcounts and, for a line beyond the K nearest, an eviction.
 */
#define NEAR_MAX_LINES 1024u	  /* the largest K */
#define NEAR_STAMPS    8192u	  /* stamps between renumberings, > K */
#define NEAR_FAR       UINT32_MAX /* not among the K nearest, or cold */
#define NEAR_SAMPLED   4u  /* the near stack below this many sampled lines */
#define NEAR_MIN_LINES 4u  /* its rate: the smallest size holds this many */
#define NEAR_RING_MAX  64u /* up to this K a ring, beyond it the table */

struct near {
	uint32_t k, mask, shift, live, now, oldest;
	uint32_t *key;			 /* slot: line + 1; 0: empty */
	uint32_t *stamp;		 /* slot: its line's last stamp */
	uint32_t *slot;			 /* live stamp: its line's slot */
	uint64_t bits[NEAR_STAMPS / 64]; /* live stamps */
	uint32_t *ring; /* K <= NEAR_RING_MAX: lines + 1 from head, nearest
			   first */
	uint32_t ring_size, head; /* a power of two >= K; place 0 */
};

static int near_init(struct near *n, uint32_t k)
{
	uint32_t slots = 16;

	n->k = k;
	if (k <= NEAR_RING_MAX) {
		n->ring_size = 4;
		while (n->ring_size < k)
			n->ring_size *= 2;
		n->ring = aligned_alloc(16, n->ring_size * sizeof(*n->ring));
		if (!n->ring)
			return -ENOMEM;
		memset(n->ring, 0, n->ring_size * sizeof(*n->ring));
		n->head = 0;
		return 0;
	}

	while (slots < 4 * k)
		slots *= 2;
	n->k = k;
	n->mask = slots - 1;
	n->shift = 32 - (uint32_t)__builtin_ctz(slots);
	n->key = calloc(slots, sizeof(*n->key));
	n->stamp = calloc(slots, sizeof(*n->stamp));
	n->slot = calloc(NEAR_STAMPS, sizeof(*n->slot));
	return n->key && n->stamp && n->slot ? 0 : -ENOMEM;
}

static void near_free(struct near *n)
{
	free(n->ring);
	free(n->key);
	free(n->stamp);
	free(n->slot);
}

static void near_reset(struct near *n)
{
	if (n->ring) {
		memset(n->ring, 0, n->ring_size * sizeof(*n->ring));
		n->head = 0;
		return;
	}
	memset(n->key, 0, (n->mask + 1) * sizeof(*n->key));
	memset(n->bits, 0, sizeof(n->bits));
	n->live = n->now = n->oldest = 0;
}

static inline uint32_t near_hash(const struct near *n, uint32_t line)
{
	return line_hash(line, n->shift);
}

/* Renumber the live stamps from 0, in order. */
static void near_compact(struct near *n)
{
	uint32_t k = 0;

	for (uint32_t w = 0; w < NEAR_STAMPS / 64; w++) {
		for (uint64_t b = n->bits[w]; b; b &= b - 1) {
			uint32_t s =
				n->slot[w << 6 | (uint32_t)__builtin_ctzll(b)];

			n->stamp[s] = k;
			n->slot[k++] = s;
		}
	}
	memset(n->bits, 0, sizeof(n->bits));
	for (uint32_t t = 0; t < k; t += 64)
		n->bits[t >> 6] = k - t >= 64 ? ~0ull : (1ull << (k - t)) - 1;
	n->now = k;
	n->oldest = 0;
}

/* Forget the line of the oldest live stamp (backward-shift deletion). */
static void near_evict(struct near *n)
{
	uint32_t t = n->oldest, i, j;

	while (!(n->bits[t >> 6] >> (t & 63) & 1)) {
		uint64_t w = n->bits[t >> 6] >> (t & 63);

		t = w ? t + (uint32_t)__builtin_ctzll(w) : (t | 63) + 1;
	}
	n->bits[t >> 6] &= ~(1ull << (t & 63));
	n->oldest = t + 1;
	n->live--;
	i = n->slot[t];
	for (j = (i + 1) & n->mask; n->key[j]; j = (j + 1) & n->mask) {
		uint32_t h = near_hash(n, n->key[j] - 1);

		/* move j back to i unless its home lies in (i, j] */
		if (((j - h) & n->mask) >= ((j - i) & n->mask)) {
			n->key[i] = n->key[j];
			n->stamp[i] = n->stamp[j];
			n->slot[n->stamp[i]] = i;
			i = j;
		}
	}
	n->key[i] = 0;
}

typedef uint32_t v4u __attribute__((vector_size(16)));

/*
 * The same for K <= NEAR_RING_MAX, as Mattson's stack itself: the lines
 * in recency order in a ring (place p at ring[(head + p) mod size], the
 * places from K on empty). The line is found by comparing four slots at
 * a time, every slot, no branch; its place is its distance. A line
 * beyond the K nearest (most references: a cache of K sampled lines
 * misses them) costs two stores: the farthest line's slot emptied and
 * the new one at the new head. A nearer one at place d moves the d lines
 * before it back one place.
 */
static inline __attribute__((always_inline)) uint32_t
ring_access(struct near *n, uint32_t line, const uint32_t size)
{
	const uint32_t *r = __builtin_assume_aligned(n->ring, 16);
	uint32_t *w = n->ring, mask = size - 1, head = n->head, s, d;
	const v4u key = { line + 1, line + 1, line + 1, line + 1 };
	v4u found = { 0, 0, 0, 0 }, at = { 0, 0, 0, 0 }, slot = { 0, 1, 2, 3 };
	const v4u four = { 4, 4, 4, 4 };

#pragma GCC unroll 16
	for (uint32_t i = 0; i < size; i += 4, slot += four) {
		v4u x, eq;

		memcpy(&x, r + i, sizeof(x));
		eq = (v4u)(x == key); /* lines are unique: one lane at most */
		found |= eq;
		at |= eq & slot;
	}
	found |= __builtin_shufflevector(found, found, 2, 3, 0, 1);
	found |= __builtin_shufflevector(found, found, 1, 0, 3, 2);
	at |= __builtin_shufflevector(at, at, 2, 3, 0, 1);
	at |= __builtin_shufflevector(at, at, 1, 0, 3, 2);
	if (!found[0]) {
		w[(head + n->k - 1) & mask] = 0; /* the farthest falls off */
		n->head = head = (head - 1) & mask;
		w[head] = line + 1;
		return NEAR_FAR;
	}
	s = at[0];
	d = (s - head) & mask;
	for (; s != head; s = (s - 1) & mask)
		w[s] = w[(s - 1) & mask];
	w[head] = line + 1;
	return d;
}

/* A reference to line (not the last line): its distance, or NEAR_FAR. */
static inline uint32_t near_access(struct near *n, uint32_t line)
{
	uint32_t h, d = NEAR_FAR;

	switch (n->ring_size) { /* constants: the search unrolled */
	case 4:
		return ring_access(n, line, 4);
	case 8:
		return ring_access(n, line, 8);
	case 16:
		return ring_access(n, line, 16);
	case 32:
		return ring_access(n, line, 32);
	case 64:
		return ring_access(n, line, 64);
	default:
		break;
	}

	if (__builtin_expect(n->now == NEAR_STAMPS, 0))
		near_compact(n);
	h = near_hash(n, line);
	while (n->key[h] && n->key[h] != line + 1)
		h = (h + 1) & n->mask;
	if (n->key[h]) {
		uint32_t p = n->stamp[h], i = p >> 6, last = (n->now - 1) >> 6;

		d = (uint32_t)pop64(n->bits[i] >> (p & 63) >> 1);
		while (i < last)
			d += (uint32_t)pop64(n->bits[++i]);
		n->bits[p >> 6] &= ~(1ull << (p & 63));
	} else {
		if (n->live == n->k) {
			near_evict(n);
			h = near_hash(n, line);
			while (n->key[h])
				h = (h + 1) & n->mask;
		}
		n->key[h] = line + 1;
		n->live++;
	}
	n->stamp[h] = n->now;
	n->slot[n->now] = h;
	n->bits[n->now >> 6] |= 1ull << (n->now & 63);
	n->now++;
	return d;
}

/* ---- set-associative LRU, one cache per size --------------------------- */

struct sa {
	uint32_t nsets, assoc;
	uint32_t *tag;	 /* line + 1; 0: empty */
	uint64_t *stamp; /* last use */
	uint64_t misses;
};

/* ---- the curve --------------------------------------------------------- */

struct bach_mrc {
	struct bach_mrc_config cfg;
	uint64_t sizes[BACH_MRC_MAX_SIZES];
	unsigned lg_line;
	unsigned types;	  /* bit t: records of type t are counted */
	uint8_t cls[256]; /* by control byte: 1 counted, 2 a gap marker */
	bool sampled;
	double rate;
	uint32_t threshold; /* sampled: hash below this */
	/* fully associative */
	struct sdist sd;
	uint64_t th[BACH_MRC_MAX_SIZES]; /* a distance this or more misses size
					    i */
	uint64_t cnt[BACH_MRC_MAX_SIZES +
		     1]; /* by how many th[] a distance reaches */
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
	/* all */
	uint32_t last; /* the last line counted, or COLD */
	uint64_t refs, flushes;
	int err;
};

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
				return bach_why(why, whylen,
						"'%s' is not larger than the "
						"size before it",
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
				return bach_why(why, whylen,
						"--min to --max doubles more "
						"than %d times",
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

/*
 * The line's place in [0, 2^24): Fibonacci hashing, the top bits of the
 * line times 2^64 / phi, which spreads consecutive lines evenly. One
 * multiply: the sampled pass does nothing else for most references.
 */
static inline uint32_t sample_hash(uint32_t line)
{
	return (uint32_t)(((uint64_t)line * 0x9e3779b97f4a7c15ull) >>
			  (64 - SAMPLE_BITS));
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
			return bach_why(why, whylen,
					"size %llu is not a multiple of %s "
					"(%llu) up to 4 GiB",
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
	if (!m->cfg.assoc)
		sd_free(&m->sd);
	near_free(&m->near);
	for (size_t i = 0; m->sa && i < m->cfg.nsizes; i++) {
		free(m->sa[i].tag);
		free(m->sa[i].stamp);
	}
	free(m->sa);
	free(m);
}

static unsigned log2_bucket(uint64_t d)
{
	unsigned b = d ? 64 - (unsigned)__builtin_clzll(d) : 0;

	return b < BACH_MRC_HIST_BUCKETS ? b : BACH_MRC_HIST_BUCKETS - 1;
}

/* A fully associative reference at distance d (sampled: among samples). */
static inline void count_distance(struct bach_mrc *m, uint32_t d)
{
	size_t lo = 0, hi = m->cfg.nsizes;

	if (d == COLD) {
		m->cold++;
		return;
	}
	while (lo < hi) { /* how many thresholds d reaches */
		size_t mid = (lo + hi) / 2;

		if (m->th[mid] <= d)
			lo = mid + 1;
		else
			hi = mid;
	}
	m->cnt[lo]++;
	m->hist[log2_bucket(m->sampled ? (uint64_t)((double)d / m->rate)
				       : d)]++;
}

/* A reference at distance d among the nearest lines, or NEAR_FAR. */
static inline void count_near(struct bach_mrc *m, uint32_t d)
{
	size_t j = 0;

	for (size_t i = 0; i < m->nnear; i++) /* no branch to mispredict */
		j += m->nth[i] <= d;
	m->ncnt[j]++;
}

static void sa_access(struct bach_mrc *m, uint32_t line)
{
	uint64_t now = ++m->clock;

	for (size_t i = 0; i < m->cfg.nsizes; i++) {
		struct sa *a = &m->sa[i];
		uint32_t base = (line % a->nsets) * a->assoc, v = base;
		uint32_t *tag = a->tag;
		uint64_t *stamp = a->stamp;
		uint32_t w;

		for (w = 0; w < a->assoc; w++)
			if (tag[base + w] == line + 1)
				break;
		if (w < a->assoc) {
			stamp[base + w] = now;
			continue;
		}
		a->misses++;
		for (w = 1; w < a->assoc; w++) /* empty ways have stamp 0 */
			if (stamp[base + w] < stamp[v])
				v = base + w;
		tag[v] = line + 1;
		stamp[v] = now;
	}
}

static void flush(struct bach_mrc *m)
{
	m->flushes++;
	m->last = COLD;
	if (!m->cfg.assoc) {
		sd_reset(&m->sd);
		if (m->nnear)
			near_reset(&m->near);
		return;
	}
	for (size_t i = 0; i < m->cfg.nsizes; i++) {
		size_t ways = (size_t)m->sa[i].nsets * m->sa[i].assoc;

		memset(m->sa[i].tag, 0, ways * sizeof(*m->sa[i].tag));
		memset(m->sa[i].stamp, 0, ways * sizeof(*m->sa[i].stamp));
	}
}

/*
 * The line of a reference: for a well-formed record (address bits 2..0
 * clear) its quadword's, since a line holds whole quadwords; otherwise
 * as bach/refs.h takes the address.
 */
static inline uint32_t line_of(const uint8_t *p, unsigned lg)
{
	uint32_t a = bach_get_be32(p);
	unsigned size;

	if (__builtin_expect(a & 7, 0))
		a = bach_ref_span(p, &size);
	return a >> lg;
}

/* Records stream from the page cache: ask for them a few pages ahead. */
#define PREFETCH_AHEAD 2048

static void add_exact(struct bach_mrc *m, const uint8_t *p, size_t n)
{
	unsigned kinds = m->cfg.kinds, lg = m->lg_line;
	uint32_t last = m->last;

	for (size_t i = 0; i < n && !m->err; i++, p += BACH_REC_SIZE) {
		unsigned kind = bach_ref_kind(p[5]);
		uint32_t line;

		__builtin_prefetch(p + PREFETCH_AHEAD);
		if (!(kinds >> kind & 1)) {
			if (kind == BACH_REF_NONE && bach_rec_is_gap(p)) {
				flush(m);
				last = COLD;
			}
			continue;
		}
		line = line_of(p, lg);
		m->refs++;
		if (line == last) { /* distance 0: a hit at every size */
			m->cnt[0]++;
			m->hist[0]++;
			continue;
		}
		last = line;
		if (m->cfg.assoc)
			sa_access(m, line);
		else
			count_distance(m, sd_access(&m->sd, line, &m->err));
	}
	m->last = last;
}

/* Records per pass of add_sampled()'s filter. */
#define SAMPLE_BLOCK 4096
#define PICK_GAP     UINT32_MAX /* a gap marker; lines are below 2^29 */

/*
 * SHARDS: every reference is counted, a line's hash decides whether it is
 * tracked (section 3 of the paper: "sample if hash(L) mod P < T", one
 * multiply here). A block of records is filtered first without a branch
 * that depends on the data: each record's class (a reference of a kind
 * counted, a gap marker, neither: one table look-up) and its line's hash
 * make a pick, stored always and kept by advancing the count: a line
 * either stack samples, or a gap. Only the picks, a few in a hundred,
 * then go to the stacks in trace order. A pick of the line picked just
 * before it is at distance 0 in both stacks (the records between them
 * are lines neither samples), so it costs neither a look-up: for SHARDS
 * a hit at every size, for the near stack nothing it counts.
 */
static void add_sampled(struct bach_mrc *m, const uint8_t *p, size_t n)
{
	uint32_t pick[SAMPLE_BLOCK];
	unsigned lg = m->lg_line;
	uint32_t th = m->threshold, nth = m->nthreshold, last = m->last;
	uint32_t any = nth > th ? nth : th; /* picked by either stack */
	uint64_t refs = 0;

	while (n) {
		size_t b = n < SAMPLE_BLOCK ? n : SAMPLE_BLOCK, k = 0;

		for (size_t i = 0; i < b; i++, p += BACH_REC_SIZE) {
			uint32_t line = line_of(p, lg);
			uint32_t c = m->cls[p[5]], ref = c & 1, gap = c >> 1;

			__builtin_prefetch(p + PREFETCH_AHEAD);
			pick[k] = line | (0u - gap);
			k += (ref & (sample_hash(line) < any)) | gap;
			refs += ref;
		}
		n -= b;
		/* m->err, once set, stays: the counts are not used then */
		for (size_t j = 0; j < k; j++) {
			uint32_t line = pick[j], h;

			if (line == PICK_GAP) {
				flush(m);
				last = COLD;
				continue;
			}
			h = sample_hash(line);
			if (line == last) {
				if (h < th)
					count_distance(m, 0);
				continue;
			}
			last = line;
			if (h < nth)
				count_near(m, near_access(&m->near, line));
			if (h < th)
				count_distance(
					m, sd_access(&m->sd, line, &m->err));
		}
	}
	m->last = last;
	m->refs += refs;
}

void bach_mrc_add(struct bach_mrc *m, const uint8_t *p, size_t n)
{
	if (m->sampled)
		add_sampled(m, p, n);
	else
		add_exact(m, p, n);
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
