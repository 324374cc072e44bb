/* SPDX-License-Identifier: MIT */
/*
 * The pictures of bach plot, drawn with cairo (docs/analysis.md section
 * 4), for bach plot (plot.c) and bach report. Each kind reads its traces
 * once (map twice: the address ranges first), whole blocks at a time, into
 * fixed-size tables; only then is anything drawn. plot_draw.c draws them,
 * one file per kind beside it (plot_kinds.h).
 */
#ifndef BACH_TOOL_PLOT_H
#define BACH_TOOL_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum plot_kind { PLOT_MAP, PLOT_MIX, PLOT_MRC, PLOT_WSS, PLOT_NKINDS };
/* a picture, or the data behind it (--csv, --json) */
enum plot_format { PLOT_SVG, PLOT_PNG, PLOT_PDF, PLOT_CSV, PLOT_JSON };

#define PLOT_MAX_RANGES 8

struct plot_opts {
	/* map: address ranges [lo, hi] to show; none: those in use */
	uint64_t lo[PLOT_MAX_RANGES], hi[PLOT_MAX_RANGES];
	size_t nranges;
	uint32_t line;	   /* mrc, wss: line size (default 32) */
	double sample;	   /* mrc: SHARDS rate (default 1, exact) */
	uint64_t window;   /* wss: records per window; 0: about 1/400 */
	const char *title; /* NULL: the kind and the traces' names */
	bool no_title;	   /* --no-title */
	/* --size: the canvas in unit ('p' pixels, 'i' inches, 'c' cm);
	 * 0: 1000 x 600 pixels */
	double width, height;
	char unit;
	double dpi;	       /* PNG's pixels per inch (0: 72) */
	const char *font;      /* family (NULL: DejaVu Sans) */
	double font_size;      /* points (0: 11) */
	const char *min, *max; /* mrc: cache sizes (NULL: 1k, 32M) */
	const char *layout;    /* --debug-layout FILE: the texts' boxes */
	const char *label[8];  /* mrc: --label, the legend of each trace */
	size_t nlabels;
	bool xtime;		/* --x time: map, mix, wss against time */
	struct rec_filter *flt; /* --type, --addr, --port; NULL: none */
};

extern const char *const plot_kind_names[PLOT_NKINDS];

/*
 * Read the traces and draw kind into a picture of format (or write the
 * data behind it, PLOT_CSV and PLOT_JSON), handing its bytes to
 * write(closure, data, len), which returns 0 or -errno. Traces
 * are read as one (mrc: one curve each). Returns EXIT_OK, or the status
 * after saying what was wrong.
 */
int plot_draw(enum plot_kind kind, int ntraces, char **traces,
	      const struct plot_opts *o, enum plot_format format,
	      int (*write)(void *closure, const uint8_t *data, size_t len),
	      void *closure);

#endif
