/* SPDX-License-Identifier: MIT */
/*
 * An output file that appears whole or not at all: written as
 * ".NAME.XXXXXX" beside NAME, synced and renamed into place on commit,
 * removed on abort. "-" is standard output, and an existing path that is
 * not a regular file (a device, a FIFO) is opened and written in place.
 */
#ifndef BACH_OUTFILE_H
#define BACH_OUTFILE_H

struct bach_outfile {
	int fd;
	char *path;	/* NULL for standard output */
	char *tmp;
	char *direct;	/* a non-regular file written in place */
};

/* 0 or -errno; on failure errno-style code and nothing created. */
int bach_outfile_open(struct bach_outfile *f, const char *path);
int bach_outfile_commit(struct bach_outfile *f);
void bach_outfile_abort(struct bach_outfile *f);
const char *bach_outfile_name(const struct bach_outfile *f);

#endif
