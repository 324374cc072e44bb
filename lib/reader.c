// SPDX-License-Identifier: MIT
/*
 * Streaming trace reader: raw .byu, gzip .byu.gz (one member, many
 * concatenated members, the blocked form with its EOF block), standard
 * input, and capture directories, delivered as blocks of whole records.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bach/bytes.h"
#include "bach/exit.h"
#include "bach/found.h"
#include "bach/index.h"
#include "bach/record.h"
#include "bach/timing.h"
#include "bach/trace.h"
#include "gzin.h"

/*
 * Record bytes per block handed out: a quarter of a MiB stays in the L2
 * cache between the copy or inflate that fills it and the scan that
 * reads it (1 MiB: bach mrc --sample 0.01 about 5% slower on 10 M
 * records, raw or gzip; perf stat, docs/analysis.md section 3.4).
 */
#define OUT_CAP (1u << 18)
#define IN_CAP	(1u << 20) /* compressed bytes read at a time */

#define KIND_AUTO (-1)

/*
 * The most records a seek passes over as bytes at once (r->skip): the
 * rest waits in r->skip_recs, so that no record number, up to 2^64 - 1,
 * is ever multiplied into a byte count that wraps.
 */
#define SKIP_SLICE ((UINT64_MAX / 2) / BACH_REC_SIZE)

/* What seeking knows of one file of the list, learnt when first needed. */
struct file_seek {
	bool looked;   /* index and count below are known */
	bool indexed;  /* ix holds the file's member index */
	bool no_index; /* none could be loaded or built */
	struct bach_index ix;
	uint64_t count; /* records, or UINT64_MAX when not known */
	bool found;	/* found in a capture: a regular file only */
};

struct bach_reader {
	char **paths;
	int *kinds;		/* enum bach_file_kind, or KIND_AUTO */
	struct file_seek *seek; /* per path */
	size_t npaths, cap;
	size_t cur; /* index of the file being read */
	bool open;  /* cur is open */
	int fd;
	bool own_fd;
	int err;      /* sticky error for the current file */
	int deferred; /* an error to report after the records before it */
	char msg[512];
	int *locks; /* capture directories read: shared flock */
	size_t nlocks;

	/* current file */
	enum bach_file_kind kind;
	uint64_t in_off;  /* bytes read from the file */
	uint64_t out_off; /* record bytes produced from it (incl. carry) */
	uint64_t file_recs;
	uint64_t total_recs;
	bool file_eof; /* read() returned 0 */
	/* a regular file's size when opened: less read at its end is damage */
	bool sized;
	uint64_t size;

	uint8_t *out; /* OUT_CAP bytes */
	size_t carry; /* bytes of a partial record ... */
	size_t tail;  /* ... at out[tail], moved to out[0] next call */

	/* gzip state */
	uint8_t *in; /* IN_CAP bytes */
	struct gzin gz;

	/* seeking: record bytes still to pass over, then where to stop */
	uint64_t skip;
	uint64_t skip_recs; /* whole records to pass over after skip */
	uint64_t skip_acc;  /* bytes passed over, not yet a whole record */
	uint64_t limit;	    /* stop before this record; UINT64_MAX: none */

	/* timing sidecars (bach_reader_times()) */
	struct bach_times *times; /* made by the first call */
	size_t last_n;		  /* records the last read returned */
	bool jumped;		  /* a seek: files are not read whole */
	char *tfile;		  /* the file of the last entries given */
};

int bach_exit_status(int err)
{
	if (err == 0)
		return EXIT_OK;
	return err == -BACH_EDATA ? EXIT_DATA : EXIT_USAGE;
}

__attribute__((format(printf, 3, 4))) static int
fail(struct bach_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->err = err;
	return err;
}

static ssize_t gz_read(void *ctx, uint8_t *buf, size_t len);

struct bach_reader *bach_reader_new(void)
{
	struct bach_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->out = malloc(OUT_CAP);
	r->in = malloc(IN_CAP);
	if (!r->out || !r->in) {
		free(r->out);
		free(r->in);
		free(r);
		return NULL;
	}
	r->fd = -1;
	r->limit = UINT64_MAX;
	gzin_init(&r->gz, r->in, IN_CAP, gz_read, r, &r->file_eof, &r->in_off,
		  r->msg, sizeof(r->msg));
	return r;
}

