// SPDX-License-Identifier: MIT
/*
 * bach plot's pictures (plot.h): address map, cycle mix, miss-ratio
 * curves and working sets, drawn with cairo. Gaps, marks and device
 * events of a capture's manifest (or, for a plain file, its gap markers)
 * are vertical rules on the pictures whose x axis is the trace position.
 */
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach.h"
#include "bach/cachesim.h"
#include "bach/manifest.h"
#include "bach/mrc.h"
#include "bach/options.h"
#include "bach/outfile.h"
#include "bach/refs.h"
#include "plot.h"

const char *const plot_kind_names[PLOT_NKINDS] = { "map", "mix", "mrc", "wss" };

/* the picture: points for SVG, pixels for PNG */
#define W      1000
#define H      600
#define LEFT   110
#define RIGHT  30
#define TOP    50
#define BOTTOM 70
#define PW     (W - LEFT - RIGHT)
#define PH     (H - TOP - BOTTOM)

#define NCOLS	  800 /* time columns of map and mix */
#define MAX_RULES 400

/* ---- what the records are, for the map and the mix --------------------- */

enum cls { C_CODE, C_READ, C_WRITE, C_WB, C_IO, C_OTHER, C_INVALID, NCLS };

static const char *const cls_names[NCLS] = {
	"instruction fetch",   "data read",	    "data write",
	"writeback",	       "I/O read or write", "interrupt ack., special",
	"invalid, gap marker",
};

static const double cls_rgb[NCLS][3] = {
	{ 0.12, 0.47, 0.71 }, { 0.17, 0.63, 0.17 }, { 0.84, 0.15, 0.16 },
	{ 1.00, 0.50, 0.05 }, { 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 },
	{ 0.50, 0.50, 0.50 },
};

static enum cls cls_of(unsigned type)
{
	switch (type) {
	case BACH_T_I_FETCH:
	case BACH_T_NC_I_FETCH:
		return C_CODE;
	case BACH_T_D_READ:
	case BACH_T_NC_D_READ:
		return C_READ;
	case BACH_T_D_WRITE:
		return C_WRITE;
	case BACH_T_WRITE_BACK:
		return C_WB;
	case BACH_T_IO_READ:
	case BACH_T_IO_WRITE:
		return C_IO;
	case BACH_T_INT_ACK:
	case BACH_T_SPECIAL:
		return C_OTHER;
	default:
		return C_INVALID;
	}
}

/* ---- vertical rules: gaps, marks, device events ------------------------ */

struct rule {
	uint64_t at;
	int kind; /* BACH_EV_GAP, _MARK, _DEVICE_LOST, _BACK */
	char label[40];
};

struct rules {
	struct rule r[MAX_RULES];
	size_t n;
	uint64_t dropped; /* beyond MAX_RULES */
};

static void rule_add(struct rules *rs, uint64_t at, int kind, const char *l)
{
	if (rs->n == MAX_RULES) {
		rs->dropped++;
		return;
	}
	rs->r[rs->n].at = at;
	rs->r[rs->n].kind = kind;
	snprintf(rs->r[rs->n].label, sizeof(rs->r[rs->n].label), "%s", l);
	rs->n++;
}

/*
 * The rules of a capture directory's manifest, offset by base; false
 * when path is not a capture (its gap markers then give the gaps).
 */
static bool manifest_rules(const char *path, uint64_t base, struct rules *rs)
{
	struct bach_manifest m;
	char err[256];
	struct stat st;
	int fd;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (bach_manifest_load(fd, path, &m, err, sizeof(err))) {
		close(fd);
		bach_manifest_free(&m);
		return false;
	}
	close(fd);
	for (size_t i = 0; i < m.nevents; i++) {
		const struct bach_manifest_event *e = &m.events[i];
		char l[40];

		if (!e->has_at)
			continue;
		switch (e->kind) {
		case BACH_EV_GAP:
			snprintf(l, sizeof(l), "gap %llu %.24s",
				 (unsigned long long)e->count, e->detail);
			break;
		case BACH_EV_MARK:
			snprintf(l, sizeof(l), "%.39s", e->detail);
			break;
		case BACH_EV_DEVICE_LOST:
			snprintf(l, sizeof(l), "device lost");
			break;
		case BACH_EV_DEVICE_BACK:
			snprintf(l, sizeof(l), "device back");
			break;
		default:
			continue;
		}
		rule_add(rs, base + e->at, (int)e->kind, l);
	}
	bach_manifest_free(&m);
	return true;
}

