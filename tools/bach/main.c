// SPDX-License-Identifier: MIT
/* `bach CMD ...`: dispatch, help, and helpers shared by the subcommands. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach.h"
#include "bach/options.h"
#include "bach/outfile.h"

static const struct bach_cmd *const cmds[] = {
	&cmd_dump,   &cmd_stat,	   &cmd_verify, &cmd_convert, &cmd_diff,
	&cmd_decode, &cmd_capture, &cmd_ctl,	&cmd_recover, &cmd_gen,
	&cmd_index,  &cmd_ls,	   &cmd_sim,	&cmd_mrc,     &cmd_plot,
	&cmd_report, NULL,
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
	if (!c->help) { /* a command another binary runs (exec_helper.c) */
		char *av[] = { (char *)c->name, (char *)"--help", NULL };

		return c->run(2, av);
	}
	printf("bach %s: %s\n\n%s", c->name, c->summary, c->help);
	return EXIT_OK;
}

bool parse_u64(const char *s, uint64_t *v)
{
	return !bach_parse_u64(s, v); /* the options' reader (bach/options.h) */
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

static void die_by_signal(int sig)
{
	/* SA_RESETHAND made the action the default: the signal kills, once
	 * this handler returns */
	bach_outfile_remove_temps();
	raise(sig);
}

void catch_signals(void)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGTERM };
	struct sigaction sa = { .sa_handler = die_by_signal,
				.sa_flags = SA_RESETHAND };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++) {
		struct sigaction old;

		/* an ignored signal (nohup, a background job) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* What PATH names ("-": the standard stream fd); false when nothing. */
int stdin_once(char *const *in, int n)
{
	int seen = 0;

	for (int i = 0; i < n; i++)
		if (!strcmp(in[i], "-") && seen++)
			return usage_error("-: standard input given twice: it "
					   "can be read only once");
	return EXIT_OK;
}

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
			errmsg("%s: the same file as the input %s: writing it "
			       "would destroy the input",
			       strcmp(out, "-") ? out : "standard output",
			       strcmp(in[i], "-") ? in[i] : "(standard input)");
			return EXIT_USAGE;
		}
		if (have_dir && S_ISDIR(st.st_mode) && same_id(&dir, &st)) {
			errmsg("%s: inside the capture directory %s being "
			       "read: "
			       "write it elsewhere",
			       out, in[i]);
			return EXIT_USAGE;
		}
	}
	return EXIT_OK;
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

int read_traces(int argc, char **argv,
		void (*add)(void *ctx, const uint8_t *recs, size_t n),
		void *ctx, uint64_t *records)
{
	struct bach_reader *r;
	int status = open_traces(&r, argc, argv);
	ssize_t n = 0;

	while (!status) {
		const uint8_t *p;

		n = bach_reader_read(r, &p);
		if (n <= 0)
			break;
		add(ctx, p, (size_t)n);
	}
	if (!status && n < 0) {
		errmsg("%s", bach_reader_strerror(r));
		status = bach_exit_status((int)n);
	}
	if (records)
		*records = r ? bach_reader_records(r) : 0;
	bach_reader_free(r);
	return status;
}

bool parse_range(const char *s, uint64_t *start, uint64_t *end)
{
	const char *colon = strchr(s, ':');
	char first[32];
	size_t len;

	if (!colon)
		return false;
	len = (size_t)(colon - s);
	if (len >= sizeof(first))
		return false;
	memcpy(first, s, len);
	first[len] = 0;
	*start = 0;
	*end = UINT64_MAX;
	if (len && !parse_u64(first, start))
		return false;
	if (colon[1] && !parse_u64(colon + 1, end))
		return false;
	return *end >= *start;
}

int range_arg(const char *s, uint64_t *start, uint64_t *end)
{
	if (parse_range(s, start, end))
		return EXIT_OK;
	return usage_error("--range: not START:END with START <= END: '%s'", s);
}

int select_records(struct bach_reader *r, int argc, char **argv, const char *ba,
		   const char *bb, uint64_t *start, uint64_t end)
{
	if (ba && (*start || end != UINT64_MAX))
		return usage_error("--range and --between: one or the other");
	if (ba)
		return between_window(r, argc, argv, ba, bb, start);
	return apply_range(r, *start, end);
}

int apply_range(struct bach_reader *r, uint64_t start, uint64_t end)
{
	int err;

	if (!start && end == UINT64_MAX)
		return EXIT_OK;
	err = bach_reader_range(r, start, end);
	if (err) {
		errmsg("%s", bach_reader_strerror(r));
		return bach_exit_status(err);
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
	fprintf(f, "\n  -V, --version  print bach's version\n");
	fprintf(f, "\nTRACE is a .byu or .byu.gz file, - for standard input, "
		   "or a\n"
		   "capture directory (its segments in order, as one trace).\n"
		   "Exit status: 0 success, 1 the data is bad, 2 usage or "
		   "environment error.\n");
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
			return close_stdout(EXIT_OK);
		}
		c = find(argv[2]);
		if (!c) {
			fprintf(stderr, "bach: no command '%s'\n", argv[2]);
			return EXIT_USAGE;
		}
		return close_stdout(print_help(c));
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("bach %s\n", BACH_VERSION);
		return close_stdout(EXIT_OK);
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
			return close_stdout(print_help(c));
	}
	return close_stdout(c->run(argc - 1, argv + 1));
}
