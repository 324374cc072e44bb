// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/outfile.h"

int bach_outfile_open(struct bach_outfile *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	int err;

	f->fd = -1;
	f->path = f->tmp = NULL;
	if (!strcmp(path, "-")) {
		f->fd = 1;
		return 0;
	}
	f->path = strdup(path);
	if (!f->path || asprintf(&f->tmp, "%.*s.%s.XXXXXX", dirlen, path,
				 slash ? slash + 1 : path) < 0) {
		free(f->path);
		f->path = f->tmp = NULL;
		return -ENOMEM;
	}
	f->fd = mkostemp(f->tmp, O_CLOEXEC);
	if (f->fd < 0) {
		err = -errno;
		free(f->tmp);
		free(f->path);
		f->path = f->tmp = NULL;
		return err;
	}
	fchmod(f->fd, 0644);
	return 0;
}

int bach_outfile_commit(struct bach_outfile *f)
{
	int err = 0;

	if (!f->path)
		return 0;
	if (fsync(f->fd) < 0 && errno != EINVAL)
		err = -errno;
	if (close(f->fd) < 0 && !err)
		err = -errno;
	f->fd = -1;
	if (!err && rename(f->tmp, f->path) < 0)
		err = -errno;
	if (err) {
		bach_outfile_abort(f);
		return err;
	}
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
	return 0;
}

void bach_outfile_abort(struct bach_outfile *f)
{
	if (f->path && f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
}

const char *bach_outfile_name(const struct bach_outfile *f)
{
	return f->path ? f->path : "<stdout>";
}
