// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: timing sidecars (docs/formats.md section 3.2,
 * lib/io/timing.h), read and written.
 *
 * Input: byte 0 picks the mode; bytes 1..2, u16 LE, a record count N;
 * byte 3, the chunk the entries are asked for in (1 to 256, times 97 so
 * that chunks straddle members).
 *   - mode even: the rest is a sidecar, written as t.time.gz beside a
 *     trace t.byu.gz. bach_times_get() is asked for entries 0..N-1 in
 *     chunks, then bach_times_end().
 *     Oracle: when the reader accepts the file (every get and the end
 *     succeed), zlib, decoding the file as one multi-member gzip stream
 *     (RFC 1952, members one after another; each member's data u64 LE
 *     entries, or, when its extra field has a TE subfield, the zigzag
 *     LEB128 varints of the differences docs/formats.md 3.2 defines,
 *     one an entry or in runs (encoding 1 or 2), decoded here from that
 *     text), gives exactly N entries and
 *     the same ones, whose clocks (the entries but BACH_TIME_NONE) never
 *     go back, and the reader never yields more entries than the file
 *     holds. A refusal is -EBADMSG (or -ENOENT never: the file is there)
 *     with a message naming the sidecar.
 *   - mode odd: the rest, as u64 LE entries repeated up to N (3 x
 *     8160 + 5 at most, so that members fill), goes through
 *     bach_time_writer_put() (bit 1 of the mode clear) or, as the
 *     capture's ring gives them, bach_time_writer_steps() (set), and
 *     _close(), then back through the reader.
 *     Oracle: when the entries' clocks never go back, every entry comes
 *     back, bach_times_end() finds no more, and zlib decodes the file to
 *     the same entries; when they do, the reader refuses the first entry
 *     whose clock is below the one before it, by its index.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bach/bytes.h"
#include "lib/io/timing.h"

#include "fuzz_check.h"

#define MAXN (3 * BACH_TIME_MEMBER_ENTRIES + 5)

static char dir[64], trace[96], side[104];

static void cleanup(void)
{
	unlink(side);
	rmdir(dir);
}

/*
 * A member's TE subfield (docs/formats.md 3.2) from its header at p (n
 * bytes left): its entry count, 0 when it has none (u64s), -1 when its
 * encoding is not 1 or 2; *enc its encoding.
 */
static long te_entries(const uint8_t *p, size_t n, unsigned *enc)
{
	size_t xlen, i;

	if (n < 12 || !(p[3] & 4))
		return 0;
	xlen = (size_t)(p[10] | p[11] << 8);
	for (i = 0; i + 4 <= xlen && 12 + xlen <= n;
	     i += 4 + (size_t)(p[12 + i + 2] | p[12 + i + 3] << 8)) {
		const uint8_t *sf = p + 12 + i;

		if (sf[0] == 'T' && sf[1] == 'E' && i + 4 + 3 <= xlen) {
			*enc = sf[4];
			return sf[4] == 1 || sf[4] == 2
				       ? (long)(sf[5] | sf[6] << 8)
				       : -1;
		}
	}
	return 0;
}

/*
 * zlib's reading of a multi-member gzip file: the entries of every
 * member, one after another, into out (cap at most). -1 when zlib refuses
 * a member, bytes follow that are not one, or a member's data is not
 * whole entries (u64s, or exactly its TE's varints); the entries
 * otherwise.
 */
