// SPDX-License-Identifier: MIT
/*
 * Retention (docs/bachd.md section 5): keep_captures, keep_days and
 * keep_bytes for the output directory, run by the writer thread after each
 * rotation and now and then. The oldest go first: captures in name order
 * (their UTC start), segments in number order. Never removed: the open
 * segment (a *.part is never a candidate), and anything in a capture
 * someone is reading: readers (the replay driver, bach dump, verify, ...)
 * hold a shared flock on the capture directory, and retention skips a
 * capture it cannot lock exclusively at once.
 *
 * Each removal is a manifest event written (and synced) before the file
 * goes: a segment's in its own capture, a whole capture's in the running
 * one's. A crash in between leaves an event for a file still there, which
 * bach verify takes as it is.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bach/manifest.h"
#include "capture_priv.h"
#define LOG_PREFIX "retention"
#include "log.h"

struct rcap {
	char name[80];
	int fd;		  /* the capture directory, or -1 */
	bool running;	  /* this capture */
	bool busy;	  /* a reader holds its lock: left alone */
	bool touched;	  /* a segment went: sync the directory */
	unsigned nseg;	  /* closed segments left */
	unsigned removed; /* ... removed by this run */
	const char *why;  /* ... for this reason (the last one) */
	uint64_t bytes;	  /* every file's size, segments included */
};

struct rseg {
	struct rcap *cap;
	char name[64];
	uint64_t bytes;
	time_t mtime;
	bool gone;
};

struct rstate {
	struct capture *c;
	struct rcap *caps;
	size_t ncaps;
	struct rseg *segs;
	size_t nsegs;
	uint64_t total;
};

/* seg-NNNNNN.byu or seg-NNNNNN.byu.gz: a closed segment */
static bool closed_segment(const char *n)
{
	size_t len = strlen(n);

	if (strncmp(n, "seg-", 4) || len < 14)
		return false;
	for (int i = 4; i < 10; i++)
		if (n[i] < '0' || n[i] > '9')
			return false;
	return !strcmp(n + 10, ".byu") || !strcmp(n + 10, ".byu.gz");
}

/* seg-NNNNNN.byu.gz.gzi: a closed segment's index (bach/index.h) */
static bool segment_index(const char *n)
{
	char stem[32];
	size_t len = strlen(n);

	if (len < 4 || len - 4 >= sizeof(stem) || strcmp(n + len - 4, ".gzi"))
		return false;
	memcpy(stem, n, len - 4);
	stem[len - 4] = 0;
	return closed_segment(stem);
}

