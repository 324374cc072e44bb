// SPDX-License-Identifier: MIT
/*
 * The pass over the records (bach_mrc_add(); mrc_shared.h): which records
 * count, their lines, gap markers that make every line cold, the SHARDS
 * filter of a sampled curve, and the counts by distance that mrc.c turns
 * into points. The distances come from mrc_sdist.c's stack; the
 * set-associative sizes are simulated here, every size at once, and here
 * is the near stack for a sampled curve's small sizes: it takes more of
 * the sampled references than SHARDS's stack, and its search is compiled
 * into the loop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/mrc_shared.h"
#include "lib/cpus.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* AVX2 (and POPCNT, which every CPU with AVX2 has), at run time */
static bool have_avx2(void)
{
	return bach_simd() >= BACH_SIMD_AVX2;
}

/* AVX-512 with its byte permutes (VBMI), at run time */
static bool have_vbmi(void)
{
	return bach_simd() >= BACH_SIMD_AVX512;
}
#else
static bool have_avx2(void)
{
	return false;
}

static bool have_vbmi(void)
{
	return false;
}
#endif

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
int near_init(struct near *n, uint32_t k)
{
	uint32_t slots = 16;

	n->k = k;
	if (k <= NEAR_RING_MAX) {
		n->ring_size = 4;
		while (n->ring_size < k)
			n->ring_size *= 2;
		/* a size that is a multiple of the alignment (C11 7.22.3.1):
		 * 32 bytes at least */
		n->ring = aligned_alloc(32,
					(n->ring_size < 8 ? 8 : n->ring_size) *
						sizeof(*n->ring));
		if (!n->ring)
			return -ENOMEM;
		memset(n->ring, 0, n->ring_size * sizeof(*n->ring));
		n->avx2 = n->ring_size >= 8 && have_avx2();
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

void near_free(struct near *n)
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
 * in recency order, place p at ring[p], the places from K on empty. The
 * line is found by comparing four places at a time, every place, no
 * branch; its place s is its distance. The lines before it move back one
 * place and the line takes place 0; a line not found moves them all, the
 * farthest (place K - 1) falling off.
 */
static inline __attribute__((always_inline)) uint32_t
ring_access(struct near *n, uint32_t line, const uint32_t size)
{
	uint32_t *r = __builtin_assume_aligned(n->ring, 32), s;
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
	s = found[0] ? at[0] : n->k - 1;
	memmove(r + 1, r, s * sizeof(*r));
	r[0] = line + 1;
	return found[0] ? s : NEAR_FAR;
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * The same with AVX2, eight places at a time and with no branch at all
 * (the line found or not, about as often, in the runs measured): every
 * place up to s takes the line of the place before it (a lane permute,
 * the first lane from the eight before), those after s keep theirs.
 */
__attribute__((target("avx2"), always_inline)) static inline uint32_t
ring_avx2_n(struct near *n, uint32_t line, const uint32_t size)
{
	uint32_t *r = __builtin_assume_aligned(n->ring, 32);
	const __m256i key = _mm256_set1_epi32((int)(line + 1));
	const __m256i eight = _mm256_set1_epi32(8);
	const __m256i back = _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6);
	__m256i c[NEAR_RING_MAX / 8], x = _mm256_setzero_si256();
	__m256i place = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8);
	__m256i carry = key, upto;

#pragma GCC unroll 8
	for (uint32_t i = 0; i < size / 8; i++) {
		c[i] = _mm256_load_si256((const __m256i *)(r + 8 * i));
		x = _mm256_or_si256(
			x,
			_mm256_and_si256(_mm256_cmpeq_epi32(c[i], key), place));
		place = _mm256_add_epi32(place, eight);
	}
	/* in every lane the line's place + 1, or 0: not found */
	x = _mm256_or_si256(x, _mm256_permute2x128_si256(x, x, 1));
	x = _mm256_or_si256(x, _mm256_shuffle_epi32(x, 0x4e));
	x = _mm256_or_si256(x, _mm256_shuffle_epi32(x, 0xb1));
	upto = _mm256_blendv_epi8(
		x, _mm256_set1_epi32((int)n->k),
		_mm256_cmpeq_epi32(x, _mm256_setzero_si256()));
	place = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 8
	for (uint32_t i = 0; i < size / 8; i++) {
		/* the places before: lane 0 the last of the eight before */
		__m256i b = _mm256_permutevar8x32_epi32(c[i], back);
		__m256i moved = _mm256_blend_epi32(b, carry, 1);

		carry = b;
		_mm256_store_si256(
			(__m256i *)(r + 8 * i),
			_mm256_blendv_epi8(c[i], moved,
					   _mm256_cmpgt_epi32(upto, place)));
		place = _mm256_add_epi32(place, eight);
	}
	/* not found: 0 - 1, NEAR_FAR */
	return (uint32_t)_mm256_cvtsi256_si32(x) - 1;
}

/* Built for each size of 8 places or more. */
__attribute__((target("avx2"))) static uint32_t ring_avx2(struct near *n,
							  uint32_t line)
{
	switch (n->ring_size) {
	case 8:
		return ring_avx2_n(n, line, 8);
	case 16:
		return ring_avx2_n(n, line, 16);
	case 32:
		return ring_avx2_n(n, line, 32);
	default:
		return ring_avx2_n(n, line, 64);
	}
}
#else
static uint32_t ring_avx2(struct near *n, uint32_t line)
{
	(void)n, (void)line;
	return NEAR_FAR;
}
#endif

/* A reference to line (not the last line): its distance, or NEAR_FAR. */
static inline uint32_t near_access(struct near *n, uint32_t line)
{
	uint32_t h, d = NEAR_FAR;

	if (n->avx2)
		return ring_avx2(n, line);
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

/* ---- the pass ---------------------------------------------------------- */

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

static unsigned log2_bucket(uint64_t d)
{
	unsigned b = d ? 64 - (unsigned)__builtin_clzll(d) : 0;

	return b < BACH_MRC_HIST_BUCKETS ? b : BACH_MRC_HIST_BUCKETS - 1;
}

/*
 * A fully associative reference at distance d (sampled: among samples).
 * How many thresholds d reaches is known from its bucket alone, but for
 * thresholds inside the bucket (none, when the sizes are powers of two):
 * those are searched.
 */
static inline void count_distance(struct bach_mrc *m, uint32_t d)
{
	unsigned b;
	size_t lo, hi;

	if (d == COLD) {
		m->cold++;
		return;
	}
	b = log2_bucket(d);
	lo = m->th_below[b];
	hi = m->th_upto[b];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->th[mid] <= d)
			lo = mid + 1;
		else
			hi = mid;
	}
	m->cnt[lo]++;
	m->hist[m->sampled ? log2_bucket((uint64_t)((double)d / m->rate))
			   : b]++;
}

