// SPDX-License-Identifier: MIT
/*
 * bach sim --configs FILE (docs/analysis.md section 2.2): many cache
 * configurations in one pass over the trace. The trace is read and
 * decompressed once, each block of records is decoded once into
 * references (bach_sim_refs()), and every configuration's simulator takes
 * the same decoded chunk. The configurations that can (most: those whose
 * L1 and TLB allocate on a write) take it collapsed instead: a run of
 * fetches or reads within the line just referenced is one entry
 * (bach_sim_collapse()), hits that only count. A configuration whose L1
 * is an earlier one's simulates only its TLB and its L2, which takes what
 * that one's L1 sent below it (bach_sim_record()), a chunk after that one
 * has simulated it; it takes that one's L1 at the end
 * (bach_sim_adopt_l1()). The simulators run on worker threads, one
 * configuration on one thread at a time and each chunk after the one
 * before, so what each counts does not depend on the threads. The main
 * thread decodes up to NBUF chunks ahead of the configuration furthest
 * behind, and joins in when it has to wait; a configuration goes on to
 * the next chunk as soon as it is decoded, without waiting for the
 * others to finish theirs. The results are printed in FILE's order, each
 * as `bach sim` alone prints it, or with --partial (a range of the trace)
 * written in one partial that holds each configuration's (sim_part.c,
 * docs/formats.md section 11).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/analysis/cachesim.h"
#include "lib/cpus.h"

/* references handed to the simulators at a time: 2048 took 6% less CPU
 * on one thread (they stay in L1 while each configuration takes them) but
 * 4% more time on two, handing out four times the chunks */
#define CHUNK 8192
#define NBUF  4 /* chunks decoded and not yet taken by every config */

struct sweep {
	struct sim_line *c;
	size_t n;
	/* chunk k is in buf[k % NBUF], len[k % NBUF] references; chunk pub
	 * is being decoded (fill references so far), the ones before it are
	 * for the simulators to take */
	struct bach_sim_ref *buf[NBUF];
	size_t len[NBUF], fill;
	/* the same chunks collapsed (bach_sim_collapse(), blocks of 2^lg
	 * bytes), for the configurations with shortcut[i]; NULL when none
	 * has */
	struct bach_sim_ref *cbuf[NBUF];
	size_t clen[NBUF];
	unsigned lg;
	bool *shortcut;
	/* per configuration, the one whose L1 it is, or itself: one whose L1
	 * is an earlier one's simulates only its TLB, and its L2 (if it has
	 * one, so has that one) takes what that one's L1 sent below it
	 * (down[that one][chunk % NBUF], kept when needed[that one]) */
	size_t *lead;
	bool *needed;
	struct bach_sim_downs (*down)[NBUF];
	uint64_t pub;
	/* per configuration, under mu: the chunk it takes next, and whether
	 * a thread is simulating it; cv: any of these, pub or quit changed */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t *at;
	bool *busy;
	bool quit;
	/* the filter, and the trace position of the next record read (random
	 * replacement draws by it, as in a single run: sim_read()) */
	struct rec_filter *f;
	uint64_t pos;
	bool oom;
};

/* ---- FILE ---------------------------------------------------------------- */

/* bach sim's options that hold for every configuration */
static const char *const cmdline_opts[] = {
	"json", "configs", "threads", "type", "addr",
	"port", "range",   "partial", NULL,
};

/*
 * One line's words (up to a word starting with '#') into sc: the command
 * line's configuration base with the line's options added, and its
 * simulator. 0 (also for a line without words: sc->text NULL), or
 * EXIT_USAGE after the message naming file and line.
 */
