/* SPDX-License-Identifier: MIT */
/*
 * Closing a segment that was not closed cleanly: cut it to its last
 * complete block (whole records; for gzip, the last member that
 * decompresses with a good CRC), finish it (EOF block), sync, and rename
 * it from *.part to its final name; one with no whole record is removed. Used at start-up for the *.part a
 * crash left, and by the writer when a write failed (ENOSPC).
 */
#ifndef BACHD_RECOVER_H
#define BACHD_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

struct seg_result {
	uint64_t records;	/* whole records kept */
	uint64_t markers;	/* of which gap markers */
	uint64_t bytes;		/* final file size */
	uint64_t cut;		/* bytes cut off the end */
	uint32_t crc;		/* CRC-32 of the final file */
	bool removed;		/* no whole record: the file was removed */
};

/* part: name in dirfd ending ".part"; the result is renamed without it. */
int segment_finish_part(int dirfd, const char *part, struct seg_result *res);

/*
 * Recover every capture directory under outdir that holds a *.part,
 * recording it in that capture's manifest. Returns the number of
 * segments recovered or -errno.
 */
int recover_outdir(const char *outdir);

#endif
