// SPDX-License-Identifier: MIT
/*
 * bach diff: two traces record by record, the role of ISP RAS Trace
 * Matcher for bus traces (docs/formats.md section 9).
 *
 * Equal runs are compared a whole reader block at a time with memcmp,
 * straight in the readers' buffers; only at a difference is a record looked
 * at on its own. Records are copied into a side's own buffer only when more
 * of them must be seen at once than one reader block holds (the context of
 * the first difference, the window of --align) or to drop gap markers
 * (--ignore-gaps).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "cmd.h"
#include "lib/formats/formats.h"
#include "source.h"

#define CONTEXT	       3  /* records shown before and after the difference */
#define RUN	       16 /* records that must match to call a resync */
#define DEFAULT_WINDOW 1024
#define MAX_WINDOW     1000000
#define FILL	       65536 /* records copied per refill of a side's buffer */
#define PROJECT	       4096  /* records projected at a time (--as) */

struct side {
	const char *name;
	struct source src; /* a trace, or an import read as convert does */
	bool ignore_gaps;
	uint8_t *buf; /* cap records, copied or filtered */
	size_t cap, start, end;
	const uint8_t *pend; /* the reader's block, not yet taken */
	size_t npend;
	bool eof;
	int err;
	uint64_t pos; /* index in the whole trace of the next record */
	/* --as: the reader's block, projected PROJECT records at a time */
	const struct bach_format *as;
	const uint8_t *raw;
	size_t nraw;
	uint64_t raw_pos; /* trace position of raw[0] */
	char *text;	  /* PROJECT * BACH_TEXT_MAX bytes */
	uint8_t *proj;	  /* PROJECT * BACH_IMPORT_MAX_RECS records */
	struct bach_export_carry carry;
};

/*
 * --as: what the format keeps of the next PROJECT records of the reader's
 * block (bach_format_project()) into pend; n of them, 0 when the format
 * keeps none of them, or -EBADMSG.
 */
static ssize_t project(struct side *s)
{
	size_t k = s->nraw < PROJECT ? s->nraw : PROJECT;
	uint64_t at;
	const char *why;
	ssize_t m = bach_format_project(s->as, s->raw, k, s->raw_pos, s->text,
					s->proj, &s->carry, &at, &why);

	if (m < 0) {
		errmsg("%s: --as %s: records %llu to %llu do not read back (byte %llu of their export): %s",
		       s->name, s->as->name, (unsigned long long)s->raw_pos,
		       (unsigned long long)(s->raw_pos + k - 1),
		       (unsigned long long)at, why);
		return m;
	}
	s->raw += k * BACH_REC_SIZE;
	s->nraw -= k;
	s->raw_pos += k;
	s->pend = s->proj;
	return m;
}

/* The reader's next block into pend; false at the end or on an error. */
static bool pull(struct side *s)
{
	ssize_t n;

	if (s->npend)
		return true;
	if (s->eof || s->err)
		return false;
	do {
		if (s->as && s->nraw) {
			n = project(s);
		} else {
			n = source_read(&s->src, s->as ? &s->raw : &s->pend);
			if (n < 0) {
				errmsg("%s", source_error(&s->src));
			} else if (n == 0) {
				s->eof = true;
				return false;
			} else if (s->as) {
				s->nraw = (size_t)n;
				n = 0; /* projected at the next turn */
				continue;
			}
		}
		if (n < 0) {
			s->err = (int)n;
			return false;
		}
	} while (n == 0);
	s->npend = (size_t)n;
	return true;
}

/* Move up to room records from pend to the buffer's end, gaps dropped. */
static void take(struct side *s, size_t room)
{
	size_t k = s->npend < room ? s->npend : room;
	uint8_t *d = s->buf + s->end * BACH_REC_SIZE;

	if (!s->ignore_gaps) {
		memcpy(d, s->pend, k * BACH_REC_SIZE);
		s->end += k;
	} else {
		for (size_t i = 0; i < k; i++) {
			const uint8_t *rec = s->pend + i * BACH_REC_SIZE;

			if (bach_rec_is_gap(rec))
				continue;
			memcpy(d, rec, BACH_REC_SIZE);
			d += BACH_REC_SIZE;
			s->end++;
		}
	}
	s->pend += k * BACH_REC_SIZE;
	s->npend -= k;
}

