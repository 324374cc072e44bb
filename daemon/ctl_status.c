// SPDX-License-Identifier: MIT
/*
 * The control socket's status reply, apart from ctl.c: bach ctl links
 * ctl.c and must not pull in the capture engine.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "session.h"

void ctl_status_reply(char *reply, size_t cap, const char *program,
		      bool capturing, time_t since, double uptime,
		      const struct capture_status *st)
{
	char t[32];
	struct tm tm;
	size_t n;

	gmtime_r(&since, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = (size_t)snprintf(
		reply, cap,
		"{\"ok\":true,\"capturing\":%s,\"bachd\":{\"version\":\"%s\",\"program\":\"%s\",\"pid\":%d,\"start_time\":\"%s\",\"uptime_seconds\":%.3f},\"status\":",
		capturing ? "true" : "false", BACH_VERSION, program,
		(int)getpid(), t, uptime);
	if (n + 2 >= cap)
		return;
	n += capture_status_json(st, reply + n, cap - n - 2);
	snprintf(reply + n, cap - n, "}");
}

void ctl_stopped_reply(char *reply, size_t cap, int exit_status,
		       const struct capture_status *st)
{
	size_t n = (size_t)snprintf(
		reply, cap,
		"{\"ok\":true,\"state\":\"stopped\",\"exit_status\":%d,\"status\":",
		exit_status);

	if (n + 2 >= cap)
		return;
	n += capture_status_json(st, reply + n, cap - n - 2);
	snprintf(reply + n, cap - n, "}");
}
