// SPDX-License-Identifier: MIT
/*
 * Record-aware deflate (lib/io/recdeflate.h).
 *
 * A trace is a stream of 6-byte records, and what repeats in it repeats
 * as records: a loop's fetches, the lines of a working set, a stack's
 * slots. A general LZ77 match finder hashes every byte position; this one
 * hashes only record boundaries, with a hash of the whole record, and
 * keeps a few recent positions per bucket ("far" matches). A far match
 * found at a boundary also reaches back over the bytes before it that
 * match at its distance, taking back literals already coded there, so a
 * match can start anywhere in a record, as most do (after the bytes of an
 * address that changed). Between boundaries only the distances that pay
 * there are tried ("near" matches): one and two records back and the last
 * match's distance, which continue runs of records that differ in an
 * address byte. A near match gives way to a far one that reaches further.
 *
 * Tokens are counted as they are made, then the block is coded with
 * Huffman codes built for it (the smaller of dynamic and fixed codes),
 * whose size is known before a bit is written: a block that would not fit
 * is refused, never truncated.
 *
 * Hash table entries are positions plus a base that grows with every
 * call by more than a block and its window, so a new block needs no
 * clearing: entries below the base belong to earlier blocks.
 *
 * Level 1: one position per bucket, boundaries inside a match not entered.
 * Level 2: four positions per bucket, every boundary entered.
 */
#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/io/recdeflate.h"

#define REC	  6
#define WINDOW	  32768u
#define MIN_MATCH 3
#define MAX_MATCH 258
/* a 3-byte match this far away costs more than its literals */
#define TOO_FAR 4096u

#define HASH_BITS 13
#define MAX_WAYS  4
#define BASE_STEP (BACH_RECDEFLATE_MAX_INPUT + WINDOW)

#define NLITLEN	      288 /* codes 286, 287 take part in the fixed code only */
#define NDIST	      30
#define NCLEN	      19
#define MAX_BITS      15
#define MAX_CLEN_BITS 7
#define END_BLOCK     256

/* token: a literal byte (< 256), or dist << 9 | len */
#define TOK_MATCH(len, dist) ((uint32_t)(dist) << 9 | (uint32_t)(len))
#define TOK_LEN(t)	     ((t)&0x1ff)
#define TOK_DIST(t)	     ((t) >> 9)

struct huff {
	uint16_t code[NLITLEN]; /* bit-reversed, ready to emit */
	uint8_t len[NLITLEN];
};

struct bach_recdeflate {
	unsigned ways;
	bool insert_in_match;
	uint32_t base;
	uint32_t *tab; /* (1 << HASH_BITS) buckets of MAX_WAYS positions */
	uint32_t *tok;
	size_t ntok;
	uint32_t lfreq[NLITLEN], dfreq[NDIST];
	uint64_t extra_bits; /* length and distance extra bits of the tokens */
	struct huff lit, dist;
};

/* ---- the deflate tables ------------------------------------------------ */

static const uint16_t len_base[29] = {
	3,  4,	5,  6,	7,  8,	9,  10, 11,  13,  15,  17,  19,	 23,  27,
	31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
};
static const uint8_t len_extra[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
	2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
};
static const uint16_t dist_base[NDIST] = {
	1,    2,    3,	  4,	5,    7,    9,	  13,	 17,	25,
	33,   49,   65,	  97,	129,  193,  257,  385,	 513,	769,
	1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
};
static const uint8_t dist_extra[NDIST] = {
	0, 0, 0, 0, 1, 1, 2, 2,	 3,  3,	 4,  4,	 5,  5,	 6,
	6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
};
static const uint8_t clen_order[NCLEN] = {
	16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
};

/* length -> code - 257; (dist - 1) -> code, via dist_slot() */
static uint8_t len_code[MAX_MATCH + 1];
static uint8_t dist_code[512];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void)
{
	for (unsigned c = 0; c < 29; c++) {
		unsigned n = c == 28 ? 1 : 1u << len_extra[c];

		for (unsigned i = 0; i < n; i++)
			len_code[len_base[c] + i] = (uint8_t)c;
	}
	/* (dist - 1) < 256 directly, else ((dist - 1) >> 7) + 256 */
	for (unsigned c = 0; c < NDIST; c++) {
		unsigned n = 1u << dist_extra[c];

		for (unsigned i = 0; i < n; i++) {
			unsigned d = dist_base[c] - 1 + i;

			if (d < 256)
				dist_code[d] = (uint8_t)c;
			else
				dist_code[256 + (d >> 7)] = (uint8_t)c;
		}
	}
}