/* ---- reading: one trace at a time, so that positions add up ------------ */

struct pass {
	void (*add)(struct pass *p, const uint8_t *recs, size_t n);
	uint64_t pos; /* records before this block */
	bool markers; /* gap markers are rules (no manifest) */
	struct rules *rules;
};

static void pass_add(void *ctx, const uint8_t *recs, size_t n)
{
	struct pass *p = ctx;

	if (p->markers && p->rules) {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *r = recs + i * BACH_REC_SIZE;
			char l[40];

			if (!bach_rec_is_gap(r))
				continue;
			snprintf(l, sizeof(l), "gap %u", bach_get_be32(r));
			rule_add(p->rules, p->pos + i, BACH_EV_GAP, l);
		}
	}
	p->add(p, recs, n);
	p->pos += n;
}

/* Every trace in order through p; rules from manifests or markers. */
static int read_all(struct pass *p, int ntraces, char **traces,
		    struct rules *rules)
{
	p->pos = 0;
	p->rules = rules;
	if (rules)
		rules->n = rules->dropped = 0;
	for (int i = 0; i < ntraces; i++) {
		uint64_t n;
		int status;

		p->markers =
			!(rules && manifest_rules(traces[i], p->pos, rules));
		status = read_traces(1, &traces[i], pass_add, p, &n);
		if (status)
			return status;
	}
	return EXIT_OK;
}

/* ---- drawing helpers --------------------------------------------------- */

static void font(cairo_t *cr, double size, bool bold)
{
	cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD
				    : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
}

/* text at x, y; ax, ay: 0 left/top, 0.5 centre, 1 right/bottom */
static void text(cairo_t *cr, double x, double y, double ax, double ay,
		 const char *s)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - e.width * ax - e.x_bearing,
		      y - e.height * ay - e.y_bearing);
	cairo_show_text(cr, s);
}

static void vtext(cairo_t *cr, double x, double y, const char *s)
{
	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_rotate(cr, -M_PI / 2);
	text(cr, 0, 0, 0.5, 0.5, s);
	cairo_restore(cr);
}

/* 1.5k, 20M, 3G: a count in few characters */
static void si(char *buf, size_t len, double v)
{
	static const char *const sfx[] = { "", "k", "M", "G", "T" };
	int k = 0;

	while (fabs(v) >= 1000 && k < 4) {
		v /= 1000;
		k++;
	}
	snprintf(buf, len, "%.4g%s", v, sfx[k]);
}

/* a 1-2-5 step giving about n ticks over span */
static double nice_step(double span, int n)
{
	double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;

	return p * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
}

static void frame_title(cairo_t *cr, const char *title)
{
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	font(cr, 16, true);
	text(cr, W / 2.0, 18, 0.5, 0.5, title);
}

static void plot_box(cairo_t *cr)
{
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, LEFT + 0.5, TOP + 0.5, PW, PH);
	cairo_stroke(cr);
}

/* x axis of trace positions [0, total) with its title */
static void time_axis(cairo_t *cr, uint64_t total)
{
	double span = total ? (double)total : 1, step = nice_step(span, 8);
	char b[32];

	font(cr, 11, false);
	cairo_set_source_rgb(cr, 0, 0, 0);
	for (double v = 0; v <= span; v += step) {
		double x = LEFT + v / span * PW;

		cairo_move_to(cr, x + 0.5, TOP + PH);
		cairo_line_to(cr, x + 0.5, TOP + PH + 5);
		cairo_stroke(cr);
		si(b, sizeof(b), v);
		text(cr, x, TOP + PH + 8, 0.5, 0, b);
	}
	font(cr, 13, false);
	text(cr, LEFT + PW / 2.0, H - 22, 0.5, 0.5,
	     "trace position (records from the start)");
}

