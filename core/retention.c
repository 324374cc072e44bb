// SPDX-License-Identifier: MIT
/*
 * Retention (docs/bachd.md section 5): keep_captures, keep_days and
 * keep_bytes for the output directory, run by the writer thread after each
 * rotation and now and then. The oldest go first: captures in name order
 * (their UTC start), segments in number order. A segment is one unit with
 * the files beside it that bear its number (its timing sidecar and member
 * index): they are counted together and removed together, the segment
 * last, so that a crash in between never leaves a sidecar without its
 * segment. Never removed: the open segment (a *.part is never a
 * candidate), the running capture's newest closed segment (a limit it
 * cannot meet is logged and shown in the status and metrics instead), and
 * anything in a capture someone is reading: readers (the replay driver,
 * bach dump, verify, ...) hold a shared flock on the capture directory,
 * and retention skips a capture it cannot lock exclusively at once.
 *
 * Each removal is a manifest event written (and synced) before the files
 * go: a segment's in its own capture, a whole capture's in the running
 * one's. A crash in between leaves an event for a file still there, which
 * bach verify takes as it is (and the next run removes it again).
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

#include "capture_priv.h"
#include "lib/io/manifest.h"
#define LOG_PREFIX "retention"
#include "lib/options.h"
#include "log.h"

/* The names bach makes for segment number N in a capture directory. */
enum seg_kind {
	K_NONE,
	K_SEG,	     /* seg-NNNNNN.byu, .byu.gz: a closed segment */
	K_PART,	     /* ... .part: the open segment, or one not recovered */
	K_INDEX,     /* seg-NNNNNN.byu.gz.gzi: its member index */
	K_INDEX_TMP, /* .seg-NNNNNN.byu.gz.gzi.tmp: an index being written */
	K_TIME,	     /* seg-NNNNNN.time.gz: its timing sidecar */
	K_TIME_PART, /* seg-NNNNNN.time.gz.part: a sidecar being written */
};

struct rcap {
	char name[80];
	int fd;		  /* the capture directory, or -1 */
	bool running;	  /* this capture */
	bool busy;	  /* a reader holds its lock: left alone */
	bool touched;	  /* a file went: sync the directory */
	unsigned nseg;	  /* closed segments left */
	unsigned removed; /* ... removed by this run */
	const char *why;  /* ... for this reason (the last one) */
	uint64_t bytes;	  /* every file's size, segments included */
	uint64_t own;	  /* ... of the names bach makes (what goes) */
};

/* A file of a segment's unit. */
struct rfile {
	struct rcap *cap;
	unsigned long num;
	enum seg_kind kind;
	uint64_t bytes;
	time_t mtime;
	char name[72];
};

/* A segment's unit: the files that bear its number. */
struct rseg {
	struct rcap *cap;
	const struct rfile *f; /* its files, in s->files */
	size_t nf;
	const char *seg; /* the closed segment's name, or NULL: none */
	bool part;	 /* a .part of the same number is there */
	bool newest;	 /* the running capture's newest closed segment */
	bool gone;
	uint64_t bytes; /* of the files that go with it */
	time_t mtime;	/* the closed segment's */
};

struct rstate {
	struct capture *c;
	struct rcap *caps;
	size_t ncaps;
	struct rfile *files;
	size_t nfiles;
	struct rseg *segs;
	size_t nsegs;
	uint64_t total;
	unsigned busy;	  /* captures left alone: being read */
	const char *held; /* the newest closed segment a limit wanted */
	bool held_days;	  /* ... keep_days did */
};

/*
 * What a name in a capture directory is, and its segment number: the
 * number's digits (at least six), then a suffix bach makes.
 */
static enum seg_kind seg_kind(const char *n, unsigned long *num)
{
	static const struct {
		const char *sfx;
		enum seg_kind kind;
	} sfx[] = {
		{ ".byu", K_SEG },
		{ ".byu.gz", K_SEG },
		{ ".byu.zst", K_SEG },
		{ ".byu.zst.part", K_PART },
		{ ".byu.part", K_PART },
		{ ".byu.gz.part", K_PART },
		{ ".byu.gzi", K_INDEX },
		{ ".byu.gz.gzi", K_INDEX },
		{ ".byu.gzi.tmp", K_INDEX_TMP },
		{ ".byu.gz.gzi.tmp", K_INDEX_TMP },
		{ ".time.gz", K_TIME },
		{ ".time.gz.part", K_TIME_PART },
	};
	bool dot = n[0] == '.';
	const char *p = n + dot, *e;

