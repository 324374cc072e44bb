// SPDX-License-Identifier: MIT
/* `bach CMD ...`: dispatch, help, and helpers shared by the subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach.h"

static const struct bach_cmd *const cmds[] = {
	&cmd_dump,    &cmd_stat, &cmd_verify, &cmd_convert,
	&cmd_decode,  &cmd_capture, &cmd_ctl,	 &cmd_recover, &cmd_gen,
	&cmd_sim,     NULL,
};

const char *prog_cmd = "bach";

void errmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog_cmd);
	return EXIT_USAGE;
}

int print_help(const struct bach_cmd *c)
{
	printf("bach %s: %s\n\n%s", c->name, c->summary, c->help);
	return EXIT_OK;
}

bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

int obuf_init(struct obuf *o, int fd, size_t cap)
{
	o->fd = fd;
	o->len = 0;
	o->cap = cap;
	o->err = 0;
	o->buf = malloc(cap);
	return o->buf ? 0 : -ENOMEM;
}

int obuf_flush(struct obuf *o)
{
	size_t off = 0;

	while (off < o->len && !o->err) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			o->err = -errno;
		else
			off += (size_t)n;
	}
	o->len = 0;
	return o->err;
}

void obuf_free(struct obuf *o)
{
	free(o->buf);
	o->buf = NULL;
}

int open_traces(struct bach_reader **rp, int argc, char **argv)
{
	struct bach_reader *r = bach_reader_new();

	*rp = r;
	if (!r) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	if (argc == 0)
		return usage_error("no TRACE given");
	for (int i = 0; i < argc; i++) {
		int err = bach_reader_add(r, argv[i]);

		if (err) {
			errmsg("%s", bach_reader_strerror(r));
			return bach_exit_status(err);
		}
	}
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
	fprintf(f,
		"\nTRACE is a .byu or .byu.gz file, - for standard input, or a\n"
		"capture directory (its segments in order, as one trace).\n"
		"Exit status: 0 success, 1 the data is bad, 2 usage or environment error.\n");
}

static const struct bach_cmd *find(const char *name)
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
			return EXIT_OK;
		}
		c = find(argv[2]);
		if (!c) {
			fprintf(stderr, "bach: no command '%s'\n", argv[2]);
			return EXIT_USAGE;
		}
		return print_help(c);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("bach %s\n", BACH_VERSION);
		return EXIT_OK;
	}
	c = find(argv[1]);
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
			return print_help(c);
	}
	return c->run(argc - 1, argv + 1);
}