/* A reference at distance d among the nearest lines, or NEAR_FAR. */
static inline void count_near(struct bach_mrc *m, uint32_t d)
{
	size_t j = 0;

	for (size_t i = 0; i < m->nnear; i++) /* no branch to mispredict */
		j += m->nth[i] <= d;
	m->ncnt[j]++;
}

static void push_line(struct bach_mrc *m, uint32_t **v, size_t *n, size_t *cap,
		      uint32_t line);

/*
 * A chunk's near-stack reference: before its first gap marker, while the
 * stack has room (no line has fallen off yet), a line not found is a
 * first reference, kept for the merge; otherwise counted.
 */
static void near_chunk(struct bach_mrc *m, uint32_t line, uint32_t d)
{
	if (d == NEAR_FAR && !m->gap && m->near_seen < m->near.k) {
		m->near_seen++;
		push_line(m, &m->near_first, &m->nnear_first, &m->capnear_first,
			  line);
	} else {
		count_near(m, d);
	}
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
		if (__builtin_expect(m->chunk && !m->gap && !tag[v], 0))
			sa_pend(m, a, line);
		tag[v] = line + 1;
		stamp[v] = now;
	}
}

static void flush(struct bach_mrc *m)
{
	m->flushes++;
	m->gap = true;
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
 * as lib/analysis/refs.h takes the address.
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
/* Records per pass of the filters of add_exact() and add_sampled(). */
#define PICK_BLOCK 4096
#define PICK_GAP   UINT32_MAX /* a gap marker; lines are below 2^29 */
/* add_exact(): the stack asked for a line's time this many picks ahead */
#define PICK_AHEAD 8

/*
 * The exact pass's filter of n records at p, one by one: each record's
 * class (a reference of a kind counted, a gap marker, neither) and
 * whether it repeats the last line (*last, COLD after a gap) make a
 * pick, stored always and kept by advancing the count: a line (not the
 * last one), or a gap. Returns the count of picks; *refs counts the
 * references, *reps the repeats.
 */
static inline size_t pick_exact(const struct bach_mrc *m, const uint8_t *p,
				size_t n, uint32_t *pick, uint32_t *lastp,
				uint64_t *refs, uint64_t *reps)
{
	unsigned lg = m->lg_line;
	uint32_t last = *lastp;
	size_t k = 0;

	for (size_t i = 0; i < n; i++, p += BACH_REC_SIZE) {
		uint32_t line = line_of(p, lg);
		uint32_t c = m->cls[p[5]], ref = c & 1, gap = c >> 1;
		uint32_t rep = ref & (line == last), mref = 0u - ref;

		__builtin_prefetch(p + PREFETCH_AHEAD);
		pick[k] = line | (0u - gap);
		k += (ref & ~rep) | gap;
		/* a reference's line, or after a gap COLD */
		last = ((last & ~mref) | (line & mref)) | (0u - gap);
		*refs += ref;
		*reps += rep;
	}
	*lastp = last;
	return k;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Bytes of 16 records (96) by lane: the big-endian address turned
 * around, the control byte */
static const uint8_t addr_idx[64] = {
#define A(j) 6 * (j) + 3, 6 * (j) + 2, 6 * (j) + 1, 6 * (j)
	A(0), A(1), A(2),  A(3),  A(4),	 A(5),	A(6),  A(7),
	A(8), A(9), A(10), A(11), A(12), A(13), A(14), A(15),
#undef A
};
static const uint8_t ctl_idx[64] = {
#define C(j) 6 * (j) + 5, 0, 0, 0
	C(0), C(1), C(2),  C(3),  C(4),	 C(5),	C(6),  C(7),
	C(8), C(9), C(10), C(11), C(12), C(13), C(14), C(15),
#undef C
};

/*
 * The same with AVX-512, sixteen records a step, loaded as
 * pick_sampled_vbmi() does. Each reference's previous one is found by
 * packing the references' lines together (a compress), moving them one
 * lane on behind the last line, and spreading them back (an expand). A
 * step with a gap marker, or an address not a quadword's, takes its
 * records one by one. Returns the records it took, a multiple of 16;
 * pick has room for 16 more than n.
 */
__attribute__((target("avx512f,avx512bw,avx512vbmi,popcnt"))) static size_t
pick_exact_vbmi(const struct bach_mrc *m, const uint8_t *p, size_t n,
		uint32_t *pick, size_t *kp, uint32_t *lastp, uint64_t *refs,
		uint64_t *reps)
{
	const __m512i aix = _mm512_loadu_si512(addr_idx);
	const __m512i cix = _mm512_loadu_si512(ctl_idx);
	const __m512i one = _mm512_set1_epi32(1), low = _mm512_set1_epi32(15);
	const __m512i seven = _mm512_set1_epi32(7);
	const __m512i reft = _mm512_set1_epi32((int)m->types);
	const __m512i gapt = _mm512_set1_epi32((int)m->gap_types);
	const __m128i lg = _mm_cvtsi32_si128((int)m->lg_line);
	__m512i last = _mm512_set1_epi32((int)*lastp);
	size_t i = 0, k = *kp;
	uint64_t nref = 0, nrep = 0;

	for (; i + 16 <= n; i += 16, p += 16 * BACH_REC_SIZE) {
		__m512i a = _mm512_loadu_si512(p);
		__m512i b = _mm512_maskz_loadu_epi8(0xffffffffull, p + 64);
		__m512i addr = _mm512_permutex2var_epi8(a, aix, b);
		__m512i ctl = _mm512_maskz_permutex2var_epi8(
			0x1111111111111111ull, a, cix, b);
		__m512i line, type, refs_in, prev;
		__mmask16 ref, gap, rep, pk;
		unsigned nr;

		__builtin_prefetch(p + PREFETCH_AHEAD);
		__builtin_prefetch(p + PREFETCH_AHEAD + 64);
		type = _mm512_srli_epi32(ctl, 4);
		gap = _mm512_test_epi32_mask(_mm512_srlv_epi32(gapt, type),
					     one) &
		      _mm512_cmpeq_epi32_mask(_mm512_and_si512(ctl, low), low);
		if (__builtin_expect(gap || _mm512_test_epi32_mask(addr, seven),
				     0)) {
			uint32_t l = (uint32_t)_mm512_cvtsi512_si32(last);

			k += pick_exact(m, p, 16, pick + k, &l, refs, reps);
			last = _mm512_set1_epi32((int)l);
			continue;
		}
		line = _mm512_srl_epi32(addr, lg);
		ref = _mm512_test_epi32_mask(_mm512_srlv_epi32(reft, type),
					     one);
		/* the references' lines together, then each one's previous */
		refs_in = _mm512_maskz_compress_epi32(ref, line);
		prev = _mm512_maskz_expand_epi32(
			ref, _mm512_alignr_epi32(refs_in, last, 15));
		rep = _mm512_mask_cmpeq_epi32_mask(ref, line, prev);
		pk = (__mmask16)(ref & ~rep);
		_mm512_storeu_si512(pick + k,
				    _mm512_maskz_compress_epi32(pk, line));
		k += (unsigned)__builtin_popcount(pk);
		nr = (unsigned)__builtin_popcount(ref);
		nref += nr;
		nrep += (unsigned)__builtin_popcount(rep);
		/* the last reference's line, in every lane */
		last = _mm512_mask_permutexvar_epi32(
			last, (__mmask16)(0u - (nr != 0)),
			_mm512_set1_epi32((int)nr - 1), refs_in);
	}
	*refs += nref;
	*reps += nrep;
	*lastp = (uint32_t)_mm512_cvtsi512_si32(last);
	*kp = k;
	return i;
}
#else
static size_t pick_exact_vbmi(const struct bach_mrc *m, const uint8_t *p,
			      size_t n, uint32_t *pick, size_t *kp,
			      uint32_t *lastp, uint64_t *refs, uint64_t *reps)
{
	(void)m, (void)p, (void)n, (void)pick, (void)kp, (void)lastp,
		(void)refs, (void)reps;
	return 0;
}
#endif

/*
 * Every reference's distance. A block of records is filtered first, as
 * add_sampled() does, with no branch that depends on the data
 * (pick_exact(), with AVX-512 where the CPU has it): a line not the last
 * one, or a gap. A repeat is at distance 0, a hit at every size, only
 * counted. Then the picks go to the stack in trace order, each one's
 * time in the line -> time table asked for PICK_AHEAD picks before.
 */
static void add_exact(struct bach_mrc *m, const uint8_t *p, size_t n)
{
	uint32_t pick[PICK_BLOCK + 16];
	uint32_t last = m->last;
	uint64_t refs = 0, reps = 0;
	bool vbmi = have_vbmi();

	while (n) {
		size_t b = n < PICK_BLOCK ? n : PICK_BLOCK, k = 0, i = 0;

		if (vbmi)
			i = pick_exact_vbmi(m, p, b, pick, &k, &last, &refs,
					    &reps);
		k += pick_exact(m, p + i * BACH_REC_SIZE, b - i, pick + k,
				&last, &refs, &reps);
		p += b * BACH_REC_SIZE;
		n -= b;
		for (size_t j = 0; j < PICK_AHEAD; j++)
			pick[k + j] = PICK_GAP;
		for (size_t j = 0; j < k && !m->err; j++) {
			uint32_t line = pick[j];

			if (line == PICK_GAP) {
				flush(m);
				continue;
			}
			if (m->cfg.assoc) {
				sa_access(m, line);
			} else {
				uint32_t d;

				sd_prefetch(&m->sd, pick[j + PICK_AHEAD]);
				d = sd_access(&m->sd, line, &m->err);
				if (__builtin_expect(d == COLD && m->chunk &&
							     !m->gap,
						     0))
					mrc_pend(m, line);
				else
					count_distance(m, d);
			}
		}
	}
	m->cnt[0] += reps;
	m->hist[0] += reps;
	m->refs += refs;
	m->last = last;
}

/* line onto the list *v of *n (room for *cap), or m->err */
static void push_line(struct bach_mrc *m, uint32_t **v, size_t *n, size_t *cap,
		      uint32_t line)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		uint32_t *f = realloc(*v, c * sizeof(*f));

		if (!f) {
			m->err = -ENOMEM;
			return;
		}
		*v = f;
		*cap = c;
	}
	(*v)[(*n)++] = line;
}

