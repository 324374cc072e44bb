// SPDX-License-Identifier: MIT
/*
 * bach report CAPTURE|TRACE -o FILE.html: one page a lab can attach to a
 * capture (or a plain trace file), readable offline and printable
 * (docs/analysis.md section 5): its provenance (labels, host, versions,
 * driver and options, policy, duration and rates), the timeline drawn as
 * an inline SVG picture and listed, bach stat's tables and the pictures
 * of bach plot as PNG data: URIs, each with its alt text. No script, no
 * external file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
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
#include "lib/options.h"
#include "plot.h"
#include "plot_kinds.h"

#define MAX_ROWS  2000 /* timeline rows in the table; the rest are counted */
#define MAX_TICKS 2000 /* lines of each kind on the timeline picture */

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
		   const char *alt, const char *caption)
{
	struct plot_opts o = { .line = 32, .sample = 1 };
	struct b64 b = { .p = p };
	int status;

	pf(p, "<figure><img alt=\"");
	esc(p, alt);
	pf(p, "\" src=\"data:image/png;base64,");
	status = plot_draw(kind, 1, &dir, &o, PLOT_PNG, put_base64, &b);
	if (b.n)
		b64_quad(&b, b.n);
	pf(p, "\"><figcaption>");
	esc(p, caption);
	pf(p, "</figcaption></figure>\n");
	return status;
}

static const char *const css =
	"body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}img{max-width:100%;border:1px solid #ddd}.gap{color:#a34800}.stall{color:#8a5d00}.device_lost,.device_back{color:#9c4a7a}figure{margin:1em 0}svg.tl{width:100%;height:auto;border:1px solid #ddd}\n"
	"@media print{body{margin:0;max-width:none;font-size:9pt;color:#000}h2{break-after:avoid}table,figure,svg{break-inside:avoid}img{border:none;max-width:100%}td,th{border-color:#999}svg,img{print-color-adjust:exact;-webkit-print-color-adjust:exact}}";

/* every event of the manifest, in a table */
static void timeline(struct page *p, const struct bach_manifest *m)
{
	uint64_t shown = 0;
	size_t k = 0;

	pf(p,
	   "<table><tr><th>time (UTC)</th><th>event</th><th>at (record)</th><th>count</th><th>detail</th></tr>\n");
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

/* what one pass over the records gathers: bach stat's counts and, for a
 * plain file, where its gap markers are (its timeline) */
struct scan {
	struct bach_stats *st;
	uint64_t pos;
	uint64_t gap_at[MAX_TICKS], gap_lost[MAX_TICKS];
	size_t ngaps;
	uint64_t more_gaps;
};

static void scan_add(void *ctx, const uint8_t *recs, size_t n)
{
	struct scan *sc = ctx;

	bach_stats_add(sc->st, recs, n);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = recs + i * BACH_REC_SIZE;

		if (!bach_rec_is_gap(r))
			continue;
		if (sc->ngaps == MAX_TICKS) {
			sc->more_gaps++;
			continue;
		}
		sc->gap_at[sc->ngaps] = sc->pos + i;
		sc->gap_lost[sc->ngaps++] = bach_get_be32(r);
	}
	sc->pos += n;
}

static void row(struct page *p, const char *name, uint64_t v, uint64_t of)
{
	pf(p, "<tr><td>%s</td><td class=\"n\">%llu</td><td class=\"n\">", name,
	   (unsigned long long)v);
	if (of)
		pf(p, "%.2f%%", 100.0 * (double)v / (double)of);
	pf(p, "</td></tr>\n");
}

/* bach stat's tables, its types in its order */
static void stats(struct page *p, const struct bach_summary *m)
{
	pf(p,
	   "<h2>Records (bach stat)</h2>\n<table><tr><th>type</th><th>records</th><th>share</th></tr>\n");
	for (size_t i = 0; i < STAT_NTYPES; i++)
		row(p, bach_type_name(type_order[i]), m->by_type[type_order[i]],
		    m->records);
	row(p, "INVALID", m->invalid, m->records);
	row(p, "gap markers", m->gaps, m->records);
	row(p, "all records", m->records, 0);
	pf(p,
	   "</table>\n<table><tr><th>figure</th><th>value</th><th></th></tr>\n");
	row(p, "reads", m->reads, m->records);
	row(p, "writes", m->writes, m->records);
	row(p, "records lost (gap markers)", m->lost, 0);
	row(p, "distinct 32-byte lines", m->lines, 0);
	row(p, "distinct 4 KiB pages", m->pages, 0);
	if (m->mem_cycles)
		pf(p,
		   "<tr><td>memory addresses</td><td class=\"n\">0x%08x to 0x%08x</td><td></td></tr>\n",
		   m->lo, m->hi);
	pf(p,
	   "</table>\n<table><tr><th>special cycle</th><th>records</th><th></th></tr>\n");
	for (unsigned k = 0; k < BACH_NSPECIAL; k++)
		row(p, bach_special_name(k), m->special[k], 0);
	pf(p, "</table>\n");
}

