// SPDX-License-Identifier: MIT
/* bach ctl: talk to a running bachd or bach capture over its control socket. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <jansson.h>
#include <limits.h>
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

/*
 * Connect, send and read the reply to its end within timeout seconds
 * (0: as long as it takes, for a request the server holds until the
 * capture has ended; connecting and sending still within the default).
 */
static ssize_t exchange(const char *path, const char *req, size_t len,
			char *reply, size_t cap, double timeout)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	double send_timeout = timeout > 0 ? timeout : DEFAULT_TIMEOUT;
	struct timeval tv = { .tv_sec = (time_t)send_timeout };
	double end = now() + timeout;
	size_t n = 0;
	ssize_t got;
	int fd;

	tv.tv_usec = (suseconds_t)((send_timeout - (double)tv.tv_sec) * 1e6);
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
		double left = timeout > 0 ? end - now() : 1;
		int r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		r = poll(&p, 1, timeout > 0 ? (int)(left * 1000) + 1 : -1);
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

/*
 * Member key of o, a string from the server, with its control characters
 * escaped (a path with a newline, a driver's name with an escape
 * sequence must not reach the terminal raw); "" when there is none. The
 * last few answers stay valid, for one printf's arguments.
 */
static const char *str(json_t *o, const char *key)
{
	static char buf[6][4 * 4200 + 1];
	static unsigned next;
	const char *v = json_string_value(json_object_get(o, key));

	if (!v)
		return "";
	next = (next + 1) % 6;
	return bach_escape_ctl(buf[next], sizeof(buf[next]), v);
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

/* The status reply r, for a person. */
static void print_status(json_t *r)
{
	json_t *d, *st, *lb, *b;
	bool capturing, daemon;
	char t1[48], t2[48];
	const char *sep = "", *prog;

	d = json_object_get(r, "bachd");
	st = json_object_get(r, "status");
	capturing = json_is_true(json_object_get(r, "capturing"));
	/* the process that answers: bachd (before 0.2 it did not say) or
	 * bach capture */
	prog = str(d, "program")[0] ? str(d, "program") : "bachd";
	daemon = !strcmp(prog, "bachd");
	if (json_is_object(d))
		printf("%s %s (pid %llu), up %s since %s\n", prog,
		       str(d, "version"), (unsigned long long)num(d, "pid"),
		       span(t1, sizeof(t1),
			    json_number_value(
				    json_object_get(d, "uptime_seconds"))),
		       str(d, "start_time"));
	if (!json_is_object(st) || !str(st, "start_time")[0]) {
		printf("idle: no capture yet (bach ctl start)\n");
		return;
	}
	if (capturing)
		printf("capturing from %s", str(st, "driver"));
	else if (daemon)
		printf("idle (bach ctl start); the last capture was from %s",
		       str(st, "driver"));
	else /* bach capture exits once it is closed */
		printf("ending: the capture from %s is closing",
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
}

/* The reply to `stop wait` r, for a person: how the capture ended. */
static void print_stopped(json_t *r)
{
	json_t *st = json_object_get(r, "status");
	int status = (int)json_integer_value(json_object_get(r, "exit_status"));
	static const char *const why[] = {
		[1] = "records lost to a failed write",
		[3] = "the disk was full",
		[4] = "the source failed",
		[5] = "a manifest line could not be written",
	};

	printf("stopped: %s\n", str(st, "capture"));
	printf("  records   %llu produced, %llu written, %llu lost\n",
	       (unsigned long long)num(st, "produced"),
	       (unsigned long long)num(st, "written"),
	       (unsigned long long)num(st, "lost"));
	printf("  segments  %llu, %.1f MB written, %llu gap markers\n",
	       (unsigned long long)num(st, "segments"),
	       (double)num(st, "bytes") / 1e6,
	       (unsigned long long)num(st, "gap_markers"));
	printf("  ended     %s (exit status %d%s%s)\n",
	       status ? "NOT CLEAN" : "clean", status, status ? ": " : "",
	       !status					 ? ""
	       : status > 0 && status < 6 && why[status] ? why[status]
							 : "an error");
}

/*
 * The reply r to request (a word) for a person, on stdout; an error on
 * stderr. Returns bach ctl's exit status.
 */
static int print_reply(const char *request, json_t *r)
{
	const char *state = str(r, "state");

	if (!json_is_true(json_object_get(r, "ok"))) {
		errmsg("%s: %s", request,
		       str(r, "error")[0] ? str(r, "error") : "refused");
		return EXIT_USAGE;
	}
	if (!strcmp(request, "status")) {
		print_status(r);
	} else if (!strcmp(state, "stopped")) {
		print_stopped(r);
		/* it ended, but not cleanly: the capture's data says so */
		return json_integer_value(json_object_get(r, "exit_status"))
			       ? EXIT_DATA
			       : EXIT_OK;
	} else if (!strcmp(state, "stopping")) {
		printf("stopping: the capture drains and closes (stop --wait waits for that)\n");
	} else if (!strcmp(request, "start")) {
		printf("started: a new capture (bach ctl status)\n");
	} else if (!strcmp(request, "rotate")) {
		printf("rotated: the next segment is open\n");
	} else if (!strcmp(request, "mark")) {
		printf("marked at the record the source delivers next\n");
	} else {
		printf("ok\n");
	}
	return EXIT_OK;
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

/*
 * No bachd at def: the one bach capture that answers beside it
 * (capture-PID.sock, ctl_capture_path()). Returns 1 with its path in buf,
 * 0 when none answers, -1 after saying so when several do.
 */
static int find_capture(const char *def, char *buf, size_t cap)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], path[PATH_MAX];
	char esc[4 * PATH_MAX];
	const char *slash = strrchr(def, '/');
	struct dirent *e;
	int found = 0;
	DIR *d;

	if (!slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - def), def);
	d = opendir(slash == def ? "/" : dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (strncmp(e->d_name, "capture-", 8) || n < 13 ||
		    strcmp(e->d_name + n - 5, ".sock"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!ctl_in_use(path))
			continue; /* one a crash left: nobody answers */
		if (++found == 1) {
			snprintf(buf, cap, "%s", path);
			continue;
		}
		if (found == 2) {
			errmsg("no bachd at %s, and several bach captures answer beside it: --socket one of",
			       bach_escape_ctl(esc, sizeof(esc), def));
			errmsg("  %s", bach_escape_ctl(esc, sizeof(esc), buf));
		}
		errmsg("  %s", bach_escape_ctl(esc, sizeof(esc), path));
	}
	closedir(d);
	return found > 1 ? -1 : found;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "instance", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "wait", no_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_un sa;
	const char *path = NULL, *cmd;
	char req[4200], reply[16384], inst[sizeof(sa.sun_path) + 64], *end;
	char def[sizeof(sa.sun_path) + 64], esc[4 * sizeof(def)];
	char found[PATH_MAX];
	double timeout = DEFAULT_TIMEOUT;
	bool json = false, wait = false, timed = false, fell_back = false;
	size_t n = 0;
	ssize_t got;
	json_t *r;
	int c, words;

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
		case 'w':
			wait = true;
			break;
		case 't':
			errno = 0;
			timeout = strtod(optarg, &end);
			if (errno || *end || !(timeout > 0) || timeout > 86400)
				return usage_error(
					"--timeout: seconds, more than 0 and at most a day, not '%s'",
					optarg);
			timed = true;
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (optind == argc)
		return usage_error(
			"no command (status, start, stop, rotate, mark TEXT)");
	cmd = argv[optind];
	words = argc - optind;
	if (!strcmp(cmd, "mark")) {
		if (words < 2)
			return usage_error("mark needs TEXT");
	} else if (word_find(verbs, cmd) < 0) {
		return usage_error(
			"unknown command '%s' (status, start, stop, rotate, mark TEXT)",
			cmd);
	} else {
		/* `status --json`, `stop --wait` as well as before it */
		for (int i = optind + 1; i < argc; i++) {
			if (!strcmp(argv[i], "--json"))
				json = true;
			else if (!strcmp(argv[i], "--wait"))
				wait = true;
			else
				return usage_error("%s takes no argument", cmd);
		}
		words = 1;
	}
	if (wait && strcmp(cmd, "stop"))
		return usage_error("--wait: only stop waits (stop --wait)");
	for (int i = optind; i < optind + words; i++) {
		size_t len = strlen(argv[i]);

		/* bachd takes 4096 bytes, the newline included */
		if (strchr(argv[i], '\n') || n + len + 1 > 4096)
			return usage_error(
				"the request must be one line of at most 4095 bytes");
		memcpy(req + n, argv[i], len);
		n += len;
		req[n++] = i + 1 < optind + words ? ' ' : '\n';
	}
	if (wait) /* "stop wait": the reply comes once the capture has ended */
		memcpy(req + n - 1, " wait\n", 6), n += 5;
	/* what waits for the capture to end takes as long as that takes */
	if ((wait || !strcmp(cmd, "start")) && !timed)
		timeout = 0;
	if (!path) {
		/* bachd's own rule (daemon/ctl.c) */
		if (ctl_default_path(def, sizeof(def)))
			return usage_error("socket path too long: %s", def);
		path = def;
		/*
		 * A user's own bachd first; with none there, the one bach
		 * capture beside it; then the service's (group bach may
		 * talk to it)
		 */
		c = access(path, F_OK) < 0
			    ? find_capture(def, found, sizeof(found))
			    : 0;
		if (c < 0)
			return EXIT_USAGE;
		if (c > 0) {
			path = found;
		} else if (access(path, F_OK) < 0 && !getenv("BACH_SOCKET") &&
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
		errmsg("%s: %s (is bachd running? --socket names another, or a bach capture's)",
		       esc, strerror((int)-got));
		if (fell_back)
			errmsg("(looked for %s first: a bachd you run yourself listens there)",
			       bach_escape_ctl(esc, sizeof(esc), def));
		return EXIT_USAGE;
	}
	if (!got) {
		errmsg("%s: no reply%s", esc,
		       wait ? " (the capture's program ended before it)" : "");
		return EXIT_USAGE;
	}
	r = json_loads(reply, 0, NULL);
	if (json || !r) {
		/* the server's JSON as it is, for scripts */
		fputs(reply, stdout);
		c = !r || !json_is_true(json_object_get(r, "ok")) ? EXIT_USAGE
		    : json_integer_value(json_object_get(r, "exit_status"))
			    ? EXIT_DATA
			    : EXIT_OK;
	} else {
		c = print_reply(cmd, r);
	}
	json_decref(r);
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
	.summary = "talk to a running bachd or bach capture",
	.help = "usage: bach ctl [--socket PATH | --instance NAME] [--timeout SECS] [--json]\n"
		"                status|start|stop [--wait]|rotate|mark TEXT\n"
		"\n"
		"  status     the figures of bachd (or bach capture) and of the\n"
		"             capture: a summary, naming the program, its pid and\n"
		"             version\n"
		"  start      start a capture (bachd, when idle; right after a stop,\n"
		"             once that stop has ended)\n"
		"  stop       drain and close the capture; bachd stays, idle,\n"
		"             bach capture exits\n"
		"  rotate     close the segment, start the next\n"
		"  mark TEXT  record TEXT in the manifest at the record the source\n"
		"             delivers next\n"
		"\n"
		"  -s, --socket PATH   control socket (default: $BACH_SOCKET, else\n"
		"                      $XDG_RUNTIME_DIR/bach/bachd.sock when not root\n"
		"                      and there, else " CTL_SYSTEM_SOCKET ",\n"
		"                      where bachd makes it when not configured; with\n"
		"                      no bachd there, the one bach capture beside it,\n"
		"                      capture-PID.sock)\n"
		"  -i, --instance NAME the socket of bachd@NAME.service,\n"
		"                      /run/bach-NAME/bachd.sock\n"
		"      --json          print the server's JSON reply as it is, not a\n"
		"                      summary (status --json works too)\n"
		"      --wait          stop: return once the capture has ended, and say\n"
		"                      how (stop --wait works too)\n"
		"  -t, --timeout SECS  give up when no reply has come within SECS\n"
		"                      seconds (default 5; stop --wait and start wait\n"
		"                      for the capture to end, without a limit)\n"
		"\n"
		"Prints the reply for a person (--json: the server's one-line JSON).\n"
		"Exit 0 when it says ok, 2 otherwise (no bachd, no reply in time, or\n"
		"an error reply); stop --wait: 1 when the capture did not end cleanly.\n"
		"\n"
		"example: bach ctl mark 'started the kernel build'\n",
};