void mrc_pend(struct bach_mrc *m, uint32_t line)
{
	push_line(m, &m->first, &m->nfirst, &m->capfirst, line);
}

void sa_pend(struct bach_mrc *m, struct sa *a, uint32_t line)
{
	push_line(m, &a->first, &a->nfirst, &a->capfirst, line);
}

/* A reference to line in one cache, uncounted: hit; *empty when it
 * filled an empty way. */
static bool sa_touch(struct sa *a, uint32_t line, uint64_t now, bool *empty)
{
	uint32_t base = (line % a->nsets) * a->assoc, v = base, w;

	*empty = false;
	for (w = 0; w < a->assoc; w++)
		if (a->tag[base + w] == line + 1) {
			a->stamp[base + w] = now;
			return true;
		}
	for (w = 1; w < a->assoc; w++)
		if (a->stamp[base + w] < a->stamp[v])
			v = base + w;
	*empty = !a->tag[v];
	a->tag[v] = line + 1;
	a->stamp[v] = now;
	return false;
}

static bool lines_in(const uint32_t *v, size_t n, uint64_t lines)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] >= lines)
			return false;
	return true;
}

/* bach_mrc_combine() for a set-associative curve, size by size */
static int sa_combine(struct bach_mrc *m, const struct bach_mrc_part *p,
		      uint64_t lines)
{
	if (p->nsa != m->cfg.nsizes)
		return -EINVAL;
	for (size_t i = 0; i < p->nsa; i++)
		if (!lines_in(p->sa[i].first, p->sa[i].nfirst, lines) ||
		    !lines_in(p->sa[i].last, p->sa[i].nlast, lines))
			return -EINVAL;
	for (size_t i = 0; i < p->nsa; i++) {
		const struct bach_mrc_sa_part *q = &p->sa[i];
		struct sa *a = &m->sa[i];
		uint64_t hits = 0;
		bool empty;

		for (size_t k = 0; k < q->nfirst; k++) {
			if (sa_touch(a, q->first[k], ++m->clock, &empty))
				hits++; /* the chunk counted a miss */
			else if (empty && !m->gap)
				sa_pend(m, a, q->first[k]);
		}
		if (p->gap) {
			size_t ways = (size_t)a->nsets * a->assoc;

			memset(a->tag, 0, ways * sizeof(*a->tag));
			memset(a->stamp, 0, ways * sizeof(*a->stamp));
		}
		for (size_t k = 0; k < q->nlast; k++)
			sa_touch(a, q->last[k], ++m->clock, &empty);
		if (hits > q->misses)
			return -EINVAL; /* not a chunk's state */
		a->misses += q->misses - hits;
	}
	return 0;
}