static long zlib_members(const uint8_t *p, size_t n, uint64_t *out, size_t cap)
{
	static uint8_t raw[1 << 20];
	size_t off = 0, have = 0;

	while (off < n) {
		z_stream zs = { 0 };
		unsigned enc = 0;
		long te = te_entries(p + off, n - off, &enc);
		size_t len;
		int rc;

		CHECK(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK,
		      "inflateInit2");
		zs.next_in = (uint8_t *)(uintptr_t)(p + off);
		zs.avail_in = (uInt)(n - off);
		zs.next_out = raw;
		zs.avail_out = sizeof(raw);
		rc = inflate(&zs, Z_FINISH);
		len = sizeof(raw) - zs.avail_out;
		off = n - zs.avail_in;
		inflateEnd(&zs);
		if (rc != Z_STREAM_END || te < 0)
			return -1;
		if (!te) {
			if (len % 8 || have + len / 8 > cap)
				return -1;
			for (size_t i = 0; i < len; i += 8)
				out[have++] = bach_get_le64(raw + i);
			continue;
		}
		{ /* varints: 7 bits a byte, low first; zigzag differences,
		   * one an entry (encoding 1), or each with a count of
		   * entries (encoding 2: runs) */
			size_t i = 0;
			uint64_t v = 0;

			for (long k = 0; k < te;) {
				uint64_t z = 0, c = 1;
				unsigned sh = 0;

				do {
					if (i == len || sh > 63)
						return -1;
					z |= (uint64_t)(raw[i] & 0x7f) << sh;
					sh += 7;
				} while (raw[i++] & 0x80);
				if (enc == 2) {
					c = 0, sh = 0;
					do {
						if (i == len || sh > 63)
							return -1;
						c |= (uint64_t)(raw[i] & 0x7f)
						     << sh;
						sh += 7;
					} while (raw[i++] & 0x80);
					if (!c || c > (uint64_t)(te - k))
						return -1;
				}
				for (; c; c--, k++) {
					if (have == cap)
						return -1;
					v += (z & 1) ? ~(z >> 1) : z >> 1;
					out[have++] = v;
				}
			}
			if (i != len)
				return -1;
		}
	}
	return (long)have;
}

/* The first of n entries whose clock is below the last clock before it
 * (BACH_TIME_NONE entries are no clocks), or n. */
static uint64_t first_back(const uint64_t *e, uint64_t n)
{
	uint64_t last = 0;

	for (uint64_t i = 0; i < n; i++) {
		if (e[i] == BACH_TIME_NONE)
			continue;
		if (e[i] < last)
			return i;
		last = e[i];
	}
	return n;
}

/*
 * Read the sidecar back: with want (the writer's entries), it must be
 * accepted when their clocks never go back (back == n), else refused at
 * entry back.
 */
static void read_back(uint64_t n, size_t chunk, const uint64_t *want,
		      uint64_t back)
{
	static uint64_t zent[MAXN + 8];
	bool must = want && back == n;
	static uint8_t file[1 << 20];
	struct bach_times *t = bach_times_new();
	const uint64_t *e;
	uint64_t at = 0;
	long z;
	int rc = 0;
	int fd;
	ssize_t flen;

	CHECK(t, "bach_times_new");
	if (!n) { /* nothing asked for: the file is not even opened */
		bach_times_free(t);
		return;
	}
	while (at < n && !rc) {
		size_t k = n - at < chunk ? (size_t)(n - at) : chunk;

		rc = bach_times_get(t, trace, at, k, &e);
		if (!rc) {
			if (want)
				CHECK(!memcmp(e, want + at, k * 8),
				      "entries %llu.. differ from those written",
				      (unsigned long long)at);
			at += k;
		}
	}
	if (!rc)
		rc = bach_times_end(t);
	CHECK(!want || back == n || rc, "entry %llu goes back, not refused",
	      (unsigned long long)back);
	if (rc) {
		char at[64];

		CHECK(!must, "a sidecar the writer wrote is refused: %s",
		      bach_times_strerror(t));
		snprintf(at, sizeof(at), ": entry %llu (",
			 (unsigned long long)back);
		CHECK(!want || back == n ||
			      (strstr(bach_times_strerror(t), at) &&
			       strstr(bach_times_strerror(t), "go backwards")),
		      "entry %llu goes back, refused as: %s",
		      (unsigned long long)back, bach_times_strerror(t));
		CHECK(rc == -EBADMSG, "refused with %d: %s", rc,
		      bach_times_strerror(t));
		CHECK(strstr(bach_times_strerror(t), side),
		      "the message does not name the sidecar: %s",
		      bach_times_strerror(t));
		bach_times_free(t);
		return;
	}

	/* accepted: zlib must read the same entries, and no more */
	fd = open(side, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "%s: %s", side, strerror(errno));
	flen = read(fd, file, sizeof(file));
	close(fd);
	CHECK(flen >= 0 && (size_t)flen < sizeof(file), "read back");
	z = zlib_members(file, (size_t)flen, zent, MAXN + 8);
	CHECK(z >= 0, "accepted %llu entries of a file zlib refuses",
	      (unsigned long long)n);
	CHECK((uint64_t)z == n, "accepted as %llu entries, zlib decodes %ld",
	      (unsigned long long)n, z);
	CHECK(first_back(zent, n) == n,
	      "accepted, but entry %llu's clock goes back",
	      (unsigned long long)first_back(zent, n));
	/* the entries the reader gave, read again in one piece */
	bach_times_free(t);
	t = bach_times_new();
	CHECK(t, "bach_times_new");
	CHECK(!bach_times_get(t, trace, 0, (size_t)n, &e), "again: %s",
	      bach_times_strerror(t));
	for (uint64_t i = 0; i < n; i++)
		CHECK(e[i] == zent[i], "entry %llu: %llx, zlib says %llx",
		      (unsigned long long)i, (unsigned long long)e[i],
		      (unsigned long long)zent[i]);
	bach_times_free(t);
}