static int parse_line(const char *file, unsigned lineno, char *line,
		      const struct bach_sim_config *base, struct sim_line *sc)
{
	char why[300], *save = NULL, *w, *words[256];
	size_t nw = 0, len = 0;
	int err;

	memset(sc, 0, sizeof(*sc));
	for (w = strtok_r(line, " \t\r\n\v\f", &save); w && *w != '#';
	     w = strtok_r(NULL, " \t\r\n\v\f", &save)) {
		if (nw == sizeof(words) / sizeof(*words))
			return usage_error("%s:%u: more than %zu words", file,
					   lineno, nw);
		words[nw++] = w;
		len += strlen(w) + 1;
	}
	if (!nw)
		return 0;
	sc->line = lineno;
	sc->cfg = *base;
	for (size_t i = 0; i < nw; i++) {
		const char *name = words[i] + 2, *eq, *arg;
		size_t nlen, k;
		int code = -1;

		if (strncmp(words[i], "--", 2))
			return usage_error(
				"%s:%u: '%s' is not an option (a configuration is bach sim's cache options, e.g. --l1 16k:32:4)",
				file, lineno, words[i]);
		eq = strchr(name, '=');
		nlen = eq ? (size_t)(eq - name) : strlen(name);
		/* a cache (bach sim's code is its number) or --seed */
		for (k = 0; k < BACH_SIM_NCACHES; k++)
			if (strlen(bach_sim_cache_names[k]) == nlen &&
			    !strncmp(bach_sim_cache_names[k], name, nlen))
				code = (int)k;
		if (nlen == 4 && !strncmp(name, "seed", 4))
			code = 's';
		if (code < 0) {
			for (k = 0; cmdline_opts[k]; k++)
				if (strlen(cmdline_opts[k]) == nlen &&
				    !strncmp(cmdline_opts[k], name, nlen))
					return usage_error(
						"%s:%u: --%s goes on the command line, for every configuration, not in a line",
						file, lineno, cmdline_opts[k]);
			return usage_error(
				"%s:%u: unknown option '%.*s' (a line takes --l1i, --l1d, --l1, --l2, --l3, --tlb and --seed)",
				file, lineno, (int)nlen + 2, words[i]);
		}
		if (eq)
			arg = eq + 1;
		else if (i + 1 < nw)
			arg = words[++i];
		else
			return usage_error("%s:%u: --%s needs a value", file,
					   lineno, name);
		if (code != 's' && base->have[code])
			return usage_error(
				"%s:%u: --%s is on the command line already",
				file, lineno, bach_sim_cache_names[code]);
		if (sim_option(&sc->cfg, code, arg, why, sizeof(why)))
			return usage_error("%s:%u: %s", file, lineno, why);
	}
	err = bach_sim_new(&sc->s, &sc->cfg, why, sizeof(why));
	if (err == -ENOMEM) {
		errmsg("%s:%u: out of memory for these caches", file, lineno);
		return EXIT_USAGE;
	}
	if (err)
		return usage_error("%s:%u: %s", file, lineno, why);
	sc->text = malloc(len);
	if (!sc->text) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	sc->text[0] = 0;
	for (size_t i = 0; i < nw; i++) {
		if (i)
			strcat(sc->text, " ");
		strcat(sc->text, words[i]);
	}
	return 0;
}

/* Every configuration of file into w->c, w->n. */
static int load(const char *file, const struct bach_sim_config *base,
		struct sweep *w)
{
	FILE *f = fopen(file, "r");
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	unsigned lineno = 0;
	int status = EXIT_OK;

	if (!f) {
		errmsg("--configs: %s: %s", file, strerror(errno));
		return EXIT_USAGE;
	}
	while (getline(&line, &cap, f) >= 0) {
		struct sim_line sc;

		status = parse_line(file, ++lineno, line, base, &sc);
		if (status || !sc.text) {
			bach_sim_free(sc.s);
			if (status)
				break;
			continue;
		}
		if (w->n == alloc) {
			size_t m = alloc ? 2 * alloc : 16;
			struct sim_line *c = realloc(w->c, m * sizeof(*c));

			if (!c) {
				bach_sim_free(sc.s);
				free(sc.text);
				errmsg("out of memory");
				status = EXIT_USAGE;
				break;
			}
			w->c = c;
			alloc = m;
		}
		w->c[w->n++] = sc;
	}
	if (!status && ferror(f)) {
		errmsg("--configs: %s: %s", file, strerror(errno));
		status = EXIT_USAGE;
	}
	if (!status && !w->n)
		status = usage_error("--configs: %s holds no configuration",
				     file);
	free(line);
	fclose(f);
	return status;
}

/* ---- the pass ------------------------------------------------------------ */

/*
 * With mu held: simulate, mu released, the next chunk of the
 * configuration furthest behind that no thread is simulating and that
 * has one decoded. Whether there was one.
 */
