// SPDX-License-Identifier: MIT
/*
 * --between A B for dump, stat and convert: a capture's records from the
 * first mark matching A up to the next mark matching B after it, from the
 * capture's manifest (lib/io/manifest_read.c); the marks in trace order
 * (load_marks, for bach marks too).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/io/manifest.h"
#include "lib/options.h"

/*
 * A mark matches WANT when it is a user's mark with that text, or WANT is
 * a number (decimal or 0x hex) and the mark is a marker whose record
 * covers that byte address: its quadword, with that byte enabled in BE#.
 */
static bool matches(const struct bach_manifest_mark *k, const char *want,
		    bool num, uint32_t addr)
{
	if (k->text && !strcmp(k->text, want))
		return true;
	return num && k->marker && k->address == (addr & ~7u) &&
	       !(k->be >> (addr & 7) & 1);
}

static size_t find(const struct bach_manifest *m, const size_t *order,
		   size_t from, const char *want)
{
	uint64_t v = 0;
	bool num = parse_u64(want, &v) && v <= UINT32_MAX;

	for (size_t i = from; i < m->nmarks; i++)
		if (matches(&m->marks[order[i]], want, num, (uint32_t)v))
			return i;
	return m->nmarks;
}

static const struct bach_manifest *sort_m;

/* by position, then by manifest line */
static int by_at(const void *x, const void *y)
{
	const struct bach_manifest_mark *a = &sort_m->marks[*(const size_t *)x];
	const struct bach_manifest_mark *b = &sort_m->marks[*(const size_t *)y];

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

int between_arg(int argc, char **argv, const char **a, const char **b)
{
	*a = optarg;
	if (optind >= argc)
		return usage_error("--between needs two marks: --between A B");
	*b = argv[optind++];
	return EXIT_OK;
}

int load_marks(const char *what, const char *dir, struct bach_manifest *m,
	       size_t **order, uint64_t *base)
{
	char err[600], ed[600];
	int fd, rc;

	*order = NULL;
	*base = 0;
	memset(m, 0, sizeof(*m));
	bach_escape_ctl(ed, sizeof(ed), dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errmsg("%s%s: %s", what, ed, strerror(errno));
		return EXIT_USAGE;
	}
	rc = bach_manifest_load(fd, dir, m, err, sizeof(err));
	close(fd);
	if (rc == -ENOENT) {
		errmsg("%s%s: not a capture directory (no %s)", what, ed,
		       BACH_MANIFEST_NAME);
		return EXIT_USAGE;
	}
	if (rc) {
		errmsg("%s%s", what, err);
		return bach_exit_status(rc);
	}
	*order = malloc((m->nmarks + 1) * sizeof(**order));
	if (!*order) {
		errmsg("out of memory");
		bach_manifest_free(m);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < m->nmarks; i++)
		(*order)[i] = i;
	sort_m = m;
	qsort(*order, m->nmarks, sizeof(**order), by_at);
	/* retention removes the oldest segments: the trace read starts later */
	for (size_t s = 0; s < m->nsegs; s++)
		if (m->segs[s].retained)
			*base += m->segs[s].records;
	return EXIT_OK;
}

int between_window(struct bach_reader *r, int argc, char **argv, const char *a,
		   const char *b, uint64_t *first)
{
	char ea[200], eb[200], ed[600];
	struct bach_manifest m;
	struct stat st;
	size_t *order = NULL, i, j;
	uint64_t base = 0;
	int rc, status = EXIT_USAGE;

	bach_escape_ctl(ea, sizeof(ea), a);
	bach_escape_ctl(eb, sizeof(eb), b);
	if (argc != 1 || stat(argv[0], &st) < 0 || !S_ISDIR(st.st_mode))
		return usage_error(
			"--between: needs one capture directory (its manifest holds the marks)");
	bach_escape_ctl(ed, sizeof(ed), argv[0]);
	status = load_marks("--between: ", argv[0], &m, &order, &base);
	if (status)
		return status;
	status = EXIT_USAGE;
	i = find(&m, order, 0, a);
	if (i == m.nmarks) {
		errmsg("--between: no mark matching '%s' in %s", ea, ed);
		goto out;
	}
	j = find(&m, order, i + 1, b);
	if (j == m.nmarks) {
		errmsg("--between: no mark matching '%s' after '%s' (record %llu) in %s",
		       eb, ea, (unsigned long long)m.marks[order[i]].at, ed);
		goto out;
	}
	if (m.marks[order[i]].at < base) {
		errmsg("--between: mark '%s' (record %llu) is in a segment retention removed from %s",
		       ea, (unsigned long long)m.marks[order[i]].at, ed);
		goto out;
	}
	*first = m.marks[order[i]].at;
	rc = bach_reader_range(r, *first - base, m.marks[order[j]].at - base);
	if (rc) {
		errmsg("%s", bach_reader_strerror(r));
		status = bach_exit_status(rc);
		goto out;
	}
	status = EXIT_OK;
out:
	free(order);
	bach_manifest_free(&m);
	return status;
}
