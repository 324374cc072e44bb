// SPDX-License-Identifier: MIT
/* Trace formats by name, and records in from any of them (source.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "source.h"

const struct bach_format *fmt_guess(const char *path, enum bach_format_dir dir)
{
	struct stat st;

	for (size_t i = 0; bach_formats[i]; i++) {
		const struct bach_format *f = bach_formats[i];

		if (f->ext && ends_with(path, f->ext) &&
		    bach_format_can(f, dir))
			return f;
	}
	if (dir == BACH_FORMAT_IN && stat(path, &st) == 0 &&
	    S_ISDIR(st.st_mode))
		return bach_format_find("byu", dir);
	return NULL;
}

/* What a list of the formats shows of each: a name, an ending. */
enum pick { PICK_IN, PICK_OUT, PICK_BOTH, PICK_EXT, PICK_TIMED };

/* What w shows of f, or NULL to leave f out. */
static const char *pick(const struct bach_format *f, enum pick w)
{
	switch (w) {
	case PICK_IN:
		return bach_format_can(f, BACH_FORMAT_IN) ? f->name : NULL;
	case PICK_OUT:
		return bach_format_can(f, BACH_FORMAT_OUT) ? f->name : NULL;
	case PICK_BOTH:
		return bach_format_can(f, BACH_FORMAT_BOTH) ? f->name : NULL;
	case PICK_EXT:
		return f->ext;
	case PICK_TIMED:
		return f->timed ? f->name : NULL;
	}
	return NULL;
}

/* "a, b, c": what w shows of every format, into buf */
static const char *list(char *buf, size_t cap, enum pick w)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; bach_formats[i]; i++) {
		const char *s = pick(bach_formats[i], w);

		if (s && len < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s",
						len ? ", " : "", s);
	}
	return buf;
}

const char *fmt_names(enum bach_format_dir dir)
{
	static char buf[3][512];

	return list(buf[dir - 1], sizeof(buf[0]),
		    dir == BACH_FORMAT_IN    ? PICK_IN
		    : dir == BACH_FORMAT_OUT ? PICK_OUT
					     : PICK_BOTH);
}

void fmt_print(FILE *f)
{
	char buf[512];

	for (size_t i = 0; bach_formats[i]; i++) {
		const struct bach_format *b = bach_formats[i];
		bool in = bach_format_can(b, BACH_FORMAT_IN);
		bool out = bach_format_can(b, BACH_FORMAT_OUT);

		fprintf(f, "  %-12s  %-6s  %s\n", b->name,
			in && out ? "in/out"
			: in	  ? "in"
				  : "out",
			b->help);
	}
	fprintf(f, "A file name ending in %s implies that format.\n",
		list(buf, sizeof(buf), PICK_EXT));
	fprintf(f, "The exports with a time field: %s.\n",
		list(buf, sizeof(buf), PICK_TIMED));
}

ssize_t source_read(struct source *s, const uint8_t **p)
{
	return s->r ? bach_reader_read(s->r, p) : bach_importer_read(s->im, p);
}

const char *source_error(const struct source *s)
{
	return s->r ? bach_reader_strerror(s->r)
		    : bach_importer_strerror(s->im);
}

int open_source(struct source *s, const struct bach_format *f, const char *in,
		unsigned flags)
{
	int err;

	memset(s, 0, sizeof(*s));
	if (f->kind == BACH_FORMAT_FOREIGN) {
		err = bach_importer_open(&s->im, f, in, flags);
		if (err)
			errmsg("%s", s->im ? bach_importer_strerror(s->im)
					   : strerror(-err));
		return err;
	}
	s->r = bach_reader_new();
	if (!s->r) {
		errmsg("out of memory");
		return -ENOMEM;
	}
	if (f->kind == BACH_FORMAT_BYU_GZ)
		err = bach_reader_add_as(s->r, in, BACH_FILE_GZIP);
	else if (f->kind == BACH_FORMAT_BYU_ZST)
		err = bach_reader_add_as(s->r, in, BACH_FILE_ZSTD);
	else
		err = bach_reader_add(s->r, in);
	if (err)
		errmsg("%s", bach_reader_strerror(s->r));
	return err;
}

void close_source(struct source *s)
{
	bach_reader_free(s->r);
	bach_importer_free(s->im);
}