/* At least want records in a row at *p (fewer only at the end). */
static size_t need(struct side *s, size_t want, const uint8_t **p)
{
	if (want > s->cap)
		want = s->cap;
	if (s->end - s->start < want && s->start) {
		memmove(s->buf, s->buf + s->start * BACH_REC_SIZE,
			(s->end - s->start) * BACH_REC_SIZE);
		s->end -= s->start;
		s->start = 0;
	}
	while (s->end - s->start < want && pull(s))
		take(s, s->cap - s->end);
	*p = s->buf + s->start * BACH_REC_SIZE;
	return s->end - s->start;
}

/* The records at hand, in place where possible; 0 at the end. */
static size_t view(struct side *s, const uint8_t **p)
{
	if (s->end > s->start) {
		*p = s->buf + s->start * BACH_REC_SIZE;
		return s->end - s->start;
	}
	s->start = s->end = 0;
	if (!pull(s))
		return 0;
	if (s->ignore_gaps)
		return need(s, FILL, p);
	*p = s->pend;
	return s->npend;
}

/* k records of those view() or need() showed are done with. */
static void consume(struct side *s, size_t k)
{
	size_t b = s->end - s->start;

	if (b) {
		size_t t = k < b ? k : b;

		s->start += t;
		k -= t;
		s->pos += t;
	}
	s->pend += k * BACH_REC_SIZE;
	s->npend -= k;
	s->pos += k;
}

/* Index of the first record that differs in a[0..n), b[0..n). */
static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;

	/* narrow down by 4 KiB slices, then one record at a time */
	while (n - i > 682 &&
	       !memcmp(a + i * BACH_REC_SIZE, b + i * BACH_REC_SIZE,
		       682 * BACH_REC_SIZE))
		i += 682;
	while (i < n && !memcmp(a + i * BACH_REC_SIZE, b + i * BACH_REC_SIZE,
				BACH_REC_SIZE))
		i++;
	return i;
}

struct diff {
	struct side a, b;
	bool align, quiet;
	size_t window;
	uint64_t matched, changed, only_a, only_b;
	bool reported;
	uint8_t hist[CONTEXT * BACH_REC_SIZE]; /* last records both had */
	size_t nhist;
	struct gap_causes gc; /* of the gap markers shown */
};

/* Keep the last CONTEXT of n records both sides had in common. */
static void remember(struct diff *d, const uint8_t *p, size_t n)
{
	size_t k = n < CONTEXT ? n : CONTEXT;
	size_t keep = d->nhist + k > CONTEXT ? CONTEXT - k : d->nhist;

	memmove(d->hist, d->hist + (d->nhist - keep) * BACH_REC_SIZE,
		keep * BACH_REC_SIZE);
	memcpy(d->hist + keep * BACH_REC_SIZE, p + (n - k) * BACH_REC_SIZE,
	       k * BACH_REC_SIZE);
	d->nhist = keep + k;
}

/*
 * Record index of side s as the reference text, a gap marker as a gap
 * with its cause (docs/formats.md sections 5, 9), after its number.
 */
static void show(struct diff *d, struct side *s, char mark, uint64_t index,
		 const uint8_t *rec)
{
	char line[BACH_TEXT_MAX];

	if (bach_rec_is_gap(rec))
		/* an import's or --as's numbers are no capture's */
		fmt_gap(line, rec, index,
			s->src.r && !s->as
				? gap_cause_at(&d->gc, s->name, index)
				: "unknown",
			GAP_TEXT);
	else
		bach_fmt_text(line, rec);
	printf("%c %12llu  %s", mark, (unsigned long long)index, line);
}

/* The first difference: both sides are at the same record number. */
static void report(struct diff *d)
{
	const uint8_t *pa, *pb;
	/* the differing record and CONTEXT after it, from each side */
	size_t na = need(&d->a, CONTEXT + 1, &pa);
	size_t nb = need(&d->b, CONTEXT + 1, &pb);
	uint64_t at = d->a.pos;

	d->reported = true;
	if (d->quiet)
		return;
	if (na > CONTEXT + 1)
		na = CONTEXT + 1;
	if (nb > CONTEXT + 1)
		nb = CONTEXT + 1;
	printf("--- A %s\n+++ B %s\n", d->a.name, d->b.name);
	printf("first difference at record %llu%s\n", (unsigned long long)at,
	       d->a.ignore_gaps ? " (gap markers not counted)" : "");
	for (size_t i = 0; i < d->nhist; i++)
		show(d, &d->a, ' ', at - d->nhist + i,
		     d->hist + i * BACH_REC_SIZE);
	for (size_t i = 0; i < na; i++)
		show(d, &d->a, '-', at + i, pa + i * BACH_REC_SIZE);
	for (size_t i = 0; i < nb; i++)
		show(d, &d->b, '+', at + i, pb + i * BACH_REC_SIZE);
}