int bach_mrc_combine(struct bach_mrc *m, const struct bach_mrc_part *p)
{
	uint64_t lines = 1ull << (32 - m->lg_line);

	if (!m->chunk || p->ncnt != m->cfg.nsizes + 1)
		return -EINVAL;
	if (m->cfg.assoc) {
		int err = sa_combine(m, p, lines);

		if (err)
			return err;
		m->gap |= p->gap;
		goto counts;
	}
	for (size_t i = 0; i < p->nfirst; i++)
		if (p->first[i] >= lines)
			return -EINVAL;
	if (!lines_in(p->near_first, p->nnear_first, lines) ||
	    !lines_in(p->near_last, p->nnear_last, lines))
		return -EINVAL;
	for (size_t i = 0; i < p->nlast; i++)
		if (p->last[i] >= lines)
			return -EINVAL;
	for (size_t i = 0; i < p->nfirst && !m->err; i++) {
		uint32_t d = sd_access(&m->sd, p->first[i], &m->err);

		if (d == COLD && !m->gap)
			mrc_pend(m, p->first[i]);
		else
			count_distance(m, d);
	}
	if (!m->nnear && (p->nnear_cnt || p->nnear_first || p->nnear_last))
		return -EINVAL;
	if (m->nnear) { /* the near stack, the same way */
		if (p->nnear_cnt != m->nnear + 1)
			return -EINVAL;
		for (size_t i = 0; i < p->nnear_first; i++)
			near_chunk(m, p->near_first[i],
				   near_access(&m->near, p->near_first[i]));
		if (p->gap)
			near_reset(&m->near);
		for (size_t i = 0; i < p->nnear_last; i++)
			near_access(&m->near, p->near_last[i]);
		if (!p->gap && p->nnear_first == m->near.k)
			m->near_seen =
				m->near.k; /* it has K lines of its own */
		for (size_t i = 0; i < p->nnear_cnt; i++)
			m->ncnt[i] += p->near_cnt[i];
	}
	if (p->gap) {
		sd_reset(&m->sd);
		m->gap = true;
	}
	/* its stack on top of ours: no distance to count */
	if (!m->err)
		sd_push(&m->sd, p->last, p->nlast, &m->err);
counts:
	m->refs += p->refs;
	m->flushes += p->flushes;
	m->cold += p->cold;
	for (size_t i = 0; i < p->ncnt; i++)
		m->cnt[i] += p->cnt[i];
	for (size_t b = 0; b < BACH_MRC_HIST_BUCKETS; b++)
		m->hist[b] += p->hist[b];
	m->last = COLD;
	return m->err;
}

