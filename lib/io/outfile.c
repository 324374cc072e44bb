// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/io/outfile.h"

/*
 * The temporary files being written, for bach_outfile_remove_temps() in a
 * signal handler: fixed slots, so that the handler touches no memory that
 * is freed or reallocated. A slot's path is written while it is free and
 * published by its flag; the flag drops before the path is reused.
 */
#define MAX_TEMPS 8
static char temp_path[MAX_TEMPS][PATH_MAX];
static atomic_int temp_used[MAX_TEMPS];

void bach_outfile_hold_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void bach_outfile_release_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int bach_outfile_temp_register(const char *tmp)
{
	if (strlen(tmp) >= PATH_MAX)
		return -1;
	for (int i = 0; i < MAX_TEMPS; i++) {
		int free_slot = 0;

		if (atomic_load(&temp_used[i]) ||
		    !atomic_compare_exchange_strong(&temp_used[i], &free_slot,
						    -1))
			continue;
		strcpy(temp_path[i], tmp);
		atomic_store(&temp_used[i], 1);
		return i;
	}
	return -1;
}

void bach_outfile_temp_forget(int slot)
{
	if (slot >= 0)
		atomic_store(&temp_used[slot], 0);
}

void bach_outfile_remove_temps(void)
{
	for (int i = 0; i < MAX_TEMPS; i++)
		if (atomic_load(&temp_used[i]) == 1)
			unlink(temp_path[i]);
}

int bach_outfile_open(struct bach_outfile *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	struct stat st;
	sigset_t old;
	int err;

	f->fd = -1;
	f->slot = -1;
	f->path = f->tmp = f->direct = NULL;
	if (!strcmp(path, "-")) {
		f->fd = 1;
		return 0;
	}
	/* a device, FIFO or terminal is written in place, never replaced */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		f->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (f->fd < 0)
			return -errno;
		f->direct = strdup(path);
		if (!f->direct) {
			close(f->fd);
			return -ENOMEM;
		}
		return 0;
	}
	f->path = strdup(path);
	if (!f->path || asprintf(&f->tmp, "%.*s.%s.XXXXXX", dirlen, path,
				 slash ? slash + 1 : path) < 0) {
		free(f->path);
		f->path = f->tmp = NULL;
		return -ENOMEM;
	}
	bach_outfile_hold_signals(&old);
	f->fd = mkostemp(f->tmp, O_CLOEXEC);
	if (f->fd < 0) {
		err = -errno;
		bach_outfile_release_signals(&old);
		free(f->tmp);
		free(f->path);
		f->path = f->tmp = NULL;
		return err;
	}
	f->slot = bach_outfile_temp_register(f->tmp);
	bach_outfile_release_signals(&old);
	fchmod(f->fd, 0644);
	return 0;
}

int bach_outfile_commit(struct bach_outfile *f)
{
	int err = 0;

	if (f->direct) {
		if (close(f->fd) < 0)
			err = -errno;
		f->fd = -1;
		free(f->direct);
		f->direct = NULL;
		return err;
	}
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
	bach_outfile_temp_forget(f->slot);
	f->slot = -1;
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
	return 0;
}

void bach_outfile_abort(struct bach_outfile *f)
{
	if ((f->path || f->direct) && f->fd >= 0)
		close(f->fd);
	free(f->direct);
	f->direct = NULL;
	f->fd = -1;
	if (f->tmp) {
		unlink(f->tmp);
		bach_outfile_temp_forget(f->slot);
	}
	f->slot = -1;
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
}

const char *bach_outfile_name(const struct bach_outfile *f)
{
	if (f->direct)
		return f->direct;
	return f->path ? f->path : "<stdout>";
}

const char *bach_file_type(unsigned int mode)
{
	return S_ISREG(mode)	? "a regular file"
	       : S_ISDIR(mode)	? "a directory"
	       : S_ISLNK(mode)	? "a symbolic link"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket"
				: "of an unknown kind";
}

int bach_tmp_openat(int dirfd, const char *name, unsigned int mode,
		    unsigned int *what)
{
	/* O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) */
	int fd = openat(dirfd, name,
			O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
				O_CLOEXEC,
			(mode_t)mode),
	    err;
	struct stat st;

	if (fd < 0) {
		err = -errno;
		/* a symbolic link, a FIFO, a socket, a directory: say so */
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISREG(st.st_mode))
			goto refuse;
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		goto refuse;
	}
	/* emptied only now: O_TRUNC would have acted before the check */
	if (ftruncate(fd, 0) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
refuse:
	if (what)
		*what = st.st_mode;
	return -EEXIST;
}
