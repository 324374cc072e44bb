/* SPDX-License-Identifier: MIT */
/*
 * libbach: read, seek and write BYU address traces of Intel Pentium
 * machines (.byu, .byu.gz, capture directories, standard input).
 *
 *   #include <bach/bach.h>      cc prog.c $(pkg-config --cflags --libs bach)
 *
 * The whole public API is in the headers this one includes; the shared
 * library exports nothing else (libbach.so.0, symbol version BACH_0).
 * docs/api.md is the reference, examples/count_types.c a first program.
 *
 *   bach/record.h   the 6-byte record, its fields, types and gap markers
 *   bach/trace.h    bach_reader_* (open, read blocks, seek, ranges),
 *                   bach_capture_* (segments, gaps and their causes),
 *                   bach_writer_* (write .byu and blocked .byu.gz)
 *   bach/index.h    the .gzi member index of blocked .byu.gz files
 *
 * Calls return 0 (or a count) or -errno; -EBADMSG (BACH_EDATA) means the
 * data is damaged. Each object keeps a message naming the file and the
 * byte offset or record index (bach_reader_strerror(), ...), and
 * bach_exit_status() maps a result to the tools' exit status (0, 1 for
 * damaged data, 2 for anything else).
 */
#ifndef BACH_BACH_H
#define BACH_BACH_H

#include <errno.h>

#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"

#define BACH_API_VERSION_MAJOR 0
#define BACH_API_VERSION_MINOR 2 /* 2: timing, bach_reader_times() */

/* The library's version, e.g. "0.1.0". */
const char *bach_version(void);

#endif
