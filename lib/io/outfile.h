/* SPDX-License-Identifier: MIT */
/*
 * An output file that appears whole or not at all: written as
 * ".NAME.XXXXXX" beside NAME, synced and renamed into place on commit,
 * removed on abort. "-" is standard output, and an existing path that is
 * not a regular file (a device, a FIFO) is opened and written in place.
 */
#ifndef BACH_OUTFILE_H
#define BACH_OUTFILE_H

#include <signal.h>

struct bach_outfile {
	int fd;
	char *path; /* NULL for standard output */
	char *tmp;
	char *direct; /* a non-regular file written in place */
	int slot;     /* in the table of temporaries, or -1 */
};

/* 0 or -errno; on failure errno-style code and nothing created. */
int bach_outfile_open(struct bach_outfile *f, const char *path);
int bach_outfile_commit(struct bach_outfile *f);
void bach_outfile_abort(struct bach_outfile *f);
const char *bach_outfile_name(const struct bach_outfile *f);

/*
 * Remove every temporary file still open (up to 8 at a time are known).
 * Async-signal-safe: for the handler of a signal that then kills the
 * process, so that an interrupted run leaves nothing behind. The library
 * installs no handler itself; a program that dies by SIGINT, SIGTERM or
 * SIGHUP installs one (tools/bach: catch_signals()).
 */
void bach_outfile_remove_temps(void);
/*
 * A temporary file written some other way (a timing sidecar's .part),
 * known to bach_outfile_remove_temps() until forgotten: its slot, or -1
 * when the table is full (the file is then not removed by a signal).
 */
int bach_outfile_temp_register(const char *path);
void bach_outfile_temp_forget(int slot);
/*
 * SIGINT, SIGTERM and SIGHUP held back in the calling thread from just
 * before a temporary is created until it is registered: a signal in
 * between would leave it behind. *old is the mask to give back.
 */
void bach_outfile_hold_signals(sigset_t *old);
void bach_outfile_release_signals(const sigset_t *old);

/*
 * What kind of file a stat mode is, for messages that refuse one: "a
 * directory", "a FIFO", "a symbolic link", ...
 */
const char *bach_file_type(unsigned int mode);

/*
 * Open a temporary file NAME (relative to dirfd, or a path with
 * AT_FDCWD), written from scratch and then renamed into place by the
 * caller: created with mode when missing, else emptied. Never through a
 * symbolic link, never blocking on a FIFO, never anything but a regular
 * file. Returns the descriptor, or -errno: -EEXIST when NAME is there and
 * is not a regular file (its stat mode in *what when what is not NULL,
 * for bach_file_type()).
 */
int bach_tmp_openat(int dirfd, const char *name, unsigned int mode,
		    unsigned int *what);

#endif