static int push_path(struct bach_reader *r, const char *path, int kind)
{
	/* a second "-" would read what is left of the first: nothing */
	for (size_t i = 0; !strcmp(path, "-") && i < r->npaths; i++)
		if (!strcmp(r->paths[i], "-"))
			return fail(r, -EINVAL,
				    "-: standard input given twice: it can be "
				    "read only once");
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

static bool is_segment_name(const char *n)
{
	size_t len = strlen(n);

	if (strncmp(n, "seg-", 4) != 0)
		return false;
	return (len > 8 && !strcmp(n + len - 4, ".byu")) ||
	       (len > 11 && !strcmp(n + len - 7, ".byu.gz"));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

ssize_t bach_capture_segments(const char *dir, char ***paths, size_t *nparts)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0, parts = 0;
	int err = 0;

	*paths = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".part") &&
		    !strncmp(de->d_name, "seg-", 4))
			parts++;
		if (!is_segment_name(de->d_name))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
			cap = ncap;
		}
		if (asprintf(&v[n], "%s/%s", dir, de->d_name) < 0) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (err) {
		while (n)
			free(v[--n]);
		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*paths = v;
	if (nparts)
		*nparts = parts;
	return (ssize_t)n;
}

ssize_t bach_capture_open(const char *dir, char ***paths, size_t *nparts,
			  char *msg, size_t len)
{
	char man[PATH_MAX];
	size_t parts = 0;
	ssize_t n;

	n = bach_capture_segments(dir, paths, &parts);
	if (nparts)
		*nparts = parts;
	if (n < 0) {
		snprintf(msg, len, "%s: cannot list capture directory: %s", dir,
			 strerror((int)-n));
		return n;
	}
	if (n > 0)
		return n;
	free(*paths);
	*paths = NULL;
	snprintf(man, sizeof(man), "%s/manifest.jsonl", dir);
	if (!parts && access(man, F_OK) < 0) {
		snprintf(msg, len,
			 "%s: not a capture directory (no manifest.jsonl, no "
			 "seg-* segments)",
			 dir);
		return -EISDIR;
	}
	if (!parts)
		return 0; /* a capture that holds no records: an empty trace */
	snprintf(msg, len,
		 "%s: no closed segment: %zu unfinished (*.part), being "
		 "written or left by a crash (bach recover closes it)",
		 dir, parts);
	return -BACH_EDATA;
}

