// SPDX-License-Identifier: MIT
/* bach sim: trace-driven cache simulation (docs/analysis.md section 2). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "lib/analysis/cachesim.h"

/* Caches in the order they are printed. */
static const enum bach_sim_cache order[] = {
	BACH_SIM_L1I, BACH_SIM_L1D, BACH_SIM_L1, BACH_SIM_L2, BACH_SIM_L3,
};

static double ratio(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

static uint64_t sum3(const uint64_t *v)
{
	return v[0] + v[1] + v[2];
}

static void print_row(const char *name, const uint64_t *v)
{
	printf("  %-18s %14llu %14llu %14llu %14llu\n", name,
	       (unsigned long long)sum3(v), (unsigned long long)v[0],
	       (unsigned long long)v[1], (unsigned long long)v[2]);
}

/* Accesses, misses and their ratio, in total and per kind. */
static void print_table(const char *accesses, const char *misses,
			const struct bach_cache_stats *st)
{
	printf("  %-18s %14s %14s %14s %14s\n", "", "total", "ifetch", "read",
	       "write");
	print_row(accesses, st->fetch);
	print_row(misses, st->miss);
	printf("  %-18s %14.6f %14.6f %14.6f %14.6f\n", "miss ratio",
	       ratio(sum3(st->miss), sum3(st->fetch)),
	       ratio(st->miss[0], st->fetch[0]),
	       ratio(st->miss[1], st->fetch[1]),
	       ratio(st->miss[2], st->fetch[2]));
}

static void print_text(const struct bach_sim *s,
		       const struct bach_sim_config *cfg)
{
	struct bach_sim_totals t;
	char desc[160];

	bach_sim_get_totals(s, &t);
	printf("records %llu: %llu references, %llu skipped (I/O, special, interrupt acknowledge, invalid), %llu flush%s (gap markers)\n",
	       (unsigned long long)t.records, (unsigned long long)t.refs,
	       (unsigned long long)t.skipped, (unsigned long long)t.flushes,
	       t.flushes == 1 ? "" : "es");
	for (size_t i = 0; i < sizeof(order) / sizeof(*order); i++) {
		const struct bach_cache_stats *st = bach_sim_stats(s, order[i]);

		if (!st)
			continue;
		bach_cache_spec_describe(&cfg->spec[order[i]], desc,
					 sizeof(desc));
		printf("\n%s: %s\n", bach_sim_cache_names[order[i]], desc);
		print_table("demand fetches", "demand misses", st);
		printf("  %-18s %14llu\n", "multi-block refs",
		       (unsigned long long)st->multiblock);
		printf("  %-18s %14llu\n", "bytes from memory",
		       (unsigned long long)st->bytes_read);
		printf("  %-18s %14llu\n", "bytes to memory",
		       (unsigned long long)st->bytes_written);
	}
	if (cfg->have[BACH_SIM_TLB]) {
		const struct bach_cache_stats *st =
			bach_sim_stats(s, BACH_SIM_TLB);
		const struct bach_cache_spec *c = &cfg->spec[BACH_SIM_TLB];

		if (c->full)
			snprintf(desc, sizeof(desc), "fully associative");
		else
			snprintf(desc, sizeof(desc), "%u-way", c->assoc);
		printf("\ntlb: %u entries, %s, 4 KiB pages, LRU\n",
		       (unsigned)(c->size / c->line), desc);
		print_table("lookups", "misses", st);
	}
}

static void print_kinds(const char *name, const uint64_t *v)
{
	printf("\"%s\":{\"ifetch\":%llu,\"read\":%llu,\"write\":%llu}", name,
	       (unsigned long long)v[0], (unsigned long long)v[1],
	       (unsigned long long)v[2]);
}

static void print_json(const struct bach_sim *s,
		       const struct bach_sim_config *cfg)
{
	static const char *const repl[] = { "lru", "fifo", "random" };
	struct bach_sim_totals t;
	bool first = true;

	bach_sim_get_totals(s, &t);
	printf("{\"records\":%llu,\"references\":%llu,\"skipped\":%llu,\"flushes\":%llu,\"caches\":[",
	       (unsigned long long)t.records, (unsigned long long)t.refs,
	       (unsigned long long)t.skipped, (unsigned long long)t.flushes);
	for (size_t i = 0; i < sizeof(order) / sizeof(*order); i++) {
		const struct bach_cache_stats *st = bach_sim_stats(s, order[i]);
		const struct bach_cache_spec *c = &cfg->spec[order[i]];

		if (!st)
			continue;
		printf("%s{\"name\":\"%s\",\"size\":%llu,\"line\":%u,\"assoc\":%u,\"replacement\":\"%s\",\"write\":\"%s\",\"allocate\":%s,",
		       first ? "" : ",", bach_sim_cache_names[order[i]],
		       (unsigned long long)c->size, c->line, c->assoc,
		       repl[c->repl], c->write_through ? "through" : "back",
		       c->no_allocate ? "false" : "true");
		first = false;
		print_kinds("fetches", st->fetch);
		putchar(',');
		print_kinds("misses", st->miss);
		printf(",\"multiblock\":%llu,\"bytes_from_memory\":%llu,\"bytes_to_memory\":%llu}",
		       (unsigned long long)st->multiblock,
		       (unsigned long long)st->bytes_read,
		       (unsigned long long)st->bytes_written);
	}
	putchar(']');
	if (cfg->have[BACH_SIM_TLB]) {
		const struct bach_cache_stats *st =
			bach_sim_stats(s, BACH_SIM_TLB);
		const struct bach_cache_spec *c = &cfg->spec[BACH_SIM_TLB];

		printf(",\"tlb\":{\"entries\":%u,\"assoc\":%u,",
		       (unsigned)(c->size / c->line), c->assoc);
		print_kinds("lookups", st->fetch);
		putchar(',');
		print_kinds("misses", st->miss);
		putchar('}');
	}
	putchar('}');
}

void sim_print(const struct bach_sim *s, const struct bach_sim_config *cfg,
	       bool json)
{
	if (json)
		print_json(s, cfg);
	else
		print_text(s, cfg);
}

int sim_option(struct bach_sim_config *cfg, int c, const char *arg, char *why,
	       size_t len)
{
	char reason[200];

	if (c == 's') {
		if (!parse_u64(arg, &cfg->seed))
			return bach_why(why, len, "--seed: not a number: '%s'",
					arg);
		return 0;
	}
	if (cfg->have[c])
		return bach_why(why, len, "--%s given twice",
				bach_sim_cache_names[c]);
	if (c == BACH_SIM_TLB ? bach_tlb_spec_parse(arg, &cfg->spec[c], reason,
						    sizeof(reason))
			      : bach_cache_spec_parse(arg, &cfg->spec[c],
						      reason, sizeof(reason)))
		return bach_why(why, len, "--%s: %s", bach_sim_cache_names[c],
				reason);
	cfg->have[c] = true;
	return 0;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "l1i", required_argument, NULL, BACH_SIM_L1I },
		{ "l1d", required_argument, NULL, BACH_SIM_L1D },
		{ "l1", required_argument, NULL, BACH_SIM_L1 },
		{ "l2", required_argument, NULL, BACH_SIM_L2 },
		{ "l3", required_argument, NULL, BACH_SIM_L3 },
		{ "tlb", required_argument, NULL, BACH_SIM_TLB },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "type", required_argument, NULL, FILTER_TYPE },
		{ "addr", required_argument, NULL, FILTER_ADDR },
		{ "port", required_argument, NULL, FILTER_PORT },
		{ "configs", required_argument, NULL, 'C' },
		{ "threads", required_argument, NULL, 'T' },
		{ "range", required_argument, NULL, 'r' },
		{ "partial", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_filter flt = { 0 };
	uint64_t start = 0, end = UINT64_MAX;
	const char *partial = NULL;
	struct bach_sim_config cfg;
	struct bach_sim *s = NULL;
	const char *configs = NULL;
	uint64_t threads = 0;
	bool json = false;
	char why[200];
	int c, status, err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.seed = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if ((c >= 0 && c < BACH_SIM_NCACHES) || c == 's') {
			if (sim_option(&cfg, c, optarg, why, sizeof(why)))
				return usage_error("%s", why);
			continue;
		}
		switch (c) {
		case 'C':
			configs = optarg;
			break;
		case 'T':
			if (!parse_u64(optarg, &threads) || threads < 1 ||
			    threads > 64)
				return usage_error(
					"--threads: 1 to 64, not '%s'", optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'r':
			if (range_arg(optarg, &start, &end))
				return EXIT_USAGE;
			break;
		case 'p':
			partial = optarg;
			break;
		default: /* --type, --addr, --port, or a bad option */
			if (filter_arg(&flt, c, optarg))
				return EXIT_USAGE;
			break;
		}
	}
	if (threads && !configs)
		return usage_error("--threads: only with --configs");
	if (partial) {
		/* the inputs: the TRACEs and FILE (NULL: passed over) */
		size_t nin = (size_t)(argc - optind) + 1;
		const char **in = malloc(nin * sizeof(*in));

		if (!in) {
			errmsg("out of memory");
			return EXIT_USAGE;
		}
		memcpy(in, argv + optind, (nin - 1) * sizeof(*in));
		in[nin - 1] = configs;
		status = check_output(partial, in, nin);
		free(in);
		if (status)
			return status;
	}
	if (configs) {
		status = sim_configs(configs, &cfg, json, (int)threads, &flt,
				     start, end, partial, argc - optind,
				     argv + optind);
		filter_free(&flt);
		return status;
	}
	err = bach_sim_new(&s, &cfg, why, sizeof(why));
	if (err == -ENOMEM) {
		errmsg("out of memory for these caches");
		return EXIT_USAGE;
	}
	if (err)
		return usage_error("%s", why);
	status = sim_read(s, &cfg, &flt, argc - optind, argv + optind, start,
			  end, partial);
	if (!status && !partial) {
		bach_sim_finish(s);
		sim_print(s, &cfg, json);
		if (json)
			putchar('\n');
	}
	bach_sim_free(s);
	filter_free(&flt);
	return status;
}

