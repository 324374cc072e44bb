// SPDX-License-Identifier: MIT
/*
 * bach plot map (plot_kinds.h): address against trace position, a density
 * map coloured by the commonest kind of reference. A first pass counts
 * references per 64 KiB of the address space to find the ranges in use
 * (or takes --range's), a second fills cells of time column by row of
 * address; then the cells become an image under the band labels, the time
 * axis and the rules.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/bytes.h"
#include "cmd.h"
#include "plot_kinds.h"

#define CHUNK_SHIFT   16 /* 64 KiB address chunks find the ranges */
#define NCHUNKS	      (1u << (32 - CHUNK_SHIFT))
#define MAP_CLS	      4	  /* code, read, write (and writeback), I/O */
#define MAP_DATA_ROWS 480 /* address rows of the data, --csv and --json */

struct map {
	struct pass p;
	uint64_t *chunk; /* memory references per 64 KiB */
	uint64_t io;
	uint64_t total;
	/* the bands, bottom up; band nb is I/O when io */
	uint64_t lo[PLOT_MAX_RANGES + 1], hi[PLOT_MAX_RANGES + 1];
	double y0[PLOT_MAX_RANGES + 1], y1[PLOT_MAX_RANGES + 1];
	size_t nb;
	uint32_t *cell; /* [MAP_CLS][PH][NCOLS] */
};

static const char *const map_names[MAP_CLS] = {
	"instruction fetch",
	"data read",
	"data write, writeback",
	"I/O (port space)",
};

/* Okabe-Ito: blue, bluish green, orange, sky blue */
static const struct style map_style[MAP_CLS] = {
	{ okabe_ito[5], 0, -1 },
	{ okabe_ito[3], 0, -1 },
	{ okabe_ito[1], 0, -1 },
	{ okabe_ito[2], 0, -1 },
};

static int map_cls(unsigned type)
{
	switch (cls_of(type)) {
	case C_CODE:
		return 0;
	case C_READ:
		return 1;
	case C_WRITE:
	case C_WB:
		return 2;
	case C_IO:
		return 3;
	default:
		return -1;
	}
}

static void map_count(struct pass *p, const uint8_t *r, size_t n)
{
	struct map *m = (struct map *)p;

	for (size_t i = 0; i < n; i++, r += BACH_REC_SIZE) {
		int c = map_cls(r[5] >> 4);

		if (c == 3)
			m->io++;
		else if (c >= 0)
			m->chunk[bach_get_be32(r) >> CHUNK_SHIFT]++;
	}
	m->total += n;
}

/* row of address a (memory: c < 3), or -1 outside every band */
static int map_row(const struct map *m, uint32_t a, int c)
{
	size_t nmem = m->io ? m->nb - 1 : m->nb;

	if (c == 3) {
		if (!m->io)
			return -1;
		return (int)(m->y0[nmem] + (a & 0xffff) / 65536.0 *
						   (m->y1[nmem] - m->y0[nmem]));
	}
	for (size_t b = 0; b < nmem; b++)
		if (a >= m->lo[b] && a <= m->hi[b])
			return (int)(m->y0[b] +
				     (double)(a - m->lo[b]) /
					     (double)(m->hi[b] - m->lo[b] + 1) *
					     (m->y1[b] - m->y0[b]));
	return -1;
}

static void map_fill(struct pass *p, const uint8_t *r, size_t n)
{
	struct map *m = (struct map *)p;
	uint64_t total = m->total ? m->total : 1;

	for (size_t i = 0; i < n; i++, r += BACH_REC_SIZE) {
		int c = map_cls(r[5] >> 4), row;
		uint64_t col =
			time_axis_on()
				? (uint64_t)((pos_x(p->pos + i, total) - LEFT) /
					     PW * (NCOLS - 1e-9))
				: (p->pos + i) * NCOLS / total;

		if (c < 0 || col >= NCOLS)
			continue;
		row = map_row(m, bach_get_be32(r), c);
		if (row < 0 || row >= PH)
			continue;
		m->cell[((size_t)c * PH + (size_t)row) * NCOLS + col]++;
	}
}

