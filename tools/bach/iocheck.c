// SPDX-License-Identifier: MIT
/*
 * Refusals of file arguments that would lose data, before anything is
 * read or written: an output that is one of the inputs, or lies inside a
 * capture directory being read (check_output), and standard input given
 * as more than one input (stdin_once).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

int stdin_once(char *const *in, int n)
{
	int seen = 0;

	for (int i = 0; i < n; i++)
		if (!strcmp(in[i], "-") && seen++)
			return usage_error(
				"-: standard input given twice: it can be read only once");
	return EXIT_OK;
}

/* What PATH names ("-": the standard stream fd); false when nothing. */
static bool file_id(const char *path, int fd, struct stat *st)
{
	return !strcmp(path, "-") ? fstat(fd, st) == 0 : stat(path, st) == 0;
}

static bool same_id(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int check_output(const char *out, const char *const *in, size_t nin)
{
	struct stat o, dir, st;
	bool have_out = file_id(out, STDOUT_FILENO, &o) && S_ISREG(o.st_mode);
	bool have_dir = false;

	if (strcmp(out, "-")) {
		const char *slash = strrchr(out, '/');
		char *parent = slash ? strndup(out, (size_t)(slash - out) + 1)
				     : strdup(".");

		have_dir = parent && stat(parent, &dir) == 0;
		free(parent);
	}
	for (size_t i = 0; i < nin; i++) {
		if (!in[i] || !file_id(in[i], STDIN_FILENO, &st))
			continue;
		if (have_out && S_ISREG(st.st_mode) && same_id(&o, &st)) {
			errmsg("%s: the same file as the input %s: writing it would destroy the input",
			       strcmp(out, "-") ? out : "standard output",
			       strcmp(in[i], "-") ? in[i] : "(standard input)");
			return EXIT_USAGE;
		}
		if (have_dir && S_ISDIR(st.st_mode) && same_id(&dir, &st)) {
			errmsg("%s: inside the capture directory %s being read: write it elsewhere",
			       out, in[i]);
			return EXIT_USAGE;
		}
	}
	return EXIT_OK;
}
