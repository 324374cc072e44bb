/* SPDX-License-Identifier: MIT */
/*
 * Inflating gzip input member after member (library-internal): one member
 * or many concatenated, the blocked form too, with a damaged or cut member
 * named by its byte offset. The one loop behind the trace reader
 * (lib/io/reader_read.c) and the importers' gzip input (lib/formats/import.c);
 * each brings its own input buffer, the read that fills it, and its message
 * buffer.
 */
#ifndef BACH_GZIN_H
#define BACH_GZIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

struct gzin {
	z_stream zs;
	bool zinit;
	bool in_member;
	uint64_t member_start; /* file offset of the member being read */
	uint64_t members;      /* members read whole */
	bool blocked;	       /* the first member carried the BC field */
	bool eof_block;	       /* the last member was an empty blocked one */
	bool last_bc;	       /* the last member carried the BC field */
	bool member_bc;	       /* the member being read carries it */
	int member_len;	       /* its size as BC gives it */
	struct libdeflate_decompressor *ld; /* whole blocked members */
	size_t good_made; /* output of whole members in the last call */

	/* the owner's input: set once */
	uint8_t *in; /* in_cap bytes */
	size_t in_cap;
	/* read up to len bytes: bytes, 0 at the end, or -errno (message set) */
	ssize_t (*read)(void *ctx, uint8_t *buf, size_t len);
	void *ctx;
	const bool *eof;     /* the owner's: its read has returned 0 */
	const uint64_t *off; /* the owner's: bytes its read has returned */
	char *msg;	     /* where a message goes */
	size_t msglen;

	const char *name; /* the file, in messages: set per file */
};

/* The owner's input, read and message buffer (the fields above), once. */
void gzin_init(struct gzin *g, uint8_t *in, size_t in_cap,
	       ssize_t (*read)(void *ctx, uint8_t *buf, size_t len), void *ctx,
	       const bool *eof, const uint64_t *off, char *msg, size_t msglen);

/* A new file (or a seek to a member's start): nothing at hand yet. */
void gzin_restart(struct gzin *g);

/*
 * Inflate into dst until cap bytes are made or the input ends cleanly
 * after a member: the bytes made, or -errno with the message set (a
 * member cut short or damaged, named by its offset; good_made then says
 * how much of dst came from members that ended whole, checked by their
 * CRC).
 */
ssize_t gzin_inflate(struct gzin *g, uint8_t *dst, size_t cap);

void gzin_end(struct gzin *g);

#endif