/* The ranges in use: 64 KiB chunks less than 1 MiB apart joined, then
 * the closest ranges joined until PLOT_MAX_RANGES are left. */
static void map_ranges(struct map *m, const struct plot_opts *o)
{
	size_t n = 0;

	if (o->nranges) {
		for (; n < o->nranges; n++) {
			m->lo[n] = o->lo[n];
			m->hi[n] = o->hi[n];
		}
	} else {
		for (uint32_t c = 0; c < NCHUNKS; c++) {
			if (!m->chunk[c])
				continue;
			if (n &&
			    (c << CHUNK_SHIFT) - m->hi[n - 1] <= (1u << 20)) {
				m->hi[n - 1] =
					((uint64_t)(c + 1) << CHUNK_SHIFT) - 1;
				continue;
			}
			if (n == PLOT_MAX_RANGES) { /* join the closest pair */
				size_t best = 0;

				for (size_t b = 1; b + 1 < n; b++)
					if (m->lo[b + 1] - m->hi[b] <
					    m->lo[best + 1] - m->hi[best])
						best = b;
				m->hi[best] = m->hi[best + 1];
				memmove(&m->lo[best + 1], &m->lo[best + 2],
					(n - best - 2) * sizeof(*m->lo));
				memmove(&m->hi[best + 1], &m->hi[best + 2],
					(n - best - 2) * sizeof(*m->hi));
				n--;
			}
			m->lo[n] = (uint64_t)c << CHUNK_SHIFT;
			m->hi[n] = ((uint64_t)(c + 1) << CHUNK_SHIFT) - 1;
			n++;
		}
	}
	m->nb = n + (m->io ? 1 : 0);
	if (m->io) {
		m->lo[n] = 0;
		m->hi[n] = 0xffff;
	}
	/* bands share the height equally, 6 pixels apart; I/O is thin */
	{
		double gap = 6,
		       room = PH - gap * (double)(m->nb ? m->nb - 1 : 0);
		double io_h =
			m->io ? (n ? room / (double)(n * 3 + 1) : room) : 0;
		double each = n ? (room - io_h) / (double)n : 0, y = 0;

		for (size_t b = 0; b < m->nb; b++) {
			double h = m->io && b == n ? io_h : each;

			m->y0[b] = y;
			m->y1[b] = y + h;
			y += h + gap;
		}
	}
}

