/* SPDX-License-Identifier: MIT */
/*
 * What the kinds of picture of bach plot share (bach-draw only): the
 * picture's geometry, the drawing primitives of plot_canvas.c, the passes
 * over the traces and their vertical rules of plot_read.c, and each kind's
 * one entry, which plot_draw.c calls:
 *
 *   plot_map.c  address against trace position, a density map
 *   plot_mix.c  the share of each kind of bus cycle along the trace
 *   plot_wss.c  distinct lines and pages per window of records
 *   plot_mrc.c  miss-ratio curves, one per trace
 *
 * plot.h is the pictures' face, for bach plot (plot.c) and bach report.
 */
#ifndef BACH_TOOL_PLOT_KINDS_H
#define BACH_TOOL_PLOT_KINDS_H

#include <cairo.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bach/record.h"
#include "plot.h"

/*
 * The picture's geometry (plot_draw() sets it from --size, --dpi, --font
 * and --font-size; plot_layout() the margins): in points, which are the
 * pixels of a PNG at 72 dpi (the default). Sizes of text and margins scale
 * with the font size (K: the base size over 11 points).
 */
struct plot_geom {
	int w, h;		      /* the canvas */
	int left, right, top, bottom; /* the plot area's margins */
	int title_h;		      /* the title's band (0: --no-title) */
	double k;		      /* font size / 11 */
	const char *font;	      /* family */
	bool svg;		      /* text is written as <text>, not drawn */
};
extern struct plot_geom G;

#define W      G.w
#define H      G.h
#define LEFT   G.left
#define RIGHT  G.right
#define TOP    G.top
#define BOTTOM G.bottom
#define PW     (W - LEFT - RIGHT)
#define PH     (H - TOP - BOTTOM)
#define S(x)   ((x)*G.k) /* a length of the 11-point layout, scaled */

#define NCOLS	  800 /* time columns of map and mix */
#define MAX_RULES 400

/* ---- the record classes of map and mix (per record: inline) ------------ */

enum cls { C_CODE, C_READ, C_WRITE, C_WB, C_IO, C_OTHER, C_INVALID, NCLS };

static inline enum cls cls_of(unsigned type)
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

/* ---- vertical rules: gaps, marks, device events (plot_read.c) ---------- */

struct rule {
	uint64_t at;
	int kind;	/* BACH_EV_GAP, _MARK, _DEVICE_LOST, _BACK */
	uint64_t count; /* a gap's records lost */
	char label[64];
};

struct rules {
	struct rule r[MAX_RULES];
	size_t n;
	uint64_t dropped; /* beyond MAX_RULES */
};

/* ---- reading one trace at a time, so positions add up (plot_read.c) ---- */

struct pass {
	void (*add)(struct pass *p, const uint8_t *recs, size_t n);
	uint64_t pos;	   /* records before this block (kept ones) */
	uint64_t upos;	   /* and read (before --type, --addr, --port) */
	size_t first_rule; /* the trace's first rule */
	bool markers;	   /* gap markers are rules (no manifest) */
	bool nomem;	   /* the filter ran out of memory */
	struct rules *rules;
};

/* --type, --addr, --port of the picture (plot_draw() sets it); NULL: none */
extern struct rec_filter *plot_filter;

/* Every trace in order through p; rules from manifests or markers. */
int read_all(struct pass *p, int ntraces, char **traces, struct rules *rules);

/* ---- the data instead of the picture (plot_data.c) --------------------- */

/* --csv or --json: text to write(closure, ...); err the first failure */
struct dout {
	bool json;
	int (*write)(void *closure, const uint8_t *data, size_t len);
	void *closure;
	int err;
	size_t len; /* bytes waiting in buf: written whole by dout_flush() */
	char buf[65536];
};