	if (strncmp(p, "seg-", 4))
		return K_NONE;
	p += 4;
	for (e = p; *e >= '0' && *e <= '9'; e++)
		;
	if (e - p < 6 || e - p > 9)
		return K_NONE;
	*num = strtoul(p, NULL, 10);
	for (size_t i = 0; i < sizeof(sfx) / sizeof(*sfx); i++)
		if (!strcmp(e, sfx[i].sfx))
			return dot == (sfx[i].kind == K_INDEX_TMP) ? sfx[i].kind
								   : K_NONE;
	return K_NONE;
}

/* The files a removed unit takes with it: all but an open segment's. */
static bool goes_with(const struct rseg *g, const struct rfile *f)
{
	return f->kind != K_PART && !(f->kind == K_TIME_PART && g->part);
}

static int cmp_cap(const void *a, const void *b)
{
	return strcmp(((const struct rcap *)a)->name,
		      ((const struct rcap *)b)->name);
}

static int cmp_file(const void *a, const void *b)
{
	const struct rfile *x = a, *y = b;

	if (x->cap != y->cap)
		return x->cap < y->cap ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return (int)x->kind - (int)y->kind;
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
		struct rfile *v;
		unsigned long num;
		enum seg_kind kind;

		if (fstatat(cap->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    !S_ISREG(st.st_mode))
			continue;
		cap->bytes += (uint64_t)st.st_size;
		s->total += (uint64_t)st.st_size;
		kind = seg_kind(de->d_name, &num);
		if (kind != K_NONE || !strcmp(de->d_name, BACH_MANIFEST_NAME) ||
		    !strcmp(de->d_name, "board-stream.bin"))
			cap->own += (uint64_t)st.st_size;
		if (kind == K_NONE || strlen(de->d_name) >= sizeof(v->name))
			continue;
		if (!(s->nfiles & (s->nfiles + 1))) {
			v = realloc(s->files, (s->nfiles + 1) * 2 * sizeof(*v));
			if (!v) {
				closedir(d);
				return -ENOMEM;
			}
			s->files = v;
		}
		v = &s->files[s->nfiles++];
		v->cap = cap;
		v->num = num;
		v->kind = kind;
		v->bytes = (uint64_t)st.st_size;
		v->mtime = st.st_mtime;
		memcpy(v->name, de->d_name, strlen(de->d_name) + 1);
	}
	closedir(d);
	return 0;
}

/* The files, grouped by capture and number into units, oldest first. */
static int units(struct rstate *s)
{
	struct rseg *newest = NULL;

	if (!s->nfiles)
		return 0;
	qsort(s->files, s->nfiles, sizeof(*s->files), cmp_file);
	s->segs = calloc(s->nfiles, sizeof(*s->segs));
	if (!s->segs)
		return -ENOMEM;
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct rfile *f = &s->files[i];
		struct rseg *g = s->nsegs ? &s->segs[s->nsegs - 1] : NULL;

		if (!g || g->cap != f->cap || g->f->num != f->num) {
			g = &s->segs[s->nsegs++];
			g->cap = f->cap;
			g->f = f;
		}
		g->nf++;
		if (f->kind == K_SEG && !g->seg) {
			g->seg = f->name;
			g->mtime = f->mtime;
			g->cap->nseg++;
		}
		g->part |= f->kind == K_PART;
	}
	for (size_t i = 0; i < s->nsegs; i++) {
		struct rseg *g = &s->segs[i];

		for (size_t k = 0; k < g->nf; k++)
			if (goes_with(g, &g->f[k]))
				g->bytes += g->f[k].bytes;
		if (g->cap->running && g->seg)
			newest = g;
	}
	if (newest)
		newest->newest = true;
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
		s->busy += v->busy;
	}
	closedir(d);
	if (err)
		return err;
	if (s->ncaps)
		qsort(s->caps, s->ncaps, sizeof(*s->caps), cmp_cap);
	for (size_t i = 0; i < s->ncaps && !err; i++)
		err = scan_capture(s, &s->caps[i]);
	return err ? err : units(s);
}