/*
 * n entries through bach_time_writer_steps(), as the capture's ring
 * (core/ring.h) gives them: blocks of 10880, each from BACH_TIME_NONE,
 * steps below 65535 within the same kind (clock or none), an escape for
 * the rest.
 */
static void put_steps(struct bach_time_writer *w, const uint64_t *e, size_t n)
{
	static uint16_t st[MAXN];
	static uint64_t esc[MAXN];

	for (size_t i = 0; i < n; i += 10880) {
		size_t k = n - i < 10880 ? n - i : 10880, ne = 0;
		uint64_t prev = BACH_TIME_NONE;

		for (size_t j = 0; j < k; j++) {
			uint64_t v = e[i + j], d = v - prev;

			if (d >= BACH_TIME_ESCAPE ||
			    (v == BACH_TIME_NONE) != (prev == BACH_TIME_NONE)) {
				st[j] = BACH_TIME_ESCAPE;
				esc[ne++] = v;
			} else {
				st[j] = (uint16_t)d;
			}
			prev = v;
		}
		CHECK(!bach_time_writer_steps(w, BACH_TIME_NONE, st, esc, k),
		      "steps");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t ent[MAXN];
	uint64_t n;
	size_t chunk;

	if (size < 4)
		return 0;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-timing.%d",
			 (int)getpid());
		CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST, "mkdir");
		snprintf(trace, sizeof(trace), "%s/t.byu.gz", dir);
		CHECK(!bach_time_name(side, sizeof(side), trace), "name");
		atexit(cleanup);
	}
	n = (uint64_t)(data[1] | data[2] << 8);
	chunk = (size_t)(data[3] % 256 + 1) * 97;
	if (!(data[0] & 1)) {
		fuzz_put_path(side, data + 4, size - 4);
		read_back(n, chunk, NULL, n);
		return 0;
	}

	/* the writer's file, read back */
	{
		struct bach_time_writer *w;
		size_t m = (size - 4) / 8;

		if (n > MAXN)
			n = MAXN;
		if (!m)
			n = 0;
		for (uint64_t i = 0; i < n; i++)
			ent[i] = bach_get_le64(data + 4 + (i % m) * 8);
		unlink(side);
		CHECK(!bach_time_writer_open(&w, AT_FDCWD, side,
					     (uint64_t)data[0] * 1000),
		      "writer open");
		if (data[0] & 2)
			put_steps(w, ent, (size_t)n);
		else
			CHECK(!bach_time_writer_put(w, ent, (size_t)n), "put");
		CHECK(bach_time_writer_entries(w) == n, "entries");
		CHECK(!bach_time_writer_close(w, false), "close");
		bach_time_writer_free(w);
		read_back(n, chunk, ent, first_back(ent, n));
	}
	return 0;
}