/* bach stat --time's lines, when the trace has timing sidecars */
static int timing(struct page *p, char *path)
{
	struct trace_times tt = { 0 };
	struct tstat ts = { 0 };
	struct bach_reader *r = NULL;
	const uint8_t *recs;
	const uint64_t *clk;
	char *text = NULL;
	size_t len = 0;
	ssize_t n = 0;
	FILE *f;
	int status;

	if (!bach_times_present(path))
		return EXIT_OK;
	status = open_traces(&r, 1, &path);
	if (!status)
		status = times_open(&tt, true);
	while (!status && (n = bach_reader_read(r, &recs)) > 0) {
		status = times_block(&tt, r, (size_t)n, &clk);
		if (!status)
			tstat_add(&ts, recs, clk, (size_t)n, tt.hz);
	}
	if (!status && n < 0) {
		errmsg("%s", bach_reader_strerror(r));
		status = bach_exit_status((int)n);
	} else if (!status) {
		status = times_finish(&tt);
	}
	times_close(&tt);
	bach_reader_free(r);
	if (status)
		return status;
	f = open_memstream(&text, &len);
	if (!f) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	print_time_text(f, &ts);
	fclose(f);
	pf(p, "<h2>Timing (bach stat --time)</h2>\n<pre>");
	for (char *l = text, *nl; l && *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			nl = l + strlen(l) - 1;
		else
			*nl = 0;
		esc(p, l);
		pf(p, "\n");
	}
	pf(p, "</pre>\n");
	free(text);
	return EXIT_OK;
}

/* ---- provenance ---------------------------------------------------- */

