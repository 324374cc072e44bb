// SPDX-License-Identifier: MIT
/*
 * Marks where they happened (docs/bachd.md section 5), on the writer
 * thread. A user mark carries the source index read when it was asked
 * for; the writer places it in the trace when a block reaches that index.
 * In-band markers: records that match a configured rule become mark
 * events, found by a scan of whole blocks (only when rules are set), at
 * most marker_rate events a second per rule, the rest of that second
 * merged into one event with a count.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/record.h"
#include "capture_priv.h"
#include "lib/cpus.h"

/*
 * The block offset of source index n (0..nrec): the gap events are the
 * anchors where the source index jumps (ring.h). An index inside a lost
 * run maps to the gap's position.
 */
static uint64_t block_offset(const struct ring_block *b, uint64_t n)
{
	uint64_t off = 0, s = b->src0, k;

	for (uint32_t i = 0; i < b->nev; i++) {
		const struct ring_event *e = &b->ev[i];

		if (e->kind != RING_EV_GAP)
			continue;
		if (n < e->d) {
			k = n > s ? n - s : 0;
			return off + k < e->at ? off + k : e->at;
		}
		off = e->at + e->c < b->nrec ? e->at + e->c : b->nrec;
		s = e->d;
	}
	k = n > s ? n - s : 0;
	return off + k < b->nrec ? off + k : b->nrec;
}

/* The source index of the real record at block offset k. */
static uint64_t block_source(const struct ring_block *b, uint64_t k)
{
	uint64_t off = 0, s = b->src0;

	for (uint32_t i = 0; i < b->nev; i++) {
		const struct ring_event *e = &b->ev[i];

		if (e->kind != RING_EV_GAP || e->at > k)
			continue;
		off = e->at + e->c;
		s = e->d;
	}
	return k > off ? s + (k - off) : s;
}

/*
 * Write and drop the waiting marks with record <= upto: inside block b
 * (which starts at trace_pos), or at trace_pos without one. One lock a
 * block, never one a record.
 */
static void write_marks(struct capture *c, const struct ring_block *b,
			uint64_t upto, bool all)
{
	size_t keep = 0;

	pthread_mutex_lock(&c->sh.mu);
	for (size_t i = 0; i < c->sh.nmarks; i++) {
		struct capture_mark *m = &c->sh.marks[i];
		uint64_t at = c->wr.trace_pos;

		if (!all && m->record > upto) {
			c->sh.marks[keep++] = *m;
			continue;
		}
		if (b)
			at += block_offset(b, m->record);
		manifest_mark(&c->wr.man, c->wr.segname, at, m->record,
			      m->source, m->text, false);
		free(m->text);
	}
	c->sh.nmarks = keep;
	pthread_mutex_unlock(&c->sh.mu);
}

/* The merged matches of rule r, as one event. */
static void marker_flush(struct capture *c, size_t r)
{
	struct marker_state *m = &c->wr.mstate[r];

	if (!m->count)
		return;
	manifest_marker(&c->wr.man, m->seg, m->at, m->record,
			c->cfg.markers[r].text, m->rec, m->count, m->last_at,
			false);
	m->count = 0;
}

void markers_flush(struct capture *c, bool all)
{
	uint64_t now = bach_now_ns();

	for (size_t r = 0; r < c->cfg.nmarkers; r++)
		if (all || now - c->wr.mstate[r].win_ns >= 1000000000ull)
			marker_flush(c, r);
}

