// SPDX-License-Identifier: MIT
/*
 * bach marks: a capture's marks and in-band marker events from its
 * manifest, in trace order, with their positions and times: the wall
 * time the manifest gives each, and the bus clock of the record it stands
 * before when the capture has timing sidecars.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "lib/io/manifest.h"
#include "lib/options.h"

struct row {
	const struct bach_manifest_mark *k;
	const char *time; /* the event's "time", "" when none */
	uint64_t clk;	  /* BACH_TIME_NONE: not known */
	uint64_t hz;	  /* its clock rate, 0 unknown */
};

/*
 * The clock of the record at trace position at (the trace read starts
 * at base): a seek and one block. EXIT_OK with BACH_TIME_NONE when the
 * record is not there (retention removed it, or the mark is at the end).
 */
static int clock_at(struct bach_reader *r, uint64_t base, uint64_t at,
		    struct row *w)
{
	const uint8_t *p;
	const uint64_t *clk;
	ssize_t n;
	int err;

	w->clk = BACH_TIME_NONE;
	if (at < base)
		return EXIT_OK;
	err = bach_reader_seek(r, at - base);
	n = err ? err : bach_reader_read(r, &p);
	if (n > 0)
		n = bach_reader_times(r, &clk);
	if (n < 0) {
		errmsg("%s", bach_reader_strerror(r));
		return bach_exit_status((int)n);
	}
	if (n > 0) {
		w->clk = clk[0];
		w->hz = bach_reader_clock_hz(r);
	}
	return EXIT_OK;
}

/* "0x00000080 be 0xfe" or the text, escaped, into buf */
static const char *what(char *buf, size_t cap,
			const struct bach_manifest_mark *k)
{
	if (k->marker)
		snprintf(buf, cap, "0x%08x be 0x%02x", k->address, k->be);
	else
		bach_escape_ctl(buf, cap, k->text ? k->text : "");
	return buf;
}

static void print_text(const struct row *w, size_t n)
{
	printf("%-12s %-12s %-24s %-14s %-16s %-7s %s\n", "AT", "RECORD",
	       "TIME", "CLOCK", "SECONDS", "SOURCE", "MARK");
	for (size_t i = 0; i < n; i++) {
		const struct bach_manifest_mark *k = w[i].k;
		char t[64], m[600], *sec;

		fmt_time(t, w[i].clk, w[i].hz, ' ');
		sec = strchr(t + 1, ' ');
		*sec++ = '\0';
		printf("%-12llu %-12llu %-24s %-14s %-16s %-7s %s",
		       (unsigned long long)k->at, (unsigned long long)k->record,
		       w[i].time[0] ? w[i].time : "-", t + 1, sec,
		       k->source[0] ? k->source : "-", what(m, sizeof(m), k));
		if (k->count > 1)
			printf(" (%llu matches)", (unsigned long long)k->count);
		printf("\n");
	}
}

static int print_json(const char *dir, const struct row *w, size_t n)
{
	json_t *o = json_object(), *a = json_array();

	json_object_set_new(o, "capture", json_string(dir));
	for (size_t i = 0; i < n; i++) {
		const struct bach_manifest_mark *k = w[i].k;
		json_t *e = json_object();
		char buf[16];

		json_object_set_new(e, "at", json_integer((json_int_t)k->at));
		json_object_set_new(e, "record",
				    json_integer((json_int_t)k->record));
		json_object_set_new(e, "time",
				    w[i].time[0] ? json_string(w[i].time)
						 : json_null());
		json_object_set_new(
			e, "clock",
			w[i].clk == BACH_TIME_NONE
				? json_null()
				: json_integer((json_int_t)w[i].clk));
		json_object_set_new(e, "seconds",
				    w[i].clk == BACH_TIME_NONE || !w[i].hz
					    ? json_null()
					    : json_real((double)w[i].clk /
							(double)w[i].hz));
		json_object_set_new(e, "source",
				    k->source[0] ? json_string(k->source)
						 : json_null());
		if (k->marker) {
			snprintf(buf, sizeof(buf), "0x%08x", k->address);
			json_object_set_new(e, "address", json_string(buf));
			snprintf(buf, sizeof(buf), "0x%02x", k->be);
			json_object_set_new(e, "be", json_string(buf));
		} else {
			json_object_set_new(
				e, "text", json_string(k->text ? k->text : ""));
		}
		json_object_set_new(e, "count",
				    json_integer((json_int_t)k->count));
		json_object_set_new(e, "line",
				    json_integer((json_int_t)k->line));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "marks", a);
	return put_json(o);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct bach_reader *r = NULL;
	struct bach_manifest m;
	struct row *w = NULL;
	const char **tm = NULL;
	size_t *order = NULL, ev = 0;
	uint64_t base;
	bool json = false;
	struct stat st;
	char ed[600];
	int c, status;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else
			return usage_error("bad option");
	}
	if (argc - optind != 1)
		return usage_error("need one CAPDIR");
	bach_escape_ctl(ed, sizeof(ed), argv[optind]);
	if (stat(argv[optind], &st) < 0 || !S_ISDIR(st.st_mode))
		return usage_error("%s: not a capture directory", ed);
	status = load_marks("", argv[optind], &m, &order, &base);
	if (status)
		return status;
	w = calloc(m.nmarks + 1, sizeof(*w));
	tm = calloc(m.nmarks + 1, sizeof(*tm));
	if (!w || !tm) {
		errmsg("out of memory");
		status = EXIT_USAGE;
		goto out;
	}
	/* the events' times: marks and events are both in manifest order */
	for (size_t i = 0; i < m.nmarks; i++) {
		while (ev < m.nevents && m.events[ev].line < m.marks[i].line)
			ev++;
		tm[i] = ev < m.nevents && m.events[ev].line == m.marks[i].line
				? m.events[ev].time
				: "";
	}
	/* in trace order, so the clocks are read forward */
	if (bach_times_present(argv[optind]))
		status = open_traces(&r, 1, argv + optind);
	for (size_t i = 0; i < m.nmarks && !status; i++) {
		w[i].k = &m.marks[order[i]];
		w[i].time = tm[order[i]];
		w[i].clk = BACH_TIME_NONE;
		if (r)
			status = clock_at(r, base, w[i].k->at, &w[i]);
	}
	if (!status && json)
		status = print_json(argv[optind], w, m.nmarks);
	else if (!status)
		print_text(w, m.nmarks);
out:
	free(w);
	free(tm);
	free(order);
	bach_reader_free(r);
	bach_manifest_free(&m);
	return status;
}

const struct bach_cmd cmd_marks = {
	.name = "marks",
	.run = run,
	.summary = "list a capture's marks with their positions and times",
	.help = "usage: bach marks [--json] CAPDIR\n"
		"\n"
		"The marks of a capture directory's manifest (bach ctl mark,\n"
		"SIGUSR1 to bach capture) and its in-band marker events, in trace\n"
		"order: the trace position (at) and the source's record index,\n"
		"the wall time the manifest gives, the bus clock and seconds of\n"
		"the record the mark stands before when the capture has timing\n"
		"sidecars ('-' otherwise), the source and the mark's text, or a\n"
		"marker's address and BE# (and how many matches a merged event\n"
		"stands for).\n"
		"\n"
		"      --json   one JSON object: {\"capture\", \"marks\": [...]}\n"
		"\n"
		"Exit 2 when CAPDIR is not a capture directory, 1 when its manifest\n"
		"or a timing sidecar is damaged.\n"
		"\n"
		"example: bach marks capture/20261121T223000Z\n",
};
