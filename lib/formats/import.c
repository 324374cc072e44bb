// SPDX-License-Identifier: MIT
/*
 * Importers: read a foreign trace a large block at a time, split it into
 * lines (or fixed-size binary records) and hand each to the format's
 * line() (lib/formats/FAMILY.c), collecting the records it makes into blocks.
 * Input that starts with the gzip magic is inflated on the way in (one
 * member or many concatenated, as the CIS 501 traces ship: .trace.gz);
 * line numbers and record offsets then count the uncompressed data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach/record.h"
#include "bach/trace.h"
#include "lib/formats/formats.h"
#include "lib/io/gzin.h"

#define MAX_LINE (1u << 20)	/* the longest line taken, in bytes */
#define IN_CAP	 (2 * MAX_LINE) /* a whole line always fits after a refill */
#define OUT_RECS 65536
#define Z_CAP	 (256u << 10) /* compressed bytes read at a time */

struct bach_importer {
	const struct bach_format *f;
	unsigned flags;
	int fd;
	char *path;
	char *in; /* IN_CAP bytes */
	size_t in_len, in_off;
	bool eof;
	uint64_t in_pos; /* offset of in[0] in the (uncompressed) input */
	size_t unit;	 /* binary record size, 0 for a line format */

	/* gzip input, inflated as the trace reader does (gzin.h) */
	bool gz;
	struct gzin gzi;
	bool zeof;     /* the file has ended */
	uint8_t *zin;  /* Z_CAP bytes */
	uint64_t zpos; /* bytes read from the file */
	uint8_t *out;  /* OUT_RECS + BACH_IMPORT_MAX_RECS records */
	struct bach_import_stats st;
	int err;
	int deferred; /* reported after the records made before it */
	char msg[512];
};

__attribute__((format(printf, 3, 4))) static int
ifail(struct bach_importer *im, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(im->msg, sizeof(im->msg), fmt, ap);
	va_end(ap);
	im->err = err;
	return err;
}

static const char *iname(const struct bach_importer *im)
{
	return strcmp(im->path, "-") ? im->path : "<stdin>";
}

/* read() whole, EINTR retried; bytes, 0 at the end, or -errno */
static ssize_t raw_read(struct bach_importer *im, void *dst, size_t cap)
{
	ssize_t n;

	do
		n = read(im->fd, dst, cap);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ifail(im, -errno,
			     "%s: read error at byte offset %llu: %s",
			     iname(im), (unsigned long long)im->zpos,
			     strerror(errno));
	im->zpos += (uint64_t)n;
	return n;
}

/* The gzip input's read (gzin.h): the file's bytes, its end noted. */
static ssize_t gz_raw_read(void *ctx, uint8_t *buf, size_t len)
{
	struct bach_importer *im = ctx;
	ssize_t n = raw_read(im, buf, len);

	if (n == 0)
		im->zeof = true;
	return n;
}

/*
 * Look at the first bytes: the gzip magic makes this a gzip input, read
 * through zlib from then on; anything else is the data itself, kept as
 * the start of the input buffer.
 */
static int sniff(struct bach_importer *im)
{
	size_t got = 0;

	while (got < 2 && !im->zeof) {
		ssize_t n = raw_read(im, im->zin + got, Z_CAP - got);

		if (n < 0)
			return (int)n;
		if (n == 0)
			im->zeof = true;
		got += (size_t)n;
	}
	if (got >= 2 && im->zin[0] == 0x1f && im->zin[1] == 0x8b) {
		im->gz = true;
		im->gzi.zs.next_in = im->zin;
		im->gzi.zs.avail_in = (uInt)got;
		return 0;
	}
	memcpy(im->in, im->zin, got);
	im->in_len = got;
	im->eof = im->zeof;
	return 0;
}

