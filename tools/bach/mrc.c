// SPDX-License-Identifier: MIT
/*
 * bach mrc: miss-ratio curves in one pass, the reuse-distance histogram
 * and working sets over time (docs/analysis.md section 3).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "lib/analysis/cachesim.h"
#include "lib/analysis/mrc.h"

enum mode { CURVE, REUSE, WSS };
enum format { TEXT, CSV, JSON };

struct opts {
	struct bach_mrc_config cfg;
	uint64_t sizes[BACH_MRC_MAX_SIZES];
	uint64_t window;
	enum mode mode;
	enum format format;
	struct rec_filter flt; /* --type, --addr, --port */
	uint64_t start, end;   /* --range */
	const char *partial;   /* --partial FILE */
};

/* "1 KiB", "32 MiB", or bytes */
static void human(char *buf, size_t len, uint64_t v)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB" };
	int u = 0;

	while (u < 3 && v >= 1024 && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)v, unit[u]);
}

/* --kind's words and what each counts */
static const char *const kind_names[] = { "i", "d", "all", NULL };
static const unsigned kind_bits[] = { BACH_MRC_KIND_I, BACH_MRC_KIND_D,
				      BACH_MRC_KIND_ALL };

static const char *kind_name(unsigned kinds)
{
	for (int i = 0; kind_names[i]; i++)
		if (kind_bits[i] == kinds)
			return kind_names[i];
	return "all";
}

static void print_curve(const struct opts *o, const struct bach_mrc *m)
{
	struct bach_mrc_point pts[BACH_MRC_MAX_SIZES];
	size_t n = o->cfg.nsizes;
	char size[32];
	double nrate;
	uint64_t near = bach_mrc_near(m, &nrate);

	bach_mrc_points(m, pts);
	if (o->format == JSON) {
		printf("{\"line\":%u,\"assoc\":", o->cfg.line);
		if (o->cfg.assoc)
			printf("%u", o->cfg.assoc);
		else
			printf("\"full\"");
		printf(",\"kind\":\"%s\",\"sample\":%g,\"flushes\":%llu,",
		       kind_name(o->cfg.kinds), o->cfg.sample,
		       (unsigned long long)bach_mrc_flushes(m));
		if (near)
			printf("\"near\":{\"max_size\":%llu,\"sample\":%g},",
			       (unsigned long long)near, nrate);
		printf("\"points\":[");
		for (size_t i = 0; i < n; i++)
			printf("%s{\"size\":%llu,\"refs\":%llu,\"misses\":%llu,\"miss_ratio\":%.6f}",
			       i ? "," : "", (unsigned long long)pts[i].size,
			       (unsigned long long)pts[i].refs,
			       (unsigned long long)pts[i].misses,
			       pts[i].miss_ratio);
		printf("]}\n");
		return;
	}
	if (o->format == CSV) {
		printf("size,refs,misses,miss_ratio\n");
		for (size_t i = 0; i < n; i++)
			printf("%llu,%llu,%llu,%.6f\n",
			       (unsigned long long)pts[i].size,
			       (unsigned long long)pts[i].refs,
			       (unsigned long long)pts[i].misses,
			       pts[i].miss_ratio);
		return;
	}
	printf("# %u-byte lines, ", o->cfg.line);
	if (o->cfg.assoc)
		printf("%u-way LRU", o->cfg.assoc);
	else
		printf("fully associative LRU");
	printf(", kind %s, ", kind_name(o->cfg.kinds));
	if (o->cfg.sample < 1)
		printf("sampled at %g (estimates)", o->cfg.sample);
	else
		printf("exact");
	printf(", %llu flush%s\n", (unsigned long long)bach_mrc_flushes(m),
	       bach_mrc_flushes(m) == 1 ? "" : "es");
	if (near) {
		/* SHARDS sees C x R sampled lines of a C-line cache */
		human(size, sizeof(size), near);
		if (nrate < 1)
			printf("# up to %s: the near stack, lines sampled at %g\n",
			       size, nrate);
		else
			printf("# up to %s: the near stack, exact\n", size);
	}
	printf("%12s %14s %14s %12s\n", "size", "refs", "misses", "miss_ratio");
	for (size_t i = 0; i < n; i++) {
		human(size, sizeof(size), pts[i].size);
		printf("%12s %14llu %14llu %12.6f\n", size,
		       (unsigned long long)pts[i].refs,
		       (unsigned long long)pts[i].misses, pts[i].miss_ratio);
	}
}

