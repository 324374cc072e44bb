// SPDX-License-Identifier: MIT
/*
 * bach plan: split a trace into record ranges for --range and --partial
 * (docs/analysis.md section 8), without reading a record: the files' sizes,
 * each blocked segment's member index (.gzi, or its members' headers) and a
 * capture's manifest (gap events, retention) say where the cuts can go.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "bach/index.h"
#include "cmd.h"
#include "lib/io/manifest.h"
#include "lib/options.h"

/* where a cut may go, best first (docs/analysis.md section 8) */
enum cut_kind { CUT_GAP, CUT_SEGMENT, CUT_MEMBER, CUT_RECORD, CUT_START };
static const char *const cut_names[] = { "gap", "segment", "member", "record",
					 "start" };

struct cand {
	uint64_t at;
	enum cut_kind kind;
};

struct plan {
	struct cand *c;
	size_t n, cap;
	uint64_t total; /* records of the whole trace */
	/* raw files: any record is a cut, [lo, hi) */
	uint64_t *raw;
	size_t nraw, rawcap;
};

static int push(struct plan *p, uint64_t at, enum cut_kind kind)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		struct cand *c = realloc(p->c, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->c = c;
		p->cap = cap;
	}
	p->c[p->n].at = at;
	p->c[p->n++].kind = kind;
	return 0;
}

