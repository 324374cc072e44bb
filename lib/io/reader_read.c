// SPDX-License-Identifier: MIT
/*
 * The trace reader's hot path: the file being read, opened (its kind from
 * its name, or sniffed from its first bytes), read() or inflated
 * (lib/io/gzin.c) into blocks of whole records, a seek's records passed over
 * and a range's end clipped as the blocks go by, and its end checked for
 * damage (a cut record, a missing EOF block, a file cut short while being
 * read). Its errors, named by file and byte offset, are kept in r->msg
 * by reader_fail(), which the reader's other files call too. The reader
 * and its list of files are lib/io/reader.c; where a seek starts is
 * lib/io/reader_seek.c (lib/io/reader_state.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bach/record.h"
#include "bach/trace.h"
#include "lib/io/found.h"
#include "lib/io/reader_state.h"

int reader_fail(struct bach_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->err = err;
	return err;
}

const char *bach_reader_file(const struct bach_reader *r)
{
	size_t i = r->cur < r->npaths ? r->cur : r->npaths - 1;

	if (!r->npaths)
		return "";
	return strcmp(r->paths[i], "-") ? r->paths[i] : "<stdin>";
}

void reader_close_file(struct bach_reader *r)
{
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->open = false;
	gzin_end(&r->gz);
	reader_zst_close(r);
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
			return reader_fail(
				r, -errno,
				"%s: read error at byte offset %llu: %s",
				bach_reader_file(r),
				(unsigned long long)r->in_off, strerror(errno));
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

/* zstd's frame magic, or a skippable frame's (the seek table of an
 * empty .byu.zst), in the first four bytes */
static bool is_zstd(const uint8_t *b)
{
	uint32_t m = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
		     (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;

	return m == 0xFD2FB528u || (m & ~0xFu) == 0x184D2A50u;
}

/* What the first bytes say (n of them at b): gzip, zstd, or raw. */
static int sniff_kind(const uint8_t *b, ssize_t n)
{
	if (n >= 2 && is_gzip(b))
		return BACH_FILE_GZIP;
	if (n >= 4 && is_zstd(b))
		return BACH_FILE_ZSTD;
	return BACH_FILE_RAW;
}

bool reader_is_part(const char *path)
{
	size_t len = strlen(path);

	return len > 5 && !strcmp(path + len - 5, ".part");
}

const char *reader_cut_why(const struct bach_reader *r)
{
	return reader_is_part(bach_reader_file(r))
		       ? "an unfinished segment, still being written or left by a crash: bach recover closes it"
		       : "truncated?";
}

/* The gzip input's read (gzin.h). */
ssize_t reader_gz_read(void *ctx, uint8_t *buf, size_t len)
{
	return fill(ctx, buf, len);
}

/*
 * What a name says: .gz is gzip, .zst zstd, .byu raw, and so are .gz.part,
 * .zst.part and .byu.part, a segment being written (or left by a crash);
 * KIND_AUTO for any other name, which is sniffed.
 */
static int name_kind(const char *path, size_t len)
{
	if (reader_is_part(path))
		len -= 5;
	if (len > 3 && !strncmp(path + len - 3, ".gz", 3))
		return BACH_FILE_GZIP;
	if (len > 4 && !strncmp(path + len - 4, ".zst", 4))
		return BACH_FILE_ZSTD;
	if (len > 4 && !strncmp(path + len - 4, ".byu", 4))
		return BACH_FILE_RAW;
	return KIND_AUTO;
}

/* Standard input or a pipe: the first bytes say gzip, zstd or raw. */
static int sniff_stream(struct bach_reader *r)
{
	ssize_t n = fill(r, r->in, 4);

	if (n < 0)
		return (int)n;
	r->kind = (enum bach_file_kind)sniff_kind(r->in, n);
	if (r->kinds[r->cur] != KIND_AUTO)
		r->kind = (enum bach_file_kind)r->kinds[r->cur];
	if (r->kind == BACH_FILE_RAW) {
		memcpy(r->out, r->in, (size_t)n);
		r->carry = (size_t)n;
		r->out_off = (uint64_t)n;
	} else if (r->kind == BACH_FILE_ZSTD) {
		r->zs.zlen = (size_t)n;
	} else {
		r->gz.zs.next_in = r->in;
		r->gz.zs.avail_in = (uInt)n;
	}
	return 0;
}

int reader_open_file(struct bach_reader *r)
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
	reader_zst_restart(r);

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
			return reader_fail(r, -errno, "%s: %s", path,
					   strerror(errno));
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
		uint8_t magic[4];

		/* a name that does not say: the first bytes, as for stdin */
		if (!r->sized)
			return sniff_stream(r);
		kind = sniff_kind(magic, pread(r->fd, magic, 4, 0));
	}
	r->kind = (enum bach_file_kind)kind;
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

