// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "drivers/driver.h"
#include "lib/complete.h"
#include "lib/exit.h"
#include "lib/io/recdeflate.h"
#include "lib/options.h"

enum {
	OPT_CHECK = 256,
	OPT_POLICY,
	OPT_SET,
	OPT_LIST,
	OPT_NO_COMPRESS,
	OPT_NO_MARKERS,
	OPT_NO_URING,
	OPT_SOCKET,
	OPT_LABEL,
};

/* -a COND:VALUE (dumpcap's -a): an autostop setting */
static const char *const autostops[] = { "duration", "records", "segments",
					 NULL };

#define SHORTOPTS "d:o:O:c:a:hV"
static const struct option opts[] = {
	{ "driver", required_argument, NULL, 'd' },
	/* -o is the output for every program of bach (bach gen, decode) */
	{ "output", required_argument, NULL, 'o' },
	{ "option", required_argument, NULL, 'O' },
	{ "config", required_argument, NULL, 'c' },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "set", required_argument, NULL, OPT_SET },
	{ "autostop", required_argument, NULL, 'a' },
	{ "no-compress", no_argument, NULL, OPT_NO_COMPRESS },
	{ "no-gap-markers", no_argument, NULL, OPT_NO_MARKERS },
	{ "no-io-uring", no_argument, NULL, OPT_NO_URING },
	{ "control-socket", required_argument, NULL, OPT_SOCKET },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "check-config", no_argument, NULL, OPT_CHECK },
	{ "list-drivers", no_argument, NULL, OPT_LIST },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void bachd_options_print(FILE *f, bool daemon)
{
	char names[128] = "";
	size_t len = 0;

	for (size_t i = 0; bach_drivers[i] && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len,
					"%s%s", i ? ", " : "",
					bach_drivers[i]->name);
	fprintf(f,
		"  -d, --driver NAME        source: %s\n"
		"  -O, --option KEY=VALUE   a driver option (repeatable; below)\n"
		"  -o, --output DIR         where capture directories are made\n"
		"  -c, --config FILE        INI configuration (see bachd.conf.example)\n"
		"      --policy stall|drop  what a full ring does (default %s)\n"
		"      --set KEY=VALUE      any [bachd] setting of the config file\n"
		"  -a, --autostop COND:N    end the capture cleanly: duration:SECONDS,\n"
		"                           records:N or segments:N (repeatable)\n"
		"      --no-compress        .byu segments instead of .byu.gz\n"
		"      --no-gap-markers     no marker records in the trace at gaps\n"
		"      --no-io-uring        write with pwrite\n"
		"      --control-socket P   the Unix socket bach ctl talks to, or none\n"
		"                           (default: %s)\n"
		"      --label KEY=VALUE    a label for the manifest (label.KEY in [bachd])\n"
		"      --check-config       check the configuration and exit\n"
		"      --list-drivers       the drivers and their options\n"
		"  -V, --version            print the version and exit\n"
		"  -h, --help               this help\n",
		names,
		bachd_settings[bach_opt_find(bachd_settings, "policy")].def,
		daemon ? "where bach ctl looks: bach help ctl"
		       : "capture-PID.sock in bach ctl's directory");
}

void bachd_usage(const char *prog, bool daemon)
{
	char msg[256];

	printf("usage: %s --driver NAME [--option KEY=VALUE]... --output DIR [--config FILE]\n"
	       "\n",
	       prog);
	bachd_options_print(stdout, daemon);
	if (daemon)
		printf("\nSIGTERM or SIGINT: drain, close, exit 0. SIGHUP: start a new segment.\n"
		       "Exit status: 0 clean, 1 records lost to a failed write, 2 usage or\n"
		       "environment error, 3 the disk was full, 4 the source failed.\n");
	printf("\nSettings (KEY = VALUE in [bachd], or --set KEY=VALUE):\n\n");
	if (bach_opts_verify(bachd_settings, msg, sizeof(msg)))
		printf("  BUG: %s\n", msg);
	bach_opts_print(stdout, bachd_settings);
	printf("\nDrivers and their options (--option KEY=VALUE, or KEY = VALUE in\n"
	       "[driver]):\n\n");
	bach_drivers_print(stdout);
}