static void print_reuse(const struct opts *o, const struct bach_mrc *m)
{
	uint64_t h[BACH_MRC_HIST_BUCKETS], cold;
	size_t n = bach_mrc_reuse(m, h, &cold);

	if (o->format == JSON)
		printf("{\"line\":%u,\"kind\":\"%s\",\"sample\":%g,\"references\":%llu,\"cold\":%llu,\"buckets\":[",
		       o->cfg.line, kind_name(o->cfg.kinds), o->cfg.sample,
		       (unsigned long long)bach_mrc_refs(m),
		       (unsigned long long)cold);
	else if (o->format == CSV)
		printf("from,to,refs\ncold,,%llu\n", (unsigned long long)cold);
	else
		printf("# reuse distance in %u-byte lines, kind %s%s\n"
		       "%12s %12s %14s\n%12s %12s %14llu\n",
		       o->cfg.line, kind_name(o->cfg.kinds),
		       o->cfg.sample < 1 ? ", sampled (estimates)" : "", "from",
		       "to", "refs", "cold", "", (unsigned long long)cold);
	for (size_t b = 0; b < n; b++) {
		unsigned long long lo = b ? 1ull << (b - 1) : 0;
		unsigned long long hi = b ? (1ull << b) - 1 : 0;
		bool last = b == n - 1;

		if (o->format == JSON) {
			printf("%s{\"from\":%llu,\"to\":", b ? "," : "", lo);
			if (last)
				printf("null");
			else
				printf("%llu", hi);
			printf(",\"refs\":%llu}", (unsigned long long)h[b]);
		} else if (o->format == CSV) {
			printf("%llu,", lo);
			if (!last)
				printf("%llu", hi);
			printf(",%llu\n", (unsigned long long)h[b]);
		} else if (h[b] || !last) {
			char to[24] = "";

			if (!last)
				snprintf(to, sizeof(to), "%llu", hi);
			printf("%12llu %12s %14llu\n", lo, to,
			       (unsigned long long)h[b]);
		}
	}
	if (o->format == JSON)
		printf("]}\n");
}