/*
 * Room for output after the carry: the buffer, or with a range's end in
 * sight only what is still to be skipped and delivered (ten records after
 * a seek inflate one member, not a megabyte).
 */
static size_t out_room(const struct bach_reader *r)
{
	size_t room = r->out_cap - r->carry;
	uint64_t need;

	if (r->limit == UINT64_MAX || r->total_recs >= r->limit ||
	    r->skip_recs ||
	    r->limit - r->total_recs > (room + r->carry) / BACH_REC_SIZE)
		return room;
	need = r->skip + (r->limit - r->total_recs) * BACH_REC_SIZE;
	need = need > r->carry ? need - r->carry : 1;
	return need < room ? (size_t)need : room;
}

/* Produce raw bytes into r->out after the carry; returns bytes added. */
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

static ssize_t produce_zstd(struct bach_reader *r)
{
	ssize_t n = reader_zst_produce(r, out_room(r));

	if (n > 0)
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
		return reader_fail(
			r, -BACH_EDATA,
			"%s: truncated while being read: %llu bytes when opened, %lld now; reading stopped at byte offset %llu",
			bach_reader_file(r), (unsigned long long)r->size,
			fstat(r->fd, &st) ? -1ll : (long long)st.st_size,
			(unsigned long long)r->in_off);
	if (r->kind == BACH_FILE_ZSTD && reader_zst_check_end(r) < 0)
		return r->err;
	/*
	 * A trace may hold no records (docs/formats.md section 2): an empty
	 * .byu is one. An empty file read as gzip is not gzip at all.
	 */
	if (r->kind == BACH_FILE_GZIP && r->gz.members == 0 && r->in_off == 0)
		return reader_fail(r, -BACH_EDATA, "%s: empty file: not gzip",
				   bach_reader_file(r));
	/* a partial record, kept or passed over by a seek */
	if (r->carry || r->skip_acc)
		return reader_fail(
			r, -BACH_EDATA,
			"%s: truncated record at byte offset %llu (%llu of 6 bytes)",
			bach_reader_file(r),
			(unsigned long long)(r->out_off - r->carry -
					     r->skip_acc),
			(unsigned long long)(r->carry + r->skip_acc));
	/* a file that ends with a blocked member must end with the EOF block */
	if (r->kind == BACH_FILE_GZIP && r->gz.last_bc && !r->gz.eof_block)
		return reader_fail(
			r, -BACH_EDATA,
			"%s: missing EOF block: blocked gzip file ends at byte offset %llu without it (%s)",
			bach_reader_file(r), (unsigned long long)r->in_off,
			reader_cut_why(r));
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
			if (reader_open_file(r) < 0)
				return r->err;
		}
		if (r->kind == BACH_FILE_RAW)
			n = produce_raw(r);
		else if (r->kind == BACH_FILE_ZSTD)
			n = produce_zstd(r);
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
		    (r->kind == BACH_FILE_RAW ? r->file_eof
		     : r->kind == BACH_FILE_ZSTD
			     ? reader_zst_done(r)
			     : !r->gz.in_member && r->gz.zs.avail_in == 0 &&
				       r->file_eof)) {
			if (end_of_file(r) < 0)
				return r->err;
			reader_close_file(r);
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

static ssize_t read_clipped(struct bach_reader *r, const uint8_t **recs)
{
	ssize_t n;

	if (r->limit != UINT64_MAX && r->total_recs >= r->limit && !r->err &&
	    !r->deferred)
		return 0;
	n = read_block(r, recs);
	return n > 0 ? clip(r, n) : n;
}

ssize_t bach_reader_read(struct bach_reader *r, const uint8_t **recs)
{
	ssize_t n = read_clipped(r, recs);

	r->last_n = n > 0 ? (size_t)n : 0;
	return n;
}

int bach_reader_next_file(struct bach_reader *r)
{
	if (r->open)
		reader_close_file(r);
	if (r->cur < r->npaths)
		r->cur++;
	r->err = r->deferred = 0;
	r->file_recs = 0;
	return r->cur < r->npaths;
}
