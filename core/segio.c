// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "segio.h"

int segio_init(struct segio *io, unsigned depth, bool try_uring, int *uring_err)
{
	memset(io, 0, sizeof(*io));
	io->fd = -1;
	io->depth = depth < 2 ? 2 : depth;
	*uring_err = 0;
	io->bufs = calloc(io->depth, sizeof(*io->bufs));
	if (!io->bufs)
		return -ENOMEM;
	for (unsigned i = 0; i < io->depth; i++) {
		if (posix_memalign((void **)&io->bufs[i].p, 4096, SEGIO_BUF))
			return -ENOMEM;
	}
	if (try_uring) {
		int ret = io_uring_queue_init(io->depth, &io->ring, 0);

		if (ret == 0)
			io->uring = true;
		else
			*uring_err = ret;
	}
	return 0;
}

void segio_free(struct segio *io)
{
	if (io->uring)
		io_uring_queue_exit(&io->ring);
	for (unsigned i = 0; io->bufs && i < io->depth; i++)
		free(io->bufs[i].p);
	free(io->bufs);
	io->bufs = NULL;
}

void segio_attach(struct segio *io, int fd)
{
	io->fd = fd;
	io->off = 0;
	io->synced = 0;
	io->kicked = 0;
	io->crc = 0;
	io->cur = 0;
	for (unsigned i = 0; i < io->depth; i++)
		io->bufs[i].len = io->bufs[i].done = 0;
}

static void test_delay(struct segio *io)
{
	struct timespec ts = { io->delay_ms / 1000,
			       (long)(io->delay_ms % 1000) * 1000000L };

	if (io->delay_ms)
		nanosleep(&ts, NULL);
}

static void queue_write(struct segio *io, unsigned i)
{
	struct segio_buf *b = &io->bufs[i];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);

	/* depth buffers, depth entries: there is always one */
	io_uring_prep_write(sqe, io->fd, b->p + b->done,
			    (unsigned)(b->len - b->done), b->off + b->done);
	io_uring_sqe_set_data64(sqe, i);
	b->busy = true;
	io->inflight++;
}

/* Reap one completion (waiting for it); requeue what is unfinished. */
static int reap(struct segio *io)
{
	struct io_uring_cqe *cqe;
	struct segio_buf *b;
	unsigned i;
	int ret, res;

	ret = io_uring_wait_cqe(&io->ring, &cqe);
	if (ret < 0)
		return ret == -EINTR ? 0 : ret;
	i = (unsigned)io_uring_cqe_get_data64(cqe);
	res = cqe->res;
	io_uring_cqe_seen(&io->ring, cqe);
	b = &io->bufs[i];
	io->inflight--;
	b->busy = false;
	if (res == -EAGAIN || res == -EINTR) {
		queue_write(io, i);
		io_uring_submit(&io->ring);
		return 0;
	}
	if (res < 0) {
		if (!io->err)
			io->err = res;
		return res;
	}
	b->done += (size_t)res;
	if (b->done < b->len) { /* short write: the rest again */
		if (res == 0) {
			if (!io->err)
				io->err = -EIO;
			return -EIO;
		}
		queue_write(io, i);
		io_uring_submit(&io->ring);
		return 0;
	}
	io->synced += b->len;
	b->len = b->done = 0;
	return 0;
}

static int write_sync(struct segio *io, struct segio_buf *b)
{
	while (b->done < b->len) {
		ssize_t n = pwrite(io->fd, b->p + b->done, b->len - b->done,
				   (off_t)(b->off + b->done));

		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			io->err = n < 0 ? -errno : -EIO;
			return io->err;
		}
		b->done += (size_t)n;
	}
	io->synced += b->len;
	b->len = b->done = 0;
	return 0;
}

/*
 * Start writeback of the whole SEGIO_KICK pieces below the first byte not
 * yet written (the oldest write in flight, else the buffer being filled).
 * Advisory: an error here shows again at fdatasync.
 */
static void kick_writeback(struct segio *io)
{
	uint64_t done = io->off - io->bufs[io->cur].len;

	for (unsigned i = 0; i < io->depth; i++)
		if (io->bufs[i].busy && io->bufs[i].off < done)
			done = io->bufs[i].off;
	while (done - io->kicked >= SEGIO_KICK && done >= io->kicked) {
		sync_file_range(io->fd, (off_t)io->kicked, SEGIO_KICK,
				SYNC_FILE_RANGE_WRITE);
		io->kicked += SEGIO_KICK;
	}
}

/* Write the buffer being filled; move on to a free one. */
static int submit_cur(struct segio *io)
{
	struct segio_buf *b = &io->bufs[io->cur];

	if (!b->len)
		return io->err;
	test_delay(io);
	b->off = io->off - b->len;
	b->done = 0;
	if (!io->uring) {
		write_sync(io, b);
		kick_writeback(io);
		return io->err;
	}
	queue_write(io, io->cur);
	io_uring_submit(&io->ring);
	io->cur = (io->cur + 1) % io->depth;
	while (io->bufs[io->cur].busy && !io->err)
		reap(io);
	kick_writeback(io);
	return io->err;
}

int segio_append(struct segio *io, const void *p, size_t len)
{
	const uint8_t *s = p;

	if (io->err)
		return io->err;
	io->crc = libdeflate_crc32(io->crc, p, len);
	while (len) {
		struct segio_buf *b = &io->bufs[io->cur];
		size_t k = SEGIO_BUF - b->len < len ? SEGIO_BUF - b->len : len;

		memcpy(b->p + b->len, s, k);
		b->len += k;
		io->off += k;
		s += k;
		len -= k;
		if (b->len == SEGIO_BUF && submit_cur(io))
			return io->err;
	}
	return 0;
}

int segio_flush(struct segio *io)
{
	submit_cur(io);
	/* every write in flight is waited for, failed or not */
	while (io->uring && io->inflight) {
		int ret = reap(io);

		if (ret < 0 && !io->err) {
			io->err = ret;
			break;
		}
	}
	return io->err;
}

int segio_push(struct segio *io)
{
	return io->err ? io->err : submit_cur(io);
}