/* Whether a[0..r) == b[0..r) for r = min(RUN, na, nb) >= 1. */
static bool run_matches(const uint8_t *a, size_t na, const uint8_t *b,
			size_t nb)
{
	size_t r = RUN;

	if (na < r)
		r = na;
	if (nb < r)
		r = nb;
	return r && !memcmp(a, b, r * BACH_REC_SIZE);
}

/*
 * A gap marker on side s says how many records it stands for: when the
 * other side, that many records on, goes on as s does after the marker,
 * those records are the other side's alone. The marker is s's alone.
 */
static bool gap(struct diff *d, struct side *s, struct side *o,
		uint64_t *only_s, uint64_t *only_o)
{
	const uint8_t *ps, *po;
	uint64_t lost;
	size_t ns, no;

	ns = need(s, 1 + RUN, &ps);
	lost = bach_get_be32(ps);
	*only_s += 1;
	if (lost <= d->window) {
		no = need(o, (size_t)lost + RUN, &po);
		if (no > lost &&
		    run_matches(ps + BACH_REC_SIZE, ns - 1,
				po + lost * BACH_REC_SIZE, no - (size_t)lost)) {
			*only_o += lost;
			consume(o, (size_t)lost);
		}
	}
	consume(s, 1);
	return true;
}

/*
 * --align, at a difference: a gap marker on either side is taken as that
 * side's alone, and the records it counts as lost as the other side's
 * when they line up; otherwise the nearest shift of one side, within the
 * window, after which RUN records (or all that are left) match. Greedy: the
 * first such shift is taken, A's records before B's at the same distance.
 */
static bool resync(struct diff *d)
{
	const uint8_t *pa, *pb;
	size_t na = need(&d->a, d->window + RUN, &pa);
	size_t nb = need(&d->b, d->window + RUN, &pb);

	if (na && bach_rec_is_gap(pa))
		return gap(d, &d->a, &d->b, &d->only_a, &d->only_b);
	if (nb && bach_rec_is_gap(pb))
		return gap(d, &d->b, &d->a, &d->only_b, &d->only_a);
	for (size_t k = 1; k <= d->window; k++) {
		if (k < na &&
		    run_matches(pa + k * BACH_REC_SIZE, na - k, pb, nb)) {
			d->only_a += k;
			consume(&d->a, k);
			return true;
		}
		if (k < nb &&
		    run_matches(pa, na, pb + k * BACH_REC_SIZE, nb - k)) {
			d->only_b += k;
			consume(&d->b, k);
			return true;
		}
		if (k >= na && k >= nb)
			break;
	}
	return false;
}

/* Records left on one side after the other ended. */
static uint64_t drain(struct side *s)
{
	const uint8_t *p;
	uint64_t left = 0;
	size_t n;

	while ((n = view(s, &p)) > 0) {
		left += n;
		consume(s, n);
	}
	return left;
}

static void compare(struct diff *d)
{
	for (;;) {
		const uint8_t *pa, *pb;
		size_t na = view(&d->a, &pa);
		size_t nb = view(&d->b, &pb);
		size_t m = na < nb ? na : nb, i;

		if (!m)
			break;
		if (!memcmp(pa, pb, m * BACH_REC_SIZE)) {
			if (!d->reported)
				remember(d, pa, m);
			d->matched += m;
			consume(&d->a, m);
			consume(&d->b, m);
			continue;
		}
		i = first_diff(pa, pb, m);
		if (i) {
			if (!d->reported)
				remember(d, pa, i);
			d->matched += i;
			consume(&d->a, i);
			consume(&d->b, i);
		}
		if (!d->reported)
			report(d);
		if (d->align && resync(d))
			continue;
		d->changed++;
		consume(&d->a, 1);
		consume(&d->b, 1);
	}
	if (d->a.err || d->b.err)
		return;
	d->only_a += drain(&d->a);
	d->only_b += drain(&d->b);
	if ((d->only_a || d->only_b) && !d->reported) {
		/* one is a prefix of the other: the difference is its end */
		d->reported = true;
		if (!d->quiet) {
			printf("--- A %s\n+++ B %s\n", d->a.name, d->b.name);
			printf("first difference at record %llu: %s ends there\n",
			       (unsigned long long)(d->only_a ? d->b.pos
							      : d->a.pos),
			       d->only_a ? "B" : "A");
		}
	}
}

