/* SPDX-License-Identifier: MIT */
/*
 * Random access to a blocked .byu.gz (docs/formats.md section 3.1): where
 * each gzip member starts in the file and in the uncompressed records.
 *
 * On disk the index is FILE.gzi in htslib's layout, so that htslib's
 * `bgzip -b OFFSET -s N FILE` reads our files through it and we read its:
 *
 *   u64 LE  count     members after the first
 *   count x { u64 LE compressed offset, u64 LE uncompressed offset }
 *
 * The first member (offsets 0, 0) and the EOF block are not listed. An
 * index file says nothing about which file it was made for, so it is
 * checked against the file before it is trusted (bach_index_load()); an
 * index that does not fit is stale, and callers rebuild it from the file
 * (bach_index_build(), which reads only the members' headers and
 * trailers, not their data) rather than trust it.
 *
 * Error convention as in bach/trace.h: 0 or -errno, -EBADMSG for damaged
 * data, and a message naming the file and the byte offset.
 */
#ifndef BACH_INDEX_H
#define BACH_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* The suffix htslib gives an index: FILE.gzi beside FILE. */
#define BACH_INDEX_SUFFIX ".gzi"

struct bach_index {
	uint64_t n; /* data members (empty members are not listed) */
	/*
	 * n + 1 entries each: coff[i] and uoff[i] are member i's offset in
	 * the file and in the uncompressed data; coff[n] is the EOF block's
	 * offset and uoff[n] the uncompressed size.
	 */
	uint64_t *coff;
	uint64_t *uoff;
};

/*
 * Index the blocked gzip file at path by reading its members' headers and
 * trailers. -ENOTSUP when a member has no BC field (not blocked: such a
 * file has no index, it is read from its start), -EBADMSG when the file is
 * damaged (a member cut short, no EOF block, not gzip).
 */
int bach_index_build(const char *path, struct bach_index *ix, char *msg,
		     size_t len);

/*
 * Read path's index, path.gzi, and check it against path: -ENOENT when
 * there is none; -ESTALE when it does not fit: older than the file, not
 * of the index's size, offsets out of order, or its last member not
 * ending right before the file's EOF block.
 */
int bach_index_load(const char *path, struct bach_index *ix, char *msg,
		    size_t len);

/*
 * The uncompressed size of path as its index says, with the checks of
 * bach_index_load() that it depends on (not the order of the entries in
 * between): for counting the records of a file without loading its index.
 */
int bach_index_size(const char *path, uint64_t *size, char *msg, size_t len);

/* Write ix as path.gzi, whole or not at all (a temporary renamed). */
int bach_index_write(const char *path, const struct bach_index *ix, char *msg,
		     size_t len);

/*
 * The same, as NAME.gzi in the directory dirfd (never through a symbolic
 * link); -errno, no message: -EEXIST when its temporary .NAME.gzi.tmp is
 * there and is not a regular file (a FIFO is never waited on). For
 * bachd, as it closes a segment.
 */
int bach_index_writeat(int dirfd, const char *name,
		       const struct bach_index *ix);

/* Room for member n (and the end entry after it); -ENOMEM. For writers. */
int bach_index_grow(struct bach_index *ix, uint64_t *cap);

void bach_index_free(struct bach_index *ix);

/* The member holding uncompressed byte off (n when off is past the end). */
uint64_t bach_index_find(const struct bach_index *ix, uint64_t off);

#endif
