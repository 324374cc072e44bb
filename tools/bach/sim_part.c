// SPDX-License-Identifier: MIT
/*
 * bach sim split by time (cmd.h; docs/analysis.md section 7, after
 * Heidelberger and Stone, WSC'90): a range read into the simulator at its
 * records' positions, its partial (the counts and the caches' state), and
 * bach merge's for sim, which re-simulates the start of each chunk from
 * the state the chunks before it left, beside a cold simulation of the
 * same records, until the two hold the same state: from there on the
 * chunk's own counts are the whole run's.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "lib/options.h"

struct feed {
	struct bach_sim *s;
	struct rec_filter *f;
	uint64_t pos; /* the position of the next record read */
	bool oom;
};

/* a block as read: through the filter, each record at its position */
static void feed(void *ctx, const uint8_t *recs, size_t n)
{
	struct feed *d = ctx;
	const uint8_t *p = recs;
	ssize_t k = filter_block(d->f, &p, NULL, n);

	if (k < 0)
		d->oom = true;
	else
		bach_sim_add_at(d->s, p, (size_t)k, d->pos,
				d->f->on ? d->f->off : NULL);
	d->pos += n;
}

/* the TRACE arguments as absolute paths, for the merge to read again */
static json_t *paths_json(int argc, char **argv)
{
	json_t *a = json_array();

	for (int i = 0; a && i < argc; i++) {
		char *rp =
			strcmp(argv[i], "-") ? realpath(argv[i], NULL) : NULL;
		json_t *v = !strcmp(argv[i], "-")
				    ? json_null()
				    : json_string(rp ? rp : argv[i]);

		free(rp);
		if (json_array_append_new(a, v)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *options_json(const struct bach_sim_config *cfg,
			    const struct rec_filter *f)
{
	json_t *o = bach_sim_config_to_json(cfg);

	if (o && json_object_set_new(o, "filter", filter_json(f))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* the partial of s: its header names the traces in paths (stolen) */
static int write_sim(const char *out, const struct bach_sim *s, json_t *options,
		     json_t *trace, json_t *paths, uint64_t start, uint64_t end,
		     uint64_t records, uint32_t crc)
{
	json_t *head =
		partial_head("sim", options, trace, start, end, records, crc);
	json_t *data = bach_sim_to_json(s);

	if (!head || !data || !paths ||
	    json_object_set_new(head, "paths", paths)) {
		json_decref(head);
		json_decref(data);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	return partial_write_head(out, head, data);
}

int sim_read(struct bach_sim *s, const struct bach_sim_config *cfg,
	     struct rec_filter *f, int argc, char **argv, uint64_t start,
	     uint64_t end, const char *partial)
{
	struct feed d = { .s = s, .f = f, .pos = start };
	uint64_t records = 0;
	uint32_t crc = 0;
	int status;

	status = read_traces_range(argc, argv, NULL, start, end, feed, &d,
				   &records, partial ? &crc : NULL);
	if (!status && d.oom) {
		errmsg("out of memory");
		status = EXIT_USAGE;
	}
	if (status || !partial)
		return status;
	return write_sim(partial, s, options_json(cfg, f),
			 trace_identity(argc, argv), paths_json(argc, argv),
			 start, end, records > start ? records - start : 0,
			 crc);
}

/* ---- the merge ---------------------------------------------------------- */

struct join {
	const struct bach_sim_config *cfg;
	struct rec_filter *f;
	const char *name; /* the partial's file */
};

/*
 * The trace a partial names, checked to be the one it was made from, as
 * argv (malloc'd, its strings the header's); EXIT_OK or the refusal.
 */
static int trace_args(const struct join *jn, const json_t *head, char ***argv,
		      int *argc)
{
	const json_t *paths = json_object_get(head, "paths");
	const json_t *trace = json_object_get(head, "trace");
	char en[600], et[600];
	size_t n = json_array_size(paths);
	json_t *now;

	bach_escape_ctl(en, sizeof(en), jn->name);
	*argv = NULL;
	if (!n || n != json_array_size(trace) || n > INT_MAX) {
		errmsg("%s: line 1: \"paths\" missing or not one per trace",
		       en);
		return EXIT_DATA;
	}
	*argv = calloc(n, sizeof(**argv));
	if (!*argv) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(paths, i);

		if (json_is_null(p)) {
			errmsg("%s: its trace was read from standard input: the merge must read its start again (give the trace as a file)",
			       en);
			return EXIT_USAGE;
		}
		if (!json_is_string(p)) {
			errmsg("%s: line 1: \"paths\": not file names", en);
			return EXIT_DATA;
		}
		(*argv)[i] = (char *)json_string_value(p);
	}
	*argc = (int)n;
	now = trace_identity(*argc, *argv);
	for (size_t i = 0; now && i < n; i++) {
		if (json_equal(json_array_get(now, i),
			       json_array_get(trace, i)))
			continue;
		bach_escape_ctl(et, sizeof(et), (*argv)[i]);
		errmsg("%s: not the trace %s was made from (missing, or its size or segments changed)",
		       et, en);
		json_decref(now);
		return EXIT_USAGE;
	}
	if (!now) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	json_decref(now);
	return EXIT_OK;
}

/*
 * acc (the chunks before, warm) followed by r (the chunk of partial p,
 * run cold): re-simulate p's range from acc's state beside a cold
 * simulator until the two hold the same state. Then r's counts are the
 * whole run's from there: *accp becomes r, its counts acc's plus its own
 * less the cold ones. If they never do, acc ran the whole range and stays.
 */
static int join(const struct join *jn, struct bach_sim **accp,
		struct bach_sim **rp, const struct bach_partial *p)
{
	struct bach_sim *acc = *accp, *cold = NULL;
	struct bach_sim_counts ca, cr, cc;
	struct bach_reader *rd = NULL;
	uint64_t pos = p->start, since = 0, gate;
	uint32_t crc = 0;
	bool same = false;
	char why[200], **argv = NULL;
	int argc = 0, status;
	ssize_t n = 0;

	if (bach_sim_new(&cold, jn->cfg, why, sizeof(why))) {
		errmsg("out of memory for these caches");
		return EXIT_USAGE;
	}
	/* one comparison costs about what simulating this many records does */
	gate = bach_sim_ways(acc) / 4;
	same = bach_sim_same_state(acc, cold);
	status = same ? EXIT_OK : trace_args(jn, p->head, &argv, &argc);
	if (!status && !same)
		status = open_traces(&rd, argc, argv);
	if (!status && !same)
		status = apply_range(rd, p->start, p->end);
	while (!status && !same) {
		const uint8_t *q;
		ssize_t k;

		n = bach_reader_read(rd, &q);
		if (n <= 0)
			break;
		crc = partial_crc(crc, q, (size_t)n * BACH_REC_SIZE);
		k = filter_block(jn->f, &q, NULL, (size_t)n);
		if (k < 0) {
			errmsg("out of memory");
			status = EXIT_USAGE;
			break;
		}
		bach_sim_add_at(acc, q, (size_t)k, pos,
				jn->f->on ? jn->f->off : NULL);
		bach_sim_add_at(cold, q, (size_t)k, pos,
				jn->f->on ? jn->f->off : NULL);
		pos += (uint64_t)n;
		since += (uint64_t)n;
		if (since >= gate) {
			since = 0;
			same = bach_sim_same_state(acc, cold);
		}
	}
	if (!status && n < 0) {
		errmsg("%s", bach_reader_strerror(rd));
		status = bach_exit_status((int)n);
	}
	if (!status && !same &&
	    (pos - p->start != p->records ||
	     crc != (uint32_t)json_integer_value(
			    json_object_get(p->head, "range_crc")))) {
		char en[600];

		bach_escape_ctl(en, sizeof(en), jn->name);
		errmsg("%s: the trace's records %llu to %llu are not those it was made from",
		       en, (unsigned long long)p->start,
		       (unsigned long long)p->end);
		status = EXIT_USAGE;
	}
	if (!status && same) {
		bach_sim_get_counts(acc, &ca);
		bach_sim_get_counts(*rp, &cr);
		bach_sim_get_counts(cold, &cc);
		bach_sim_counts_add(&ca, &cr, &cc);
		bach_sim_set_counts(*rp, &ca);
		*accp = *rp;
		*rp = acc;
	}
	bach_reader_free(rd);
	bach_sim_free(cold);
	free(argv);
	return status;
}

int sim_merge(const struct merge_job *j)
{
	const json_t *op = json_object_get(j->p[0].head, "options");
	struct bach_sim_config cfg;
	struct rec_filter f;
	struct bach_sim *acc = NULL, *r = NULL;
	char err[300];
	int status = EXIT_OK;

	if (j->csv)
		return usage_error("bach sim has no --csv");
	if (bach_sim_config_from_json(&cfg, op, err, sizeof(err)) ||
	    !filter_from_json(&f, json_object_get(op, "filter")) ||
	    bach_sim_new(&acc, &cfg, err, sizeof(err))) {
		char en[600];

		bach_escape_ctl(en, sizeof(en), j->names[0]);
		errmsg("%s: line 1: \"options\" are not those of a bach sim it merges",
		       en);
		return EXIT_DATA;
	}
	for (size_t i = 0; i < j->n && !status; i++) {
		struct join jn = { &cfg, &f, j->names[i] };

		if (bach_sim_new(&r, &cfg, err, sizeof(err))) {
			errmsg("out of memory for these caches");
			status = EXIT_USAGE;
			break;
		}
		if (bach_sim_from_json(r, j->p[i].data, err, sizeof(err))) {
			char en[600];

			bach_escape_ctl(en, sizeof(en), j->names[i]);
			errmsg("%s: %s", en, err);
			status = EXIT_DATA;
		} else if (!i) {
			bach_sim_free(acc);
			acc = r;
			r = NULL;
		} else if (j->p[i].records) { /* an empty chunk changes nothing
					       */
			status = join(&jn, &acc, &r, &j->p[i]);
		}
		bach_sim_free(r);
		r = NULL;
	}
	if (!status && j->out &&
	    !json_is_array(json_object_get(j->p[0].head, "paths"))) {
		char en[600];

		bach_escape_ctl(en, sizeof(en), j->names[0]);
		errmsg("%s: line 1: \"paths\" missing", en);
		status = EXIT_DATA;
	} else if (!status && j->out) {
		const json_t *h = j->p[0].head;

		status = write_sim(j->out, acc, json_deep_copy(op),
				   json_deep_copy(json_object_get(h, "trace")),
				   json_deep_copy(json_object_get(h, "paths")),
				   j->start, j->end, j->records, j->crc);
	} else if (!status) {
		bach_sim_finish(acc);
		sim_print(acc, &cfg, j->json);
		if (j->json)
			putchar('\n');
	}
	bach_sim_free(acc);
	filter_free(&f);
	return status;
}