/* Whether path is NAME.EXT or NAME.EXT.gz. */
static bool named(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);
	const char *p = path + n;

	if (ends_with(path, ".gz"))
		p -= 3;
	return p - path > (ptrdiff_t)e + 1 && p[-(ptrdiff_t)e - 1] == '.' &&
	       !strncmp(p - e, ext, e);
}

/*
 * A side in the format given (--from), else the one its name implies, as
 * bach convert takes them, or under --as FMT a name ending in .FMT (or
 * .FMT.gz) that format; else a trace, raw or gzip as its name or first
 * bytes say.
 */
static int open_side(struct side *s, const char *path,
		     const struct bach_format *f, unsigned flags,
		     const struct bach_format *as, bool ignore_gaps, size_t cap,
		     uint64_t start, uint64_t end)
{
	memset(s, 0, sizeof(*s));
	s->name = path;
	s->ignore_gaps = ignore_gaps;
	s->cap = cap;
	if (!f)
		f = fmt_guess(path, BACH_FORMAT_IN);
	if (!f && as && named(path, as->name))
		f = as;
	if (!f)
		f = bach_format_find("byu", BACH_FORMAT_IN);
	if (f->kind == BACH_FORMAT_FOREIGN && (start || end != UINT64_MAX))
		return usage_error("--range: for traces, not imports (%s: %s)",
				   path, f->name);
	s->buf = malloc(cap * BACH_REC_SIZE);
	if (as) {
		s->as = as;
		s->raw_pos = start;
		s->text = malloc(PROJECT * BACH_TEXT_MAX);
		s->proj =
			malloc(PROJECT * BACH_IMPORT_MAX_RECS * BACH_REC_SIZE);
	}
	if (!s->buf || (as && (!s->text || !s->proj))) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	if (open_source(&s->src, f, path, flags))
		return EXIT_USAGE;
	/* --range: the same records of each, numbered as in the whole */
	s->pos = start;
	return s->src.r && apply_range(s->src.r, start, end) ? EXIT_USAGE
							     : EXIT_OK;
}

static void close_side(struct side *s)
{
	close_source(&s->src);
	free(s->buf);
	free(s->text);
	free(s->proj);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "align", no_argument, NULL, 'a' },
		{ "window", required_argument, NULL, 'w' },
		{ "ignore-gaps", no_argument, NULL, 'g' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "range", required_argument, NULL, 'r' },
		{ "from", required_argument, NULL, 'f' },
		{ "from-a", required_argument, NULL, 'A' },
		{ "from-b", required_argument, NULL, 'B' },
		{ "mask-address", no_argument, NULL, 'm' },
		{ "as", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff d = { .window = DEFAULT_WINDOW };
	/* --from, --from-a, --from-b: a side's own wins */
	const struct bach_format *from[3] = { NULL, NULL, NULL };
	const struct bach_format *as = NULL;
	unsigned flags = 0;
	uint64_t start = 0, end = UINT64_MAX;
	bool ignore_gaps = false;
	uint64_t v;
	size_t cap;
	int c, status;

	while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			d.align = true;
			break;
		case 'w':
			if (!parse_u64(optarg, &v) || v < 1 || v > MAX_WINDOW)
				return usage_error(
					"--window: 1 to %d records, not '%s'",
					MAX_WINDOW, optarg);
			d.window = (size_t)v;
			break;
		case 'g':
			ignore_gaps = true;
			break;
		case 'q':
			d.quiet = true;
			break;
		case 'r':
			if (range_arg(optarg, &start, &end))
				return EXIT_USAGE;
			break;
		case 'f':
		case 'A':
		case 'B': {
			const struct bach_format *f =
				bach_format_find(optarg, BACH_FORMAT_IN);

			if (!f)
				return usage_error(
					"--%s: unknown format '%s' (%s)",
					c == 'f'   ? "from"
					: c == 'A' ? "from-a"
						   : "from-b",
					optarg, fmt_names(BACH_FORMAT_IN));
			from[c == 'f' ? 0 : c == 'A' ? 1 : 2] = f;
			break;
		}
		case 'm':
			flags |= BACH_IMPORT_MASK_ADDRESS;
			break;
		case 's':
			as = bach_format_find(optarg, BACH_FORMAT_BOTH);
			if (!as)
				return usage_error(
					"--as: %s '%s' (it takes a format bach both writes and reads: %s)",
					bach_format_find(optarg, BACH_FORMAT_IN)
						? "bach does not write"
					: bach_format_find(optarg,
							   BACH_FORMAT_OUT)
						? "bach does not read"
						: "unknown format",
					optarg, fmt_names(BACH_FORMAT_BOTH));
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (argc - optind != 2)
		return usage_error("need two traces, A and B");
	if (stdin_once(argv + optind, 2))
		return EXIT_USAGE;
	cap = d.window + RUN + FILL;
	status = open_side(&d.a, argv[optind], from[1] ? from[1] : from[0],
			   flags, as, ignore_gaps, cap, start, end);
	if (!status)
		status = open_side(&d.b, argv[optind + 1],
				   from[2] ? from[2] : from[0], flags, as,
				   ignore_gaps, cap, start, end);
	if (!status) {
		compare(&d);
		if (d.a.err || d.b.err)
			status = EXIT_USAGE; /* could not compare: never
						"different" */
		else
			status = d.reported ? EXIT_DATA : EXIT_OK;
	}
	if (!status || status == EXIT_DATA) {
		if (!d.quiet)
			printf("%llu matched, %llu changed, %llu only in A, %llu only in B\n",
			       (unsigned long long)d.matched,
			       (unsigned long long)d.changed,
			       (unsigned long long)d.only_a,
			       (unsigned long long)d.only_b);
	}
	if (fflush(stdout) && !status) {
		errmsg("standard output: %s", strerror(errno));
		status = EXIT_USAGE;
	}
	close_side(&d.a);
	close_side(&d.b);
	gap_causes_free(&d.gc);
	return status;
}

