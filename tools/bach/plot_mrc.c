// SPDX-License-Identifier: MIT
/*
 * bach plot mrc (plot_kinds.h): miss ratio of fully associative LRU
 * against cache size, 1 KiB to 32 MiB on a log scale, one curve per trace
 * (at most MRC_SERIES), each trace read on its own through the stack
 * distances of lib/analysis/mrc.h (lib/analysis/mrc.c).
 */
#include <errno.h>
#include <stdio.h>

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

int mrc_plot(cairo_t *cr, int ntraces, char **traces, const struct plot_opts *o)
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
