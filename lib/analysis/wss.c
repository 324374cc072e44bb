// SPDX-License-Identifier: MIT
/*
 * Working sets over time (lib/analysis/mrc.h): the distinct lines and 4 KiB
 * pages referenced in each window of records. Each line and page keeps the
 * number of the last window that referenced it, so a reference costs one
 * look-up per table and nothing is cleared between windows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/cachesim.h" /* bach_why() */
#include "lib/analysis/mrc.h"

#define CHUNK_BITS 12

struct bach_wss {
	uint64_t window; /* records per window */
	unsigned lg_line, kinds;
	uint32_t **lines; /* line -> window number + 1, by chunks */
	size_t ndir;
	uint32_t *pages; /* page -> window number + 1 */
	struct bach_wss_window *w;
	size_t n, cap; /* windows closed, room */
	struct bach_wss_window cur;
	uint32_t id; /* the current window's number + 1 */
	int err;
};

int bach_wss_new(struct bach_wss **wp, uint64_t window, uint32_t line,
		 unsigned kinds, char *why, size_t whylen)
{
	struct bach_wss *w;

	*wp = NULL;
	if (!window)
		return bach_why(why, whylen,
				"--window must be at least 1 record");
	if (bach_mrc_check_line(line, why, whylen))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->window = window;
	w->lg_line = (unsigned)__builtin_ctz(line);
	w->kinds = kinds;
	w->ndir = (size_t)1 << (32 - w->lg_line - CHUNK_BITS);
	w->lines = calloc(w->ndir, sizeof(*w->lines));
	w->pages = calloc((size_t)1 << 20, sizeof(*w->pages));
	w->id = 1;
	if (!w->lines || !w->pages) {
		bach_wss_free(w);
		return -ENOMEM;
	}
	*wp = w;
	return 0;
}

void bach_wss_free(struct bach_wss *w)
{
	if (!w)
		return;
	for (size_t i = 0; w->lines && i < w->ndir; i++)
		free(w->lines[i]);
	free(w->lines);
	free(w->pages);
	free(w->w);
	free(w);
}

static void close_window(struct bach_wss *w)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct bach_wss_window *nw = realloc(w->w, cap * sizeof(*nw));

		if (!nw) {
			w->err = -ENOMEM;
			return;
		}
		w->w = nw;
		w->cap = cap;
	}
	w->w[w->n++] = w->cur;
	memset(&w->cur, 0, sizeof(w->cur));
	w->cur.start = w->w[w->n - 1].start + w->w[w->n - 1].records;
	if (++w->id == UINT32_MAX) { /* numbers run out: forget them all */
		for (size_t i = 0; i < w->ndir; i++)
			if (w->lines[i])
				memset(w->lines[i], 0,
				       sizeof(**w->lines) << CHUNK_BITS);
		memset(w->pages, 0, sizeof(*w->pages) << 20);
		w->id = 1;
	}
}

void bach_wss_add(struct bach_wss *w, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n && !w->err; i++, p += BACH_REC_SIZE) {
		unsigned kind = bach_ref_kind(p[5]), size;
		uint32_t addr, line, **chunk, *l;

		w->cur.records++;
		if (kind != BACH_REF_NONE && (w->kinds >> kind & 1)) {
			addr = bach_ref_span(p, &size);
			line = addr >> w->lg_line;
			chunk = &w->lines[line >> CHUNK_BITS];
			if (!*chunk) {
				*chunk = calloc((size_t)1 << CHUNK_BITS,
						sizeof(**chunk));
				if (!*chunk) {
					w->err = -ENOMEM;
					return;
				}
			}
			l = *chunk + (line & ((1u << CHUNK_BITS) - 1));
			w->cur.refs++;
			if (*l != w->id) {
				*l = w->id;
				w->cur.lines++;
			}
			if (w->pages[addr >> 12] != w->id) {
				w->pages[addr >> 12] = w->id;
				w->cur.pages++;
			}
		}
		if (w->cur.records == w->window)
			close_window(w);
	}
}

size_t bach_wss_finish(struct bach_wss *w, const struct bach_wss_window **out)
{
	if (w->cur.records && !w->err)
		close_window(w);
	*out = w->w;
	return w->n;
}

int bach_wss_error(const struct bach_wss *w)
{
	return w->err;
}
