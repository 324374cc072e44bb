// SPDX-License-Identifier: MIT
/*
 * bach plot's pictures as a whole (plot.h): the cairo surface, SVG or
 * PNG, whose bytes go to the caller's write(), the white page and title,
 * the kind's own drawing (plot_map.c, plot_mix.c, plot_wss.c, plot_mrc.c
 * through plot_kinds.h), and the frame around the plot area. bach plot
 * (plot.c) and bach report call plot_draw().
 */
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "plot.h"
#include "plot_kinds.h"

const char *const plot_kind_names[PLOT_NKINDS] = { "map", "mix", "mrc", "wss" };

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

/* SVG: cairo's bytes held, to add the <text> elements before </svg> */
struct buf {
	uint8_t *p;
	size_t n, cap;
};

static int buf_write(void *closure, const uint8_t *data, size_t len)
{
	struct buf *b = closure;

	if (b->n + len > b->cap) {
		size_t cap = (b->n + len) * 2;
		uint8_t *p = realloc(b->p, cap);

		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
	return 0;
}

static int file_write(void *closure, const uint8_t *data, size_t len)
{
	return fwrite(data, 1, len, closure) == len ? 0 : -EIO;
}

/* the last part of a path (of a directory too: "cap/" is cap) */
static void base_name(char *b, size_t len, const char *path)
{
	size_t n = strlen(path);
	const char *s;

	while (n > 1 && path[n - 1] == '/')
		n--;
	s = path + n;
	while (s > path && s[-1] != '/')
		s--;
	snprintf(b, len, "%.*s", (int)(path + n - s), s);
}

/* the white page and the title (NULL: none) */
static void frame_title(cairo_t *cr, const char *title)
{
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	if (!title)
		return;
	cairo_set_source_rgb(cr, 0, 0, 0);
	font(cr, 16, true);
	fit_text(cr, title, W - S(8)); /* smaller, to fit */
	text_role = "title";
	text(cr, W / 2.0, S(16), 0.5, 0.5, title);
}

static void plot_box(cairo_t *cr)
{
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, LEFT + 0.5, TOP + 0.5, PW, PH);
	cairo_stroke(cr);
}

static int draw(cairo_t *cr, struct dout *d, enum plot_kind kind, int ntraces,
		char **traces, const struct plot_opts *o)
{
	static struct rules rules;

	plot_filter = o->flt;
	switch (kind) {
	case PLOT_MAP:
		return map_plot(cr, d, ntraces, traces, o, &rules);
	case PLOT_MIX:
		return mix_plot(cr, d, ntraces, traces, &rules);
	case PLOT_WSS:
		return wss_plot(cr, d, ntraces, traces, o, &rules);
	case PLOT_MRC:
		return mrc_plot(cr, d, ntraces, traces, o);
	default:
		return EXIT_OK;
	}
}

/* the size of the tick labels without --font-size: 11 points on a
 * canvas of 500 x 300 points or more, less on a smaller one, down to 8 at
 * half that (a 3.5 x 2.5 inch figure) and 7 below, in half points */
static double default_font_size(double w, double h)
{
	double r = w / 500 < h / 300 ? w / 500 : h / 300;
	double pt = r >= 1 ? 11 : 8 + 6 * (r - 0.5);

	pt = pt < 7 ? 7 : pt;
	return floor(pt * 2 + 0.5) / 2;
}

/* the geometry from --size, --dpi, --font, --font-size, --no-title */
static void geometry(const struct plot_opts *o, double *scale)
{
	double dpi = o->dpi > 0 ? o->dpi : 72, w = 1000, h = 600;
	double per = o->unit == 'i'   ? 72
		     : o->unit == 'c' ? 72 / 2.54
				      : 72 / dpi;

	if (o->width > 0) {
		w = o->width * per;
		h = o->height * per;
	}
	memset(&G, 0, sizeof(G));
	G.w = (int)(w + 0.5);
	G.h = (int)(h + 0.5);
	G.k = (o->font_size > 0 ? o->font_size : default_font_size(w, h)) / 11;
	G.font = o->font;
	G.title_h = o->no_title ? (int)S(6) : (int)S(30);
	*scale = dpi / 72;
}

