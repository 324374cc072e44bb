// SPDX-License-Identifier: MIT
/*
 * Stack distances for the fully associative curves (mrc_shared.h): each
 * line's time of last reference in an order-statistic structure, which
 * counts the distinct lines referenced since. mrc_pass.c asks it for the
 * distance of every reference, every line's or, for a sampled curve, only
 * the sampled lines'; the line -> time table is a flat array (or a
 * two-level radix table) for the one, an open-addressed hash for the
 * other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/analysis/mrc_shared.h"

#define GROUP_BITS 15 /* times per second-level count: 32768 */

/* ---- line -> value, a two-level table of chunks made on first use ------- */

/*
 * Where the address space allows, the table is one array over every line
 * (4 bytes a line: 512 MiB for 32-byte lines), mapped without reserving
 * memory so that only the pages of lines referenced are made, zero, by
 * the kernel: one look-up instead of two, and a 4 KiB page made where a
 * chunk of the radix table was 16 KiB. Else (no room for the mapping) the
 * radix table's chunks.
 */
static int radix_init(struct radix *r, unsigned key_bits)
{
	size_t len = (size_t)sizeof(*r->flat) << key_bits;

	r->flat = NULL;
	if (sizeof(size_t) >= 8) {
		void *f = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);

		if (f != MAP_FAILED) {
			r->flat = f;
			r->flat_len = len;
			r->ndir = 0;
			r->dir = NULL;
			return 0;
		}
	}
	r->ndir = (size_t)1
		  << (key_bits > CHUNK_BITS ? key_bits - CHUNK_BITS : 0);
	r->dir = calloc(r->ndir, sizeof(*r->dir));
	return r->dir ? 0 : -ENOMEM;
}

static void radix_free(struct radix *r)
{
	if (r->flat)
		munmap(r->flat, r->flat_len);
	r->flat = NULL;
	for (size_t i = 0; r->dir && i < r->ndir; i++)
		free(r->dir[i]);
	free(r->dir);
	r->dir = NULL;
}

/* The value of key, made (zero) when new; NULL when out of memory. */
static inline uint32_t *radix_slot(struct radix *r, uint32_t key)
{
	uint32_t **d;

	if (r->flat)
		return r->flat + key;
	d = &r->dir[key >> CHUNK_BITS];
	if (__builtin_expect(!*d, 0)) {
		*d = calloc((size_t)1 << CHUNK_BITS, sizeof(**d));
		if (!*d)
			return NULL;
	}
	return *d + (key & ((1u << CHUNK_BITS) - 1));
}

/* ---- line -> value, an open-addressed table for few, scattered lines --- */

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

static size_t level_len(uint32_t cap, unsigned k)
{
	size_t n = ((size_t)cap >> 6) >> (FAN_BITS * k);

	return n ? n : 1;
}

/* A level's room: whole groups of 16, so that sd_move() reads a group
 * whole (its counts after the last live time are 0). */
static size_t level_room(uint32_t cap, unsigned k)
{
	return (level_len(cap, k) + FAN - 1) & ~(size_t)(FAN - 1);
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
		/* counted again by sd_recount(): no copy; a group in one
		 * 64-byte cache line */
		uint32_t *c =
			aligned_alloc(64, level_room(cap, k) * sizeof(*c));

		if (!c)
			return -ENOMEM;
		free(s->cnt[k]);
		s->cnt[k] = c;
		s->nlev = k + 1;
		if (level_len(cap, k) <= FAN) /* one group: the top */
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
		memset(s->cnt[k], 0,
		       level_room(s->cap, k) * sizeof(*s->cnt[k]));
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

int sd_init(struct sdist *s, unsigned key_bits, bool hashed)
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

void sd_free(struct sdist *s)
{
	radix_free(&s->where);
	free(s->few.slot);
	free(s->bits);
	for (unsigned k = 0; k < MAX_LEVELS; k++)
		free(s->cnt[k]);
	free(s->owner);
}

typedef uint32_t v4u __attribute__((vector_size(16)));

/* 16 zeros then 16 ones: from 15 - j, the lanes of a group after lane j */
static const uint32_t ramp[2 * FAN] = { [FAN... 2 * FAN - 1] = ~0u };

/*
 * Live times after t (t < now), with t's time moved to now: the rest of
 * t's word, then at each level the counts after t's own in its group of
 * 16, t's count one less and now's one more. Every level's group is read
 * whole, masked, with no branch: the counts after the last live time are
 * 0, so a level above the one where t and the last live time meet adds
 * nothing.
 */
static uint32_t sd_move(struct sdist *s, uint32_t t)
{
	uint32_t i = t >> 6, j = s->now >> 6, n;
	unsigned nlev = s->nlev;
	v4u acc = { 0, 0, 0, 0 };

	n = pop64(s->bits[i] >> (t & 63) >> 1);
	for (unsigned k = 0; k < nlev; k++, i >>= FAN_BITS, j >>= FAN_BITS) {
		uint32_t *c = s->cnt[k];
		const v4u *g =
			__builtin_assume_aligned(c + (i & ~(FAN - 1u)), 64);
		const uint32_t *r = ramp + FAN - 1 - (i & (FAN - 1));
		v4u m0, m1, m2, m3;

		memcpy(&m0, r, sizeof(m0));
		memcpy(&m1, r + 4, sizeof(m1));
		memcpy(&m2, r + 8, sizeof(m2));
		memcpy(&m3, r + 12, sizeof(m3));
		acc += (g[0] & m0) + (g[1] & m1) + (g[2] & m2) + (g[3] & m3);
		c[i]--;
		c[j]++;
	}
	return n + acc[0] + acc[1] + acc[2] + acc[3];
}

/* A time at now, the line's first since the stack was empty. */
static void sd_add(struct sdist *s)
{
	uint32_t j = s->now >> 6;
	unsigned nlev = s->nlev;

	for (unsigned k = 0; k < nlev; k++, j >>= FAN_BITS)
		s->cnt[k][j]++;
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

uint32_t sd_access(struct sdist *s, uint32_t line, int *err)
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
		d = sd_move(s, prev - 1);
		s->bits[(prev - 1) >> 6] &= ~(1ull << ((prev - 1) & 63));
	} else {
		sd_add(s);
		s->live++;
	}
	s->bits[s->now >> 6] |= 1ull << (s->now & 63);
	s->owner[s->now] = line;
	*slot = ++s->now;
	return d;
}

void sd_push(struct sdist *s, const uint32_t *lines, size_t n, int *err)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t *slot, prev;

		/* sd_compact() counts from the bits: stale counts do not
		 * matter to it */
		if (__builtin_expect(s->now == s->cap, 0) && sd_compact(s)) {
			*err = -ENOMEM;
			break;
		}
		slot = sd_where(s, lines[i]);
		if (!slot) {
			*err = -ENOMEM;
			break;
		}
		prev = *slot;
		if (prev)
			s->bits[(prev - 1) >> 6] &=
				~(1ull << ((prev - 1) & 63));
		else
			s->live++;
		s->bits[s->now >> 6] |= 1ull << (s->now & 63);
		s->owner[s->now] = lines[i];
		*slot = ++s->now;
	}
	sd_recount(s);
}

void sd_reset(struct sdist *s)
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