static void map_draw(cairo_t *cr, struct map *m)
{
	cairo_surface_t *img =
		cairo_image_surface_create(CAIRO_FORMAT_RGB24, NCOLS, PH);
	unsigned char *px = cairo_image_surface_get_data(img);
	int stride = cairo_image_surface_get_stride(img);
	uint32_t max = 1;
	char b[40];

	cairo_surface_flush(img);
	for (size_t i = 0; i < (size_t)MAP_CLS * PH * NCOLS; i++)
		max = m->cell[i] > max ? m->cell[i] : max;
	for (int y = 0; y < PH; y++) {
		uint32_t *row =
			(uint32_t *)(px + (size_t)(PH - 1 - y) * stride);

		for (int x = 0; x < NCOLS; x++) {
			uint32_t best = 0, sum = 0;
			int bc = 0;
			double v, k[3];

			for (int c = 0; c < MAP_CLS; c++) {
				uint32_t n =
					m->cell[((size_t)c * PH + y) * NCOLS +
						x];

				sum += n;
				if (n > best) {
					best = n;
					bc = c;
				}
			}
			/* white when empty; else the commonest kind, darker
			 * with the log of the count */
			v = sum ? 0.25 + 0.75 * log1p(sum) / log1p(max) : 0;
			for (int j = 0; j < 3; j++)
				k[j] = 1 - v * (1 - map_style[bc].rgb[j]);
			row[x] = (uint32_t)(k[0] * 255) << 16 |
				 (uint32_t)(k[1] * 255) << 8 |
				 (uint32_t)(k[2] * 255);
		}
	}
	cairo_surface_mark_dirty(img);
	cairo_save(cr);
	cairo_translate(cr, LEFT, TOP);
	cairo_scale(cr, (double)PW / NCOLS, 1);
	cairo_set_source_surface(cr, img, 0, 0);
	cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
	cairo_paint(cr);
	cairo_restore(cr);
	cairo_surface_destroy(img);
	/* band labels: each band's first and last address, and addresses
	 * at a power of two between them where there is room */
	font(cr, 11, false);
	text_role = "tick";
	for (size_t i = 0; i < m->nb; i++) {
		double ylo = TOP + PH - m->y0[i], yhi = TOP + PH - m->y1[i];
		bool io = m->io && i == m->nb - 1;
		uint64_t size = m->hi[i] - m->lo[i] + 1, step = 1;
		double want = (ylo - yhi) / S(40);

		cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
		cairo_move_to(cr, LEFT - S(4), ylo + 0.5);
		cairo_line_to(cr, LEFT, ylo + 0.5);
		cairo_move_to(cr, LEFT - S(4), yhi + 0.5);
		cairo_line_to(cr, LEFT, yhi + 0.5);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(b, sizeof(b), io ? "I/O %04llx" : "%08llx",
			 (unsigned long long)m->lo[i]);
		if (!text_collides(cr, LEFT - S(6), ylo, 1, 1, b, 0))
			text(cr, LEFT - S(6), ylo, 1, 1, b);
		snprintf(b, sizeof(b), io ? "I/O %04llx" : "%08llx",
			 (unsigned long long)m->hi[i]);
		if (!text_collides(cr, LEFT - S(6), yhi, 1, 0, b, S(1)))
			text(cr, LEFT - S(6), yhi, 1, 0, b);
		while (want >= 1 && (double)step * want < (double)size)
			step *= 2;
		for (uint64_t a = (m->lo[i] / step + 1) * step;
		     want >= 1 && a < m->hi[i]; a += step) {
			double y = ylo - (double)(a - m->lo[i]) / (double)size *
						 (ylo - yhi);

			snprintf(b, sizeof(b), io ? "I/O %04llx" : "%08llx",
				 (unsigned long long)a);
			if (text_collides(cr, LEFT - S(6), y, 1, 0.5, b, S(2)))
				continue;
			cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
			cairo_move_to(cr, LEFT - S(4), floor(y) + 0.5);
			cairo_line_to(cr, LEFT, floor(y) + 0.5);
			cairo_stroke(cr);
			cairo_set_source_rgb(cr, 0, 0, 0);
			text(cr, LEFT - S(6), y, 1, 0.5, b);
		}
	}
	axis_title(cr, true, "physical address (hex), ranges in use",
		   "address (hex)");
	legend(cr, map_names, map_style, MAP_CLS, false);
}

/* The addresses of row r of band b (map_row()'s cells): [*lo, *hi]. */
static void row_addrs(const struct map *m, size_t b, int r, uint64_t *lo,
		      uint64_t *hi)
{
	double h = m->y1[b] - m->y0[b],
	       size = (double)(m->hi[b] - m->lo[b] + 1);
	double f0 = (r - m->y0[b]) / h, f1 = (r + 1 - m->y0[b]) / h;

	*lo = m->lo[b] + (uint64_t)ceil((f0 < 0 ? 0 : f0) * size);
	*hi = m->lo[b] + (uint64_t)ceil((f1 > 1 ? 1 : f1) * size) - 1;
	if (*hi > m->hi[b])
		*hi = m->hi[b];
}

/*
 * Every cell that counted a reference: its time column (the records from
 * start), its band's address space and the addresses of its row, the
 * class and the count (the picture colours a cell by its commonest class).
 */
