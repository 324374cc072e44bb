// SPDX-License-Identifier: MIT
/*
 * `bach CMD ...`: the table of commands, `bach help` and --version, and
 * the dispatch to a command's run(), whose output must reach standard
 * output. How to add a command: bach.h. What the commands share is in
 * files of its own: msg.c, args.c, traces.c, range.c, between.c,
 * iocheck.c, obuf.c, signals.c, timecol.c, source.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static const struct bach_cmd *const cmds[] = {
	&cmd_dump,   &cmd_stat,	   &cmd_verify, &cmd_convert, &cmd_diff,
	&cmd_decode, &cmd_capture, &cmd_ctl,	&cmd_recover, &cmd_gen,
	&cmd_index,  &cmd_ls,	   &cmd_marks,	&cmd_sim,     &cmd_mrc,
	&cmd_plot,   &cmd_report,  &cmd_plan,	&cmd_merge,   NULL,
};

int print_help(const struct bach_cmd *c)
{
	if (!c->help) { /* a command another binary runs (exec_helper.c) */
		char *av[] = { (char *)c->name, (char *)"--help", NULL };

		return c->run(2, av);
	}
	printf("bach %s: %s\n\n%s", c->name, c->summary, c->help);
	return EXIT_OK;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bach COMMAND [ARGS]\n\n"
		   "Complete address traces of Intel Pentium machines.\n\n"
		   "Commands:\n");
	for (int i = 0; cmds[i]; i++)
		fprintf(f, "  %-9s %s\n", cmds[i]->name, cmds[i]->summary);
	fprintf(f, "  %-9s %s\n", "help", "help CMD: a command's options");
	fprintf(f, "\n  -V, --version  print bach's version\n");
	fprintf(f,
		"\nTRACE is a .byu or .byu.gz file, - for standard input, or a\n"
		"capture directory (its segments in order, as one trace).\n"
		"Exit status: 0 success, 1 the data is bad, 2 usage or environment error.\n");
}

/*
 * Whatever a command printed must have reached standard output: a full
 * disk or a closed pipe is an error, not success (status 2 unless the
 * command failed worse).
 */
static int close_stdout(int status)
{
	bool bad;
	int err;

	errno = 0;
	bad = fflush(stdout) != 0 || ferror(stdout);
	err = errno;
	if (fclose(stdout) != 0 && !bad) {
		bad = true;
		err = errno;
	}
	if (!bad)
		return status;
	fprintf(stderr, "%s: standard output: %s\n", prog_cmd,
		err ? strerror(err) : "write error");
	return status > EXIT_USAGE ? status : EXIT_USAGE;
}

const struct bach_cmd *cmd_find(const char *name)
{
	for (int i = 0; cmds[i]; i++)
		if (!strcmp(cmds[i]->name, name))
			return cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static char name[64];
	const struct bach_cmd *c;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		if (argc < 3) {
			usage(stdout);
			return close_stdout(EXIT_OK);
		}
		c = cmd_find(argv[2]);
		if (!c) {
			fprintf(stderr, "bach: no command '%s'\n", argv[2]);
			return EXIT_USAGE;
		}
		return close_stdout(print_help(c));
	}
	if (!strcmp(argv[1], "__complete"))
		return close_stdout(complete_main(cmds, argc, argv));
	if (!strcmp(argv[1], "__options") && argc == 3 && cmd_find(argv[2]))
		return close_stdout(options_main(cmd_find(argv[2])));
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("bach %s\n", BACH_VERSION);
		return close_stdout(EXIT_OK);
	}
	c = cmd_find(argv[1]);
	if (!c) {
		fprintf(stderr, "bach: no command '%s'\n", argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	snprintf(name, sizeof(name), "bach %s", c->name);
	prog_cmd = name;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return close_stdout(print_help(c));
	}
	return close_stdout(c->run(argc - 1, argv + 1));
}