/* "PROG: MESSAGE" on stderr, on one line whatever the message holds */
__attribute__((format(printf, 2, 3))) static void say(const char *prog,
						      const char *fmt, ...)
{
	char msg[4096], esc[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", prog,
		bach_escape_ctl(esc, sizeof(esc), msg));
}

/* What --check-config promises: the driver's options pass its table. */
static int check_driver_options(const struct bachd_config *c, const char *prog)
{
	const struct bach_driver *drv = bach_driver_find(c->cap.driver);
	size_t n = bach_opt_count(drv->options);
	struct bach_optval *v = calloc(n ? n : 1, sizeof(*v));
	char msg[1024];
	int err;

	if (!v)
		return EXIT_USAGE;
	err = bach_driver_options(drv, c->cap.opts, c->cap.nopts, v, msg,
				  sizeof(msg));
	bach_opts_free(drv->options, v);
	free(v);
	if (!err)
		return 0;
	say(prog, "%s", msg);
	return EXIT_USAGE;
}

/*
 * The configuration files, read before any other option whatever their
 * place on the line, in the order they are given: --config FILE, -c FILE,
 * --config=FILE, -cFILE.
 */
static int load_config_files(struct bachd_config *c, int argc, char **argv,
			     const char *prog)
{
	char msg[2048];

	for (int i = 1; i < argc; i++) {
		const char *file = NULL;

		if ((!strcmp(argv[i], "--config") || !strcmp(argv[i], "-c")) &&
		    i + 1 < argc)
			file = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			file = argv[i] + 9;
		else if (!strncmp(argv[i], "-c", 2) && argv[i][2])
			file = argv[i] + 2;
		if (file && bachd_config_load(c, file, msg, sizeof(msg))) {
			say(prog, "%s", msg);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* -O KEY=VALUE: a driver option, checked once the driver is known */
static int driver_option(struct bachd_config *c, const char *arg,
			 const char *prog)
{
	const char *eq = strchr(arg, '=');
	char *key;
	int err;

	if (!eq || eq == arg) {
		say(prog, "--option: want KEY=VALUE, not '%s'", arg);
		return EXIT_USAGE;
	}
	key = strndup(arg, (size_t)(eq - arg));
	err = key ? capture_config_option(&c->cap, key, eq + 1, NULL, 0)
		  : -ENOMEM;
	free(key);
	if (err) {
		say(prog, "--option %s: %s", arg,
		    err == -E2BIG ? "too many driver options" : strerror(-err));
		return EXIT_USAGE;
	}
	return 0;
}

/* The options that are a setting by another name, and its value. */
static const struct {
	int ch;
	const char *key;
	const char *value; /* NULL: the option's argument */
} aliases[] = {
	{ 'd', "driver", NULL },
	{ 'o', "output", NULL },
	{ OPT_POLICY, "policy", NULL },
	{ OPT_NO_COMPRESS, "compress", "no" },
	{ OPT_NO_MARKERS, "gap_markers", "no" },
	{ OPT_NO_URING, "io_uring", "no" },
	{ OPT_SOCKET, "control_socket", NULL },
};

/*
 * The command line after the configuration files, in order: each setting
 * (an alias, --set, --label, -a) through bachd_config_set(), as a line of
 * the file would be.
 */
static int parse_options(struct bachd_config *c, struct bachd_args *a, int argc,
			 char **argv, const char *prog)
{
	char msg[2048], key[80];
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, SHORTOPTS, opts, NULL)) != -1) {
		const char *k = NULL, *v = optarg, *eq = NULL;
		size_t i;

		for (i = 0; i < sizeof(aliases) / sizeof(*aliases); i++)
			if (aliases[i].ch == ch) {
				k = aliases[i].key;
				v = aliases[i].value ? aliases[i].value
						     : optarg;
			}
		switch (ch) {
		case 'o':
			/* -o was --option before 0.2: say so, not "no such
			 * directory" */
			if (strchr(optarg, '=') && !strchr(optarg, '/') &&
			    access(optarg, F_OK) < 0) {
				say(prog,
				    "-o %s: -o is --output DIR; a driver option is -O KEY=VALUE",
				    optarg);
				return EXIT_USAGE;
			}
			break;
		case 'd':
		case OPT_POLICY:
		case OPT_NO_COMPRESS:
		case OPT_NO_MARKERS:
		case OPT_NO_URING:
		case OPT_SOCKET:
			break; /* aliases[] */
		case 'O':
			if (driver_option(c, optarg, prog))
				return EXIT_USAGE;
			break;
		case 'c':
			break; /* load_config_files() */
		case OPT_SET:
			eq = strchr(optarg, '=');
			if (!eq || eq - optarg >= 64) {
				say(prog, "--set: want KEY=VALUE, not '%s'",
				    optarg);
				return EXIT_USAGE;
			}
			snprintf(key, sizeof(key), "%.*s", (int)(eq - optarg),
				 optarg);
			k = key;
			v = eq + 1;
			break;
		case OPT_LABEL:
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg || eq - optarg >= 64) {
				say(prog, "--label: want KEY=VALUE, not '%s'",
				    optarg);
				return EXIT_USAGE;
			}
			snprintf(key, sizeof(key), "label.%.*s",
				 (int)(eq - optarg), optarg);
			k = key;
			v = eq + 1;
			break;
		case 'a':
			eq = strchr(optarg, ':');
			for (i = 0; eq && autostops[i]; i++)
				if ((size_t)(eq - optarg) ==
					    strlen(autostops[i]) &&
				    !strncmp(optarg, autostops[i],
					     (size_t)(eq - optarg)))
					break;
			if (!eq || !autostops[i]) {
				say(prog,
				    "--autostop: want duration:SECONDS, records:N or segments:N, not '%s'",
				    optarg);
				return EXIT_USAGE;
			}
			k = autostops[i];
			v = eq + 1;
			break;
		case OPT_CHECK:
			a->check_config = true;
			break;
		case OPT_LIST:
			bach_drivers_print(stdout);
			a->list_drivers = true;
			return 0;
		case 'h':
			a->help = true;
			return 0;
		case 'V':
			a->version = true;
			return 0;
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog);
			return EXIT_USAGE;
		}
		if (k && bachd_config_set(c, k, v, msg, sizeof(msg))) {
			say(prog, "%s", msg);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		say(prog, "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * What a start needs of the file system, for --check-config: the output
 * directory, and the metrics file's, exist and bachd may make files there.
 */
static int check_dir(const char *what, const char *path, const char *dir,
		     const char *prog)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		say(prog, "%s %s: %s", what, path, strerror(errno));
		return EXIT_USAGE;
	}
	if (!S_ISDIR(st.st_mode)) {
		say(prog, "%s %s: %s%snot a directory", what, path,
		    dir == path ? "" : dir, dir == path ? "" : " is ");
		return EXIT_USAGE;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		say(prog, "%s %s: cannot write in %s: %s", what, path, dir,
		    strerror(errno));
		return EXIT_USAGE;
	}
	return 0;
}

