// SPDX-License-Identifier: MIT
/* Trace formats by name, and records in from any of them (source.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "bach.h"
#include "source.h"

static const struct fmt fmts[] = {
	{ "byu", K_BYU, 0, true, true },
	{ "byu.gz", K_BYU_GZ, 0, true, true },
	{ "lackey", K_IMPORT, BACH_IMPORT_LACKEY, true, false },
	{ "din", K_IMPORT, BACH_IMPORT_DIN, true, false },
	{ "cis501", K_IMPORT, BACH_IMPORT_CIS501, true, false },
	{ "p2", K_IMPORT, BACH_IMPORT_P2, true, false },
	{ "laplace", K_IMPORT, BACH_IMPORT_LAPLACE, true, false },
	{ "laplace-bin", K_IMPORT, BACH_IMPORT_LAPLACE_BIN, true, false },
	{ "tracematcher", K_IMPORT, BACH_IMPORT_TRACEMATCHER, true, false },
	{ "idtrace", K_IMPORT, BACH_IMPORT_IDTRACE, true, false },
	{ "din", K_EXPORT, BACH_EXPORT_DIN, false, true },
	{ "dinx", K_EXPORT, BACH_EXPORT_DINX, false, true },
	{ "laplace", K_EXPORT, BACH_EXPORT_LAPLACE, false, true },
	{ "laplace-bin", K_EXPORT, BACH_EXPORT_LAPLACE_BIN, false, true },
	{ "tracematcher", K_EXPORT, BACH_EXPORT_TRACEMATCHER, false, true },
	{ "idtrace", K_EXPORT, BACH_EXPORT_IDTRACE, false, true },
	{ "csv", K_EXPORT, BACH_EXPORT_CSV, false, true },
};

#define NFMTS (sizeof(fmts) / sizeof(*fmts))

const struct fmt *fmt_find(const char *name, bool in)
{
	for (size_t i = 0; i < NFMTS; i++)
		if (!strcmp(fmts[i].name, name) &&
		    (in ? fmts[i].in : fmts[i].out))
			return &fmts[i];
	if (!strcmp(name, "p2AddrTr") && in)
		return fmt_find("p2", true);
	return NULL;
}

/* The format a file name implies, or NULL. */
const struct fmt *fmt_guess(const char *path, bool in)
{
	struct stat st;

	if (ends_with(path, ".byu.gz"))
		return fmt_find("byu.gz", in);
	if (ends_with(path, ".byu"))
		return fmt_find("byu", in);
	if (ends_with(path, ".din"))
		return fmt_find("din", in);
	if (ends_with(path, ".csv") && !in)
		return fmt_find("csv", in);
	if (in && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return fmt_find("byu", in);
	return NULL;
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

int open_source(struct source *s, const struct fmt *f, const char *in,
		unsigned flags)
{
	int err;

	memset(s, 0, sizeof(*s));
	if (f->kind == K_IMPORT) {
		err = bach_importer_open(&s->im, f->code, in, flags);
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
	if (f->kind == K_BYU_GZ)
		err = bach_reader_add_as(s->r, in, BACH_FILE_GZIP);
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