/* "2026-11-21T22:30:00.123Z" as seconds since the epoch; -1 when not one */
static double iso_seconds(const char *s)
{
	struct tm tm = { 0 };
	double frac = 0, f = 0.1;
	int n = 0;

	if (sscanf(s, "%d-%d-%dT%d:%d:%d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    !n)
		return -1;
	if (s[n] == '.')
		for (const char *c = s + n + 1; *c >= '0' && *c <= '9';
		     c++, f /= 10)
			frac += (*c - '0') * f;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + frac;
}

/* the started event as JSON (its options and configuration are not in
 * struct bach_manifest); NULL when there is none */
static json_t *started_event(const char *dir)
{
	char path[4200], *line = NULL;
	size_t cap = 0;
	json_t *o = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest.jsonl", dir);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		const char *ev;

		o = json_loads(line, 0, NULL);
		ev = json_string_value(json_object_get(o, "event"));
		if (ev && !strcmp(ev, "started"))
			break;
		json_decref(o);
		o = NULL;
	}
	free(line);
	fclose(f);
	return o;
}

static void prov(struct page *p, const char *key, const char *value)
{
	pf(p, "<tr><th scope=\"row\">%s</th><td>", key);
	esc(p, value);
	pf(p, "</td></tr>\n");
}

/* a rate in records per second, with its unit */
static void rate(char *b, size_t len, double r)
{
	if (r >= 1e6)
		snprintf(b, len, "%.2f M records/s", r / 1e6);
	else if (r >= 1e3)
		snprintf(b, len, "%.2f k records/s", r / 1e3);
	else
		snprintf(b, len, "%.1f records/s", r);
}

static void provenance(struct page *p, const char *dir,
		       const struct bach_manifest *m, uint64_t records)
{
	json_t *st = started_event(dir), *v;
	double t0 = iso_seconds(m->start_time), t1 = iso_seconds(m->end_time);
	double prev = t0, peak = 0;
	char b[512];
	const char *key;
	size_t len = 0;

	pf(p, "<h2>Provenance</h2>\n<table>\n");
	prov(p, "capture", m->capture[0] ? m->capture : "(not named)");
	for (size_t i = 0; i < m->nlabels; i++) {
		snprintf(b, sizeof(b), "%s=%s", m->labels[i].key,
			 m->labels[i].value);
		prov(p, "label", b);
	}
	if (!m->nlabels)
		prov(p, "labels", "(none)");
	prov(p, "host", m->host[0] ? m->host : "(not recorded)");
	snprintf(b, sizeof(b), "bach %s (the capture's); manifest version %s",
		 m->bach_version[0] ? m->bach_version : "(not recorded)",
		 m->version[0] ? m->version : "(no started event)");
	prov(p, "versions", b);
	prov(p, "gateware", m->gateware[0] ? m->gateware : "(none reported)");
	b[0] = 0;
	json_object_foreach(json_object_get(st, "options"), key, v)
	{
		if (len < sizeof(b))
			len += (size_t)snprintf(
				b + len, sizeof(b) - len, "%s%s=%s",
				len ? ", " : "", key,
				json_is_string(v) ? json_string_value(v) : "?");
	}
	pf(p, "<tr><th scope=\"row\">driver</th><td>");
	esc(p, m->driver[0] ? m->driver : "(not recorded)");
	if (b[0]) {
		pf(p, ", options ");
		esc(p, b);
	}
	pf(p, "</td></tr>\n");
	v = json_object_get(json_object_get(st, "config"), "policy");
	prov(p, "policy",
	     json_is_string(v) ? json_string_value(v) : "(not recorded)");
	prov(p, "started",
	     m->start_time[0] ? m->start_time : "(no started event)");
	snprintf(
		b, sizeof(b), "%s%s%s",
		m->ended
			? m->state
			: "no ended event: still running, or cut off (bach recover)",
		m->end_time[0] ? ", " : "", m->end_time);
	prov(p, "ended", b);
	if (t0 >= 0 && t1 >= t0) {
		snprintf(b, sizeof(b), "%.3f s", t1 - t0);
		prov(p, "duration", b);
	}
	if (t0 >= 0 && t1 > t0) {
		rate(b, sizeof(b),
		     (double)(m->has_totals ? m->written : records) /
			     (t1 - t0));
		prov(p, "mean rate (records written / duration)", b);
	}
	/* each segment's records over the time since the one before closed */
	for (size_t i = 0; i < m->nevents && t0 >= 0; i++) {
		const struct bach_manifest_event *e = &m->events[i];
		double t = iso_seconds(e->time);

		if (e->kind != BACH_EV_SEGMENT || t < 0)
			continue;
		if (t - prev >= 0.001 && (double)e->count / (t - prev) > peak)
			peak = (double)e->count / (t - prev);
		prev = t;
	}
	if (peak > 0) {
		rate(b, sizeof(b), peak);
		prov(p, "peak rate (the busiest segment)", b);
	}
	if (m->has_totals) {
		snprintf(b, sizeof(b), "%llu, %llu, %llu",
			 (unsigned long long)m->produced,
			 (unsigned long long)m->written,
			 (unsigned long long)m->lost);
		prov(p, "produced, written, lost", b);
	}
	snprintf(b, sizeof(b), "%zu, %llu, %llu", m->nsegs,
		 (unsigned long long)m->gaps, (unsigned long long)m->gap_lost);
	prov(p, "segments, gap events, records lost in them", b);
	pf(p, "</table>\n");
	json_decref(st);
}

/* ---- the timeline as a picture -------------------------------------- */

static double tl_x(uint64_t at, uint64_t total)
{
	if (at > total)
		at = total;
	return 10 + 980.0 * (total ? (double)at / (double)total : 0);
}

/* the colours and dashes of bach plot's rules (plot_canvas.c: Okabe and
 * Ito's palette), and darker ones of their hues for text on white */
#define TL_GAP	    "#d55e00" /* vermillion, solid */
#define TL_MARK	    "#000000" /* black, dashed */
#define TL_MARKER   "#009e73" /* bluish green ticks */
#define TL_DEVICE   "#cc79a7" /* reddish purple, dash-dot */
#define TL_GAP_TEXT "#a34800"
#define TL_DEV_TEXT "#9c4a7a"

static void tl_line(struct page *p, double x, int y0, int y1,
		    const char *colour, const char *dash)
{
	pf(p, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"",
	   x, y0, x, y1, colour);
	if (dash)
		pf(p, " stroke-dasharray=\"%s\"", dash);
	pf(p, "/>");
}

/*
 * A label above the bar (each kind its own row: gaps and device events y
 * 18, marks y 32), right of its line, or left of it where it would leave
 * the picture, if it starts after the end of the last one in its row
 * (*last). The browser draws it in its own sans-serif: its width is
 * guessed generously, 0.62 em a character.
 */
static void tl_label(struct page *p, double x, int y, double *last,
		     const char *colour, const char *s)
{
	double w = 0, x0 = x + 2;

	for (const char *c = s; *c; c++)
		w += ((unsigned char)*c & 0xc0) != 0x80 ? 11 * 0.62 : 0;
	if (x0 + w > 998)
		x0 = x - 2 - w;
	if (!s[0] || x0 < *last + 6 || x0 < 0)
		return;
	pf(p, "<text x=\"%.1f\" y=\"%d\" fill=\"%s\"%s>",
	   x0 == x + 2 ? x0 : x - 2, y, colour,
	   x0 == x + 2 ? "" : " text-anchor=\"end\"");
	esc(p, s);
	pf(p, "</text>");
	*last = x0 + w;
}

/*
 * The segments as a bar in proportion to their records, with every gap
 * (vermillion, labelled as bach plot labels it), user's mark (dashed
 * black, labelled), in-band marker (bluish green) and device event
 * (reddish purple, dash-dot) at its position, in bach plot's palette, and
 * an axis of positions with 1-2-5 ticks; m NULL: a plain file, one bar
 * and its gap markers.
 */
static void timeline_svg(struct page *p, const char *name,
			 const struct bach_manifest *m, const struct scan *sc)
{
	uint64_t total = 0, at = 0, gaps = 0, marks = 0, markers = 0, dev = 0;
	double last = -1e9, last_mark = -1e9;
	char b[200];

	if (m) {
		for (size_t i = 0; i < m->nsegs; i++)
			total += m->segs[i].records;
		for (size_t i = 0; i < m->nevents; i++) {
			gaps += m->events[i].kind == BACH_EV_GAP;
			dev += m->events[i].kind == BACH_EV_DEVICE_LOST ||
			       m->events[i].kind == BACH_EV_DEVICE_BACK;
		}
		for (size_t i = 0; i < m->nmarks; i++) {
			markers += m->marks[i].marker;
			marks += !m->marks[i].marker;
		}
	} else {
		total = sc->pos;
		gaps = sc->ngaps + sc->more_gaps;
	}
	pf(p,
	   "<figure><svg class=\"tl\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-labelledby=\"tl-title tl-desc\" viewBox=\"0 0 1000 120\" width=\"1000\" height=\"120\" font-family=\"sans-serif\" font-size=\"11\"><title id=\"tl-title\">Timeline of ");
	esc(p, name);
	pf(p,
	   "</title><desc id=\"tl-desc\">%zu segment%s over %llu records, drawn in proportion to their records; %llu gap%s (vermillion lines), %llu mark%s (dashed black lines), %llu in-band marker%s (bluish green ticks) and %llu device event%s (reddish purple dash-dot lines) at their record positions.</desc>",
	   m ? m->nsegs : (size_t)1, m && m->nsegs == 1 ? "" : "s",
	   (unsigned long long)total, (unsigned long long)gaps,
	   gaps == 1 ? "" : "s", (unsigned long long)marks,
	   marks == 1 ? "" : "s", (unsigned long long)markers,
	   markers == 1 ? "" : "s", (unsigned long long)dev,
	   dev == 1 ? "" : "s");
	for (size_t i = 0; i < (m ? m->nsegs : 1); i++) {
		uint64_t n = m ? m->segs[i].records : total;
		bool bad = m && (m->segs[i].removed || m->segs[i].error);

		pf(p,
		   "<rect x=\"%.1f\" y=\"40\" width=\"%.1f\" height=\"30\" fill=\"%s\"><title>",
		   tl_x(at, total), tl_x(at + n, total) - tl_x(at, total),
		   bad	   ? "#999999"
		   : i % 2 ? "#56b4e9"
			   : "#0072b2");
		esc(p, m ? m->segs[i].name : name);
		pf(p, ": %llu records</title></rect>", (unsigned long long)n);
		at += n;
	}
	for (size_t i = 0, k = 0; m && i < m->nmarks && k < MAX_TICKS; i++)
		if (m->marks[i].marker) {
			tl_line(p, tl_x(m->marks[i].at, total), 62, 78,
				TL_MARKER, NULL);
			k++;
		}
	for (size_t i = 0, k = 0; m && i < m->nevents && k < MAX_TICKS; i++) {
		const struct bach_manifest_event *e = &m->events[i];
		double x = tl_x(e->at, total);

		if (!e->has_at ||
		    (e->kind != BACH_EV_GAP && e->kind != BACH_EV_DEVICE_LOST &&
		     e->kind != BACH_EV_DEVICE_BACK))
			continue;
		k++;
		if (e->kind == BACH_EV_GAP) {
			tl_line(p, x, 22, 80, TL_GAP, NULL);
			snprintf(b, sizeof(b), "%llu records lost (%.40s)",
				 (unsigned long long)e->count, e->detail);
			tl_label(p, x, 18, &last, TL_GAP_TEXT, b);
		} else {
			tl_line(p, x, 22, 80, TL_DEVICE, "8 3 2 3");
			tl_label(p, x, 18, &last, TL_DEV_TEXT,
				 e->kind == BACH_EV_DEVICE_LOST
					 ? "device lost"
					 : "device back");
		}
	}
	for (size_t i = 0; !m && i < sc->ngaps; i++) {
		double x = tl_x(sc->gap_at[i], total);

		tl_line(p, x, 22, 80, TL_GAP, NULL);
		snprintf(b, sizeof(b), "%llu records lost",
			 (unsigned long long)sc->gap_lost[i]);
		tl_label(p, x, 18, &last, TL_GAP_TEXT, b);
	}
	for (size_t i = 0, k = 0; m && i < m->nmarks && k < MAX_TICKS; i++)
		if (!m->marks[i].marker) {
			double x = tl_x(m->marks[i].at, total);

			tl_line(p, x, 34, 80, TL_MARK, "4 3");
			tl_label(p, x, 32, &last_mark, TL_MARK,
				 m->marks[i].text ? m->marks[i].text : "");
			k++;
		}
	/* the axis: ticks at 1-2-5 steps, as bach plot's */
	{
		double span = total ? (double)total : 1;
		double step = nice_step(span, 8);

		for (double v = 0; v <= span; v += step) {
			double x = 10 + 980 * v / span;

			si(b, sizeof(b), v);
			pf(p,
			   "<line x1=\"%.1f\" y1=\"70\" x2=\"%.1f\" y2=\"75\" stroke=\"#000\"/><text x=\"%.1f\" y=\"88\" text-anchor=\"%s\">%s</text>",
			   x, x, x,
			   x < 30    ? "start"
			   : x > 970 ? "end"
				     : "middle",
			   b);
		}
	}
	pf(p,
	   "<text x=\"500\" y=\"112\" text-anchor=\"middle\">trace position (records from the start; %llu in all)</text></svg>",
	   (unsigned long long)total);
	pf(p,
	   "<figcaption>The timeline: segments in proportion to their records; gaps vermillion, marks dashed black, in-band markers bluish green, device lost and back reddish purple (dash-dot), as in bach plot's pictures.</figcaption></figure>\n");
}

static int build(struct page *p, char *dir, const struct bach_manifest *m)
{
	static struct bach_stats st;
	struct scan *sc = calloc(1, sizeof(*sc));
	struct bach_summary sum;
	char now[32], alt[600];
	time_t t = time(NULL);
	struct tm tm;
	int status;

	if (!sc || bach_stats_init(&st)) {
		free(sc);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	sc->st = &st;
	status = read_traces(1, &dir, NULL, scan_add, sc, NULL);
	bach_stats_summary(&st, &sum);
	bach_stats_free(&st);
	if (status) {
		free(sc);
		return status;
	}
	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	pf(p,
	   "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>bach report: ");
	esc(p, dir);
	/* longer than pf()'s line */
	pf(p, "</title><style>");
	put(p, css, strlen(css));
	pf(p, "</style></head><body>\n<h1>%s ", m ? "Capture" : "Trace");
	esc(p, dir);
	pf(p,
	   "</h1>\n<table>\n<tr><td>report written by</td><td>bach %s, %s</td></tr>\n<tr><td>records</td><td>%llu</td></tr>\n</table>\n",
	   BACH_VERSION, now, (unsigned long long)sc->pos);
	if (m)
		provenance(p, dir, m, sc->pos);
	else
		pf(p,
		   "<p>A plain trace file: no manifest, so no labels, driver or timing of the capture; its gaps are its gap markers.</p>\n");
	pf(p, "<h2>Timeline</h2>\n");
	timeline_svg(p, dir, m, sc);
	if (m)
		timeline(p, m);
	stats(p, &sum);
	status = timing(p, dir);
	if (status) {
		free(sc);
		return status;
	}
	pf(p, "<h2>Pictures (bach plot)</h2>\n");
	snprintf(
		alt, sizeof(alt),
		"Address map of %.200s: physical address (hex, the ranges in use) against trace position over %llu records, coloured by the commonest kind of bus cycle; %llu gap markers as red vertical lines, marks as dashed blue ones.",
		dir, (unsigned long long)sc->pos, (unsigned long long)sum.gaps);
	status = picture(
		p, PLOT_MAP, dir, alt,
		"Address map: physical address against trace position; gaps in red, marks dashed blue.");
	snprintf(
		alt, sizeof(alt),
		"Bus cycle mix of %.200s: the share of instruction fetches, data reads, writes, writebacks, I/O, special and invalid cycles in each column of the trace's %llu records, gaps and marks as vertical lines.",
		dir, (unsigned long long)sc->pos);
	if (!status)
		status = picture(p, PLOT_MIX, dir, alt,
				 "Bus cycle mix over the trace.");
	snprintf(
		alt, sizeof(alt),
		"Working set of %.200s: distinct 32-byte lines and 4 KiB pages in each window of records along the trace (%llu lines and %llu pages over the whole trace), gaps and marks as vertical lines.",
		dir, (unsigned long long)sum.lines,
		(unsigned long long)sum.pages);
	if (!status)
		status = picture(
			p, PLOT_WSS, dir, alt,
			"Working set: distinct 32-byte lines and 4 KiB pages per window.");
	snprintf(
		alt, sizeof(alt),
		"Miss-ratio curve of %.200s: the miss ratio of fully associative LRU caches of 32-byte lines from 1 KiB to 32 MiB, on a log scale of cache size.",
		dir);
	if (!status)
		status = picture(
			p, PLOT_MRC, dir, alt,
			"Miss ratio of fully associative LRU caches with 32-byte lines (bach mrc).");
	pf(p, "</body></html>\n");
	free(sc);
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
	if (fd < 0 && errno == ENOTDIR) { /* a plain trace file */
		struct stat st;
		char esc_name[512];

		/* read several times (bach stat's pass, then each picture):
		 * a FIFO would wait for a second writer for ever */
		if (stat(argv[optind], &st) == 0 && !S_ISREG(st.st_mode))
			return usage_error(
				"%s: not a capture directory or a trace file (%s): the report reads it several times",
				bach_escape_ctl(esc_name, sizeof(esc_name),
						argv[optind]),
				bach_file_type(st.st_mode));
		status = check_output(out, (const char *const *)argv + optind,
				      1);
		if (!status)
			status = build(&page, argv[optind], NULL);
		goto built;
	}
	if (fd < 0) {
		errmsg("%s: %s", argv[optind], strerror(errno));
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
built:
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
	.summary = "one self-contained HTML page about a capture or a trace",
	.help = "usage: bach report CAPTURE|TRACE -o FILE.html\n"
		"\n"
		"Writes one HTML page, readable offline with nothing beside it and\n"
		"printable: the capture's provenance (labels, host, bach and\n"
		"gateware versions, driver and its options, policy, duration, mean\n"
		"and peak rate, how it ended and its totals); the timeline drawn\n"
		"(segments in proportion to their records, gaps, marks, markers and\n"
		"device events in place), then every event of the manifest; bach\n"
		"stat's tables; and the pictures of bach plot map, mix, wss and mrc\n"
		"as inline PNG images, each with its alt text. A plain TRACE file\n"
		"(.byu, .byu.gz) has no manifest: its gap markers are its gaps.\n"
		"\n"
		"  -o, --output FILE  the page (written whole or not at all)\n",
};