static int check_dirs(const struct bachd_config *c, const char *prog)
{
	const char *m = c->cap.metrics_file, *slash = strrchr(m, '/');
	char dir[sizeof(c->cap.metrics_file)];
	int ret;

	ret = check_dir("output directory", c->cap.output, c->cap.output, prog);
	if (ret || !m[0])
		return ret;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == m)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - m), m);
	return check_dir("metrics_file", m, dir, prog);
}

/* The configuration as a whole: what no single setting can say. */
static int check_config(struct bachd_config *c, const char *prog)
{
	const char *env = getenv("BACHD_INSTANCE");
	char msg[512];

	if (!c->cap.driver[0] || !c->cap.output[0]) {
		say(prog, "%s (or %s in the configuration file)",
		    !c->cap.driver[0] ? "no source: --driver NAME"
				      : "no place to write: --output DIR",
		    !c->cap.driver[0] ? "driver =" : "output =");
		fprintf(stderr, "Try '%s --help'.\n", prog);
		return EXIT_USAGE;
	}
	/* level 0: the compressor's own, which the manifest then shows */
	if (!c->cap.level)
		c->cap.level = c->cap.compressor == BACH_DEFLATE_ZSTD ? 3 : 1;
	if (c->cap.compressor == BACH_DEFLATE_LIBDEFLATE && c->cap.level > 12) {
		say(prog, "level: libdeflate takes 1 to 12, not %d",
		    c->cap.level);
		return EXIT_USAGE;
	}
	if (c->cap.compressor == BACH_DEFLATE_RECORD &&
	    c->cap.level > BACH_RECDEFLATE_MAX_LEVEL) {
		say(prog, "level: the record encoder takes %d to %d, not %d",
		    BACH_RECDEFLATE_MIN_LEVEL, BACH_RECDEFLATE_MAX_LEVEL,
		    c->cap.level);
		return EXIT_USAGE;
	}
	if (!bach_driver_find(c->cap.driver)) {
		say(prog, "no driver '%s' (--list-drivers)", c->cap.driver);
		return EXIT_USAGE;
	}
	/* bachd@NAME.service's NAME, unless instance_name names another */
	if (!c->instance_name[0] && env &&
	    bachd_config_set(c, "instance_name", env, msg, sizeof(msg))) {
		say(prog, "BACHD_INSTANCE (for instance_name): %s", msg);
		return EXIT_USAGE;
	}
	for (const char *p = c->metrics_labels; *p; p += *p == ',') {
		size_t len = strcspn(p, ",");

		if (!bachd_config_label(c, p, len)) {
			say(prog,
			    "metrics_labels: no label.%.*s (or --label %.*s=VALUE) to copy",
			    (int)len, p, (int)len, p);
			return EXIT_USAGE;
		}
		p += len;
	}
	return check_driver_options(c, prog);
}