/* y axis from 0 to top with ticks and its title */
static void value_axis(cairo_t *cr, double top, bool percent, const char *title)
{
	double step = nice_step(top, 6);
	char b[32];

	font(cr, 11, false);
	for (double v = 0; v <= top * 1.0001; v += step) {
		double y = TOP + PH - v / top * PH;

		cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
		cairo_move_to(cr, LEFT, y + 0.5);
		cairo_line_to(cr, LEFT + PW, y + 0.5);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		if (percent)
			snprintf(b, sizeof(b), "%.0f%%", v * 100);
		else if (top <= 1)
			snprintf(b, sizeof(b), "%.2f", v);
		else
			si(b, sizeof(b), v);
		text(cr, LEFT - 6, y, 1, 0.5, b);
	}
	font(cr, 13, false);
	vtext(cr, 22, TOP + PH / 2.0, title);
}

/* the rules over a time axis, labelled when there is room */
static void draw_rules(cairo_t *cr, const struct rules *rs, uint64_t total)
{
	double last_label = -1e9;

	font(cr, 10, false);
	cairo_set_line_width(cr, 1);
	for (size_t i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->r[i];
		double x =
			LEFT + (total ? (double)r->at / (double)total : 0) * PW;

		if (r->kind == BACH_EV_GAP)
			cairo_set_source_rgba(cr, 0.85, 0, 0, 0.8);
		else if (r->kind == BACH_EV_MARK)
			cairo_set_source_rgba(cr, 0, 0, 0.8, 0.8);
		else
			cairo_set_source_rgba(cr, 0.6, 0, 0.6, 0.8);
		if (r->kind == BACH_EV_MARK) {
			double dash[] = { 4, 3 };

			cairo_set_dash(cr, dash, 2, 0);
		}
		cairo_move_to(cr, floor(x) + 0.5, TOP);
		cairo_line_to(cr, floor(x) + 0.5, TOP + PH);
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
		if (x - last_label > 60) {
			text(cr, x + 2, TOP + 2, 0, 0, r->label);
			last_label = x;
		}
	}
	if (rs->dropped) {
		char b[80];

		snprintf(b, sizeof(b), "(%llu more events not drawn)",
			 (unsigned long long)rs->dropped);
		cairo_set_source_rgb(cr, 0.85, 0, 0);
		text(cr, LEFT + PW, TOP - 4, 1, 1, b);
	}
}

/* a legend box at the top right of the plot area */
static void legend(cairo_t *cr, const char *const *names,
		   const double (*rgb)[3], size_t n, bool lines)
{
	double wmax = 0, x, y = TOP + 10;
	cairo_text_extents_t e;

	font(cr, 11, false);
	for (size_t i = 0; i < n; i++) {
		cairo_text_extents(cr, names[i], &e);
		wmax = e.x_advance > wmax ? e.x_advance : wmax;
	}
	x = LEFT + PW - wmax - 40;
	cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
	cairo_rectangle(cr, x - 6, y - 6, wmax + 40, 16.0 * n + 8);
	cairo_fill_preserve(cr);
	cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
	cairo_stroke(cr);
	for (size_t i = 0; i < n; i++, y += 16) {
		cairo_set_source_rgb(cr, rgb[i][0], rgb[i][1], rgb[i][2]);
		if (lines) {
			cairo_set_line_width(cr, 2);
			cairo_move_to(cr, x, y + 6);
			cairo_line_to(cr, x + 20, y + 6);
			cairo_stroke(cr);
			cairo_set_line_width(cr, 1);
		} else {
			cairo_rectangle(cr, x, y, 20, 12);
			cairo_fill(cr);
		}
		cairo_set_source_rgb(cr, 0, 0, 0);
		text(cr, x + 26, y + 6, 0, 0.5, names[i]);
	}
}

/* ---- map: address against time ----------------------------------------- */

