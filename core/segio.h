/* SPDX-License-Identifier: MIT */
/*
 * Appending to the open segment: data is copied into buffers, each written
 * (when full, or pushed after a whole block) with io_uring, a bounded number of
 * writes in flight (after liburing's io-uring-cp: each request owns its buffer,
 * requeued on -EAGAIN and short writes, every one waited for before the
 * file is closed). Where io_uring is refused (a seccomp policy, an old
 * kernel) the same buffers go through pwrite(), and the caller logs it.
 * Errors are sticky.
 */
#ifndef BACHD_SEGIO_H
#define BACHD_SEGIO_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEGIO_BUF (1u << 20)
/*
 * Writeback of every SEGIO_KICK bytes whose writes completed is started
 * at once (sync_file_range), not left for the close's fdatasync or the
 * kernel's flusher: the disk works while the capture runs.
 */
#define SEGIO_KICK (8u << 20)

struct segio_buf {
	uint8_t *p;
	size_t len;   /* bytes in it */
	size_t done;  /* bytes of it written so far */
	uint64_t off; /* file offset of p[0] */
	bool busy;    /* a write is in flight */
};

struct segio {
	int fd;
	bool uring;
	struct io_uring ring;
	unsigned depth;
	struct segio_buf *bufs;
	unsigned cur; /* buffer being filled */
	unsigned inflight;
	uint64_t off;	 /* file offset of the next byte appended */
	uint64_t synced; /* bytes known written (completed) */
	uint64_t kicked; /* writeback started for the bytes below */
	uint32_t crc;	 /* CRC-32 of the file so far */
	int err;
	int delay_ms; /* test hook: sleep before every write */
};

/*
 * depth: buffers (and writes in flight). try_uring false forces pwrite.
 * *uring_err gets io_uring's refusal (-errno) when it fell back, else 0.
 */
int segio_init(struct segio *io, unsigned depth, bool try_uring,
	       int *uring_err);
void segio_free(struct segio *io);

/* Start appending to a new, empty file. */
void segio_attach(struct segio *io, int fd);
int segio_append(struct segio *io, const void *p, size_t len);
/* Send what was appended to the kernel now, without waiting for it. */
int segio_push(struct segio *io);
/* Write everything appended and wait for it. */
int segio_flush(struct segio *io);

#endif