/* Record k of block b matched rule r. */
static void marker_hit(struct capture *c, const struct ring_block *b, size_t r,
		       uint64_t k, uint64_t now)
{
	struct marker_state *m = &c->wr.mstate[r];
	uint64_t at = c->wr.trace_pos + k;

	if (now - m->win_ns >= 1000000000ull) {
		marker_flush(c, r);
		m->win_ns = now;
		m->n = 0;
	}
	if (m->n < c->cfg.marker_rate) {
		m->n++;
		manifest_marker(&c->wr.man, c->wr.segname, at,
				block_source(b, k), c->cfg.markers[r].text,
				b->data + k * BACH_REC_SIZE, 1, at, false);
		return;
	}
	if (!m->count++) {
		m->at = at;
		m->record = block_source(b, k);
		memcpy(m->rec, b->data + k * BACH_REC_SIZE, BACH_REC_SIZE);
		snprintf(m->seg, sizeof(m->seg), "%s", c->wr.segname);
	}
	m->last_at = at;
}

/* Type masks: bit n set when control >> 4 == n is of the rule's kind. */
#define IO_TYPES (1u << BACH_T_IO_READ | 1u << BACH_T_IO_WRITE)
#define MEM_TYPES                                                              \
	(1u << BACH_T_I_FETCH | 1u << BACH_T_NC_I_FETCH |                      \
	 1u << BACH_T_D_READ | 1u << BACH_T_NC_D_READ |                        \
	 1u << BACH_T_WRITE_BACK | 1u << BACH_T_D_WRITE)

/* A record in the rule's quadword range: of its kind, a byte inside? */
static bool marker_match(const struct capture_marker *ru, uint32_t a,
			 const uint8_t *p)
{
	unsigned mask = ru->kind == CAPTURE_MARKER_IO ? IO_TYPES : MEM_TYPES;
	uint32_t first, last;

	if (!(mask >> (p[5] >> 4) & 1))
		return false;
	/* the enabled bytes inside the range */
	first = ru->lo > a ? ru->lo - a : 0;
	last = ru->hi - a < 7 ? ru->hi - a : 7;
	return ~p[4] & (0xffu >> (7 - last)) & (0xffu << first);
}

/* The records of block b from k to k + n against every rule, one by one. */
static void scan_records(struct capture *c, const struct ring_block *b,
			 uint32_t k, uint32_t n, const uint32_t *lo,
			 const uint32_t *span, uint64_t *now)
{
	const struct capture_marker *rules = c->cfg.markers;
	size_t nr = c->cfg.nmarkers;
	const uint8_t *p = b->data + (size_t)k * BACH_REC_SIZE;

	for (uint32_t end = k + n; k < end; k++, p += BACH_REC_SIZE) {
		uint32_t a = bach_get_be32(p);

		for (size_t r = 0; r < nr; r++) {
			if (a - lo[r] > span[r])
				continue;
			if (!marker_match(&rules[r], a, p))
				continue;
			if (!*now)
				*now = bach_now_ns();
			marker_hit(c, b, r, k, *now);
		}
	}
}

/*
 * The scan: a rule matches a record of its kind when a byte it enables
 * (BE# bit clear) lies in the rule's range. Nearly every record lies in
 * no rule's range, so every rule's range is tested on many records at
 * once, with no branch on the data, for a mask of the candidates (the
 * records in some rule's range); only those are tested record by record
 * (scan_records()), never the records around them.
 *
 * Where the CPU has AVX2 but not AVX512-VBMI (at run time, by
 * __builtin_cpu_supports()), scan_avx2() takes twelve records a step in
 * registers. Else scan_chunks() goes SCAN_CHUNK records at a time: their
 * addresses into an array, then, rule after rule, a byte each of whether
 * it is in range (loops of a fixed count the compiler vectorizes),
 * built twice on x86-64, for AVX-512 and the baseline SSE2 (GCC's
 * target_clones, an ifunc), and where the CPU has AVX512-VBMI the
 * addresses are gathered by byte permutes (addrs_vbmi()).
 *
 * Before the candidate masks, a chunk of 64 with a candidate was
 * scanned whole, record by record and rule by rule, and with AVX2 the
 * addresses were gathered one by one: with four rules (bench/markers.sh's,
 * one of them a page of code the workload runs often) bachd did 1.36x
 * the instructions it does without a rule, with one 1.23x (callgrind,
 * AVX2, 3 M records of the fake board, raw segments); now 1.12x and
 * 1.07x (of which the mark events written, 0.04x with four rules: under
 * callgrind the run is slow and marker_rate lets more through), and
 * every marker event is the same (4541 of 2 M replayed
 * records with five rules and marker_rate = 1000000, on the AVX2 and
 * AVX512-VBMI paths).
 */