#define CHUNK_SHIFT 16 /* 64 KiB address chunks find the ranges */
#define NCHUNKS	    (1u << (32 - CHUNK_SHIFT))
#define MAP_CLS	    4 /* code, read, write (and writeback), I/O */

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
		uint64_t col = (p->pos + i) * NCOLS / total;

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
	static const double rgb[MAP_CLS][3] = {
		{ 0.12, 0.47, 0.71 },
		{ 0.17, 0.63, 0.17 },
		{ 0.84, 0.15, 0.16 },
		{ 0.58, 0.40, 0.74 },
	};
	static const char *const names[MAP_CLS] = {
		"instruction fetch",
		"data read",
		"data write, writeback",
		"I/O (port space)",
	};
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
				k[j] = 1 - v * (1 - rgb[bc][j]);
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
	/* band labels: each band's first and last address */
	font(cr, 11, false);
	for (size_t i = 0; i < m->nb; i++) {
		double ylo = TOP + PH - m->y0[i], yhi = TOP + PH - m->y1[i];
		bool io = m->io && i == m->nb - 1;

		cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
		cairo_move_to(cr, LEFT - 4, ylo + 0.5);
		cairo_line_to(cr, LEFT, ylo + 0.5);
		cairo_move_to(cr, LEFT - 4, yhi + 0.5);
		cairo_line_to(cr, LEFT, yhi + 0.5);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(b, sizeof(b), io ? "I/O %04llx" : "%08llx",
			 (unsigned long long)m->lo[i]);
		text(cr, LEFT - 6, ylo, 1, 1, b);
		if (ylo - yhi > 26) {
			snprintf(b, sizeof(b), io ? "I/O %04llx" : "%08llx",
				 (unsigned long long)m->hi[i]);
			text(cr, LEFT - 6, yhi, 1, 0, b);
		}
	}
	font(cr, 13, false);
	vtext(cr, 14, TOP + PH / 2.0, "physical address (hex), ranges in use");
	legend(cr, names, rgb, MAP_CLS, false);
}

/* ---- mix: cycle types over time ---------------------------------------- */

struct cols {
	struct pass p;
	uint64_t per; /* records per column, doubled as needed */
	uint64_t n[NCOLS][NCLS];
};

static void cols_add(struct pass *p, const uint8_t *r, size_t n)
{
	struct cols *c = (struct cols *)p;

	for (size_t i = 0; i < n; i++, r += BACH_REC_SIZE) {
		uint64_t col = (p->pos + i) / c->per;

		if (col >= NCOLS) { /* halve the resolution */
			for (size_t k = 0; k < NCOLS / 2; k++)
				for (int j = 0; j < NCLS; j++)
					c->n[k][j] = c->n[2 * k][j] +
						     c->n[2 * k + 1][j];
			memset(c->n[NCOLS / 2], 0,
			       sizeof(c->n[0]) * (NCOLS / 2));
			c->per *= 2;
			col = (p->pos + i) / c->per;
		}
		c->n[col][cls_of(r[5] >> 4)]++;
	}
}

static void mix_draw(cairo_t *cr, const struct cols *c, uint64_t total)
{
	double span = total ? (double)total : 1;

	/* abutting bars: no antialiased seams between them */
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
	for (size_t k = 0; k < NCOLS && k * c->per < total; k++) {
		uint64_t sum = 0;
		double x0 = LEFT + (double)(k * c->per) / span * PW;
		double x1 = LEFT + (double)((k + 1) * c->per) / span * PW;
		double y = TOP + PH;

		for (int j = 0; j < NCLS; j++)
			sum += c->n[k][j];
		if (x1 > LEFT + PW)
			x1 = LEFT + PW;
		for (int j = 0; j < NCLS && sum; j++) {
			double h = (double)c->n[k][j] / (double)sum * PH;

			cairo_set_source_rgb(cr, cls_rgb[j][0], cls_rgb[j][1],
					     cls_rgb[j][2]);
			cairo_rectangle(cr, x0, y - h, x1 - x0 + 0.3, h);
			cairo_fill(cr);
			y -= h;
		}
	}
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
	value_axis(cr, 1, true, "share of bus cycles");
	legend(cr, cls_names, cls_rgb, NCLS, false);
}

/* ---- wss: working set over time ---------------------------------------- */

struct wss {
	struct pass p;
	struct bach_wss *w;
};

static void wss_add(struct pass *p, const uint8_t *r, size_t n)
{
	bach_wss_add(((struct wss *)p)->w, r, n);
}

static void series(cairo_t *cr, const double *x, const double *y, size_t n,
		   double xmax, double ymax, const double *rgb, bool logx)
{
	cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
	cairo_set_line_width(cr, 2);
	for (size_t i = 0; i < n; i++) {
		double px = LEFT + (logx ? x[i] : x[i] / xmax) * PW;
		double py = TOP + PH - y[i] / ymax * PH;

		if (i)
			cairo_line_to(cr, px, py);
		else
			cairo_move_to(cr, px, py);
	}
	cairo_stroke(cr);
	cairo_set_line_width(cr, 1);
}