static bool step(struct sweep *w)
{
	size_t i = w->n;
	uint64_t k;

	for (size_t j = 0; j < w->n; j++)
		if (!w->busy[j] && w->at[j] < w->pub &&
		    (w->lead[j] == j || w->at[w->lead[j]] > w->at[j]) &&
		    (i == w->n || w->at[j] < w->at[i]))
			i = j;
	if (i == w->n)
		return false;
	w->busy[i] = true;
	k = w->at[i];
	pthread_mutex_unlock(&w->mu);
	{
		const struct bach_sim_ref *r =
			w->shortcut[i] ? w->cbuf[k % NBUF] : w->buf[k % NBUF];
		size_t n =
			w->shortcut[i] ? w->clen[k % NBUF] : w->len[k % NBUF];
		struct bach_sim_downs *d = &w->down[w->lead[i]][k % NBUF];

		if (w->lead[i] != i) {
			bach_sim_add_tlb(w->c[i].s, r, n);
			bach_sim_add_below(w->c[i].s, d->v, d->n);
		} else {
			if (w->needed[i]) { /* this chunk's, from empty */
				d->n = 0;
				bach_sim_record(w->c[i].s, d);
			}
			if (w->shortcut[i])
				bach_sim_add_runs(w->c[i].s, r, n);
			else
				bach_sim_add_refs(w->c[i].s, r, n);
		}
	}
	pthread_mutex_lock(&w->mu);
	w->at[i]++;
	w->busy[i] = false;
	pthread_cond_broadcast(&w->cv);
	return true;
}

/* With mu held: the chunk every configuration has taken up to. */
static uint64_t taken(const struct sweep *w)
{
	uint64_t m = w->pub;

	for (size_t j = 0; j < w->n; j++)
		m = w->at[j] < m ? w->at[j] : m;
	return m;
}