const struct bach_cmd cmd_diff = {
	.name = "diff",
	.run = run,
	.summary = "compare two traces record by record",
	.help = "usage: bach diff [--align [--window N]] [--ignore-gaps] [--range START:END] [-q] A B\n"
		"       bach diff [--from FMT | --from-a FMT | --from-b FMT] [--mask-address] ... A B\n"
		"       bach diff --as FMT ... A B\n"
		"\n"
		"A and B are traces of any form: .byu, .byu.gz (any gzip), a capture\n"
		"directory, or - for standard input. Records are compared by position;\n"
		"the first difference is shown with a few records of context ('-' A,\n"
		"'+' B; a gap marker as bach dump shows it, GAP:lost=N:cause=C), then\n"
		"the summary: matched, changed, only in A, only in B.\n"
		"\n"
		"  --align        after a difference, resynchronize: a gap marker on\n"
		"                 one side is that side's alone; otherwise the nearest\n"
		"                 shift of A or of B (up to the window) after which 16\n"
		"                 records (or all that are left) match is taken as\n"
		"                 records only in that side.\n"
		"                 Greedy: the first shift found is kept, never revised;\n"
		"                 records in neither shift count as changed\n"
		"  --window N     how far --align looks ahead, in records (default 1024;\n"
		"                 its cost per difference grows with N)\n"
		"  --ignore-gaps  pass over gap markers on both sides (record numbers\n"
		"                 then count no gap markers)\n"
		"  --range START:END  only records START to END-1 of each (through the\n"
		"                 .gzi index of blocked .byu.gz files); differences keep\n"
		"                 their index in the whole trace\n"
		"  --from FMT     read both A and B as FMT, any format bach convert\n"
		"                 reads (bach help convert lists them; gzip-compressed\n"
		"                 too), read as convert reads it. Without it a name\n"
		"                 ending as for convert (.din: din) names its format, and\n"
		"                 anything else is a trace\n"
		"  --from-a FMT, --from-b FMT  the same for one side\n"
		"  --as FMT       compare only what FMT keeps: each side exported as\n"
		"                 FMT and read back (a format convert takes in/out),\n"
		"                 so an export checks against its trace; a side named\n"
		"                 NAME.FMT or NAME.FMT.gz is read as FMT. Record\n"
		"                 numbers are then the read-back ones\n"
		"  --mask-address keep the low 32 bits of wider addresses (imports)\n"
		"  -q, --quiet    print nothing; the exit status says it\n"
		"\n"
		"Exit 0 when the traces are equal, 1 when they differ, 2 when they\n"
		"cannot be compared (a usage error, a missing file, or a damaged\n"
		"trace: the message names the file and the offset), as cmp(1) does.\n"
		"\n"
		"example: bach diff --ignore-gaps capture/20261121T223000Z replay/20261121T231500Z\n",
};