/*
 * The sampled pass's filter of n records at p, one by one: each record's
 * class (a reference of a kind counted, a gap marker, neither: one table
 * look-up) and its line's hash make a pick, stored always and kept by
 * advancing the count: a line either stack samples (its hash below any),
 * or a gap. Returns the count of picks; *refs counts the references.
 */
static inline size_t pick_sampled(const struct bach_mrc *m, const uint8_t *p,
				  size_t n, uint32_t any, uint32_t *pick,
				  uint64_t *refs)
{
	unsigned lg = m->lg_line;
	size_t k = 0;
	uint64_t r = 0;

	for (size_t i = 0; i < n; i++, p += BACH_REC_SIZE) {
		uint32_t line = line_of(p, lg);
		uint32_t c = m->cls[p[5]], ref = c & 1, gap = c >> 1;

		__builtin_prefetch(p + PREFETCH_AHEAD);
		pick[k] = line | (0u - gap);
		k += (ref & (sample_hash(line) < any)) | gap;
		r += ref;
	}
	*refs += r;
	return k;
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * The same with AVX2, six records (36 bytes) a step: two 16-byte loads,
 * from records 0 and 3, into the halves of a register, whose first 16
 * bytes hold three addresses each, and two more from 2 bytes on, whose
 * bytes 3, 9 and 15 are the three control bytes; byte shuffles turn the
 * big-endian addresses around and put each in lanes 0-2 and 4-6. The
 * class comes from the type's bit in the counted types and the gap
 * types, the hash from two 32-bit multiplies of the line (the top bits
 * of the 64-bit product), and the picks are packed to the front by a
 * lane permute from squeeze[] and stored, 8 lanes always, their count
 * advancing. A step with an address not a quadword's (bits 2..0 set,
 * damage) takes its six records one by one. Returns the records it
 * took, a multiple of six; pick has room for 8 more than n.
 */
