/* SPDX-License-Identifier: MIT */
/*
 * The control socket: a Unix stream socket, one request line per
 * connection, one JSON reply line (docs/bachd.md). Access is the
 * socket file's: mode 0660, group control_group. Requests that are
 * malformed or too long get an error reply and change nothing.
 */
#ifndef BACHD_CTL_H
#define BACHD_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define CTL_MAX_REQUEST 4096 /* bytes, the newline included */

struct ctl {
	int fd;
	char path[108];
};

/* The system service's socket (systemd/bachd.service's RuntimeDirectory) */
#define CTL_SYSTEM_SOCKET "/run/bach/bachd.sock"

/*
 * The control socket when none is named, one rule for bachd (which
 * listens there) and bach ctl (which talks there): $BACH_SOCKET; else,
 * under systemd, bachd.sock in the unit's RuntimeDirectory=
 * ($RUNTIME_DIRECTORY: /run/bach, /run/bach-NAME); else, for root,
 * CTL_SYSTEM_SOCKET; else $XDG_RUNTIME_DIR/bach/bachd.sock (or
 * CTL_SYSTEM_SOCKET when XDG_RUNTIME_DIR is unset). Returns 0, or
 * -ENAMETOOLONG when the path would not fit a socket address (buf then
 * holds what it would have been, cut).
 */
int ctl_default_path(char *buf, size_t cap);

/* True when a live bachd answers on path. */
bool ctl_in_use(const char *path);
/*
 * Whether path may become the control socket: 0 when nothing is there or
 * a stale socket an earlier run left, -EADDRINUSE when a bachd answers on
 * it, -EEXIST when it is not a socket (never removed), or -errno.
 */
int ctl_check(const char *path);
/* The message for ctl_check()'s and ctl_open()'s errors. */
const char *ctl_strerror(int err);
/* Listen on path (replacing only a stale socket); group may be empty. */
int ctl_open(struct ctl *c, const char *path, const char *group);
void ctl_close(struct ctl *c);

/*
 * Accept one connection and read its request line (without the newline)
 * into req. Returns the connected fd (the caller replies with ctl_reply),
 * or -errno; a request that is too long or not a line gets its error reply
 * here and -EBADMSG.
 */
int ctl_accept(struct ctl *c, char *req, size_t cap);
void ctl_reply(int fd, const char *json_line);

struct capture_status;
/*
 * The reply to "status" (docs/bachd.md section 6) into reply: the process
 * (started at since on the wall clock, up for uptime seconds) and the
 * capture's status st. bachd and bach capture both answer with it.
 */
void ctl_status_reply(char *reply, size_t cap, bool capturing, time_t since,
		      double uptime, const struct capture_status *st);

#endif
