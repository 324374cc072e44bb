// SPDX-License-Identifier: MIT
/*
 * bach plot mrc (plot_kinds.h): miss ratio of fully associative LRU
 * against cache size, 1 KiB to 32 MiB on a log scale, one curve per trace
 * (at most MRC_SERIES), each trace read on its own through the stack
 * distances of lib/analysis/mrc.h (lib/analysis/mrc.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "lib/analysis/mrc.h"
#include "plot_kinds.h"

struct curve {
	struct pass p;
	struct bach_mrc *m;
};

static void curve_add(struct pass *p, const uint8_t *r, size_t n)
{
	bach_mrc_add(((struct curve *)p)->m, r, n);
}

/* Okabe-Ito's colours, each curve with its own dashes and markers */
static const struct style series_style[MRC_SERIES] = {
	{ okabe_ito[5], 0, 0 }, { okabe_ito[6], 1, 1 }, { okabe_ito[3], 3, 2 },
	{ okabe_ito[1], 2, 3 }, { okabe_ito[0], 0, 4 }, { okabe_ito[7], 1, 0 },
	{ okabe_ito[2], 3, 1 }, { okabe_ito[4], 2, 2 },
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

/* --json: one curve's points, as bach mrc --json writes them; --csv: rows */
static void mrc_data(struct dout *d, const char *trace,
		     const struct bach_mrc_point *pts, int n)
{
	if (d->json) {
		dout_printf(d, "{\"trace\":");
		dout_string(d, trace);
		dout_printf(d, ",\"points\":[");
	}
	for (int i = 0; i < n; i++) {
		if (d->json) {
			if (i)
				dout_printf(d, ",");
			dout_printf(
				d,
				"{\"size\":%llu,\"refs\":%llu,\"misses\":%llu,\"miss_ratio\":%.6f}",
				(unsigned long long)pts[i].size,
				(unsigned long long)pts[i].refs,
				(unsigned long long)pts[i].misses,
				pts[i].miss_ratio);
			continue;
		}
		dout_string(d, trace);
		dout_printf(d, ",%llu,%llu,%llu,%.6f\n",
			    (unsigned long long)pts[i].size,
			    (unsigned long long)pts[i].refs,
			    (unsigned long long)pts[i].misses,
			    pts[i].miss_ratio);
	}
	if (d->json)
		dout_printf(d, "]}");
}

int mrc_plot(cairo_t *cr, struct dout *d, int ntraces, char **traces,
	     const struct plot_opts *o)
{
	uint64_t sizes[BACH_MRC_MAX_SIZES];
	struct bach_mrc_point pts[BACH_MRC_MAX_SIZES];
	struct bach_mrc_config cfg = { .line = o->line,
				       .kinds = BACH_MRC_KIND_ALL,
				       .sample = o->sample };
	const char *names[MRC_SERIES];
	char base[MRC_SERIES][48];
	double x[BACH_MRC_MAX_SIZES], y[BACH_MRC_MAX_SIZES], wmax = 0;
	int every;
	char why[200], b[32];
	int n;

	n = bach_mrc_parse_sizes(NULL, o->min ? o->min : "1k",
				 o->max ? o->max : "32M", sizes, why,
				 sizeof(why));
	if (n < 0)
		return usage_error("%s", why);
	/* the legend: --label, or each trace's last name, cut to fit */
	for (int t = 0; t < ntraces && t < MRC_SERIES; t++) {
		size_t len = strlen(traces[t]);
		const char *e = traces[t] + len, *p;

		while (e > traces[t] + 1 && e[-1] == '/')
			e--;
		p = e;
		while (p > traces[t] && p[-1] != '/')
			p--;
		snprintf(base[t], sizeof(base[t]), "%.*s%s",
			 (int)(e - p > 40 ? 40 : e - p), p,
			 e - p > 40 ? "..." : "");
		if ((size_t)t < o->nlabels)
			snprintf(base[t], sizeof(base[t]), "%s", o->label[t]);
		utf8_clean(base[t]);
		names[t] = base[t];
	}
	if (plot_layout(cr, names, (size_t)ntraces, false, "0.00"))
		return EXIT_USAGE;
	cfg.sizes = sizes;
	cfg.nsizes = (size_t)n;
	if (d && d->json)
		dout_printf(
			d,
			"{\"kind\":\"mrc\",\"line\":%u,\"assoc\":\"full\",\"sample\":%g,\"curves\":[",
			o->line, o->sample);
	else if (d)
		dout_printf(d, "trace,size,refs,misses,miss_ratio\n");
	else
		value_axis(cr, 1, false, false,
			   "miss ratio (fully associative LRU)", "miss ratio");
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
		if (d) {
			if (d->json && t)
				dout_printf(d, ",");
			mrc_data(d, traces[t], pts, n);
			continue;
		}
		for (int i = 0; i < n; i++) {
			x[i] = n > 1 ? (double)i / (n - 1) : 0.5;
			y[i] = pts[i].miss_ratio;
		}
		series(cr, x, y, (size_t)n, 1, 1, &series_style[t], true,
		       false);
	}
	if (d) {
		if (d->json)
			dout_printf(d, "]}\n");
		return EXIT_OK;
	}
	font(cr, 11, false);
	cairo_set_source_rgb(cr, 0, 0, 0);
	text_role = "tick";
	/* a label every `every` ticks, so that the widest and an em fit
	 * between two: labels at even steps, not wherever one happened to
	 * find room; and the last (--max), for which the one before it
	 * makes room if it must */
	for (int i = 0; i < n; i++) {
		size_label(b, sizeof(b), sizes[i]);
		wmax = text_width(cr, b) > wmax ? text_width(cr, b) : wmax;
	}
	every = n > 1 ? (int)ceil((wmax + S(11)) / (PW / (double)(n - 1))) : 1;
	for (int i = 0; i < n; i++) {
		double px = LEFT + (n > 1 ? (double)i / (n - 1) : 0.5) * PW;

		cairo_move_to(cr, px + 0.5, TOP + PH);
		cairo_line_to(cr, px + 0.5, TOP + PH + S(5));
		cairo_stroke(cr);
		size_label(b, sizeof(b), sizes[i]);
		if ((i == n - 1 || (i % every == 0 && i <= n - 1 - every)) &&
		    !text_collides(cr, px, TOP + PH + S(8), 0.5, 0, b, S(1)))
			text(cr, px, TOP + PH + S(8), 0.5, 0, b);
	}

	snprintf(why, sizeof(why),
		 "cache size (bytes, log scale), %u-byte lines%s", o->line,
		 o->sample < 1 ? ", sampled (SHARDS)" : "");
	axis_title(cr, false, why, "cache size (bytes)");
	legend(cr, names, series_style, (size_t)ntraces, true);
	return EXIT_OK;
}
