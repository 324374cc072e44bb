// SPDX-License-Identifier: MIT
/*
 * bach plot's pictures as a whole (plot.h): the cairo surface, SVG or
 * PNG, whose bytes go to the caller's write(), the white page and title,
 * the kind's own drawing (plot_map.c, plot_mix.c, plot_wss.c, plot_mrc.c
 * through plot_kinds.h), and the frame around the plot area. bach plot
 * (plot.c) and bach report call plot_draw().
 */
#include <cairo-svg.h>
#include <cairo.h>
#include <stdio.h>
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
	if (format == PLOT_CSV || format == PLOT_JSON) {
		struct dout d = { format == PLOT_JSON, write, closure, 0 };

		status = draw(NULL, &d, kind, ntraces, traces, o);
		if (!status && d.err) {
			errmsg("writing the data: %s", strerror(-d.err));
			status = EXIT_USAGE;
		}
		return status;
	}
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
	status = draw(cr, NULL, kind, ntraces, traces, o);
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
