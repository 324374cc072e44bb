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
#include <stdlib.h>
#include <string.h>

#include "lib/io/manifest.h"
#include "plot_kinds.h"

struct plot_geom G;

/* every text drawn, for SVG's <text> and --debug-layout */
struct tbox {
	double x0, y0, x1, y1; /* its extents on the canvas */
	double bx, by;	       /* SVG: the anchor, on the baseline */
	double size, rgb[3];
	int anchor; /* 0 start, 1 middle, 2 end */
	bool bold, vert;
	const char *role;
	char *s;
};
static struct tbox *tb;
static size_t ntb, captb;
static double lbox[4]; /* the legend's box; lbox[2] 0: none */
const char *text_role = "text";
static double cur_size;
static bool cur_bold;

void font(cairo_t *cr, double size, bool bold)
{
	cairo_select_font_face(
		cr, G.font ? G.font : "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
		bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cur_size = S(size);
	cur_bold = bold;
	cairo_set_font_size(cr, cur_size);
}

/* the font made smaller, if it must, for s to be at most maxw wide */
void fit_text(cairo_t *cr, const char *s, double maxw)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	if (e.x_advance > maxw && maxw > 0) {
		cur_size *= maxw / e.x_advance;
		cairo_set_font_size(cr, cur_size);
	}
}

void layout_reset(void)
{
	for (size_t i = 0; i < ntb; i++)
		free(tb[i].s);
	ntb = 0;
	lbox[2] = 0;
}

static void record(cairo_t *cr, double x0, double y0, double x1, double y1,
		   double bx, double by, double ax, bool vert, const char *s)
{
	struct tbox *t;
	double a;

	if (ntb == captb) {
		size_t n = captb ? captb * 2 : 256;
		struct tbox *nt = realloc(tb, n * sizeof(*tb));

		if (!nt)
			return;
		tb = nt;
		captb = n;
	}
	t = &tb[ntb];
	t->s = strdup(s);
	if (!t->s)
		return;
	ntb++;
	*t = (struct tbox){
		x0,	  y0,	       x1,
		y1,	  bx,	       by,
		cur_size, { 0, 0, 0 }, ax < 0.25 ? 0 : ax < 0.75 ? 1 : 2,
		cur_bold, vert,	       text_role,
		t->s
	};
	cairo_pattern_get_rgba(cairo_get_source(cr), &t->rgb[0], &t->rgb[1],
			       &t->rgb[2], &a);
}

/* text at x, y; ax, ay: 0 left/top, 0.5 centre, 1 right/bottom */
void text(cairo_t *cr, double x, double y, double ax, double ay, const char *s)
{
	cairo_text_extents_t e;
	double ox, oy;

	cairo_text_extents(cr, s, &e);
	ox = x - e.width * ax - e.x_bearing;
	oy = y - e.height * ay - e.y_bearing;
	record(cr, ox + e.x_bearing, oy + e.y_bearing,
	       ox + e.x_bearing + e.width, oy + e.y_bearing + e.height,
	       ox + e.x_advance * (ax < 0.25   ? 0
				   : ax < 0.75 ? 0.5
					       : 1),
	       oy, ax, false, s);
	if (G.svg)
		return;
	cairo_move_to(cr, ox, oy);
	cairo_show_text(cr, s);
}

/* would text at x, y (as text()) overlap one drawn, or leave the canvas? */
bool text_collides(cairo_t *cr, double x, double y, double ax, double ay,
		   const char *s, double pad)
{
	cairo_text_extents_t e;
	double x0, y0;

	cairo_text_extents(cr, s, &e);
	x0 = x - e.width * ax - pad;
	y0 = y - e.height * ay - pad;
	if (x0 < 0 || y0 < 0 || x0 + e.width + 2 * pad > W ||
	    y0 + e.height + 2 * pad > H)
		return true;
	for (size_t i = 0; i < ntb; i++)
		if (x0 < tb[i].x1 && tb[i].x0 < x0 + e.width + 2 * pad &&
		    y0 < tb[i].y1 && tb[i].y0 < y0 + e.height + 2 * pad)
			return true;
	return false;
}

