/* SPDX-License-Identifier: MIT */
/*
 * Trace formats by name, and records in from any of them: a trace reader
 * (.byu, .byu.gz, any gzip, a capture directory, standard input) or an
 * importer (lackey, din, cis501, ...), behind one read call. Shared by the
 * commands that read every form bach convert reads (convert, diff), so
 * that they name, guess and open formats the same way.
 */
#ifndef BACH_TOOL_SOURCE_H
#define BACH_TOOL_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bach/convert.h"
#include "bach/trace.h"

enum fmt_kind { K_BYU, K_BYU_GZ, K_IMPORT, K_EXPORT };

struct fmt {
	const char *name;
	enum fmt_kind kind;
	int code; /* enum bach_import_format / bach_export_format */
	bool in, out;
};

/* The input (in) or output format called name, or NULL. */
const struct fmt *fmt_find(const char *name, bool in);
/*
 * The format a file name implies (.byu.gz, .byu, .din, .csv for output; a
 * directory is a capture), or NULL.
 */
const struct fmt *fmt_guess(const char *path, bool in);

/* The input formats, for messages: "byu, byu.gz, lackey, ..." */
#define FMT_IN_NAMES                                                           \
	"byu, byu.gz, lackey, din, cis501, p2, laplace, laplace-bin, "         \
	"tracematcher, idtrace"

struct source {
	struct bach_reader *r;	  /* a trace, or */
	struct bach_importer *im; /* an import */
};

/*
 * Open in as format f (flags: BACH_IMPORT_*, for imports). 0 or -errno,
 * the message printed (errmsg); close_source() in either case.
 */
int open_source(struct source *s, const struct fmt *f, const char *in,
		unsigned flags);
ssize_t source_read(struct source *s, const uint8_t **p);
const char *source_error(const struct source *s);
void close_source(struct source *s);

#endif