static inline unsigned dist_slot(unsigned dist)
{
	unsigned d = dist - 1;

	return d < 256 ? dist_code[d] : dist_code[256 + (d >> 7)];
}

/* ---- match finding ---------------------------------------------------- */

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint16_t load16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t rec_hash(const uint8_t *p)
{
	uint64_t v = (uint64_t)load32(p) | (uint64_t)load16(p + 4) << 32;

	return (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> (64 - HASH_BITS));
}

/* Bytes a[i] == b[i] from the start, at most max; a before b. */
static inline unsigned match_len(const uint8_t *a, const uint8_t *b,
				 unsigned max)
{
	unsigned n = 0;

	while (n + 8 <= max) {
		uint64_t x = load64(a + n) ^ load64(b + n);

		if (x) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return n + (unsigned)__builtin_ctzll(x) / 8;
#else
			return n + (unsigned)__builtin_clzll(x) / 8;
#endif
		}
		n += 8;
	}
	while (n < max && a[n] == b[n])
		n++;
	return n;
}

static inline void insert(struct bach_recdeflate *c, const uint8_t *src,
			  size_t p)
{
	uint32_t *b = c->tab + (size_t)rec_hash(src + p) * MAX_WAYS;

	for (unsigned w = c->ways - 1; w > 0; w--)
		b[w] = b[w - 1];
	b[0] = c->base + (uint32_t)p;
}

struct match {
	unsigned len, dist;
};

/*
 * The longest match for the record at boundary q (q + REC <= len) among
 * the positions in its bucket, then q enters the bucket. len 0: none.
 */
static inline struct match find_rec(struct bach_recdeflate *c,
				    const uint8_t *src, size_t q, unsigned max)
{
	uint32_t *b = c->tab + (size_t)rec_hash(src + q) * MAX_WAYS;
	struct match best = { 0, 0 };

	for (unsigned w = 0; w < c->ways; w++) {
		uint32_t e = b[w];
		size_t off;
		unsigned dist, l;

		if (e < c->base)
			break;
		off = e - c->base;
		if (off >= q)
			continue; /* q itself, or later: never a match */
		dist = (unsigned)(q - off);
		if (dist > WINDOW)
			break;
		l = match_len(src + off, src + q, max);
		if (l > best.len) {
			best.len = l;
			best.dist = dist;
			if (l == max)
				break;
		}
	}
	for (unsigned w = c->ways - 1; w > 0; w--)
		b[w] = b[w - 1];
	b[0] = c->base + (uint32_t)q;
	return best;
}

/* The best of one and two records back and the last distance. */
static inline struct match find_near(const uint8_t *src, size_t p, unsigned max,
				     unsigned rep)
{
	struct match best = { 0, 0 };
	unsigned l;

	if (p >= REC) {
		l = match_len(src + p - REC, src + p, max);
		best.len = l;
		best.dist = REC;
	}
	if (p >= 2 * REC) {
		l = match_len(src + p - 2 * REC, src + p, max);
		if (l > best.len) {
			best.len = l;
			best.dist = 2 * REC;
		}
	}
	if (rep > 2 * REC && rep <= p) {
		l = match_len(src + p - rep, src + p, max);
		if (l > best.len) {
			best.len = l;
			best.dist = rep;
		}
	}
	return best;
}

static inline void put_lit(struct bach_recdeflate *c, uint8_t b)
{
	c->tok[c->ntok++] = b;
	c->lfreq[b]++;
}

static inline void put_match(struct bach_recdeflate *c, unsigned len,
			     unsigned dist)
{
	unsigned lc, dc;

	/* deflate's limits; anything else would index past the tables */
	assert(len >= MIN_MATCH && len <= MAX_MATCH);
	assert(dist >= 1 && dist <= WINDOW);
	lc = len_code[len];
	dc = dist_slot(dist);
	c->tok[c->ntok++] = TOK_MATCH(len, dist);
	c->lfreq[257 + lc]++;
	c->dfreq[dc]++;
	c->extra_bits += len_extra[lc] + dist_extra[dc];
}

