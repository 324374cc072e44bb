// SPDX-License-Identifier: MIT
/*
 * The drawing primitives every kind of bach plot's pictures uses
 * (plot_kinds.h): text in one font, counts in few characters, the time
 * and value axes with their ticks, the vertical rules of gaps, marks and
 * device events, the legend, and a line series, all placed in the plot
 * area that the picture's geometry gives. Cairo draws, pango lays the
 * text out (shaping, fallback fonts, extents); nothing here reads a trace.
 */
#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "lib/io/manifest.h"
#include "plot_kinds.h"

struct plot_geom G;

/* every text drawn, for SVG's <text> and --debug-layout */
struct tbox {
	double x0, y0, x1, y1; /* its ink extents on the canvas */
	double tx, ty;	       /* SVG: a vertical text's rotation centre */
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
static double note_h;  /* the row under the x axis' title for the note */
static double axis_h;  /* a line of the axes' titles */
static double tick_h;  /* and of the tick labels */
const char *text_role = "text";
static double cur_size;
static bool cur_bold;

/*
 * One pango layout for every text of a picture, made for its cairo
 * context (so for its surface's font options and scale): what is
 * measured is what is drawn. Metrics are not hinted, so that a text has
 * the same extents in SVG, PDF and PNG, at any --dpi.
 */
static PangoLayout *lay;
static PangoFontDescription *desc;
static char *family_used; /* the family pango found for G.font */

static void layout_for(cairo_t *cr)
{
	cairo_font_options_t *fo;
	PangoFont *f;

	if (lay)
		return;
	lay = pango_cairo_create_layout(cr);
	fo = cairo_font_options_create();
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	pango_cairo_context_set_font_options(pango_layout_get_context(lay), fo);
	cairo_font_options_destroy(fo);
	pango_layout_context_changed(lay);
	desc = pango_font_description_new();
	pango_font_description_set_family(desc,
					  G.font ? G.font : "DejaVu Sans");
	pango_font_description_set_absolute_size(desc, 11 * PANGO_SCALE);
	f = pango_context_load_font(pango_layout_get_context(lay), desc);
	if (f) {
		PangoFontDescription *d = pango_font_describe(f);

		family_used = g_strdup(pango_font_description_get_family(d));
		pango_font_description_free(d);
		g_object_unref(f);
	}
}

/* whether family f is one of the comma-separated names of list */
static bool family_in(const char *f, const char *list)
{
	size_t n = strlen(f);

	for (const char *p = list;;) {
		const char *e = strchr(p, ','), *a = p;
		const char *b = e ? e : p + strlen(p);

		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if ((size_t)(b - a) == n && !strncasecmp(a, f, n))
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

/* the family the texts are drawn in: --font, or what pango found in its
 * place, which is said (once) */
const char *font_family(void)
{
	static const char *const generic[] = { "sans-serif", "sans",
					       "serif",	     "monospace",
					       "mono",	     "cursive",
					       "fantasy",    "system-ui" };
	static bool said;
	const char *want = G.font ? G.font : "DejaVu Sans";
	bool gen = false;

	if (!family_used)
		return want;
	for (size_t i = 0; i < sizeof(generic) / sizeof(*generic); i++)
		gen |= family_in(generic[i], want);
	if (!gen && !said && !family_in(family_used, want)) {
		errmsg("font '%s' is not installed: drawn in %s", want,
		       family_used);
		said = true;
	}
	return family_used;
}

void font_release(void)
{
	if (lay)
		g_object_unref(lay);
	if (desc)
		pango_font_description_free(desc);
	g_free(family_used);
	lay = NULL;
	desc = NULL;
	family_used = NULL;
}

static void set_size(double size)
{
	cur_size = size;
	pango_font_description_set_absolute_size(desc, size * PANGO_SCALE);
	pango_layout_set_font_description(lay, desc);
}

void font(cairo_t *cr, double size, bool bold)
{
	layout_for(cr);
	cur_bold = bold;
	pango_font_description_set_weight(desc, bold ? PANGO_WEIGHT_BOLD
						     : PANGO_WEIGHT_NORMAL);
	set_size(S(size));
}

/* the ink and logical boxes of s in the font set, in points, from the
 * layout's top left */
struct ext {
	double ix, iy, iw, ih; /* ink */
	double lx, ly, lw, lh; /* logical: the advance and the line */
	double base;	       /* the baseline, down from the top */
};

static void measure(const char *s, struct ext *e)
{
	PangoRectangle ink, log;

	pango_layout_set_text(lay, s, -1);
	pango_layout_get_extents(lay, &ink, &log);
	*e = (struct ext){ (double)ink.x / PANGO_SCALE,
			   (double)ink.y / PANGO_SCALE,
			   (double)ink.width / PANGO_SCALE,
			   (double)ink.height / PANGO_SCALE,
			   (double)log.x / PANGO_SCALE,
			   (double)log.y / PANGO_SCALE,
			   (double)log.width / PANGO_SCALE,
			   (double)log.height / PANGO_SCALE,
			   (double)pango_layout_get_baseline(lay) /
				   PANGO_SCALE };
}

/* the advance of s in the font set: its width as laid out */
double text_width(cairo_t *cr, const char *s)
{
	struct ext e;

	(void)cr;
	measure(s, &e);
	return e.lw;
}

/* the height of a line of text in the font set */
double line_height(cairo_t *cr)
{
	struct ext e;

	(void)cr;
	measure("0", &e);
	return e.lh;
}

/* the font made smaller, if it must, for s to be at most maxw wide */
void fit_text(cairo_t *cr, const char *s, double maxw)
{
	double w = text_width(cr, s);

	if (w > maxw && maxw > 0)
		set_size(cur_size * maxw / w);
}

/*
 * s to be at most maxw wide, in out: the font made smaller, but not below
 * the event labels' size (S(10), next to the tick labels' S(11): a picture
 * keeps one size of text, give or take), and then s cut short, at a
 * character, with an ellipsis.
 */
void fit_label(cairo_t *cr, char *out, size_t len, const char *s, double maxw)
{
	double least = cur_size < S(10) ? cur_size : S(10);
	size_t n;

	snprintf(out, len, "%s", s);
	fit_text(cr, out, maxw);
	if (cur_size < least)
		set_size(least);
	n = strlen(out);
	while (n && text_width(cr, out) > maxw) {
		do /* back to the start of a UTF-8 character */
			n--;
		while (n && ((unsigned char)out[n] & 0xc0) == 0x80);
		if (n + 4 <= len)
			memcpy(out + n, "\xe2\x80\xa6", 4); /* U+2026, NUL */
	}
}

void layout_reset(void)
{
	for (size_t i = 0; i < ntb; i++)
		free(tb[i].s);
	ntb = 0;
	lbox[2] = 0;
}

static void record(cairo_t *cr, const struct tbox *box, const char *s)
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
	*t = *box;
	t->s = strdup(s);
	if (!t->s)
		return;
	ntb++;
	t->size = cur_size;
	t->bold = cur_bold;
	t->role = text_role;
	cairo_pattern_get_rgba(cairo_get_source(cr), &t->rgb[0], &t->rgb[1],
			       &t->rgb[2], &a);
}

/*
 * Where s goes for text(): the layout's top left (*ox, *oy) and its ink
 * box. Placed by its logical box (the advance across, the line down), so
 * that texts on one row share a baseline and SVG's text-anchor means the
 * same; the ink box is what the collision tests compare.
 */
static void place(const char *s, double x, double y, double ax, double ay,
		  struct ext *e, double *ox, double *oy)
{
	measure(s, e);
	*ox = x - e->lw * ax - e->lx;
	*oy = y - e->lh * ay - e->ly;
}

/* text at x, y; ax, ay: 0 left/top, 0.5 centre, 1 right/bottom */
void text(cairo_t *cr, double x, double y, double ax, double ay, const char *s)
{
	struct ext e;
	double ox, oy;

	place(s, x, y, ax, ay, &e, &ox, &oy);
	record(cr,
	       &(struct tbox){ .x0 = ox + e.ix,
			       .y0 = oy + e.iy,
			       .x1 = ox + e.ix + e.iw,
			       .y1 = oy + e.iy + e.ih,
			       .bx = ox + e.lx +
				     e.lw * (ax < 0.25	 ? 0
					     : ax < 0.75 ? 0.5
							 : 1),
			       .by = oy + e.base,
			       .anchor = ax < 0.25   ? 0
					 : ax < 0.75 ? 1
						     : 2 },
	       s);
	if (G.svg)
		return;
	cairo_move_to(cr, ox, oy);
	pango_cairo_show_layout(cr, lay);
}

/* would text at x, y (as text()) overlap one drawn, or leave the canvas? */
bool text_collides(cairo_t *cr, double x, double y, double ax, double ay,
		   const char *s, double pad)
{
	struct ext e;
	double ox, oy, x0, y0, x1, y1;

	(void)cr;
	place(s, x, y, ax, ay, &e, &ox, &oy);
	x0 = ox + e.ix - pad;
	y0 = oy + e.iy - pad;
	x1 = ox + e.ix + e.iw + pad;
	y1 = oy + e.iy + e.ih + pad;
	if (x0 < 0 || y0 < 0 || x1 > W || y1 > H)
		return true;
	for (size_t i = 0; i < ntb; i++)
		if (x0 < tb[i].x1 && tb[i].x0 < x1 && y0 < tb[i].y1 &&
		    tb[i].y0 < y1)
			return true;
	return false;
}

/* text turned a quarter anticlockwise, centred on x, y */
void vtext(cairo_t *cr, double x, double y, const char *s)
{
	struct ext e;
	double ox, oy, u0, u1, v0, v1;

	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_rotate(cr, -M_PI / 2);
	/* measured as drawn: turned (PNG's glyphs are rasterised so) */
	pango_cairo_update_layout(cr, lay);
	place(s, 0, 0, 0.5, 0.5, &e, &ox, &oy);
	/* (u, v) of the turned text is (x + v, y - u) on the canvas */
	u0 = ox + e.ix;
	u1 = u0 + e.iw;
	v0 = oy + e.iy;
	v1 = v0 + e.ih;
	record(cr,
	       &(struct tbox){ .x0 = x + v0,
			       .y0 = y - u1,
			       .x1 = x + v1,
			       .y1 = y - u0,
			       .tx = x,
			       .ty = y,
			       .bx = ox + e.lx + e.lw / 2,
			       .by = oy + e.base,
			       .anchor = 1,
			       .vert = true },
	       s);
	if (!G.svg) {
		cairo_move_to(cr, ox, oy);
		pango_cairo_show_layout(cr, lay);
	}
	cairo_restore(cr);
	pango_cairo_update_layout(cr, lay);
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

	const char *want = G.font ? G.font : "DejaVu Sans";
	const char *used = font_family();

	/* the family measured first, then the one asked for, if another */
	dout_printf(d, "<g font-family=\"");
	xml_text(d, used);
	if (strcmp(used, want)) {
		dout_printf(d, ", ");
		xml_text(d, want);
	}
	dout_printf(d, ", sans-serif\">\n");
	for (size_t i = 0; i < ntb; i++) {
		const struct tbox *t = &tb[i];

		dout_printf(d, "<text class=\"%s\" ", t->role);
		if (t->vert)
			dout_printf(
				d,
				"transform=\"translate(%.2f %.2f) rotate(-90)\" x=\"%.2f\" y=\"%.2f\"",
				t->tx, t->ty, t->bx, t->by);
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
		"{\"canvas\":{\"x0\":0,\"y0\":0,\"x1\":%d,\"y1\":%d},\"font_size\":%.2f,\"plot\":{\"x0\":%d,\"y0\":%d,\"x1\":%d,\"y1\":%d},\"legend\":",
		W, H, S(11), LEFT, TOP, LEFT + PW, TOP + PH);
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
			"%s{\"role\":\"%s\",\"x0\":%.2f,\"y0\":%.2f,\"x1\":%.2f,\"y1\":%.2f,\"size\":%.2f,\"text\":",
			i ? "," : "", tb[i].role, tb[i].x0, tb[i].y0, tb[i].x1,
			tb[i].y1, tb[i].size);
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
double nice_step(double span, int n)
{
	double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;

	return p * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
}

/* the 1-2-5 step of an x axis over span: up to 8 ticks, fewer where
 * their labels (widest as wide as widest, in the font set) would crowd:
 * an em at least between two, whatever the rounding to 1, 2 or 5 */
double tick_step(cairo_t *cr, double span, const char *widest)
{
	int n = (int)(PW / (2.5 * text_width(cr, widest) + S(12)));

	return nice_step(span, n < 2 ? 2 : n > 8 ? 8 : n);
}

/* the title of the x axis (below it) or of the y axis (left of it),
 * centred on the plot area's side but kept inside the canvas (the y
 * axis' beside the plot area and the x axis' tick labels, under the
 * rules' labels and over the x axis' title), brief (if not NULL) when s
 * does not fit, then smaller or cut short if it must be */
void axis_title(cairo_t *cr, bool y, const char *s, const char *brief)
{
	double lo = y ? TOP : S(4);
	double hi = y ? TOP + PH + S(8) + tick_h : W - S(4);
	double c = y ? TOP + PH / 2.0 : LEFT + PW / 2.0, w;
	char lab[256];

	font(cr, 13, false);
	text_role = "axis";
	if (brief && text_width(cr, s) > hi - lo)
		s = brief;
	fit_label(cr, lab, sizeof(lab), s, hi - lo);
	w = text_width(cr, lab);
	c = c + w / 2 > hi ? hi - w / 2 : c;
	c = c - w / 2 < lo ? lo + w / 2 : c;
	if (y)
		vtext(cr, S(4) + axis_h / 2, c, lab);
	else
		text(cr, c, H - S(4) - note_h, 0.5, 1, lab);
}

/* x axis of trace positions [0, total) with its title */
void time_axis(cairo_t *cr, uint64_t total)
{
	double span = total ? (double)total : 1, step;
	char b[32];

	if (time_axis_on()) {
		time_ticks(cr);
		return;
	}
	font(cr, 11, false);
	si(b, sizeof(b), span * 0.999);
	step = tick_step(cr, span, b);
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
	axis_title(cr, false, "trace position (records from the start)",
		   "trace position (records)");
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
		const char *title, const char *brief)
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
	axis_title(cr, true, title, brief);
}

/* how a rule of kind k is drawn */
static void rule_style(cairo_t *cr, int k)
{
	int c = k == BACH_EV_GAP ? 6 : k == BACH_EV_MARK ? 0 : 7;

	cairo_set_source_rgb(cr, okabe_ito[c][0], okabe_ito[c][1],
			     okabe_ito[c][2]);
	set_dash(cr, k == BACH_EV_GAP ? 0 : k == BACH_EV_MARK ? 1 : 3);
}

#define LABEL_ROWS 3 /* at most */

static double label_row = 12; /* a row of the rules' labels: its height */
static int label_rows = LABEL_ROWS;
static int legend_rows;	  /* legend above the plot area: its rows (0: right) */
static double legend_top; /* and its top */

/* the band above the plot area that holds the rules' labels: 3 rows,
 * fewer on a canvas too low to give them */
static double label_band(cairo_t *cr)
{
	double lh;

	font(cr, 10, false);
	lh = line_height(cr);
	label_row = lh > S(12) ? lh : S(12);
	label_rows = H < S(200) ? 1 : H < S(330) ? 2 : LABEL_ROWS;
	/* under the rows, room for half the top tick label of the y axis */
	return label_rows * label_row + label_row / 2 + S(6);
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
 * near its rule, inside the canvas, with a leader line down to the rule
 * (a label longer than half the canvas cut short); labels that find no
 * room are left out, and a note in the bottom row says how many.
 */
void draw_rules(cairo_t *cr, const struct rules *rs, uint64_t total)
{
	const struct rule *by[MAX_RULES];
	double end[LABEL_ROWS], row_h = label_row;
	size_t unlabelled = 0;
	char b[120], lab[sizeof(by[0]->label) + 4];

	for (int r = 0; r < LABEL_ROWS; r++)
		end[r] = -1e9;
	for (size_t i = 0; i < rs->n; i++)
		by[i] = &rs->r[i];
	qsort(by, rs->n, sizeof(*by), rule_cmp);
	text_role = "event";
	cairo_set_line_width(cr, S(1.2));
	for (size_t i = 0; i < rs->n; i++) {
		const struct rule *r = by[i];
		double x = floor(pos_x(r->at, total)) + 0.5;
		double x0, w;
		int row;

		rule_style(cr, r->kind);
		cairo_move_to(cr, x, TOP);
		cairo_line_to(cr, x, TOP + PH);
		cairo_stroke(cr);
		font(cr, 10, false);
		fit_label(cr, lab, sizeof(lab), r->label, W / 2.0);
		w = text_width(cr, lab);
		x0 = x - w / 2;
		x0 = x0 + w > W - S(2) ? W - S(2) - w : x0;
		x0 = x0 < S(2) ? S(2) : x0;
		for (row = 0; row < label_rows; row++)
			if (x0 >= end[row] + S(6))
				break;
		if (row == label_rows || !r->label[0]) {
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
			text(cr, x0, ybot - S(1), 0, 1, lab);
		}
	}
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 1);
	if (rs->dropped || unlabelled) {
		if (rs->dropped)
			snprintf(b, sizeof(b),
				 "%llu events not drawn, %zu not labelled",
				 (unsigned long long)rs->dropped, unlabelled);
		else
			snprintf(b, sizeof(b), "%zu event%s not labelled",
				 unlabelled, unlabelled == 1 ? "" : "s");
		cairo_set_source_rgb(cr, 0, 0, 0);
		text_role = "note";
		font(cr, 10, false);
		fit_label(cr, lab, sizeof(lab), b, W - S(8));
		text(cr, S(4), H - S(2), 0, 1, lab);
	}
}

#define LEGEND_ROW S(16)
#define LEGEND_GAP S(12) /* between the entries of a row above */

/* the widest of the legend's names, at the tick labels' size */
static double names_width(cairo_t *cr, const char *const *names, size_t n)
{
	double wmax = 0;

	font(cr, 11, false);
	for (size_t i = 0; i < n; i++) {
		double w = text_width(cr, names[i]);

		wmax = w > wmax ? w : wmax;
	}
	return wmax;
}

/* an entry of the legend above: its name's width, at most the canvas' */
static double entry_width(cairo_t *cr, const char *name)
{
	double w = text_width(cr, name), most = W - S(8) - S(38);

	return S(26) + (w < most ? w : most);
}

/* the legend above, in rows of entries: their count, and the widest
 * row's width in *wmax */
static int flow_rows(cairo_t *cr, const char *const *names, size_t n,
		     double *wmax)
{
	double x = 0, avail = W - S(20);
	int rows = n ? 1 : 0;

	*wmax = 0;
	font(cr, 11, false);
	for (size_t i = 0; i < n; i++) {
		double w = entry_width(cr, names[i]);

		if (x > 0 && x + LEGEND_GAP + w > avail) {
			rows++;
			x = 0;
		}
		x += (x > 0 ? LEGEND_GAP : 0) + w;
		*wmax = x > *wmax ? x : *wmax;
	}
	return rows;
}

/*
 * The margins of the picture, from the sizes of what they hold: the
 * title's band; the legend of names, to the right of the plot area when
 * it takes at most a quarter of the width, else in rows above it; the
 * band of the rules' labels (events) and a row for their note; the axes'
 * tick labels (the y axis' widest is ylabel) and titles. A canvas that
 * leaves the plot area too small for its text is a usage error.
 */
int plot_layout(cairo_t *cr, const char *const *names, size_t n, bool events,
		const char *ylabel)
{
	double lw = n ? names_width(cr, names, n) + S(38) : 0, tick_w;
	double band, wmax;

	font(cr, 11, false);
	tick_h = line_height(cr);
	tick_w = text_width(cr, ylabel);
	font(cr, 13, false);
	axis_h = line_height(cr);
	font(cr, 10, false);
	note_h = events ? line_height(cr) + S(2) : 0;
	band = events ? label_band(cr) : S(14);
	legend_rows = 0;
	if (n && lw + S(22) > W / 4.0)
		legend_rows = flow_rows(cr, names, n, &wmax);
	legend_top = G.title_h + S(2);
	G.left = (int)ceil(S(4) + axis_h + S(8) + tick_w + S(6));
	G.bottom = (int)ceil(S(8) + tick_h + S(4) + axis_h + S(4) + note_h);
	for (;;) {
		G.top = G.title_h +
			(int)ceil(band + (legend_rows
						  ? legend_rows * LEGEND_ROW +
							    S(8) + S(4)
						  : 0));
		G.right = (int)ceil(lw && !legend_rows ? lw + S(22) : S(30));
		/* a wide, low canvas: the legend to the right after all */
		if (!legend_rows || PH >= S(40))
			break;
		legend_rows = 0;
	}
	if (PW < S(60) || PH < S(40))
		return usage_error(
			"a %d x %d point picture is too small for its text at %g points: the plot area would be %d x %d (a larger --size, or a smaller --font-size)",
			W, H, S(11), PW, PH);
	return 0;
}

/* the legend: to the right of the plot area, or in rows above it
 * (plot_layout()); boxes or line styles, and the names */
void legend(cairo_t *cr, const char *const *names, const struct style *st,
	    size_t n, bool lines)
{
	double x, y, x0, row = LEGEND_ROW, lw, lh, wmax;
	char lab[256];

	if (!n)
		return;
	if (legend_rows) {
		flow_rows(cr, names, n, &wmax);
		lw = wmax + S(12);
		lh = legend_rows * row + S(8);
		x0 = LEFT + PW / 2.0 - lw / 2;
		x0 = x0 + lw > W - S(4) ? W - S(4) - lw : x0;
		x0 = x0 < S(4) ? S(4) : x0;
		x = x0 + S(6);
		y = legend_top + S(6);
	} else {
		lw = names_width(cr, names, n) + S(38);
		lh = row * (double)n + S(8);
		x0 = LEFT + PW + S(10);
		x = x0 + S(6);
		y = TOP + S(6);
	}
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_rectangle(cr, x0, y - S(6), lw, lh);
	cairo_fill_preserve(cr);
	cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
	cairo_set_line_width(cr, 1);
	cairo_stroke(cr);
	lbox[0] = x0;
	lbox[1] = y - S(6);
	lbox[2] = lw;
	lbox[3] = lh;
	font(cr, 11, false);
	text_role = "legend";
	for (size_t i = 0; i < n; i++) {
		const double *c = st[i].rgb;
		double w = legend_rows ? entry_width(cr, names[i]) : 0;

		if (legend_rows && x > x0 + S(6) &&
		    x + w > x0 + S(6) + wmax + 0.01) {
			x = x0 + S(6);
			y += row;
		}
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
		font(cr, 11, false);
		fit_label(cr, lab, sizeof(lab), names[i], W - S(8) - S(38));
		text(cr, x + S(26), y + S(6), 0, 0.5, lab);
		if (legend_rows)
			x += w + LEGEND_GAP;
		else
			y += row;
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
