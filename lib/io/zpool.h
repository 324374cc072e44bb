/* SPDX-License-Identifier: MIT */
/*
 * A pool of threads compressing whole blocks into blocked-gzip members,
 * finished in submission order. Used by the trace writer and by bachd's
 * segment writer. The caller owns the input until the block's result has
 * been taken; the pool owns the output buffers.
 *
 * One thread submits and takes; any number of workers compress. Locks are
 * taken once per 64 KiB block, never per record.
 *
 * A zstd pool may make one frame of several blocks (bach_zpool_frame()):
 * the blocks submitted are gathered until there are that many, or until
 * bach_zpool_end_frame() or a peek that waits ends the frame early; a
 * worker then compresses them as one job into one frame. The frame is
 * taken with its first block; its other blocks are taken after it, with
 * no bytes of their own.
 */
#ifndef BACH_ZPOOL_H
#define BACH_ZPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bach/trace.h"

struct bach_zpool;

/* The most blocks one frame may gather (16 MiB of records). */
#define BACH_ZPOOL_MAX_FRAME 256

/* One piece of a frame's input. */
struct bach_piece {
	const uint8_t *p;
	size_t len;
};

/*
 * One zstd frame (content size, checksum, as bach_bgzf_block()) of the
 * pieces in[0..n) one after the other, at dst[0..cap) (room for
 * ZSTD_compressBound() of their sum). Its size, or 0 on an error. For a
 * BACH_DEFLATE_ZSTD deflater only.
 */
size_t bach_zstd_frame(struct bach_deflater *d, uint8_t *dst, size_t cap,
		       const struct bach_piece *in, size_t n);

/*
 * threads: 0 compresses in the caller's thread at submit time; depth:
 * blocks that may be pending at once. NULL when out of memory or when a
 * thread cannot be started.
 */
struct bach_zpool *bach_zpool_new(int threads, size_t depth,
				  enum bach_deflate_backend backend, int level);
void bach_zpool_free(struct bach_zpool *z);

/*
 * Blocks per frame, 1 to BACH_ZPOOL_MAX_FRAME (a zstd pool's; others make
 * one member a block): before the first submit.
 */
void bach_zpool_frame(struct bach_zpool *z, size_t blocks);
/* End the frame being gathered now: its blocks go to the workers. */
void bach_zpool_end_frame(struct bach_zpool *z);
/* Whether no block is being gathered into a frame (the submitter's view). */
bool bach_zpool_gathering_none(const struct bach_zpool *z);

/* Blocks submitted and not yet taken. */
size_t bach_zpool_pending(const struct bach_zpool *z);
size_t bach_zpool_depth(const struct bach_zpool *z);

/*
 * Queue len <= BACH_BGZF_MAX_INPUT bytes at in (kept valid by the caller
 * until taken). The pool must not be full (pending < depth).
 */
void bach_zpool_submit(struct bach_zpool *z, const uint8_t *in, size_t len,
		       void *tag);

/*
 * The oldest block's member, if finished (or, with wait, once finished,
 * ending the frame it is gathered in): true with out, len and tag set,
 * valid until bach_zpool_release(); false when nothing is pending, or
 * when !wait and the oldest is not done. A frame's blocks after its first
 * give out NULL (nothing to write); len 0 with out set: compression failed.
 */
bool bach_zpool_peek(struct bach_zpool *z, bool wait, const uint8_t **out,
		     size_t *len, void **tag);
/* Done with the oldest block's member. */
void bach_zpool_release(struct bach_zpool *z);

#endif