static inline bool worth(struct match m)
{
	return m.len >= MIN_MATCH && (m.len > MIN_MATCH || m.dist <= TOO_FAR);
}

/* Take back the last n tokens, literals all. */
static inline void unput_lits(struct bach_recdeflate *c, size_t n)
{
	while (n--)
		c->lfreq[c->tok[--c->ntok]]--;
}

/*
 * The parse. At each record boundary q the bucket of q's record may hold
 * an earlier copy: a "far" match, which also reaches back over the bytes
 * before q that match at its distance (up to the start of the record
 * before, taking back literals coded there). Between boundaries, "near"
 * matches (find_near) run. A near match gives way to a far one that reaches
 * further: it is cut where the far one starts.
 */
static void parse(struct bach_recdeflate *c, const uint8_t *src, size_t len)
{
	size_t p = 0, looked = SIZE_MAX, lits = 0; /* literals just coded */
	size_t fs = 0, fe = 0;			   /* far: [fs, fe) */
	unsigned fdist = 0, rep = 0, phase = 0;	   /* phase: p % REC */

	while (p < len) {
		size_t left = len - p, q = p + (phase ? REC - phase : 0);
		unsigned max = left < MAX_MATCH ? (unsigned)left : MAX_MATCH;
		struct match m;
		size_t take;

		/*
		 * Only boundaries past the last one looked up: a far match
		 * may have moved p back over boundaries already in their
		 * buckets, and looking one up again would find itself.
		 */
		if ((looked == SIZE_MAX || q > looked) && q + REC <= len) {
			size_t qleft = len - q, back = q - p + lits, b = 0;
			struct match f =
				find_rec(c, src, q,
					 qleft < MAX_MATCH ? (unsigned)qleft
							   : MAX_MATCH);

			looked = q;
			fe = 0;
			if (q + 2 * REC <= len)
				__builtin_prefetch(
					c->tab +
					(size_t)rec_hash(src + q + REC) *
						MAX_WAYS);
			if (f.len >= REC) {
				if (back > q - f.dist)
					back = q - f.dist;
				while (b < back &&
				       src[q - b - 1] ==
					       src[q - b - 1 - f.dist])
					b++;
				fs = q - b;
				fe = q + f.len;
				fdist = f.dist;
			}
		}
		m = find_near(src, p, max, rep);
		take = 0;
		if (fe > p + m.len) {
			/* the far match reaches further than the near one */
			if (fs + lits < p)
				fs = p - lits; /* what came before is coded */
			if (fs <= p) {
				if (fs < p)
					unput_lits(c, p - fs);
				p = fs;
				phase = (unsigned)(p % REC);
				m.len = fe - fs < MAX_MATCH
						? (unsigned)(fe - fs)
						: MAX_MATCH;
				m.dist = fdist;
				take = 1;
			} else if (m.len > fs - p) {
				m.len = (unsigned)(fs - p);
			}
		}
		if (take || worth(m)) {
			if (c->insert_in_match) {
				size_t e = p + m.len;

				for (size_t r = q == p ? p + REC : q;
				     r < e && r + REC <= len; r += REC) {
					if (r != looked)
						insert(c, src, r);
				}
			}
			put_match(c, m.len, m.dist);
			p += m.len;
			phase = (phase + m.len) % REC;
			rep = m.dist;
			lits = 0;
		} else {
			put_lit(c, src[p]);
			p++;
			phase = phase == REC - 1 ? 0 : phase + 1;
			lits++;
		}
	}
}

/* ---- Huffman codes ---------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Code lengths of at most maxbits for freq[0..n), n <= NLITLEN; at least
 * two symbols must have a nonzero count. In-place minimum-redundancy code
 * lengths (Moffat and Katajainen), then lengths over the limit folded in
 * and the Kraft sum restored by lengthening the longest codes that can
 * take it (as miniz does).
 */
