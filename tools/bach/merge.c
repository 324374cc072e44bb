// SPDX-License-Identifier: MIT
/*
 * bach merge: the partials of one command over consecutive ranges of one
 * trace, printed as the command run over their union would print them
 * (through the command's own printing), or merged into one partial
 * (docs/analysis.md section 8, docs/formats.md section 11).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cmd.h"
#include "lib/options.h"

static const struct {
	const char *cmd;
	int (*merge)(const struct merge_job *j);
} mergers[] = {
	{ "stat", stat_merge },
	{ "mrc", mrc_merge },
	{ "sim", sim_merge },
};

struct part {
	struct bach_partial p;
	const char *path;
};

static int by_range(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->p.start != y->p.start)
		return x->p.start < y->p.start ? -1 : 1;
	if (x->p.end != y->p.end)
		return x->p.end < y->p.end ? -1 : 1;
	return 0;
}

static int refuse(const char *a, const char *b, const char *why)
{
	char ea[600], eb[600];

	bach_escape_ctl(ea, sizeof(ea), a);
	bach_escape_ctl(eb, sizeof(eb), b);
	errmsg("%s and %s: %s", ea, eb, why);
	return EXIT_USAGE;
}

/* the same header member in every partial, else the refusal naming two */
static int check_same(const struct part *v, size_t n, const char *key,
		      const char *why)
{
	for (size_t i = 1; i < n; i++)
		if (!json_equal(json_object_get(v[0].p.head, key),
				json_object_get(v[i].p.head, key)))
			return refuse(v[0].path, v[i].path, why);
	return EXIT_OK;
}

int merge_write(const struct merge_job *j, json_t *data,
		struct bach_partial_words *words)
{
	const json_t *h = j->p[0].head;

	if (!data) {
		bach_partial_words_free(words);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	return partial_write(j->out,
			     json_string_value(json_object_get(h, "command")),
			     json_deep_copy(json_object_get(h, "options")),
			     json_deep_copy(json_object_get(h, "trace")),
			     j->start, j->end, j->records, j->crc, data, words);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "partial", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct merge_job job = { 0 };
	struct part *v;
	size_t n, m;
	int c, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			job.json = true;
		else if (c == 'c')
			job.csv = true;
		else if (c == 'p')
			job.out = optarg;
		else
			return usage_error("bad option");
	}
	if (job.json + job.csv + !!job.out > 1)
		return usage_error("--json, --csv and --partial: one at most");
	if (optind >= argc)
		return usage_error("no PART given");
	if (stdin_once(argv + optind, argc - optind))
		return EXIT_USAGE;
	if (job.out && check_output(job.out, (const char *const *)argv + optind,
				    (size_t)(argc - optind)))
		return EXIT_USAGE;
	n = (size_t)(argc - optind);
	v = calloc(n, sizeof(*v));
	if (!v) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < n && !status; i++) {
		v[i].path = argv[optind + (int)i];
		status = partial_load(v[i].path, &v[i].p);
	}
	if (!status)
		status = check_same(v, n, "command",
				    "partials of different commands");
	if (!status)
		status = check_same(v, n, "bach",
				    "partials of different bach versions");
	if (!status)
		status = check_same(v, n, "options",
				    "partials with different options");
	if (!status)
		status = check_same(v, n, "trace",
				    "partials of different traces");
	if (status)
		goto out;
	qsort(v, n, sizeof(*v), by_range);
	job.start = v[0].p.start;
	job.crc = (uint32_t)crc32(0, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		const json_t *crc = json_object_get(v[i].p.head, "range_crc");

		if (i && v[i].p.start != v[i - 1].p.end) {
			status = refuse(v[i - 1].path, v[i].path,
					v[i].p.start < v[i - 1].p.end
						? "their ranges overlap"
						: "their ranges leave a hole");
			goto out;
		}
		job.end = v[i].p.end;
		job.records += v[i].p.records;
		job.crc = (uint32_t)crc32_combine(
			job.crc,
			(uLong)(json_is_integer(crc) ? json_integer_value(crc)
						     : 0),
			(z_off_t)(v[i].p.records * BACH_REC_SIZE));
	}
	/* the command's own merge, over the partials in order */
	job.p = malloc(n * sizeof(*job.p));
	job.names = malloc(n * sizeof(*job.names));
	if (!job.p || !job.names) {
		errmsg("out of memory");
		status = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		job.p[i] = v[i].p;
		job.names[i] = v[i].path;
	}
	job.n = n;
	for (m = 0; m < sizeof(mergers) / sizeof(*mergers); m++)
		if (!strcmp(mergers[m].cmd, v[0].p.command))
			break;
	if (m == sizeof(mergers) / sizeof(*mergers)) {
		char ec[100], ep[600];

		bach_escape_ctl(ec, sizeof(ec), v[0].p.command);
		bach_escape_ctl(ep, sizeof(ep), v[0].path);
		errmsg("%s: partials of '%s' cannot be merged", ep, ec);
		status = EXIT_USAGE;
	} else {
		status = mergers[m].merge(&job);
	}
out:
	for (size_t i = 0; i < n; i++)
		bach_partial_free(&v[i].p);
	free(v);
	free(job.p);
	free(job.names);
	return status;
}

const struct bach_cmd cmd_merge = {
	.name = "merge",
	.run = run,
	.summary = "combine partial results into what the whole run prints",
	.help = "usage: bach merge [--json | --csv | --partial FILE] PART...\n"
		"\n"
		"The partials PART (written by bach stat, bach mrc or bach sim --range A:B\n"
		"--partial FILE, over ranges bach plan gives) printed exactly as the\n"
		"command run over\n"
		"the union of their ranges prints: text, or its --json or --csv. The\n"
		"partials must be of one command, its options, one bach version and one\n"
		"trace, and their ranges must follow one another without overlap or\n"
		"hole, in any order on the command line; else exit status 2 naming two\n"
		"of them. Merging is associative: --partial merges some into one.\n"
		"\n"
		"      --json          the command's --json output\n"
		"      --csv           the command's --csv output\n"
		"      --partial FILE  one partial of the union instead (- standard\n"
		"                      output)\n"
		"\n"
		"example: bach merge --json part-*.json\n",
};
