// SPDX-License-Identifier: MIT
/*
 * ctl_raw: a raw client of bachd's control socket, for malformed requests.
 *
 *   ctl_raw [-n|-c] SOCKET < REQUEST
 *
 * Connects to the Unix stream socket SOCKET, sends standard input exactly
 * as it is (NUL bytes, no newline, any length), then shuts down its
 * sending side (unless -n: then it keeps it open, as a client that says
 * nothing more would) and prints whatever comes back until the daemon
 * closes the connection. With -c it closes the connection at once instead,
 * without reading the reply. Exit 0 when a reply came (or with -c), 1 when
 * none did, 2 on a connection error (the reason on stderr, e.g.
 * "Permission denied").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/exit.h"

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[65536];
	size_t got = 0;
	int keep_open = 0, hang_up = 0, fd, i = 1;
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "-n")) {
		keep_open = 1;
		i++;
	} else if (argc > 1 && !strcmp(argv[1], "-c")) {
		hang_up = 1;
		i++;
	}
	if (i != argc - 1 || strlen(argv[i]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: ctl_raw [-n|-c] SOCKET < REQUEST\n");
		return EXIT_USAGE;
	}
	strcpy(sa.sun_path, argv[i]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "ctl_raw: %s: %s\n", argv[i], strerror(errno));
		return EXIT_USAGE;
	}
	while ((n = read(0, buf, sizeof(buf))) > 0) {
		/* the daemon may answer (and close) before reading it all */
		if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) < 0)
			break;
	}
	if (hang_up) {
		close(fd);
		return 0;
	}
	if (!keep_open)
		shutdown(fd, SHUT_WR);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		fwrite(buf, 1, (size_t)n, stdout);
		got += (size_t)n;
	}
	close(fd);
	return got ? 0 : 1;
}
