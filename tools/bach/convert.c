// SPDX-License-Identifier: MIT
/* bach convert: between byu and byu.gz, and to and from foreign formats. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/record.h"
#include "cmd.h"
#include "lib/formats/formats.h"
#include "lib/io/outfile.h"
#include "lib/options.h"
#include "source.h"

/* records to byu / byu.gz */
static int to_trace(struct source *s, const struct bach_format *f,
		    const char *out, const struct bach_writer_opts *base,
		    unsigned frame_kb, struct rec_filter *flt, uint64_t *nrec,
		    uint64_t *nkept)
{
	struct bach_writer_opts wo = *base;
	struct bach_writer *w;
	const uint8_t *p;
	ssize_t n;
	int err;

	wo.format = f->kind == BACH_FORMAT_BYU_GZ    ? BACH_OUT_BYU_GZ
		    : f->kind == BACH_FORMAT_BYU_ZST ? BACH_OUT_BYU_ZST
						     : BACH_OUT_BYU;
	err = bach_writer_open_framed(&w, out, &wo, frame_kb);
	if (err) {
		errmsg("%s", bach_writer_strerror(w));
		bach_writer_free(w);
		return EXIT_USAGE;
	}
	while ((n = source_read(s, &p)) > 0) {
		ssize_t k = filter_block(flt, &p, NULL, (size_t)n);

		*nrec += (uint64_t)n;
		if (k < 0) {
			errmsg("out of memory");
			bach_writer_free(w);
			return EXIT_USAGE;
		}
		*nkept += (uint64_t)k;
		if (k && bach_writer_write(w, p, (size_t)k))
			break;
	}
	if (n < 0) {
		errmsg("%s", source_error(s));
		bach_writer_free(w); /* nothing whole-looking is left behind */
		return bach_exit_status((int)n);
	}
	err = bach_writer_close(w);
	if (err)
		errmsg("%s", bach_writer_strerror(w));
	bach_writer_free(w);
	return err ? EXIT_USAGE : EXIT_OK;
}

/*
 * The clocks of a block, for an export: a record without a time
 * (BACH_TIME_NONE) takes the last time before it (0 before the first),
 * so the field never goes back. One pass a block, into buf.
 */
static const uint64_t *export_times(const uint64_t *clk, size_t n,
				    uint64_t *last, uint64_t *buf)
{
	for (size_t i = 0; i < n; i++) {
		if (clk[i] != BACH_TIME_NONE)
			*last = clk[i];
		buf[i] = *last;
	}
	return buf;
}

/*
 * records to a foreign format, through its write() a block at a time (a
 * run of consecutive records at a time when filtered, so that each is
 * numbered by its trace position); csv's gap markers are lines of their
 * own, as dump --format csv writes them (docs/formats.md section 7.4)
 */