static void print_wss(const struct opts *o, const struct bach_wss_window *w,
		      size_t n)
{
	if (o->format == JSON)
		printf("{\"window\":%llu,\"line\":%u,\"kind\":\"%s\",\"windows\":[",
		       (unsigned long long)o->window, o->cfg.line,
		       kind_name(o->cfg.kinds));
	else if (o->format == CSV)
		printf("start,records,refs,lines,pages\n");
	else
		printf("# working set per %llu records: distinct %u-byte lines and 4 KiB pages, kind %s\n%14s %10s %10s %10s %10s\n",
		       (unsigned long long)o->window, o->cfg.line,
		       kind_name(o->cfg.kinds), "start", "records", "refs",
		       "lines", "pages");
	for (size_t i = 0; i < n; i++) {
		const struct bach_wss_window *x = &w[i];

		if (o->format == JSON)
			printf("%s{\"start\":%llu,\"records\":%llu,\"refs\":%llu,\"lines\":%llu,\"pages\":%llu}",
			       i ? "," : "", (unsigned long long)x->start,
			       (unsigned long long)x->records,
			       (unsigned long long)x->refs,
			       (unsigned long long)x->lines,
			       (unsigned long long)x->pages);
		else
			printf(o->format == CSV
				       ? "%llu,%llu,%llu,%llu,%llu\n"
				       : "%14llu %10llu %10llu %10llu %10llu\n",
			       (unsigned long long)x->start,
			       (unsigned long long)x->records,
			       (unsigned long long)x->refs,
			       (unsigned long long)x->lines,
			       (unsigned long long)x->pages);
	}
	if (o->format == JSON)
		printf("]}\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "line", required_argument, NULL, 'l' },
		{ "sizes", required_argument, NULL, 's' },
		{ "min", required_argument, NULL, 'm' },
		{ "max", required_argument, NULL, 'M' },
		{ "assoc", required_argument, NULL, 'a' },
		{ "kind", required_argument, NULL, 'k' },
		{ "sample", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "reuse", no_argument, NULL, 'R' },
		{ "window", required_argument, NULL, 'w' },
		{ "type", required_argument, NULL, FILTER_TYPE },
		{ "addr", required_argument, NULL, FILTER_ADDR },
		{ "port", required_argument, NULL, FILTER_PORT },
		{ "range", required_argument, NULL, 'g' },
		{ "partial", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *list = NULL, *min = NULL, *max = NULL;
	bool reuse = false;
	char why[200], *end;
	uint64_t v;
	int c, n;

	memset(o, 0, sizeof(*o));
	o->cfg.line = 32;
	o->cfg.kinds = BACH_MRC_KIND_ALL;
	o->cfg.sample = 1;
	o->end = UINT64_MAX;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (range_arg(optarg, &o->start, &o->end))
				return EXIT_USAGE;
			break;
		case 'p':
			o->partial = optarg;
			break;
		case 'l':
			if (bach_parse_bytes(optarg, &v) ||
			    v > BACH_MRC_MAX_LINE)
				return usage_error(
					"--line: '%s' is not a line size",
					optarg);
			o->cfg.line = (uint32_t)v;
			break;
		case 's':
			list = optarg;
			break;
		case 'm':
			min = optarg;
			break;
		case 'M':
			max = optarg;
			break;
		case 'a':
			if (!strcmp(optarg, "full")) {
				o->cfg.assoc = 0;
			} else if (!parse_u64(optarg, &v) || !v ||
				   v > BACH_SIM_MAX_LINES) {
				return usage_error(
					"--assoc: '%s' is not a number of ways or 'full'",
					optarg);
			} else {
				o->cfg.assoc = (uint32_t)v;
			}
			break;
		case 'k':
			if (word_find(kind_names, optarg) < 0)
				return usage_error(
					"--kind: '%s' is not i, d or all",
					optarg);
			o->cfg.kinds = kind_bits[word_find(kind_names, optarg)];
			break;
		case 'r':
			o->cfg.sample = strtod(optarg, &end);
			if (end == optarg || *end || !(o->cfg.sample > 0) ||
			    o->cfg.sample > 1)
				return usage_error(
					"--sample: '%s' is not a rate in (0, 1]",
					optarg);
			break;
		case 'j':
			o->format = JSON;
			break;
		case 'c':
			o->format = CSV;
			break;
		case 'R':
			reuse = true;
			break;
		case 'w':
			if (!parse_u64(optarg, &o->window) || !o->window)
				return usage_error(
					"--window: '%s' is not a number of records",
					optarg);
			break;
		default: /* --type, --addr, --port, or a bad option */
			if (filter_arg(&o->flt, c, optarg))
				return EXIT_USAGE;
			break;
		}
	}
	if (o->window && reuse)
		return usage_error("--reuse and --window: one at a time");
	o->mode = reuse ? REUSE : o->window ? WSS : CURVE;
	if (list && (min || max))
		return usage_error("--sizes or --min and --max, not both");
	n = bach_mrc_parse_sizes(list, min ? min : "1k", max ? max : "32M",
				 o->sizes, why, sizeof(why));
	if (n < 0)
		return usage_error("%s: %s", list ? "--sizes" : "--min/--max",
				   why);
	o->cfg.sizes = o->sizes;
	o->cfg.nsizes = (size_t)n;
	if (o->mode == REUSE && o->cfg.assoc)
		return usage_error(
			"--reuse: reuse distances are fully associative (--assoc full)");
	if (o->partial && o->window && o->flt.on)
		return usage_error(
			"--partial with --window: not with --type, --addr or --port (windows count the records kept)");
	return EXIT_OK;
}

