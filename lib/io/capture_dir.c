// SPDX-License-Identifier: MIT
/*
 * A capture directory's segments (include/bach/trace.h): the closed
 * seg-*.byu and seg-*.byu.gz in name order, which is capture order, and
 * the *.part files beside them counted, with the message that says why a
 * directory yields none. bach_reader_add() reads a directory through
 * bach_capture_open() (lib/io/reader.c); the timing sidecars (lib/io/timing.c),
 * replay, bach index and bach verify list one the same way.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach/trace.h"

static bool is_segment_name(const char *n)
{
	size_t len = strlen(n);

	if (strncmp(n, "seg-", 4) != 0)
		return false;
	return (len > 8 && !strcmp(n + len - 4, ".byu")) ||
	       (len > 11 && !strcmp(n + len - 7, ".byu.gz")) ||
	       (len > 12 && !strcmp(n + len - 8, ".byu.zst"));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

ssize_t bach_capture_segments(const char *dir, char ***paths, size_t *nparts)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0, parts = 0;
	int err = 0;

	*paths = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".part") &&
		    !strncmp(de->d_name, "seg-", 4))
			parts++;
		if (!is_segment_name(de->d_name))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		if (asprintf(&v[n], "%s/%s", dir, de->d_name) < 0) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (err) {
		while (n)
			free(v[--n]);
		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*paths = v;
	if (nparts)
		*nparts = parts;
	return (ssize_t)n;
}

ssize_t bach_capture_open(const char *dir, char ***paths, size_t *nparts,
			  char *msg, size_t len)
{
	char man[PATH_MAX];
	size_t parts = 0;
	ssize_t n;

	n = bach_capture_segments(dir, paths, &parts);
	if (nparts)
		*nparts = parts;
	if (n < 0) {
		snprintf(msg, len, "%s: cannot list capture directory: %s", dir,
			 strerror((int)-n));
		return n;
	}
	if (n > 0)
		return n;
	free(*paths);
	*paths = NULL;
	snprintf(man, sizeof(man), "%s/manifest.jsonl", dir);
	if (!parts && access(man, F_OK) < 0) {
		snprintf(
			msg, len,
			"%s: not a capture directory (no manifest.jsonl, no seg-* segments)",
			dir);
		return -EISDIR;
	}
	if (!parts)
		return 0; /* a capture that holds no records: an empty trace */
	snprintf(
		msg, len,
		"%s: no closed segment: %zu unfinished (*.part), being written or left by a crash (bach recover closes it)",
		dir, parts);
	return -BACH_EDATA;
}
