/* SPDX-License-Identifier: MIT */
/*
 * The synthetic Pentium workload behind `bach gen` and the fake board.
 *
 * A generator is a pure function of its seed: bach_gen_fill() called with
 * any sequence of block sizes yields the same record stream, so a capture
 * from the fake board and `bach gen` with the same seed agree record for
 * record. The stream never contains INVALID records.
 */
#ifndef BACH_GEN_H
#define BACH_GEN_H

#include <stddef.h>
#include <stdint.h>

#define BACH_GEN_MAX_EVENT 64 /* records one workload event can produce */
#define BACH_GEN_HOT	   64 /* heap lines in the working set */
#define BACH_GEN_RND	   64 /* random numbers drawn ahead */

struct bach_gen {
	uint64_t s[4];	      /* xoshiro256** state */
	uint32_t pc;	      /* code fetch pointer */
	uint32_t sp;	      /* stack pointer */
	uint32_t arr, stride; /* array walk */
	uint32_t arr_left;
	uint32_t loop_start, loop_left;
	uint32_t hot[BACH_GEN_HOT]; /* the heap's working set, line addresses */
	uint32_t hot_next;
	uint64_t rnd[BACH_GEN_RND]; /* drawn from s ahead of use: */
	unsigned rnd_pos, rnd_len;  /* [rnd_pos, rnd_len) are unused */
	uint8_t carry[BACH_GEN_MAX_EVENT * 6];
	size_t carry_len, carry_off; /* bytes */
};

void bach_gen_init(struct bach_gen *g, uint64_t seed);

/* Write the next n records (n * 6 bytes) to out. */
void bach_gen_fill(struct bach_gen *g, uint8_t *out, size_t n);

#endif
