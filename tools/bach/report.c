// SPDX-License-Identifier: MIT
/*
 * bach report CAPTURE -o FILE.html: one page a lab can attach to a
 * capture, readable offline (docs/analysis.md section 5): labels and
 * versions, the manifest as a timeline, bach stat's tables and the
 * pictures of bach plot as PNG data: URIs. No script, no external file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/analysis/stats.h"
#include "lib/io/manifest.h"
#include "lib/io/outfile.h"
#include "plot.h"

#define MAX_ROWS 2000 /* timeline rows in the table; the rest are counted */

/* The page is built in memory, then written once. */
struct page {
	char *buf;
	size_t len, cap;
	int err;
};

static void put(struct page *p, const char *s, size_t n)
{
	if (p->err)
		return;
	if (p->len + n > p->cap) {
		size_t cap = (p->cap ? p->cap * 2 : 1 << 16) + n;
		char *b = realloc(p->buf, cap);

		if (!b) {
			p->err = -ENOMEM;
			return;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
}

__attribute__((format(printf, 2, 3))) static void pf(struct page *p,
						     const char *fmt, ...)
{
	char b[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	put(p, b,
	    n < 0		    ? 0
	    : (size_t)n < sizeof(b) ? (size_t)n
				    : sizeof(b) - 1);
}

/* text as HTML: & < > " ' escaped, control characters as U+FFFD */
static void esc(struct page *p, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			put(p, "&amp;", 5);
			break;
		case '<':
			put(p, "&lt;", 4);
			break;
		case '>':
			put(p, "&gt;", 4);
			break;
		case '"':
			put(p, "&quot;", 6);
			break;
		case '\'':
			put(p, "&#39;", 5);
			break;
		default:
			if ((unsigned char)*s < 0x20)
				put(p, "\xef\xbf\xbd", 3);
			else
				put(p, s, 1);
		}
	}
}

/* PNG bytes as base64, in whatever pieces cairo hands them */
struct b64 {
	struct page *p;
	uint8_t in[3];
	size_t n;
};

static void b64_quad(struct b64 *b, size_t n)
{
	static const char t[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t v = (uint32_t)b->in[0] << 16 |
		     (n > 1 ? (uint32_t)b->in[1] << 8 : 0) |
		     (n > 2 ? b->in[2] : 0);
	char out[4] = { t[v >> 18], t[v >> 12 & 63],
			n > 1 ? t[v >> 6 & 63] : '=', n > 2 ? t[v & 63] : '=' };

	put(b->p, out, 4);
	b->n = 0;
}

static int put_base64(void *closure, const uint8_t *d, size_t n)
{
	struct b64 *b = closure;

	for (size_t i = 0; i < n; i++) {
		b->in[b->n++] = d[i];
		if (b->n == 3)
			b64_quad(b, 3);
	}
	return b->p->err;
}

static int picture(struct page *p, enum plot_kind kind, char *dir,
		   const char *caption)
{
	struct plot_opts o = { .line = 32, .sample = 1 };
	struct b64 b = { .p = p };
	int status;

	pf(p, "<figure><img alt=\"%s\" src=\"data:image/png;base64,",
	   plot_kind_names[kind]);
	status = plot_draw(kind, 1, &dir, &o, PLOT_PNG, put_base64, &b);
	if (b.n)
		b64_quad(&b, b.n);
	pf(p, "\"><figcaption>");
	esc(p, caption);
	pf(p, "</figcaption></figure>\n");
	return status;
}

static const char *const css =
	"body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}img{max-width:100%;border:1px solid #ddd}.bar{display:flex;height:28px;border:1px solid #888;margin:0.5em 0}.bar div{border-right:1px solid #fff;overflow:hidden;font-size:10px;color:#fff;padding:2px}.gap{color:#b00}.mark{color:#00a}.stall{color:#a60}.device_lost,.device_back{color:#808}";

static void timeline(struct page *p, const struct bach_manifest *m)
{
	uint64_t total = 0, shown = 0;
	size_t k = 0;

	pf(p, "<h2>Timeline</h2>\n");
	for (size_t i = 0; i < m->nsegs; i++)
		total += m->segs[i].records;
	/* segments as a bar, their widths their records */
	pf(p, "<div class=\"bar\" title=\"segments\">");
	for (size_t i = 0; i < m->nsegs && total; i++) {
		double w = 100.0 * (double)m->segs[i].records / (double)total;

		pf(p, "<div style=\"width:%.3f%%;background:%s\">", w,
		   m->segs[i].removed || m->segs[i].error ? "#b00"
		   : i % 2				  ? "#4a7fb0"
							  : "#2f5f8f");
		esc(p, m->segs[i].name);
		pf(p, "</div>");
	}
	pf(p,
	   "</div>\n<table><tr><th>time (UTC)</th><th>event</th><th>at (record)</th><th>count</th><th>detail</th></tr>\n");
	for (size_t i = 0; i < m->nevents; i++) {
		const struct bach_manifest_event *e = &m->events[i];

		if (k++ == MAX_ROWS)
			break;
		/* the manifest's strings, all of them, as text */
		pf(p, "<tr class=\"");
		esc(p, e->name);
		pf(p, "\"><td>");
		esc(p, e->time);
		pf(p, "</td><td>");
		esc(p, e->name);
		pf(p, "</td><td class=\"n\">");
		if (e->has_at)
			pf(p, "%llu", (unsigned long long)e->at);
		pf(p, "</td><td class=\"n\">");
		if (e->count)
			pf(p, "%llu", (unsigned long long)e->count);
		pf(p, "</td><td>");
		esc(p, e->detail);
		pf(p, "</td></tr>\n");
		shown++;
	}
	pf(p, "</table>\n");
	if (shown < m->nevents)
		pf(p, "<p>%llu more events are in manifest.jsonl.</p>\n",
		   (unsigned long long)(m->nevents - shown));
}

static void stat_add(void *s, const uint8_t *recs, size_t n)
{
	bach_stats_add(s, recs, n);
}

static void row(struct page *p, const char *name, uint64_t v, uint64_t of)
{
	pf(p, "<tr><td>%s</td><td class=\"n\">%llu</td><td class=\"n\">", name,
	   (unsigned long long)v);
	if (of)
		pf(p, "%.2f%%", 100.0 * (double)v / (double)of);
	pf(p, "</td></tr>\n");
}

static int stats(struct page *p, char *dir)
{
	static struct bach_stats st;
	struct bach_summary m;
	int status;

	if (bach_stats_init(&st)) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	status = read_traces(1, &dir, NULL, stat_add, &st, NULL);
	if (!status) {
		bach_stats_summary(&st, &m);
		pf(p,
		   "<h2>Records (bach stat)</h2>\n<table><tr><th>type</th><th>records</th><th>share</th></tr>\n");
		for (unsigned t = 0; t < BACH_NTYPES; t++)
			if (bach_type_valid(t))
				row(p, bach_type_name(t), m.by_type[t],
				    m.records);
		row(p, "INVALID", m.invalid, m.records);
		row(p, "gap markers", m.gaps, m.records);
		row(p, "all records", m.records, 0);
		pf(p,
		   "</table>\n<table><tr><th>figure</th><th>value</th><th></th></tr>\n");
		row(p, "reads", m.reads, m.records);
		row(p, "writes", m.writes, m.records);
		row(p, "records lost (gap markers)", m.lost, 0);
		row(p, "distinct 32-byte lines", m.lines, 0);
		row(p, "distinct 4 KiB pages", m.pages, 0);
		if (m.mem_cycles)
			pf(p,
			   "<tr><td>memory addresses</td><td class=\"n\">0x%08x to 0x%08x</td><td></td></tr>\n",
			   m.lo, m.hi);
		pf(p,
		   "</table>\n<table><tr><th>special cycle</th><th>records</th><th></th></tr>\n");
		for (unsigned k = 0; k < BACH_NSPECIAL; k++)
			row(p, bach_special_name(k), m.special[k], 0);
		pf(p, "</table>\n");
	}
	bach_stats_free(&st);
	return status;
}

static int build(struct page *p, char *dir, const struct bach_manifest *m)
{
	char now[32];
	time_t t = time(NULL);
	struct tm tm;
	int status;

	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	pf(p,
	   "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>bach report: ");
	esc(p, dir);
	pf(p, "</title><style>%s</style></head><body>\n<h1>Capture ", css);
	esc(p, dir);
	pf(p,
	   "</h1>\n<table>\n<tr><td>report written by</td><td>bach %s, %s</td></tr>\n<tr><td>manifest version</td><td>",
	   BACH_VERSION, now);
	esc(p, m->version[0] ? m->version : "(no started event)");
	pf(p, "</td></tr>\n");
	for (size_t i = 0; i < m->nevents; i++) {
		if (m->events[i].kind != BACH_EV_STARTED)
			continue;
		pf(p, "<tr><td>started</td><td>");
		esc(p, m->events[i].time);
		pf(p, ", driver ");
		esc(p, m->events[i].detail);
		pf(p, "</td></tr>\n");
	}
	pf(p, "<tr><td>ended</td><td>");
	esc(p,
	    m->ended
		    ? m->state
		    : "no ended event: still running, or cut off (bach recover)");
	pf(p, "</td></tr>\n");
	if (m->has_totals)
		pf(p,
		   "<tr><td>produced, written, lost</td><td>%llu, %llu, %llu</td></tr>\n",
		   (unsigned long long)m->produced,
		   (unsigned long long)m->written, (unsigned long long)m->lost);
	pf(p,
	   "<tr><td>segments, gap events, records lost in them</td><td>%zu, %llu, %llu</td></tr>\n</table>\n",
	   m->nsegs, (unsigned long long)m->gaps,
	   (unsigned long long)m->gap_lost);
	timeline(p, m);
	status = stats(p, dir);
	if (status)
		return status;
	pf(p, "<h2>Pictures (bach plot)</h2>\n");
	status = picture(
		p, PLOT_MAP, dir,
		"Address map: physical address against trace position; gaps in red, marks dashed blue.");
	if (!status)
		status = picture(p, PLOT_MIX, dir,
				 "Bus cycle mix over the trace.");
	if (!status)
		status = picture(
			p, PLOT_WSS, dir,
			"Working set: distinct 32-byte lines and 4 KiB pages per window.");
	if (!status)
		status = picture(
			p, PLOT_MRC, dir,
			"Miss ratio of fully associative LRU caches with 32-byte lines (bach mrc).");
	pf(p, "</body></html>\n");
	return status;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct page page = { 0 };
	struct bach_manifest m;
	struct bach_outfile f;
	const char *out = NULL;
	char err[512];
	int c, fd, status, rc;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		if (c != 'o')
			return usage_error("bad option");
		out = optarg;
	}
	if (!out)
		return usage_error("no -o FILE.html given");
	if (optind + 1 != argc)
		return usage_error(optind == argc ? "no CAPTURE given"
						  : "one CAPTURE at a time");
	fd = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errmsg("%s: %s", argv[optind],
		       errno == ENOTDIR ? "not a capture directory"
					: strerror(errno));
		return EXIT_USAGE;
	}
	rc = bach_manifest_load(fd, argv[optind], &m, err, sizeof(err));
	close(fd);
	if (rc) {
		if (rc == -ENOENT)
			errmsg("%s: no manifest.jsonl: not a capture directory",
			       argv[optind]);
		else
			errmsg("%s", err);
		bach_manifest_free(&m);
		return rc == -ENOENT ? EXIT_USAGE : bach_exit_status(rc);
	}
	status = check_output(out, (const char *const *)argv + optind, 1);
	if (!status)
		status = build(&page, argv[optind], &m);
	bach_manifest_free(&m);
	if (!status && page.err) {
		errmsg("out of memory");
		status = EXIT_USAGE;
	}
	if (status)
		goto out;
	catch_signals();
	rc = bach_outfile_open(&f, out);
	if (!rc) {
		size_t off = 0;

		while (off < page.len && !rc) {
			ssize_t n = write(f.fd, page.buf + off, page.len - off);

			if (n < 0 && errno != EINTR)
				rc = -errno;
			else if (n > 0)
				off += (size_t)n;
		}
		if (rc)
			bach_outfile_abort(&f);
		else
			rc = bach_outfile_commit(&f);
	}
	if (rc) {
		errmsg("%s: %s", out, strerror(-rc));
		status = EXIT_USAGE;
	}
out:
	free(page.buf);
	return status;
}

const struct bach_cmd cmd_report = {
	.name = "report",
	.run = run,
	.summary = "one self-contained HTML page about a capture",
	.help = "usage: bach report CAPTURE -o FILE.html\n"
		"\n"
		"Writes one HTML page, readable offline with nothing beside it:\n"
		"bach's and the manifest's versions, the driver, how the capture\n"
		"ended and its totals; the manifest as a timeline (segments as a\n"
		"bar, then every event: gaps and their causes, stalls, marks,\n"
		"device lost and back); bach stat's tables; and the pictures of\n"
		"bach plot map, mix, wss and mrc as inline PNG images.\n"
		"\n"
		"  -o, --output FILE  the page (written whole or not at all)\n",
};
