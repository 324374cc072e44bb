/* SPDX-License-Identifier: MIT */
/*
 * Trace formats as the commands show them, and records in from any of
 * them: a trace reader (.byu, .byu.gz, any gzip, a capture directory,
 * standard input) or an importer, behind one read call. Shared by the
 * commands that read every form bach convert reads (convert, diff), so
 * that they name, guess and open formats the same way. The formats
 * themselves are lib's list, bach_formats[] (lib/formats/formats.h).
 */
#ifndef BACH_TOOL_SOURCE_H
#define BACH_TOOL_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bach/trace.h"
#include "lib/formats/formats.h"

/*
 * The format going dir that a file name implies (a format's ending, e.g.
 * .byu.gz or .din; for input a directory is a capture), or NULL.
 */
const struct bach_format *fmt_guess(const char *path, enum bach_format_dir dir);
/* The names of the formats going dir (BACH_FORMAT_BOTH: both ways), for
 * messages: "byu, byu.gz, ..." */
const char *fmt_names(enum bach_format_dir dir);
/*
 * The formats as `bach help convert` lists them, one line each: name, the
 * ways it goes ("in", "out" or "in/out"), what it is; then the endings
 * that imply one and the exports with a time field. The docs check
 * (tests/cli/formats_docs.sh) reads this list.
 */
void fmt_print(FILE *f);

struct source {
	struct bach_reader *r;	  /* a trace, or */
	struct bach_importer *im; /* an import */
};

/*
 * Open in as format f (flags: BACH_IMPORT_*, for imports). 0 or -errno,
 * the message printed (errmsg); close_source() in either case.
 */
int open_source(struct source *s, const struct bach_format *f, const char *in,
		unsigned flags);
ssize_t source_read(struct source *s, const uint8_t **p);
const char *source_error(const struct source *s);
void close_source(struct source *s);

#endif
