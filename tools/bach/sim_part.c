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

/*
 * A sweep's options: {"configs": [{"line": N, "text": WORDS, "options":
 * bach sim's options for the line}, ...]}, each line's as its own bach
 * sim --partial holds them.
 */
static json_t *configs_json(const struct sim_line *c, size_t n,
			    const struct rec_filter *f)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(
			    a,
			    json_pack("{sIssso*}", "line",
				      (json_int_t)c[i].line, "text", c[i].text,
				      "options", options_json(&c[i].cfg, f)))) {
			json_decref(a);
			return NULL;
		}
	return a ? json_pack("{so}", "configs", a) : NULL;
}

/* the state of c[0..n): a sweep's {"configs": [STATE, ...]} (file), or
 * bach sim's own */
static json_t *state_json(const char *file, const struct sim_line *c, size_t n)
{
	json_t *a;

	if (!file)
		return bach_sim_to_json(c[0].s);
	a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, bach_sim_to_json(c[i].s))) {
			json_decref(a);
			return NULL;
		}
	return a ? json_pack("{so}", "configs", a) : NULL;
}

/* the partial of c[0..n): its header names the traces in paths and a
 * sweep's FILE in configs_file (both stolen, not compared by a merge) */
static int write_sim(const char *out, const char *file,
		     const struct sim_line *c, size_t n, json_t *options,
		     json_t *trace, json_t *paths, uint64_t start, uint64_t end,
		     uint64_t records, uint32_t crc)
{
	json_t *head =
		partial_head("sim", options, trace, start, end, records, crc);
	json_t *data = state_json(file, c, n);

	if (!head || !data || !paths ||
	    json_object_set_new(head, "paths", paths) ||
	    (file &&
	     json_object_set_new(head, "configs_file", json_string(file)))) {
		json_decref(head);
		json_decref(data);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	return partial_write_head(out, head, data);
}

int sim_write_part(const char *out, const char *file, const struct sim_line *c,
		   size_t n, const struct rec_filter *f, int argc, char **argv,
		   uint64_t start, uint64_t end, uint64_t records, uint32_t crc)
{
	return write_sim(out, file, c, n,
			 file ? configs_json(c, n, f)
			      : options_json(&c[0].cfg, f),
			 trace_identity(argc, argv), paths_json(argc, argv),
			 start, end, records, crc);
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
	return sim_write_part(partial, NULL,
			      &(struct sim_line){ .cfg = *cfg, .s = s }, 1, f,
			      argc, argv, start, end,
			      records > start ? records - start : 0, crc);
}

/* ---- the merge ---------------------------------------------------------- */

#define REFS 16384 /* records decoded at a time by the merge's re-reading */

struct join {
	struct sim_line *c; /* the configurations, their simulators the
			       chunks before (warm) */
	size_t n;
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

/* the simulators of a re-reading, one pair a configuration */
struct rerun {
	struct bach_sim *cold;
	uint64_t gate, since; /* compare when since reaches gate */
	bool same;
};

/*
 * The records of the range re-read, decoded once in pieces and given to
 * the warm and cold simulators of each configuration whose two states
 * differ still; whether they are the same now is asked after about as
 * many records as a comparison costs.
 */
static size_t rerun_block(const struct join *jn, struct rerun *u,
			  struct bach_sim_ref *refs, const uint8_t *q, size_t k,
			  uint64_t base, const uint32_t *off, size_t left)
{
	for (size_t i = 0; i < k && left;) {
		size_t m = k - i < REFS ? k - i : REFS;

		bach_sim_refs(refs, q + i * BACH_REC_SIZE, m,
			      off ? base : base + i, off ? off + i : NULL);
		for (size_t c = 0; c < jn->n; c++) {
			if (u[c].same)
				continue;
			bach_sim_add_refs(jn->c[c].s, refs, m);
			bach_sim_add_refs(u[c].cold, refs, m);
			u[c].since += m;
			if (u[c].since >= u[c].gate) {
				u[c].since = 0;
				u[c].same = bach_sim_same_state(jn->c[c].s,
								u[c].cold);
				left -= u[c].same;
			}
		}
		i += m;
	}
	return left;
}

/*
 * For each configuration, the chunks before (warm, jn->c[].s) followed by
 * r (the chunk of partial p, run cold): re-simulate p's range from the
 * warm state beside a cold simulator until the two hold the same state.
 * Then r's counts are the whole run's from there: the configuration's
 * simulator becomes r, its counts the warm one's plus its own less the
 * cold ones. If they never do, the warm one ran the whole range and
 * stays. The trace is read once for every configuration.
 */
static int join(const struct join *jn, struct bach_sim **r,
		const struct bach_partial *p)
{
	struct rerun *u = calloc(jn->n, sizeof(*u));
	struct bach_sim_ref *refs = NULL;
	struct bach_reader *rd = NULL;
	uint64_t pos = p->start;
	uint32_t crc = 0;
	size_t left = jn->n;
	char why[200], **argv = NULL;
	int argc = 0, status = u ? EXIT_OK : EXIT_USAGE;
	ssize_t n = 0;

	if (!u)
		errmsg("out of memory");
	for (size_t c = 0; !status && c < jn->n; c++) {
		if (bach_sim_new(&u[c].cold, &jn->c[c].cfg, why, sizeof(why))) {
			errmsg("out of memory for these caches");
			status = EXIT_USAGE;
			break;
		}
		/* a comparison costs about what simulating this many
		 * records does */
		u[c].gate = bach_sim_ways(jn->c[c].s) / 4;
		u[c].same = bach_sim_same_state(jn->c[c].s, u[c].cold);
		left -= u[c].same;
	}
	if (!status && left) {
		status = trace_args(jn, p->head, &argv, &argc);
		refs = status ? NULL : malloc(REFS * sizeof(*refs));
		if (!status && !refs) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		}
	}
	if (!status && left)
		status = open_traces(&rd, argc, argv);
	if (!status && left)
		status = apply_range(rd, p->start, p->end);
	while (!status && left) {
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
		left = rerun_block(jn, u, refs, q, (size_t)k, pos,
				   jn->f->on ? jn->f->off : NULL, left);
		pos += (uint64_t)n;
	}
	if (!status && n < 0) {
		errmsg("%s", bach_reader_strerror(rd));
		status = bach_exit_status((int)n);
	}
	if (!status && left &&
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
	for (size_t c = 0; !status && c < jn->n; c++) {
		struct bach_sim_counts ca, cr, cc;
		struct bach_sim *acc = jn->c[c].s;
		uint64_t da[BACH_SIM_NCACHES], dr[BACH_SIM_NCACHES], la;

		if (!u[c].same)
			continue;
		bach_sim_get_counts(acc, &ca);
		bach_sim_get_counts(r[c], &cr);
		bach_sim_get_counts(u[c].cold, &cc);
		/* the states met after the chunk's last record (or it gave
		 * the simulator none): the draws made for that record are
		 * the warm run's, which the copy-back at the end goes on
		 * from */
		la = bach_sim_last_get(acc, da);
		if (!cr.t.records || la == bach_sim_last_get(r[c], dr))
			bach_sim_last_set(r[c], la, da);
		bach_sim_counts_add(&ca, &cr, &cc);
		bach_sim_set_counts(r[c], &ca);
		jn->c[c].s = r[c];
		r[c] = acc;
	}
	for (size_t c = 0; u && c < jn->n; c++)
		bach_sim_free(u[c].cold);
	bach_reader_free(rd);
	free(refs);
	free(u);
	free(argv);
	return status;
}

/* a refusal of partial name's header (EXIT_DATA) */
static int bad_head(const char *name, const char *what)
{
	char en[600];

	bach_escape_ctl(en, sizeof(en), name);
	errmsg("%s: line 1: %s", en, what);
	return EXIT_DATA;
}

/*
 * The configurations of the options op (a sweep's, whose FILE *file then
 * is, or bach sim's own) into *c, *n, each with a simulator, and their
 * filter into f; EXIT_OK or the refusal naming the partial.
 */
static int merge_configs(const char *name, const json_t *head,
			 struct sim_line **c, size_t *n, const char **file,
			 struct rec_filter *f)
{
	const json_t *op = json_object_get(head, "options");
	const json_t *lines = json_object_get(op, "configs");
	const json_t *fo = NULL;
	char err[300];

	*file = NULL;
	*n = lines ? json_array_size(lines) : 1;
	*c = *n ? calloc(*n, sizeof(**c)) : NULL;
	if (!*c)
		return lines ? bad_head(
				       name,
				       "\"options\": \"configs\" not a list of configurations")
			     : (errmsg("out of memory"), EXIT_USAGE);
	if (lines) {
		*file = json_string_value(
			json_object_get(head, "configs_file"));
		if (!*file)
			return bad_head(name, "\"configs_file\" missing");
	}
	for (size_t i = 0; i < *n; i++) {
		const json_t *l = lines ? json_array_get(lines, i) : NULL;
		const json_t *o = lines ? json_object_get(l, "options") : op;
		const json_t *line = json_object_get(l, "line");

		if (lines &&
		    (!json_is_integer(line) || json_integer_value(line) < 1 ||
		     json_integer_value(line) > UINT_MAX ||
		     !json_is_string(json_object_get(l, "text"))))
			return bad_head(
				name,
				"\"options\": \"configs\": a line without its \"line\" and \"text\"");
		if (fo && !json_equal(fo, json_object_get(o, "filter")))
			return bad_head(
				name,
				"\"options\": \"configs\": lines of different filters");
		fo = json_object_get(o, "filter");
		if (bach_sim_config_from_json(&(*c)[i].cfg, o, err,
					      sizeof(err)) ||
		    bach_sim_new(&(*c)[i].s, &(*c)[i].cfg, err, sizeof(err)))
			return bad_head(
				name,
				"\"options\" are not those of a bach sim it merges");
		if (lines) {
			(*c)[i].line = (unsigned)json_integer_value(line);
			(*c)[i].text = (char *)json_string_value(
				json_object_get(l, "text"));
		}
	}
	if (!filter_from_json(f, fo))
		return bad_head(
			name,
			"\"options\" are not those of a bach sim it merges");
	return EXIT_OK;
}

/* the states of partial i into fresh simulators r[0..n) */
static int merge_states(const struct merge_job *j, size_t i, bool sweep,
			const struct sim_line *c, size_t n, struct bach_sim **r)
{
	const json_t *d = j->p[i].data;
	const json_t *a = json_object_get(d, "configs");
	char err[300], en[600];

	bach_escape_ctl(en, sizeof(en), j->names[i]);
	if (sweep && json_array_size(a) != n) {
		errmsg("%s: line 2: \"configs\" not one state per configuration",
		       en);
		return EXIT_DATA;
	}
	for (size_t k = 0; k < n; k++) {
		if (bach_sim_new(&r[k], &c[k].cfg, err, sizeof(err))) {
			errmsg("out of memory for these caches");
			return EXIT_USAGE;
		}
		if (bach_sim_from_json(r[k], sweep ? json_array_get(a, k) : d,
				       err, sizeof(err))) {
			errmsg("%s: %s", en, err);
			return EXIT_DATA;
		}
	}
	return EXIT_OK;
}

int sim_merge(const struct merge_job *j)
{
	const json_t *h = j->p[0].head;
	struct rec_filter f = { 0 };
	struct sim_line *c = NULL;
	struct bach_sim **r = NULL;
	const char *file;
	size_t n = 0;
	int status;

	if (j->csv)
		return usage_error("bach sim has no --csv");
	status = merge_configs(j->names[0], h, &c, &n, &file, &f);
	if (!status) {
		r = calloc(n, sizeof(*r));
		if (!r) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < j->n && !status; i++) {
		struct join jn = { c, n, &f, j->names[i] };

		status = merge_states(j, i, file != NULL, c, n, r);
		if (!status && !i) { /* the first: the state to start from */
			for (size_t k = 0; k < n; k++) {
				struct bach_sim *t = c[k].s;

				c[k].s = r[k];
				r[k] = t;
			}
		} else if (!status && j->p[i].records) { /* an empty chunk
							    changes nothing */
			status = join(&jn, r, &j->p[i]);
		}
		for (size_t k = 0; k < n; k++) {
			bach_sim_free(r[k]);
			r[k] = NULL;
		}
	}
	if (!status && j->out && !json_is_array(json_object_get(h, "paths"))) {
		status = bad_head(j->names[0], "\"paths\" missing");
	} else if (!status && j->out) {
		status =
			write_sim(j->out, file, c, n,
				  json_deep_copy(json_object_get(h, "options")),
				  json_deep_copy(json_object_get(h, "trace")),
				  json_deep_copy(json_object_get(h, "paths")),
				  j->start, j->end, j->records, j->crc);
	} else if (!status && file) {
		sim_configs_print(file, c, n, j->json);
	} else if (!status) {
		bach_sim_finish(c[0].s);
		sim_print(c[0].s, &c[0].cfg, j->json);
		if (j->json)
			putchar('\n');
	}
	for (size_t k = 0; c && k < n; k++)
		bach_sim_free(c[k].s);
	free(c);
	free(r);
	filter_free(&f);
	return status;
}