int bach_reader_add_as(struct bach_reader *r, const char *path,
		       enum bach_file_kind kind)
{
	if (strcmp(path, "-") && access(path, R_OK) < 0)
		return fail(r, -errno, "%s: %s", path, strerror(errno));
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
		return fail(r, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (access(path, R_OK) < 0)
			return fail(r, -errno, "%s: %s", path, strerror(errno));
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
		return fail(r, err, "%s: %s", path, strerror(-err));
	return 0;
}

static void close_file(struct bach_reader *r)
{
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->open = false;
	gzin_end(&r->gz);
}

void bach_reader_free(struct bach_reader *r)
{
	if (!r)
		return;
	close_file(r);
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

const char *bach_reader_file(const struct bach_reader *r)
{
	size_t i = r->cur < r->npaths ? r->cur : r->npaths - 1;

	if (!r->npaths)
		return "";
	return strcmp(r->paths[i], "-") ? r->paths[i] : "<stdin>";
}

/* Records a seek still has to pass over before the next one delivered. */
static uint64_t to_skip(const struct bach_reader *r)
{
	return (r->skip_acc + r->skip) / BACH_REC_SIZE + r->skip_recs;
}

/* Pass over recs records (less skip_acc bytes already passed) next. */
static void set_skip(struct bach_reader *r, uint64_t recs)
{
	uint64_t k = recs < SKIP_SLICE ? recs : SKIP_SLICE;

	r->skip = k * BACH_REC_SIZE - r->skip_acc;
	r->skip_recs = recs - k;
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
	fi->out_bytes = r->out_off - r->carry;
}

/* read() until the buffer is full or the file ends; returns bytes or -errno */
static ssize_t fill(struct bach_reader *r, uint8_t *buf, size_t cap)
{
	size_t got = 0;

	while (got < cap && !r->file_eof) {
		ssize_t n = read(r->fd, buf + got, cap - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(r, -errno,
				    "%s: read error at byte offset %llu: %s",
				    bach_reader_file(r),
				    (unsigned long long)r->in_off,
				    strerror(errno));
		}
		if (n == 0)
			r->file_eof = true;
		got += (size_t)n;
		r->in_off += (uint64_t)n;
		/* a pipe gives what it has; hand that out rather than wait */
		if (n > 0 && got >= BACH_REC_SIZE && got % BACH_REC_SIZE == 0)
			break;
	}
	return (ssize_t)got;
}

static bool is_gzip(const uint8_t *b)
{
	return b[0] == 0x1f && b[1] == 0x8b;
}

static bool is_part(const char *path)
{
	size_t len = strlen(path);

	return len > 5 && !strcmp(path + len - 5, ".part");
}

/* The gzip input's read (gzin.h). */
static ssize_t gz_read(void *ctx, uint8_t *buf, size_t len)
{
	return fill(ctx, buf, len);
}

/*
 * What a name says: .gz is gzip, .byu raw, and so are .gz.part and
 * .byu.part, a segment being written (or left by a crash); KIND_AUTO for
 * any other name, which is sniffed.
 */
static int name_kind(const char *path, size_t len)
{
	if (is_part(path))
		len -= 5;
	if (len > 3 && !strncmp(path + len - 3, ".gz", 3))
		return BACH_FILE_GZIP;
	if (len > 4 && !strncmp(path + len - 4, ".byu", 4))
		return BACH_FILE_RAW;
	return KIND_AUTO;
}

/* Standard input or a pipe: the first bytes say gzip or raw records. */
static int sniff_stream(struct bach_reader *r)
{
	ssize_t n = fill(r, r->in, 2);

	if (n < 0)
		return (int)n;
	r->kind = n == 2 && is_gzip(r->in) ? BACH_FILE_GZIP : BACH_FILE_RAW;
	if (r->kinds[r->cur] != KIND_AUTO)
		r->kind = (enum bach_file_kind)r->kinds[r->cur];
	if (r->kind == BACH_FILE_RAW) {
		memcpy(r->out, r->in, (size_t)n);
		r->carry = (size_t)n;
		r->out_off = (uint64_t)n;
	} else {
		r->gz.zs.next_in = r->in;
		r->gz.zs.avail_in = (uInt)n;
	}
	return 0;
}

static int open_file(struct bach_reader *r)
{
	const char *path = r->paths[r->cur];
	struct stat st;
	int kind;

	r->err = r->deferred = 0;
	r->msg[0] = 0;
	r->in_off = r->out_off = r->file_recs = 0;
	r->carry = r->tail = 0;
	r->file_eof = false;
	r->sized = false;
	gzin_restart(&r->gz);
	r->gz.name = bach_reader_file(r);

	if (!strcmp(path, "-")) {
		r->fd = 0;
		r->own_fd = false;
		r->open = true;
		return sniff_stream(r);
	}
	if (r->seek[r->cur].found) {
		r->fd = bach_open_found(AT_FDCWD, path, NULL, true, NULL,
					r->msg, sizeof(r->msg));
		if (r->fd < 0)
			return r->err = r->fd;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0)
			return fail(r, -errno, "%s: %s", path, strerror(errno));
	}
	r->own_fd = true;
	r->open = true;
	/*
	 * A regular file is read with read(), never mapped: one cut short
	 * while it is read (another process truncating it) then ends early,
	 * which end_of_file() reports, where a mapping's pages past the new
	 * end would kill the reader with SIGBUS. The copy is the price: bach
	 * stat of a 1 GiB .byu in the page cache took 0.45 s, 0.38 s mapped
	 * (2-CPU VM; docs/api.md).
	 */
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		r->sized = true;
		r->size = (uint64_t)st.st_size;
	}
	kind = r->kinds[r->cur] != KIND_AUTO ? r->kinds[r->cur]
					     : name_kind(path, strlen(path));
	if (kind == KIND_AUTO) {
		uint8_t magic[2];

		/* a name that does not say: the first bytes, as for stdin */
		if (!r->sized)
			return sniff_stream(r);
		kind = pread(r->fd, magic, 2, 0) == 2 && is_gzip(magic)
			       ? BACH_FILE_GZIP
			       : BACH_FILE_RAW;
	}
	r->kind = (enum bach_file_kind)kind;
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

/* Produce raw bytes into r->out after the carry; returns bytes added. */
/*
 * Room for output after the carry: the buffer, or with a range's end in
 * sight only what is still to be skipped and delivered (ten records after
 * a seek inflate one member, not a megabyte).
 */
static size_t out_room(const struct bach_reader *r)
{
	size_t room = OUT_CAP - r->carry;
	uint64_t need;

	if (r->limit == UINT64_MAX || r->total_recs >= r->limit ||
	    r->skip_recs ||
	    r->limit - r->total_recs > (room + r->carry) / BACH_REC_SIZE)
		return room;
	need = r->skip + (r->limit - r->total_recs) * BACH_REC_SIZE;
	need = need > r->carry ? need - r->carry : 1;
	return need < room ? (size_t)need : room;
}

static ssize_t produce_raw(struct bach_reader *r)
{
	ssize_t n = fill(r, r->out + r->carry, out_room(r));

	if (n > 0)
		r->out_off += (uint64_t)n;
	return n;
}

static ssize_t inflate_some(struct bach_reader *r)
{
	ssize_t n = gzin_inflate(&r->gz, r->out + r->carry, out_room(r));

	if (n < 0) {
		r->err = (int)n;
		return n;
	}
	r->out_off += (uint64_t)n;
	return n;
}

/*
 * Decompress into r->out after the carry. When a member turns out damaged,
 * the members before it that decoded whole are handed out first and the
 * error is reported by the next read.
 */
static ssize_t produce_gzip(struct bach_reader *r)
{
	ssize_t n = inflate_some(r);
	/* of a damaged member nothing is handed out: its CRC cannot vouch */
	size_t made = r->gz.good_made;

	if (n < 0 && made) {
		r->deferred = r->err;
		r->err = 0;
		r->out_off += made;
		return (ssize_t)made;
	}
	return n;
}

static int end_of_file(struct bach_reader *r)
{
	struct stat st;

	/* less than the file had when opened: cut short under the reader */
	if (r->sized && r->in_off < r->size)
		return fail(r, -BACH_EDATA,
			    "%s: truncated while being read: %llu bytes when "
			    "opened, %lld now; reading stopped at byte offset "
			    "%llu",
			    bach_reader_file(r), (unsigned long long)r->size,
			    fstat(r->fd, &st) ? -1ll : (long long)st.st_size,
			    (unsigned long long)r->in_off);
	/*
	 * A trace may hold no records (docs/formats.md section 2): an empty
	 * .byu is one. An empty file read as gzip is not gzip at all.
	 */
	if (r->kind == BACH_FILE_GZIP && r->gz.members == 0 && r->in_off == 0)
		return fail(r, -BACH_EDATA, "%s: empty file: not gzip",
			    bach_reader_file(r));
	/* a partial record, kept or passed over by a seek */
	if (r->carry || r->skip_acc)
		return fail(r, -BACH_EDATA,
			    "%s: truncated record at byte offset %llu (%llu "
			    "of 6 bytes)",
			    bach_reader_file(r),
			    (unsigned long long)(r->out_off - r->carry -
						 r->skip_acc),
			    (unsigned long long)(r->carry + r->skip_acc));
	/* a file that ends with a blocked member must end with the EOF block */
	if (r->kind == BACH_FILE_GZIP && r->gz.last_bc && !r->gz.eof_block)
		return fail(
			r, -BACH_EDATA,
			"%s: missing EOF block: blocked gzip file ends at byte "
			"offset %llu without it (%s)",
			bach_reader_file(r), (unsigned long long)r->in_off,
			is_part(bach_reader_file(r))
				? "an unfinished segment, still being written "
				  "or left by a crash: bach recover closes it"
				: "truncated?");
	return 0;
}

/*
 * Pass over the first bytes of what was produced while a seek has some
 * left to skip. Returns the bytes left, moved to r->out[0].
 */
static size_t skip_some(struct bach_reader *r, size_t have)
{
	size_t k = r->skip < have ? (size_t)r->skip : have;

	r->skip -= k;
	r->skip_acc += k;
	r->file_recs += r->skip_acc / BACH_REC_SIZE;
	r->total_recs += r->skip_acc / BACH_REC_SIZE;
	r->skip_acc %= BACH_REC_SIZE;
	if (!r->skip && r->skip_recs)
		set_skip(r, r->skip_recs); /* the next slice */
	if (k < have)
		memmove(r->out, r->out + k, have - k);
	return have - k;
}

/* At most the records left before the limit. */
static ssize_t clip(struct bach_reader *r, ssize_t n)
{
	uint64_t before = r->total_recs - (uint64_t)n;

	if (r->limit != UINT64_MAX && r->total_recs > r->limit) {
		r->file_recs -= r->total_recs - r->limit;
		r->total_recs = r->limit;
		return (ssize_t)(r->limit - before);
	}
	return n;
}

static ssize_t read_block(struct bach_reader *r, const uint8_t **recs);
static ssize_t read_clipped(struct bach_reader *r, const uint8_t **recs);

ssize_t bach_reader_read(struct bach_reader *r, const uint8_t **recs)
{
	ssize_t n = read_clipped(r, recs);

	r->last_n = n > 0 ? (size_t)n : 0;
	return n;
}

/* The message of a sidecar's failure, as the reader's. */
static ssize_t times_fail(struct bach_reader *r, int err)
{
	snprintf(r->msg, sizeof(r->msg), "%s", bach_times_strerror(r->times));
	return err;
}

ssize_t bach_reader_times(struct bach_reader *r, const uint64_t **clk)
{
	const char *file = bach_reader_file(r);
	int err;

	*clk = NULL;
	if (!r->times && !(r->times = bach_times_new()))
		return fail(r, -ENOMEM, "out of memory");
	/* a file read whole: its sidecar must hold no more entries */
	if (r->tfile && (!r->last_n || strcmp(r->tfile, file))) {
		free(r->tfile);
		r->tfile = NULL;
		if (!r->jumped && (err = bach_times_end(r->times)))
			return times_fail(r, err);
	}
	if (!r->last_n)
		return 0;
	if (!r->tfile && !(r->tfile = strdup(file)))
		return fail(r, -ENOMEM, "out of memory");
	err = bach_times_get(r->times, file,
			     bach_reader_file_records(r) - r->last_n, r->last_n,
			     clk);
	if (err)
		return times_fail(r, err);
	return (ssize_t)r->last_n;
}

uint64_t bach_reader_clock_hz(const struct bach_reader *r)
{
	return r->times ? bach_times_clock_hz(r->times) : 0;
}

static ssize_t read_clipped(struct bach_reader *r, const uint8_t **recs)
{
	ssize_t n;

	if (r->limit != UINT64_MAX && r->total_recs >= r->limit && !r->err &&
	    !r->deferred)
		return 0;
	n = read_block(r, recs);
	return n > 0 ? clip(r, n) : n;
}

static ssize_t read_block(struct bach_reader *r, const uint8_t **recs)
{
	for (;;) {
		ssize_t n;
		size_t have, whole;

		if (r->deferred) {
			r->err = r->deferred;
			r->deferred = 0;
		}
		if (r->err)
			return r->err;
		if (r->tail) {
			memmove(r->out, r->out + r->tail, r->carry);
			r->tail = 0;
		}
		if (!r->open) {
			if (r->cur >= r->npaths)
				return 0;
			if (open_file(r) < 0)
				return r->err;
		}
		if (r->kind == BACH_FILE_RAW)
			n = produce_raw(r);
		else
			n = produce_gzip(r);
		if (n < 0)
			return n;
		have = r->carry + (size_t)n;
		if (r->skip && have) {
			have = skip_some(r, have);
			r->carry = 0;
			n = (ssize_t)have;
		}
		whole = have - have % BACH_REC_SIZE;
		if (n == 0 &&
		    (r->kind == BACH_FILE_RAW
			     ? r->file_eof
			     : !r->gz.in_member && r->gz.zs.avail_in == 0 &&
				       r->file_eof)) {
			if (end_of_file(r) < 0)
				return r->err;
			close_file(r);
			r->cur++; /* file_recs stays until the next opens */
			continue;
		}
		if (whole == 0) {
			r->carry = have;
			continue;
		}
		/* hand out whole records; the partial tail waits its turn */
		*recs = r->out;
		r->file_recs += whole / BACH_REC_SIZE;
		r->total_recs += whole / BACH_REC_SIZE;
		r->carry = have - whole;
		r->tail = r->carry ? whole : 0;
		return (ssize_t)(whole / BACH_REC_SIZE);
	}
}

int bach_reader_next_file(struct bach_reader *r)
{
	if (r->open)
		close_file(r);
	if (r->cur < r->npaths)
		r->cur++;
	r->err = r->deferred = 0;
	r->file_recs = 0;
	return r->cur < r->npaths;
}

/* ---- seeking ------------------------------------------------------------ */

static bool is_gzip_name(const char *path)
{
	size_t len = strlen(path);

	return len > 3 && !strcmp(path + len - 3, ".gz");
}

/*
 * Learn what seeking needs of file i to pass over it: its record count.
 * A blocked file's comes from its .gzi (only its ends are read), or else
 * from an index built from the file, kept for entering it. What cannot be
 * known cheaply stays unknown; the file is then read through from its
 * start, and any damage is found as reading finds it.
 */
static void look_at(struct bach_reader *r, size_t i)
{
	struct file_seek *fs = &r->seek[i];
	const char *path = r->paths[i];
	int kind = r->kinds[i];
	char msg[256];
	struct stat st;
	uint64_t size;

	if (fs->looked)
		return;
	fs->looked = true;
	fs->count = UINT64_MAX;
	if (!strcmp(path, "-") ||
	    (fs->found ? lstat(path, &st) : stat(path, &st)) < 0 ||
	    !S_ISREG(st.st_mode))
		return;
	if (kind == KIND_AUTO)
		kind = is_gzip_name(path) ? BACH_FILE_GZIP : BACH_FILE_RAW;
	if (kind == BACH_FILE_RAW) {
		if (st.st_size % BACH_REC_SIZE == 0)
			fs->count = (uint64_t)st.st_size / BACH_REC_SIZE;
		return;
	}
	if (bach_index_size(path, &size, msg, sizeof(msg)) < 0) {
		if (bach_index_build(path, &fs->ix, msg, sizeof(msg)) < 0)
			return;
		fs->indexed = true;
		size = fs->ix.uoff[fs->ix.n];
	}
	if (size % BACH_REC_SIZE == 0)
		fs->count = size / BACH_REC_SIZE;
}

/* The member index of gzip file i, loaded (or built) once: false if none. */
static bool have_index(struct bach_reader *r, size_t i)
{
	struct file_seek *fs = &r->seek[i];
	const char *path = r->paths[i];
	char msg[256];

	if (fs->indexed || fs->no_index)
		return fs->indexed;
	fs->no_index = true;
	if (bach_index_load(path, &fs->ix, msg, sizeof(msg)) < 0 &&
	    bach_index_build(path, &fs->ix, msg, sizeof(msg)) < 0)
		return false;
	fs->indexed = true;
	fs->no_index = false;
	return true;
}

/*
 * Whether member k of the index is where the index says, as long as it
 * says: a blocked member at coff[k] of coff[k+1] - coff[k] bytes, whose
 * ISIZE is uoff[k+1] - uoff[k]. An index that passed bach_index_load()
 * but was made for another file of the same size fails here.
 */
static bool member_fits(int fd, const struct bach_index *ix, uint64_t k)
{
	uint64_t size = ix->coff[k + 1] - ix->coff[k];
	uint8_t hdr[BACH_BGZF_HDR + 16], tail[4];

	if (pread(fd, hdr, sizeof(hdr), (off_t)ix->coff[k]) != sizeof(hdr) ||
	    bach_bgzf_member_size(hdr, sizeof(hdr)) != (int)size ||
	    pread(fd, tail, 4, (off_t)(ix->coff[k + 1] - 4)) != 4)
		return false;
	return bach_get_le32(tail) == ix->uoff[k + 1] - ix->uoff[k];
}

/*
 * Position the file just opened at its record off. Record numbers are
 * compared as records, never multiplied past the file's end: off may be
 * anything up to 2^64 - 1, and what lies past the end is passed over
 * (reads then give nothing), never found by a byte offset that wrapped.
 */
static int seek_in_file(struct bach_reader *r, uint64_t off)
{
	struct file_seek *fs = &r->seek[r->cur];

	if (r->kind == BACH_FILE_RAW && r->sized && r->own_fd) {
		uint64_t whole = r->size / BACH_REC_SIZE;
		uint64_t at = off < whole ? off : whole;

		if (lseek(r->fd, (off_t)(at * BACH_REC_SIZE), SEEK_SET) >= 0) {
			r->in_off = r->out_off = at * BACH_REC_SIZE;
			r->file_recs = at;
			r->total_recs += at;
			set_skip(r, off - at);
			return 0;
		}
	}
	if (r->kind == BACH_FILE_GZIP && r->own_fd && have_index(r, r->cur)) {
		uint64_t end = fs->ix.uoff[fs->ix.n];
		uint64_t k = bach_index_find(
			&fs->ix,
			off <= end / BACH_REC_SIZE ? off * BACH_REC_SIZE : end);

		if (k < fs->ix.n && !member_fits(r->fd, &fs->ix, k)) {
			/* the index does not describe this file: forget it */
			bach_index_free(&fs->ix);
			fs->indexed = false;
			fs->no_index = true;
			fs->count = UINT64_MAX;
			fs->looked = true;
		} else if (lseek(r->fd, (off_t)fs->ix.coff[k], SEEK_SET) >= 0) {
			r->in_off = fs->ix.coff[k];
			r->out_off = fs->ix.uoff[k];
			r->gz.members = k;
			r->gz.blocked = true;
			r->file_recs = fs->ix.uoff[k] / BACH_REC_SIZE;
			r->skip_acc = fs->ix.uoff[k] % BACH_REC_SIZE;
			r->total_recs += r->file_recs;
			/* the member starts within record file_recs: its
			 * first skip_acc bytes were in the member before */
			set_skip(r, off - r->file_recs);
			return 0;
		}
	}
	set_skip(r, off); /* read through from the start */
	return 0;
}

int bach_reader_seek(struct bach_reader *r, uint64_t rec)
{
	r->jumped = true;
	uint64_t base = 0;
	size_t i = 0;

	r->limit = UINT64_MAX;
	r->msg[0] = 0;
	/* standard input goes one way: forward, by reading */
	for (size_t j = 0; j < r->npaths && j <= r->cur; j++) {
		if (strcmp(r->paths[j], "-"))
			continue;
		/*
		 * Behind the reader: before total_recs, or at it when its
		 * first skip_acc bytes are passed (a member entered inside
		 * that record, seek_in_file())
		 */
		if (rec < r->total_recs ||
		    (rec == r->total_recs && r->skip_acc) || r->err)
			return fail(r, -ESPIPE,
				    "<stdin>: cannot seek back to record %llu "
				    "(at %llu)",
				    (unsigned long long)rec,
				    (unsigned long long)r->total_recs);
		/* what an earlier seek left to pass over is replaced */
		set_skip(r, rec - r->total_recs);
		return 0;
	}
	if (r->open)
		close_file(r);
	r->err = r->deferred = 0;
	r->skip = r->skip_acc = r->skip_recs = 0;
	r->total_recs = r->file_recs = 0;
	r->cur = 0;
	if (!r->npaths)
		return 0;
	/* the file holding rec, from the record counts of those before it */
	while (i + 1 < r->npaths && strcmp(r->paths[i], "-")) {
		look_at(r, i);
		if (r->seek[i].count == UINT64_MAX ||
		    rec - base < r->seek[i].count)
			break;
		base += r->seek[i].count;
		i++;
	}
	r->cur = i;
	r->total_recs = base;
	if (open_file(r) < 0)
		return r->err;
	return seek_in_file(r, rec - base);
}

int bach_reader_range(struct bach_reader *r, uint64_t start, uint64_t end)
{
	int err = bach_reader_seek(r, start);

	if (err)
		return err;
	r->limit = end < start ? start : end;
	return 0;
}