#define SCAN_CHUNK 64

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>

#define SCAN_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))

/*
 * The addresses of SCAN_CHUNK records at p, with AVX512-VBMI's byte
 * permute: 16 records (96 bytes, two loads, the second masked so that
 * nothing past them is read) give 16 addresses, big-endian bytes turned
 * around in the same permute, instead of 16 loads and stores.
 */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void
addrs_vbmi(const uint8_t *p, uint32_t *addr)
{
	static const uint8_t idx[64] = {
#define A(j) 6 * (j) + 3, 6 * (j) + 2, 6 * (j) + 1, 6 * (j)
		A(0), A(1), A(2),  A(3),  A(4),	 A(5),	A(6),  A(7),
		A(8), A(9), A(10), A(11), A(12), A(13), A(14), A(15),
#undef A
	};
	__m512i ix = _mm512_loadu_si512(idx);

	for (unsigned g = 0; g < SCAN_CHUNK / 16; g++, p += 96, addr += 16) {
		__m512i a = _mm512_loadu_si512(p);
		__m512i b = _mm512_maskz_loadu_epi8(0xffffffffull, p + 64);

		_mm512_storeu_si512(addr, _mm512_permutex2var_epi8(a, ix, b));
	}
}

static bool have_vbmi(void)
{
	return bach_simd() >= BACH_SIMD_AVX512;
}
#else
#define SCAN_CLONES
static void addrs_vbmi(const uint8_t *p, uint32_t *addr)
{
	(void)p, (void)addr;
}
static bool have_vbmi(void)
{
	return false;
}
#endif

/* w as a little-endian host holds it */
static inline uint64_t le64(uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(w);
#else
	return w;
#endif
}

/*
 * The scan, SCAN_CHUNK records at a time: their addresses into an array,
 * then, rule after rule, which of them are in range (a byte each), with
 * no branch on the data (loops of a fixed count the compiler
 * vectorizes); then the candidates alone, one by one. From k on; the
 * records after the last whole chunk one by one.
 */