static int push_raw(struct plan *p, uint64_t lo, uint64_t hi)
{
	if (p->nraw == p->rawcap) {
		size_t cap = p->rawcap ? 2 * p->rawcap : 16;
		uint64_t *r = realloc(p->raw, 2 * cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		p->raw = r;
		p->rawcap = cap;
	}
	p->raw[2 * p->nraw] = lo;
	p->raw[2 * p->nraw++ + 1] = hi;
	return 0;
}

/* One trace file: its records, its member starts, its start as a cut. */
static int add_file(struct plan *p, const char *path, enum cut_kind first)
{
	char msg[600], ep[600];
	struct bach_index ix = { 0 };
	struct stat sb;
	int rc;

	bach_escape_ctl(ep, sizeof(ep), path);
	if (!strcmp(path, "-"))
		return usage_error(
			"-: standard input cannot be planned (it can be read only once)");
	if (p->total && push(p, p->total, first))
		goto nomem;
	if (!ends_with(path, ".gz")) {
		if (stat(path, &sb)) {
			errmsg("%s: %s", ep, strerror(errno));
			return EXIT_USAGE;
		}
		if (!S_ISREG(sb.st_mode)) {
			errmsg("%s: not a regular file", ep);
			return EXIT_USAGE;
		}
		if (push_raw(p, p->total,
			     p->total + (uint64_t)sb.st_size / BACH_REC_SIZE))
			goto nomem;
		p->total += (uint64_t)sb.st_size / BACH_REC_SIZE;
		return EXIT_OK;
	}
	rc = bach_index_load(path, &ix, msg, sizeof(msg));
	if (rc == -ENOENT || rc == -ESTALE)
		rc = bach_index_build(path, &ix, msg, sizeof(msg));
	if (rc == -ENOTSUP) {
		errmsg("%s: not blocked gzip: its records cannot be found without reading them (bach convert writes a blocked one)",
		       ep);
		return EXIT_USAGE;
	}
	if (rc) {
		errmsg("%s", msg);
		return bach_exit_status(rc);
	}
	for (uint64_t i = 1; i < ix.n; i++)
		if (ix.uoff[i] % BACH_REC_SIZE == 0 &&
		    push(p, p->total + ix.uoff[i] / BACH_REC_SIZE,
			 CUT_MEMBER)) {
			bach_index_free(&ix);
			goto nomem;
		}
	p->total += ix.uoff[ix.n] / BACH_REC_SIZE;
	bach_index_free(&ix);
	return EXIT_OK;
nomem:
	errmsg("out of memory");
	return EXIT_USAGE;
}

/* A capture directory: its segments, and the gap events of its manifest. */
static int add_dir(struct plan *p, const char *dir)
{
	struct bach_manifest m = { 0 };
	char msg[600], **paths = NULL;
	uint64_t base = 0, start = p->total;
	ssize_t n;
	int fd, rc, status = EXIT_OK;

	n = bach_capture_open(dir, &paths, NULL, msg, sizeof(msg));
	if (n < 0) {
		errmsg("%s", msg);
		return bach_exit_status((int)n);
	}
	for (ssize_t i = 0; i < n && !status; i++)
		status = add_file(p, paths[i], CUT_SEGMENT);
	for (ssize_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (status)
		return status;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errmsg("%s: %s", dir, strerror(errno));
		return EXIT_USAGE;
	}
	rc = bach_manifest_load(fd, dir, &m, msg, sizeof(msg));
	close(fd);
	if (rc == -ENOENT)
		return EXIT_OK; /* no gap events to cut at */
	if (rc) {
		errmsg("%s", msg);
		return bach_exit_status(rc);
	}
	/* retention removed the oldest segments: positions start later */
	for (size_t s = 0; s < m.nsegs; s++)
		if (m.segs[s].retained)
			base += m.segs[s].records;
	for (uint64_t g = 0; g < m.gaps; g++) {
		uint64_t at = m.gap_list[g].at;

		if (at < base || at - base >= p->total - start)
			continue;
		if (push(p, start + at - base, CUT_GAP)) {
			errmsg("out of memory");
			status = EXIT_USAGE;
			break;
		}
	}
	bach_manifest_free(&m);
	return status;
}

static int by_at(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static bool in_raw(const struct plan *p, uint64_t at)
{
	for (size_t i = 0; i < p->nraw; i++)
		if (at >= p->raw[2 * i] && at < p->raw[2 * i + 1])
			return true;
	return false;
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* the first candidate at or after x (p->n when none) */
static size_t lower(const struct plan *p, uint64_t x)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->c[mid].at < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The cut for the ideal place t, after prev: within w of t, the best kind
 * and then the nearest; with none there, t itself in a raw file, else the
 * nearest candidate of any kind. A binary search and the candidates in
 * the window: a capture of thousands of segments is planned at once.
 */
static struct cand choose(const struct plan *p, uint64_t t, uint64_t w,
			  uint64_t prev)
{
	struct cand best = { UINT64_MAX, CUT_START }, near = best;
	size_t first = lower(p, prev + 1), j = lower(p, t > w ? t - w : 0);

	/* within w of t: the best kind, then the nearest (candidates are
	 * sorted by place, then kind) */
	for (j = j > first ? j : first;
	     j < p->n && p->c[j].at <= t + w && p->c[j].at < p->total; j++)
		if (best.at == UINT64_MAX || p->c[j].kind < best.kind ||
		    (p->c[j].kind == best.kind &&
		     dist(p->c[j].at, t) < dist(best.at, t)))
			best = p->c[j];
	if (best.at != UINT64_MAX && best.kind != CUT_RECORD)
		return best;
	if (t > prev && t < p->total && in_raw(p, t))
		return (struct cand){ t, CUT_RECORD };
	/* else the nearest of any kind: the first at or after t, or the
	 * place before it (the first candidate there, the best kind) */
	j = lower(p, t);
	j = j > first ? j : first;
	if (j < p->n && p->c[j].at < p->total)
		near = p->c[j];
	if (j > first) {
		size_t k = j - 1;

		while (k > first && p->c[k - 1].at == p->c[k].at)
			k--;
		if (near.at == UINT64_MAX ||
		    dist(p->c[k].at, t) <= dist(near.at, t))
			near = p->c[k];
	}
	return near;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "chunks", required_argument, NULL, 'n' },
		{ "chunk-records", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan p = { 0 };
	uint64_t chunks = 0, size = 0, prev = 0;
	bool json = false;
	int c, status = EXIT_OK;
	json_t *arr = NULL;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'n' && (!parse_u64(optarg, &chunks) || !chunks))
			return usage_error(
				"--chunks: not a whole number >= 1: '%s'",
				optarg);
		else if (c == 'c' && (!parse_u64(optarg, &size) || !size))
			return usage_error(
				"--chunk-records: not a whole number >= 1: '%s'",
				optarg);
		else if (c != 'j' && c != 'n' && c != 'c')
			return usage_error("bad option");
	}
	if (chunks && size)
		return usage_error(
			"--chunks and --chunk-records: one or the other");
	if (optind >= argc)
		return usage_error("no TRACE given");
	for (int i = optind; i < argc && !status; i++) {
		struct stat sb;

		if (strcmp(argv[i], "-") && !stat(argv[i], &sb) &&
		    S_ISDIR(sb.st_mode))
			status = add_dir(&p, argv[i]);
		else
			status = add_file(&p, argv[i], CUT_SEGMENT);
	}
	if (status)
		goto out;
	if (p.n)
		qsort(p.c, p.n, sizeof(*p.c), by_at);
	if (!chunks && !size)
		size = 16777216;
	if (!chunks)
		chunks = p.total ? (p.total + size - 1) / size : 1;
	if (json && !(arr = json_array())) {
		errmsg("out of memory");
		status = EXIT_USAGE;
		goto out;
	}
	{
		struct cand from = { 0, CUT_START };

		for (uint64_t k = 1; k <= chunks; k++) {
			struct cand to = { p.total, CUT_START };
			uint64_t t, w;

			if (k < chunks) {
				t = (uint64_t)((unsigned __int128)p.total * k /
					       chunks);
				w = p.total / chunks / 4;
				to = choose(&p, t, w, prev);
				if (to.at == UINT64_MAX)
					continue; /* no cut left: fewer chunks
						   */
			}
			if (to.at <= prev && k < chunks)
				continue;
			if (json) {
				json_t *o =
					json_pack("{sIsIsIss}", "start",
						  (json_int_t)from.at, "end",
						  (json_int_t)to.at, "records",
						  (json_int_t)(to.at - from.at),
						  "cut", cut_names[from.kind]);

				if (!o || json_array_append_new(arr, o)) {
					errmsg("out of memory");
					status = EXIT_USAGE;
					goto out;
				}
			} else {
				printf("%llu:%llu  %llu records  (%s)\n",
				       (unsigned long long)from.at,
				       (unsigned long long)to.at,
				       (unsigned long long)(to.at - from.at),
				       cut_names[from.kind]);
			}
			prev = to.at;
			from = to;
		}
	}
	if (json) {
		status =
			put_json(json_pack("{sIso}", "records",
					   (json_int_t)p.total, "chunks", arr));
		arr = NULL;
	}
out:
	json_decref(arr);
	free(p.c);
	free(p.raw);
	return status;
}

const struct bach_cmd cmd_plan = {
	.name = "plan",
	.run = run,
	.summary = "split a trace into record ranges for --range and --partial",
	.help = "usage: bach plan [--chunks N | --chunk-records N] [--json] TRACE...\n"
		"\n"
		"Record ranges START:END that cover the trace, one per line with its\n"
		"records and where its start was cut, found without reading a record:\n"
		"from the files' sizes, each blocked file's member index (its .gzi, or\n"
		"its members' headers) and a capture's manifest. A cut goes, within a\n"
		"quarter of a chunk of its even place, at a gap marker (the caches are\n"
		"empty there), else at a segment's start, else at a gzip member's\n"
		"start (a raw file: any record). Each range is what --range takes:\n"
		"bach stat --range START:END --partial FILE, then bach merge.\n"
		"\n"
		"      --chunks N         N ranges (fewer when there are not N places\n"
		"                         to cut)\n"
		"      --chunk-records N  ranges of about N records (16777216 unless\n"
		"                         --chunks is given)\n"
		"      --json             {\"records\": R, \"chunks\": [{\"start\": A,\n"
		"                         \"end\": B, \"records\": B-A, \"cut\": KIND}]}\n"
		"\n"
		"example: bach plan --chunks 8 --json capture/\n",
};