__attribute__((target("avx2,popcnt"))) static size_t
pick_sampled_avx2(const struct bach_mrc *m, const uint8_t *p, size_t n,
		  uint32_t any, uint32_t *pick, size_t *kp, uint64_t *refs)
{
	const __m256i shuf_addr = _mm256_setr_epi8(
		3, 2, 1, 0, 9, 8, 7, 6, 15, 14, 13, 12, -1, -1, -1, -1, /**/
		3, 2, 1, 0, 9, 8, 7, 6, 15, 14, 13, 12, -1, -1, -1, -1);
	const __m256i shuf_ctl = _mm256_setr_epi8(
		3, -1, -1, -1, 9, -1, -1, -1, 15, -1, -1, -1, -1, -1, -1, -1, 3,
		-1, -1, -1, 9, -1, -1, -1, 15, -1, -1, -1, -1, -1, -1, -1);
	const __m256i lanes = _mm256_setr_epi32(-1, -1, -1, 0, -1, -1, -1, 0);
	const __m256i one = _mm256_set1_epi32(1), low = _mm256_set1_epi32(15);
	const __m256i seven = _mm256_set1_epi32(7);
	const __m256i reft = _mm256_set1_epi32((int)m->types);
	const __m256i gapt = _mm256_set1_epi32((int)m->gap_types);
	const __m256i mlo = _mm256_set1_epi32((int)0x7f4a7c15u);
	const __m256i mhi = _mm256_set1_epi32((int)0x9e3779b9u);
	const __m256i anyv = _mm256_set1_epi32((int)any);
	const __m128i lg = _mm_cvtsi32_si128((int)m->lg_line);
	__m256i nref = _mm256_setzero_si256();
	size_t i = 0, k = *kp;

	for (; i + 6 <= n; i += 6, p += 6 * BACH_REC_SIZE) {
		__m256i a = _mm256_inserti128_si256(
			_mm256_castsi128_si256(
				_mm_loadu_si128((const __m128i *)p)),
			_mm_loadu_si128((const __m128i *)(p + 18)), 1);
		__m256i c = _mm256_inserti128_si256(
			_mm256_castsi128_si256(
				_mm_loadu_si128((const __m128i *)(p + 2))),
			_mm_loadu_si128((const __m128i *)(p + 20)), 1);
		__m256i addr = _mm256_shuffle_epi8(a, shuf_addr);
		__m256i ctl = _mm256_shuffle_epi8(c, shuf_ctl);
		__m256i line, type, ref, gap, ev, od, h, pk;
		unsigned mask;

		__builtin_prefetch(p + PREFETCH_AHEAD);
		if (__builtin_expect(!_mm256_testz_si256(addr, seven), 0)) {
			k += pick_sampled(m, p, 6, any, pick + k, refs);
			continue;
		}
		line = _mm256_srl_epi32(addr, lg);
		type = _mm256_srli_epi32(ctl, 4);
		ref = _mm256_and_si256(
			_mm256_cmpeq_epi32(
				_mm256_and_si256(_mm256_srlv_epi32(reft, type),
						 one),
				one),
			lanes);
		gap = _mm256_and_si256(
			_mm256_cmpeq_epi32(
				_mm256_and_si256(_mm256_srlv_epi32(gapt, type),
						 one),
				one),
			_mm256_cmpeq_epi32(_mm256_and_si256(ctl, low), low));
		/* bits 32..63 of line x 0x9e3779b97f4a7c15: the top half
		 * of line x its low word, plus line x its high word */
		ev = _mm256_srli_epi64(_mm256_mul_epu32(line, mlo), 32);
		od = _mm256_mul_epu32(_mm256_srli_epi64(line, 32), mlo);
		h = _mm256_add_epi32(_mm256_blend_epi32(ev, od, 0xaa),
				     _mm256_mullo_epi32(line, mhi));
		h = _mm256_srli_epi32(h, 8);
		pk = _mm256_or_si256(
			_mm256_and_si256(ref, _mm256_cmpgt_epi32(anyv, h)),
			gap);
		mask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(pk));
		_mm256_storeu_si256(
			(__m256i *)(pick + k),
			_mm256_permutevar8x32_epi32(
				_mm256_or_si256(line, gap),
				_mm256_cvtepu8_epi32(_mm_loadl_epi64(
					(const __m128i *)&m->squeeze[mask]))));
		k += (unsigned)__builtin_popcount(mask);
		nref = _mm256_sub_epi32(nref, ref);
	}
	{
		uint32_t v[8];

		_mm256_storeu_si256((__m256i *)v, nref);
		*refs += (uint64_t)v[0] + v[1] + v[2] + v[4] + v[5] + v[6];
	}
	*kp = k;
	return i;
}

