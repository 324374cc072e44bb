/* SPDX-License-Identifier: MIT */
/*
 * Files bach finds by name, as opposed to the ones a user names on the
 * command line: the segments, *.part files and manifest.jsonl of a capture
 * directory, and the FILE.gzi index and NAME.time.gz sidecar beside any
 * trace. A user may name a FIFO or a device as a trace (it is read as a
 * stream); a file found by name is read only when it is a regular file, so
 * that a FIFO put there cannot hang the reader, and one in a capture
 * directory never through a symbolic link (as recovery, docs/design.md
 * section 3). Internal to bach: not part of libbach's public API.
 */
#ifndef BACH_FOUND_H
#define BACH_FOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "bach/trace.h"

/*
 * Open name (relative to dirfd; AT_FDCWD for a path) for reading, only if
 * it is a regular file: opened without waiting for a FIFO's writer, then
 * refused. With nofollow, a symbolic link is refused too. Returns the
 * descriptor (blocking, close-on-exec; *st filled when not NULL) or -errno,
 * with msg naming shown (name when NULL): "SHOWN: not a regular file (a
 * FIFO), not read", "SHOWN: a symbolic link, not read", or "SHOWN:
 * strerror" (-ENOENT: "No such file or directory").
 */
int bach_open_found(int dirfd, const char *name, const char *shown,
		    bool nofollow, struct stat *st, char *msg, size_t len);

/*
 * Append a file found in a capture directory to a reader (a *.part, say):
 * read only if it is a regular file, not through a symbolic link, of the
 * kind its name says (.gz.part gzip, .byu.part raw), sniffed otherwise. The
 * closed segments of a directory given to bach_reader_add() are added so.
 */
int bach_capture_file_add(struct bach_reader *r, const char *path);

#endif
