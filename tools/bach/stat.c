// SPDX-License-Identifier: MIT
/* bach stat: what a trace holds. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "lib/analysis/stats.h"
#include "lib/options.h"

const unsigned type_order[STAT_NTYPES] = {
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
	char recs[160];

	/* the count every command gives (gaps.c), the number first */
	fmt_records(recs, sizeof(recs), m->records, m->gaps, m->lost);
	if (m->gaps)
		printf("records            %llu  %.*s; %zu file%s)\n",
		       (unsigned long long)m->records,
		       (int)strlen(strchr(recs, '(')) - 1,
		       strchr(recs, '(') /* "(D data, ...)" */, nfiles,
		       bach_s(nfiles));
	else
		printf("records            %llu  (%zu file%s)\n",
		       (unsigned long long)m->records, nfiles, bach_s(nfiles));
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
		printf("malformed records  %llu with address bits 2..0 set, %llu with control bits 3..0 set\n",
		       (unsigned long long)m->addr_low,
		       (unsigned long long)m->bad_ctl_low);
	if (m->gaps)
		printf("gap markers        %llu  (standing for %llu lost)\n",
		       (unsigned long long)m->gaps,
		       (unsigned long long)m->lost);
}

/* --time (cmd.h): what the clocks say */
void tstat_add(struct tstat *ts, const uint8_t *p, const uint64_t *clk,
	       size_t n, uint64_t hz)
{
	if (hz)
		ts->hz = hz;
	for (size_t i = 0; i < n; i++, p += BACH_REC_SIZE) {
		uint64_t c = clk[i], k = 1, s;

		if (c == BACH_TIME_NONE) {
			ts->untimed++;
			continue;
		}
		if (bach_rec_is_gap(p))
			k = bach_get_be32(p);
		if (!ts->timed)
			ts->first = c;
		ts->timed++;
		ts->last = c;
		ts->cycles += k;
		s = ts->hz ? c / ts->hz : 0;
		if (s != ts->sec || ts->timed == 1) {
			ts->sec = s;
			ts->sec_cycles = 0;
		}
		ts->sec_cycles += k;
		if (ts->sec_cycles > ts->best_cycles) {
			ts->best_cycles = ts->sec_cycles;
			ts->best_sec = s;
		}
	}
}

static double tstat_util(const struct tstat *ts)
{
	return ts->last > ts->first ? (double)(ts->cycles - 1) /
					      (double)(ts->last - ts->first)
				    : 0.0;
}

void print_time_text(FILE *f, const struct tstat *ts)
{
	uint64_t span = ts->last - ts->first;

	if (!ts->timed) {
		fprintf(f, "duration           -  (no record has a time)\n");
		return;
	}
	if (ts->hz)
		fprintf(f,
			"duration           %.9f s  (%llu bus clocks at %llu Hz)\n",
			(double)span / (double)ts->hz, (unsigned long long)span,
			(unsigned long long)ts->hz);
	else
		fprintf(f,
			"duration           %llu bus clocks  (clock rate unknown)\n",
			(unsigned long long)span);
	fprintf(f,
		"bus utilisation    %.4f cycles per clock  (%.2f%% of one cycle every 2 clocks)\n",
		tstat_util(ts), 200.0 * tstat_util(ts));
	if (ts->hz)
		fprintf(f, "busiest second     %llu  (%llu cycles)\n",
			(unsigned long long)ts->best_sec,
			(unsigned long long)ts->best_cycles);
	if (ts->untimed)
		fprintf(f, "records untimed    %llu\n",
			(unsigned long long)ts->untimed);
}

static void print_time_json(const struct tstat *ts)
{
	printf(",\"time\":{\"timed\":%llu,\"untimed\":%llu,\"cycles\":%llu,\"first_clock\":%llu,\"last_clock\":%llu,\"clock_hz\":%llu,\"utilisation\":%.6f",
	       (unsigned long long)ts->timed, (unsigned long long)ts->untimed,
	       (unsigned long long)ts->cycles, (unsigned long long)ts->first,
	       (unsigned long long)ts->last, (unsigned long long)ts->hz,
	       tstat_util(ts));
	if (ts->hz && ts->timed)
		printf(",\"seconds\":%.9f,\"busiest_second\":%llu,\"busiest_cycles\":%llu",
		       (double)(ts->last - ts->first) / (double)ts->hz,
		       (unsigned long long)ts->best_sec,
		       (unsigned long long)ts->best_cycles);
	printf("}");
}