int bach_importer_open(struct bach_importer **ip, const struct bach_format *f,
		       const char *path, unsigned flags)
{
	struct bach_importer *im = calloc(1, sizeof(*im));

	*ip = im;
	if (!im)
		return -ENOMEM;
	im->f = f;
	im->flags = flags;
	im->unit = f->unit;
	im->fd = -1;
	im->path = strdup(path);
	im->in = malloc(IN_CAP);
	im->zin = malloc(Z_CAP);
	im->out = malloc((OUT_RECS + BACH_IMPORT_MAX_RECS) * BACH_REC_SIZE);
	if (!im->path || !im->in || !im->zin || !im->out)
		return ifail(im, -ENOMEM, "%s: out of memory", path);
	if (!f->line)
		return ifail(im, -EINVAL, "%s: %s is not a format bach imports",
			     path, f->name);
	gzin_init(&im->gzi, im->zin, Z_CAP, gz_raw_read, im, &im->zeof,
		  &im->zpos, im->msg, sizeof(im->msg));
	im->gzi.name = iname(im);
	if (!strcmp(path, "-")) {
		im->fd = 0;
	} else {
		im->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (im->fd < 0)
			return ifail(im, -errno, "%s: %s", path,
				     strerror(errno));
		posix_fadvise(im->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	return sniff(im);
}

void bach_importer_free(struct bach_importer *im)
{
	if (!im)
		return;
	if (im->fd > 0)
		close(im->fd);
	free(im->path);
	gzin_end(&im->gzi);
	free(im->in);
	free(im->zin);
	free(im->out);
	free(im);
}

const char *bach_importer_strerror(const struct bach_importer *im)
{
	return im->msg[0] ? im->msg : "no error";
}

void bach_importer_stats(const struct bach_importer *im,
			 struct bach_import_stats *st)
{
	*st = im->st;
}

/* Uncompressed bytes of a gzip input into dst; 0 at a clean end. */
static ssize_t gz_read(struct bach_importer *im, char *dst, size_t cap)
{
	ssize_t n = gzin_inflate(&im->gzi, (uint8_t *)dst, cap);

	if (n < 0)
		im->err = (int)n;
	return n;
}

/* Keep the unread tail, read more after it; false at the end of input. */
static int refill(struct bach_importer *im)
{
	size_t keep = im->in_len - im->in_off;

	memmove(im->in, im->in + im->in_off, keep);
	im->in_pos += im->in_off;
	im->in_off = 0;
	im->in_len = keep;
	while (im->in_len < IN_CAP && !im->eof) {
		char *dst = im->in + im->in_len;
		size_t room = IN_CAP - im->in_len;
		ssize_t n = im->gz ? gz_read(im, dst, room)
				   : raw_read(im, dst, room);

		if (n < 0)
			return (int)n;
		if (n == 0)
			im->eof = true;
		im->in_len += (size_t)n;
	}
	return 0;
}

/* One unit of input (a line, or a p2AddrTr record) into out; -errno. */
static int one(struct bach_importer *im, const char *p, size_t len,
	       uint8_t *out, size_t *made)
{
	const char *why = "malformed";
	int n;

	im->st.lines++;
	n = im->f->line(p, len, im->flags, out, &im->st.skipped, &why);
	if (n < 0) {
		if (im->unit)
			return ifail(im, -BACH_EDATA,
				     "%s: record %llu (byte offset %llu): %s",
				     iname(im),
				     (unsigned long long)(im->st.lines - 1),
				     (unsigned long long)((im->st.lines - 1) *
							  im->unit),
				     why);
		return ifail(im, -BACH_EDATA, "%s: line %llu: %s: '%.*s'",
			     iname(im), (unsigned long long)im->st.lines, why,
			     (int)(len > 80 ? 80 : len), p);
	}
	*made += (size_t)n;
	im->st.records += (uint64_t)n;
	return 0;
}

static int too_long(struct bach_importer *im)
{
	return ifail(
		im, -BACH_EDATA,
		"%s: line %llu: longer than %u bytes (the most a line may have)",
		iname(im), (unsigned long long)im->st.lines + 1, MAX_LINE);
}

/* Records into im->out, *made of them even on failure; 0 or -errno. */
static int import_some(struct bach_importer *im, size_t *made)
{
	int err = 0;

	*made = 0;

	while (*made < OUT_RECS) {
		uint8_t *out = im->out + *made * BACH_REC_SIZE;
		size_t avail = im->in_len - im->in_off;
		const char *p = im->in + im->in_off;

		if (im->unit) {
			if (avail < im->unit) {
				if (im->eof) {
					if (avail)
						return ifail(
							im, -BACH_EDATA,
							"%s: size is not a multiple of %zu: %zu bytes left over at byte offset %llu",
							iname(im), im->unit,
							avail,
							(unsigned long long)(im->in_pos +
									     im->in_off));
					break; /* an empty input: an empty trace
						*/
				}
				if (refill(im))
					return im->err;
				continue;
			}
			im->in_off += im->unit;
			if (one(im, p, im->unit, out, made))
				return im->err;
			continue;
		}

		const char *nl = memchr(p, '\n', avail);
		size_t len;

		if (!nl) {
			if (!im->eof && avail <= MAX_LINE) {
				if (refill(im))
					return im->err;
				continue;
			}
			if (!im->eof)
				return too_long(im);
			if (!avail)
				break; /* an empty input: an empty trace */
			len = avail;   /* last line without a newline */
			im->in_off += len;
		} else {
			len = (size_t)(nl - p);
			im->in_off += len + 1;
		}
		if (len > MAX_LINE) {
			err = too_long(im);
			break;
		}
		if (len && p[len - 1] == '\r')
			len--;
		if (one(im, p, len, out, made)) {
			err = im->err;
			break;
		}
	}
	return err;
}

ssize_t bach_importer_read(struct bach_importer *im, const uint8_t **recs)
{
	size_t made = 0;
	int err;

	if (im->deferred) {
		im->err = im->deferred;
		im->deferred = 0;
	}
	if (im->err)
		return im->err;
	err = import_some(im, &made);
	if (err && !made)
		return err;
	if (err) {
		/* the records before a bad line first, the error next */
		im->deferred = err;
		im->err = 0;
	}
	*recs = im->out;
	return (ssize_t)made;
}
