/* SPDX-License-Identifier: MIT */
/*
 * A raw deflate (RFC 1951) encoder that knows the input is 6-byte records:
 * whole records are looked up by a hash of the record at record boundaries,
 * and between them only a few short distances (the last records, the last
 * match's distance) are tried. One dynamic (or fixed, when smaller) Huffman
 * block per call. The output is standard deflate that any inflater reads.
 * It is made for records: bytes that are not (text, code) come out larger
 * than a general encoder makes them, though still correct.
 */
#ifndef BACH_RECDEFLATE_H
#define BACH_RECDEFLATE_H

#include <stddef.h>
#include <stdint.h>

/* Largest input of one call. */
#define BACH_RECDEFLATE_MAX_INPUT 65536

#define BACH_RECDEFLATE_MIN_LEVEL     1
#define BACH_RECDEFLATE_MAX_LEVEL     2
#define BACH_RECDEFLATE_DEFAULT_LEVEL 2

struct bach_recdeflate;

/* level BACH_RECDEFLATE_MIN_LEVEL..MAX_LEVEL; NULL when out of memory. */
struct bach_recdeflate *bach_recdeflate_new(int level);
void bach_recdeflate_free(struct bach_recdeflate *c);

/*
 * Compress src[0..len) (len <= BACH_RECDEFLATE_MAX_INPUT; records are
 * assumed to start at src, any bytes are coded right) into one final
 * deflate block at dst. Returns its size, or 0, with dst untouched, when
 * that size would leave less than 8 of the cap bytes free (the encoder
 * stores 8 bytes at a time) or len is too large.
 */
size_t bach_recdeflate(struct bach_recdeflate *c, const uint8_t *src,
		       size_t len, uint8_t *dst, size_t cap);

#endif
