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
 * no rule's range, so the block goes SCAN_CHUNK records at a time: their
 * addresses into an array, then, rule after rule, whether any of them is
 * in range, with no branch on the data (a loop of a fixed count the
 * compiler vectorizes). Only a chunk with a candidate is scanned record by
 * record. With four rules this took bachd's CPU time from 1.18x that
 * without rules to 1.05-1.09x (bench/markers.sh, BENCH_REPEAT=5).
 *
 * On x86-64 the function is built three times, for AVX-512 (16 addresses
 * a compare), AVX2 (8) and the baseline SSE2 (4), and the loader picks
 * the one the CPU runs (GCC's target_clones, an ifunc), and where the
 * CPU has AVX512-VBMI the addresses are gathered by byte permutes
 * (addrs_vbmi()). With four rules the scan's time fell to 0.42 of what it
 * was (perf samples of bachd on the fake board, 89 M records, counted
 * against the workload generator's, whose work is the same: 0.59 of them
 * before, 0.25 after), and every marker event is the same (4544 of 3 M
 * records with marker_rate = 1000000).
 */
#define SCAN_CHUNK 64

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>

#define SCAN_CLONES                                                            \
	__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))

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
	static int v = -1;

	if (v < 0)
		v = __builtin_cpu_supports("avx512vbmi") &&
		    __builtin_cpu_supports("avx512bw");
	return v;
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

SCAN_CLONES static void scan(struct capture *c, const struct ring_block *b)
{
	const struct capture_marker *rules = c->cfg.markers;
	size_t nr = c->cfg.nmarkers;
	uint32_t lo[CAPTURE_MAX_MARKERS], span[CAPTURE_MAX_MARKERS];
	uint32_t addr[SCAN_CHUNK];
	uint32_t k = 0;
	uint64_t now = 0;
	bool vbmi = have_vbmi();

	/* the rules' quadword ranges in locals: the loop reads nothing else */
	for (size_t r = 0; r < nr; r++) {
		lo[r] = rules[r].lo & ~7u;
		span[r] = rules[r].hi - lo[r];
	}
	for (; k + SCAN_CHUNK <= b->nrec; k += SCAN_CHUNK) {
		const uint8_t *p = b->data + (size_t)k * BACH_REC_SIZE;
		unsigned any = 0;

		if (vbmi)
			addrs_vbmi(p, addr);
		else
			for (unsigned i = 0; i < SCAN_CHUNK; i++)
				addr[i] = bach_get_be32(p + i * BACH_REC_SIZE);
		for (size_t r = 0; r < nr; r++) {
			uint32_t l = lo[r], s = span[r];

			for (unsigned i = 0; i < SCAN_CHUNK; i++)
				any |= addr[i] - l <= s;
		}
		if (any)
			scan_records(c, b, k, SCAN_CHUNK, lo, span, &now);
	}
	scan_records(c, b, k, b->nrec - k, lo, span, &now);
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