SCAN_CLONES static void scan_chunks(struct capture *c,
				    const struct ring_block *b, uint32_t k,
				    const uint32_t *lo, const uint32_t *span,
				    uint64_t *now)
{
	size_t nr = c->cfg.nmarkers;
	uint32_t addr[SCAN_CHUNK];
	bool vbmi = have_vbmi();

	for (; k + SCAN_CHUNK <= b->nrec; k += SCAN_CHUNK) {
		const uint8_t *p = b->data + (size_t)k * BACH_REC_SIZE;
		uint8_t hit[SCAN_CHUNK] = { 0 };
		uint64_t w[SCAN_CHUNK / 8];

		if (vbmi)
			addrs_vbmi(p, addr);
		else
			for (unsigned i = 0; i < SCAN_CHUNK; i++)
				addr[i] = bach_get_be32(p + i * BACH_REC_SIZE);
		for (size_t r = 0; r < nr; r++) {
			uint32_t l = lo[r], s = span[r];

			for (unsigned i = 0; i < SCAN_CHUNK; i++)
				hit[i] |= addr[i] - l <= s;
		}
		/* only the candidates, one by one: a byte of hit each */
		memcpy(w, hit, sizeof(w));
		for (unsigned j = 0; j < SCAN_CHUNK / 8; j++)
			/* byte i of the word is hit[8j + i] on any host */
			for (uint64_t m = le64(w[j]); m; m &= m - 1)
				scan_records(
					c, b,
					k + 8 * j +
						(uint32_t)__builtin_ctzll(m) /
							8,
					1, lo, span, now);
	}
	scan_records(c, b, k, b->nrec - k, lo, span, now);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* The addresses of the 6 records at p (36 bytes) into lanes 0-2, 4-6. */
__attribute__((target("avx2"))) static inline __m256i addrs6(const uint8_t *p,
							     __m256i shuf)
{
	return _mm256_shuffle_epi8(
		_mm256_inserti128_si256(
			_mm256_castsi128_si256(
				_mm_loadu_si128((const __m128i *)p)),
			_mm_loadu_si128((const __m128i *)(p + 18)), 1),
		shuf);
}

/*
 * With AVX2, twelve records at a time: for each six (36 bytes), two
 * 16-byte loads (the records from 0 and from 3, whose first 16 bytes
 * hold three addresses each) into the halves of a register, one byte
 * shuffle that turns the three big-endian addresses of each half around
 * (the fourth lane a copy of the third); then every rule's range on all
 * of them, a subtract and a signed compare each (a - lo + 2^31 against
 * span + 2^31: the unsigned compare AVX2 lacks). The mask of the records
 * in any rule's range, the candidates, is most often 0; the candidates
 * alone go through scan_records(). Returns the records it did not reach
 * (fewer than 12, for scan_chunks()).
 */
__attribute__((target("avx2"), always_inline)) static inline uint32_t
scan_avx2_n(struct capture *c, const struct ring_block *b, const uint32_t *lo,
	    const uint32_t *span, uint64_t *now, size_t nr)
{
	const __m256i shuf = _mm256_setr_epi8(
		3, 2, 1, 0, 9, 8, 7, 6, 15, 14, 13, 12, 15, 14, 13, 12, /**/
		3, 2, 1, 0, 9, 8, 7, 6, 15, 14, 13, 12, 15, 14, 13, 12);
	__m256i vlo[CAPTURE_MAX_MARKERS], vspan[CAPTURE_MAX_MARKERS];
	uint32_t k = 0;

	for (size_t r = 0; r < nr; r++) {
		vlo[r] = _mm256_set1_epi32((int)(lo[r] ^ 0x80000000u));
		vspan[r] = _mm256_set1_epi32((int)(span[r] ^ 0x80000000u));
	}
	for (; k + 12 <= b->nrec; k += 12) {
		const uint8_t *p = b->data + (size_t)k * BACH_REC_SIZE;
		__m256i a0 = addrs6(p, shuf), a1 = addrs6(p + 36, shuf);
		__m256i out0 = _mm256_set1_epi32(-1), out1 = out0;
		unsigned m;

#pragma GCC unroll 4
		for (size_t r = 0; r < nr; r++) {
			out0 = _mm256_and_si256(
				out0,
				_mm256_cmpgt_epi32(_mm256_sub_epi32(a0, vlo[r]),
						   vspan[r]));
			out1 = _mm256_and_si256(
				out1,
				_mm256_cmpgt_epi32(_mm256_sub_epi32(a1, vlo[r]),
						   vspan[r]));
		}
		m = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(out0)) |
		    (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(out1))
			    << 8;
		m = ~m & 0x7777; /* lanes 0-2, 4-6 of each */
		if (__builtin_expect(m != 0, 0))
			for (m = (m & 7) | (m >> 1 & 070) | (m >> 2 & 0700) |
				 (m >> 3 & 07000);
			     m; m &= m - 1)
				scan_records(c, b,
					     k + (uint32_t)__builtin_ctz(m), 1,
					     lo, span, now);
	}
	return k;
}

/* Built for one to four rules apart (the rules in registers), and any. */
__attribute__((target("avx2"))) static uint32_t
scan_avx2(struct capture *c, const struct ring_block *b, const uint32_t *lo,
	  const uint32_t *span, uint64_t *now)
{
	switch (c->cfg.nmarkers) {
	case 1:
		return scan_avx2_n(c, b, lo, span, now, 1);
	case 2:
		return scan_avx2_n(c, b, lo, span, now, 2);
	case 3:
		return scan_avx2_n(c, b, lo, span, now, 3);
	case 4:
		return scan_avx2_n(c, b, lo, span, now, 4);
	default:
		return scan_avx2_n(c, b, lo, span, now, c->cfg.nmarkers);
	}
}

