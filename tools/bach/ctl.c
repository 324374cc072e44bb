// SPDX-License-Identifier: MIT
/* bach ctl: talk to a running bachd over its control socket. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "bach.h"

#define DEFAULT_SOCKET "/run/bach/bachd.sock"
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

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_un sa;
	const char *path = getenv("BACH_SOCKET");
	char req[4200], reply[16384], *end;
	double timeout = DEFAULT_TIMEOUT;
	size_t n = 0;
	ssize_t got;
	int c;

	if (!path)
		path = DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "s:t:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 't':
			errno = 0;
			timeout = strtod(optarg, &end);
			if (errno || *end || !(timeout > 0) || timeout > 86400)
				return usage_error("--timeout: seconds, more than 0 and at most a day, not '%s'",
						   optarg);
			break;
		default:
			return usage_error("bad option");
		}
	}
	if (optind == argc)
		return usage_error("no command (status, start, stop, rotate, mark TEXT)");
	if (!strcmp(argv[optind], "mark")) {
		if (argc - optind < 2)
			return usage_error("mark needs TEXT");
	} else if (strcmp(argv[optind], "status") && strcmp(argv[optind], "start") &&
		   strcmp(argv[optind], "stop") && strcmp(argv[optind], "rotate")) {
		return usage_error("unknown command '%s' (status, start, stop, rotate, mark TEXT)",
				   argv[optind]);
	} else if (argc - optind > 1) {
		return usage_error("%s takes no argument", argv[optind]);
	}
	for (int i = optind; i < argc; i++) {
		size_t len = strlen(argv[i]);

		/* bachd takes 4096 bytes, the newline included */
		if (strchr(argv[i], '\n') || n + len + 1 > 4096)
			return usage_error("the request must be one line of at most 4095 bytes");
		memcpy(req + n, argv[i], len);
		n += len;
		req[n++] = i + 1 < argc ? ' ' : '\n';
	}
	if (strlen(path) >= sizeof(sa.sun_path))
		return usage_error("socket path too long");
	got = exchange(path, req, n, reply, sizeof(reply), timeout);
	if (got == -EAGAIN || got == -ETIMEDOUT) {
		errmsg("%s: no reply within %g s (is bachd stuck? --timeout gives it longer)",
		       path, timeout);
		return EXIT_USAGE;
	}
	if (got < 0) {
		errmsg("%s: %s (is bachd running? --socket or BACH_SOCKET name another)",
		       path, strerror((int)-got));
		return EXIT_USAGE;
	}
	if (!got) {
		errmsg("%s: no reply", path);
		return EXIT_USAGE;
	}
	fputs(reply, stdout);
	return strstr(reply, "\"ok\":true") == reply + 1 ? EXIT_OK : EXIT_USAGE;
}

const struct bach_cmd cmd_ctl = {
	.name = "ctl",
	.run = run,
	.summary = "talk to a running bachd",
	.help = "usage: bach ctl [--socket PATH] [--timeout SECS] status|start|stop|rotate|mark TEXT\n"
		"\n"
		"  status     the capture's figures, as one JSON object\n"
		"  start      start a capture (when bachd is idle)\n"
		"  stop       drain and close the capture; bachd stays, idle\n"
		"  rotate     close the segment, start the next\n"
		"  mark TEXT  record TEXT in the manifest at the current position\n"
		"\n"
		"  -s, --socket PATH   control socket (default $BACH_SOCKET, else\n"
		"                      " DEFAULT_SOCKET ")\n"
		"  -t, --timeout SECS  give up when bachd has not answered within SECS\n"
		"                      seconds (default 5)\n"
		"\n"
		"Prints bachd's one-line JSON reply. Exit 0 when it says ok, 2 otherwise\n"
		"(no bachd, no reply in time, or an error reply).\n"
		"\n"
		"example: bach ctl mark 'started the kernel build'\n",
};
