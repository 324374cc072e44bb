// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "manifest.h"

int manifest_open(struct manifest *m, int dirfd)
{
	m->fd = openat(dirfd, "manifest.jsonl",
		       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	return m->fd < 0 ? -errno : 0;
}

void manifest_close(struct manifest *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

int manifest_sync(struct manifest *m)
{
	return fdatasync(m->fd) < 0 ? -errno : 0;
}

int manifest_event(struct manifest *m, const char *event,
		   const char *members_fmt, ...)
{
	char line[4096];
	struct timeval tv;
	struct tm tm;
	size_t n;
	va_list ap;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = strftime(line, sizeof(line), "{\"time\":\"%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(line + n, sizeof(line) - n,
			      ".%03ldZ\",\"event\":\"%s\"", tv.tv_usec / 1000,
			      event);
	if (members_fmt && *members_fmt && n < sizeof(line)) {
		line[n++] = ',';
		va_start(ap, members_fmt);
		n += (size_t)vsnprintf(line + n, sizeof(line) - n, members_fmt,
				       ap);
		va_end(ap);
	}
	if (n > sizeof(line) - 3)
		n = sizeof(line) - 3;
	line[n++] = '}';
	line[n++] = '\n';
	/* O_APPEND and one write: a line is whole or absent */
	if (write(m->fd, line, n) != (ssize_t)n)
		return -errno ? -errno : -EIO;
	return 0;
}

void json_escape(char *dst, size_t cap, const char *s)
{
	size_t n = 0;

	for (; *s && n + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			dst[n++] = '\\';
			dst[n++] = (char)c;
		} else if (c < 0x20) {
			n += (size_t)snprintf(dst + n, cap - n, "\\u%04x", c);
		} else {
			dst[n++] = (char)c;
		}
	}
	dst[n] = 0;
}
