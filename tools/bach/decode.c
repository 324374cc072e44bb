// SPDX-License-Identifier: MIT
/* bach decode: a logic-analyzer capture of the bus pins to a trace. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/la.h"
#include "bach/index.h"
#include "cmd.h"

#define MAX_OPTIONS 32

/* The trace and its timing sidecar (docs/formats.md section 3.2). */
struct out {
	struct bach_writer *w;
	struct bach_time_writer *tw; /* NULL: no sidecar (-, a device) */
	char tname[4096];
	int terr;
};

/* A block of records and their sample indexes: one call each. */
static int to_writer(void *arg, const uint8_t *recs, const uint64_t *at,
		     size_t n, uint64_t samplerate)
{
	struct out *o = arg;

	if (bach_writer_write(o->w, recs, n))
		return -1;
	if (!o->tw)
		return 0;
	bach_time_writer_clock(o->tw, samplerate);
	o->terr = bach_time_writer_put(o->tw, at, n);
	return o->terr;
}

/* The sidecar beside a trace file; none for - or a device or FIFO. */
static int open_times(struct out *o, const char *out, enum bach_out_format f)
{
	struct stat st;
	int err;

	if (!strcmp(out, "-") ||
	    (f == BACH_OUT_BYU && stat(out, &st) == 0 && !S_ISREG(st.st_mode)))
		return EXIT_OK;
	if (bach_time_name(o->tname, sizeof o->tname, out))
		return usage_error("%s: name too long for its timing sidecar",
				   out);
	err = bach_time_writer_open(&o->tw, AT_FDCWD, o->tname, 0);
	if (err) {
		errmsg("%s.part: cannot create: %s", o->tname, strerror(-err));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * The trace first (its close removes any older trace's sidecar beside
 * it), then its sidecar; a sidecar that cannot be finished takes the
 * trace with it: a failed decode leaves no output.
 */
static int close_out(struct out *o, const char *out)
{
	int err;

	if (bach_writer_close(o->w)) {
		errmsg("%s", bach_writer_strerror(o->w));
		return BACH_LA_SINK;
	}
	err = o->tw ? bach_time_writer_close(o->tw, true) : 0;
	if (err) {
		char gzi[4200];

		errmsg("%s: %s", o->tname, strerror(-err));
		unlink(out);
		snprintf(gzi, sizeof(gzi), "%s%s", out, BACH_INDEX_SUFFIX);
		unlink(gzi);
		return BACH_LA_SINK;
	}
	return 0;
}

static void report(const char *in, const char *out,
		   const struct bach_la_report *r)
{
	const struct bach_busdec_stats *s = &r->st;

	fprintf(stderr, "bach decode: %s: %s, %u channels, %" PRIu64 " samples",
		in, r->format, r->channels, s->samples);
	if (r->samplerate)
		fprintf(stderr, " at %" PRIu64 " Hz", r->samplerate);
	fprintf(stderr, "\n%s", r->assumed);
	fprintf(stderr,
		"bach decode: %" PRIu64 " bus clocks, %" PRIu64
		" cycles, %" PRIu64 " records to %s\n",
		s->clocks, s->cycles, s->records, out);
	const struct {
		uint64_t n;
		const char *what;
	} notes[] = {
		{ s->aborted,
		  "attempts aborted by BOFF# and restarted (recorded once)" },
		{ s->ken_uncached,
		  "cacheable reads made noncacheable by KEN#" },
		{ s->stray_brdy, "BRDY# with no cycle open (warning)" },
		{ s->overlapped,
		  "cycles began with two already open, the oldest closed early (warning)" },
		{ s->unfinished,
		  "cycles still open when the capture ended (recorded as they stood)" },
		{ s->off_bus,
		  "cycles while the CPU was off the bus (HLDA, BOFF#): another master's or floating pins, not recorded" },
		{ s->backoffs, "back-offs (BOFF#)" },
		{ s->ken_unknown,
		  "reads asked cacheable and recorded so: KEN# not followed (warning)" },
		{ s->inquire_addr,
		  "writebacks under AHOLD recorded at the inquire's address (EADS#)" },
		{ s->inquire_unsure,
		  "of them after several inquires in one AHOLD episode: the last one's address, hitm_n not captured to tell which hit (warning)" },
		{ s->boff_unsure,
		  "cycles open, or perhaps open, at a back-off with no cycle tracking: recorded at their ADS# and again at their restart if open (at most this many repeats; warning)" },
	};

	for (size_t i = 0; i < sizeof notes / sizeof *notes; i++)
		if (notes[i].n)
			fprintf(stderr, "  %" PRIu64 " %s\n", notes[i].n,
				notes[i].what);
	if (s->off_bus_clocks)
		fprintf(stderr,
			"  %" PRIu64 " clocks with the CPU off the bus\n",
			s->off_bus_clocks);
}

/*
 * The trace format OUT's name asks for: .byu.gz, .byu, - (raw) or an
 * existing device or FIFO (raw, written in place); else a usage error
 * naming the extension, before anything is created.
 */
static int out_format(const char *out, enum bach_out_format *fmt)
{
	const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
	const char *ext = strrchr(base, '.');
	struct stat st;

	*fmt = ends_with(out, ".byu.gz") ? BACH_OUT_BYU_GZ : BACH_OUT_BYU;
	if (*fmt == BACH_OUT_BYU_GZ || ends_with(out, ".byu") ||
	    !strcmp(out, "-") || (stat(out, &st) == 0 && !S_ISREG(st.st_mode)))
		return EXIT_OK;
	return usage_error(
		"%s: bach decode writes a trace: a name ending in .byu or .byu.gz, or -, not %s%s%s (bach convert makes other formats of it)",
		out, ext ? "'" : "a name without one", ext ? ext : "",
		ext ? "'" : "");
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "map", required_argument, NULL, 'm' },
		{ "format", required_argument, NULL, 'f' },
		{ "option", required_argument, NULL, 'O' },
		{ "output", required_argument, NULL, 'o' },
		{ "list-formats", no_argument, NULL, 'L' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "edge", no_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	const char *options[MAX_OPTIONS], *inputs[2];
	struct bach_la_params p = { .options = options, .tsink = to_writer };
	struct bach_writer_opts wo = { 0 };
	struct bach_la_report rep;
	struct out o = { 0 };
	const char *out = NULL;
	bool quiet = false;
	char err[2048];
	int c, rc;

	while ((c = getopt_long(argc, argv, "m:f:O:o:qe", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			p.map = optarg;
			break;
		case 'f':
			p.format = optarg;
			break;
		case 'O':
			if (p.noptions == MAX_OPTIONS)
				return usage_error("more than %d --option",
						   MAX_OPTIONS);
			options[p.noptions++] = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'e':
			p.ads_edge = true;
			break;
		case 'L': {
			static char buf[8192];

			bach_la_formats(buf, sizeof buf);
			fputs(buf, stdout);
			return EXIT_OK;
		}
		default:
			return usage_error("bad option");
		}
	}
	if (optind == argc)
		return usage_error(
			"which capture? (bach decode CAPTURE -o OUT)");
	if (argc - optind > 1)
		return usage_error("one capture at a time: unexpected '%s'",
				   argv[optind + 1]);
	if (!out)
		return usage_error("-o OUT is required (a .byu, .byu.gz or -)");
	inputs[0] = argv[optind];
	inputs[1] = p.map;
	rc = check_output(out, inputs, 2);
	if (!rc)
		rc = out_format(out, &wo.format);
	if (rc)
		return rc;
	catch_signals();
	if (bach_writer_open(&o.w, out, &wo)) {
		errmsg("%s", bach_writer_strerror(o.w));
		bach_writer_free(o.w);
		return EXIT_USAGE;
	}
	rc = open_times(&o, out, wo.format);
	if (rc) {
		bach_writer_free(o.w);
		return rc;
	}
	p.arg = &o;
	rc = bach_la_decode_file(argv[optind], &p, &rep, err, sizeof err);
	if (rc == BACH_LA_SINK && o.terr)
		errmsg("%s: %s", o.tname, strerror(-o.terr));
	else if (rc == BACH_LA_SINK)
		errmsg("%s", bach_writer_strerror(o.w));
	else if (rc)
		errmsg("%s", err);
	if (!rc)
		rc = close_out(&o, out);
	/* a failed decode leaves no output behind */
	bach_time_writer_free(o.tw);
	bach_writer_free(o.w);
	if (rc == BACH_LA_BAD_DATA)
		return EXIT_DATA;
	if (rc)
		return EXIT_USAGE;
	if (!quiet)
		report(argv[optind], out, &rep);
	return EXIT_OK;
}

const struct bach_cmd cmd_decode = {
	.name = "decode",
	.run = run,
	.summary = "decode a logic-analyzer capture of the bus into a trace",
	.help = "usage: bach decode [--map FILE] [--format NAME] [--option KEY=VALUE]...\n"
		"                   [--edge] CAPTURE -o OUT\n"
		"       bach decode --list-formats\n"
		"\n"
		"Reads a logic-analyzer capture of the Pentium bus pins through libsigrok\n"
		"(a .sr session, VCD, CSV, raw binary, ...) and writes one record per bus\n"
		"cycle (docs/decoding.md). Channels named as in the design (clk ads_n\n"
		"a3..a31 be0_n..be7_n mio dc wr cache_n, and brdy_n na_n ken_n boff_n lock_n\n"
		"hlda ahold eads_n hitm_n scyc) are found by name; a map file renames others\n"
		"(lock_n and scyc are accepted and not used: a record has no field for\n"
		"them). Signals not captured take constant levels; the summary on stderr\n"
		"says which, which bus rules (KEN#, NA#, BOFF#, HLDA, AHOLD) the decoder\n"
		"could follow, and what each missing one costs: without ken_n or na_n, one\n"
		"record per ADS#.\n"
		"\n"
		"  -m, --map FILE       'signal = channel', 'signal = low|high' (a constant\n"
		"                       level) or 'signal = none' (not captured) lines,\n"
		"                       '#' comments; 'clk = none' forces state mode\n"
		"  -e, --edge           a cycle opens where ads_n falls, not on every clock\n"
		"                       it is low (for strobes longer than one clock)\n"
		"  -f, --format NAME    the input format (default: from the extension:\n"
		"                       .sr, .vcd, .csv, ...); --list-formats lists them\n"
		"  -O, --option K=V     an option of the input format, for example\n"
		"                       numchannels=48 and samplerate=100000000 for binary\n"
		"  -o, --output OUT     the trace: NAME.byu, NAME.byu.gz (blocked gzip) or -;\n"
		"                       beside a file, NAME.time.gz: each record's sample\n"
		"                       index (the sample of its ADS#) at the sample rate\n"
		"                       (dump --time)\n"
		"  -q, --quiet          no summary\n"
		"\n"
		"A capture that cannot be read whole leaves no output: exit 1 when it is\n"
		"damaged (cut short, a corrupt member, samples against its format), 2 for\n"
		"anything else (a missing file, a bad map or option, not the format named).\n"
		"\n"
		"examples:\n"
		"  bach decode bus.vcd -o bus.byu.gz\n"
		"  bach decode --map kc85.map kc85.sr -o kc85.byu\n"
		"  bach decode --format binary --option numchannels=48 \\\n"
		"      --option samplerate=66000000 --map pins.map dump.bin -o t.byu\n",
};