const struct bach_cmd cmd_sim = {
	.name = "sim",
	.run = run,
	.summary = "simulate caches on a trace (Dinero IV's numbers)",
	.help = "usage: bach sim [--l1i SPEC --l1d SPEC | --l1 SPEC] [--l2 SPEC] [--l3 SPEC]\n"
		"                [--tlb ENTRIES:ASSOC] [--seed N] [--json]\n"
		"                [--range START:END [--partial FILE]]\n"
		"                [--type LIST] [--addr LO-HI] [--port LO-HI] TRACE...\n"
		"       bach sim --configs FILE [--threads N] [OPTION...] TRACE...\n"
		"\n"
		"Runs the trace's memory references through a hierarchy of demand-fetch\n"
		"caches and prints, per cache and per kind (instruction fetch, read,\n"
		"write), the demand fetches, demand misses and miss ratio, and the bytes\n"
		"read from and written to the next level (\"memory\"), each with the\n"
		"meaning Dinero IV gives it. I_FETCH and NC_I_FETCH are fetches, D_READ\n"
		"and NC_D_READ reads, D_WRITE and WRITE_BACK writes; other cycles are\n"
		"counted and skipped. A gap marker flushes every cache (dirty lines\n"
		"copied back, then invalidated); dirty lines are copied back at the end.\n"
		"Several TRACEs are simulated as one trace.\n"
		"\n"
		"  SPEC = SIZE:LINE:ASSOC[:POLICY]...\n"
		"      SIZE    bytes, with k, M or G (1024, 2^20, 2^30): 16k, 1M\n"
		"      LINE    bytes per line, a power of two from 4 to 65536\n"
		"      ASSOC   ways per set, or 'full'\n"
		"      POLICY  lru|fifo|random, wb|wt, wa|nwa (default lru, wb, wa)\n"
		"\n"
		"      --l1i SPEC, --l1d SPEC   split L1: instructions and data\n"
		"      --l1 SPEC                unified L1\n"
		"      --l2 SPEC, --l3 SPEC     unified L2 and L3 below it\n"
		"      --tlb ENTRIES:ASSOC      a TLB of 4 KiB pages (LRU) beside L1\n"
		"      --seed N                 random replacement's seed (default 1)\n"
		"      --json                   one JSON object instead of text\n"
		"      --configs FILE           many configurations in one pass over the\n"
		"                               trace, one a line of FILE written as the\n"
		"                               cache options and --seed above ('#' starts\n"
		"                               a comment); the command line's options\n"
		"                               hold for every line, as if the line came\n"
		"                               after them. Each prints what bach sim with\n"
		"                               those options prints, in FILE's order: as\n"
		"                               text after a line '== FILE:LINE: OPTIONS',\n"
		"                               with --json as the entries of one array;\n"
		"                               with --range and --partial, one partial\n"
		"                               holding each configuration's\n"
		"      --threads N              --configs' simulating threads, 1 to 64\n"
		"                               (default: all CPUs)\n"
		"      --range START:END        only records START to END-1 (bach dump)\n"
		"      --partial FILE           write the counts and the caches' state of\n"
		"                               the range to FILE (- standard output) for\n"
		"                               bach merge, instead of printing them\n" FILTER_HELP
		"\n"
		"example: bach sim --l1i 8k:32:2 --l1d 8k:32:2 --l2 256k:32:4 trace.byu.gz\n"
		"         bach sim --json --configs sweep.txt trace.byu.gz\n",
};
