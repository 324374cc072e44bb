// SPDX-License-Identifier: MIT
/*
 * Seeking and ranges (bach_reader_seek(), bach_reader_range()): the file
 * that holds a record, found from the record counts of the files before
 * it (a raw file's size, a blocked gzip file's .gzi, or an index built in
 * memory), and the place in it: a raw file's byte offset, or the gzip
 * member that holds the record, checked against the file before it is
 * trusted. What is left to pass over, and where a range ends, the reading
 * (lib/io/reader_read.c) does as the blocks go by (lib/io/reader_state.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "bach/bytes.h"
#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "lib/io/reader_state.h"
#include "lib/io/zst.h"

static bool ends_with(const char *path, const char *end)
{
	size_t len = strlen(path), k = strlen(end);

	return len > k && !strcmp(path + len - k, end);
}

/* A .byu.zst file's frames, from its seek table (lib/io/zst.h). */
static int zst_index(const char *path, struct bach_index *ix)
{
	char msg[256];

	return zst_table_load_path(path, ix, msg, sizeof(msg));
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
		kind = ends_with(path, ".gz")	 ? BACH_FILE_GZIP
		       : ends_with(path, ".zst") ? BACH_FILE_ZSTD
						 : BACH_FILE_RAW;
	if (kind == BACH_FILE_RAW) {
		if (st.st_size % BACH_REC_SIZE == 0)
			fs->count = (uint64_t)st.st_size / BACH_REC_SIZE;
		return;
	}
	if (kind == BACH_FILE_ZSTD) {
		if (zst_index(path, &fs->ix) < 0)
			return;
		fs->indexed = true;
		size = fs->ix.uoff[fs->ix.n];
	} else if (bach_index_size(path, &size, msg, sizeof(msg)) < 0) {
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
	if (r->kind == BACH_FILE_ZSTD
		    ? zst_index(path, &fs->ix) < 0
		    : bach_index_load(path, &fs->ix, msg, sizeof(msg)) < 0 &&
			      bach_index_build(path, &fs->ix, msg,
					       sizeof(msg)) < 0)
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

/* The same for frame k of a .byu.zst: a zstd frame of that content size. */
static bool frame_fits(int fd, const struct bach_index *ix, uint64_t k)
{
	uint8_t hdr[ZST_HEADER_MAX];
	ssize_t n = pread(fd, hdr, sizeof(hdr), (off_t)ix->coff[k]);

	return n >= 4 && bach_get_le32(hdr) == ZST_FRAME_MAGIC &&
	       ZSTD_getFrameContentSize(hdr, (size_t)n) ==
		       ix->uoff[k + 1] - ix->uoff[k];
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
	if (r->kind != BACH_FILE_RAW && r->own_fd && have_index(r, r->cur)) {
		bool zst = r->kind == BACH_FILE_ZSTD;
		uint64_t end = fs->ix.uoff[fs->ix.n];
		uint64_t k = bach_index_find(
			&fs->ix,
			off <= end / BACH_REC_SIZE ? off * BACH_REC_SIZE : end);

		if (k < fs->ix.n && !(zst ? frame_fits(r->fd, &fs->ix, k)
					  : member_fits(r->fd, &fs->ix, k))) {
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
			/* the frames before k, as a read through counts them */
			r->zs.seeked = true;
			r->zs.csum = fs->ix.coff[k];
			r->zs.dsum = fs->ix.uoff[k];
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
			return reader_fail(
				r, -ESPIPE,
				"<stdin>: cannot seek back to record %llu (at %llu)",
				(unsigned long long)rec,
				(unsigned long long)r->total_recs);
		/* what an earlier seek left to pass over is replaced */
		set_skip(r, rec - r->total_recs);
		return 0;
	}
	if (r->open)
		reader_close_file(r);
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
	if (reader_open_file(r) < 0)
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
