/* SPDX-License-Identifier: MIT */
/*
 * .byu.zst (docs/formats.md section 3.3): zstd frames of whole records,
 * ended by the seek table of zstd's seekable format (contrib/
 * seekable_format/zstd_seekable_compression_format.md in zstd's sources):
 * a skippable frame holding one entry per frame (compressed size,
 * decompressed size, checksum) and a footer. The frames themselves are
 * made by bach_bgzf_block() with a BACH_DEFLATE_ZSTD deflater and read by
 * the trace reader (lib/io/reader_read.c); this is the seek table, written
 * and read.
 */
#ifndef BACH_ZST_H
#define BACH_ZST_H

#include <stddef.h>
#include <stdint.h>

#include "bach/index.h"

#define ZST_FRAME_MAGIC	   0xFD2FB528u
#define ZST_SKIP_MAGIC	   0x184D2A50u /* ..5F: the low 4 bits are free */
#define ZST_SEEK_MAGIC	   0x184D2A5Eu /* the seek table's skippable frame */
#define ZST_SEEKABLE_MAGIC 0x8F92EAB1u /* the footer's last four bytes */
#define ZST_FOOTER	   9	       /* frames u32, descriptor, magic */
#define ZST_ENTRY	   12	       /* with the checksum flag */
#define ZST_CHECKSUM_FLAG  0x80
#define ZST_HEADER_MAX	   18	      /* a zstd frame header's most bytes */
#define ZST_MAX_FRAMES	   0x8000000u /* as zstd's seekable reader */

/* One frame of the table: sizes, and the frame's checksum (XXH64 low 32). */
struct zst_entry {
	uint32_t csize, dsize, sum;
};

/* The entries of a file being written, one per frame appended. */
struct zst_table {
	struct zst_entry *e;
	uint64_t n, cap;
};

/*
 * Note the frame at frame[0..len) (made by bach_bgzf_block()): its size,
 * the content size its header carries and the checksum it ends with.
 * -ENOMEM, or -E2BIG past ZST_MAX_FRAMES; 0.
 */
int zst_table_add(struct zst_table *t, const uint8_t *frame, size_t len);
/* The seek table frame of t's entries, malloc'd, its size in *len; NULL
 * when out of memory. */
uint8_t *zst_table_bytes(const struct zst_table *t, size_t *len);
void zst_table_free(struct zst_table *t);

/* Bytes of the seek table's skippable frame for n entries. */
static inline uint64_t zst_table_size(uint64_t n)
{
	return 8 + n * ZST_ENTRY + ZST_FOOTER;
}

/* The whole seek table frame for e[0..n) at dst (zst_table_size(n)). */
void zst_table_put(uint8_t *dst, const struct zst_entry *e, uint64_t n);

/*
 * Read the seek table at the end of the zstd file open at fd (size bytes)
 * into ix: one entry per frame holding records (empty and skippable frames
 * are passed over), coff and uoff as in a .gzi, the end entry at the seek
 * table's offset. Checks what the table says against the file: its frame
 * sizes must add up to the table's offset, and the descriptor's reserved
 * bits be 0. Returns 0, -ENOENT when the file does not end with a seek
 * table, -EBADMSG when it does but the table is wrong (msg says why, with
 * the byte offset), -ENOMEM, or -errno of a read.
 */
int zst_table_load(int fd, uint64_t size, struct bach_index *ix, char *msg,
		   size_t len);

/*
 * Check a loaded table (ix, from zst_table_load()) against the frames of
 * the file open at fd: each entry's offset must start a zstd frame whose
 * header's content size, when it has one, is the entry's. 0, -EBADMSG
 * naming the entry and byte offset in msg, or -errno of a read. One read
 * of a frame header per frame: bach index's check, not the readers'.
 */
int zst_table_check(int fd, const struct bach_index *ix, char *msg, size_t len);

/* The same for the file at path, opened and closed here. */
int zst_table_load_path(const char *path, struct bach_index *ix, char *msg,
			size_t len);

/* The same from the seek table frame's bytes, tab[0..tlen), found at
 * byte offset at of a file whose first frame it lists is at base. */
int zst_table_parse(const uint8_t *tab, uint64_t tlen, uint64_t at,
		    uint64_t base, struct bach_index *ix, char *msg,
		    size_t len);

#endif
