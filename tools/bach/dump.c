// SPDX-License-Identifier: MIT
/* bach dump: records as text, CSV or JSON lines. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bach/record.h"
#include "cmd.h"
#include "lib/formats/formats.h"

/* the forms of a gap marker's line (gaps.c) are the same three */
enum fmt { F_TEXT = GAP_TEXT, F_CSV = GAP_CSV, F_JSONL = GAP_JSONL };
/* --format's words, in enum fmt's order */
static const char *const fmt_names[] = { "text", "csv", "jsonl", NULL };

/* A line of len bytes (newline included) with the record's time added. */
static size_t add_time(char *d, size_t len, uint64_t clk, uint64_t hz,
		       enum fmt fmt)
{
	if (fmt == F_JSONL) { /* ...}\n */
		char t[64], *sec;

		fmt_time(t, clk, hz, ' ');
		sec = strchr(t + 1, ' ');
		*sec = '\0';
		len -= 2;
		if (clk == BACH_TIME_NONE)
			len += (size_t)sprintf(
				d + len, ",\"clock\":null,\"seconds\":null");
		else
			len += (size_t)sprintf(
				d + len, ",\"clock\":%s,\"seconds\":%s", t + 1,
				sec[1] == '-' ? "null" : sec + 1);
		return len + (size_t)sprintf(d + len, "}\n");
	}
	len--;
	len += fmt_time(d + len, clk, hz, fmt == F_CSV ? ',' : ' ');
	d[len++] = '\n';
	return len;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "skip", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "range", required_argument, NULL, 'r' },
		{ "between", required_argument, NULL, 'B' },
		{ "time", no_argument, NULL, 't' },
		{ "type", required_argument, NULL, FILTER_TYPE },
		{ "addr", required_argument, NULL, FILTER_ADDR },
		{ "port", required_argument, NULL, FILTER_PORT },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_filter flt = { 0 };
	struct trace_times tt = { 0 };
	struct gap_causes gc = { 0 };
	bool timed = false;
	const char *ba = NULL, *bb = NULL;
	uint64_t count = UINT64_MAX, skip = 0, index = 0;
	uint64_t start = 0, end = UINT64_MAX;
	enum fmt fmt = F_TEXT;
	struct bach_reader *r;
	struct obuf o;
	int c, status;
	ssize_t n;

	while ((c = getopt_long(argc, argv, "n:f:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_u64(optarg, &count))
				return usage_error("-n: not a count: '%s'",
						   optarg);
			break;
		case 's':
			if (!parse_u64(optarg, &skip))
				return usage_error("--skip: not a count: '%s'",
						   optarg);
			break;
		case 'r':
			if (range_arg(optarg, &start, &end))
				return EXIT_USAGE;
			break;
		case 't':
			timed = true;
			break;
		case 'B':
			if (between_arg(argc, argv, &ba, &bb))
				return EXIT_USAGE;
			break;
		case 'f':
			if (word_find(fmt_names, optarg) < 0)
				return usage_error(
					"--format: unknown format '%s' (text, csv, jsonl)",
					optarg);
			fmt = (enum fmt)word_find(fmt_names, optarg);
			break;
		default: /* --type, --addr, --port, or a bad option */
			if (filter_arg(&flt, c, optarg))
				return EXIT_USAGE;
			break;
		}
	}
	status = open_traces(&r, argc - optind, argv + optind);
	/* csv and jsonl number the records by their trace position */
	if (!status)
		status = select_records(r, argc - optind, argv + optind, ba, bb,
					&start, end);
	if (status) {
		bach_reader_free(r);
		return status;
	}
	index = start;
	if (timed &&
	    (status = times_open(&tt, !ba && !start && end == UINT64_MAX &&
					      count == UINT64_MAX))) {
		bach_reader_free(r);
		return status;
	}
	if (obuf_init(&o, STDOUT_FILENO, 1u << 20)) {
		times_close(&tt);
		bach_reader_free(r);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	if (fmt == F_CSV) {
		memcpy(obuf_room(&o, sizeof(BACH_CSV_HEADER)), BACH_CSV_HEADER,
		       sizeof(BACH_CSV_HEADER) - 1);
		o.len += sizeof(BACH_CSV_HEADER) - 1;
		if (timed) /* ",clock,seconds" before the newline */
			o.len += (size_t)sprintf(o.buf + o.len - 1,
						 ",clock,seconds\n") -
				 1;
	}
	n = 0;
	status = EXIT_OK;
	while (count && !o.err) {
		const uint8_t *p;
		const uint64_t *clk = NULL;
		const uint32_t *off = NULL; /* kept records' places */
		uint64_t at = index;	    /* the block's trace position */
		uint64_t in_file;	    /* its first record's in its file */
		ssize_t kept;
		size_t k, s = 0;

		n = bach_reader_read(r, &p);
		if (n <= 0)
			break;
		k = (size_t)n;
		in_file = bach_reader_file_records(r) - k;
		index += k;
		if (timed && (status = times_block(&tt, r, k, &clk)))
			break;
		kept = filter_block(&flt, &p, &clk, k);
		if (kept < 0) {
			errmsg("out of memory");
			status = EXIT_USAGE;
			break;
		}
		k = (size_t)kept;
		off = flt.on ? flt.off : NULL;
		if (skip) {
			s = skip < k ? (size_t)skip : k;
			skip -= s;
			p += s * BACH_REC_SIZE;
			clk = clk ? clk + s : NULL;
			k -= s;
		}
		if (k > count)
			k = (size_t)count;
		count -= k;
		for (size_t i = 0; i < k; i++, p += BACH_REC_SIZE) {
			uint64_t pos = at + (off ? off[s + i] : s + i);
			char *d = obuf_room(&o, BACH_TEXT_MAX + 64);
			size_t len;

			if (__builtin_expect(bach_rec_is_gap(p), 0))
				len = fmt_gap(d, p, pos,
					      gap_cause(&gc,
							bach_reader_file(r),
							in_file + (pos - at)),
					      (enum gap_form)fmt);
			else if (fmt == F_TEXT)
				len = bach_fmt_text(d, p);
			else if (fmt == F_CSV)
				len = bach_fmt_csv(d, p, pos);
			else
				len = bach_fmt_jsonl(d, p, pos);
			if (clk)
				len = add_time(d, len, clk[i], tt.hz, fmt);
			o.len += len;
		}
	}
	if (timed && !status && n == 0)
		status = times_finish(&tt);
	obuf_flush(&o);
	times_close(&tt);
	gap_causes_free(&gc);
	if (status) {
		obuf_free(&o);
		bach_reader_free(r);
		filter_free(&flt);
		return status;
	}
	if (o.err) {
		errmsg("standard output: %s", strerror(-o.err));
		status = EXIT_USAGE;
	} else if (n < 0) {
		errmsg("%s", bach_reader_strerror(r));
		status = bach_exit_status((int)n);
	}
	obuf_free(&o);
	bach_reader_free(r);
	filter_free(&flt);
	return status;
}

const struct bach_cmd cmd_dump = {
	.name = "dump",
	.run = run,
	.values =
		(const struct complete_values[]){
			{ .opt = "format", .words = fmt_names },
			{ NULL },
		},
	.summary = "print records as text, CSV or JSON lines",
	.help = "usage: bach dump [-n N] [--skip N] [--range START:END | --between A B]\n"
		"                 [--type LIST] [--addr LO-HI] [--port LO-HI]\n"
		"                 [--format text|csv|jsonl] TRACE...\n"
		"\n"
		"  -n, --count N     print at most N records\n"
		"      --skip N      skip the first N records (reading them; of the\n"
		"                    range's or --between's too, and of those the\n"
		"                    filters keep)\n"
		"      --range START:END  records START to END-1 of the whole\n"
		"                    trace (either may be left out), reached\n"
		"                    through the .gzi index of blocked .byu.gz\n"
		"                    files (bach index); csv and jsonl keep each\n"
		"                    record's index in the whole trace\n" BETWEEN_HELP
			FILTER_HELP
		"      --time        add each record's bus clock and seconds from the\n"
		"                    trace's timing sidecar (TRACE.time.gz; '-' where\n"
		"                    a record has no time, seconds '-' when the clock\n"
		"                    rate is unknown); csv adds clock,seconds\n"
		"  -f, --format F    text (default): the BYU reference line\n"
		"                      printf(\"%08x %02x %s\\n\", address, be, type)\n"
		"                    csv: index,address,be,control,type\n"
		"                    jsonl: one JSON object per record\n"
		"\n"
		"Every record is printed (that the filters keep), INVALID ones\n"
		"included. A gap marker's type is GAP:lost=N:cause=C: the records it\n"
		"stands for, and the cause from its capture's manifest.jsonl\n"
		"(overflow, frames, corrupt, ring, device, disk; unknown without one);\n"
		"jsonl gives type \"GAP\", \"lost\" and \"cause\". Exit 1 when a file\n"
		"is damaged (after printing what could be read), 2 on a usage error.\n"
		"\n"
		"example: bach dump -n 10 capture/20261121T223000Z\n",
};