static void huff_lengths(const uint32_t *freq, unsigned n, unsigned maxbits,
			 uint8_t *lens)
{
	uint32_t key[NLITLEN], a[NLITLEN];
	unsigned count[33] = { 0 };
	unsigned m = 0;
	int root, leaf, next, avbl, used, dpth;
	uint32_t total = 0;

	memset(lens, 0, n);
	for (unsigned i = 0; i < n; i++)
		if (freq[i])
			key[m++] = freq[i] << 9 | i; /* counts < 2^23 */
	if (m < 2) {
		/* a complete code needs two: one of them unused */
		unsigned s = m ? key[0] & 0x1ff : 0;

		lens[s] = 1;
		lens[s ? 0 : 1] = 1;
		return;
	}
	qsort(key, m, sizeof(*key), cmp_u32);
	for (unsigned i = 0; i < m; i++)
		a[i] = key[i] >> 9;

	a[0] += a[1];
	root = 0;
	leaf = 2;
	for (next = 1; next < (int)m - 1; next++) {
		if (leaf >= (int)m || a[root] < a[leaf]) {
			a[next] = a[root];
			a[root++] = (uint32_t)next;
		} else {
			a[next] = a[leaf++];
		}
		if (leaf >= (int)m || (root < next && a[root] < a[leaf])) {
			a[next] += a[root];
			a[root++] = (uint32_t)next;
		} else {
			a[next] += a[leaf++];
		}
	}
	a[m - 2] = 0;
	for (next = (int)m - 3; next >= 0; next--)
		a[next] = a[a[next]] + 1;
	avbl = 1;
	used = dpth = 0;
	root = (int)m - 2;
	next = (int)m - 1;
	while (avbl > 0) {
		while (root >= 0 && (int)a[root] == dpth) {
			used++;
			root--;
		}
		while (avbl > used) {
			a[next--] = (uint32_t)dpth;
			avbl--;
		}
		avbl = 2 * used;
		dpth++;
		used = 0;
	}

	for (unsigned i = 0; i < m; i++)
		count[a[i] < 32 ? a[i] : 32]++;
	for (unsigned i = maxbits + 1; i <= 32; i++) {
		count[maxbits] += count[i];
		count[i] = 0;
	}
	for (unsigned i = maxbits; i > 0; i--)
		total += count[i] << (maxbits - i);
	while (total != 1u << maxbits) {
		count[maxbits]--;
		for (unsigned i = maxbits - 1; i > 0; i--) {
			if (count[i]) {
				count[i]--;
				count[i + 1] += 2;
				break;
			}
		}
		total--;
	}
	/* the shortest codes to the most frequent symbols */
	for (unsigned bits = 1, j = m; bits <= maxbits; bits++)
		for (unsigned k = count[bits]; k > 0; k--)
			lens[key[--j] & 0x1ff] = (uint8_t)bits;
}

static inline unsigned reverse(unsigned code, unsigned bits)
{
	unsigned r = 0;

	for (unsigned i = 0; i < bits; i++, code >>= 1)
		r = r << 1 | (code & 1);
	return r;
}

static void huff_codes(const uint8_t *lens, unsigned n, uint16_t *codes)
{
	unsigned count[MAX_BITS + 1] = { 0 }, next[MAX_BITS + 1];
	unsigned code = 0;

	for (unsigned i = 0; i < n; i++)
		count[lens[i]]++;
	count[0] = 0;
	for (unsigned b = 1; b <= MAX_BITS; b++) {
		code = (code + count[b - 1]) << 1;
		next[b] = code;
	}
	for (unsigned i = 0; i < n; i++)
		codes[i] = lens[i] ? (uint16_t)reverse(next[lens[i]]++, lens[i])
				   : 0;
}

/* ---- the block -------------------------------------------------------- */

struct bits {
	uint8_t *out;
	uint64_t buf;
	unsigned n;
};

static inline void put_bits(struct bits *w, uint64_t v, unsigned n)
{
	w->buf |= v << w->n;
	w->n += n;
}

/* room for 8 bytes at out */
static inline void flush_bits(struct bits *w)
{
	uint64_t v = w->buf;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(w->out, &v, 8);
	w->out += w->n >> 3;
	w->buf = w->n >= 64 ? 0 : w->buf >> (w->n & ~7u);
	w->n &= 7;
}

/* The code-length code: the run-length coded lengths of both codes. */
struct header {
	unsigned nlit, ndist, nclen;
	uint8_t sym[NLITLEN + NDIST]; /* 0..18 */
	uint8_t arg[NLITLEN + NDIST]; /* the extra bits' value */
	unsigned nsym;
	uint32_t freq[NCLEN];
	uint8_t len[NCLEN];
	uint16_t code[NCLEN];
};