static int to_text(struct source *s, const struct bach_format *f,
		   const char *out, uint64_t first, struct trace_times *tt,
		   struct rec_filter *flt, uint64_t *nrec, uint64_t *nkept,
		   uint64_t *skipped, struct bach_export_carry *carry)
{
	struct bach_outfile of;
	struct obuf o;
	const uint8_t *p;
	const uint64_t *clk = NULL;
	uint64_t *tbuf = NULL, last = 0;
	/* csv shows a gap marker as a gap, with its cause */
	bool gaps = f == bach_format_find("csv", BACH_FORMAT_OUT);
	struct gap_causes gc = { 0 };
	ssize_t n = 0;
	int err;

	err = bach_outfile_open(&of, out);
	if (err) {
		errmsg("%s: cannot create: %s", out, strerror(-err));
		return EXIT_USAGE;
	}
	if (obuf_init(&o, of.fd, 1u << 20)) {
		bach_outfile_abort(&of);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	if (f->header) {
		o.len = strlen(f->header);
		memcpy(o.buf, f->header, o.len);
	}
	if (tt && !(tbuf = malloc(4096 * sizeof(*tbuf))))
		o.err = -ENOMEM;
	while (!o.err && (n = source_read(s, &p)) > 0) {
		uint64_t at = first + *nrec; /* the block's trace position */
		/* its first record's in its file */
		uint64_t in_file =
			s->r ? bach_reader_file_records(s->r) - (uint64_t)n : 0;
		const uint32_t *off;
		ssize_t kept;
		size_t done = 0;

		if (tt) {
			err = times_block(tt, s->r, (size_t)n, &clk);
			if (err)
				break;
		}
		*nrec += (uint64_t)n;
		kept = filter_block(flt, &p, &clk, (size_t)n);
		if (kept < 0) {
			o.err = -ENOMEM;
			break;
		}
		off = flt->on ? flt->off : NULL;
		/* format in slices that fit the buffer */
		while (done < (size_t)kept && !o.err) {
			size_t k = (size_t)kept - done;
			/* the slice's position in the block */
			uint64_t rel = off ? off[done] : done;
			char *d;
			const uint64_t *t;

			k = k < 4096 ? k : 4096;
			for (size_t j = 1; off && j < k; j++)
				if (off[done + j] != off[done] + j)
					k = j;
			/* a gap marker alone, the records before it apart */
			for (size_t j = 0; gaps && j < k; j++)
				if (__builtin_expect(
					    bach_rec_is_gap(p +
							    j * BACH_REC_SIZE),
					    0)) {
					k = j ? j : 1;
					break;
				}
			d = obuf_room(&o, k * BACH_TEXT_MAX);
			t = clk ? export_times(clk, k, &last, tbuf) : NULL;
			if (gaps && bach_rec_is_gap(p))
				o.len += fmt_gap(
					d, p, at + rel,
					s->r ? gap_cause(&gc,
							 bach_reader_file(s->r),
							 in_file + rel)
					     : "unknown",
					GAP_CSV);
			else
				o.len += f->write(d, p, k, at + rel, t, skipped,
						  carry);
			*nkept += k;
			p += k * BACH_REC_SIZE;
			clk = clk ? clk + k : NULL;
			done += k;
		}
	}
	if (tt && !err && !o.err && n == 0)
		err = times_finish(tt);
	obuf_flush(&o);
	obuf_free(&o);
	free(tbuf);
	gap_causes_free(&gc);
	if (tt && err) {
		/* times_block() said which sidecar and where */
		bach_outfile_abort(&of);
		return err;
	}
	if (n < 0) {
		errmsg("%s", source_error(s));
		bach_outfile_abort(&of);
		return bach_exit_status((int)n);
	}
	if (o.err) {
		errmsg("%s: write error: %s", bach_outfile_name(&of),
		       strerror(-o.err));
		bach_outfile_abort(&of);
		return EXIT_USAGE;
	}
	err = bach_outfile_commit(&of);
	if (err) {
		errmsg("%s: %s", out, strerror(-err));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "mask-address", no_argument, NULL, 'm' },
		{ "level", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 'j' },
		{ "zstd-frame-kb", required_argument, NULL, 'F' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "range", required_argument, NULL, 'r' },
		{ "between", required_argument, NULL, 'B' },
		{ "no-time", no_argument, NULL, 'T' },
		{ "type", required_argument, NULL, FILTER_TYPE },
		{ "addr", required_argument, NULL, FILTER_ADDR },
		{ "port", required_argument, NULL, FILTER_PORT },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_filter flt = { 0 };
	uint64_t start = 0, end = UINT64_MAX;
	const char *ba = NULL, *bb = NULL;
	const struct bach_format *from = NULL, *to = NULL;
	struct bach_writer_opts wo = { 0 };
	unsigned frame_kb = 0; /* --zstd-frame-kb; 0: the default */
	struct bach_import_stats ist = { 0 };
	struct bach_export_carry carry = { 0 };
	uint64_t nrec = 0, nkept = 0, skipped = 0, v;
	unsigned flags = 0;
	bool quiet = false, no_time = false, whole;
	struct trace_times tt, *ttp = NULL;
	struct source s;
	const char *in, *out;
	int c, status;

	while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			from = bach_format_find(optarg, BACH_FORMAT_IN);
			if (!from)
				return usage_error(
					"--from: unknown format '%s' (%s)",
					optarg, fmt_names(BACH_FORMAT_IN));
			break;
		case 't':
			to = bach_format_find(optarg, BACH_FORMAT_OUT);
			if (!to)
				return usage_error(
					"--to: unknown format '%s' (%s)",
					optarg, fmt_names(BACH_FORMAT_OUT));
			break;
		case 'm':
			flags |= BACH_IMPORT_MASK_ADDRESS;
			break;
		case 'l':
			/* 13 to 19: byu.zst's only, checked below */
			if (!parse_u64(optarg, &v) || v < 1 || v > 19)
				return usage_error(
					"--level: 1 to 12 (byu.zst: 19), not '%s'",
					optarg);
			wo.level = (int)v;
			break;
		case 'j':
			if (!parse_u64(optarg, &v) || v < 1 || v > 64)
				return usage_error(
					"--threads: 1 to 64, not '%s'", optarg);
			wo.threads = (int)v;
			break;
		case 'F':
			if (!parse_u64(optarg, &v) || v < 64 || v > 16384)
				return usage_error(
					"--zstd-frame-kb: 64 to 16384, not '%s'",
					optarg);
			frame_kb = (unsigned)v;
			break;
		case 'q':
			quiet = true;
			break;
		case 'T':
			no_time = true;
			break;
		case 'r':
			if (range_arg(optarg, &start, &end))
				return EXIT_USAGE;
			break;
		case 'B':
			if (between_arg(argc, argv, &ba, &bb))
				return EXIT_USAGE;
			break;
		default: /* --type, --addr, --port, or a bad option */
			if (filter_arg(&flt, c, optarg))
				return EXIT_USAGE;
			break;
		}
	}
	if (argc - optind != 2)
		return usage_error("need IN and OUT");
	in = argv[optind];
	out = argv[optind + 1];
	if (!from)
		from = fmt_guess(in, BACH_FORMAT_IN);
	if (!to)
		to = fmt_guess(out, BACH_FORMAT_OUT);
	if (!from)
		return usage_error(
			"%s: cannot tell the input format; give --from", in);
	if (!to)
		return usage_error(
			"%s: cannot tell the output format; give --to", out);

	if (wo.level > 12 && to->kind != BACH_FORMAT_BYU_ZST)
		return usage_error("--level: 1 to 12 for %s, not %d", to->name,
				   wo.level);
	if (frame_kb && to->kind != BACH_FORMAT_BYU_ZST)
		return usage_error("--zstd-frame-kb: for byu.zst, not %s",
				   to->name);
	if ((ba || start || end != UINT64_MAX) &&
	    from->kind == BACH_FORMAT_FOREIGN)
		return usage_error(
			"--range and --between: for traces, not imports (--from %s)",
			from->name);
	if (ba && (start || end != UINT64_MAX))
		return usage_error("--range and --between: one or the other");
	status = check_output(out, &in, 1);
	if (status)
		return status;
	whole = !ba && !start && end == UINT64_MAX;
	catch_signals();
	status = open_source(&s, from, in, flags);
	if (status) {
		close_source(&s);
		return bach_exit_status(status);
	}
	/* csv and laplace number the records by their trace position */
	if (s.r)
		status = select_records(s.r, 1, (char **)&in, ba, bb, &start,
					end);
	if (status) {
		close_source(&s);
		return status;
	}
	/* the time field from the timing sidecar, when the trace has one */
	if (s.r && to->timed && !no_time && bach_times_present(in)) {
		status = times_open(&tt, whole);
		if (status) {
			close_source(&s);
			return status;
		}
		ttp = &tt;
	}
	if (to->kind == BACH_FORMAT_FOREIGN)
		status = to_text(&s, to, out, start, ttp, &flt, &nrec, &nkept,
				 &skipped, &carry);
	else
		status = to_trace(&s, to, out, &wo, frame_kb, &flt, &nrec,
				  &nkept);
	if (s.im)
		bach_importer_stats(s.im, &ist);
	if (!quiet && status == EXIT_OK) {
		if (s.im) {
			/* a plural noun: less its "s" for 1 */
			const char *u = from->units  ? from->units
					: from->unit ? "records"
						     : "lines";

			fprintf(stderr,
				"%s: %llu %.*s read, %llu record%s written, %llu skipped (no BYU equivalent)%s%.*llu%s\n",
				prog_cmd, (unsigned long long)ist.lines,
				(int)(strlen(u) - (ist.lines == 1)), u,
				(unsigned long long)(ist.records - nrec +
						     nkept),
				bach_s(ist.records - nrec + nkept),
				(unsigned long long)ist.skipped,
				flt.on ? ", " : "", flt.on,
				(unsigned long long)(nrec - nkept),
				flt.on ? " filtered out" : "");
		} else
			fprintf(stderr,
				"%s: %llu record%s read, %llu written, %llu skipped (no %s equivalent)%s%.0llu%s%s%.*llu%s\n",
				prog_cmd, (unsigned long long)nrec,
				bach_s(nrec),
				(unsigned long long)(nkept - skipped -
						     carry.folded),
				(unsigned long long)skipped, to->name,
				carry.folded ? ", " : "",
				(unsigned long long)carry.folded,
				carry.folded
					? " fetches folded into the line entry before them"
					: "",
				flt.on ? ", " : "", flt.on,
				(unsigned long long)(nrec - nkept),
				flt.on ? " filtered out" : "");
	}
	if (ttp)
		times_close(ttp);
	close_source(&s);
	filter_free(&flt);
	return status;
}

