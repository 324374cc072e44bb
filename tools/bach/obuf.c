// SPDX-License-Identifier: MIT
/*
 * struct obuf: a command's output to a file descriptor, gathered in a
 * buffer and written in large writes (bach dump, bach convert's exports),
 * with a sticky error checked once at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"

int obuf_init(struct obuf *o, int fd, size_t cap)
{
	o->fd = fd;
	o->len = 0;
	o->cap = cap;
	o->err = 0;
	o->buf = malloc(cap);
	return o->buf ? 0 : -ENOMEM;
}

int obuf_flush(struct obuf *o)
{
	size_t off = 0;

	while (off < o->len && !o->err) {
		ssize_t n = write(o->fd, o->buf + off, o->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			o->err = -errno;
		else
			off += (size_t)n;
	}
	o->len = 0;
	return o->err;
}

void obuf_free(struct obuf *o)
{
	free(o->buf);
	o->buf = NULL;
}
