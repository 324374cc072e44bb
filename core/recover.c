// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "bach/bytes.h"
#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "lib/io/manifest.h"
#include "lib/io/outfile.h"
#include "lib/io/timing.h"
#include "lib/io/zst.h"
#define LOG_PREFIX "recover"
#include "lib/options.h"
#include "log.h"
#include "manifest_write.h"
#include "recover.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Gap marker records in p[0..len). */
static uint64_t count_markers(const uint8_t *p, size_t len)
{
	uint64_t n = 0;

	for (size_t i = 0; i + BACH_REC_SIZE <= len; i += BACH_REC_SIZE)
		n += bach_rec_is_gap(p + i);
	return n;
}

/* Bytes of p[0..size) made of complete, good members; records in them. */
static uint64_t good_members(const uint8_t *p, uint64_t size, uint64_t *recs,
			     uint64_t *markers, bool *has_eof)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	static uint8_t out[BACH_BGZF_MAX_BLOCK];
	uint64_t off = 0;

	*recs = *markers = 0;
	*has_eof = false;
	while (d && size - off >= BACH_BGZF_EOF_SIZE) {
		const uint8_t *m = p + off;
		int n = bach_bgzf_member_size(m, size - off);
		size_t bsize = n > 0 ? (size_t)n : 0, got;

		if (n < 0 || bsize > size - off)
			break;
		if (libdeflate_gzip_decompress(d, m, bsize, out, sizeof(out),
					       &got) != LIBDEFLATE_SUCCESS ||
		    got % BACH_REC_SIZE)
			break;
		*recs += got / BACH_REC_SIZE;
		*markers += count_markers(out, got);
		off += bsize;
		if (!got) { /* the EOF block: nothing may follow */
			*has_eof = true;
			break;
		}
	}
	libdeflate_free_decompressor(d);
	return off;
}

/*
 * The same for a .byu.zst segment: bytes of p[0..size) made of complete
 * zstd frames that decompress with a good checksum, noted in t for the
 * seek table; *has_table when they are followed by the seek table that
 * lists them (and nothing after it).
 */
static uint64_t good_frames(const uint8_t *p, uint64_t size, uint64_t *recs,
			    uint64_t *markers, bool *has_table,
			    struct zst_table *t)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	uint8_t *out = NULL; /* the largest frame's records so far */
	size_t ocap = 0;
	uint64_t off = 0;

	*recs = *markers = 0;
	*has_table = false;
	while (d && size - off >= 8) {
		const uint8_t *m = p + off;
		unsigned long long fcs;
		size_t c, got;

		if (bach_get_le32(m) == ZST_SEEK_MAGIC) {
			struct bach_index ix = { 0 };
			char msg[128];

			*has_table = !zst_table_parse(m, size - off, off, 0,
						      &ix, msg, sizeof(msg)) &&
				     ix.n == t->n && ix.uoff[ix.n] == *recs * 6;
			bach_index_free(&ix);
			if (*has_table)
				off = size;
			break;
		}
		if (bach_get_le32(m) != ZST_FRAME_MAGIC)
			break;
		c = ZSTD_findFrameCompressedSize(m, size - off);
		if (ZSTD_isError(c))
			break;
		/* a frame of several blocks: its content size, from its
		 * header (ours always carry it), bounded by the seek table's
		 * 32 bits */
		fcs = ZSTD_getFrameContentSize(m, c);
		if (fcs == ZSTD_CONTENTSIZE_UNKNOWN ||
		    fcs == ZSTD_CONTENTSIZE_ERROR || fcs > UINT32_MAX)
			break;
		if (fcs > ocap) {
			uint8_t *o = realloc(out, (size_t)fcs);

			if (!o)
				break;
			out = o;
			ocap = (size_t)fcs;
		}
		got = ZSTD_decompressDCtx(d, out, ocap, m, c);
		if (ZSTD_isError(got) || got % BACH_REC_SIZE || !got ||
		    zst_table_add(t, m, c))
			break;
		*recs += got / BACH_REC_SIZE;
		*markers += count_markers(out, got);
		off += c;
	}
	ZSTD_freeDCtx(d);
	free(out);
	return off;
}

/*
 * Open name in dirfd for reading (and writing): never through a symbolic
 * link, never anything but a regular file (a FIFO would block, a device
 * is not ours). Logs what it refuses.
 */
