// SPDX-License-Identifier: MIT
/*
 * The drawing primitives every kind of bach plot's pictures uses
 * (plot_kinds.h): text in one font, counts in few characters, the time
 * and value axes with their ticks, the vertical rules of gaps, marks and
 * device events, the legend, and a line series, all placed in the plot
 * area that the picture's geometry gives. Cairo only: nothing here reads
 * a trace.
 */
#include <math.h>
#include <stdio.h>

#include "lib/io/manifest.h"
#include "plot_kinds.h"

void font(cairo_t *cr, double size, bool bold)
{
	cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD
				    : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
}

/* text at x, y; ax, ay: 0 left/top, 0.5 centre, 1 right/bottom */
void text(cairo_t *cr, double x, double y, double ax, double ay, const char *s)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - e.width * ax - e.x_bearing,
		      y - e.height * ay - e.y_bearing);
	cairo_show_text(cr, s);
}

void vtext(cairo_t *cr, double x, double y, const char *s)
{
	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_rotate(cr, -M_PI / 2);
	text(cr, 0, 0, 0.5, 0.5, s);
	cairo_restore(cr);
}

/* 1.5k, 20M, 3G: a count in few characters */
void si(char *buf, size_t len, double v)
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

/* x axis of trace positions [0, total) with its title */
void time_axis(cairo_t *cr, uint64_t total)
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
void value_axis(cairo_t *cr, double top, bool percent, const char *title)
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
void draw_rules(cairo_t *cr, const struct rules *rs, uint64_t total)
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
void legend(cairo_t *cr, const char *const *names, const double (*rgb)[3],
	    size_t n, bool lines)
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

void series(cairo_t *cr, const double *x, const double *y, size_t n,
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
