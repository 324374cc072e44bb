// SPDX-License-Identifier: MIT
/*
 * Streaming trace reader: raw .byu, gzip .byu.gz (one member, many
 * concatenated members, the blocked form with its EOF block), standard
 * input, and capture directories, delivered as blocks of whole records.
 *
 * This file holds the reader itself: made and freed, given its list of
 * files (a capture directory's closed segments in order, the directory
 * held under a shared lock), and what it tells of where it is. Reading the
 * current file block by block is lib/io/reader_read.c (which also keeps the
 * message of what went wrong), seeking lib/io/reader_seek.c, timing sidecars
 * lib/io/reader_times.c; they share lib/io/reader_state.h, and all of them call
 * down into lib/io/reader_read.c, never the other way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/index.h"
#include "bach/trace.h"
#include "lib/exit.h"
#include "lib/io/found.h"
#include "lib/io/reader_state.h"
#include "lib/io/timing.h"

int bach_exit_status(int err)
{
	if (err == 0)
		return EXIT_OK;
	return err == -BACH_EDATA ? EXIT_DATA : EXIT_USAGE;
}

struct bach_reader *bach_reader_new(void)
{
	struct bach_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->out = malloc(OUT_CAP);
	r->out_cap = OUT_CAP;
	r->in = malloc(IN_CAP);
	r->in_cap = IN_CAP;
	if (!r->out || !r->in) {
		free(r->out);
		free(r->in);
		free(r);
		return NULL;
	}
	r->fd = -1;
	r->limit = UINT64_MAX;
	gzin_init(&r->gz, r->in, IN_CAP, reader_gz_read, r, &r->file_eof,
		  &r->in_off, r->msg, sizeof(r->msg));
	return r;
}

static int push_path(struct bach_reader *r, const char *path, int kind)
{
	/* a second "-" would read what is left of the first: nothing */
	for (size_t i = 0; !strcmp(path, "-") && i < r->npaths; i++)
		if (!strcmp(r->paths[i], "-"))
			return reader_fail(
				r, -EINVAL,
				"-: standard input given twice: it can be read only once");
	if (r->npaths == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 8;
		char **p = realloc(r->paths, ncap * sizeof(*p));
		struct file_seek *fs;
		int *k;

		if (!p)
			return -ENOMEM;
		r->paths = p;
		k = realloc(r->kinds, ncap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		r->kinds = k;
		fs = realloc(r->seek, ncap * sizeof(*fs));
		if (!fs)
			return -ENOMEM;
		r->seek = fs;
		r->cap = ncap;
	}
	r->kinds[r->npaths] = kind;
	memset(&r->seek[r->npaths], 0, sizeof(r->seek[r->npaths]));
	r->paths[r->npaths] = strdup(path);
	if (!r->paths[r->npaths])
		return -ENOMEM;
	r->npaths++;
	return 0;
}

int bach_reader_add_as(struct bach_reader *r, const char *path,
		       enum bach_file_kind kind)
{
	if (strcmp(path, "-") && access(path, R_OK) < 0)
		return reader_fail(r, -errno, "%s: %s", path, strerror(errno));
	return push_path(r, path, (int)kind);
}

/*
 * bachd's retention removes no segment from a capture directory someone
 * holds a shared lock on (docs/bachd.md section 5): held from before the
 * segments are listed until the reader is freed. Best effort: a directory
 * that cannot be locked is read all the same.
 */
static void lock_capture(struct bach_reader *r, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int *v;

	if (fd < 0)
		return;
	v = realloc(r->locks, (r->nlocks + 1) * sizeof(*v));
	if (!v || flock(fd, LOCK_SH) < 0) {
		if (v)
			r->locks = v;
		close(fd);
		return;
	}
	r->locks = v;
	r->locks[r->nlocks++] = fd;
}

int bach_capture_file_add(struct bach_reader *r, const char *path)
{
	int err = push_path(r, path, KIND_AUTO);

	if (!err)
		r->seek[r->npaths - 1].found = true;
	return err;
}

int bach_reader_add(struct bach_reader *r, const char *path)
{
	struct stat st;
	char **segs;
	ssize_t n;
	int err = 0;

	if (strcmp(path, "-") == 0)
		return push_path(r, path, KIND_AUTO);
	if (stat(path, &st) < 0)
		return reader_fail(r, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (access(path, R_OK) < 0)
			return reader_fail(r, -errno, "%s: %s", path,
					   strerror(errno));
		return push_path(r, path, KIND_AUTO);
	}
	lock_capture(r, path);
	n = bach_capture_open(path, &segs, NULL, r->msg, sizeof(r->msg));
	if (n < 0)
		return r->err = (int)n;
	for (ssize_t i = 0; i < n; i++) {
		if (!err)
			err = bach_capture_file_add(r, segs[i]);
		free(segs[i]);
	}
	free(segs);
	if (err)
		return reader_fail(r, err, "%s: %s", path, strerror(-err));
	return 0;
}

void bach_reader_free(struct bach_reader *r)
{
	if (!r)
		return;
	reader_close_file(r);
	reader_zst_end(r);
	for (size_t i = 0; i < r->nlocks; i++)
		close(r->locks[i]);
	free(r->locks);
	for (size_t i = 0; i < r->npaths; i++) {
		free(r->paths[i]);
		bach_index_free(&r->seek[i].ix);
	}
	free(r->seek);
	free(r->paths);
	free(r->kinds);
	free(r->out);
	free(r->in);
	bach_times_free(r->times);
	free(r->tfile);
	free(r);
}

void bach_reader_no_map(struct bach_reader *r)
{
	(void)r; /* raw files are always read, never mapped */
}

const char *bach_reader_strerror(const struct bach_reader *r)
{
	return r->msg[0] ? r->msg : "no error";
}

uint64_t bach_reader_file_records(const struct bach_reader *r)
{
	return r->file_recs + to_skip(r);
}

uint64_t bach_reader_records(const struct bach_reader *r)
{
	return r->total_recs + to_skip(r);
}

size_t bach_reader_nfiles(const struct bach_reader *r)
{
	return r->npaths;
}

void bach_reader_info(const struct bach_reader *r, struct bach_file_info *fi)
{
	fi->kind = r->kind;
	fi->blocked = r->gz.blocked;
	fi->eof_block = r->gz.eof_block;
	fi->members = r->gz.members;
	fi->in_bytes =
		r->in_off - (r->kind == BACH_FILE_GZIP ? r->gz.zs.avail_in : 0);
	if (r->kind == BACH_FILE_ZSTD) {
		/* frames (the seek table's too), and the table ends it */
		fi->members = r->zs.frames + r->zs.tab_done;
		fi->eof_block = r->zs.tab_done;
		fi->in_bytes =
			r->in_off - (r->zs.zlen - r->zs.zpos) - r->zs.ahead;
	}
	fi->out_bytes = r->out_off - r->carry;
}
