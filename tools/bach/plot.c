// SPDX-License-Identifier: MIT
/*
 * bach plot: the command. Its options, the kind and the picture's format
 * from the output's name, the traces checked (plot map reads them twice,
 * so no standard input and no pipe), and the picture written to a
 * temporary file that becomes the output only when it is whole. The
 * pictures themselves are plot_draw() (plot.h, plot_draw.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/analysis/cachesim.h"
#include "lib/analysis/mrc.h"
#include "lib/io/outfile.h"
#include "lib/options.h"
#include "plot.h"

static int write_fd(void *closure, const uint8_t *data, size_t len)
{
	int fd = *(int *)closure;

	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* LO-HI or LO+LEN in hex (0x optional): one address range of the map */
static int parse_addr_ranges(const char *s, struct plot_opts *o)
{
	unsigned long long lo, b;
	char sep, *end;

	if (o->nranges == PLOT_MAX_RANGES)
		return usage_error("--range: at most %d ranges",
				   PLOT_MAX_RANGES);
	errno = 0;
	lo = strtoull(s, &end, 16);
	sep = *end;
	if (end == s || (sep != '-' && sep != '+') || errno)
		return usage_error(
			"--range: '%s' is not LO-HI or LO+LEN in hex", s);
	s = end + 1;
	b = strtoull(s, &end, 16);
	if (end == s || *end || errno || *s == '-' || (sep == '-' && b < lo) ||
	    (sep == '+' && !b) || (sep == '-' ? b : lo + b - 1) > 0xffffffffull)
		return usage_error(
			"--range: '%s' is not a range of 32-bit addresses", s);
	o->lo[o->nranges] = lo;
	o->hi[o->nranges] = sep == '-' ? b : lo + b - 1;
	o->nranges++;
	return EXIT_OK;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "range", required_argument, NULL, 'r' },
		{ "line", required_argument, NULL, 'l' },
		{ "sample", required_argument, NULL, 's' },
		{ "window", required_argument, NULL, 'w' },
		{ "title", required_argument, NULL, 't' },
		{ "type", required_argument, NULL, FILTER_TYPE },
		{ "addr", required_argument, NULL, FILTER_ADDR },
		{ "port", required_argument, NULL, FILTER_PORT },
		{ "csv", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_filter flt = { 0 };
	struct plot_opts o = { .line = 32, .sample = 1, .flt = &flt };
	const char *out = NULL;
	struct bach_outfile f;
	enum plot_format fmt, data = PLOT_SVG; /* SVG: no --csv, --json */
	enum plot_kind kind;
	char why[200], *end;
	uint64_t v;
	int c, status, err;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'r':
			status = parse_addr_ranges(optarg, &o);
			if (status)
				return status;
			break;
		case 'l':
			if (bach_parse_bytes(optarg, &v) ||
			    v > BACH_MRC_MAX_LINE ||
			    bach_mrc_check_line((uint32_t)v, why, sizeof(why)))
				return usage_error(
					"--line: '%s' is not a power of two from 8 to 65536",
					optarg);
			o.line = (uint32_t)v;
			break;
		case 's':
			o.sample = strtod(optarg, &end);
			if (end == optarg || *end || !(o.sample > 0) ||
			    o.sample > 1)
				return usage_error(
					"--sample: '%s' is not a rate in (0, 1]",
					optarg);
			break;
		case 'w':
			if (!parse_u64(optarg, &o.window) || !o.window)
				return usage_error(
					"--window: '%s' is not a number of records",
					optarg);
			break;
		case 't':
			o.title = optarg;
			break;
		case 'C':
		case 'J':
			if (data != PLOT_SVG)
				return usage_error(
					"--csv and --json: one or the other");
			data = c == 'C' ? PLOT_CSV : PLOT_JSON;
			break;
		default: /* --type, --addr, --port, or a bad option */
			if (filter_arg(&flt, c, optarg))
				return EXIT_USAGE;
			break;
		}
	}
	if (optind >= argc)
		return usage_error("no KIND given (map, mix, mrc or wss)");
	for (kind = 0; kind < PLOT_NKINDS; kind++)
		if (!strcmp(argv[optind], plot_kind_names[kind]))
			break;
	if (kind == PLOT_NKINDS)
		return usage_error("'%s' is not a kind: map, mix, mrc or wss",
				   argv[optind]);
	optind++;
	if (data != PLOT_SVG)
		fmt = data;
	else if (!out)
		return usage_error("no -o FILE.svg or FILE.png given");
	else if (ends_with(out, ".svg"))
		fmt = PLOT_SVG;
	else if (ends_with(out, ".png"))
		fmt = PLOT_PNG;
	else
		return usage_error("-o %s: the name must end in .svg or .png",
				   out);
	if (optind >= argc)
		return usage_error("no TRACE given");
	if (stdin_once(argv + optind, argc - optind))
		return EXIT_USAGE;
	if (o.nranges && kind != PLOT_MAP)
		return usage_error("--range is for plot map");
	for (int i = optind; i < argc && kind == PLOT_MAP; i++) {
		struct stat st;
		char esc[512];

		if (!strcmp(argv[i], "-"))
			return usage_error(
				"plot map reads its traces twice: give a file, not -");
		/* a named pipe would wait for a second writer for ever */
		if (stat(argv[i], &st) == 0 && !S_ISREG(st.st_mode) &&
		    !S_ISDIR(st.st_mode))
			return usage_error(
				"plot map reads its traces twice: give a file, not %s (%s)",
				bach_escape_ctl(esc, sizeof(esc), argv[i]),
				bach_file_type(st.st_mode));
	}
	if (!out || !strcmp(out, "-")) { /* the data, to standard output */
		int fd = STDOUT_FILENO;

		return plot_draw(kind, argc - optind, argv + optind, &o, fmt,
				 write_fd, &fd);
	}
	status = check_output(out, (const char *const *)argv + optind,
			      (size_t)(argc - optind));
	if (status)
		return status;
	catch_signals();
	err = bach_outfile_open(&f, out);
	if (err) {
		errmsg("%s: %s", out, strerror(-err));
		return EXIT_USAGE;
	}
	status = plot_draw(kind, argc - optind, argv + optind, &o, fmt,
			   write_fd, &f.fd);
	filter_free(&flt);
	if (status) {
		bach_outfile_abort(&f);
		return status;
	}
	err = bach_outfile_commit(&f);
	if (err) {
		errmsg("%s: %s", out, strerror(-err));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* the first operand: a kind (plot_kind_names[]); then traces */
static void kinds(int n, char **words, const char *cur)
{
	(void)n, (void)words;
	for (int k = 0; k < PLOT_NKINDS; k++)
		complete_word(plot_kind_names[k], cur);
}

const struct bach_cmd cmd_plot = {
	.name = "plot",
	.run = run,
	.values =
		(const struct complete_values[]){
			{ .opt = "", .list = kinds, .first = true },
			{ NULL },
		},
	.summary = "pictures: address map, cycle mix, miss ratios, working set",
	.help = "usage: bach plot map|mix|mrc|wss [OPTIONS] TRACE... -o FILE.svg|FILE.png\n"
		"       bach plot map|mix|mrc|wss [OPTIONS] TRACE... --csv|--json [-o FILE]\n"
		"\n"
		"  map   address against trace position, a density map coloured by\n"
		"        the commonest kind of reference; the ranges in use, joined\n"
		"        when less than 1 MiB apart (at most 8), and I/O ports apart\n"
		"  mix   the share of each kind of bus cycle along the trace\n"
		"  mrc   miss ratio of fully associative LRU from 1 KiB to 32 MiB,\n"
		"        one curve per TRACE (at most 8)\n"
		"  wss   distinct lines and 4 KiB pages per window of records\n"
		"\n"
		"Gaps, marks and device events of a capture's manifest (for a file,\n"
		"its gap markers) are vertical rules on map, mix and wss. Several\n"
		"TRACEs are read as one trace, except by mrc.\n"
		"\n"
		"  -o, --output FILE  the picture: SVG or PNG, from the name\n"
		"      --range LO-HI  map: addresses to show, hex (LO+LEN too);\n"
		"                     repeat for up to 8 ranges\n"
		"      --line BYTES   mrc, wss: line size (default 32)\n"
		"      --sample R     mrc: SHARDS rate in (0, 1] (default 1, exact)\n"
		"      --window N     wss: records per window (default: 1/400 of the\n"
		"                     trace)\n"
		"      --title TEXT   the title instead of the kind and trace\n" FILTER_HELP
		"                    (positions are those of the records kept)\n"
		"      --csv, --json  the data behind the picture instead, to standard\n"
		"                     output or -o FILE (docs/analysis.md section 4)\n"
		"\n"
		"example: bach plot map capture/20261121T223000Z -o map.png\n",
};
