/* SPDX-License-Identifier: MIT */
/*
 * Reading on past a damaged gzip member or zstd frame
 * (lib/io/reader_resync.c), for bach verify: what is still readable after
 * the damage. Internal to bach:
 * not part of libbach's public API.
 */
#ifndef BACH_RESYNC_H
#define BACH_RESYNC_H

#include <stdint.h>

#include "bach/trace.h"

/*
 * After a read of r failed with -BACH_EDATA in a gzip member of the file
 * being read (a regular file): go on at the next member after the damaged
 * one that inflates whole, found through the file's .gzi index when it has
 * one, else by looking for the next gzip member header. The member is taken
 * to start with a whole record, as bach writes them; the partial record
 * before the damage, if any, is dropped. *from is the damaged member's byte
 * offset, *to where reading goes on (the file's size when no member
 * follows: the file is then finished, and the next read goes to the next
 * file). bach_reader_file_records() goes on counting the records read.
 * Returns 1 when reading goes on, 0 when no member follows, or the read's
 * error when there is nothing to read on from (damage that is not in a
 * member, such as a missing EOF block, or a stream).
 *
 * The same in a .byu.zst (docs/formats.md section 10) after a damaged zstd
 * frame (one that does not decompress or match its checksum, is cut short,
 * or does not start with a frame's magic): reading goes on at the next
 * frame that decompresses, found through the file's seek table when it
 * fits the file, else by looking for the next frame magic; or at the seek
 * table itself (returns 2 then), which is checked at the end against the
 * frames read from there on. Damage of the seek table alone is not read
 * past (nothing follows it).
 */
int reader_resync(struct bach_reader *r, uint64_t *from, uint64_t *to);

#endif