static void rle_lengths(struct header *h, const uint8_t *all, unsigned n)
{
	h->nsym = 0;
	memset(h->freq, 0, sizeof(h->freq));
	for (unsigned i = 0; i < n;) {
		unsigned v = all[i], run = 1;

		while (i + run < n && all[i + run] == v)
			run++;
		i += run;
		if (v == 0) {
			while (run >= 11) {
				unsigned k = run < 138 ? run : 138;

				h->sym[h->nsym] = 18;
				h->arg[h->nsym++] = (uint8_t)(k - 11);
				run -= k;
			}
			if (run >= 3) {
				h->sym[h->nsym] = 17;
				h->arg[h->nsym++] = (uint8_t)(run - 3);
				run = 0;
			}
		} else {
			h->sym[h->nsym] = (uint8_t)v;
			h->arg[h->nsym++] = 0;
			run--;
			while (run >= 3) {
				unsigned k = run < 6 ? run : 6;

				h->sym[h->nsym] = 16;
				h->arg[h->nsym++] = (uint8_t)(k - 3);
				run -= k;
			}
		}
		while (run--) {
			h->sym[h->nsym] = (uint8_t)v;
			h->arg[h->nsym++] = 0;
		}
	}
	for (unsigned i = 0; i < h->nsym; i++)
		h->freq[h->sym[i]]++;
}

static const uint8_t clen_extra[NCLEN] = {
	[16] = 2,
	[17] = 3,
	[18] = 7,
};

/* Dynamic codes for the counted tokens; returns the header's bit count. */
static uint64_t dynamic_codes(struct bach_recdeflate *c, struct header *h)
{
	uint8_t all[NLITLEN + NDIST];
	unsigned used;
	uint64_t bits;

	/* two codes of each at least: a one-code tree is not complete */
	used = 0;
	for (unsigned i = 0; i < 286; i++)
		used += c->lfreq[i] != 0;
	if (used < 2)
		c->lfreq[c->lfreq[0] ? 1 : 0]++;
	used = 0;
	for (unsigned i = 0; i < NDIST; i++)
		used += c->dfreq[i] != 0;
	for (unsigned i = 0; used < 2; i++) {
		if (!c->dfreq[i]) {
			c->dfreq[i] = 1;
			used++;
		}
	}
	huff_lengths(c->lfreq, 286, MAX_BITS, c->lit.len);
	huff_lengths(c->dfreq, NDIST, MAX_BITS, c->dist.len);
	huff_codes(c->lit.len, 286, c->lit.code);
	huff_codes(c->dist.len, NDIST, c->dist.code);

	for (h->nlit = 286; h->nlit > 257 && !c->lit.len[h->nlit - 1];)
		h->nlit--;
	for (h->ndist = NDIST; h->ndist > 1 && !c->dist.len[h->ndist - 1];)
		h->ndist--;
	memcpy(all, c->lit.len, h->nlit);
	memcpy(all + h->nlit, c->dist.len, h->ndist);
	rle_lengths(h, all, h->nlit + h->ndist);
	huff_lengths(h->freq, NCLEN, MAX_CLEN_BITS, h->len);
	huff_codes(h->len, NCLEN, h->code);
	for (h->nclen = NCLEN;
	     h->nclen > 4 && !h->len[clen_order[h->nclen - 1]];)
		h->nclen--;

	bits = 3 + 5 + 5 + 4 + 3 * h->nclen;
	for (unsigned i = 0; i < NCLEN; i++)
		bits += (uint64_t)h->freq[i] * (h->len[i] + clen_extra[i]);
	return bits;
}

static uint64_t body_bits(const struct bach_recdeflate *c, const uint8_t *llen,
			  const uint8_t *dlen)
{
	uint64_t bits = c->extra_bits;

	for (unsigned i = 0; i < 286; i++)
		bits += (uint64_t)c->lfreq[i] * llen[i];
	for (unsigned i = 0; i < NDIST; i++)
		bits += (uint64_t)c->dfreq[i] * dlen[i];
	return bits;
}

