// SPDX-License-Identifier: MIT
/*
 * bach plot mix (plot_kinds.h): the share of each kind of bus cycle along
 * the trace, as stacked bars of up to NCOLS columns whose records per
 * column double whenever the trace outgrows them, under the time axis and
 * the rules.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "plot_kinds.h"

static const char *const cls_names[NCLS] = {
	"instruction fetch",   "data read",	    "data write",
	"writeback",	       "I/O read or write", "interrupt ack., special",
	"invalid, gap marker",
};

static const double grey[3] = { 0.6, 0.6, 0.6 };

/* Okabe-Ito: blue, bluish green, orange, yellow, sky blue, reddish
 * purple; grey */
static const struct style cls_style[NCLS] = {
	{ okabe_ito[5], 0, -1 }, { okabe_ito[3], 0, -1 },
	{ okabe_ito[1], 0, -1 }, { okabe_ito[4], 0, -1 },
	{ okabe_ito[2], 0, -1 }, { okabe_ito[7], 0, -1 },
	{ grey, 0, -1 },
};

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
	/* abutting bars: no antialiased seams between them; each class's
	 * bars one path, one fill (SVG: one element, not one a bar) */
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
	for (int j = 0; j < NCLS; j++) {
		for (size_t k = 0; k < NCOLS && k * c->per < total; k++) {
			uint64_t sum = 0, below = 0;
			double x0 = pos_x(k * c->per, total);
			double x1 = pos_x((k + 1) * c->per, total), h;

			for (int i = 0; i < NCLS; i++) {
				sum += c->n[k][i];
				below += i < j ? c->n[k][i] : 0;
			}
			if (!sum || !c->n[k][j])
				continue;
			if (x1 > LEFT + PW)
				x1 = LEFT + PW;
			h = (double)c->n[k][j] / (double)sum * PH;
			cairo_rectangle(
				cr, x0,
				TOP + PH - (double)below / (double)sum * PH - h,
				x1 - x0 + 0.3, h);
		}
		cairo_set_source_rgb(cr, cls_style[j].rgb[0],
				     cls_style[j].rgb[1], cls_style[j].rgb[2]);
		cairo_fill(cr);
	}
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
	value_axis(cr, 1, true, false, "share of bus cycles", "share");
	legend(cr, cls_names, cls_style, NCLS, false);
}

/* each column's counts by class, the classes of the legend */
static void mix_data(struct dout *d, const struct cols *c, uint64_t total,
		     const struct rules *rules)
{
	if (d->json) {
		dout_printf(
			d,
			"{\"kind\":\"mix\",\"records\":%llu,\"per_column\":%llu,\"classes\":[",
			(unsigned long long)total, (unsigned long long)c->per);
		for (int j = 0; j < NCLS; j++) {
			if (j)
				dout_printf(d, ",");
			dout_string(d, cls_names[j]);
		}
		dout_printf(d, "],\"columns\":[");
	} else {
		dout_printf(d, "start,records");
		for (int j = 0; j < NCLS; j++) {
			dout_printf(d, ",");
			dout_string(d, cls_names[j]);
		}
		dout_printf(d, "\n");
	}
	for (size_t k = 0; k < NCOLS && k * c->per < total; k++) {
		uint64_t n = total - k * c->per < c->per ? total - k * c->per
							 : c->per;

		dout_printf(
			d,
			d->json ? "%s{\"start\":%llu,\"records\":%llu,\"counts\":["
				: "%s%llu,%llu",
			d->json && k ? "," : "",
			(unsigned long long)(k * c->per),
			(unsigned long long)n);
		for (int j = 0; j < NCLS; j++)
			dout_printf(d, "%s%llu", d->json && !j ? "" : ",",
				    (unsigned long long)c->n[k][j]);
		dout_printf(d, d->json ? "]}" : "\n");
	}
	if (d->json) {
		dout_printf(d, "]");
		dout_rules(d, rules);
		dout_printf(d, "}\n");
	}
}

int mix_plot(cairo_t *cr, struct dout *d, int ntraces, char **traces,
	     struct rules *rules)
{
	struct cols *c = calloc(1, sizeof(*c));
	int status;

	if (!c) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	c->p.add = cols_add;
	c->per = 1;
	status = read_all(&c->p, ntraces, traces, rules);
	if (!status) /* the band of the rules' labels if there are some */
		status = plot_layout(cr, cls_names, NCLS,
				     rules->n || rules->dropped, "100%");
	if (!status && d) {
		mix_data(d, c, c->p.pos, rules);
	} else if (!status) {
		mix_draw(cr, c, c->p.pos);
		time_axis(cr, c->p.pos);
		draw_rules(cr, rules, c->p.pos);
	}
	free(c);
	return status;
}