/* text turned a quarter anticlockwise, centred on x, y */
void vtext(cairo_t *cr, double x, double y, const char *s)
{
	cairo_text_extents_t e;

	cairo_text_extents(cr, s, &e);
	record(cr, x - e.height / 2, y - e.width / 2, x + e.height / 2,
	       y + e.width / 2, x, y - e.height / 2 - e.y_bearing, 0.5, true,
	       s);
	if (G.svg)
		return;
	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_rotate(cr, -M_PI / 2);
	cairo_move_to(cr, -e.width / 2 - e.x_bearing,
		      -e.height / 2 - e.y_bearing);
	cairo_show_text(cr, s);
	cairo_restore(cr);
}

/* the length of the well-formed UTF-8 sequence at s, or 0 */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] < 0x80		      ? 1
		: s[0] >= 0xc2 && s[0] < 0xe0 ? 2
		: s[0] >= 0xe0 && s[0] < 0xf0 ? 3
		: s[0] >= 0xf0 && s[0] < 0xf5 ? 4
					      : 0;

	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
	    (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
	    (n == 4 && s[0] == 0xf0 && s[1] < 0x90) ||
	    (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* bytes of s that are not UTF-8 as '?', in place: cairo's text calls
 * fail on them (and leak), and XML has no room for them */
void utf8_clean(char *s)
{
	while (*s) {
		int n = utf8_len((const unsigned char *)s);

		if (!n)
			*s = '?';
		s += n ? n : 1;
	}
}

/* s as XML character data: escaped, control characters left out, bytes
 * that are not UTF-8 (a file's name may hold any) as U+FFFD */
static void xml_text(struct dout *d, const char *s)
{
	while (*s) {
		int n = utf8_len((const unsigned char *)s);

		if (*s == '&')
			dout_printf(d, "&amp;");
		else if (*s == '<')
			dout_printf(d, "&lt;");
		else if (*s == '>')
			dout_printf(d, "&gt;");
		else if (*s == '"')
			dout_printf(d, "&quot;");
		else if (!n)
			dout_printf(d, "\xef\xbf\xbd");
		else if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			dout_printf(d, "%.*s", n, s);
		s += n ? n : 1;
	}
}

/* SVG: every text drawn as a <text> element in the font family named */
void svg_texts(struct dout *d)
{
	static const char *const anchor[] = { "start", "middle", "end" };

	dout_printf(d, "<g font-family=\"");
	xml_text(d, G.font ? G.font : "DejaVu Sans");
	dout_printf(d, ", sans-serif\">\n");
	for (size_t i = 0; i < ntb; i++) {
		const struct tbox *t = &tb[i];

		dout_printf(d, "<text class=\"%s\" ", t->role);
		if (t->vert)
			dout_printf(
				d,
				"transform=\"translate(%.2f %.2f) rotate(-90)\" x=\"0\" y=\"%.2f\"",
				t->bx, (t->y0 + t->y1) / 2,
				t->by - (t->y0 + t->y1) / 2);
		else
			dout_printf(d, "x=\"%.2f\" y=\"%.2f\"", t->bx, t->by);
		dout_printf(
			d,
			" font-size=\"%.2f\"%s text-anchor=\"%s\" fill=\"rgb(%d,%d,%d)\">",
			t->size, t->bold ? " font-weight=\"bold\"" : "",
			anchor[t->anchor], (int)(t->rgb[0] * 255 + 0.5),
			(int)(t->rgb[1] * 255 + 0.5),
			(int)(t->rgb[2] * 255 + 0.5));
		xml_text(d, t->s);
		dout_printf(d, "</text>\n");
	}
	dout_printf(d, "</g>\n");
}

/* --debug-layout: the canvas, the plot area, the legend, every text */
void layout_json(struct dout *d)
{
	dout_printf(
		d,
		"{\"canvas\":{\"x0\":0,\"y0\":0,\"x1\":%d,\"y1\":%d},\"plot\":{\"x0\":%d,\"y0\":%d,\"x1\":%d,\"y1\":%d},\"legend\":",
		W, H, LEFT, TOP, LEFT + PW, TOP + PH);
	if (lbox[2] > 0)
		dout_printf(
			d, "{\"x0\":%.2f,\"y0\":%.2f,\"x1\":%.2f,\"y1\":%.2f}",
			lbox[0], lbox[1], lbox[0] + lbox[2], lbox[1] + lbox[3]);
	else
		dout_printf(d, "null");
	dout_printf(d, ",\"texts\":[");
	for (size_t i = 0; i < ntb; i++) {
		dout_printf(
			d,
			"%s{\"role\":\"%s\",\"x0\":%.2f,\"y0\":%.2f,\"x1\":%.2f,\"y1\":%.2f,\"text\":",
			i ? "," : "", tb[i].role, tb[i].x0, tb[i].y0, tb[i].x1,
			tb[i].y1);
		dout_string(d, tb[i].s);
		dout_printf(d, "}");
	}
	dout_printf(d, "]}\n");
}

/*
 * The palette of every picture: Okabe and Ito's eight colours, which
 * readers with any common colour-vision deficiency tell apart (M. Okabe
 * and K. Ito, "Color Universal Design (CUD): how to make figures and
 * presentations that are friendly to colorblind people", 2008).
 */
const double okabe_ito[8][3] = {
	{ 0, 0, 0 },				   /* black */
	{ 230 / 255.0, 159 / 255.0, 0 },	   /* orange */
	{ 86 / 255.0, 180 / 255.0, 233 / 255.0 },  /* sky blue */
	{ 0, 158 / 255.0, 115 / 255.0 },	   /* bluish green */
	{ 240 / 255.0, 228 / 255.0, 66 / 255.0 },  /* yellow */
	{ 0, 114 / 255.0, 178 / 255.0 },	   /* blue */
	{ 213 / 255.0, 94 / 255.0, 0 },		   /* vermillion */
	{ 204 / 255.0, 121 / 255.0, 167 / 255.0 }, /* reddish purple */
};

static void set_dash(cairo_t *cr, int dash)
{
	static const double d[][4] = {
		{ 0 }, { 6, 3 }, { 2, 2 }, { 8, 3, 2, 3 }
	};
	static const int n[] = { 0, 2, 2, 4 };
	double s[4];

	for (int i = 0; i < n[dash % 4]; i++)
		s[i] = S(d[dash % 4][i]);
	cairo_set_dash(cr, s, n[dash % 4], 0);
}

/* a marker of kind m (circle, square, triangle, diamond...) at x, y */
static void marker(cairo_t *cr, double x, double y, int m)
{
	double r = S(3.5);

	cairo_set_dash(cr, NULL, 0, 0);
	switch (m % 5) {
	case 0:
		cairo_new_sub_path(cr);
		cairo_arc(cr, x, y, r, 0, 2 * M_PI);
		break;
	case 1:
		cairo_rectangle(cr, x - r, y - r, 2 * r, 2 * r);
		break;
	case 2:
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x + r * 1.1, y + r * 0.8);
		cairo_line_to(cr, x - r * 1.1, y + r * 0.8);
		cairo_close_path(cr);
		break;
	case 3:
		cairo_move_to(cr, x, y - r * 1.3);
		cairo_line_to(cr, x + r, y);
		cairo_line_to(cr, x, y + r * 1.3);
		cairo_line_to(cr, x - r, y);
		cairo_close_path(cr);
		break;
	default:
		cairo_move_to(cr, x - r, y - r);
		cairo_line_to(cr, x + r, y + r);
		cairo_move_to(cr, x + r, y - r);
		cairo_line_to(cr, x - r, y + r);
		cairo_stroke(cr);
		return;
	}
	cairo_fill(cr);
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

/* the title of the x axis (below it) or of the y axis (left of it),
 * smaller if it must be to stay within the plot area's side */
void axis_title(cairo_t *cr, bool y, const char *s)
{
	font(cr, 13, false);
	text_role = "axis";
	fit_text(cr, s, y ? PH : PW);
	if (y)
		vtext(cr, S(20), TOP + PH / 2.0, s);
	else
		text(cr, LEFT + PW / 2.0, H - S(22), 0.5, 0.5, s);
}

/* x axis of trace positions [0, total) with its title */
void time_axis(cairo_t *cr, uint64_t total)
{
	double span = total ? (double)total : 1, step = nice_step(span, 8);
	char b[32];

	if (time_axis_on()) {
		time_ticks(cr);
		return;
	}
	font(cr, 11, false);
	cairo_set_source_rgb(cr, 0, 0, 0);
	text_role = "tick";
	for (double v = 0; v <= span; v += step) {
		double x = LEFT + v / span * PW;

		cairo_move_to(cr, x + 0.5, TOP + PH);
		cairo_line_to(cr, x + 0.5, TOP + PH + S(5));
		cairo_stroke(cr);
		si(b, sizeof(b), v);
		if (!text_collides(cr, x, TOP + PH + S(8), 0.5, 0, b, S(2)))
			text(cr, x, TOP + PH + S(8), 0.5, 0, b);
	}
	axis_title(cr, false, "trace position (records from the start)");
}

/* y of v on a value axis to top (log: from 1, v below 1 at 1) */
double value_y(double v, double top, bool logy)
{
	if (logy)
		return TOP + PH -
		       (v > 1 ? log10(v) : 0) / (top > 1 ? log10(top) : 1) * PH;
	return TOP + PH - v / top * PH;
}

static void hgrid(cairo_t *cr, double y, const char *b)
{
	cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
	cairo_move_to(cr, LEFT, y + 0.5);
	cairo_line_to(cr, LEFT + PW, y + 0.5);
	cairo_stroke(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	if (b && !text_collides(cr, LEFT - S(6), y, 1, 0.5, b, S(1)))
		text(cr, LEFT - S(6), y, 1, 0.5, b);
}

/* y axis from 0 to top (log: from 1, a tick each power of ten) */
void value_axis(cairo_t *cr, double top, bool percent, bool logy,
		const char *title)
{
	double step = nice_step(top, 6);
	char b[32];

	font(cr, 11, false);
	text_role = "tick";
	if (logy) {
		for (double v = 1; v <= top * 1.0001; v *= 10) {
			si(b, sizeof(b), v);
			hgrid(cr, value_y(v, top, true), b);
			for (int k = 2; k < 10 && v * k <= top; k++) {
				double y = value_y(v * k, top, true);

				cairo_move_to(cr, LEFT - S(3), y + 0.5);
				cairo_line_to(cr, LEFT, y + 0.5);
				cairo_stroke(cr);
				/* few decades: 2 and 5 labelled too */
				si(b, sizeof(b), v * k);
				if (top < 1000 && (k == 2 || k == 5) &&
				    !text_collides(cr, LEFT - S(6), y, 1, 0.5,
						   b, S(1)))
					text(cr, LEFT - S(6), y, 1, 0.5, b);
			}
		}
	}
	for (double v = 0; !logy && v <= top * 1.0001; v += step) {
		if (percent)
			snprintf(b, sizeof(b), "%.0f%%", v * 100);
		else if (top <= 1)
			snprintf(b, sizeof(b), "%.2f", v);
		else
			si(b, sizeof(b), v);
		hgrid(cr, value_y(v, top, false), b);
	}
	axis_title(cr, true, title);
}

/* how a rule of kind k is drawn */
static void rule_style(cairo_t *cr, int k)
{
	int c = k == BACH_EV_GAP ? 6 : k == BACH_EV_MARK ? 0 : 7;

	cairo_set_source_rgb(cr, okabe_ito[c][0], okabe_ito[c][1],
			     okabe_ito[c][2]);
	set_dash(cr, k == BACH_EV_GAP ? 0 : k == BACH_EV_MARK ? 1 : 3);
}

#define LABEL_ROWS 3

static double label_row = 12; /* a row of the rules' labels: its height */

/* the band above the plot area that holds the rules' labels */
static double label_band(cairo_t *cr)
{
	cairo_font_extents_t fe;

	font(cr, 10, false);
	cairo_font_extents(cr, &fe);
	label_row =
		fe.ascent + fe.descent > S(12) ? fe.ascent + fe.descent : S(12);
	/* under the rows, room for half the top tick label of the y axis */
	return LABEL_ROWS * label_row + label_row / 2 + S(6);
}

static int rule_cmp(const void *a, const void *b)
{
	const struct rule *x = *(const struct rule *const *)a;
	const struct rule *y = *(const struct rule *const *)b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * The rules over a time axis, each labelled in the band above the plot
 * area: in the lowest of its rows where the label does not touch another,
 * near its rule, inside the canvas, with a leader line down to the rule;
 * labels that find no room are left out, and a note says how many.
 */
void draw_rules(cairo_t *cr, const struct rules *rs, uint64_t total)
{
	const struct rule *by[MAX_RULES];
	double end[LABEL_ROWS], row_h = label_row;
	size_t unlabelled = 0;
	char b[120];

	for (int r = 0; r < LABEL_ROWS; r++)
		end[r] = -1e9;
	for (size_t i = 0; i < rs->n; i++)
		by[i] = &rs->r[i];
	qsort(by, rs->n, sizeof(*by), rule_cmp);
	font(cr, 10, false);
	text_role = "event";
	cairo_set_line_width(cr, S(1.2));
	for (size_t i = 0; i < rs->n; i++) {
		const struct rule *r = by[i];
		double x = floor(pos_x(r->at, total)) + 0.5;
		cairo_text_extents_t e;
		double x0, w;
		int row;

		rule_style(cr, r->kind);
		cairo_move_to(cr, x, TOP);
		cairo_line_to(cr, x, TOP + PH);
		cairo_stroke(cr);
		font(cr, 10, false);
		fit_text(cr, r->label, W - S(4));
		cairo_text_extents(cr, r->label, &e);
		w = e.x_advance;
		x0 = x - w / 2;
		x0 = x0 + w > W - S(2) ? W - S(2) - w : x0;
		x0 = x0 < S(2) ? S(2) : x0;
		for (row = 0; row < LABEL_ROWS; row++)
			if (x0 >= end[row] + S(6))
				break;
		if (row == LABEL_ROWS || !r->label[0]) {
			unlabelled += r->label[0] != 0;
			continue;
		}
		end[row] = x0 + w;
		{
			double ybot = TOP - row_h / 2 - S(2) - row * row_h;

			cairo_set_dash(cr, NULL, 0, 0);
			cairo_set_line_width(cr, S(0.6));
			cairo_move_to(cr, x, TOP);
			cairo_line_to(cr,
				      x < x0	   ? x0
				      : x > x0 + w ? x0 + w
						   : x,
				      ybot);
			cairo_stroke(cr);
			cairo_set_line_width(cr, S(1.2));
			text(cr, x0, ybot - S(1), 0, 1, r->label);
		}
	}
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 1);
	if (rs->dropped || unlabelled) {
		snprintf(b, sizeof(b),
			 "%llu events not drawn, %zu not labelled",
			 (unsigned long long)rs->dropped, unlabelled);
		cairo_set_source_rgb(cr, 0, 0, 0);
		text_role = "note";
		font(cr, 10, false);
		fit_text(cr, b, W - S(8));
		text(cr, S(4), H - S(4), 0, 1, b);
	}
}

static double legend_scale = 1; /* its text's size: at most a third */

/* the width of the legend of names (0: none), at 11 points or less */
static double legend_width(cairo_t *cr, const char *const *names, size_t n)
{
	double wmax = 0, most = W / 3.0 - S(38);
	cairo_text_extents_t e;

	font(cr, 11, false);
	for (size_t i = 0; i < n; i++) {
		cairo_text_extents(cr, names[i], &e);
		wmax = e.x_advance > wmax ? e.x_advance : wmax;
	}
	legend_scale = wmax > most && most > 0 ? most / wmax : 1;
	return n ? wmax * legend_scale + S(38) : 0;
}

/*
 * The margins of the picture: the title's band, the labels of the rules
 * (events) above the plot area, the legend of names to its right.
 */
void plot_layout(cairo_t *cr, const char *const *names, size_t n, bool events)
{
	double lw = legend_width(cr, names, n);

	G.left = (int)S(110);
	G.bottom = (int)S(70);
	G.top = G.title_h + (int)ceil(events ? label_band(cr) : S(14));
	G.right = (int)(lw ? lw + S(22) : S(30));
}

/* the legend, to the right of the plot area: boxes or line styles */
void legend(cairo_t *cr, const char *const *names, const struct style *st,
	    size_t n, bool lines)
{
	double x = LEFT + PW + S(16), y = TOP + S(6), row = S(16);
	double lw = legend_width(cr, names, n);

	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_rectangle(cr, x - S(6), y - S(6), lw, row * (double)n + S(8));
	cairo_fill_preserve(cr);
	cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
	cairo_set_line_width(cr, 1);
	cairo_stroke(cr);
	lbox[0] = x - S(6);
	lbox[1] = y - S(6);
	lbox[2] = lw;
	lbox[3] = row * (double)n + S(8);
	font(cr, 11 * legend_scale, false);
	text_role = "legend";
	for (size_t i = 0; i < n; i++, y += row) {
		const double *c = st[i].rgb;

		cairo_set_source_rgb(cr, c[0], c[1], c[2]);
		if (lines) {
			cairo_set_line_width(cr, S(2));
			set_dash(cr, st[i].dash);
			cairo_move_to(cr, x, y + S(6));
			cairo_line_to(cr, x + S(20), y + S(6));
			cairo_stroke(cr);
			if (st[i].marker >= 0)
				marker(cr, x + S(10), y + S(6), st[i].marker);
			cairo_set_dash(cr, NULL, 0, 0);
			cairo_set_line_width(cr, 1);
		} else {
			cairo_rectangle(cr, x, y, S(20), S(12));
			cairo_fill_preserve(cr);
			cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
			cairo_set_line_width(cr, 0.5);
			cairo_stroke(cr);
			cairo_set_line_width(cr, 1);
		}
		cairo_set_source_rgb(cr, 0, 0, 0);
		text(cr, x + S(26), y + S(6), 0, 0.5, names[i]);
	}
}

/* x in [0, 1] when logx, else in [0, xmax]; y on a log axis when logy */
void series(cairo_t *cr, const double *x, const double *y, size_t n,
	    double xmax, double ymax, const struct style *st, bool logx,
	    bool logy)
{
	size_t every = n > 24 ? n / 12 : 1;

	cairo_set_source_rgb(cr, st->rgb[0], st->rgb[1], st->rgb[2]);
	cairo_set_line_width(cr, S(1.6));
	set_dash(cr, st->dash);
	for (size_t i = 0; i < n; i++) {
		double px = LEFT + (logx ? x[i] : x[i] / xmax) * PW;
		double py = value_y(y[i], ymax, logy);

		if (i)
			cairo_line_to(cr, px, py);
		else
			cairo_move_to(cr, px, py);
	}
	cairo_stroke(cr);
	/* markers, a dozen or so, at different points for each series */
	for (size_t i = (size_t)st->marker % every; st->marker >= 0 && i < n;
	     i += every)
		marker(cr, LEFT + (logx ? x[i] : x[i] / xmax) * PW,
		       value_y(y[i], ymax, logy), st->marker);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 1);
}