int plot_draw(enum plot_kind kind, int ntraces, char **traces,
	      const struct plot_opts *o, enum plot_format format,
	      int (*write)(void *closure, const uint8_t *data, size_t len),
	      void *closure)
{
	struct sink sink = { write, closure, 0 };
	struct buf svg = { 0 };
	struct sink svg_sink = { buf_write, &svg, 0 };
	cairo_surface_t *s;
	cairo_t *cr;
	char title[320], b[256];
	double scale;
	int status;

	if (kind == PLOT_MRC && ntraces > MRC_SERIES)
		return usage_error("plot mrc: at most %d traces", MRC_SERIES);
	layout_reset();
	time_reset();
	if (format == PLOT_CSV || format == PLOT_JSON) {
		struct dout d = { .json = format == PLOT_JSON,
				  .write = write,
				  .closure = closure };
		/* the data of the default picture, whatever the size: map's
		 * rows are those of 1000 x 600 */
		struct plot_opts dflt = *o;

		dflt.width = 0;
		dflt.font_size = 0;
		dflt.font = NULL;
		dflt.no_title = false;
		geometry(&dflt, &scale);

		/* a surface to measure text: the layout sets map's rows */
		s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
		cr = cairo_create(s);
		status = draw(cr, &d, kind, ntraces, traces, o);
		dout_flush(&d);
		cairo_destroy(cr);
		cairo_surface_destroy(s);
		font_release();
		if (!status && d.err) {
			errmsg("writing the data: %s", strerror(-d.err));
			status = EXIT_USAGE;
		}
		return status;
	}
	geometry(o, &scale);
	plot_filter = o->flt;
	if (o->xtime && kind != PLOT_MRC) {
		status = time_table(ntraces, traces, o->flt);
		if (status)
			return status;
	}
	G.svg = format == PLOT_SVG;
	if (format == PLOT_SVG)
		s = cairo_svg_surface_create_for_stream(sink_write, &svg_sink,
							W, H);
	else if (format == PLOT_PDF)
		s = cairo_pdf_surface_create_for_stream(sink_write, &sink, W,
							H);
	else
		s = cairo_image_surface_create(CAIRO_FORMAT_RGB24,
					       (int)(W * scale + 0.5),
					       (int)(H * scale + 0.5));
	cr = cairo_create(s);
	if (format == PLOT_PNG)
		cairo_scale(cr, scale, scale);
	if (o->title) {
		snprintf(title, sizeof(title), "%s", o->title);
	} else {
		base_name(b, sizeof(b), ntraces ? traces[0] : "");
		snprintf(title, sizeof(title), "%s%s%s",
			 kind == PLOT_MAP   ? "address map: "
			 : kind == PLOT_MIX ? "bus cycle mix: "
			 : kind == PLOT_MRC ? "miss-ratio curves: "
					    : "working set: ",
			 b, ntraces > 1 ? " ..." : "");
	}
	utf8_clean(title);
	frame_title(cr, o->no_title ? NULL : title);
	status = draw(cr, NULL, kind, ntraces, traces, o);
	if (!status) {
		plot_box(cr);
		font_family(); /* says so if --font is not installed */
	}
	cairo_destroy(cr);
	if (!status && format == PLOT_PNG)
		cairo_surface_write_to_png_stream(s, sink_write, &sink);
	cairo_surface_finish(s);
	if (!status && cairo_surface_status(s) != CAIRO_STATUS_SUCCESS &&
	    !sink.err && !svg_sink.err) {
		errmsg("cairo: %s",
		       cairo_status_to_string(cairo_surface_status(s)));
		status = EXIT_USAGE;
	}
	cairo_surface_destroy(s);
	if (!status && svg_sink.err)
		sink.err = svg_sink.err;
	if (!status && format == PLOT_SVG && !sink.err) {
		/* cairo draws text as glyph outlines only: the texts go in
		 * as <text>, on top, before the end of the picture */
		struct dout d = { .write = write, .closure = closure };
		size_t end = svg.n;

		while (end >= 6 && memcmp(svg.p + end - 6, "</svg>", 6))
			end--;
		end = end >= 6 ? end - 6 : svg.n;
		sink.err = write(closure, svg.p, end);
		if (!sink.err) {
			svg_texts(&d);
			dout_flush(&d);
			sink.err = d.err;
		}
		if (!sink.err)
			sink.err = write(closure, svg.p + end, svg.n - end);
	}
	free(svg.p);
	font_release();
	time_reset();
	if (!status && o->layout) {
		FILE *f = fopen(o->layout, "w");
		struct dout d = { .json = true,
				  .write = file_write,
				  .closure = f };

		if (f) {
			layout_json(&d);
			dout_flush(&d);
		}
		if (!f || d.err || fclose(f))
			errmsg("%s: cannot write the layout", o->layout);
	}
	if (!status && sink.err) {
		errmsg("writing the picture: %s", strerror(-sink.err));
		status = EXIT_USAGE;
	}
	return status;
}
