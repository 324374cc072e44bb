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
	/* a chunk of a split run (bach_wss_chunk()) */
	bool chunk;
	uint64_t phantom; /* records of its first window before it */
	struct bach_wss_piece head;
	bool has_head;
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

static int piece_sets(struct bach_wss *w, struct bach_wss_piece *p);

static void close_window(struct bach_wss *w)
{
	if (w->chunk && !w->n && w->phantom && !w->has_head) {
		/* a chunk's first window began before it: its sets */
		w->head.wstart = w->cur.start;
		w->head.records = w->cur.records - w->phantom;
		w->head.refs = w->cur.refs;
		if (piece_sets(w, &w->head))
			w->err = -ENOMEM;
		w->has_head = true;
	}
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

int bach_wss_chunk(struct bach_wss *w, uint64_t start)
{
	if (w->n || w->cur.records)
		return -EINVAL;
	w->chunk = true;
	w->phantom = start % w->window;
	w->cur.records = w->phantom;
	w->cur.start = start - w->phantom;
	return 0;
}

/* the lines and pages of the current window, ascending */
static int piece_sets(struct bach_wss *w, struct bach_wss_piece *p)
{
	size_t nl = 0, np = 0;

	for (int pass = 0; pass < 2; pass++) {
		nl = np = 0;
		for (size_t i = 0; i < w->ndir; i++)
			for (uint32_t j = 0;
			     w->lines[i] && j < 1u << CHUNK_BITS; j++)
				if (w->lines[i][j] == w->id) {
					if (pass)
						p->line[nl] =
							(uint32_t)(i << CHUNK_BITS |
								   j);
					nl++;
				}
		for (uint32_t j = 0; j < 1u << 20; j++)
			if (w->pages[j] == w->id) {
				if (pass)
					p->page[np] = j;
				np++;
			}
		if (!pass) {
			p->line = malloc((nl + 1) * sizeof(*p->line));
			p->page = malloc((np + 1) * sizeof(*p->page));
			if (!p->line || !p->page)
				return -ENOMEM;
		}
	}
	p->nline = nl;
	p->npage = np;
	return 0;
}

int bach_wss_pieces(struct bach_wss *w, struct bach_wss_piece **out, size_t *n)
{
	size_t k = 0, first = w->has_head ? 1 : 0;
	struct bach_wss_piece *v = calloc(w->n + 2, sizeof(*v));

	*out = v;
	*n = 0;
	if (!v || w->err)
		return v ? w->err : -ENOMEM;
	if (w->has_head) {
		v[k++] = w->head;
		memset(&w->head, 0, sizeof(w->head));
		w->has_head = false;
	}
	for (size_t i = first; i < w->n; i++, k++) {
		v[k].wstart = w->w[i].start;
		v[k].records = w->w[i].records;
		v[k].refs = w->w[i].refs;
		v[k].full = true;
		v[k].lines = w->w[i].lines;
		v[k].pages = w->w[i].pages;
	}
	v[k].wstart = w->cur.start;
	v[k].records = w->cur.records - (w->n ? 0 : w->phantom);
	v[k].refs = w->cur.refs;
	*n = k + 1;
	return piece_sets(w, &v[k]);
}

void bach_wss_pieces_free(struct bach_wss_piece *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++) {
		free(p[i].line);
		free(p[i].page);
	}
	free(p);
}

/* the union of the sorted a and b into a */
static int unite(uint32_t **a, size_t *na, const uint32_t *b, size_t nb)
{
	uint32_t *u = malloc((*na + nb + 1) * sizeof(*u));
	size_t i = 0, j = 0, k = 0;

	if (!u)
		return -ENOMEM;
	while (i < *na || j < nb) {
		if (j == nb || (i < *na && (*a)[i] < b[j]))
			u[k++] = (*a)[i++];
		else if (i == *na || b[j] < (*a)[i])
			u[k++] = b[j++];
		else
			u[k++] = (*a)[i++], j++;
	}
	free(*a);
	*a = u;
	*na = k;
	return 0;
}

static int copy_set(uint32_t **dst, const uint32_t *src, size_t n)
{
	*dst = malloc((n + 1) * sizeof(**dst));
	if (!*dst)
		return -ENOMEM;
	if (n)
		memcpy(*dst, src, n * sizeof(**dst));
	return 0;
}

int bach_wss_merge_add(struct bach_wss_merge *m, const struct bach_wss_piece *p,
		       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct bach_wss_piece *q = &p[i];
		struct bach_wss_piece *last = m->n ? &m->p[m->n - 1] : NULL;

		if (!q->full && (q->nline && !q->line))
			return -EINVAL;
		if (last && q->wstart < last->wstart)
			return -EINVAL;
		if (last && q->wstart == last->wstart) {
			if (!q->records && !q->refs)
				continue; /* an empty chunk */
			if (!last->records && !last->refs) {
				free(last->line);
				free(last->page);
				*last = *q;
				last->line = last->page = NULL;
				if (!q->full &&
				    (copy_set(&last->line, q->line, q->nline) ||
				     copy_set(&last->page, q->page, q->npage)))
					return -ENOMEM;
				continue;
			}
			if (last->full || q->full)
				return -EINVAL;
			last->records += q->records;
			last->refs += q->refs;
			if (unite(&last->line, &last->nline, q->line,
				  q->nline) ||
			    unite(&last->page, &last->npage, q->page, q->npage))
				return -ENOMEM;
			continue;
		}
		/* a new window: the one before it is whole (not the first) */
		if (last && !last->full && m->n > 1) {
			last->lines = last->nline;
			last->pages = last->npage;
			last->full = true;
			free(last->line);
			free(last->page);
			last->line = last->page = NULL;
		}
		if (m->n == m->cap) {
			size_t cap = m->cap ? 2 * m->cap : 64;
			struct bach_wss_piece *v =
				realloc(m->p, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			m->p = v;
			m->cap = cap;
		}
		m->p[m->n] = *q;
		m->p[m->n].line = m->p[m->n].page = NULL;
		if (!q->full &&
		    (copy_set(&m->p[m->n].line, q->line, q->nline) ||
		     copy_set(&m->p[m->n].page, q->page, q->npage)))
			return -ENOMEM;
		m->n++;
	}
	return 0;
}

size_t bach_wss_merge_windows(const struct bach_wss_merge *m, uint64_t origin,
			      struct bach_wss_window *out)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct bach_wss_piece *q = &m->p[i];

		if (!q->records)
			continue;
		out[k].start = q->wstart - origin;
		out[k].records = q->records;
		out[k].refs = q->refs;
		out[k].lines = q->full ? q->lines : q->nline;
		out[k++].pages = q->full ? q->pages : q->npage;
	}
	return k;
}

void bach_wss_merge_free(struct bach_wss_merge *m)
{
	bach_wss_pieces_free(m->p, m->n);
	memset(m, 0, sizeof(*m));
}
