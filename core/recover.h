/* SPDX-License-Identifier: MIT */
/*
 * Closing what a crash left open (docs/bachd.md section 5). A segment
 * that was not closed cleanly is cut to its last complete block (whole
 * records; for gzip, the last member that decompresses with a good CRC),
 * finished (EOF block), synced and renamed from *.part to its final name;
 * one with no whole record is removed. A closed segment the manifest
 * never names (a crash between the rename and the manifest line) is
 * measured and named. A capture whose manifest has no "ended" event gets
 * one, with the totals its events give.
 *
 * Nothing is followed through a symbolic link and nothing that is not a
 * regular file is opened, truncated or renamed: such a name is logged
 * and left alone. Used at start-up for the captures under the output
 * directory, by `bach recover`, and by the writer after a failed write.
 */
#ifndef BACH_CORE_RECOVER_H
#define BACH_CORE_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

struct seg_result {
	uint64_t records; /* whole records kept */
	uint64_t markers; /* of which gap markers */
	uint64_t bytes;	  /* final file size */
	uint64_t cut;	  /* bytes cut off the end */
	uint64_t cut_at;  /* the byte offset they were cut from */
	uint32_t crc;	  /* CRC-32 of the final file */
	bool removed;	  /* no whole record: the file was removed */
	bool whole;	  /* measured: every byte belongs to a good block */
};

/* part: name in dirfd ending ".part"; the result is renamed without it. */
int segment_finish_part(int dirfd, const char *part, struct seg_result *res);
/*
 * Write seg's .gzi index in dirfd (where names that directory) from the
 * segment itself, for a segment closed by recovery or after a failed
 * write; a warning when it cannot be (readers then build one themselves).
 */
void segment_index(int dirfd, const char *where, const char *seg);

/* What a closed segment holds, read only. */
int segment_measure(int dirfd, const char *name, struct seg_result *res);

/*
 * Recover the capture directory name in outfd (outdir names outfd in
 * messages). Returns the number of things done (segments closed or
 * named, an "ended" written), 0 when it needed nothing or is not a
 * capture directory, or -errno when it could not be recovered (logged).
 * What it had to close, name or write and could not (a .part that is not
 * a regular file, a manifest line it cannot write; each logged) is added
 * to *failed when failed is not NULL: the capture is then only partly
 * recovered.
 */
int recover_capture(int outfd, const char *outdir, const char *name,
		    unsigned *failed);

/*
 * Open the output directory and lock it (flock on the directory itself,
 * which no user removes by accident): one writer per output directory,
 * since a second would "recover" the first one's open segment. Returns
 * the locked fd (the lock goes with it) or -errno, logged.
 */
int outdir_lock(const char *outdir);

/*
 * Recover every capture directory in outfd. Returns the number of
 * captures that needed recovery, or -errno when outfd cannot be listed;
 * *failed as for recover_capture(), summed.
 */
int recover_outdir(int outfd, const char *outdir, unsigned *failed);

#endif