/* A removed segment's index goes with it: its bytes, or 0. */
static uint64_t remove_index(int dfd, const char *seg)
{
	char gzi[80];
	struct stat st;

	snprintf(gzi, sizeof(gzi), "%s.gzi", seg);
	if (fstatat(dfd, gzi, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || unlinkat(dfd, gzi, 0) < 0)
		return 0;
	return (uint64_t)st.st_size;
}

static int cmp_cap(const void *a, const void *b)
{
	return strcmp(((const struct rcap *)a)->name,
		      ((const struct rcap *)b)->name);
}

static int cmp_seg(const void *a, const void *b)
{
	const struct rseg *x = a, *y = b;

	if (x->cap != y->cap)
		return x->cap < y->cap ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * A directory stream over a duplicate of fd, from its start (a dup shares
 * the offset an earlier stream left); NULL with errno set.
 */
static DIR *dir_stream(int fd)
{
	int dfd = dup(fd), err;
	DIR *d;

	if (dfd < 0)
		return NULL;
	d = fdopendir(dfd);
	if (!d) {
		err = errno;
		close(dfd);
		errno = err;
		return NULL;
	}
	rewinddir(d);
	return d;
}

/* One capture directory's files (the caps array no longer moves). */
static int scan_capture(struct rstate *s, struct rcap *cap)
{
	DIR *d = dir_stream(cap->fd);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct stat st;
		struct rseg *v;

		if (fstatat(cap->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    !S_ISREG(st.st_mode))
			continue;
		cap->bytes += (uint64_t)st.st_size;
		s->total += (uint64_t)st.st_size;
		if (!closed_segment(de->d_name) ||
		    strlen(de->d_name) >= sizeof(s->segs->name))
			continue;
		if (!(s->nsegs & (s->nsegs + 1))) {
			v = realloc(s->segs, (s->nsegs + 1) * 2 * sizeof(*v));
			if (!v) {
				closedir(d);
				return -ENOMEM;
			}
			s->segs = v;
		}
		v = &s->segs[s->nsegs++];
		memset(v, 0, sizeof(*v));
		v->cap = cap;
		memcpy(v->name, de->d_name, strlen(de->d_name) + 1);
		v->bytes = (uint64_t)st.st_size;
		v->mtime = st.st_mtime;
		cap->nseg++;
	}
	closedir(d);
	return 0;
}

/* Every capture directory in the output directory, oldest first. */
static int scan(struct rstate *s)
{
	struct capture *c = s->c;
	DIR *d = dir_stream(c->out_fd);
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct stat st;
		struct rcap *v;
		int cfd;

		if (de->d_name[0] == '.' ||
		    strlen(de->d_name) >= sizeof(v->name))
			continue;
		cfd = openat(c->out_fd, de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		/* a capture directory is one that holds a manifest */
		if (fstatat(cfd, BACH_MANIFEST_NAME, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    !S_ISREG(st.st_mode)) {
			close(cfd);
			continue;
		}
		if (!(s->ncaps & (s->ncaps + 1))) {
			v = realloc(s->caps, (s->ncaps + 1) * 2 * sizeof(*v));
			if (!v) {
				close(cfd);
				err = -ENOMEM;
				break;
			}
			s->caps = v;
		}
		v = &s->caps[s->ncaps++];
		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", de->d_name);
		v->fd = cfd;
		v->running = !strcmp(de->d_name, c->capname);
		/* held until the end of the run: readers wait that long */
		v->busy = !v->running && flock(cfd, LOCK_EX | LOCK_NB) < 0;
	}
	closedir(d);
	if (err)
		return err;
	if (s->ncaps)
		qsort(s->caps, s->ncaps, sizeof(*s->caps), cmp_cap);
	for (size_t i = 0; i < s->ncaps && !err; i++)
		err = scan_capture(s, &s->caps[i]);
	if (!err && s->nsegs)
		qsort(s->segs, s->nsegs, sizeof(*s->segs), cmp_seg);
	return err;
}

/* Append an event to a capture's manifest (ours is the writer's own). */
static int note_segment(struct rstate *s, struct rseg *g, const char *why)
{
	struct capture *c = s->c;
	struct manifest m = { .fd = -1 };
	int err;

	if (g->cap->running) {
		err = manifest_retention_segment(&c->man, g->name, g->bytes,
						 why);
		return err ? err : manifest_sync(&c->man);
	}
	err = manifest_open(&m, g->cap->fd, false);
	if (!err)
		err = manifest_retention_segment(&m, g->name, g->bytes, why);
	if (!err)
		err = manifest_sync(&m);
	manifest_close(&m);
	return err;
}

static bool remove_segment(struct rstate *s, struct rseg *g, const char *why)
{
	struct capture *c = s->c;
	uint64_t ix;
	int err;

	if (g->gone || g->cap->busy)
		return false;
	err = note_segment(s, g, why);
	if (err) {
		log_warn("%s/%s/%s: not removed: cannot write its manifest: %s",
			 c->cfg.output, g->cap->name, g->name, strerror(-err));
		return false;
	}
	if (unlinkat(g->cap->fd, g->name, 0) < 0) {
		log_warn("%s/%s/%s: cannot remove: %s", c->cfg.output,
			 g->cap->name, g->name, strerror(errno));
		return false;
	}
	ix = remove_index(g->cap->fd, g->name);
	log_info("%s/%s/%s removed (%s): %llu bytes", c->cfg.output,
		 g->cap->name, g->name, why, (unsigned long long)g->bytes);
	g->cap->bytes -= ix;
	s->total -= ix;
	g->gone = true;
	g->cap->touched = true;
	g->cap->nseg--;
	g->cap->removed++;
	g->cap->why = why;
	g->cap->bytes -= g->bytes;
	s->total -= g->bytes;
	return true;
}

/*
 * A whole capture: its event in the running capture's manifest, then the
 * names bach makes in it, then the directory. Anything else in it stays,
 * and so does the directory (a warning says so).
 */
static bool remove_capture(struct rstate *s, struct rcap *cap, const char *why)
{
	static const char *const made[] = { BACH_MANIFEST_NAME,
					    "board-stream.bin" };
	struct capture *c = s->c;
	DIR *d;
	struct dirent *de;
	int err;

	if (cap->running || cap->busy || cap->fd < 0)
		return false;
	err = manifest_retention_capture(&c->man, cap->name, cap->nseg,
					 cap->bytes, why);
	if (!err)
		err = manifest_sync(&c->man);
	if (err)
		return false; /* the writer stops on it (exit 5) */
	d = dir_stream(cap->fd);
	while (d && (de = readdir(d))) {
		struct stat st;
		size_t len = strlen(de->d_name);

		if (fstatat(cap->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (closed_segment(de->d_name) || segment_index(de->d_name) ||
		    (!strncmp(de->d_name, "seg-", 4) && len > 5 &&
		     !strcmp(de->d_name + len - 5, ".part")))
			unlinkat(cap->fd, de->d_name, 0);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < sizeof(made) / sizeof(*made); i++)
		unlinkat(cap->fd, made[i], 0);
	close(cap->fd);
	cap->fd = -1;
	if (unlinkat(c->out_fd, cap->name, AT_REMOVEDIR) < 0)
		log_warn("%s/%s: emptied (%s) but not removed: %s",
			 c->cfg.output, cap->name, why, strerror(errno));
	else
		log_info("%s/%s removed (%s): %u segments, %llu bytes",
			 c->cfg.output, cap->name, why, cap->nseg,
			 (unsigned long long)cap->bytes);
	fsync(c->out_fd);
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].cap == cap)
			s->segs[i].gone = true;
	s->total -= cap->bytes;
	cap->nseg = 0;
	cap->bytes = 0;
	return true;
}

void retention_run(struct capture *c)
{
	const struct capture_config *cfg = &c->cfg;
	struct rstate s = { .c = c };
	size_t live;
	int err;

	if (!cfg->keep_bytes && !cfg->keep_days && !cfg->keep_captures)
		return;
	err = scan(&s);
	if (err) {
		log_warn("%s: cannot look: %s", cfg->output, strerror(-err));
		goto out;
	}
	live = s.ncaps;
	for (size_t i = 0;
	     cfg->keep_captures && i < s.ncaps && live > cfg->keep_captures;
	     i++)
		if (remove_capture(&s, &s.caps[i], "keep_captures"))
			live--;
	if (cfg->keep_days) {
		time_t cut = time(NULL) - (time_t)(cfg->keep_days * 86400);

		for (size_t i = 0; i < s.nsegs; i++)
			if (s.segs[i].mtime < cut)
				remove_segment(&s, &s.segs[i], "keep_days");
	}
	for (size_t i = 0;
	     cfg->keep_bytes && i < s.nsegs && s.total > cfg->keep_bytes; i++)
		remove_segment(&s, &s.segs[i], "keep_bytes");
	/* a finished capture retention emptied goes whole */
	for (size_t i = 0; i < s.ncaps; i++) {
		struct rcap *cap = &s.caps[i];

		if (cap->fd >= 0 && cap->touched && !cap->nseg && !cap->running)
			remove_capture(&s, cap, cap->why);
	}
out:
	for (size_t i = 0; i < s.ncaps; i++) {
		if (s.caps[i].fd < 0)
			continue;
		if (s.caps[i].touched)
			fsync(s.caps[i].fd);
		close(s.caps[i].fd); /* and its lock */
	}
	free(s.caps);
	free(s.segs);
}