static void map_data(struct dout *d, const struct map *m,
		     const struct rules *rules)
{
	bool first = true;

	if (d->json) {
		dout_printf(d,
			    "{\"kind\":\"map\",\"records\":%llu,\"classes\":[",
			    (unsigned long long)m->total);
		for (int c = 0; c < MAP_CLS; c++) {
			if (c)
				dout_printf(d, ",");
			dout_string(d, map_names[c]);
		}
		dout_printf(d, "],\"bands\":[");
		for (size_t b = 0; b < m->nb; b++)
			dout_printf(
				d,
				"%s{\"space\":\"%s\",\"lo\":%llu,\"hi\":%llu}",
				b ? "," : "",
				m->io && b == m->nb - 1 ? "io" : "memory",
				(unsigned long long)m->lo[b],
				(unsigned long long)m->hi[b]);
		dout_printf(d, "],\"cells\":[");
	} else {
		dout_printf(d, "start,records,space,lo,hi,class,count\n");
	}
	for (size_t b = 0; b < m->nb; b++) {
		bool io = m->io && b == m->nb - 1;

		for (int r = (int)m->y0[b]; r < PH && r < (int)ceil(m->y1[b]);
		     r++) {
			uint64_t lo, hi;

			if (r < 0)
				continue;
			row_addrs(m, b, r, &lo, &hi);
			for (int x = 0; x < NCOLS; x++) {
				uint64_t s0 =
					((uint64_t)x * m->total + NCOLS - 1) /
					NCOLS;
				uint64_t s1 = ((uint64_t)(x + 1) * m->total +
					       NCOLS - 1) /
					      NCOLS;

				for (int c = 0; c < MAP_CLS; c++) {
					uint32_t n = m->cell[((size_t)c * PH +
							      (size_t)r) *
								     NCOLS +
							     (size_t)x];

					if (!n || (c == 3) != io)
						continue;
					if (!d->json) {
						dout_printf(
							d,
							"%llu,%llu,%s,%llu,%llu,",
							(unsigned long long)s0,
							(unsigned long long)(s1 -
									     s0),
							io ? "io" : "memory",
							(unsigned long long)lo,
							(unsigned long long)hi);
						dout_string(d, map_names[c]);
						dout_printf(d, ",%u\n", n);
						continue;
					}
					dout_printf(
						d,
						"%s{\"start\":%llu,\"records\":%llu,\"space\":\"%s\",\"lo\":%llu,\"hi\":%llu,\"class\":%d,\"count\":%u}",
						first ? "" : ",",
						(unsigned long long)s0,
						(unsigned long long)(s1 - s0),
						io ? "io" : "memory",
						(unsigned long long)lo,
						(unsigned long long)hi, c, n);
					first = false;
				}
			}
		}
	}
	if (d->json) {
		dout_printf(d, "]");
		dout_rules(d, rules);
		dout_printf(d, "}\n");
	}
}

int map_plot(cairo_t *cr, struct dout *d, int ntraces, char **traces,
	     const struct plot_opts *o, struct rules *rules)
{
	struct map *m = calloc(1, sizeof(*m));
	int status = EXIT_OK;

	if (!m || !(m->chunk = calloc(NCHUNKS, sizeof(*m->chunk)))) {
		errmsg("out of memory");
		status = EXIT_USAGE;
	}
	/* the first pass gathers the rules: the band of their labels only
	 * when there are some */
	if (!status) {
		m->p.add = map_count;
		status = read_all(&m->p, ntraces, traces, rules);
	}
	if (!status)
		status = plot_layout(cr, map_names, MAP_CLS,
				     rules->n || rules->dropped, "00000000");
	/* the data (--csv, --json) has rows of its own, whatever the labels
	 * above the picture take: those of the plot area of 1000 x 600
	 * without them (python/bach/plot.py's ROWS) */
	if (d)
		G.top = G.h - G.bottom - MAP_DATA_ROWS;
	if (!status && !(m->cell = calloc((size_t)MAP_CLS * PH * NCOLS,
					  sizeof(*m->cell)))) {
		errmsg("out of memory");
		status = EXIT_USAGE;
	}
	if (!status) {
		map_ranges(m, o);
		m->p.add = map_fill;
		status = read_all(&m->p, ntraces, traces, NULL);
	}
	if (!status && d) {
		map_data(d, m, rules);
	} else if (!status) {
		map_draw(cr, m);
		time_axis(cr, m->total);
		draw_rules(cr, rules, m->total);
	}
	if (m) {
		free(m->chunk);
		free(m->cell);
	}
	free(m);
	return status;
}
