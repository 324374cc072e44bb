// SPDX-License-Identifier: MIT
/*
 * Gap markers in what the commands print: the one way records are counted
 * (verify, stat, ls: docs/formats.md section 5), and the cause of a gap
 * marker, which the record does not carry, from its capture's manifest,
 * and the line that shows a gap marker as a gap (dump, convert --to csv,
 * diff).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/record.h"
#include "cmd.h"
#include "lib/io/manifest.h"
#include "lib/options.h"

size_t fmt_records(char *d, size_t cap, uint64_t records, uint64_t markers,
		   uint64_t lost)
{
	int n;

	if (!markers)
		n = snprintf(d, cap, "%llu record%s",
			     (unsigned long long)records, bach_s(records));
	else
		n = snprintf(
			d, cap,
			"%llu record%s (%llu data, %llu gap marker%s standing for %llu lost)",
			(unsigned long long)records, bach_s(records),
			(unsigned long long)(records - markers),
			(unsigned long long)markers, bach_s(markers),
			(unsigned long long)lost);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

size_t fmt_gap(char *d, const uint8_t *p, uint64_t index, const char *cause,
	       enum gap_form form)
{
	unsigned long long i = (unsigned long long)index;
	uint32_t lost = bach_get_be32(p);

	if (form == GAP_TEXT)
		return (size_t)sprintf(d, "%08x %02x GAP:lost=%u:cause=%s\n",
				       lost, p[4], lost, cause);
	if (form == GAP_CSV)
		return (size_t)sprintf(
			d, "%llu,0x%08x,0x%02x,0x%02x,GAP:lost=%u:cause=%s\n",
			i, lost, p[4], p[5], lost, cause);
	return (size_t)sprintf(
		d,
		"{\"index\":%llu,\"address\":\"0x%08x\",\"be\":\"0x%02x\",\"control\":\"0x%02x\",\"type\":\"GAP\",\"lost\":%u,\"cause\":\"%s\"}\n",
		i, lost, p[4], p[5], lost, cause);
}

/* The trace positions one gap event's markers stand at, and its cause. */
struct gap_span {
	uint64_t at, end;
	const char *cause;
};

static int by_at(const void *x, const void *y)
{
	const struct gap_span *a = x, *b = y;

	return a->at < b->at ? -1 : a->at > b->at;
}

void gap_causes_free(struct gap_causes *g)
{
	if (g->loaded)
		bach_manifest_free(g->m);
	free(g->m);
	free(g->spans);
	memset(g, 0, sizeof(*g));
}

/* The manifest of directory dir (len bytes of a path), its gaps sorted. */
static void load_dir(struct gap_causes *g, const char *dir, size_t len)
{
	char err[600];
	int fd;

	gap_causes_free(g);
	snprintf(g->dir, sizeof(g->dir), "%.*s", (int)len, dir);
	g->m = calloc(1, sizeof(*g->m));
	fd = open(g->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!g->m || fd < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	g->loaded = !bach_manifest_load(fd, g->dir, g->m, err, sizeof(err));
	close(fd);
	if (!g->loaded || !g->m->gaps)
		return;
	g->spans = calloc(g->m->gaps, sizeof(*g->spans));
	if (!g->spans)
		return;
	for (size_t i = 0; i < g->m->gaps; i++) {
		const struct bach_gap *e = &g->m->gap_list[i];
		/* a gap of more than 2^32 - 1 records has several markers */
		uint64_t k = e->lost / UINT32_MAX + (e->lost % UINT32_MAX != 0);

		g->spans[i] = (struct gap_span){ e->at, e->at + (k ? k : 1),
						 e->cause };
	}
	g->nspans = g->m->gaps;
	qsort(g->spans, g->nspans, sizeof(*g->spans), by_at);
}

/* The cause of the gap event whose markers stand at capture position pos. */
static const char *span_cause(const struct gap_causes *g, uint64_t pos)
{
	size_t lo = 0, hi = g->nspans;

	while (lo < hi) { /* the last span starting at or before pos */
		size_t mid = lo + (hi - lo) / 2;

		if (g->spans[mid].at <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pos < g->spans[lo - 1].end ? g->spans[lo - 1].cause
						: "unknown";
}

const char *gap_cause_at(struct gap_causes *g, const char *trace, uint64_t pos)
{
	struct stat st;
	size_t len = strlen(trace);

	if (!strcmp(trace, "-") || stat(trace, &st) < 0)
		return "unknown";
	if (!S_ISDIR(st.st_mode))
		return gap_cause(g, trace, pos);
	if (!g->m || strcmp(g->dir, trace)) {
		load_dir(g, trace, len);
		g->seg[0] = 0;
	}
	return span_cause(g, pos);
}

const char *gap_cause(struct gap_causes *g, const char *path, uint64_t idx)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 1;
	const struct bach_manifest_seg *ms;

	if (!strcmp(path, "<stdin>"))
		return "unknown";
	if (!slash)
		path = ".";
	if (!g->m || strlen(g->dir) != dlen || strncmp(g->dir, path, dlen)) {
		load_dir(g, path, dlen);
		g->seg[0] = 0;
	}
	if (!g->nspans)
		return "unknown";
	if (strcmp(g->seg, name)) {
		snprintf(g->seg, sizeof(g->seg), "%s", name);
		ms = bach_manifest_find_seg(g->m, name);
		g->seg_known = ms != NULL;
		g->seg_start = 0;
		/* positions count the records of every segment before it */
		for (size_t i = 0; ms && &g->m->segs[i] != ms; i++)
			g->seg_start += g->m->segs[i].records;
	}
	return g->seg_known ? span_cause(g, g->seg_start + idx) : "unknown";
}
