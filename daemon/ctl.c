// SPDX-License-Identifier: MIT
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#define LOG_PREFIX "control"
#include "log.h"

int ctl_default_path(char *buf, size_t cap)
{
	struct sockaddr_un sa;
	const char *env = getenv("BACH_SOCKET");
	const char *rt = getenv("RUNTIME_DIRECTORY");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, cap, "%s", env);
	else if (rt && *rt) /* several directories are separated by ':' */
		n = snprintf(buf, cap, "%.*s/bachd.sock", (int)strcspn(rt, ":"),
			     rt);
	else if (geteuid() != 0 && xdg && *xdg)
		n = snprintf(buf, cap, "%s/bach/bachd.sock", xdg);
	else
		n = snprintf(buf, cap, "%s", CTL_SYSTEM_SOCKET);
	return n < 0 || (size_t)n >= cap || (size_t)n >= sizeof(sa.sun_path)
		       ? -ENAMETOOLONG
		       : 0;
}

int ctl_capture_path(char *buf, size_t cap, long pid)
{
	struct sockaddr_un sa;
	int err = ctl_default_path(buf, cap);
	char *slash = strrchr(buf, '/');
	size_t dir = slash ? (size_t)(slash - buf) + 1 : 0;
	int n;

	if (err)
		return err;
	n = snprintf(buf + dir, cap - dir, "capture-%ld.sock", pid);
	return n < 0 || dir + (size_t)n >= cap ||
			       dir + (size_t)n >= sizeof(sa.sun_path)
		       ? -ENAMETOOLONG
		       : 0;
}

int ctl_make_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	return mkdir(dir, 0750) < 0 && errno != EEXIST ? -errno : 0;
}

bool ctl_in_use(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;
	bool busy;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	busy = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return busy;
}

int ctl_check(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	return ctl_in_use(path) ? -EADDRINUSE : 0;
}

const char *ctl_strerror(int err)
{
	switch (err) {
	case -EEXIST:
		return "exists and is not a socket: not replaced";
	case -EADDRINUSE:
		return "another bachd answers on it";
	default:
		return strerror(-err);
	}
}

int ctl_open(struct ctl *c, const char *path, const char *group)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int err;

	c->fd = -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return -errno;
	/*
	 * A socket left by an earlier run goes; one that answers stays, and
	 * so does anything that is not a socket (a user's file).
	 */
	err = ctl_check(path);
	if (err) {
		close(c->fd);
		c->fd = -1;
		return err;
	}
	unlink(path);
	if (bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto out_err;
	if (group && *group) {
		struct group *g = getgrnam(group);

		if (!g) {
			log_warn(
				"group '%s' does not exist: %s stays owner-only",
				group, path);
			chmod(path, 0600);
		} else if (chown(path, (uid_t)-1, g->gr_gid) < 0 ||
			   chmod(path, 0660) < 0) {
			goto out_err;
		}
	} else if (chmod(path, 0600) < 0) {
		goto out_err;
	}
	if (listen(c->fd, 16) < 0)
		goto out_err;
	return 0;
out_err:
	err = -errno;
	close(c->fd);
	c->fd = -1;
	return err;
}

void ctl_close(struct ctl *c)
{
	/* what waits for a capture no longer coming: told so, not dropped */
	ctl_reply_waiting(c, CTL_WAIT_START, CTL_REPLY_NO_START);
	ctl_reply_waiting(
		c, CTL_WAIT_STOP,
		"{\"ok\":false,\"error\":\"exiting before the capture ended\"}");
	if (c->fd >= 0) {
		close(c->fd);
		unlink(c->path);
	}
	c->fd = -1;
}

void ctl_reply(int fd, const char *json_line)
{
	size_t n = strlen(json_line);

	/* a client that went away must not kill the daemon: MSG_NOSIGNAL */
	if (send(fd, json_line, n, MSG_NOSIGNAL) == (ssize_t)n)
		send(fd, "\n", 1, MSG_NOSIGNAL);
	close(fd);
}

bool ctl_hold(struct ctl *c, int fd, enum ctl_wait what)
{
	if (c->nwaiting >= CTL_MAX_WAITING)
		return false;
	c->waiting[c->nwaiting] = fd;
	c->wait_for[c->nwaiting++] = what;
	return true;
}

bool ctl_holding(const struct ctl *c, enum ctl_wait what)
{
	for (unsigned i = 0; i < c->nwaiting; i++)
		if (c->wait_for[i] == what)
			return true;
	return false;
}

void ctl_reply_waiting(struct ctl *c, enum ctl_wait what, const char *json_line)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < c->nwaiting; i++) {
		if (c->wait_for[i] == what) {
			ctl_reply(c->waiting[i], json_line);
			continue;
		}
		c->waiting[kept] = c->waiting[i];
		c->wait_for[kept++] = c->wait_for[i];
	}
	c->nwaiting = kept;
}

int ctl_accept(struct ctl *c, char *req, size_t cap)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timespec t0;
	size_t got = 0;
	char *nl;
	int fd;

	fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		cred = (struct ucred){ .pid = 0,
				       .uid = (uid_t)-1,
				       .gid = (gid_t)-1 };
	/* a whole line within a second, or no request at all */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < cap) {
		struct pollfd p = { fd, POLLIN, 0 };
		struct timespec now;
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = 1000 - ((now.tv_sec - t0.tv_sec) * 1000 +
			       (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			ctl_reply(
				fd,
				"{\"ok\":false,\"error\":\"no request line within 1 s\"}");
			return -EBADMSG;
		}
		n = recv(fd, req + got, cap - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(req + got - (size_t)n, '\n', (size_t)n))
			break;
	}
	if (got == cap) {
		log_warn("request longer than %zu bytes refused", cap - 1);
		ctl_reply(fd, "{\"ok\":false,\"error\":\"request too long\"}");
		return -EBADMSG;
	}
	nl = memchr(req, '\n', got);
	if (!nl) {
		ctl_reply(
			fd,
			"{\"ok\":false,\"error\":\"a request is one line ending in a newline\"}");
		return -EBADMSG;
	}
	if (nl > req && nl[-1] == '\r')
		nl--;
	if (memchr(req, 0, (size_t)(nl - req))) {
		ctl_reply(
			fd,
			"{\"ok\":false,\"error\":\"malformed request: a NUL byte\"}");
		return -EBADMSG;
	}
	*nl = 0;
	/* a poller asks for status every few seconds: not worth the journal */
	if (!strcmp(req, "status"))
		log_debug("request 'status' from pid %d uid %d gid %d",
			  (int)cred.pid, (int)cred.uid, (int)cred.gid);
	else
		log_info("request '%.32s' from pid %d uid %d gid %d", req,
			 (int)cred.pid, (int)cred.uid, (int)cred.gid);
	return fd;
}
