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

/* whether s is a number from lo to hi, *v */
static bool number_in(const char *s, double lo, double hi, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end != s && !*end && *v >= lo && *v <= hi;
}

/* one side of --size: a number and its unit (in, cm, px or none: px) */
static const char *size_side(const char *s, double *v, char *unit)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || !(*v > 0) || *v > 1e5)
		return NULL;
	if (!strncmp(end, "in", 2) || !strncmp(end, "cm", 2) ||
	    !strncmp(end, "px", 2)) {
		*unit = *end;
		end += 2;
	} else {
		*unit = 0;
	}
	return end;
}

/* --size WxH: 1000x600 (pixels), 3.5inx2.5in, 9cmx6cm */
static int parse_size(const char *s, struct plot_opts *o)
{
	const char *p = size_side(s, &o->width, &o->unit);
	char u2 = 0;

	if (p && *p == 'x')
		p = size_side(p + 1, &o->height, &u2);
	else
		p = NULL;
	if (!p || *p || (o->unit && u2 && o->unit != u2))
		return usage_error(
			"--size: '%s' is not WxH in one unit: in, cm or px (3.5inx2.5in, 9cmx6cm, 1000x600)",
			s);
	o->unit = o->unit ? o->unit : u2 ? u2 : 'p';
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
		{ "no-title", no_argument, NULL, 'N' },
		{ "size", required_argument, NULL, 'S' },
		{ "dpi", required_argument, NULL, 'D' },
		{ "font", required_argument, NULL, 'F' },
		{ "font-size", required_argument, NULL, 'Z' },
		{ "min", required_argument, NULL, 'm' },
		{ "max", required_argument, NULL, 'M' },
		{ "debug-layout", required_argument, NULL, 'L' },
		{ "x", required_argument, NULL, 'X' },
		{ "label", required_argument, NULL, 'B' },
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
		case 'N':
			o.no_title = true;
			break;
		case 'S':
			if (parse_size(optarg, &o))
				return EXIT_USAGE;
			break;
		case 'D':
			if (!number_in(optarg, 10, 2400, &o.dpi))
				return usage_error(
					"--dpi: '%s' is not a number from 10 to 2400",
					optarg);
			break;
		case 'F':
			if (!*optarg)
				return usage_error(
					"--font: give a family name");
			o.font = optarg;
			break;
		case 'Z':
			if (!number_in(optarg, 4, 72, &o.font_size))
				return usage_error(
					"--font-size: '%s' is not a size in points from 4 to 72",
					optarg);
			break;
		case 'm':
			o.min = optarg;
			break;
		case 'M':
			o.max = optarg;
			break;
		case 'L':
			o.layout = optarg;
			break;
		case 'B':
			if (o.nlabels == 8)
				return usage_error("--label: at most 8");
			o.label[o.nlabels++] = optarg;
			break;
		case 'X':
			if (strcmp(optarg, "time") &&
			    strcmp(optarg, "position"))
				return usage_error(
					"--x: '%s' is not time or position",
					optarg);
			o.xtime = !strcmp(optarg, "time");
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
		return usage_error(
			"no -o FILE.svg, FILE.pdf or FILE.png given");
	else if (ends_with(out, ".svg"))
		fmt = PLOT_SVG;
	else if (ends_with(out, ".png"))
		fmt = PLOT_PNG;
	else if (ends_with(out, ".pdf"))
		fmt = PLOT_PDF;
	else
		return usage_error(
			"-o %s: the name must end in .svg, .pdf or .png", out);
	if (optind >= argc)
		return usage_error("no TRACE given");
	if (stdin_once(argv + optind, argc - optind))
		return EXIT_USAGE;
	if (o.nranges && kind != PLOT_MAP)
		return usage_error("--range is for plot map");
	if (o.xtime && (kind == PLOT_MRC || data != PLOT_SVG))
		return usage_error(
			"--x time is for the pictures of map, mix and wss");
	if (o.nlabels && kind != PLOT_MRC)
		return usage_error("--label is for plot mrc");
	if (o.nlabels > (size_t)(argc - optind))
		return usage_error("--label: %zu labels for %d traces",
				   o.nlabels, argc - optind);
	if ((o.min || o.max) && kind != PLOT_MRC)
		return usage_error("--min and --max are for plot mrc");
	if (o.title && o.no_title)
		return usage_error("--title and --no-title: one or the other");
	if (kind == PLOT_MRC) {
		uint64_t sz[BACH_MRC_MAX_SIZES];

		if (bach_mrc_parse_sizes(NULL, o.min ? o.min : "1k",
					 o.max ? o.max : "32M", sz, why,
					 sizeof(why)) < 0)
			return usage_error("%s", why);
	}
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
	.help = "usage: bach plot map|mix|mrc|wss [OPTIONS] TRACE... -o FILE.svg|.pdf|.png\n"
		"       bach plot map|mix|mrc|wss [OPTIONS] TRACE... --csv|--json [-o FILE]\n"
		"\n"
		"  map   address against trace position, a density map coloured by\n"
		"        the commonest kind of reference; the ranges in use, joined\n"
		"        when less than 1 MiB apart (at most 8), and I/O ports apart\n"
		"  mix   the share of each kind of bus cycle along the trace\n"
		"  mrc   miss ratio of fully associative LRU against cache size\n"
		"        (--min to --max), one curve per TRACE (at most 8)\n"
		"  wss   distinct lines and 4 KiB pages per window of records\n"
		"\n"
		"Gaps, marks and device events of a capture's manifest (for a file,\n"
		"its gap markers) are vertical rules on map, mix and wss. Several\n"
		"TRACEs are read as one trace, except by mrc.\n"
		"\n"
		"  -o, --output FILE  the picture: SVG, PDF or PNG, from the name\n"
		"      --range LO-HI  map: addresses to show, hex (LO+LEN too);\n"
		"                     repeat for up to 8 ranges\n"
		"      --line BYTES   mrc, wss: line size (default 32)\n"
		"      --sample R     mrc: SHARDS rate in (0, 1] (default 1, exact)\n"
		"      --window N     wss: records per window (default: 1/400 of the\n"
		"                     trace)\n"
		"      --min SIZE, --max SIZE  mrc: cache sizes (default 1k, 32M)\n"
		"      --label TEXT   mrc: the legend of the next trace (repeat; by\n"
		"                     default each trace's last name)\n"
		"      --title TEXT   the title instead of the kind and trace\n"
		"      --no-title     no title\n"
		"      --size WxH     the picture's size, in in, cm or px (default\n"
		"                     1000x600 pixels; 3.5inx2.5in, 9cmx6cm)\n"
		"      --dpi N        PNG pixels per inch (default 72: a pixel is a\n"
		"                     point; 3.5inx2.5in --dpi 300 is 1050x750)\n"
		"      --font FAMILY  the font family, as fontconfig names it (default\n"
		"                     DejaVu Sans)\n"
		"      --debug-layout FILE  the boxes of every text, the legend and the\n"
		"                     plot area, as JSON (for the tests)\n"
		"      --x time       map, mix, wss: x is the time of the records (the\n"
		"                     traces' .time.gz sidecars), not their position\n"
		"      --font-size PT the tick labels' size in points (default 11, down\n"
		"                     to 8 on a 3.5x2.5 in canvas; the rest and the\n"
		"                     margins scale with it)\n" FILTER_HELP
		"                    (positions are those of the records kept)\n"
		"      --csv, --json  the data behind the picture instead, to standard\n"
		"                     output or -o FILE (docs/analysis.md section 4)\n"
		"\n"
		"example: bach plot map capture/20261121T223000Z -o map.png\n",
};