/* the options a partial of mrc must share to merge */
static json_t *options_json(const struct opts *o)
{
	json_t *sizes = json_array();

	for (size_t i = 0; sizes && i < o->cfg.nsizes; i++)
		if (json_array_append_new(
			    sizes, json_integer((json_int_t)o->sizes[i])))
			break;
	return json_pack("{sisisosssIsisfso}", "line", (int)o->cfg.line,
			 "kinds", (int)o->cfg.kinds, "sizes", sizes, "mode",
			 o->mode == REUSE ? "reuse"
			 : o->mode == WSS ? "window"
					  : "curve",
			 "window", (json_int_t)o->window, "assoc",
			 (int)o->cfg.assoc, "sample", o->cfg.sample, "filter",
			 filter_json(&o->flt));
}

static int write_part(const char *out, const struct bach_mrc *m,
		      const struct merge_job *j, json_t *options, json_t *trace,
		      uint64_t start, uint64_t end, uint64_t records,
		      uint32_t crc)
{
	struct bach_partial_words words = { 0 };
	struct bach_mrc_part p;
	json_t *d = NULL;

	if (!bach_mrc_part_get(m, &p))
		d = bach_mrc_part_to_json(&p, &words);
	bach_mrc_part_free(&p);
	if (j)
		return merge_write(j, d, &words);
	if (!d) {
		bach_partial_words_free(&words);
		json_decref(options);
		json_decref(trace);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	return partial_write(out, "mrc", options, trace, start, end, records,
			     crc, d, &words);
}

/* --window: the chunks' pieces, windows aligned at record 0 */
static int wss_merge(const struct merge_job *j, struct opts *o)
{
	struct bach_wss_merge acc = { 0 };
	struct bach_wss_window *win = NULL;
	int status = EXIT_OK;
	char why[300];

	if (!j->out && j->start % o->window)
		return usage_error(
			"--window %llu: the first range starts at %llu, not at a multiple of the window",
			(unsigned long long)o->window,
			(unsigned long long)j->start);
	for (size_t i = 0; i < j->n && !status; i++) {
		struct bach_wss_piece *pc;
		size_t np;
		int err;

		if (bach_wss_pieces_from_json(&pc, &np, j->p[i].data,
					      &j->p[i].words, why,
					      sizeof(why))) {
			errmsg("partial %zu: %s", i + 1, why);
			status = EXIT_DATA;
			break;
		}
		err = bach_wss_merge_add(&acc, pc, np);
		bach_wss_pieces_free(pc, np);
		if (err) {
			errmsg(err == -ENOMEM
				       ? "out of memory"
				       : "partial %zu: line 2: its windows do not follow the ones before",
			       i + 1);
			status = err == -ENOMEM ? EXIT_USAGE : EXIT_DATA;
		}
	}
	if (!status && j->out) {
		struct bach_partial_words words = { 0 };

		status = merge_write(
			j, bach_wss_pieces_to_json(acc.p, acc.n, &words),
			&words);
	} else if (!status) {
		win = malloc((acc.n + 1) * sizeof(*win));
		if (!win) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		} else {
			print_wss(o, win,
				  bach_wss_merge_windows(&acc, j->start, win));
		}
	}
	free(win);
	bach_wss_merge_free(&acc);
	return status;
}

