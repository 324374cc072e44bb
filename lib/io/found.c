// SPDX-License-Identifier: MIT
/* Opening the files bach finds by name (lib/io/found.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/io/found.h"
#include "lib/io/outfile.h"

static int refuse(int err, mode_t mode, const char *shown, char *msg,
		  size_t len)
{
	if (S_ISLNK(mode))
		snprintf(msg, len, "%s: a symbolic link, not read", shown);
	else
		snprintf(msg, len, "%s: not a regular file (%s), not read",
			 shown, bach_file_type(mode));
	return err;
}

int bach_open_found(int dirfd, const char *name, const char *shown,
		    bool nofollow, struct stat *st, char *msg, size_t len)
{
	struct stat own;
	int fd, err;

	if (!shown)
		shown = name;
	if (!st)
		st = &own;
	/* O_NONBLOCK: a FIFO opens at once, writer or none, to be refused */
	fd = openat(dirfd, name,
		    O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
			    (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0) {
		err = -errno;
		/* a symbolic link (nofollow), a socket: say what it is */
		if ((err == -ELOOP || err == -ENXIO) &&
		    fstatat(dirfd, name, st,
			    nofollow ? AT_SYMLINK_NOFOLLOW : 0) == 0 &&
		    !S_ISREG(st->st_mode))
			return refuse(err, st->st_mode, shown, msg, len);
		snprintf(msg, len, "%s: %s", shown, strerror(-err));
		return err;
	}
	if (fstat(fd, st) < 0) {
		err = -errno;
		close(fd);
		snprintf(msg, len, "%s: %s", shown, strerror(-err));
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return refuse(-EINVAL, st->st_mode, shown, msg, len);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