int bachd_parse_args(struct bachd_config *c, struct bachd_args *a, int argc,
		     char **argv, const char *prog)
{
	int ret;

	memset(a, 0, sizeof(*a));
	ret = load_config_files(c, argc, argv, prog);
	if (!ret)
		ret = parse_options(c, a, argc, argv, prog);
	if (ret || a->help || a->version || a->list_drivers)
		return ret;
	ret = check_config(c, prog);
	if (!ret && a->check_config)
		ret = check_dirs(c, prog);
	return ret;
}

/* ---- completion (lib/complete.h) ---------------------------------------- */

const struct option *bachd_options(const char **shortopts)
{
	*shortopts = SHORTOPTS;
	return opts;
}

static void drivers(int n, char **w, const char *cur)
{
	(void)n, (void)w;
	for (size_t i = 0; bach_drivers[i]; i++)
		complete_word(bach_drivers[i]->name, cur);
}

static void keys(const struct bach_optdesc *d, const char *cur)
{
	char buf[96];

	for (; d && d->key; d++) {
		snprintf(buf, sizeof(buf), "%s=", d->key);
		complete_word(buf, cur);
	}
}

/* -O: the options of the driver named before (-d, --driver), else fake's */
static void driver_keys(int n, char **w, const char *cur)
{
	const char *name = "fake";
	const struct bach_driver *drv;

	for (int i = 0; i + 1 < n; i++) {
		if (!strcmp(w[i], "-d") || !strcmp(w[i], "--driver"))
			name = w[i + 1];
		else if (!strncmp(w[i], "--driver=", 9))
			name = w[i] + 9;
	}
	drv = bach_driver_find(name);
	if (drv)
		keys(drv->options, cur);
}

static void settings(int n, char **w, const char *cur)
{
	(void)n, (void)w;
	keys(bachd_settings, cur);
}

/* the names of an ENUM setting, such as --policy's */
static void setting_names(const char *key, const char *cur)
{
	int i = bach_opt_find(bachd_settings, key);

	for (size_t k = 0;
	     i >= 0 && bachd_settings[i].names && bachd_settings[i].names[k];
	     k++)
		complete_word(bachd_settings[i].names[k], cur);
}

static void policies(int n, char **w, const char *cur)
{
	(void)n, (void)w;
	setting_names("policy", cur);
}

static void autostop(int n, char **w, const char *cur)
{
	char buf[32];

	(void)n, (void)w;
	for (size_t i = 0; autostops[i]; i++) {
		snprintf(buf, sizeof(buf), "%s:", autostops[i]);
		complete_word(buf, cur);
	}
}

const struct complete_values bachd_complete_values[] = {
	{ .opt = "driver", .list = drivers },
	{ .opt = "option", .list = driver_keys, .nospace = true },
	{ .opt = "set", .list = settings, .nospace = true },
	{ .opt = "policy", .list = policies },
	{ .opt = "autostop", .list = autostop, .nospace = true },
	{ .opt = "output", .dirs = true },
	{ .opt = "control-socket", .none = true },
	{ .opt = "label", .none = true },
	{ .opt = "", .none = true }, /* no operands */
	{ NULL },
};