static void wss_draw(cairo_t *cr, const struct bach_wss_window *w, size_t n,
		     uint64_t total, uint64_t window, uint32_t line)
{
	double *x = calloc(n ? n : 1, sizeof(*x));
	double *yl = calloc(n ? n : 1, sizeof(*yl));
	double *yp = calloc(n ? n : 1, sizeof(*yp));
	static const double rgb[2][3] = { { 0.12, 0.47, 0.71 },
					  { 0.84, 0.15, 0.16 } };
	char n0[64], n1[64], title[128], wb[32];
	const char *names[2] = { n0, n1 };
	double ymax = 1;

	/* a short last window would draw a fall that is not there */
	if (n > 1 && w[n - 1].records < window)
		n--;
	snprintf(n0, sizeof(n0), "%u-byte lines", line);
	snprintf(n1, sizeof(n1), "4 KiB pages");
	if (x && yl && yp) {
		for (size_t i = 0; i < n; i++) {
			x[i] = (double)w[i].start + (double)w[i].records / 2;
			yl[i] = (double)w[i].lines;
			yp[i] = (double)w[i].pages;
			ymax = yl[i] > ymax ? yl[i] : ymax;
		}
		ymax *= 1.05;
		series(cr, x, yl, n, total ? (double)total : 1, ymax, rgb[0],
		       false);
		series(cr, x, yp, n, total ? (double)total : 1, ymax, rgb[1],
		       false);
	}
	si(wb, sizeof(wb), (double)window);
	snprintf(title, sizeof(title),
		 "distinct lines and pages per window of %s records", wb);
	value_axis(cr, ymax, false, title);
	legend(cr, names, rgb, 2, true);
	free(x);
	free(yl);
	free(yp);
}

static void skip(struct pass *p, const uint8_t *r, size_t n)
{
	(void)p;
	(void)r;
	(void)n;
}

/* ---- mrc: miss ratio against cache size, one curve per trace ----------- */

#define MRC_SERIES 8

struct curve {
	struct pass p;
	struct bach_mrc *m;
};

static void curve_add(struct pass *p, const uint8_t *r, size_t n)
{
	bach_mrc_add(((struct curve *)p)->m, r, n);
}

static const double series_rgb[MRC_SERIES][3] = {
	{ 0.12, 0.47, 0.71 }, { 0.84, 0.15, 0.16 }, { 0.17, 0.63, 0.17 },
	{ 1.00, 0.50, 0.05 }, { 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 },
	{ 0.89, 0.47, 0.76 }, { 0.50, 0.50, 0.50 },
};

static void size_label(char *b, size_t len, uint64_t v)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB" };
	int k = 0;

	while (k < 3 && v >= 1024) {
		v /= 1024;
		k++;
	}
	snprintf(b, len, "%llu %s", (unsigned long long)v, u[k]);
}

static int mrc_plot(cairo_t *cr, int ntraces, char **traces,
		    const struct plot_opts *o)
{
	uint64_t sizes[BACH_MRC_MAX_SIZES];
	struct bach_mrc_point pts[BACH_MRC_MAX_SIZES];
	struct bach_mrc_config cfg = { .line = o->line,
				       .kinds = BACH_MRC_KIND_ALL,
				       .sample = o->sample };
	const char *names[MRC_SERIES];
	double x[BACH_MRC_MAX_SIZES], y[BACH_MRC_MAX_SIZES];
	char why[200], b[32];
	int n;

	n = bach_mrc_parse_sizes(NULL, "1k", "32M", sizes, why, sizeof(why));
	cfg.sizes = sizes;
	cfg.nsizes = (size_t)n;
	value_axis(cr, 1, false, "miss ratio (fully associative LRU)");
	for (int t = 0; t < ntraces; t++) {
		struct curve c = { .p.add = curve_add };
		int status, err = bach_mrc_new(&c.m, &cfg, why, sizeof(why));

		if (err)
			return err == -ENOMEM
				       ? (errmsg("out of memory"), EXIT_USAGE)
				       : usage_error("%s", why);
		status = read_all(&c.p, 1, &traces[t], NULL);
		if (!status && bach_mrc_error(c.m)) {
			errmsg("%s: out of memory", traces[t]);
			status = EXIT_USAGE;
		}
		if (status) {
			bach_mrc_free(c.m);
			return status;
		}
		bach_mrc_points(c.m, pts);
		bach_mrc_free(c.m);
		for (int i = 0; i < n; i++) {
			x[i] = (double)i / (n - 1);
			y[i] = pts[i].miss_ratio;
		}
		series(cr, x, y, (size_t)n, 1, 1, series_rgb[t], true);
		names[t] = traces[t];
	}
	font(cr, 11, false);
	cairo_set_source_rgb(cr, 0, 0, 0);
	for (int i = 0; i < n; i++) {
		double px = LEFT + (double)i / (n - 1) * PW;

		cairo_move_to(cr, px + 0.5, TOP + PH);
		cairo_line_to(cr, px + 0.5, TOP + PH + 5);
		cairo_stroke(cr);
		if (i % 2 == 0) {
			size_label(b, sizeof(b), sizes[i]);
			text(cr, px, TOP + PH + 8, 0.5, 0, b);
		}
	}
	font(cr, 13, false);
	snprintf(why, sizeof(why),
		 "cache size (bytes, log scale), %u-byte lines%s", o->line,
		 o->sample < 1 ? ", sampled (SHARDS)" : "");
	text(cr, LEFT + PW / 2.0, H - 22, 0.5, 0.5, why);
	legend(cr, names, series_rgb, (size_t)ntraces, true);
	return EXIT_OK;
}