/*
 * The same with AVX-512, sixteen records (96 bytes) a step: two loads,
 * the second masked so that nothing past them is read, and two byte
 * permutes that take the big-endian addresses, turned around, and the
 * control bytes into lanes; the picks packed by a compress. pick has
 * room for 16 more than n.
 */
__attribute__((target("avx512f,avx512bw,avx512vbmi,popcnt"))) static size_t
pick_sampled_vbmi(const struct bach_mrc *m, const uint8_t *p, size_t n,
		  uint32_t any, uint32_t *pick, size_t *kp, uint64_t *refs)
{
	const __m512i aix = _mm512_loadu_si512(addr_idx);
	const __m512i cix = _mm512_loadu_si512(ctl_idx);
	const __m512i one = _mm512_set1_epi32(1), low = _mm512_set1_epi32(15);
	const __m512i seven = _mm512_set1_epi32(7);
	const __m512i reft = _mm512_set1_epi32((int)m->types);
	const __m512i gapt = _mm512_set1_epi32((int)m->gap_types);
	const __m512i mlo = _mm512_set1_epi32((int)0x7f4a7c15u);
	const __m512i mhi = _mm512_set1_epi32((int)0x9e3779b9u);
	const __m512i anyv = _mm512_set1_epi32((int)any);
	const __m512i ones = _mm512_set1_epi32(-1);
	const __m128i lg = _mm_cvtsi32_si128((int)m->lg_line);
	size_t i = 0, k = *kp;
	uint64_t nref = 0;

	for (; i + 16 <= n; i += 16, p += 16 * BACH_REC_SIZE) {
		__m512i a = _mm512_loadu_si512(p);
		__m512i b = _mm512_maskz_loadu_epi8(0xffffffffull, p + 64);
		__m512i addr = _mm512_permutex2var_epi8(a, aix, b);
		__m512i ctl = _mm512_maskz_permutex2var_epi8(
			0x1111111111111111ull, a, cix, b);
		__m512i line, type, ev, od, h;
		__mmask16 ref, gap, pk;

		__builtin_prefetch(p + PREFETCH_AHEAD);
		__builtin_prefetch(p + PREFETCH_AHEAD + 64);
		if (__builtin_expect(_mm512_test_epi32_mask(addr, seven), 0)) {
			k += pick_sampled(m, p, 16, any, pick + k, refs);
			continue;
		}
		line = _mm512_srl_epi32(addr, lg);
		type = _mm512_srli_epi32(ctl, 4);
		ref = _mm512_test_epi32_mask(_mm512_srlv_epi32(reft, type),
					     one);
		gap = _mm512_test_epi32_mask(_mm512_srlv_epi32(gapt, type),
					     one) &
		      _mm512_cmpeq_epi32_mask(_mm512_and_si512(ctl, low), low);
		ev = _mm512_srli_epi64(_mm512_mul_epu32(line, mlo), 32);
		od = _mm512_mul_epu32(_mm512_srli_epi64(line, 32), mlo);
		h = _mm512_add_epi32(_mm512_mask_blend_epi32(0xaaaa, ev, od),
				     _mm512_mullo_epi32(line, mhi));
		h = _mm512_srli_epi32(h, 8);
		pk = (__mmask16)((ref & _mm512_cmplt_epu32_mask(h, anyv)) |
				 gap);
		_mm512_storeu_si512(
			pick + k,
			_mm512_maskz_compress_epi32(
				pk, _mm512_mask_blend_epi32(gap, line, ones)));
		k += (unsigned)__builtin_popcount(pk);
		nref += (unsigned)__builtin_popcount(ref);
	}
	*refs += nref;
	*kp = k;
	return i;
}

