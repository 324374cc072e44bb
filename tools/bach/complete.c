// SPDX-License-Identifier: MIT
/*
 * `bach __complete WORD...`: what tools/completion/bach.bash offers for the
 * last WORD, from the tables the commands parse with (lib/complete.h):
 * the command table (main.c), each command's getopt table, caught at its
 * first getopt_long() call (cmd_getopt_long(), below), the values of its
 * struct bach_cmd, and the formats of bach_formats[] for --from, --to and
 * --as. `bach __options CMD` prints a command's options, one per line
 * (tests/cli/completion.sh holds the completion to them).
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/formats/formats.h"

#undef getopt_long

/* Set while a command is run to have its getopt table caught. */
static bool catching;
static jmp_buf caught;
static const char *caught_short;
static const struct option *caught_long;

int cmd_getopt_long(int argc, char *const *argv, const char *shortopts,
		    const struct option *longopts, int *longindex)
{
	if (catching) {
		caught_short = shortopts;
		caught_long = longopts;
		longjmp(caught, 1);
	}
	return getopt_long(argc, argv, shortopts, longopts, longindex);
}

/* c's getopt table, through a run that stops at its first getopt_long() */
static void table(const struct bach_cmd *c, const char **shortopts,
		  const struct option **longopts)
{
	char *av[] = { (char *)c->name, NULL };

	if (c->options) { /* a table the command does not parse itself */
		*longopts = c->options(shortopts);
		return;
	}
	caught_short = "";
	caught_long = NULL;
	catching = true;
	if (!setjmp(caught)) {
		FILE *err = freopen("/dev/null", "w", stderr);

		(void)err; /* a command that parses no options says so */
		c->run(1, av);
	}
	catching = false;
	*shortopts = caught_short;
	*longopts = caught_long;
}

void cmd_options(const struct bach_cmd *c, const char **shortopts,
		 const struct option **longopts)
{
	int fd = dup(STDERR_FILENO);

	table(c, shortopts, longopts);
	fflush(stderr); /* table() sent it to /dev/null */
	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
}

static void formats(enum bach_format_dir dir, const char *cur)
{
	for (size_t i = 0; bach_formats[i]; i++)
		if (bach_format_can(bach_formats[i], dir))
			complete_word(bach_formats[i]->name, cur);
}

static void formats_in(int n, char **w, const char *cur)
{
	(void)n, (void)w;
	formats(BACH_FORMAT_IN, cur);
}

static void formats_out(int n, char **w, const char *cur)
{
	(void)n, (void)w;
	formats(BACH_FORMAT_OUT, cur);
}

static void formats_both(int n, char **w, const char *cur)
{
	(void)n, (void)w;
	formats(BACH_FORMAT_BOTH, cur);
}

/* Every command's: the formats of bach convert (source.c) */
static const struct complete_values common[] = {
	{ .opt = "from", .list = formats_in },
	{ .opt = "from-a", .list = formats_in },
	{ .opt = "from-b", .list = formats_in },
	{ .opt = "to", .list = formats_out },
	{ .opt = "as", .list = formats_both },
};

bool cmd_splits(const struct bach_cmd *c)
{
	const struct option *lo;
	const char *so;
	bool range = false, partial = false;

	if (!c->help)
		return false;
	cmd_options(c, &so, &lo);
	for (; lo && lo->name; lo++) {
		range |= !strcmp(lo->name, "range");
		partial |= !strcmp(lo->name, "partial");
	}
	return range && partial;
}

static int complete_cmd(const struct bach_cmd *const *cmds,
			const struct bach_cmd *c, int n, char **words)
{
	struct complete_values v[64];
	const struct option *lo;
	const char *so;
	size_t k = 0;

	/* plan --slurm DIR -- CMD OPTION...: CMD, one that takes --partial,
	 * then its own options */
	for (int i = 0; c == &cmd_plan && i < n - 1; i++) {
		if (strcmp(words[i], "--"))
			continue;
		if (i == n - 2) {
			for (int j = 0; cmds[j]; j++)
				if (cmd_splits(cmds[j]))
					complete_word(cmds[j]->name,
						      words[n - 1]);
			return EXIT_OK;
		}
		c = cmd_find(words[i + 1]);
		if (!c || !cmd_splits(c))
			return EXIT_OK;
		return complete_cmd(cmds, c, n - i - 2, words + i + 2);
	}
	table(c, &so, &lo);
	for (size_t i = 0; c->values && c->values[i].opt && k < 32; i++)
		v[k++] = c->values[i];
	for (size_t i = 0; i < sizeof(common) / sizeof(*common); i++)
		v[k++] = common[i];
	v[k] = (struct complete_values){ 0 };
	complete_getopt(so, lo, v, n, words);
	return EXIT_OK;
}

int complete_main(const struct bach_cmd *const *cmds, int argc, char **argv)
{
	const char *cur = argc > 2 ? argv[argc - 1] : "";
	const struct bach_cmd *c = NULL;

	if (argc <= 3) {
		for (int i = 0; cmds[i]; i++)
			complete_word(cmds[i]->name, cur);
		complete_word("help", cur);
		complete_word("--help", cur);
		complete_word("--version", cur);
		return EXIT_OK;
	}
	if (!strcmp(argv[2], "help")) {
		for (int i = 0; argc == 4 && cmds[i]; i++)
			complete_word(cmds[i]->name, cur);
		return EXIT_OK;
	}
	for (int i = 0; cmds[i]; i++)
		if (!strcmp(cmds[i]->name, argv[2]))
			c = cmds[i];
	if (!c)
		return EXIT_OK;
	if (!c->help) { /* in another binary: its own __complete */
		return c->run(argc - 1, argv + 1);
	}
	return complete_cmd(cmds, c, argc - 3, argv + 3);
}

int options_main(const struct bach_cmd *c)
{
	const struct option *lo;
	const char *so;

	if (!c->help) {
		char *av[] = { (char *)"__options", (char *)c->name, NULL };

		return c->run(2, av);
	}
	table(c, &so, &lo);
	complete_getopt(so, lo, NULL, 1, (char *[]){ (char *)"-" });
	return EXIT_OK;
}