/* ---- output ------------------------------------------------------------ */

struct sink {
	int (*write)(void *closure, const uint8_t *data, size_t len);
	void *closure;
	int err;
};

static cairo_status_t sink_write(void *c, const unsigned char *data,
				 unsigned int len)
{
	struct sink *s = c;

	if (!s->err)
		s->err = s->write(s->closure, data, len);
	return s->err ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

static int draw(cairo_t *cr, enum plot_kind kind, int ntraces, char **traces,
		const struct plot_opts *o)
{
	static struct rules rules;
	int status = EXIT_OK;

	switch (kind) {
	case PLOT_MAP: {
		struct map *m = calloc(1, sizeof(*m));

		if (!m || !(m->chunk = calloc(NCHUNKS, sizeof(*m->chunk))) ||
		    !(m->cell = calloc((size_t)MAP_CLS * PH * NCOLS,
				       sizeof(*m->cell)))) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		}
		if (!status) {
			m->p.add = map_count;
			status = read_all(&m->p, ntraces, traces, NULL);
		}
		if (!status) {
			map_ranges(m, o);
			m->p.add = map_fill;
			status = read_all(&m->p, ntraces, traces, &rules);
		}
		if (!status) {
			map_draw(cr, m);
			time_axis(cr, m->total);
			draw_rules(cr, &rules, m->total);
		}
		if (m) {
			free(m->chunk);
			free(m->cell);
		}
		free(m);
		break;
	}
	case PLOT_MIX: {
		struct cols *c = calloc(1, sizeof(*c));

		if (!c) {
			errmsg("out of memory");
			return EXIT_USAGE;
		}
		c->p.add = cols_add;
		c->per = 1;
		status = read_all(&c->p, ntraces, traces, &rules);
		if (!status) {
			mix_draw(cr, c, c->p.pos);
			time_axis(cr, c->p.pos);
			draw_rules(cr, &rules, c->p.pos);
		}
		free(c);
		break;
	}
	case PLOT_WSS: {
		struct wss w = { .p.add = wss_add };
		const struct bach_wss_window *win;
		uint64_t window = o->window, total = 0;
		char why[200];
		size_t n;

		if (!window) { /* about 400 windows: the records first */
			struct pass count = { .add = skip };

			status = read_all(&count, ntraces, traces, NULL);
			total = count.pos;
			window = total / 400 ? total / 400 : 1;
		}
		if (status)
			break;
		if (bach_wss_new(&w.w, window, o->line, BACH_MRC_KIND_ALL, why,
				 sizeof(why))) {
			status = usage_error("%s", why);
			break;
		}
		status = read_all(&w.p, ntraces, traces, &rules);
		if (!status && bach_wss_error(w.w)) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		}
		if (!status) {
			n = bach_wss_finish(w.w, &win);
			wss_draw(cr, win, n, w.p.pos, window, o->line);
			time_axis(cr, w.p.pos);
			draw_rules(cr, &rules, w.p.pos);
		}
		bach_wss_free(w.w);
		break;
	}
	case PLOT_MRC:
		status = mrc_plot(cr, ntraces, traces, o);
		break;
	default:
		break;
	}
	return status;
}