/* The help before the list of formats, and after it. */
#define HELP_HEAD                                                              \
	"usage: bach convert [--from FMT] [--to FMT] [--mask-address]\n"       \
	"                    [--between A B] [--type LIST] [--addr LO-HI]\n"   \
	"                    [--port LO-HI] IN OUT\n"                          \
	"\n"                                                                   \
	"IN and OUT may be - for standard input and output; IN may be a\n"     \
	"capture directory. A format its file name implies (below) need not\n" \
	"be given.\n"                                                          \
	"\n"                                                                   \
	"  --from FMT        IN's format, one marked in below; any of them\n"  \
	"                    gzip-compressed too (read as it is read)\n"       \
	"  --to FMT          OUT's format, one marked out below\n"             \
	"  --mask-address    keep the low 32 bits of wider addresses "         \
	"(imports)\n"                                                          \
	"  --level N         byu.gz with libdeflate at level N, 1 to 12 "      \
	"(default:\n"                                                          \
	"                    bach's record encoder, faster than pigz -1 and\n" \
	"                    smaller than gzip -1 on traces); byu.zst with\n"  \
	"                    zstd at level N, 1 to 19 (default 3)\n"           \
	"  --zstd-frame-kb N byu.zst: KiB of records a frame, whole 64 KiB\n"  \
	"                    blocks, 64 to 16384 (default 8192)\n"             \
	"  --threads N       compressing threads (default: all CPUs)\n"        \
	"  -q, --quiet       no summary line on standard error\n"              \
	"  --range START:END only records START to END-1 of IN (a trace,\n"    \
	"                    not an import), reached through the index;\n"     \
	"                    exports number them from START\n"                 \
	"  --no-time         an export with a time field (below) writes the\n" \
	"                    position even when IN has a timing sidecar (by\n" \
	"                    default its clocks, e.g. bach decode's "          \
	"samples)\n" BETWEEN_HELP FILTER_HELP                                  \
	"                    (exports number the records kept by their\n"      \
	"                    trace position)\n"                                \
	"\n"

