// SPDX-License-Identifier: MIT
/*
 * notify_listen: a stand-in for systemd's notify socket, for tests.
 *
 *   notify_listen [-t SECONDS] [-r GLOB] [-k] PATH
 *
 * Binds a Unix datagram socket at PATH and prints every datagram as one
 * line: the CLOCK_MONOTONIC time in seconds, a space, and the datagram's
 * assignments joined by '|' (a datagram "READY=1\nSTATUS=x" prints as
 * "12.345678 READY=1|STATUS=x"). With -r, when a datagram carrying READY=1
 * arrives, GLOB is checked at once and a line "12.345678 CHECK ok PATH" or
 * "12.345678 CHECK missing GLOB" follows. With -k, a line "12.345678 TICK"
 * every 0.1 s that brings no datagram, so that a reader can tell how long it
 * has been silent. Exits 0 on SIGTERM or SIGINT, or
 * after SECONDS (default 60); unlinks PATH on the way out.
 */
#include <errno.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/exit.h"

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int has_ready(const char *msg)
{
	const char *p = msg;

	for (;;) {
		if (!strncmp(p, "READY=1", 7) && (p[7] == '\n' || !p[7]))
			return 1;
		p = strchr(p, '\n');
		if (!p)
			return 0;
		p++;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sigaction act = { .sa_handler = on_signal };
	const char *check = NULL, *path;
	double limit = 60, end;
	char buf[8192];
	int ch, fd, ticks = 0;

	while ((ch = getopt(argc, argv, "t:r:k")) != -1) {
		if (ch == 't')
			limit = atof(optarg);
		else if (ch == 'r')
			check = optarg;
		else if (ch == 'k')
			ticks = 1;
		else
			return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		fprintf(stderr,
			"usage: notify_listen [-t SECONDS] [-r GLOB] [-k] PATH\n");
		return EXIT_USAGE;
	}
	path = argv[optind];
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "notify_listen: %s: path too long\n", path);
		return EXIT_USAGE;
	}
	strcpy(sa.sun_path, path);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "notify_listen: %s: %s\n", path,
			strerror(errno));
		return EXIT_USAGE;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	end = mono() + limit;
	while (!quit && mono() < end) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;
		double t;

		if (poll(&p, 1, 100) <= 0) {
			if (ticks)
				printf("%.6f TICK\n", mono());
			continue;
		}
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			continue;
		t = mono();
		buf[n] = 0;
		if (n > 0 && buf[n - 1] == '\n')
			buf[--n] = 0;
		if (check && has_ready(buf)) {
			glob_t g = { 0 };
			int found =
				glob(check, 0, NULL, &g) == 0 && g.gl_pathc > 0;

			/* checked before anything is printed: as close as can
			 * be */
			for (char *q = buf; *q; q++)
				if (*q == '\n')
					*q = '|';
			printf("%.6f %s\n", t, buf);
			if (found)
				printf("%.6f CHECK ok %s\n", t, g.gl_pathv[0]);
			else
				printf("%.6f CHECK missing %s\n", t, check);
			globfree(&g);
			continue;
		}
		for (char *q = buf; *q; q++)
			if (*q == '\n')
				*q = '|';
		printf("%.6f %s\n", t, buf);
	}
	close(fd);
	unlink(path);
	return 0;
}
