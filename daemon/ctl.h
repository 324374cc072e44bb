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

/* Requests held until the capture has ended (CTL_MAX_WAITING at once) */
#define CTL_MAX_WAITING 16
enum ctl_wait { CTL_WAIT_STOP, CTL_WAIT_START };
/* a request to hold past CTL_MAX_WAITING */
#define CTL_REPLY_TOO_MANY                                                     \
	"{\"ok\":false,\"error\":\"too many requests waiting: try again\"}"
/* a held `start` when the program exits instead */
#define CTL_REPLY_NO_START                                                     \
	"{\"ok\":false,\"error\":\"exiting: no capture started\"}"

struct ctl {
	int fd;
	char path[108];
	int waiting[CTL_MAX_WAITING]; /* connections, their reply owed */
	enum ctl_wait wait_for[CTL_MAX_WAITING];
	unsigned nwaiting;
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
/*
 * bach capture's control socket when none is named: capture-PID.sock
 * beside ctl_default_path()'s (its own pid: two captures never meet, and
 * bach ctl finds it there). Returns as ctl_default_path().
 */
int ctl_capture_path(char *buf, size_t cap, long pid);
/* Make the directory of socket path when missing (mode 0750): 0 or -errno */
int ctl_make_dir(const char *path);

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
/* Removes the socket; a request still held gets an error reply. */
void ctl_close(struct ctl *c);

/*
 * Accept one connection and read its request line (without the newline)
 * into req. Returns the connected fd (the caller replies with ctl_reply),
 * or -errno; a request that is too long or not a line gets its error reply
 * here and -EBADMSG.
 */
int ctl_accept(struct ctl *c, char *req, size_t cap);
void ctl_reply(int fd, const char *json_line);
/*
 * Hold connection fd (from ctl_accept) until ctl_reply_waiting() answers
 * it: `stop wait`, and bachd's `start` while the capture stops. Returns
 * false (fd untouched) when CTL_MAX_WAITING are held already.
 */
bool ctl_hold(struct ctl *c, int fd, enum ctl_wait what);
/* Whether a request of that kind is held. */
bool ctl_holding(const struct ctl *c, enum ctl_wait what);
/* Reply json_line to every held request of that kind, and let them go. */
void ctl_reply_waiting(struct ctl *c, enum ctl_wait what,
		       const char *json_line);

struct capture_status;
/*
 * The reply to "status" (docs/bachd.md section 6) into reply: the process
 * (program "bachd" or "bach capture", started at since on the wall clock,
 * up for uptime seconds) and the capture's status st. bachd and bach
 * capture both answer with it.
 */
void ctl_status_reply(char *reply, size_t cap, const char *program,
		      bool capturing, time_t since, double uptime,
		      const struct capture_status *st);
/*
 * The reply to `stop wait` once the capture has ended: its exit status
 * (capture_close()'s) and final figures.
 */
void ctl_stopped_reply(char *reply, size_t cap, int exit_status,
		       const struct capture_status *st);

#endif