static void print_json(const struct bach_summary *m, size_t nfiles,
		       const struct tstat *ts)
{
	printf("{\"records\":%llu,\"data\":%llu,\"gap_markers\":%llu,\"lost\":%llu,\"files\":%zu,\"types\":{",
	       (unsigned long long)m->records,
	       (unsigned long long)(m->records - m->gaps),
	       (unsigned long long)m->gaps, (unsigned long long)m->lost,
	       nfiles);
	for (size_t i = 0; i < sizeof(type_order) / sizeof(*type_order); i++)
		printf("\"%s\":%llu,", bach_type_name(type_order[i]),
		       (unsigned long long)m->by_type[type_order[i]]);
	printf("\"INVALID\":%llu},\"special\":{",
	       (unsigned long long)m->invalid);
	for (int k = 0; k < BACH_NSPECIAL; k++)
		printf("%s\"%s\":%llu", k ? "," : "", bach_special_name(k),
		       (unsigned long long)m->special[k]);
	printf("},\"reads\":%llu,\"writes\":%llu,\"bytes\":%llu,\"bytes_hist\":[",
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
	printf("\"invalid\":%llu,\"address_low_bits\":%llu,\"control_low_bits\":%llu",
	       (unsigned long long)m->invalid, (unsigned long long)m->addr_low,
	       (unsigned long long)m->bad_ctl_low);
	if (ts)
		print_time_json(ts);
	printf("}\n");
}

/* the counts of the chunks' partials, printed as the whole run prints */
int stat_merge(const struct merge_job *j)
{
	static struct bach_stats st;
	struct bach_summary m;
	uint64_t files = 0;
	char err[300];
	int status = EXIT_OK;

	if (j->csv)
		return usage_error("bach stat has no --csv");
	if (bach_stats_init(&st)) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < j->n && !status; i++) {
		const json_t *f = json_object_get(j->p[i].data, "files");

		if (!json_is_integer(f) || json_integer_value(f) < 0 ||
		    (i && (uint64_t)json_integer_value(f) != files)) {
			errmsg("partial %zu: line 2: \"files\" missing or not as in the others",
			       i + 1);
			status = EXIT_DATA;
		} else if (bach_stats_from_json(&st, j->p[i].data, err,
						sizeof(err))) {
			errmsg("partial %zu: %s", i + 1, err);
			status = EXIT_DATA;
		}
		files = f ? (uint64_t)json_integer_value(f) : 0;
	}
	if (!status && j->out) {
		json_t *d = bach_stats_to_json(&st);

		if (d && json_object_set_new(d, "files",
					     json_integer((json_int_t)files)))
			d = NULL;
		status = merge_write(j, d, NULL);
	} else if (!status) {
		bach_stats_summary(&st, &m);
		if (j->json)
			print_json(&m, (size_t)files, NULL);
		else
			print_text(&m, (size_t)files);
	}
	bach_stats_free(&st);
	return status;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "range", required_argument, NULL, 'r' },
		{ "between", required_argument, NULL, 'B' },
		{ "time", no_argument, NULL, 't' },
		{ "type", required_argument, NULL, FILTER_TYPE },
		{ "addr", required_argument, NULL, FILTER_ADDR },
		{ "port", required_argument, NULL, FILTER_PORT },
		{ "partial", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_filter flt = { 0 };
	const char *partial = NULL;
	uint32_t crc = 0;
	struct trace_times tt = { 0 };
	struct tstat ts = { 0 };
	bool timed = false;
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
		else if (c == 't')
			timed = true;
		else if (c == 'r' && range_arg(optarg, &start, &end))
			return EXIT_USAGE;
		else if (c == 'B' && between_arg(argc, argv, &ba, &bb))
			return EXIT_USAGE;
		else if (c == 'p')
			partial = optarg;
		else if (c != 'B' && c != 'r' && c != 'p' &&
			 filter_arg(&flt, c, optarg))
			return EXIT_USAGE; /* --type, --addr, --port, or bad */
	}
	if (partial && (timed || ba))
		return usage_error("--partial: with --range, not --%s",
				   timed ? "time" : "between");
	if (partial && check_output(partial, (const char *const *)argv + optind,
				    (size_t)(argc - optind)))
		return EXIT_USAGE;
	status = open_traces(&r, argc - optind, argv + optind);
	if (!status)
		status = select_records(r, argc - optind, argv + optind, ba, bb,
					&start, end);
	if (!status && timed)
		status = times_open(&tt, !ba && !start && end == UINT64_MAX);
	if (status || bach_stats_init(&st)) {
		times_close(&tt);
		bach_reader_free(r);
		return status ? status : EXIT_USAGE;
	}
	for (;;) {
		const uint8_t *p;
		const uint64_t *clk = NULL;
		ssize_t k;

		n = bach_reader_read(r, &p);
		if (n <= 0)
			break;
		if (timed && (status = times_block(&tt, r, (size_t)n, &clk)))
			break;
		if (partial)
			crc = partial_crc(crc, p, (size_t)n * BACH_REC_SIZE);
		k = filter_block(&flt, &p, &clk, (size_t)n);
		if (k < 0) {
			errmsg("out of memory");
			status = EXIT_USAGE;
			break;
		}
		bach_stats_add(&st, p, (size_t)k);
		if (timed)
			tstat_add(&ts, p, clk, (size_t)k, tt.hz);
	}
	if (!status && !n && timed)
		status = times_finish(&tt);
	if (status) {
		/* the timing's message is out */
	} else if (n < 0) {
		errmsg("%s", bach_reader_strerror(r));
		status = bach_exit_status((int)n);
	} else if (partial) {
		json_t *d = bach_stats_to_json(&st);

		if (d &&
		    json_object_set_new(
			    d, "files",
			    json_integer((json_int_t)bach_reader_nfiles(r))))
			d = NULL;
		if (!d) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		} else {
			status = partial_write(
				partial, "stat", filter_json(&flt),
				trace_identity(argc - optind, argv + optind),
				start, end,
				bach_reader_records(r) > start
					? bach_reader_records(r) - start
					: 0,
				crc, d, NULL);
		}
	} else {
		bach_stats_summary(&st, &m);
		if (json) {
			print_json(&m, bach_reader_nfiles(r),
				   timed ? &ts : NULL);
		} else {
			print_text(&m, bach_reader_nfiles(r));
			if (timed)
				print_time_text(stdout, &ts);
		}
	}
	times_close(&tt);
	bach_stats_free(&st);
	bach_reader_free(r);
	filter_free(&flt);
	return status;
}

const struct bach_cmd cmd_stat = {
	.name = "stat",
	.run = run,
	.summary = "count what a trace holds",
	.help = "usage: bach stat [--json] [--range START:END [--partial FILE] |\n"
		"                 --between A B]\n"
		"                 [--type LIST] [--addr LO-HI] [--port LO-HI] TRACE...\n"
		"\n"
		"Records by type (count and share), special cycles by kind, reads and\n"
		"writes, bytes requested per cycle (from BE#), distinct 32-byte lines\n"
		"and 4 KiB pages touched, lowest and highest address (memory cycles),\n"
		"invalid records, gap markers and the records they say were lost.\n"
		"Several TRACEs are counted as one trace.\n"
		"\n"
		"      --json   one JSON object instead of text\n"
		"      --time   from the timing sidecars: duration, bus utilisation\n"
		"               (cycles per bus clock, lost ones included; a cycle\n"
		"               every 2 clocks is 100%) and the busiest second\n"
		"      --range START:END  only records START to END-1 (bach dump)\n"
		"      --partial FILE  write the counts of the range to FILE (- standard\n"
		"               output) for bach merge, instead of printing them\n" BETWEEN_HELP
			FILTER_HELP "\n"
		"example: bach stat trace.byu.gz\n",
};
