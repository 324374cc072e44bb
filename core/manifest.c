// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sys/stat.h>
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
	char line[MANIFEST_LINE_MAX];
	struct timeval tv;
	struct tm tm;
	size_t n;
	ssize_t w;
	off_t off;
	int err;
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
	/*
	 * O_APPEND and one write; a short write (a full disk) is cut off
	 * again, so that a line is whole or absent.
	 */
	off = lseek(m->fd, 0, SEEK_END);
	w = write(m->fd, line, n);
	if (w == (ssize_t)n)
		return 0;
	err = w < 0 ? -errno : -ENOSPC;
	if (w > 0 && off >= 0 && ftruncate(m->fd, off) < 0)
		return -errno;
	return err;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	cp = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void json_escape(char *dst, size_t cap, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = 0;

	/* whole characters only: a cut never splits one */
	while (*s) {
		size_t u = *s >= 0x80 ? utf8_len(s) : 1;

		if (*s == '"' || *s == '\\') {
			if (n + 2 >= cap)
				break;
			dst[n++] = '\\';
			dst[n++] = (char)*s++;
		} else if (*s < 0x20 || (*s >= 0x80 && !u)) {
			/* control characters escaped; bytes that are not UTF-8 become U+FFFD */
			if (n + 6 >= cap)
				break;
			n += (size_t)snprintf(dst + n, cap - n, "\\u%04x",
					      *s < 0x20 ? *s : 0xfffd);
			s++;
		} else {
			if (n + u >= cap)
				break;
			memcpy(dst + n, s, u);
			n += u;
			s += u;
		}
	}
	dst[n] = 0;
}

int manifest_reserve(struct manifest *m, off_t bytes)
{
	struct stat st;

	if (fstat(m->fd, &st) < 0)
		return -errno;
	/* blocks past the end, used by later appends: room for the last lines */
	if (fallocate(m->fd, FALLOC_FL_KEEP_SIZE, st.st_size, bytes) < 0)
		return -errno;
	return 0;
}