int plot_draw(enum plot_kind kind, int ntraces, char **traces,
	      const struct plot_opts *o, enum plot_format format,
	      int (*write)(void *closure, const uint8_t *data, size_t len),
	      void *closure)
{
	struct sink sink = { write, closure, 0 };
	cairo_surface_t *s;
	cairo_t *cr;
	char title[256];
	int status;

	if (kind == PLOT_MRC && ntraces > MRC_SERIES)
		return usage_error("plot mrc: at most %d traces", MRC_SERIES);
	s = format == PLOT_SVG
		    ? cairo_svg_surface_create_for_stream(sink_write, &sink, W,
							  H)
		    : cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
	cr = cairo_create(s);
	if (o->title)
		snprintf(title, sizeof(title), "%s", o->title);
	else
		snprintf(title, sizeof(title), "%s%s%s",
			 kind == PLOT_MAP   ? "address map: "
			 : kind == PLOT_MIX ? "bus cycle mix: "
			 : kind == PLOT_MRC ? "miss-ratio curves: "
					    : "working set: ",
			 ntraces ? traces[0] : "", ntraces > 1 ? " ..." : "");
	frame_title(cr, title);
	status = draw(cr, kind, ntraces, traces, o);
	if (!status)
		plot_box(cr);
	cairo_destroy(cr);
	if (!status && format == PLOT_PNG)
		cairo_surface_write_to_png_stream(s, sink_write, &sink);
	cairo_surface_finish(s);
	if (!status && cairo_surface_status(s) != CAIRO_STATUS_SUCCESS &&
	    !sink.err) {
		errmsg("cairo: %s",
		       cairo_status_to_string(cairo_surface_status(s)));
		status = EXIT_USAGE;
	}
	cairo_surface_destroy(s);
	if (!status && sink.err) {
		errmsg("writing the picture: %s", strerror(-sink.err));
		status = EXIT_USAGE;
	}
	return status;
}

/* ---- the command ------------------------------------------------------- */

