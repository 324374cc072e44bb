// SPDX-License-Identifier: MIT
/*
 * Every format `bach convert` reads and writes (lib/formats/formats.h):
 * bach_formats[] lists them, and the lookups go through it. BYU's own
 * records are here; each other format is in a file of its family
 * (lackey.c, dinero.c, cis501.c, p2.c, laplace.c, tracematcher.c,
 * idtrace.c, csv.c), with what they share in format_kit.h.
 * docs/formats.md describes every field and what is lost.
 */
#include <string.h>

#include "bach/record.h"
#include "lib/formats/format_kit.h"

/* ---- BYU, and the list ------------------------------------------------- */

/* The records themselves: the trace reader and writer take them as is. */
static const struct bach_format fmt_byu = {
	.name = "byu",
	.kind = BACH_FORMAT_BYU,
	.help = "BYU records, 6 bytes each (in: a capture directory too)",
	.ext = ".byu",
	.unit = BACH_REC_SIZE,
};

static const struct bach_format fmt_byu_gz = {
	.name = "byu.gz",
	.kind = BACH_FORMAT_BYU_GZ,
	.help = "byu in blocked gzip (in: any gzip)",
	.ext = ".byu.gz",
	.unit = BACH_REC_SIZE,
};

static const struct bach_format fmt_byu_zst = {
	.name = "byu.zst",
	.kind = BACH_FORMAT_BYU_ZST,
	.help = "byu in zstd frames with a seek table",
	.ext = ".byu.zst",
	.unit = BACH_REC_SIZE,
};

/*
 * Every format, in the order `bach help convert` and the messages list
 * them; a new format is one row here. The importers' order is also the
 * fuzz targets' (byte 0 picks one): append, or renumber the fuzz seeds
 * (dinx, read since it came after the imports' seeds, is after them).
 */
const struct bach_format *const bach_formats[] = {
	&fmt_byu,	   &fmt_byu_gz,	 &fmt_lackey,  &fmt_din,
	&fmt_cis501,	   &fmt_p2,	 &fmt_laplace, &fmt_laplace_bin,
	&fmt_tracematcher, &fmt_idtrace, &fmt_dinx,    &fmt_csv,
	&fmt_byu_zst,	   NULL,
};

bool bach_format_can(const struct bach_format *f, enum bach_format_dir dir)
{
	if (f->kind != BACH_FORMAT_FOREIGN)
		return true;
	return (!(dir & BACH_FORMAT_IN) || f->line) &&
	       (!(dir & BACH_FORMAT_OUT) || f->write);
}

const struct bach_format *bach_format_find(const char *name,
					   enum bach_format_dir dir)
{
	for (size_t i = 0; bach_formats[i]; i++) {
		const struct bach_format *f = bach_formats[i];

		if ((!strcmp(f->name, name) ||
		     (f->alias && !strcmp(f->alias, name))) &&
		    bach_format_can(f, dir))
			return f;
	}
	return NULL;
}
