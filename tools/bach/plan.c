// SPDX-License-Identifier: MIT
/*
 * bach plan: split a trace into record ranges for --range and --partial
 * (docs/analysis.md section 8), without reading a record: the files' sizes,
 * each blocked segment's member index (.gzi, or its members' headers; a
 * .byu.zst's seek table) and a capture's manifest (gap events, retention) say
 * where the cuts can go.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "bach/index.h"
#include "cmd.h"
#include "lib/io/manifest.h"
#include "lib/io/zst.h"
#include "lib/options.h"

/* where a cut may go, best first (docs/analysis.md section 8) */
enum cut_kind { CUT_GAP, CUT_SEGMENT, CUT_MEMBER, CUT_RECORD, CUT_START };
static const char *const cut_names[] = { "gap", "segment", "member", "record",
					 "start" };

struct cand {
	uint64_t at;
	enum cut_kind kind;
};

struct plan {
	struct cand *c;
	size_t n, cap;
	uint64_t total; /* records of the whole trace */
	/* raw files: any record is a cut, [lo, hi) */
	uint64_t *raw;
	size_t nraw, rawcap;
};

static int push(struct plan *p, uint64_t at, enum cut_kind kind)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		struct cand *c = realloc(p->c, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->c = c;
		p->cap = cap;
	}
	p->c[p->n].at = at;
	p->c[p->n++].kind = kind;
	return 0;
}

/* the pair (a, b) after the n pairs of *v (room for *cap pairs) */
static int push_pair(uint64_t **v, size_t *n, size_t *cap, uint64_t a,
		     uint64_t b)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		uint64_t *r = realloc(*v, 2 * c * sizeof(*r));

		if (!r)
			return -ENOMEM;
		*v = r;
		*cap = c;
	}
	(*v)[2 * *n] = a;
	(*v)[2 * (*n)++ + 1] = b;
	return 0;
}

/* One trace file: its records, its member starts, its start as a cut. */
static int add_file(struct plan *p, const char *path, enum cut_kind first)
{
	char msg[600], ep[600];
	struct bach_index ix = { 0 };
	struct stat sb;
	int rc;

	bach_escape_ctl(ep, sizeof(ep), path);
	if (!strcmp(path, "-"))
		return usage_error(
			"-: standard input cannot be planned (it can be read only once)");
	if (p->total && push(p, p->total, first))
		goto nomem;
	if (!ends_with(path, ".gz") && !ends_with(path, ".zst")) {
		if (stat(path, &sb)) {
			errmsg("%s: %s", ep, strerror(errno));
			return EXIT_USAGE;
		}
		if (!S_ISREG(sb.st_mode)) {
			errmsg("%s: not a regular file", ep);
			return EXIT_USAGE;
		}
		if (push_pair(&p->raw, &p->nraw, &p->rawcap, p->total,
			      p->total + (uint64_t)sb.st_size / BACH_REC_SIZE))
			goto nomem;
		p->total += (uint64_t)sb.st_size / BACH_REC_SIZE;
		return EXIT_OK;
	}
	if (ends_with(path, ".zst")) {
		/* its frames, from its seek table (docs/formats.md 10) */
		rc = zst_table_load_path(path, &ix, msg, sizeof(msg));
		if (rc == -ENOENT && !stat(path, &sb)) {
			/* a zstd file that does not end with one: damaged
			 * to bach, as to its readers */
			errmsg("%s: missing seek table: its records cannot be found without reading them",
			       ep);
			return EXIT_DATA;
		}
		if (rc) {
			errmsg("%s: %s", ep,
			       rc == -BACH_EDATA ? msg : strerror(-rc));
			return bach_exit_status(rc);
		}
	} else {
		rc = bach_index_load(path, &ix, msg, sizeof(msg));
		if (rc == -ENOENT || rc == -ESTALE)
			rc = bach_index_build(path, &ix, msg, sizeof(msg));
	}
	if (rc == -ENOTSUP) {
		errmsg("%s: not blocked gzip: its records cannot be found without reading them (bach convert writes a blocked one)",
		       ep);
		return EXIT_USAGE;
	}
	if (rc) {
		errmsg("%s", msg);
		return bach_exit_status(rc);
	}
	for (uint64_t i = 1; i < ix.n; i++)
		if (ix.uoff[i] % BACH_REC_SIZE == 0 &&
		    push(p, p->total + ix.uoff[i] / BACH_REC_SIZE,
			 CUT_MEMBER)) {
			bach_index_free(&ix);
			goto nomem;
		}
	p->total += ix.uoff[ix.n] / BACH_REC_SIZE;
	bach_index_free(&ix);
	return EXIT_OK;
nomem:
	errmsg("out of memory");
	return EXIT_USAGE;
}