#define HELP_TAIL                                                              \
	"\n"                                                                   \
	"Imports describe a complete trace taken with the L1 caches off; "     \
	"see\n"                                                                \
	"docs/formats.md for what each direction keeps and what it loses.\n"   \
	"A named OUT appears only when the conversion succeeds; an OUT that "  \
	"is\n"                                                                 \
	"IN (or inside the capture directory IN) is refused.\n"                \
	"\n"                                                                   \
	"examples: bach convert trace.byu trace.byu.gz\n"                      \
	"          bach convert --from lackey --to byu.gz lackey.out "         \
	"prog.byu.gz\n"

/*
 * The help lists the formats from lib's table (bach_formats[], through
 * source.c): made once at start, as the help is a string.
 */
static char help[8192] = HELP_HEAD HELP_TAIL;

__attribute__((constructor)) static void make_help(void)
{
	FILE *f = fmemopen(help, sizeof(help) - 1, "w");

	if (!f)
		return; /* the help without the list */
	fputs(HELP_HEAD "Formats (in: --from, out: --to):\n", f);
	fmt_print(f);
	fputs(HELP_TAIL, f);
	fclose(f);
}

const struct bach_cmd cmd_convert = {
	.name = "convert",
	.run = run,
	.summary = "convert between trace formats",
	.help = help,
};
