/* SPDX-License-Identifier: MIT */
/*
 * A pool of threads compressing whole blocks into blocked-gzip members,
 * finished in submission order. Used by the trace writer and by bachd's
 * segment writer. The caller owns the input until the block's result has
 * been taken; the pool owns the output buffers.
 *
 * One thread submits and takes; any number of workers compress. Locks are
 * taken once per 64 KiB block, never per record.
 */
#ifndef BACH_ZPOOL_H
#define BACH_ZPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bach/trace.h"

struct bach_zpool;

/*
 * threads: 0 compresses in the caller's thread at submit time; depth:
 * blocks that may be pending at once. NULL when out of memory or when a
 * thread cannot be started.
 */
struct bach_zpool *bach_zpool_new(int threads, size_t depth,
				  enum bach_deflate_backend backend, int level);
void bach_zpool_free(struct bach_zpool *z);

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
 * The oldest block's member, if finished (or, with wait, once finished):
 * true with out, len and tag set, valid until bach_zpool_release(); false
 * when nothing is pending, or when !wait and the oldest is not done.
 */
bool bach_zpool_peek(struct bach_zpool *z, bool wait, const uint8_t **out,
		     size_t *len, void **tag);
/* Done with the oldest block's member. */
void bach_zpool_release(struct bach_zpool *z);

#endif