/* A capture directory: its segments, and the gap events of its manifest. */
static int add_dir(struct plan *p, const char *dir)
{
	struct bach_manifest m = { 0 };
	char msg[600], **paths = NULL;
	uint64_t base = 0, start = p->total;
	ssize_t n;
	int fd, rc, status = EXIT_OK;

	n = bach_capture_open(dir, &paths, NULL, msg, sizeof(msg));
	if (n < 0) {
		errmsg("%s", msg);
		return bach_exit_status((int)n);
	}
	for (ssize_t i = 0; i < n && !status; i++)
		status = add_file(p, paths[i], CUT_SEGMENT);
	for (ssize_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (status)
		return status;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errmsg("%s: %s", dir, strerror(errno));
		return EXIT_USAGE;
	}
	rc = bach_manifest_load(fd, dir, &m, msg, sizeof(msg));
	close(fd);
	if (rc == -ENOENT)
		return EXIT_OK; /* no gap events to cut at */
	if (rc) {
		errmsg("%s", msg);
		return bach_exit_status(rc);
	}
	/* retention removed the oldest segments: positions start later */
	for (size_t s = 0; s < m.nsegs; s++)
		if (m.segs[s].retained)
			base += m.segs[s].records;
	for (uint64_t g = 0; g < m.gaps; g++) {
		uint64_t at = m.gap_list[g].at;

		if (at < base || at - base >= p->total - start)
			continue;
		if (push(p, start + at - base, CUT_GAP)) {
			errmsg("out of memory");
			status = EXIT_USAGE;
			break;
		}
	}
	bach_manifest_free(&m);
	return status;
}

