// SPDX-License-Identifier: MIT
/* bach ctl: talk to a running bachd over its control socket. */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "ctl.h"
#include "lib/options.h"

/* bachd@NAME.service's (systemd/bachd@.service) */
#define INSTANCE_SOCKET "/run/bach-%s/bachd.sock"
#define DEFAULT_TIMEOUT 5.0 /* seconds for the whole exchange */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Connect, send and read the reply to its end within timeout seconds. */
static ssize_t exchange(const char *path, const char *req, size_t len,
			char *reply, size_t cap, double timeout)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = (time_t)timeout };
	double end = now() + timeout;
	size_t n = 0;
	ssize_t got;
	int fd;

	tv.tv_usec = (suseconds_t)((timeout - (double)tv.tv_sec) * 1e6);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a listener that never accepts blocks connect() and send() */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len)
		goto fail;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = end - now();
		int r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = r ? errno : ETIMEDOUT;
			goto fail;
		}
		got = recv(fd, reply + n, cap - 1 - n, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto fail;
		n += (size_t)got;
		if (!got || n == cap - 1)
			break;
	}
	close(fd);
	reply[n] = 0;
	return (ssize_t)n;
fail:
	got = -errno;
	close(fd);
	return got;
}

static uint64_t num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static const char *str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

/* 3d 04h 05m 06s, leading zero units left out */
static const char *span(char *buf, size_t cap, double secs)
{
	unsigned long long s = secs > 0 ? (unsigned long long)secs : 0;

	if (s >= 86400)
		snprintf(buf, cap, "%llud %02lluh %02llum %02llus", s / 86400,
			 s / 3600 % 24, s / 60 % 60, s % 60);
	else if (s >= 3600)
		snprintf(buf, cap, "%lluh %02llum %02llus", s / 3600,
			 s / 60 % 60, s % 60);
	else if (s >= 60)
		snprintf(buf, cap, "%llum %02llus", s / 60, s % 60);
	else
		snprintf(buf, cap, "%.1fs", secs > 0 ? secs : 0.0);
	return buf;
}

/* The status reply, for a person. Returns -1 when it is not one. */
static int print_status(const char *reply)
{
	json_t *r = json_loads(reply, 0, NULL), *d, *st, *lb, *b;
	bool capturing;
	char t1[48], t2[48];
	const char *sep = "";

	if (!r)
		return -1;
	d = json_object_get(r, "bachd");
	st = json_object_get(r, "status");
	capturing = json_is_true(json_object_get(r, "capturing"));
	if (json_is_object(d))
		printf("bachd %s (pid %llu), up %s since %s\n",
		       str(d, "version"), (unsigned long long)num(d, "pid"),
		       span(t1, sizeof(t1),
			    json_number_value(
				    json_object_get(d, "uptime_seconds"))),
		       str(d, "start_time"));
	if (!json_is_object(st) || !str(st, "start_time")[0]) {
		printf("idle: no capture yet (bach ctl start)\n");
		json_decref(r);
		return 0;
	}
	if (capturing)
		printf("capturing from %s", str(st, "driver"));
	else
		printf("idle (bach ctl start); the last capture was from %s",
		       str(st, "driver"));
	if (str(st, "gateware")[0])
		printf(" (gateware %s)", str(st, "gateware"));
	printf("\n  capture   %s\n", str(st, "capture"));
	printf("  started   %s, %s %s\n", str(st, "start_time"),
	       capturing ? "running for" : "ran for",
	       span(t2, sizeof(t2),
		    json_number_value(json_object_get(st, "uptime_seconds"))));
	printf("  records   %llu produced, %llu written, %llu lost, %llu in flight\n",
	       (unsigned long long)num(st, "produced"),
	       (unsigned long long)num(st, "written"),
	       (unsigned long long)num(st, "lost"),
	       (unsigned long long)num(st, "in_flight"));
	lb = json_object_get(st, "lost_by");
	if (num(st, "lost") && json_is_object(lb)) {
		const char *k;
		json_t *v;

		printf("  lost by  ");
		json_object_foreach(lb, k, v)
		{
			if (json_integer_value(v)) {
				printf("%s %s %llu", sep, k,
				       (unsigned long long)json_integer_value(
					       v));
				sep = ",";
			}
		}
		printf("\n");
	}
	printf("  segments  %llu closed%s%s, %.1f MB written, %llu gap markers\n",
	       (unsigned long long)num(st, "segments"),
	       capturing ? ", open " : "", capturing ? str(st, "segment") : "",
	       (double)num(st, "bytes") / 1e6,
	       (unsigned long long)num(st, "gap_markers"));
	printf("  ring      %llu of %llu blocks used (%llu%%)\n",
	       (unsigned long long)num(st, "ring_used"),
	       (unsigned long long)num(st, "ring_blocks"),
	       (unsigned long long)(num(st, "ring_blocks")
					    ? num(st, "ring_used") * 100 /
						      num(st, "ring_blocks")
					    : 0));
	printf("  stalls    %llu, %.3f s held; the board held the CPU %llu times\n",
	       (unsigned long long)num(st, "stalls"),
	       (double)num(st, "stall_ns") / 1e9,
	       (unsigned long long)num(st, "board_stalls"));
	b = json_object_get(st, "board");
	if (json_is_object(b))
		printf("  board     FIFO %llu of %llu records, %llu sampled, clock %llu Hz, %llu cycles off the bus\n",
		       (unsigned long long)num(b, "fifo_fill"),
		       (unsigned long long)num(b, "fifo_size"),
		       (unsigned long long)num(b, "records"),
		       (unsigned long long)num(b, "clock_hz"),
		       (unsigned long long)num(b, "off_bus"));
	b = json_object_get(st, "decode");
	if (json_is_object(b))
		printf("  decoded   %llu bus clocks, %llu cycles, %llu records; %llu cycles off the bus, %llu back-offs\n",
		       (unsigned long long)num(b, "clocks"),
		       (unsigned long long)num(b, "cycles"),
		       (unsigned long long)num(b, "records"),
		       (unsigned long long)num(b, "off_bus"),
		       (unsigned long long)num(b, "backoffs"));
	if (num(st, "corrupt_frames"))
		printf("  corrupt   %llu frame%s rejected\n",
		       (unsigned long long)num(st, "corrupt_frames"),
		       bach_s(num(st, "corrupt_frames")));
	if (json_is_true(json_object_get(st, "writer_blocked")))
		printf("  WRITER BLOCKED: a segment write has been pending for more than 2 s\n");
	if (json_is_true(json_object_get(st, "waiting_for_disk")))
		printf("  WAITING FOR DISK: free space is below min_free; records are being lost (one disk gap)\n");
	if (num(st, "retention_over_bytes") ||
	    json_is_true(json_object_get(st, "retention_kept_newest")))
		printf("  retention %.1f MB over keep_bytes%s\n",
		       (double)num(st, "retention_over_bytes") / 1e6,
		       json_is_true(
			       json_object_get(st, "retention_kept_newest"))
			       ? "; the newest closed segment is kept against a limit"
			       : "");
	json_decref(r);
	return 0;
}