#else
static size_t pick_sampled_vbmi(const struct bach_mrc *m, const uint8_t *p,
				size_t n, uint32_t any, uint32_t *pick,
				size_t *kp, uint64_t *refs)
{
	(void)m, (void)p, (void)n, (void)any, (void)pick, (void)kp, (void)refs;
	return 0;
}

static size_t pick_sampled_avx2(const struct bach_mrc *m, const uint8_t *p,
				size_t n, uint32_t any, uint32_t *pick,
				size_t *kp, uint64_t *refs)
{
	(void)m, (void)p, (void)n, (void)any, (void)pick, (void)kp, (void)refs;
	return 0;
}
#endif

/*
 * SHARDS: every reference is counted, a line's hash decides whether it is
 * tracked (section 3 of the paper: "sample if hash(L) mod P < T", one
 * multiply here). A block of records is filtered first without a branch
 * that depends on the data (pick_sampled(), with AVX2 where the CPU has
 * it): a line either stack samples, or a gap. Only the picks, a few in a
 * hundred, then go to the stacks in trace order. A pick of the line
 * picked just before it is at distance 0 in both stacks (the records
 * between them are lines neither samples), so it costs neither a
 * look-up: for SHARDS a hit at every size, for the near stack nothing it
 * counts.
 */
static void add_sampled(struct bach_mrc *m, const uint8_t *p, size_t n)
{
	uint32_t pick[PICK_BLOCK + 16];
	uint32_t th = m->threshold, nth = m->nthreshold, last = m->last;
	uint32_t any = nth > th ? nth : th; /* picked by either stack */
	uint64_t refs = 0;
	bool vbmi = have_vbmi(), avx2 = have_avx2();

	while (n) {
		size_t b = n < PICK_BLOCK ? n : PICK_BLOCK, k = 0, i = 0;

		if (vbmi)
			i = pick_sampled_vbmi(m, p, b, any, pick, &k, &refs);
		else if (avx2)
			i = pick_sampled_avx2(m, p, b, any, pick, &k, &refs);
		k += pick_sampled(m, p + i * BACH_REC_SIZE, b - i, any,
				  pick + k, &refs);
		p += b * BACH_REC_SIZE;
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
			if (h < nth) {
				uint32_t d = near_access(&m->near, line);

				if (__builtin_expect(m->chunk, 0))
					near_chunk(m, line, d);
				else
					count_near(m, d);
			}
			if (h < th) {
				uint32_t d = sd_access(&m->sd, line, &m->err);

				if (__builtin_expect(m->chunk && d == COLD &&
							     !m->gap,
						     0))
					mrc_pend(m, line);
				else
					count_distance(m, d);
			}
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

size_t mrc_near_last(const struct bach_mrc *m, uint32_t *out)
{
	const struct near *n = &m->near;
	size_t k = 0;

	if (!m->nnear)
		return 0;
	if (n->ring) { /* nearest first: oldest first backwards */
		for (uint32_t i = n->k; i-- > 0;) {
			uint32_t v = n->ring[i];

			if (v)
				out[k++] = v - 1;
		}
		return k;
	}
	for (uint32_t w = 0; w < NEAR_STAMPS / 64; w++)
		for (uint64_t b = n->bits[w]; b; b &= b - 1)
			out[k++] =
				n->key[n->slot[w << 6 |
					       (uint32_t)__builtin_ctzll(b)]] -
				1;
	return k;
}