int mrc_merge(const struct merge_job *j)
{
	const json_t *op = json_object_get(j->p[0].head, "options");
	const json_t *sz = json_object_get(op, "sizes");
	const json_t *mode = json_object_get(op, "mode");
	const json_t *line = json_object_get(op, "line");
	const json_t *kinds = json_object_get(op, "kinds");
	struct bach_mrc *m = NULL;
	struct opts o;
	char why[300];
	int status = EXIT_OK;

	memset(&o, 0, sizeof(o));
	o.cfg.sample = json_real_value(json_object_get(op, "sample"));
	o.cfg.nsizes = json_array_size(sz);
	o.format = j->json ? JSON : j->csv ? CSV : TEXT;
	for (size_t i = 0; i < o.cfg.nsizes && i < BACH_MRC_MAX_SIZES; i++)
		o.sizes[i] =
			(uint64_t)json_integer_value(json_array_get(sz, i));
	o.cfg.sizes = o.sizes;
	if (json_is_string(mode) && !strcmp(json_string_value(mode), "reuse"))
		o.mode = REUSE;
	if (json_is_string(mode) &&
	    !strcmp(json_string_value(mode), "window")) {
		const json_t *wn = json_object_get(op, "window");

		o.mode = WSS;
		o.window = (uint64_t)json_integer_value(wn);
		o.cfg.line = (uint32_t)json_integer_value(line);
		o.cfg.kinds = (unsigned)json_integer_value(kinds);
		if (!json_is_integer(wn) || json_integer_value(wn) < 1 ||
		    bach_mrc_check_line(o.cfg.line, why, sizeof(why))) {
			errmsg("partial 1: line 1: \"options\" are not those of a window bach mrc merges");
			return EXIT_DATA;
		}
		return wss_merge(j, &o);
	}
	o.cfg.line = (uint32_t)json_integer_value(line);
	o.cfg.kinds = (unsigned)json_integer_value(kinds);
	o.cfg.assoc =
		(uint32_t)json_integer_value(json_object_get(op, "assoc"));
	if (!json_is_integer(line) || !json_is_integer(kinds) ||
	    !json_is_string(mode) ||
	    json_integer_value(json_object_get(op, "assoc")) < 0 ||
	    json_integer_value(json_object_get(op, "assoc")) >
		    BACH_SIM_MAX_LINES ||
	    !json_is_real(json_object_get(op, "sample")) ||
	    bach_mrc_new(&m, &o.cfg, why, sizeof(why)) || bach_mrc_chunk(m)) {
		bach_mrc_free(m);
		errmsg("partial 1: line 1: \"options\" are not those of a curve bach mrc merges");
		return EXIT_DATA;
	}
	for (size_t i = 0; i < j->n && !status; i++) {
		struct bach_mrc_part p;
		int err;

		if (bach_mrc_part_from_json(&p, o.cfg.nsizes + 1,
					    o.cfg.assoc ? o.cfg.nsizes : 0,
					    j->p[i].data, &j->p[i].words, why,
					    sizeof(why))) {
			errmsg("partial %zu: %s", i + 1, why);
			status = EXIT_DATA;
			break;
		}
		err = bach_mrc_combine(m, &p);
		bach_mrc_part_release(&p);
		if (err == -ENOMEM) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		} else if (err) {
			errmsg("partial %zu: line 2: a line beyond the address space of %u-byte lines",
			       i + 1, o.cfg.line);
			status = EXIT_DATA;
		}
	}
	if (!status && j->out) {
		status = write_part(NULL, m, j, NULL, NULL, 0, 0, 0, 0);
	} else if (!status) {
		bach_mrc_settle(m);
		if (o.mode == REUSE)
			print_reuse(&o, m);
		else
			print_curve(&o, m);
	}
	bach_mrc_free(m);
	return status;
}

static void add_curve(void *m, const uint8_t *recs, size_t n)
{
	bach_mrc_add(m, recs, n);
}

static void add_wss(void *w, const uint8_t *recs, size_t n)
{
	bach_wss_add(w, recs, n);
}