/* The commands (the completion's too); mark takes TEXT, the others nothing */
static const char *const verbs[] = { "status", "start", "stop",
				     "rotate", "mark",	NULL };

/*
 * NAME of bachd@NAME: one path component of /run/bach-NAME (no '/', not
 * "." or ".."), and no control character (C0, DEL or C1), which would
 * split or garble the messages that name it.
 */
static bool instance_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64 || s[0] == '.')
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f ||
		    (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)) /* C1 */
			return false;
	return true;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "instance", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_un sa;
	const char *path = NULL;
	char req[4200], reply[16384], inst[sizeof(sa.sun_path) + 64], *end;
	char def[sizeof(sa.sun_path) + 64], esc[4 * sizeof(def)];
	double timeout = DEFAULT_TIMEOUT;
	bool json = false, status, fell_back = false;
	size_t n = 0;
	ssize_t got;
	int c;

	/* "+": the words of `mark TEXT` are never taken for options */
	while ((c = getopt_long(argc, argv, "+s:i:t:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'i':
			if (!instance_name(optarg))
				return usage_error(
					"--instance: a unit instance name (bachd@NAME: at most 64 bytes, no '/', no control character, not starting with '.'), not '%s'",
					bach_escape_ctl(esc, sizeof(esc),
							optarg));
			snprintf(inst, sizeof(inst), INSTANCE_SOCKET, optarg);
			path = inst;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			errno = 0;
			timeout = strtod(optarg, &end);
			if (errno || *end || !(timeout > 0) || timeout > 86400)
				return usage_error(
					"--timeout: seconds, more than 0 and at most a day, not '%s'",
					optarg);
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (optind == argc)
		return usage_error(
			"no command (status, start, stop, rotate, mark TEXT)");
	status = !strcmp(argv[optind], "status");
	/* `status --json` as well as `--json status` */
	if (status && argc - optind == 2 &&
	    !strcmp(argv[optind + 1], "--json")) {
		json = true;
		argc--;
	}
	if (!strcmp(argv[optind], "mark")) {
		if (argc - optind < 2)
			return usage_error("mark needs TEXT");
	} else if (word_find(verbs, argv[optind]) < 0) {
		return usage_error(
			"unknown command '%s' (status, start, stop, rotate, mark TEXT)",
			argv[optind]);
	} else if (argc - optind > 1) {
		return usage_error("%s takes no argument", argv[optind]);
	}
	for (int i = optind; i < argc; i++) {
		size_t len = strlen(argv[i]);

		/* bachd takes 4096 bytes, the newline included */
		if (strchr(argv[i], '\n') || n + len + 1 > 4096)
			return usage_error(
				"the request must be one line of at most 4095 bytes");
		memcpy(req + n, argv[i], len);
		n += len;
		req[n++] = i + 1 < argc ? ' ' : '\n';
	}
	if (!path) {
		/* bachd's own rule (daemon/ctl.c) */
		if (ctl_default_path(def, sizeof(def)))
			return usage_error("socket path too long: %s", def);
		path = def;
		/*
		 * A user's own bachd first; with none there, the service's
		 * (group bach may talk to it)
		 */
		if (access(path, F_OK) < 0 && !getenv("BACH_SOCKET") &&
		    !getenv("RUNTIME_DIRECTORY") &&
		    strcmp(path, CTL_SYSTEM_SOCKET)) {
			path = CTL_SYSTEM_SOCKET;
			fell_back = true;
		}
	}
	if (strlen(path) >= sizeof(sa.sun_path))
		return usage_error("socket path too long");
	got = exchange(path, req, n, reply, sizeof(reply), timeout);
	/* a newline in a path (--socket, BACH_SOCKET) splits no message */
	bach_escape_ctl(esc, sizeof(esc), path);
	if (got == -EAGAIN || got == -ETIMEDOUT) {
		errmsg("%s: no reply within %g s (is bachd stuck? --timeout gives it longer)",
		       esc, timeout);
		return EXIT_USAGE;
	}
	if (got < 0) {
		errmsg("%s: %s (is bachd running? --socket or BACH_SOCKET name another)",
		       esc, strerror((int)-got));
		if (fell_back)
			errmsg("(looked for %s first: a bachd you run yourself listens there)",
			       bach_escape_ctl(esc, sizeof(esc), def));
		return EXIT_USAGE;
	}
	if (!got) {
		errmsg("%s: no reply", esc);
		return EXIT_USAGE;
	}
	c = strstr(reply, "\"ok\":true") == reply + 1 ? EXIT_OK : EXIT_USAGE;
	if (!status || json || c != EXIT_OK || print_status(reply) < 0)
		fputs(reply, stdout);
	return c;
}

/* --instance: NAME of each /run/bach-NAME/bachd.sock there is */
static void instances(int n, char **words, const char *cur)
{
	char pat[64], name[80];
	const char *star;
	size_t pre, post;
	glob_t g;

	(void)n, (void)words;
	snprintf(pat, sizeof(pat), INSTANCE_SOCKET, "*");
	star = strchr(pat, '*');
	pre = (size_t)(star - pat);
	post = strlen(star + 1);
	if (glob(pat, 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len = strlen(g.gl_pathv[i]);

		if (len > pre + post && len - pre - post < sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s",
				 (int)(len - pre - post), g.gl_pathv[i] + pre);
			if (instance_name(name))
				complete_word(name, cur);
		}
	}
	globfree(&g);
}

const struct bach_cmd cmd_ctl = {
	.name = "ctl",
	.run = run,
	.values =
		(const struct complete_values[]){
			{ .opt = "", .words = verbs, .first = true },
			{ .opt = "", .none = true }, /* mark's TEXT */
			{ .opt = "instance", .list = instances },
			{ .opt = "timeout", .none = true },
			{ NULL },
		},
	.summary = "talk to a running bachd",
	.help = "usage: bach ctl [--socket PATH | --instance NAME] [--timeout SECS] [--json]\n"
		"                status|start|stop|rotate|mark TEXT\n"
		"\n"
		"  status     bachd's and the capture's figures: a summary, or with\n"
		"             --json bachd's JSON reply (status --json works too)\n"
		"  start      start a capture (when bachd is idle)\n"
		"  stop       drain and close the capture; bachd stays, idle\n"
		"  rotate     close the segment, start the next\n"
		"  mark TEXT  record TEXT in the manifest at the record the source\n"
		"             delivers next\n"
		"\n"
		"  -s, --socket PATH   control socket (default: $BACH_SOCKET, else\n"
		"                      $XDG_RUNTIME_DIR/bach/bachd.sock when not root\n"
		"                      and there, else " CTL_SYSTEM_SOCKET ",\n"
		"                      where bachd makes it when not configured)\n"
		"  -i, --instance NAME the socket of bachd@NAME.service,\n"
		"                      /run/bach-NAME/bachd.sock\n"
		"      --json          status: print bachd's JSON reply as it is\n"
		"  -t, --timeout SECS  give up when bachd has not answered within SECS\n"
		"                      seconds (default 5)\n"
		"\n"
		"Prints bachd's one-line JSON reply (status: a summary unless --json).\n"
		"Exit 0 when it says ok, 2 otherwise\n"
		"(no bachd, no reply in time, or an error reply).\n"
		"\n"
		"example: bach ctl mark 'started the kernel build'\n",
};