static int write_fd(void *closure, const uint8_t *data, size_t len)
{
	int fd = *(int *)closure;

	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* LO-HI or LO+LEN in hex (0x optional): one address range of the map */
static int parse_addr_ranges(const char *s, struct plot_opts *o)
{
	unsigned long long lo, b;
	char sep, *end;

	if (o->nranges == PLOT_MAX_RANGES)
		return usage_error("--range: at most %d ranges",
				   PLOT_MAX_RANGES);
	errno = 0;
	lo = strtoull(s, &end, 16);
	sep = *end;
	if (end == s || (sep != '-' && sep != '+') || errno)
		return usage_error(
			"--range: '%s' is not LO-HI or LO+LEN in hex", s);
	s = end + 1;
	b = strtoull(s, &end, 16);
	if (end == s || *end || errno || *s == '-' || (sep == '-' && b < lo) ||
	    (sep == '+' && !b) || (sep == '-' ? b : lo + b - 1) > 0xffffffffull)
		return usage_error("--range: '%s' is not a range of 32-bit "
				   "addresses",
				   s);
	o->lo[o->nranges] = lo;
	o->hi[o->nranges] = sep == '-' ? b : lo + b - 1;
	o->nranges++;
	return EXIT_OK;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "range", required_argument, NULL, 'r' },
		{ "line", required_argument, NULL, 'l' },
		{ "sample", required_argument, NULL, 's' },
		{ "window", required_argument, NULL, 'w' },
		{ "title", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct plot_opts o = { .line = 32, .sample = 1 };
	const char *out = NULL;
	struct bach_outfile f;
	enum plot_format fmt;
	enum plot_kind kind;
	char why[200], *end;
	uint64_t v;
	int c, status, err;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'r':
			status = parse_addr_ranges(optarg, &o);
			if (status)
				return status;
			break;
		case 'l':
			if (bach_parse_bytes(optarg, &v) ||
			    v > BACH_MRC_MAX_LINE ||
			    bach_mrc_check_line((uint32_t)v, why, sizeof(why)))
				return usage_error(
					"--line: '%s' is not a power "
					"of two from 8 to 65536",
					optarg);
			o.line = (uint32_t)v;
			break;
		case 's':
			o.sample = strtod(optarg, &end);
			if (end == optarg || *end || !(o.sample > 0) ||
			    o.sample > 1)
				return usage_error(
					"--sample: '%s' is not a rate "
					"in (0, 1]",
					optarg);
			break;
		case 'w':
			if (!parse_u64(optarg, &o.window) || !o.window)
				return usage_error("--window: '%s' is not a "
						   "number of records",
						   optarg);
			break;
		case 't':
			o.title = optarg;
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (optind >= argc)
		return usage_error("no KIND given (map, mix, mrc or wss)");
	for (kind = 0; kind < PLOT_NKINDS; kind++)
		if (!strcmp(argv[optind], plot_kind_names[kind]))
			break;
	if (kind == PLOT_NKINDS)
		return usage_error("'%s' is not a kind: map, mix, mrc or wss",
				   argv[optind]);
	optind++;
	if (!out)
		return usage_error("no -o FILE.svg or FILE.png given");
	if (ends_with(out, ".svg"))
		fmt = PLOT_SVG;
	else if (ends_with(out, ".png"))
		fmt = PLOT_PNG;
	else
		return usage_error("-o %s: the name must end in .svg or .png",
				   out);
	if (optind >= argc)
		return usage_error("no TRACE given");
	if (stdin_once(argv + optind, argc - optind))
		return EXIT_USAGE;
	if (o.nranges && kind != PLOT_MAP)
		return usage_error("--range is for plot map");
	for (int i = optind; i < argc && kind == PLOT_MAP; i++) {
		struct stat st;
		char esc[512];

		if (!strcmp(argv[i], "-"))
			return usage_error("plot map reads its traces twice: "
					   "give a file, not -");
		/* a named pipe would wait for a second writer for ever */
		if (stat(argv[i], &st) == 0 && !S_ISREG(st.st_mode) &&
		    !S_ISDIR(st.st_mode))
			return usage_error(
				"plot map reads its traces twice: "
				"give a file, not %s (%s)",
				bach_escape_ctl(esc, sizeof(esc), argv[i]),
				bach_file_type(st.st_mode));
	}
	status = check_output(out, (const char *const *)argv + optind,
			      (size_t)(argc - optind));
	if (status)
		return status;
	catch_signals();
	err = bach_outfile_open(&f, out);
	if (err) {
		errmsg("%s: %s", out, strerror(-err));
		return EXIT_USAGE;
	}
	status = plot_draw(kind, argc - optind, argv + optind, &o, fmt,
			   write_fd, &f.fd);
	if (status) {
		bach_outfile_abort(&f);
		return status;
	}
	err = bach_outfile_commit(&f);
	if (err) {
		errmsg("%s: %s", out, strerror(-err));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

const struct bach_cmd cmd_plot = {
	.name = "plot",
	.run = run,
	.summary = "pictures: address map, cycle mix, miss ratios, working set",
	.help = "usage: bach plot map|mix|mrc|wss [OPTIONS] TRACE... -o "
		"FILE.svg|FILE.png\n"
		"\n"
		"  map   address against trace position, a density map "
		"coloured by\n"
		"        the commonest kind of reference; the ranges in use, "
		"joined\n"
		"        when less than 1 MiB apart (at most 8), and I/O ports "
		"apart\n"
		"  mix   the share of each kind of bus cycle along the trace\n"
		"  mrc   miss ratio of fully associative LRU from 1 KiB to 32 "
		"MiB,\n"
		"        one curve per TRACE (at most 8)\n"
		"  wss   distinct lines and 4 KiB pages per window of records\n"
		"\n"
		"Gaps, marks and device events of a capture's manifest (for a "
		"file,\n"
		"its gap markers) are vertical rules on map, mix and wss. "
		"Several\n"
		"TRACEs are read as one trace, except by mrc.\n"
		"\n"
		"  -o, --output FILE  the picture: SVG or PNG, from the name\n"
		"      --range LO-HI  map: addresses to show, hex (LO+LEN "
		"too);\n"
		"                     repeat for up to 8 ranges\n"
		"      --line BYTES   mrc, wss: line size (default 32)\n"
		"      --sample R     mrc: SHARDS rate in (0, 1] (default 1, "
		"exact)\n"
		"      --window N     wss: records per window (default: 1/400 "
		"of the\n"
		"                     trace)\n"
		"      --title TEXT   the title instead of the kind and trace\n"
		"\n"
		"example: bach plot map capture/20261121T223000Z -o map.png\n",
};
