// SPDX-License-Identifier: MIT
/* bach gen: the synthetic Pentium workload, as a trace file. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bach.h"
#include "bach/gen.h"
#include "bach/record.h"

#define CHUNK 65536 /* records per write */

/* Output format from the name: .byu.gz or .gz is blocked gzip. */
enum bach_out_format out_format_for(const char *path)
{
	size_t len = strlen(path);

	return len > 3 && !strcmp(path + len - 3, ".gz") ? BACH_OUT_BYU_GZ :
							   BACH_OUT_BYU;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct bach_writer_opts wo = { 0 };
	uint64_t records = 0, seed = 1;
	bool have_n = false;
	const char *out = "-";
	struct bach_writer *w;
	struct bach_gen g;
	uint8_t *buf;
	int c, err;

	while ((c = getopt_long(argc, argv, "n:s:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, &records))
				return usage_error("--records: not a count: '%s'",
						   optarg);
			have_n = true;
			break;
		case 's':
			if (!parse_u64(optarg, &seed))
				return usage_error("--seed: not a number: '%s'",
						   optarg);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (!have_n)
		return usage_error("--records N is required");
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	wo.format = out_format_for(out);
	err = bach_writer_open(&w, out, &wo);
	if (err) {
		errmsg("%s", bach_writer_strerror(w));
		bach_writer_free(w);
		return EXIT_USAGE;
	}
	buf = malloc(CHUNK * BACH_REC_SIZE);
	if (!buf) {
		bach_writer_free(w);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	bach_gen_init(&g, seed);
	while (records && !err) {
		size_t k = records < CHUNK ? (size_t)records : CHUNK;

		bach_gen_fill(&g, buf, k);
		err = bach_writer_write(w, buf, k);
		records -= k;
	}
	if (!err)
		err = bach_writer_close(w);
	if (err)
		errmsg("%s", bach_writer_strerror(w));
	free(buf);
	bach_writer_free(w);
	return err ? EXIT_USAGE : EXIT_OK;
}

const struct bach_cmd cmd_gen = {
	.name = "gen",
	.run = run,
	.summary = "write a synthetic Pentium workload",
	.help = "usage: bach gen --records N [--seed S] [-o FILE]\n"
		"\n"
		"A deterministic synthetic workload: sequential code runs with loops\n"
		"and branches, stack pushes and pops, strided arrays, random heap\n"
		"traffic, line writebacks, I/O, interrupt-acknowledge pairs and special\n"
		"cycles. The same seed always gives the same records, and the fake\n"
		"capture board plays exactly this stream.\n"
		"\n"
		"  -n, --records N   how many records (required)\n"
		"  -s, --seed S      seed (default 1)\n"
		"  -o, --output F    output file (default - for standard output);\n"
		"                    a name ending in .gz is written as blocked gzip\n"
		"\n"
		"example: bach gen --records 1000000 --seed 7 -o work.byu.gz\n",
};