static int by_at(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static bool in_raw(const struct plan *p, uint64_t at)
{
	for (size_t i = 0; i < p->nraw; i++)
		if (at >= p->raw[2 * i] && at < p->raw[2 * i + 1])
			return true;
	return false;
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* the first candidate at or after x (p->n when none) */
static size_t lower(const struct plan *p, uint64_t x)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->c[mid].at < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The cut for the ideal place t, after prev: within w of t, the best kind
 * and then the nearest; with none there, t itself in a raw file, else the
 * nearest candidate of any kind. A binary search and the candidates in
 * the window: a capture of thousands of segments is planned at once.
 */
static struct cand choose(const struct plan *p, uint64_t t, uint64_t w,
			  uint64_t prev)
{
	struct cand best = { UINT64_MAX, CUT_START }, near = best;
	size_t first = lower(p, prev + 1), j = lower(p, t > w ? t - w : 0);

	/* within w of t: the best kind, then the nearest (candidates are
	 * sorted by place, then kind) */
	for (j = j > first ? j : first;
	     j < p->n && p->c[j].at <= t + w && p->c[j].at < p->total; j++)
		if (best.at == UINT64_MAX || p->c[j].kind < best.kind ||
		    (p->c[j].kind == best.kind &&
		     dist(p->c[j].at, t) < dist(best.at, t)))
			best = p->c[j];
	if (best.at != UINT64_MAX && best.kind != CUT_RECORD)
		return best;
	if (t > prev && t < p->total && in_raw(p, t))
		return (struct cand){ t, CUT_RECORD };
	/* else the nearest of any kind: the first at or after t, or the
	 * place before it (the first candidate there, the best kind) */
	j = lower(p, t);
	j = j > first ? j : first;
	if (j < p->n && p->c[j].at < p->total)
		near = p->c[j];
	if (j > first) {
		size_t k = j - 1;

		while (k > first && p->c[k - 1].at == p->c[k].at)
			k--;
		if (near.at == UINT64_MAX ||
		    dist(p->c[k].at, t) <= dist(near.at, t))
			near = p->c[k];
	}
	return near;
}

/* --slurm DIR -- CMD OPTION...: what the scripts are made of */
struct slurm {
	const char *dir; /* as given */
	char *adir;	 /* absolute */
	bool force;	 /* DIR may hold files */
	char **cmd;	 /* CMD OPTION... */
	int ncmd;
	const char *fmt; /* --json, --csv or NULL: for bach merge */
	char *configs;	 /* sim --configs FILE's argument made absolute */
	uint64_t *range; /* START, END of each chunk */
	size_t n, cap;
};

/* s in single quotes for sh: any byte but ' as it is, ' as '\'' */
static void sh_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* DIR/NAME in sh quotes for Slurm's --output: DIR's % escaped, NAME's
 * patterns (%a: the task) kept */
static void slurm_path(FILE *f, const char *dir, const char *name)
{
	fputc('\'', f);
	for (const char *p = dir; *p; p++)
		if (*p == '\'')
			fputs("'\\''", f);
		else if (*p == '%')
			fputs("%%", f);
		else
			fputc(*p, f);
	fprintf(f, "/%s'", name);
}

/*
 * sim --configs FILE: FILE (arg, the argument FILE or the end of
 * --configs=FILE) made absolute in its place, as the tasks run elsewhere
 */
static int slurm_configs(struct slurm *sl, const char *arg)
{
	char *abs;
	size_t pre;
	int i = 1;

	/* one: the scripts keep a pointer to the rewritten argument */
	if (sl->configs) {
		errmsg("--slurm: --configs given twice");
		return EXIT_USAGE;
	}
	abs = realpath(arg, NULL);
	/* the argument arg is in (getopt may have moved av's) */
	while (i < sl->ncmd &&
	       !(arg >= sl->cmd[i] && arg <= sl->cmd[i] + strlen(sl->cmd[i])))
		i++;
	if (i == sl->ncmd) {
		free(abs);
		errmsg("--slurm: --configs: its argument not found");
		return EXIT_USAGE;
	}
	pre = (size_t)(arg - sl->cmd[i]);

	if (!abs) {
		char ep[600];

		bach_escape_ctl(ep, sizeof(ep), arg);
		errmsg("--slurm: --configs: %s: %s", ep, strerror(errno));
		return EXIT_USAGE;
	}
	sl->configs = malloc(pre + strlen(abs) + 1);
	if (!sl->configs) {
		free(abs);
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	memcpy(sl->configs, sl->cmd[i], pre);
	strcpy(sl->configs + pre, abs);
	free(abs);
	sl->cmd[i] = sl->configs;
	return EXIT_OK;
}

/*
 * The command after --: one whose options take --partial, its options
 * valid by its own getopt table (abbreviations too), without --range,
 * --partial or an operand; its --json or --csv is merge's.
 */
static int slurm_command(struct slurm *sl)
{
	const struct bach_cmd *c = cmd_find(sl->cmd[0]);
	const struct option *lo = NULL;
	const char *so = "";
	char name[80], **av;
	int k, status = EXIT_OK, saved = optind;

	if (!c)
		return usage_error("--slurm: no command '%s' after --",
				   sl->cmd[0]);
	if (!cmd_splits(c))
		return usage_error(
			"--slurm: bach %s takes no --range and --partial: its run cannot be split and merged",
			c->name);
	cmd_options(c, &so, &lo);
	av = calloc((size_t)sl->ncmd + 1, sizeof(*av));
	if (!av) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	snprintf(name, sizeof(name), "bach %s", c->name);
	av[0] = name;
	for (int i = 1; i < sl->ncmd; i++)
		av[i] = sl->cmd[i];
	optind = 0; /* a new scan, getopt's state reset */
	for (;;) {
		int li = -1;
		const char *o = NULL;

		k = getopt_long(sl->ncmd, av, so, lo, &li);
		if (k == -1)
			break;
		if (k == '?' || k == ':') {
			status = usage_error(
				"--slurm: the options of bach %s after -- are not right (above)",
				c->name);
			goto out;
		}
		if (li >= 0)
			o = lo[li].name;
		for (int i = 0; !o && lo[i].name; i++)
			if (!lo[i].flag && lo[i].val == k)
				o = lo[i].name;
		if (o && !strcmp(o, "configs")) {
			status = slurm_configs(sl, optarg);
			if (status)
				goto out;
		} else if (o && !strcmp(o, "json"))
			sl->fmt = "--json";
		else if (o && !strcmp(o, "csv"))
			sl->fmt = "--csv";
		else if (o && (!strcmp(o, "range") || !strcmp(o, "partial"))) {
			status = usage_error(
				"--slurm: --%s is bach plan's to give each task, not one of the command's options",
				o);
			goto out;
		}
	}
	if (optind < sl->ncmd)
		status = usage_error(
			"--slurm: '%s' after --: the TRACEs go before --, the command's options after it",
			av[optind]);
out:
	free(av);
	optind = saved; /* plan's TRACEs start there */
	return status;
}

/* DIR made, or an empty one (or any, --force); its absolute name */
static int slurm_dir(struct slurm *sl)
{
	char ep[600];
	DIR *d;

	bach_escape_ctl(ep, sizeof(ep), sl->dir);
	if (strchr(sl->dir, '\\'))
		return usage_error(
			"--slurm: %s: a backslash in it would turn off the patterns of Slurm's --output (its log files): choose another directory",
			ep);
	if (mkdir(sl->dir, 0777) && errno != EEXIST) {
		errmsg("--slurm: %s: %s", ep, strerror(errno));
		return EXIT_USAGE;
	}
	d = opendir(sl->dir);
	if (!d) {
		errmsg("--slurm: %s: %s", ep, strerror(errno));
		return EXIT_USAGE;
	}
	for (struct dirent *e; !sl->force && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			char en[600];

			bach_escape_ctl(en, sizeof(en), e->d_name);
			closedir(d);
			return usage_error(
				"--slurm: %s is not empty (it holds %s): --force writes into it all the same",
				ep, en);
		}
	closedir(d);
	sl->adir = realpath(sl->dir, NULL);
	if (!sl->adir) {
		errmsg("--slurm: %s: %s", ep, strerror(errno));
		return EXIT_USAGE;
	}
	if (strchr(sl->adir, '\\')) {
		bach_escape_ctl(ep, sizeof(ep), sl->adir);
		return usage_error(
			"--slurm: %s: a backslash in it would turn off the patterns of Slurm's --output (its log files): choose another directory",
			ep);
	}
	return EXIT_OK;
}

/* DIR/NAME written by put(), executable; a message naming it if not */
static int slurm_write(const struct slurm *sl, const char *name,
		       void (*put)(FILE *, const struct slurm *, void *),
		       void *arg)
{
	char path[PATH_MAX + 64], ep[PATH_MAX + 64];
	FILE *f;
	int bad;

	snprintf(path, sizeof(path), "%s/%s", sl->adir, name);
	bach_escape_ctl(ep, sizeof(ep), path);
	f = fopen(path, "w");
	if (!f) {
		errmsg("%s: %s", ep, strerror(errno));
		return EXIT_USAGE;
	}
	put(f, sl, arg);
	bad = ferror(f);
	if (fchmod(fileno(f), 0755))
		bad = 1;
	if (fclose(f) || bad) {
		errmsg("%s: %s", ep, errno ? strerror(errno) : "write error");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* DIR/NAME, quoted for sh */
static void put_path(FILE *f, const struct slurm *sl, const char *name)
{
	sh_quote(f, sl->adir);
	fputc('/', f);
	sh_quote(f, name);
}

struct array_arg {
	const char *bach; /* the binary, absolute */
	char **traces;	  /* absolute */
	int ntraces;
};

static void put_array(FILE *f, const struct slurm *sl, void *arg)
{
	const struct array_arg *a = arg;

	fprintf(f,
		"#!/bin/sh\n"
		"# Written by bach plan --slurm: task I of this job array runs bach %s over\n"
		"# the records of chunk I and writes their partial to part-I beside this\n"
		"# script (docs/analysis.md section 7). submit.sh submits it, and\n"
		"# merge.sh once every task has succeeded.\n"
		"#SBATCH --job-name=bach-%s\n"
		"#SBATCH --array=0-%zu\n"
		"case ${SLURM_ARRAY_TASK_ID:-} in\n",
		sl->cmd[0], sl->cmd[0], sl->n - 1);
	for (size_t i = 0; i < sl->n; i++)
		fprintf(f, "%zu) range=%llu:%llu ;;\n", i,
			(unsigned long long)sl->range[2 * i],
			(unsigned long long)sl->range[2 * i + 1]);
	fprintf(f,
		"*) echo \"array.sh: no chunk '${SLURM_ARRAY_TASK_ID:-}' (0 to %zu)\" >&2\n"
		"   exit 2 ;;\nesac\nexec ",
		sl->n - 1);
	sh_quote(f, a->bach);
	for (int i = 0; i < sl->ncmd; i++) {
		fputc(' ', f);
		sh_quote(f, sl->cmd[i]);
	}
	fputs(" --range \"$range\" --partial ", f);
	put_path(f, sl, "part-");
	fputs("\"$SLURM_ARRAY_TASK_ID\"", f);
	for (int i = 0; i < a->ntraces; i++) {
		fputc(' ', f);
		sh_quote(f, a->traces[i]);
	}
	fputc('\n', f);
}

static void put_merge(FILE *f, const struct slurm *sl, void *arg)
{
	const char *bach = arg;

	fprintf(f,
		"#!/bin/sh\n"
		"# Written by bach plan --slurm: bach merge of the partials the tasks of\n"
		"# array.sh wrote, into result beside this script (through result.tmp:\n"
		"# result is there only when the merge succeeded); its exit status is\n"
		"# the merge's.\n"
		"#SBATCH --job-name=bach-merge\n");
	sh_quote(f, bach);
	fputs(" merge", f);
	if (sl->fmt)
		fprintf(f, " %s", sl->fmt);
	for (size_t i = 0; i < sl->n; i++) {
		char part[40];

		snprintf(part, sizeof(part), "part-%zu", i);
		fputs(" \\\n\t", f);
		put_path(f, sl, part);
	}
	fputs(" > ", f);
	put_path(f, sl, "result.tmp");
	fputs(" || exit\nexec mv -f ", f);
	put_path(f, sl, "result.tmp");
	fputc(' ', f);
	put_path(f, sl, "result");
	fputc('\n', f);
}

/* the end of an sbatch line: --output=DIR/LOG "$@" DIR/SCRIPT */
static void put_sbatch(FILE *f, const struct slurm *sl, const char *log,
		       const char *script)
{
	fputs(" --output=", f);
	slurm_path(f, sl->adir, log);
	fputs(" \"$@\" ", f);
	put_path(f, sl, script);
}

static void put_submit(FILE *f, const struct slurm *sl, void *arg)
{
	(void)arg;
	fputs("#!/bin/sh\n"
	      "# Written by bach plan --slurm: submits array.sh, then merge.sh to run\n"
	      "# once every task of it has succeeded (cancelled if one fails). Its\n"
	      "# arguments go to both sbatch runs (--partition, --account, --time...).\n"
	      "# Prints the job ids: \"array ID\" and \"merge ID\".\n"
	      "set -eu\n"
	      "array=$(sbatch --parsable",
	      f);
	put_sbatch(f, sl, "part-%a.log", "array.sh");
	fputs(")\narray=${array%%;*}\n"
	      "merge=$(sbatch --parsable --dependency=afterok:\"$array\" \\\n"
	      "\t--kill-on-invalid-dep=yes",
	      f);
	put_sbatch(f, sl, "merge.log", "merge.sh");
	fputs(") || {\n"
	      "\techo \"submit.sh: the merge was not submitted; job $array runs (scancel $array)\" >&2\n"
	      "\texit 1\n"
	      "}\n"
	      "merge=${merge%%;*}\n"
	      "echo \"array $array\"\n"
	      "echo \"merge $merge\"\n",
	      f);
}

/* the three scripts, for the traces argv[0..n) */
static int slurm_scripts(struct slurm *sl, char **argv, int n)
{
	struct array_arg a = { .traces = calloc((size_t)n, sizeof(char *)),
			       .ntraces = n };
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int status = EXIT_OK;

	if (!a.traces) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	if (len <= 0) {
		errmsg("--slurm: /proc/self/exe: %s (the scripts name bach's binary by its absolute path)",
		       len ? strerror(errno) : "empty");
		status = EXIT_USAGE;
		goto out;
	}
	exe[len] = '\0';
	a.bach = exe;
	for (int i = 0; i < n && !status; i++) {
		a.traces[i] = realpath(argv[i], NULL);
		if (!a.traces[i]) {
			char ep[600];

			bach_escape_ctl(ep, sizeof(ep), argv[i]);
			errmsg("%s: %s", ep, strerror(errno));
			status = EXIT_USAGE;
		}
	}
	if (!status)
		status = slurm_write(sl, "array.sh", put_array, &a);
	if (!status)
		status = slurm_write(sl, "merge.sh", put_merge, exe);
	if (!status)
		status = slurm_write(sl, "submit.sh", put_submit, NULL);
	if (!status) {
		char ep[PATH_MAX + 64];

		bach_escape_ctl(ep, sizeof(ep), sl->adir);
		fprintf(stderr,
			"%s: %zu tasks of bach %s: sh %s/submit.sh submits them and the merge into %s/result\n",
			prog_cmd, sl->n, sl->cmd[0], ep, ep);
	}
out:
	for (int i = 0; i < n; i++)
		free(a.traces[i]);
	free(a.traces);
	return status;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "chunks", required_argument, NULL, 'n' },
		{ "chunk-records", required_argument, NULL, 'c' },
		{ "slurm", required_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan p = { 0 };
	struct slurm sl = { 0 };
	uint64_t chunks = 0, size = 0, prev = 0;
	bool json = false;
	int c, status = EXIT_OK;
	json_t *arr = NULL;

	/* --slurm's command follows "--": the options end there */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sl.cmd = argv + i + 1;
			sl.ncmd = argc - i - 1;
			argc = i;
			break;
		}
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's')
			sl.dir = optarg;
		else if (c == 'f')
			sl.force = true;
		else if (c == 'j')
			json = true;
		else if (c == 'n' && (!parse_u64(optarg, &chunks) || !chunks))
			return usage_error(
				"--chunks: not a whole number >= 1: '%s'",
				optarg);
		else if (c == 'c' && (!parse_u64(optarg, &size) || !size))
			return usage_error(
				"--chunk-records: not a whole number >= 1: '%s'",
				optarg);
		else if (c != 'j' && c != 'n' && c != 'c')
			return usage_error("bad option");
	}
	if (sl.dir && !sl.ncmd)
		return usage_error(
			"--slurm: no command after --: bach plan TRACE... --slurm DIR -- stat|mrc [OPTION]...");
	if (!sl.dir && sl.cmd)
		return usage_error("a command after --: only with --slurm DIR");
	if (sl.force && !sl.dir)
		return usage_error("--force: only with --slurm DIR");
	if (chunks && size)
		return usage_error(
			"--chunks and --chunk-records: one or the other");
	if (optind >= argc)
		return usage_error("no TRACE given");
	if (sl.dir && (status = slurm_command(&sl)))
		return status;
	for (int i = optind; i < argc && !status; i++) {
		struct stat sb;

		if (strcmp(argv[i], "-") && !stat(argv[i], &sb) &&
		    S_ISDIR(sb.st_mode))
			status = add_dir(&p, argv[i]);
		else
			status = add_file(&p, argv[i], CUT_SEGMENT);
	}
	if (!status && sl.dir)
		status = slurm_dir(&sl);
	if (status)
		goto out;
	if (p.n)
		qsort(p.c, p.n, sizeof(*p.c), by_at);
	if (!chunks && !size)
		size = 16777216;
	if (!chunks)
		chunks = p.total ? (p.total + size - 1) / size : 1;
	if (json && !(arr = json_array())) {
		errmsg("out of memory");
		status = EXIT_USAGE;
		goto out;
	}
	{
		struct cand from = { 0, CUT_START };

		for (uint64_t k = 1; k <= chunks; k++) {
			struct cand to = { p.total, CUT_START };
			uint64_t t, w;

			if (k < chunks) {
				t = (uint64_t)((unsigned __int128)p.total * k /
					       chunks);
				w = p.total / chunks / 4;
				to = choose(&p, t, w, prev);
				if (to.at == UINT64_MAX)
					continue; /* no cut left: fewer chunks
						   */
			}
			if (to.at <= prev && k < chunks)
				continue;
			if (sl.dir && push_pair(&sl.range, &sl.n, &sl.cap,
						from.at, to.at)) {
				errmsg("out of memory");
				status = EXIT_USAGE;
				goto out;
			}
			if (json) {
				json_t *o =
					json_pack("{sIsIsIss}", "start",
						  (json_int_t)from.at, "end",
						  (json_int_t)to.at, "records",
						  (json_int_t)(to.at - from.at),
						  "cut", cut_names[from.kind]);

				if (!o || json_array_append_new(arr, o)) {
					errmsg("out of memory");
					status = EXIT_USAGE;
					goto out;
				}
			} else {
				printf("%llu:%llu  %llu records  (%s)\n",
				       (unsigned long long)from.at,
				       (unsigned long long)to.at,
				       (unsigned long long)(to.at - from.at),
				       cut_names[from.kind]);
			}
			prev = to.at;
			from = to;
		}
	}
	if (json) {
		status =
			put_json(json_pack("{sIso}", "records",
					   (json_int_t)p.total, "chunks", arr));
		arr = NULL;
	}
	if (!status && sl.dir)
		status = slurm_scripts(&sl, argv + optind, argc - optind);
out:
	free(sl.adir);
	free(sl.configs);
	free(sl.range);
	json_decref(arr);
	free(p.c);
	free(p.raw);
	return status;
}

const struct bach_cmd cmd_plan = {
	.name = "plan",
	.run = run,
	.values =
		(const struct complete_values[]){
			{ .opt = "slurm", .dirs = true },
			{ .opt = NULL },
		},
	.summary = "split a trace into record ranges for --range and --partial",
	.help = "usage: bach plan [--chunks N | --chunk-records N] [--json] TRACE...\n"
		"       [--slurm DIR [--force] -- CMD [OPTION]...]\n"
		"\n"
		"Record ranges START:END that cover the trace, one per line with its\n"
		"records and where its start was cut, found without reading a record:\n"
		"from the files' sizes, each blocked file's member index (its .gzi, or\n"
		"its members' headers; a .byu.zst's seek table) and a capture's\n"
		"manifest. A cut goes, within a quarter of a chunk of its even place,\n"
		"at a gap marker (the caches are empty there), else at a segment's\n"
		"start, else at a gzip member's or zstd frame's start (a raw file: any\n"
		"record). Each range is what --range takes:\n"
		"bach stat --range START:END --partial FILE, then bach merge.\n"
		"\n"
		"      --chunks N         N ranges (fewer when there are not N places\n"
		"                         to cut)\n"
		"      --chunk-records N  ranges of about N records (16777216 unless\n"
		"                         --chunks is given)\n"
		"      --json             {\"records\": R, \"chunks\": [{\"start\": A,\n"
		"                         \"end\": B, \"records\": B-A, \"cut\": KIND}]}\n"
		"      --slurm DIR        write into DIR (made, or empty) the Slurm\n"
		"                         scripts of a split run of bach CMD OPTION...\n"
		"                         (a command that takes --range and --partial:\n"
		"                         stat, mrc): array.sh, a job array of a task a\n"
		"                         range writing DIR/part-I; merge.sh, bach merge\n"
		"                         of them into DIR/result (with CMD's --json or\n"
		"                         --csv); submit.sh, which submits both, the\n"
		"                         merge with --dependency=afterok, and prints the\n"
		"                         job ids (its arguments go to sbatch)\n"
		"      --force            --slurm: write into a DIR that holds files\n"
		"\n"
		"example: bach plan --chunks 8 --json capture/\n"
		"         bach plan --chunks 64 capture/ --slurm run1 -- mrc --json\n"
		"         sh run1/submit.sh --partition=batch\n",
};