/* Append an event to a capture's manifest (ours is the writer's own). */
static int note_segment(struct rstate *s, struct rseg *g, const char *why)
{
	struct capture *c = s->c;
	struct manifest m = { .fd = -1 };
	int err;

	if (g->cap->running) {
		err = manifest_retention_segment(&c->wr.man, g->seg, g->bytes,
						 why);
		return err ? err : manifest_sync(&c->wr.man);
	}
	err = manifest_open(&m, g->cap->fd, false);
	if (!err)
		err = manifest_retention_segment(&m, g->seg, g->bytes, why);
	if (!err)
		err = manifest_sync(&m);
	manifest_close(&m);
	return err;
}

/*
 * Unlink the files that go with a unit, the closed segment last; false
 * (and the segment still there) when one could not be removed.
 */
static bool unlink_unit(struct rstate *s, struct rseg *g)
{
	const char *out = s->c->cfg.output;

	for (int last = 0; last < 2; last++)
		for (size_t k = 0; k < g->nf; k++) {
			const struct rfile *f = &g->f[k];

			if (!goes_with(g, f) || (f->kind == K_SEG) != last)
				continue;
			if (unlinkat(g->cap->fd, f->name, 0) < 0 &&
			    errno != ENOENT) {
				/* the segment stays while a companion does */
				log_warn("%s/%s/%s: cannot remove: %s", out,
					 g->cap->name, f->name,
					 strerror(errno));
				return false;
			}
			g->cap->touched = true;
		}
	return true;
}

/* A closed segment and the files that go with it, for a limit. */
static bool remove_segment(struct rstate *s, struct rseg *g, const char *why)
{
	struct capture *c = s->c;
	int err;

	if (g->gone || g->cap->busy || !g->seg)
		return false;
	if (g->newest) {
		/* the limit cannot be met: said once the run is over */
		s->held = g->seg;
		s->held_days |= !strcmp(why, "keep_days");
		return false;
	}
	err = note_segment(s, g, why);
	if (err) {
		log_warn("%s/%s/%s: not removed: cannot write its manifest: %s",
			 c->cfg.output, g->cap->name, g->seg, strerror(-err));
		return false;
	}
	if (!unlink_unit(s, g))
		return false;
	log_info("%s/%s/%s removed (%s): %llu bytes with its companions",
		 c->cfg.output, g->cap->name, g->seg, why,
		 (unsigned long long)g->bytes);
	g->gone = true;
	g->cap->nseg--;
	g->cap->removed++;
	g->cap->why = why;
	g->cap->bytes -= g->bytes;
	g->cap->own -= g->bytes;
	s->total -= g->bytes;
	return true;
}

/*
 * A sidecar or index whose segment is gone (an older bach's retention, a
 * .part recovery removed): nothing reads it, and it counts against
 * keep_bytes for ever. It goes without an event: it was no segment.
 */
static void remove_orphan(struct rstate *s, struct rseg *g)
{
	if (g->gone || g->cap->busy || g->seg || g->part)
		return;
	if (!unlink_unit(s, g))
		return;
	for (size_t k = 0; k < g->nf; k++)
		log_notice("%s/%s/%s: removed: its segment is gone",
			   s->c->cfg.output, g->cap->name, g->f[k].name);
	g->gone = true;
	g->cap->bytes -= g->bytes;
	g->cap->own -= g->bytes;
	s->total -= g->bytes;
}

/*
 * A whole capture: its event in the running capture's manifest, then the
 * names bach makes in it (each segment's companions before the segments,
 * the manifest last), then the directory. Anything else in it stays, and
 * so does the directory (a warning says so).
 */