static bool have_avx2(void)
{
	return bach_simd() >= BACH_SIMD_AVX2;
}
#else
static uint32_t scan_avx2(struct capture *c, const struct ring_block *b,
			  const uint32_t *lo, const uint32_t *span,
			  uint64_t *now)
{
	(void)c, (void)b, (void)lo, (void)span, (void)now;
	return 0;
}
static bool have_avx2(void)
{
	return false;
}
#endif

static void scan(struct capture *c, const struct ring_block *b)
{
	const struct capture_marker *rules = c->cfg.markers;
	size_t nr = c->cfg.nmarkers;
	uint32_t lo[CAPTURE_MAX_MARKERS], span[CAPTURE_MAX_MARKERS];
	uint32_t k = 0;
	uint64_t now = 0;

	/* the rules' quadword ranges in locals: the loop reads nothing else */
	for (size_t r = 0; r < nr; r++) {
		lo[r] = rules[r].lo & ~7u;
		span[r] = rules[r].hi - lo[r];
	}
	if (have_avx2() && !have_vbmi())
		k = scan_avx2(c, b, lo, span, &now);
	scan_chunks(c, b, k, lo, span, &now);
}

void marks_block(struct capture *c, const struct ring_block *b, bool at_end)
{
	if (!at_end && c->cfg.nmarkers) {
		scan(c, b);
		/* a merged second is written when it is over, data flowing or
		 * not */
		markers_flush(c, false);
	}
	write_marks(c, at_end ? NULL : b, b->src1, false);
	c->wr.src_reached = b->src1;
}

void marks_idle(struct capture *c, bool all)
{
	write_marks(c, NULL, c->wr.src_reached, all);
}

static int parse_num(const char *s, char **end, uint32_t *v)
{
	unsigned long long x;

	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	errno = 0;
	x = strtoull(s, end, 0);
	if (errno || x > UINT32_MAX || *end == s ||
	    (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

int capture_marker_parse(struct capture_marker *m, const char *s, char *err,
			 size_t errlen)
{
	const char *p;
	char *end;
	uint32_t a, b;
	bool io;

	memset(m, 0, sizeof(*m));
	if (!strncmp(s, "io:", 3))
		io = true;
	else if (!strncmp(s, "mem:", 4))
		io = false;
	else
		goto bad;
	p = s + (io ? 3 : 4);
	if (parse_num(p, &end, &a))
		goto bad;
	b = a;
	if (*end == '-') {
		if (parse_num(end + 1, &end, &b) || b < a)
			goto bad;
	} else if (*end == '/' && !io) {
		uint32_t size;

		if (parse_num(end + 1, &end, &size) || !size ||
		    size - 1 > UINT32_MAX - a)
			goto bad;
		b = a + (size - 1);
	}
	if (*end || (io && b > 0xffff))
		goto bad;
	m->kind = io ? CAPTURE_MARKER_IO : CAPTURE_MARKER_MEM;
	m->lo = a;
	m->hi = b;
	snprintf(m->text, sizeof(m->text), "%s:0x%x-0x%x", io ? "io" : "mem", a,
		 b);
	return 0;
bad:
	if (!*s) /* between two commas, or before or after them all */
		snprintf(
			err, errlen,
			"want io:LO-HI or io:PORT (ports up to 0xffff), or mem:BASE/SIZE, mem:LO-HI or mem:ADDR, comma-separated (an empty rule: a comma with no rule on one side)");
	else
		snprintf(
			err, errlen,
			"want io:LO-HI or io:PORT (ports up to 0xffff), or mem:BASE/SIZE, mem:LO-HI or mem:ADDR, comma-separated ('%.40s' is not one)",
			s);
	return -EINVAL;
}