static void fixed_codes(struct bach_recdeflate *c)
{
	for (unsigned i = 0; i < NLITLEN; i++)
		c->lit.len[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
	memset(c->dist.len, 5, NDIST);
	huff_codes(c->lit.len, NLITLEN, c->lit.code);
	huff_codes(c->dist.len, NDIST, c->dist.code);
}

static void write_header(struct bits *w, const struct header *h)
{
	put_bits(w, 1 | 2 << 1, 3); /* BFINAL, dynamic */
	put_bits(w, h->nlit - 257, 5);
	put_bits(w, h->ndist - 1, 5);
	put_bits(w, h->nclen - 4, 4);
	flush_bits(w);
	for (unsigned i = 0; i < h->nclen; i++) {
		put_bits(w, h->len[clen_order[i]], 3);
		flush_bits(w);
	}
	for (unsigned i = 0; i < h->nsym; i++) {
		unsigned s = h->sym[i];

		put_bits(w, h->code[s], h->len[s]);
		put_bits(w, h->arg[i], clen_extra[s]);
		flush_bits(w);
	}
}

static void write_tokens(struct bach_recdeflate *c, struct bits *w)
{
	const struct huff *lit = &c->lit, *dist = &c->dist;

	for (size_t i = 0; i < c->ntok; i++) {
		uint32_t t = c->tok[i];

		if (t < 256) {
			put_bits(w, lit->code[t], lit->len[t]);
		} else {
			unsigned len = TOK_LEN(t), d = TOK_DIST(t);
			unsigned lc = len_code[len], dc = dist_slot(d);

			put_bits(w, lit->code[257 + lc], lit->len[257 + lc]);
			put_bits(w, len - len_base[lc], len_extra[lc]);
			put_bits(w, dist->code[dc], dist->len[dc]);
			put_bits(w, d - dist_base[dc], dist_extra[dc]);
		}
		flush_bits(w);
	}
	put_bits(w, lit->code[END_BLOCK], lit->len[END_BLOCK]);
	flush_bits(w);
}

size_t bach_recdeflate(struct bach_recdeflate *c, const uint8_t *src,
		       size_t len, uint8_t *dst, size_t cap)
{
	struct header h;
	struct bits w = { dst, 0, 0 };
	uint8_t fl[NLITLEN], fd[NDIST];
	uint64_t dyn, fix;

	if (len > BACH_RECDEFLATE_MAX_INPUT)
		return 0;
	if (c->base > UINT32_MAX - 2 * BASE_STEP) {
		memset(c->tab, 0, sizeof(*c->tab) * MAX_WAYS << HASH_BITS);
		c->base = BASE_STEP;
	}
	c->ntok = 0;
	c->extra_bits = 0;
	memset(c->lfreq, 0, sizeof(c->lfreq));
	memset(c->dfreq, 0, sizeof(c->dfreq));
	parse(c, src, len);
	c->base += BASE_STEP;
	c->lfreq[END_BLOCK]++;

	for (unsigned i = 0; i < NLITLEN; i++)
		fl[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
	memset(fd, 5, sizeof(fd));
	fix = 3 + body_bits(c, fl, fd);
	dyn = dynamic_codes(c, &h);
	dyn += body_bits(c, c->lit.len, c->dist.len);
	/* the bit writer stores 8 bytes at a time */
	if (((dyn < fix ? dyn : fix) + 7) / 8 + 8 > cap)
		return 0;
	if (dyn < fix) {
		write_header(&w, &h);
	} else {
		fixed_codes(c);
		put_bits(&w, 1 | 1 << 1, 3); /* BFINAL, fixed */
	}
	write_tokens(c, &w);
	if (w.n) {
		*w.out++ = (uint8_t)w.buf;
	}
	return (size_t)(w.out - dst);
}

struct bach_recdeflate *bach_recdeflate_new(int level)
{
	struct bach_recdeflate *c;

	if (level < BACH_RECDEFLATE_MIN_LEVEL)
		level = BACH_RECDEFLATE_MIN_LEVEL;
	if (level > BACH_RECDEFLATE_MAX_LEVEL)
		level = BACH_RECDEFLATE_MAX_LEVEL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->tab = calloc((size_t)MAX_WAYS << HASH_BITS, sizeof(*c->tab));
	c->tok = malloc(BACH_RECDEFLATE_MAX_INPUT * sizeof(*c->tok));
	if (!c->tab || !c->tok) {
		bach_recdeflate_free(c);
		return NULL;
	}
	c->base = BASE_STEP;
	c->ways = level == 1 ? 1 : MAX_WAYS;
	c->insert_in_match = level >= 2;
	pthread_once(&tables_once, tables_init);
	return c;
}

void bach_recdeflate_free(struct bach_recdeflate *c)
{
	if (!c)
		return;
	free(c->tab);
	free(c->tok);
	free(c);
}
