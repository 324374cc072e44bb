// SPDX-License-Identifier: MIT
/* bach stat: what a trace holds. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bach.h"
#include "bach/stats.h"

static const unsigned type_order[] = {
	BACH_T_I_FETCH, BACH_T_NC_I_FETCH, BACH_T_D_READ,  BACH_T_NC_D_READ,
	BACH_T_D_WRITE, BACH_T_WRITE_BACK, BACH_T_IO_READ, BACH_T_IO_WRITE,
	BACH_T_INT_ACK, BACH_T_SPECIAL,
};

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_text(const struct bach_summary *m, size_t nfiles)
{
	printf("records            %llu  (%zu file%s)\n",
	       (unsigned long long)m->records, nfiles, nfiles == 1 ? "" : "s");
	printf("by type:\n");
	for (size_t i = 0; i < sizeof(type_order) / sizeof(*type_order); i++) {
		unsigned t = type_order[i];

		printf("  %-11s %14llu  %6.2f%%\n", bach_type_name(t),
		       (unsigned long long)m->by_type[t],
		       share(m->by_type[t], m->records));
	}
	printf("  %-11s %14llu  %6.2f%%\n", "INVALID",
	       (unsigned long long)m->invalid, share(m->invalid, m->records));
	printf("special cycles:\n");
	for (int k = 0; k < BACH_NSPECIAL; k++)
		printf("  %-11s %14llu\n", bach_special_name(k),
		       (unsigned long long)m->special[k]);
	printf("reads              %llu  (%.2f%%)\n",
	       (unsigned long long)m->reads, share(m->reads, m->records));
	printf("writes             %llu  (%.2f%%)\n",
	       (unsigned long long)m->writes, share(m->writes, m->records));
	printf("bytes per cycle    %.3f  (memory and I/O cycles, from BE#)\n",
	       m->reads + m->writes
		       ? (double)m->bytes / (double)(m->reads + m->writes)
		       : 0.0);
	for (int b = 1; b <= 8; b++)
		if (m->bytes_hist[b])
			printf("  %d byte%s %21llu\n", b, b == 1 ? " " : "s",
			       (unsigned long long)m->bytes_hist[b]);
	printf("distinct lines     %llu  (32-byte, memory cycles)\n",
	       (unsigned long long)m->lines);
	printf("distinct pages     %llu  (4 KiB, memory cycles)\n",
	       (unsigned long long)m->pages);
	if (m->mem_cycles) {
		printf("lowest address     0x%08x\n", m->lo);
		printf("highest address    0x%08x\n", m->hi);
	} else {
		printf("lowest address     -\nhighest address    -\n");
	}
	printf("invalid records    %llu\n", (unsigned long long)m->invalid);
	if (m->addr_low || m->bad_ctl_low)
		printf("malformed records  %llu with address bits 2..0 set, "
		       "%llu with control bits 3..0 set\n",
		       (unsigned long long)m->addr_low,
		       (unsigned long long)m->bad_ctl_low);
	if (m->gaps)
		printf("gap markers        %llu  (%llu records lost)\n",
		       (unsigned long long)m->gaps,
		       (unsigned long long)m->lost);
}

static void print_json(const struct bach_summary *m, size_t nfiles)
{
	printf("{\"records\":%llu,\"files\":%zu,\"types\":{",
	       (unsigned long long)m->records, nfiles);
	for (size_t i = 0; i < sizeof(type_order) / sizeof(*type_order); i++)
		printf("\"%s\":%llu,", bach_type_name(type_order[i]),
		       (unsigned long long)m->by_type[type_order[i]]);
	printf("\"INVALID\":%llu},\"special\":{",
	       (unsigned long long)m->invalid);
	for (int k = 0; k < BACH_NSPECIAL; k++)
		printf("%s\"%s\":%llu", k ? "," : "", bach_special_name(k),
		       (unsigned long long)m->special[k]);
	printf("},\"reads\":%llu,\"writes\":%llu,\"bytes\":%llu,\"bytes_hist\":"
	       "[",
	       (unsigned long long)m->reads, (unsigned long long)m->writes,
	       (unsigned long long)m->bytes);
	for (int b = 0; b <= 8; b++)
		printf("%s%llu", b ? "," : "",
		       (unsigned long long)m->bytes_hist[b]);
	printf("],\"lines\":%llu,\"pages\":%llu,", (unsigned long long)m->lines,
	       (unsigned long long)m->pages);
	if (m->mem_cycles)
		printf("\"lowest\":\"0x%08x\",\"highest\":\"0x%08x\",", m->lo,
		       m->hi);
	else
		printf("\"lowest\":null,\"highest\":null,");
	printf("\"invalid\":%llu,\"address_low_bits\":%llu,\"control_low_"
	       "bits\":%llu,"
	       "\"gaps\":%llu,\"lost\":%llu}\n",
	       (unsigned long long)m->invalid, (unsigned long long)m->addr_low,
	       (unsigned long long)m->bad_ctl_low, (unsigned long long)m->gaps,
	       (unsigned long long)m->lost);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "range", required_argument, NULL, 'r' },
		{ "between", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t start = 0, end = UINT64_MAX;
	const char *ba = NULL, *bb = NULL;
	static struct bach_stats st;
	struct bach_summary m;
	struct bach_reader *r;
	bool json = false;
	int c, status;
	ssize_t n;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'r' && parse_range(optarg, &start, &end))
			continue;
		else if (c == 'r')
			return usage_error("--range: not START:END with START "
					   "<= END: '%s'",
					   optarg);
		else if (c == 'B' && between_arg(argc, argv, &ba, &bb))
			return EXIT_USAGE;
		else if (c != 'B')
			return usage_error("bad option");
	}
	status = open_traces(&r, argc - optind, argv + optind);
	if (!status && ba && (start || end != UINT64_MAX))
		status = usage_error("--range and --between: one or the other");
	else if (!status && ba)
		status = between_window(r, argc - optind, argv + optind, ba, bb,
					&start);
	else if (!status)
		status = apply_range(r, start, end);
	if (status || bach_stats_init(&st)) {
		bach_reader_free(r);
		return status ? status : EXIT_USAGE;
	}
	for (;;) {
		const uint8_t *p;

		n = bach_reader_read(r, &p);
		if (n <= 0)
			break;
		bach_stats_add(&st, p, (size_t)n);
	}
	if (n < 0) {
		errmsg("%s", bach_reader_strerror(r));
		status = bach_exit_status((int)n);
	} else {
		bach_stats_summary(&st, &m);
		if (json)
			print_json(&m, bach_reader_nfiles(r));
		else
			print_text(&m, bach_reader_nfiles(r));
	}
	bach_stats_free(&st);
	bach_reader_free(r);
	return status;
}

const struct bach_cmd cmd_stat = {
	.name = "stat",
	.run = run,
	.summary = "count what a trace holds",
	.help = "usage: bach stat [--json] [--range START:END | --between A B] "
		"TRACE...\n"
		"\n"
		"Records by type (count and share), special cycles by kind, "
		"reads and\n"
		"writes, bytes requested per cycle (from BE#), distinct "
		"32-byte lines\n"
		"and 4 KiB pages touched, lowest and highest address (memory "
		"cycles),\n"
		"invalid records, gap markers and the records they say were "
		"lost.\n"
		"Several TRACEs are counted as one trace.\n"
		"\n"
		"      --json   one JSON object instead of text\n"
		"      --range START:END  only records START to END-1 (bach "
		"dump)\n" BETWEEN_HELP "\n"
		"example: bach stat trace.byu.gz\n",
};
