/* SPDX-License-Identifier: MIT */
/*
 * manifest.jsonl: one JSON object per line, appended, never rewritten
 * (docs/capture-directory.md lists the events and their fields). Every
 * line starts {"time":"<UTC ISO 8601>","event":"<name>" and the caller
 * supplies the rest of the members.
 */
#ifndef BACHD_MANIFEST_H
#define BACHD_MANIFEST_H

#include <stddef.h>
#include <sys/types.h>

/* A mark of 4 KiB escaped (6 bytes a byte at worst) still fits. */
#define MANIFEST_LINE_MAX 32768
#define JSON_ESCAPED_MAX (6 * 4096 + 1)

struct manifest {
	int fd;
};

/* Open (creating) manifest.jsonl in the capture directory dirfd. */
int manifest_open(struct manifest *m, int dirfd);
void manifest_close(struct manifest *m);
/* Append one event; members_fmt formats the members after "event". */
__attribute__((format(printf, 3, 4))) int
manifest_event(struct manifest *m, const char *event, const char *members_fmt,
	       ...);
int manifest_sync(struct manifest *m);
/*
 * Reserve room on the disk past the manifest's end, so that a disk that
 * fills up still takes the lines that say so. Advisory: -errno where the
 * filesystem cannot.
 */
int manifest_reserve(struct manifest *m, off_t bytes);

/*
 * JSON string contents for s (quotes not included): quotes, backslashes and
 * control characters escaped, bytes that are not UTF-8 as U+FFFD, cut at a
 * whole character when it does not fit.
 */
void json_escape(char *dst, size_t cap, const char *s);

#endif
