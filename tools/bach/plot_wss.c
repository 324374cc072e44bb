// SPDX-License-Identifier: MIT
/*
 * bach plot wss (plot_kinds.h): the working set along the trace, the
 * distinct lines and 4 KiB pages of each window of records
 * (lib/analysis/mrc.h, lib/analysis/wss.c) as two lines, under the time axis
 * and the rules. Without --window, a first pass counts the records to make
 * about 400 windows.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "lib/analysis/mrc.h"
#include "plot_kinds.h"

struct wss {
	struct pass p;
	struct bach_wss *w;
};

static void wss_add(struct pass *p, const uint8_t *r, size_t n)
{
	bach_wss_add(((struct wss *)p)->w, r, n);
}

static void wss_draw(cairo_t *cr, const struct bach_wss_window *w, size_t n,
		     uint64_t total, uint64_t window, uint32_t line)
{
	double *x = calloc(n ? n : 1, sizeof(*x));
	double *yl = calloc(n ? n : 1, sizeof(*yl));
	double *yp = calloc(n ? n : 1, sizeof(*yp));
	/* Okabe-Ito blue, solid with circles; bluish green, dashed with
	 * squares: apart in grey too (vermillion is the gaps') */
	const struct style st[2] = { { okabe_ito[5], 0, 0 },
				     { okabe_ito[3], 1, 1 } };
	char n0[64], n1[64], title[128], brief[64], wb[32];
	const char *names[2] = { n0, n1 };
	double ymax = 1;

	/* a short last window would draw a fall that is not there */
	if (n > 1 && w[n - 1].records < window)
		n--;
	snprintf(n0, sizeof(n0), "%u-byte lines", line);
	snprintf(n1, sizeof(n1), "4 KiB pages");
	if (x && yl && yp) {
		for (size_t i = 0; i < n; i++) {
			x[i] = pos_x(w[i].start + w[i].records / 2, total) -
			       LEFT;
			yl[i] = (double)w[i].lines;
			yp[i] = (double)w[i].pages;
			ymax = yl[i] > ymax ? yl[i] : ymax;
		}
		ymax *= 1.2; /* log axis: lines and pages, far apart */
		series(cr, x, yl, n, PW, ymax, &st[0], false, true);
		series(cr, x, yp, n, PW, ymax, &st[1], false, true);
	}
	si(wb, sizeof(wb), (double)window);
	snprintf(title, sizeof(title),
		 "distinct lines, pages per %s record%s (log)", wb,
		 window == 1 ? "" : "s");
	snprintf(brief, sizeof(brief), "lines, pages per %s record%s", wb,
		 window == 1 ? "" : "s");
	value_axis(cr, ymax, false, true, title, brief);
	legend(cr, names, st, 2, true);
	free(x);
	free(yl);
	free(yp);
}

/* every window, the short last one too (its records say so) */
static void wss_data(struct dout *d, const struct bach_wss_window *w, size_t n,
		     uint64_t total, uint64_t window, uint32_t line,
		     const struct rules *rules)
{
	if (d->json)
		dout_printf(
			d,
			"{\"kind\":\"wss\",\"line\":%u,\"page\":4096,\"window\":%llu,\"records\":%llu,\"windows\":[",
			line, (unsigned long long)window,
			(unsigned long long)total);
	else
		dout_printf(d, "start,records,lines,pages\n");
	for (size_t i = 0; i < n; i++)
		dout_printf(
			d,
			d->json ? "%s{\"start\":%llu,\"records\":%llu,\"lines\":%llu,\"pages\":%llu}"
				: "%s%llu,%llu,%llu,%llu\n",
			d->json && i ? "," : "", (unsigned long long)w[i].start,
			(unsigned long long)w[i].records,
			(unsigned long long)w[i].lines,
			(unsigned long long)w[i].pages);
	if (d->json) {
		dout_printf(d, "]");
		dout_rules(d, rules);
		dout_printf(d, "}\n");
	}
}

static void skip(struct pass *p, const uint8_t *r, size_t n)
{
	(void)p;
	(void)r;
	(void)n;
}

int wss_plot(cairo_t *cr, struct dout *d, int ntraces, char **traces,
	     const struct plot_opts *o, struct rules *rules)
{
	struct wss w = { .p.add = wss_add };
	const struct bach_wss_window *win;
	uint64_t window = o->window, total = 0;
	char why[200];
	int status = EXIT_OK;
	size_t n;

	if (!window) { /* about 400 windows: the records first */
		struct pass count = { .add = skip };

		status = read_all(&count, ntraces, traces, NULL);
		total = count.pos;
		window = total / 400 ? total / 400 : 1;
	}
	if (status)
		return status;
	if (bach_wss_new(&w.w, window, o->line, BACH_MRC_KIND_ALL, why,
			 sizeof(why)))
		return usage_error("%s", why);
	status = read_all(&w.p, ntraces, traces, rules);
	if (!status && bach_wss_error(w.w)) {
		errmsg("out of memory");
		status = EXIT_USAGE;
	}
	if (!status) { /* the band of the rules' labels if there are some */
		char n0[64];
		const char *names[2] = { n0, "4 KiB pages" };

		snprintf(n0, sizeof(n0), "%u-byte lines", o->line);
		/* the widest of the log axis' labels (1, 10, ... 100M) */
		status = plot_layout(cr, names, 2, rules->n || rules->dropped,
				     "100M");
	}
	if (!status) {
		n = bach_wss_finish(w.w, &win);
		if (d) {
			wss_data(d, win, n, w.p.pos, window, o->line, rules);
			bach_wss_free(w.w);
			return EXIT_OK;
		}
		wss_draw(cr, win, n, w.p.pos, window, o->line);
		time_axis(cr, w.p.pos);
		draw_rules(cr, rules, w.p.pos);
	}
	bach_wss_free(w.w);
	return status;
}
