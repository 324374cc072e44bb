// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/stats.h"

#define LINE_WORDS ((1u << 27) / 64)
#define PAGE_WORDS ((1u << 20) / 64)

/* control bytes of memory cycles with a clean low nibble */
static bool is_mem(unsigned ctl)
{
	return ctl >= 0x80 && !(ctl & 0x0f) && bach_type_valid(ctl >> 4);
}

/* is_mem() for every control byte, for the hot loop */
static uint8_t mem_ctl[256];

static void init_tables(void)
{
	for (unsigned c = 0; c < 256; c++)
		mem_ctl[c] = is_mem(c);
}

void bach_stats_fold(struct bach_stats *s)
{
	for (int l = 0; l < BACH_STATS_LANES; l++)
		for (unsigned i = 0; i < 65536; i++) {
			s->by_ctl_be[i >> 8][i & 255] += s->lane[l][i];
			s->lane[l][i] = 0;
		}
	s->in_lanes = 0;
}

int bach_stats_init(struct bach_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->lo = UINT32_MAX;
	if (!mem_ctl[0x80])
		init_tables();
	s->lines = calloc(LINE_WORDS, sizeof(uint64_t));
	s->pages = calloc(PAGE_WORDS, sizeof(uint64_t));
	if (!s->lines || !s->pages) {
		bach_stats_free(s);
		return -ENOMEM;
	}
	return 0;
}

void bach_stats_free(struct bach_stats *s)
{
	free(s->lines);
	free(s->pages);
	s->lines = s->pages = NULL;
}

void bach_stats_add(struct bach_stats *s, const uint8_t *p, size_t n)
{
	uint32_t lo = s->lo, hi = s->hi;
	uint64_t addr_low = 0, *lines = s->lines;

	/* a lane takes a quarter of the records: fold long before 2^32 */
	if (s->in_lanes + n >= (1ull << 32))
		bach_stats_fold(s);
	s->in_lanes += n;
	for (size_t i = 0; i < n; i++, p += BACH_REC_SIZE) {
		uint32_t a = bach_get_be32(p);
		uint8_t ctl = p[5];

		s->lane[i % BACH_STATS_LANES][ctl << 8 | p[4]]++;
		addr_low +=
			(a & 7) != 0 && (ctl & 0x0f) != 0x0f; /* not markers */
		if (__builtin_expect(mem_ctl[ctl], 1)) {
			/* pages are derived from the lines at the end */
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
			lines[a >> 11] |= 1ull << (a >> 5 & 63);
		} else if (ctl == (BACH_T_SPECIAL << 4) && p[4] == 0xfb &&
			   (a & 0x10)) {
			s->stop_grant++;
		} else if (bach_rec_is_gap(p)) {
			s->lost += a;
		}
	}
	s->lo = lo;
	s->hi = hi;
	s->addr_low += addr_low;
}

static uint64_t popcount_words(const uint64_t *w, size_t n)
{
	uint64_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += (uint64_t)__builtin_popcountll(w[i]);
	return c;
}

void bach_stats_summary(struct bach_stats *s, struct bach_summary *m)
{
	bach_stats_fold(s);
	memset(m, 0, sizeof(*m));
	for (unsigned ctl = 0; ctl < 256; ctl++) {
		unsigned t = ctl >> 4;
		bool valid = bach_type_valid(t);
		bool gap = !valid && (ctl & 0x0f) == 0x0f;

		for (unsigned be = 0; be < 256; be++) {
			uint64_t c = s->by_ctl_be[ctl][be];
			unsigned nbytes;

			if (!c)
				continue;
			m->records += c;
			if (gap) {
				m->gaps += c;
				continue;
			}
			m->by_type[t] += c;
			if (!valid) {
				m->invalid += c;
				continue;
			}
			if (ctl & 0x0f)
				m->bad_ctl_low += c;
			if (t == BACH_T_SPECIAL) {
				m->special[bach_special_kind(0, (uint8_t)be)] +=
					c;
				continue;
			}
			if (t == BACH_T_INT_ACK)
				continue;
			if (ctl & BACH_CTL_WR)
				m->writes += c;
			else
				m->reads += c;
			nbytes = bach_be_bytes((uint8_t)be);
			m->bytes_hist[nbytes] += c;
			m->bytes += c * nbytes;
			if (t >= BACH_T_I_FETCH && !(ctl & 0x0f))
				m->mem_cycles += c;
		}
	}
	/* FB with A4 set is a stop grant, not a halt */
	m->special[BACH_SP_HALT] -= s->stop_grant;
	m->special[BACH_SP_STOP_GRANT] += s->stop_grant;
	m->lost = s->lost;
	m->addr_low = s->addr_low;
	/* a 4 KiB page is touched when any of its 128 lines is: 2 words */
	for (size_t w = 0; w < LINE_WORDS; w += 2)
		if (s->lines[w] | s->lines[w + 1])
			s->pages[w >> 7] |= 1ull << (w >> 1 & 63);
	m->lines = popcount_words(s->lines, LINE_WORDS);
	m->pages = popcount_words(s->pages, PAGE_WORDS);
	m->lo = s->lo;
	m->hi = s->hi;
}