void dout_printf(struct dout *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* what waits in d->buf out, once done (a map's cells are a write each
 * 64 KiB, not each field) */
void dout_flush(struct dout *d);
/* s as a JSON string, or as a CSV field (quoted when it must be) */
void dout_string(struct dout *d, const char *s);
/* JSON: ,"events":[...],"events_left_out":N (the rules); CSV: nothing */
void dout_rules(struct dout *d, const struct rules *rs);

/* ---- drawing primitives (plot_canvas.c) -------------------------------- */

/* how a series or a legend entry is drawn: colour, dashes, marker */
struct style {
	const double *rgb;
	int dash;   /* 0 solid, 1 dashed, 2 dotted, 3 dash-dot */
	int marker; /* circle, square, triangle, diamond, cross; -1: none */
};
extern const double okabe_ito[8][3]; /* the palette of every picture */

/* the font at size points of the 11-point layout (scaled by G.k), laid
 * out by pango for cr's surface */
void font(cairo_t *cr, double size, bool bold);
/* what the texts drawn next are, for --debug-layout and SVG */
extern const char *text_role;
/* text at x, y; ax, ay: 0 left/top, 0.5 centre, 1 right/bottom */
void text(cairo_t *cr, double x, double y, double ax, double ay, const char *s);
/* would it overlap a text drawn (pad around it) or leave the canvas? */
bool text_collides(cairo_t *cr, double x, double y, double ax, double ay,
		   const char *s, double pad);
void vtext(cairo_t *cr, double x, double y, const char *s);
/* the font smaller, if it must be, for s to be at most maxw wide */
void fit_text(cairo_t *cr, const char *s, double maxw);
/* s in out, at most maxw wide: the font smaller, down to S(10), then s
 * cut short with an ellipsis */
void fit_label(cairo_t *cr, char *out, size_t len, const char *s, double maxw);
/* the advance of s, and the height of a line, in the font set */
double text_width(cairo_t *cr, const char *s);
double line_height(cairo_t *cr);
/* the family the texts are drawn in (pango's, for --font); the font
 * forgotten, at the end of a picture */
const char *font_family(void);
void font_release(void);
/* an axis' title, below the x axis or left of the y axis, within it */
void axis_title(cairo_t *cr, bool y, const char *s, const char *brief);
/* the texts drawn: forget them; as SVG <text>; as --debug-layout's JSON */
void layout_reset(void);
void svg_texts(struct dout *d);
void layout_json(struct dout *d);
/* bytes that are not UTF-8 as '?' (before any text call), in place */
void utf8_clean(char *s);
/* 1.5k, 20M, 3G: a count in few characters */
void si(char *buf, size_t len, double v);
/* a 1-2-5 step giving about n ticks over span */
double nice_step(double span, int n);
/* that of an x axis over span, as many as labels like widest leave room
 * for (8 at most) */
double tick_step(cairo_t *cr, double span, const char *widest);
/* the margins, for a legend of names, (events) the rules' labels, and
 * ylabel the widest tick label of the y axis; EXIT_USAGE, said, when the
 * canvas leaves too little room for the plot area */
int plot_layout(cairo_t *cr, const char *const *names, size_t n, bool events,
		const char *ylabel);
/* x axis of trace positions [0, total) with its title */
void time_axis(cairo_t *cr, uint64_t total);
/* y of v on a value axis to top (logy: from 1) */
double value_y(double v, double top, bool logy);
/* y axis from 0 (logy: 1) to top with ticks and its title */
void value_axis(cairo_t *cr, double top, bool percent, bool logy,
		const char *title, const char *brief);
/* the rules over a time axis, labelled above the plot area */
void draw_rules(cairo_t *cr, const struct rules *rs, uint64_t total);
/* the legend, right of the plot area */
void legend(cairo_t *cr, const char *const *names, const struct style *st,
	    size_t n, bool lines);
/* a line through n points; x in [0, 1] when logx, else in [0, xmax] */
void series(cairo_t *cr, const double *x, const double *y, size_t n,
	    double xmax, double ymax, const struct style *st, bool logx,
	    bool logy);

/* ---- --x time (plot_time.c) ------------------------------------------ */

/* forget the clocks; whether there are some (the x axis is then time) */
void time_reset(void);
bool time_axis_on(void);
/* the clocks of the traces' kept records (f), from their sidecars */
int time_table(int ntraces, char **traces, struct rec_filter *f);
/* x of trace position pos: by its clock with time, else pos / total */
double pos_x(uint64_t pos, uint64_t total);
/* the x axis of time, its ticks and title */
void time_ticks(cairo_t *cr);

/* ---- the kinds: each reads its traces, then draws ---------------------- */

#define MRC_SERIES 8 /* mrc: curves, so traces, at most */

/* Each draws on cr, or, when d is not NULL, writes its data there. */
int map_plot(cairo_t *cr, struct dout *d, int ntraces, char **traces,
	     const struct plot_opts *o, struct rules *rules);
int mix_plot(cairo_t *cr, struct dout *d, int ntraces, char **traces,
	     struct rules *rules);
int wss_plot(cairo_t *cr, struct dout *d, int ntraces, char **traces,
	     const struct plot_opts *o, struct rules *rules);
int mrc_plot(cairo_t *cr, struct dout *d, int ntraces, char **traces,
	     const struct plot_opts *o);

#endif