static int open_regular(int dirfd, const char *where, const char *name, bool rw,
			struct stat *st)
{
	int fd = openat(dirfd, name,
			(rw ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK |
				O_CLOEXEC);

	if (fd < 0) {
		int err = -errno;

		if (errno == ELOOP)
			log_err("%s/%s: a symbolic link: left alone", where,
				name);
		return err;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		log_err("%s/%s: not a regular file: left alone", where, name);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/*
 * Count and check the segment open on fd; *keep: its good length. The
 * CRC is of the first *keep bytes, or with whole_crc of the whole file.
 */
static int measure(int fd, const struct stat *st, bool gz, bool whole_crc,
		   struct seg_result *res, uint64_t *keep, bool *has_eof,
		   struct zst_table *zt)
{
	uint8_t *map = NULL;

	memset(res, 0, sizeof(*res));
	*has_eof = false;
	if (st->st_size > 0) {
		map = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_SHARED, fd,
			   0);
		if (map == MAP_FAILED)
			return -errno;
	}
	if (zt) {
		*keep = map ? good_frames(map, (uint64_t)st->st_size,
					  &res->records, &res->markers, has_eof,
					  zt)
			    : 0;
	} else if (gz) {
		*keep = map ? good_members(map, (uint64_t)st->st_size,
					   &res->records, &res->markers,
					   has_eof)
			    : 0;
	} else {
		*keep = (uint64_t)st->st_size -
			(uint64_t)st->st_size % BACH_REC_SIZE;
		res->records = *keep / BACH_REC_SIZE;
		res->markers = map ? count_markers(map, *keep) : 0;
	}
	res->crc =
		map ? libdeflate_crc32(0, map,
				       whole_crc ? (size_t)st->st_size : *keep)
		    : 0;
	if (map)
		munmap(map, (size_t)st->st_size);
	res->cut = (uint64_t)st->st_size - *keep;
	res->cut_at = *keep;
	res->bytes = *keep;
	res->whole = !res->cut && (!(gz || zt) || *has_eof);
	return 0;
}

int segment_measure(int dirfd, const char *name, struct seg_result *res)
{
	struct zst_table zt = { 0 };
	struct stat st;
	uint64_t keep;
	bool has_eof;
	int fd, err;

	fd = open_regular(dirfd, ".", name, false, &st);
	if (fd < 0)
		return fd;
	err = measure(fd, &st, ends_with(name, ".gz"), true, res, &keep,
		      &has_eof, ends_with(name, ".zst") ? &zt : NULL);
	zst_table_free(&zt);
	/* read only: the file as it is */
	res->bytes = (uint64_t)st.st_size;
	res->cut = 0;
	close(fd);
	return err;
}

/* A write of a file's tail: a short one is a full disk (errno is not set). */
static int write_tail(int fd, const void *p, size_t len, uint64_t off)
{
	ssize_t n = pwrite(fd, p, len, (off_t)off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -ENOSPC;
}

/*
 * End the cut .byu.zst open at fd (*keep bytes of whole frames, their
 * entries in zt; size bytes before the cut) with the seek table of its
 * frames. The table needs 12 bytes a frame, which a full disk may not
 * have even after the cut (a .byu.gz's EOF block needs 28): then the last
 * frame goes, and again, measured again into res, until the table fits
 * or no record is left (res->records 0: the caller removes the file).
 */
static int end_zst(int fd, uint64_t size, struct zst_table *zt,
		   struct seg_result *res, uint64_t *keep)
{
	for (;;) {
		struct stat st;
		size_t tlen;
		uint8_t *tab = zst_table_bytes(zt, &tlen);
		bool has_eof;
		int err;

		if (!tab)
			return -ENOMEM;
		err = write_tail(fd, tab, tlen, *keep);
		if (!err) {
			res->crc = libdeflate_crc32(res->crc, tab, tlen);
			*keep += tlen;
		}
		free(tab);
		if (err != -ENOSPC || !zt->n)
			return err;
		*keep -= zt->e[zt->n - 1].csize;
		if (ftruncate(fd, (off_t)*keep) < 0 || fstat(fd, &st) < 0)
			return -errno;
		zst_table_free(zt);
		err = measure(fd, &st, false, false, res, keep, &has_eof, zt);
		if (err)
			return err;
		res->cut = size - *keep;
		res->cut_at = *keep;
		if (!res->records)
			return 0;
	}
}

int segment_finish_part(int dirfd, const char *part, struct seg_result *res)
{
	char final[256];
	struct stat st;
	uint64_t keep;
	bool gz = ends_with(part, ".gz.part"), has_eof = false;
	bool zst = ends_with(part, ".zst.part");
	struct zst_table zt = { 0 };
	int fd, err = 0;

	memset(res, 0, sizeof(*res));
	if (!ends_with(part, ".part") || strlen(part) >= sizeof(final))
		return -EINVAL;
	snprintf(final, sizeof(final), "%.*s", (int)(strlen(part) - 5), part);
	/* a closed segment of that name is never replaced */
	if (fstatat(dirfd, final, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	fd = open_regular(dirfd, ".", part, true, &st);
	if (fd < 0)
		return fd;
	err = measure(fd, &st, gz, false, res, &keep, &has_eof,
		      zst ? &zt : NULL);
	if (err)
		goto out_close;
	if (!res->records)
		goto remove;
	/* cutting first frees the space the EOF block needs */
	if (ftruncate(fd, (off_t)keep) < 0) {
		err = -errno;
		goto out_close;
	}
	if (gz && !has_eof) {
		err = write_tail(fd, bach_bgzf_eof, BACH_BGZF_EOF_SIZE, keep);
		if (err)
			goto out_close;
		res->crc = libdeflate_crc32(res->crc, bach_bgzf_eof,
					    BACH_BGZF_EOF_SIZE);
		keep += BACH_BGZF_EOF_SIZE;
	}
	if (zst && !has_eof) {
		/* the seek table of the frames kept ends it */
		err = end_zst(fd, (uint64_t)st.st_size, &zt, res, &keep);
		if (err)
			goto out_close;
		if (!res->records)
			goto remove;
	}
	res->bytes = keep;
	if (fsync(fd) < 0) {
		err = -errno;
		goto out_close;
	}
	if (renameat(dirfd, part, dirfd, final) < 0 || fsync(dirfd) < 0)
		err = -errno;
	goto out_close;
remove:
	/* nothing whole survived: no segment is better than an empty one */
	res->removed = true;
	res->bytes = 0;
	if (unlinkat(dirfd, part, 0) < 0 || fsync(dirfd) < 0)
		err = -errno;
out_close:
	zst_table_free(&zt);
	close(fd);
	return err;
}

static bool is_segment_name(const char *n)
{
	return !strncmp(n, "seg-", 4) &&
	       (ends_with(n, ".byu") || ends_with(n, ".byu.gz") ||
		ends_with(n, ".byu.zst") || ends_with(n, ".byu.part") ||
		ends_with(n, ".byu.gz.part") || ends_with(n, ".byu.zst.part"));
}

static int seg_filter(const struct dirent *de)
{
	return is_segment_name(de->d_name);
}

/* A line cut by a crash would spoil the next one appended: cut it off. */
static int cut_partial_line(int dfd, const char *where,
			    const struct bach_manifest *man)
{
	struct stat st;
	int fd, err = 0;

	fd = open_regular(dfd, where, BACH_MANIFEST_NAME, true, &st);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)man->whole_bytes) < 0 || fsync(fd) < 0)
		err = -errno;
	close(fd);
	if (err)
		log_err("%s/%s: cannot cut its unfinished last line: %s", where,
			BACH_MANIFEST_NAME, strerror(-err));
	else
		log_notice(
			"%s/%s: cut an unfinished last line (%llu bytes) left by a crash",
			where, BACH_MANIFEST_NAME,
			(unsigned long long)((uint64_t)st.st_size -
					     man->whole_bytes));
	return err;
}

struct totals {
	unsigned done;
	unsigned failed; /* files it had to close or name and could not */
	struct manifest_recovered r;
};

static void count_seg(struct totals *t, uint64_t records, uint64_t markers,
		      uint64_t bytes, bool removed)
{
	if (removed)
		return;
	t->r.segments++;
	t->r.written += records - markers;
	t->r.gap_markers += markers;
	t->r.bytes += bytes;
}

/* One seg-* entry: close a .part, name an orphan. */
void segment_index(int dfd, const char *where, const char *seg)
{
	struct bach_index ix;
	char path[4400], msg[512];
	int err;

	if (!ends_with(seg, ".byu.gz"))
		return;
	snprintf(path, sizeof(path), "%s/%s", where, seg);
	err = bach_index_build(path, &ix, msg, sizeof(msg));
	if (err) {
		log_warn("%s: no index written: %s", path, msg);
		return;
	}
	err = bach_index_writeat(dfd, seg, &ix);
	bach_index_free(&ix);
	if (err)
		log_warn("%s%s: not written: %s", path, BACH_INDEX_SUFFIX,
			 strerror(-err));
}

/*
 * The timing sidecar of segment seg, recovered with it (docs/formats.md
 * 3.2): an unfinished one cut or filled to the records the segment kept
 * (bach_time_recover()), a finished one (closed before its segment was)
 * named when it has as many entries. Its name for the segment event, with
 * *ts, or NULL: the segment reads untimed. A removed segment's unfinished
 * one is removed with it.
 */
static const char *recover_times(int dfd, const char *where, const char *seg,
				 const struct seg_result *r, char *tname,
				 size_t cap, struct bach_time_summary *ts)
{
	char part[320];
	int err;

	if (bach_time_name(tname, cap, seg))
		return NULL;
	snprintf(part, sizeof(part), "%s.part", tname);
	if (r->removed) {
		if (unlinkat(dfd, part, 0) == 0)
			log_notice("%s/%s: removed with its segment", where,
				   part);
		return NULL;
	}
	if (faccessat(dfd, part, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		err = bach_time_recover(dfd, tname, r->records, ts);
		if (err > 0 && fsync(dfd) < 0)
			err = -errno;
		if (err < 0)
			log_err("%s/%s: cannot recover: %s: its segment reads untimed",
				where, part, strerror(-err));
		else if (!err)
			log_notice(
				"%s/%s: no whole member: left alone, its segment reads untimed",
				where, part);
		else
			log_notice(
				"%s/%s: recovered %llu entr%s (%llu of them added without a time)",
				where, tname, (unsigned long long)ts->entries,
				bach_plural(ts->entries, "y", "ies"),
				(unsigned long long)ts->filled);
		return err > 0 ? tname : NULL;
	}
	err = bach_time_measure(dfd, tname, ts);
	if (err == -ENOENT)
		return NULL;
	if (!err && ts->entries == r->records)
		return tname;
	log_err("%s/%s: %s: not named in the manifest (bach verify says so)",
		where, tname,
		err ? strerror(-err) : "not as many entries as its segment");
	return NULL;
}

static void recover_seg(int dfd, const char *where, const char *name,
			const struct bach_manifest *man, struct manifest *m,
			struct totals *t)
{
	struct manifest_segment ev = { 0 };
	struct bach_time_summary ts = { 0 };
	struct seg_result r;
	char seg[256], tname[300];
	struct stat st;
	bool part = ends_with(name, ".part");
	int err;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	snprintf(seg, sizeof(seg), "%.*s", (int)(strlen(name) - (part ? 5 : 0)),
		 name);
	if (!S_ISREG(st.st_mode)) {
		log_err("%s/%s: %s: left alone", where, name,
			bach_file_type(st.st_mode));
		/* one the manifest names is verify's to judge; an
		 * unfinished or unnamed one was left unrecovered */
		if (part || !bach_manifest_find_seg(man, seg))
			t->failed++;
		return;
	}
	if (!part && bach_manifest_find_seg(man, seg))
		return; /* closed and named: nothing to do */
	err = part ? segment_finish_part(dfd, name, &r)
		   : segment_measure(dfd, name, &r);
	if (err) {
		log_err("%s/%s: cannot recover: %s", where, name,
			err == -EEXIST
				? "a closed segment of the same name exists"
				: strerror(-err));
		t->failed++;
		return;
	}
	if (part)
		log_notice(
			"%s/%s: recovered %llu record%s, cut %llu bytes of an unfinished block at byte offset %llu%s",
			where, seg, (unsigned long long)r.records,
			bach_s(r.records), (unsigned long long)r.cut,
			(unsigned long long)r.cut_at,
			r.removed ? " (nothing whole: removed)" : "");
	else
		log_notice(
			"%s/%s: closed but never named in the manifest: %llu record%s%s",
			where, seg, (unsigned long long)r.records,
			bach_s(r.records),
			r.whole ? "" : " (damaged: bach verify says where)");
	ev.name = seg;
	ev.records = r.records;
	ev.gap_markers = r.markers;
	ev.bytes = r.bytes;
	ev.crc = r.crc;
	ev.recovered = true;
	ev.orphan = !part;
	ev.removed = r.removed;
	ev.cut_bytes = r.cut;
	ev.timing =
		recover_times(dfd, where, seg, &r, tname, sizeof(tname), &ts);
	ev.clock_hz = ts.clock_hz;
	ev.tsum = &ts;
	if (manifest_segment(m, &ev)) {
		log_err("%s/%s: cannot write: %s", where, BACH_MANIFEST_NAME,
			strerror(errno));
		t->failed++;
	}
	if (!r.removed)
		segment_index(dfd, where, seg);
	count_seg(t, r.records, r.markers, r.bytes, r.removed);
	t->done++;
}

int recover_capture(int outfd, const char *outdir, const char *name,
		    unsigned *failed)
{
	struct manifest m = { .fd = -1 };
	struct bach_manifest man;
	struct totals t = { 0 };
	struct dirent **ents = NULL;
	char where[4400], why[512];
	int dfd, n, err;

	dfd = openat(outfd, name,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0; /* not a directory (or a link to one): not ours */
	snprintf(where, sizeof(where), "%s/%s", outdir, name);
	err = bach_manifest_load(dfd, where, &man, why, sizeof(why));
	if (err == -ENOENT) {
		close(dfd);
		return 0; /* not a capture directory */
	}
	if (err) {
		log_err("%s: not recovered", why);
		close(dfd);
		return err;
	}
	n = scandirat(dfd, ".", &ents, seg_filter, alphasort);
	if (n < 0) {
		err = -errno;
		log_err("%s: cannot list: %s", where, strerror(errno));
		goto out;
	}
	/* anything to do? */
	{
		bool todo = !man.ended || man.partial_tail;

		for (int i = 0; i < n && !todo; i++)
			todo = ends_with(ents[i]->d_name, ".part") ||
			       !bach_manifest_find_seg(&man, ents[i]->d_name);
		if (!todo)
			goto out;
	}
	if (man.partial_tail && (err = cut_partial_line(dfd, where, &man)))
		goto out;
	err = manifest_open(&m, dfd, false);
	if (err) {
		log_err("%s/%s: %s: not recovered", where, BACH_MANIFEST_NAME,
			err == -ELOOP	 ? "a symbolic link"
			: err == -EINVAL ? "not a regular file"
					 : strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < man.nsegs; i++) {
		const struct bach_manifest_seg *s = &man.segs[i];

		count_seg(&t, s->records, s->gap_markers, s->bytes, s->removed);
	}
	for (int i = 0; i < n; i++)
		recover_seg(dfd, where, ents[i]->d_name, &man, &m, &t);
	if (!man.ended) {
		t.r.segments_recovered = t.done;
		t.r.lost = man.gap_lost;
		if (manifest_ended_recovered(&m, &t.r) == 0)
			log_notice(
				"%s: closed a capture cut off by a crash (%u segment%s recovered)",
				where, t.done, bach_s(t.done));
		else {
			log_err("%s/%s: cannot write: %s", where,
				BACH_MANIFEST_NAME, strerror(errno));
			t.failed++;
		}
		t.done++;
	}
	if (manifest_sync(&m)) {
		log_err("%s/%s: cannot sync: %s", where, BACH_MANIFEST_NAME,
			strerror(errno));
		t.failed++;
	}
	err = (int)t.done;
	if (failed)
		*failed += t.failed;
out:
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	manifest_close(&m);
	bach_manifest_free(&man);
	close(dfd);
	return err;
}

int recover_outdir(int outfd, const char *outdir, unsigned *failed)
{
	struct dirent *de;
	int fd, captures = 0;
	DIR *d;

	fd = openat(outfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (recover_capture(outfd, outdir, de->d_name, failed) > 0)
			captures++;
	}
	closedir(d);
	return captures;
}

int outdir_lock(const char *outdir)
{
	int fd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0) {
		err = -errno;
		log_err("output directory %s: %s", outdir, strerror(errno));
		return err;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		err = -errno;
		log_err("output directory %s: %s", outdir,
			errno == EWOULDBLOCK
				? "another bachd or bach capture is writing there"
				: strerror(errno));
		close(fd);
		return err;
	}
	return fd;
}