static void *helper(void *arg)
{
	struct sweep *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		if (step(w))
			continue;
		if (w->quit) /* every chunk taken */
			break;
		pthread_cond_wait(&w->cv, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * The chunk decoded so far to the simulators; then, simulating meanwhile,
 * wait until the next one's buffer is free, or with last until every
 * configuration has taken every chunk.
 */
static void dispatch(struct sweep *w, bool last)
{
	size_t b = w->pub % NBUF; /* the main thread's own until published */

	if (w->fill && w->cbuf[b])
		w->clen[b] = bach_sim_collapse(w->cbuf[b], w->buf[b], w->fill,
					       w->lg);
	pthread_mutex_lock(&w->mu);
	if (w->fill) {
		w->len[b] = w->fill;
		w->pub++;
		w->fill = 0;
		pthread_cond_broadcast(&w->cv);
	}
	while (last ? taken(w) < w->pub : taken(w) + NBUF <= w->pub)
		if (!step(w))
			pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

static void add(void *ctx, const uint8_t *recs, size_t n)
{
	struct sweep *w = ctx;
	const uint32_t *off;
	ssize_t kept = filter_block(w->f, &recs, NULL, n);
	uint64_t base = w->pos;

	w->pos += n;
	if (kept < 0) {
		w->oom = true;
		return;
	}
	off = w->f && w->f->on ? w->f->off : NULL;
	for (size_t i = 0; i < (size_t)kept;) {
		size_t k = CHUNK - w->fill < (size_t)kept - i
				   ? CHUNK - w->fill
				   : (size_t)kept - i;

		bach_sim_refs(w->buf[w->pub % NBUF] + w->fill, recs, k,
			      off ? base : base + i, off ? off + i : NULL);
		w->fill += k;
		recs += k * BACH_REC_SIZE;
		i += k;
		if (w->fill == CHUNK)
			dispatch(w, false);
	}
}

void sim_configs_print(const char *file, struct sim_line *c, size_t n,
		       bool json)
{
	if (json)
		fputs("[\n", stdout);
	for (size_t i = 0; i < n; i++) {
		bach_sim_finish(c[i].s);
		if (json) {
			if (i)
				fputs(",\n", stdout);
		} else {
			printf("%s== %s:%u: %s\n", i ? "\n" : "", file,
			       c[i].line, c[i].text);
		}
		sim_print(c[i].s, &c[i].cfg, json);
	}
	if (json)
		fputs("\n]\n", stdout);
}

int sim_configs(const char *file, const struct bach_sim_config *cfg, bool json,
		int threads, struct rec_filter *f, uint64_t start, uint64_t end,
		const char *partial, int argc, char **argv)
{
	struct sweep w = { .f = f, .pos = start };
	pthread_t tid[64];
	uint64_t records = 0;
	uint32_t crc = 0;
	int status, nt = 0;

	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	status = load(file, cfg, &w);
	if (!status) {
		bool oom = false, runs = false;

		for (int b = 0; b < NBUF; b++) {
			w.buf[b] = malloc(CHUNK * sizeof(*w.buf[b]));
			oom |= !w.buf[b];
		}
		w.shortcut = calloc(w.n, sizeof(*w.shortcut));
		w.lead = calloc(w.n, sizeof(*w.lead));
		w.needed = calloc(w.n, sizeof(*w.needed));
		w.down = calloc(w.n, sizeof(*w.down));
		oom |= !w.shortcut || !w.lead || !w.needed || !w.down;
		/* the first with that L1 (and an L2, for one with an L2) */
		for (size_t j = 0; !oom && j < w.n; j++) {
			bool l2 = w.c[j].cfg.have[BACH_SIM_L2];

			w.lead[j] = j;
			for (size_t i = 0; i < j && w.lead[j] == j; i++)
				if (w.lead[i] == i &&
				    (!l2 || w.c[i].cfg.have[BACH_SIM_L2]) &&
				    bach_sim_same_l1(w.c[i].s, w.c[j].s))
					w.lead[j] = i;
			w.needed[w.lead[j]] |= l2 && w.lead[j] != j;
		}
		/* the configurations that take runs collapsed: at the
		 * smallest L1 line among them */
		w.lg = 31;
		for (size_t i = 0; !oom && i < w.n; i++) {
			int lg = bach_sim_collapse_lg(w.c[i].s);

			w.shortcut[i] = lg >= 0;
			runs |= lg >= 0;
			if (lg >= 0 && (unsigned)lg < w.lg)
				w.lg = (unsigned)lg;
		}
		for (int b = 0; runs && b < NBUF; b++) {
			w.cbuf[b] = malloc(CHUNK * sizeof(*w.cbuf[b]));
			oom |= !w.cbuf[b];
		}
		w.at = calloc(w.n, sizeof(*w.at));
		w.busy = calloc(w.n, sizeof(*w.busy));
		if (oom || !w.at || !w.busy) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		}
		/* one whose L1 is another's, with neither an L2 nor a TLB,
		 * takes nothing: not scheduled, it takes that L1 at the end */
		for (size_t j = 0; !status && j < w.n; j++)
			if (w.lead[j] != j && !w.c[j].cfg.have[BACH_SIM_L2] &&
			    !w.c[j].cfg.have[BACH_SIM_TLB])
				w.at[j] = UINT64_MAX;
	}
	if (!status) {
		if (!threads) /* the CPUs this process may run on */
			threads = (int)bach_cpus(64);
		if ((size_t)threads > w.n)
			threads = (int)w.n;
		/* the main thread is one of them */
		while (nt < threads - 1 &&
		       !pthread_create(&tid[nt], NULL, helper, &w))
			nt++;
		status = read_traces_range(argc, argv, NULL, start, end, add,
					   &w, &records, partial ? &crc : NULL);
		if (!status && w.oom) {
			errmsg("out of memory");
			status = EXIT_USAGE;
		}
		dispatch(&w, true);
		pthread_mutex_lock(&w.mu);
		w.quit = true;
		pthread_cond_broadcast(&w.cv);
		pthread_mutex_unlock(&w.mu);
		for (int i = 0; i < nt; i++)
			pthread_join(tid[i], NULL);
		for (size_t i = 0; !status && i < w.n; i++)
			for (int b = 0; b < NBUF; b++)
				if (w.down[i][b].oom) {
					errmsg("out of memory");
					status = EXIT_USAGE;
					break;
				}
		/* the L1 counts and state of the configurations that shared
		 * (their end, a copy-back, is each one's own: no recording) */
		for (size_t j = 0; !status && j < w.n; j++) {
			int err = 0;

			bach_sim_record(w.c[j].s, NULL);
			if (w.lead[j] != j)
				err = bach_sim_adopt_l1(w.c[j].s,
							w.c[w.lead[j]].s);
			if (err) {
				errmsg("%s:%u: %s", file, w.c[j].line,
				       err == -ENOMEM ? "out of memory"
						      : strerror(-err));
				status = EXIT_USAGE;
			}
		}
	}
	if (!status && partial)
		status = sim_write_part(
			partial, file, w.c, w.n, f, argc, argv, start, end,
			records > start ? records - start : 0, crc);
	else if (!status)
		sim_configs_print(file, w.c, w.n, json);
	for (size_t i = 0; i < w.n; i++) {
		bach_sim_free(w.c[i].s);
		free(w.c[i].text);
	}
	free(w.c);
	for (int b = 0; b < NBUF; b++) {
		free(w.buf[b]);
		free(w.cbuf[b]);
	}
	free(w.shortcut);
	free(w.lead);
	for (size_t i = 0; w.down && i < w.n; i++)
		for (int b = 0; b < NBUF; b++)
			free(w.down[i][b].v);
	free(w.down);
	free(w.needed);
	free(w.at);
	free(w.busy);
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.mu);
	return status;
}
