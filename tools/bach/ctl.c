// SPDX-License-Identifier: MIT
/* bach ctl: talk to a running bachd over its control socket. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bach.h"

#define DEFAULT_SOCKET "/run/bach/bachd.sock"

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = getenv("BACH_SOCKET");
	char req[4200], reply[16384];
	size_t n = 0;
	ssize_t got;
	int c, fd;

	if (!path)
		path = DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "s:", opts, NULL)) != -1) {
		if (c != 's')
			return usage_error("bad option");
		path = optarg;
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
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		errmsg("%s: %s (is bachd running? --socket or BACH_SOCKET name another)",
		       path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_USAGE;
	}
	if (send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n) {
		errmsg("%s: %s", path, strerror(errno));
		close(fd);
		return EXIT_USAGE;
	}
	n = 0;
	while (n < sizeof(reply) - 1 &&
	       (got = recv(fd, reply + n, sizeof(reply) - 1 - n, 0)) > 0)
		n += (size_t)got;
	close(fd);
	reply[n] = 0;
	if (!n) {
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
	.help = "usage: bach ctl [--socket PATH] status|start|stop|rotate|mark TEXT\n"
		"\n"
		"  status     the capture's figures, as one JSON object\n"
		"  start      start a capture (when bachd is idle)\n"
		"  stop       drain and close the capture; bachd stays, idle\n"
		"  rotate     close the segment, start the next\n"
		"  mark TEXT  record TEXT in the manifest at the current position\n"
		"\n"
		"  -s, --socket PATH   control socket (default $BACH_SOCKET, else\n"
		"                      " DEFAULT_SOCKET ")\n"
		"\n"
		"Prints bachd's one-line JSON reply. Exit 0 when it says ok, 2 otherwise.\n"
		"\n"
		"example: bach ctl mark 'started the kernel build'\n",
};