static bool remove_capture(struct rstate *s, struct rcap *cap, const char *why)
{
	static const char *const made[] = { "board-stream.bin",
					    BACH_MANIFEST_NAME };
	struct capture *c = s->c;
	int err;

	if (cap->running || cap->busy || cap->fd < 0)
		return false;
	err = manifest_retention_capture(&c->wr.man, cap->name, cap->nseg,
					 cap->own, why);
	if (!err)
		err = manifest_sync(&c->wr.man);
	if (err)
		return false; /* the writer stops on it (exit 5) */
	for (int pass = 0; pass < 2; pass++) {
		DIR *d = dir_stream(cap->fd);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			struct stat st;
			unsigned long num;
			enum seg_kind kind = seg_kind(de->d_name, &num);

			if (kind == K_NONE ||
			    (kind == K_SEG || kind == K_PART) != pass ||
			    fstatat(cap->fd, de->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISREG(st.st_mode))
				continue;
			unlinkat(cap->fd, de->d_name, 0);
		}
		if (d)
			closedir(d);
	}
	for (size_t i = 0; i < sizeof(made) / sizeof(*made); i++)
		unlinkat(cap->fd, made[i], 0);
	close(cap->fd);
	cap->fd = -1;
	if (unlinkat(c->out_fd, cap->name, AT_REMOVEDIR) < 0)
		log_warn("%s/%s: emptied (%s) but not removed: %s",
			 c->cfg.output, cap->name, why, strerror(errno));
	else
		log_info("%s/%s removed (%s): %u segment%s, %llu bytes",
			 c->cfg.output, cap->name, why, cap->nseg,
			 bach_s(cap->nseg), (unsigned long long)cap->own);
	fsync(c->out_fd);
	for (size_t i = 0; i < s->nsegs; i++)
		if (s->segs[i].cap == cap)
			s->segs[i].gone = true;
	s->total -= cap->own;
	cap->bytes -= cap->own;
	cap->own = 0;
	cap->nseg = 0;
	return true;
}

/*
 * What the run could not do, in the status and metrics (the writer's
 * figures), and in the log when it changes: keep_bytes not met, the
 * running capture's newest closed segment kept against a limit.
 */
static void report(struct rstate *s)
{
	struct capture *c = s->c;
	const struct capture_config *cfg = &c->cfg;
	uint64_t over = cfg->keep_bytes && s->total > cfg->keep_bytes
				? s->total - cfg->keep_bytes
				: 0;
	uint64_t was = atomic_load(&c->sh.retention_over);
	char busy[64] = "";

	if (s->busy)
		snprintf(busy, sizeof(busy), "; %u capture%s being read",
			 s->busy, bach_s(s->busy));
	if (over && !was)
		log_warn(
			"%s: keep_bytes is %llu, %llu bytes remain: the open segment and the running capture's newest closed segment%s%s are never removed%s",
			cfg->output, (unsigned long long)cfg->keep_bytes,
			(unsigned long long)s->total, s->held ? " " : "",
			s->held ? s->held : "", busy);
	else if (!over && was)
		log_notice("%s: within keep_bytes again (%llu bytes)",
			   cfg->output, (unsigned long long)s->total);
	if (s->held_days && strcmp(c->wr.retention_held, s->held))
		log_warn(
			"%s/%s/%s: older than keep_days, kept: the running capture's newest closed segment is never removed",
			cfg->output, c->capname, s->held);
	snprintf(c->wr.retention_held, sizeof(c->wr.retention_held), "%s",
		 s->held_days ? s->held : "");
	atomic_store(&c->sh.retention_over, over);
	atomic_store(&c->sh.retention_kept, s->held != NULL);
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
	for (size_t i = 0; i < s.nsegs; i++)
		remove_orphan(&s, &s.segs[i]);
	live = s.ncaps;
	for (size_t i = 0;
	     cfg->keep_captures && i < s.ncaps && live > cfg->keep_captures;
	     i++)
		if (remove_capture(&s, &s.caps[i], "keep_captures"))
			live--;
	if (cfg->keep_days) {
		time_t cut = time(NULL) - (time_t)(cfg->keep_days * 86400);

		for (size_t i = 0; i < s.nsegs; i++)
			if (s.segs[i].seg && s.segs[i].mtime < cut)
				remove_segment(&s, &s.segs[i], "keep_days");
	}
	for (size_t i = 0;
	     cfg->keep_bytes && i < s.nsegs && s.total > cfg->keep_bytes; i++)
		remove_segment(&s, &s.segs[i], "keep_bytes");
	/* a finished capture retention emptied goes whole */
	for (size_t i = 0; i < s.ncaps; i++) {
		struct rcap *cap = &s.caps[i];

		if (cap->fd >= 0 && cap->removed && !cap->nseg && !cap->running)
			remove_capture(&s, cap, cap->why);
	}
	report(&s);
out:
	for (size_t i = 0; i < s.ncaps; i++) {
		if (s.caps[i].fd < 0)
			continue;
		if (s.caps[i].touched)
			fsync(s.caps[i].fd);
		close(s.caps[i].fd); /* and its lock */
	}
	free(s.caps);
	free(s.files);
	free(s.segs);
}