static int run(int argc, char **argv)
{
	struct bach_wss *w = NULL;
	struct bach_mrc *m = NULL;
	uint64_t records;
	struct opts o;
	char why[200];
	uint32_t crc = 0;
	int status, err;

	status = parse(argc, argv, &o);
	if (status)
		return status;
	if (o.partial &&
	    check_output(o.partial, (const char *const *)argv + optind,
			 (size_t)(argc - optind)))
		return EXIT_USAGE;
	if (o.mode == WSS)
		err = bach_wss_new(&w, o.window, o.cfg.line, o.cfg.kinds, why,
				   sizeof(why));
	else
		err = bach_mrc_new(&m, &o.cfg, why, sizeof(why));
	if (err == -ENOMEM) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	if (err)
		return usage_error("%s", why);
	if (o.partial && (w ? bach_wss_chunk(w, o.start) : bach_mrc_chunk(m))) {
		bach_mrc_free(m);
		bach_wss_free(w);
		return usage_error("--partial: not with these options");
	}
	status = read_traces_range(argc - optind, argv + optind, &o.flt,
				   o.start, o.end, w ? add_wss : add_curve,
				   w ? (void *)w : (void *)m, &records,
				   o.partial ? &crc : NULL);
	if (status)
		goto out;
	if ((m && bach_mrc_error(m)) || (w && bach_wss_error(w))) {
		errmsg("out of memory after %llu records",
		       (unsigned long long)records);
		status = EXIT_USAGE;
		goto out;
	}
	if (o.partial && w) {
		struct bach_partial_words words = { 0 };
		struct bach_wss_piece *pc;
		size_t np;
		json_t *d = NULL;

		if (!bach_wss_pieces(w, &pc, &np))
			d = bach_wss_pieces_to_json(pc, np, &words);
		bach_wss_pieces_free(pc, np);
		if (!d) {
			bach_partial_words_free(&words);
			errmsg("out of memory");
			status = EXIT_USAGE;
		} else {
			status = partial_write(
				o.partial, "mrc", options_json(&o),
				trace_identity(argc - optind, argv + optind),
				o.start, o.end,
				records > o.start ? records - o.start : 0, crc,
				d, &words);
		}
	} else if (o.partial) {
		status = write_part(
			o.partial, m, NULL, options_json(&o),
			trace_identity(argc - optind, argv + optind), o.start,
			o.end, records > o.start ? records - o.start : 0, crc);
	} else if (w) {
		const struct bach_wss_window *win;
		size_t nw = bach_wss_finish(w, &win);

		print_wss(&o, win, nw);
	} else if (o.mode == REUSE) {
		print_reuse(&o, m);
	} else {
		print_curve(&o, m);
	}
out:
	bach_mrc_free(m);
	bach_wss_free(w);
	filter_free(&o.flt);
	return status;
}

const struct bach_cmd cmd_mrc = {
	.name = "mrc",
	.run = run,
	.values =
		(const struct complete_values[]){
			{ .opt = "kind", .words = kind_names },
			{ NULL },
		},
	.summary = "miss-ratio curves, reuse distances, working sets",
	.help = "usage: bach mrc [--line BYTES] [--sizes LIST | --min SIZE --max SIZE]\n"
		"                [--assoc N|full] [--kind i|d|all] [--sample R]\n"
		"                [--reuse | --window N] [--json|--csv]\n"
		"                [--range START:END [--partial FILE]]\n"
		"                [--type LIST] [--addr LO-HI] [--port LO-HI] TRACE...\n"
		"\n"
		"The miss ratio of an LRU cache at every size given, from one pass over\n"
		"the trace. Fully associative (the default) through stack distances:\n"
		"each size's misses equal bach sim's with --l1 SIZE:LINE:full.\n"
		"--assoc N simulates N-way LRU at each size at once. --sample R keeps\n"
		"only the lines a hash selects with probability R (SHARDS) and gives\n"
		"estimates, for traces of billions of records; the sizes that would hold\n"
		"fewer than 4 sampled lines come from a small LRU stack of the nearest\n"
		"lines, sampled at a higher rate (exact when it reaches 1). A gap marker makes\n"
		"every line cold again. Several TRACEs are read as one trace.\n"
		"\n"
		"      --line BYTES      line size, a power of two from 8 (default 32)\n"
		"      --sizes LIST      cache sizes, ascending: 1k,4k,16k\n"
		"      --min, --max      the powers of two MIN x 2^k up to MAX\n"
		"                        (default 1k to 32M)\n"
		"      --assoc N|full    ways per set (default full)\n"
		"      --kind i|d|all    instruction fetches, data, or both (default all)\n"
		"      --sample R        SHARDS sampling rate in (0, 1] (default 1, exact)\n"
		"      --reuse           the reuse-distance histogram instead (in lines,\n"
		"                        by powers of two)\n"
		"      --window N        distinct lines and 4 KiB pages per N records\n"
		"                        instead, over the trace\n"
		"      --json, --csv     JSON or CSV instead of text\n"
		"      --range START:END only records START to END-1 (bach dump)\n"
		"      --partial FILE    write the state of the range to FILE (- standard\n"
		"                        output) for bach merge, instead of printing it\n"
		"                        (--window: not with the filters)\n" FILTER_HELP
		"\n"
		"example: bach mrc --min 4k --max 4M --kind d --json trace.byu.gz\n",
};
