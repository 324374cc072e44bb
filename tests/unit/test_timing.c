// SPDX-License-Identifier: MIT
/*
 * Timing sidecars (lib/io/timing.h, docs/formats.md 3.2) written with their
 * members compressed in a pool (bach_time_writer_pool()): the same bytes
 * as written on the caller's thread, read back whole by zlib's gzread (a
 * reader not ours: multi-member gzip) and entry for entry by bach_times,
 * with the BT rate; a writer freed with members pending leaves no file.
 * The writer's summary (size, CRC-32, first and last clocks) against
 * zlib's crc32 of the file; clocks that go back refused, within a sidecar
 * and from one segment to the next; a segment without one in a timed
 * capture read untimed; an unfinished sidecar recovered for its segment's
 * records, checked with gzread.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "bach/bytes.h"
#include "bach/trace.h"
#include "lib/io/timing.h"
#include "lib/io/zpool.h"

#define N (5 * BACH_TIME_MEMBER_ENTRIES + 123)

static char dir[] = "/tmp/bach-timing.XXXXXX";
static uint64_t clk[N];

static void write_sidecar_sum(const char *name, struct bach_zpool *pool,
			      struct bach_time_summary *sum)
{
	struct bach_time_writer *w;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	assert_true(dfd >= 0);
	assert_int_equal(bach_time_writer_open(&w, dfd, name, 66666666), 0);
	if (pool)
		assert_int_equal(bach_time_writer_pool(w, pool), 0);
	/* in uneven pieces, and a run of entries without a time */
	for (size_t i = 0; i < N;) {
		size_t k = (i * 7 + 1000) % 9000 + 1;

		if (k > N - i)
			k = N - i;
		assert_int_equal(bach_time_writer_put(w, clk + i, k), 0);
		i += k;
	}
	assert_int_equal(bach_time_writer_entries(w), N);
	assert_int_equal(bach_time_writer_close(w, false), 0);
	if (sum)
		bach_time_writer_summary(w, sum);
	bach_time_writer_free(w);
	close(dfd);
}

static void write_sidecar(const char *name, struct bach_zpool *pool)
{
	write_sidecar_sum(name, pool, NULL);
}

static uint8_t *slurp(const char *name, size_t *len)
{
	char path[256];
	struct stat st;
	uint8_t *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(stat(path, &st), 0);
	p = malloc((size_t)st.st_size);
	f = fopen(path, "rb");
	assert_non_null(p);
	assert_non_null(f);
	assert_int_equal(fread(p, 1, (size_t)st.st_size, f), st.st_size);
	fclose(f);
	*len = (size_t)st.st_size;
	return p;
}

/*
 * The entries of sidecar PATH read as docs/formats.md section 3.2 says,
 * with zlib's inflate (none of bach's reading): member after member
 * (BSIZE in the BC subfield), its data u64s little-endian (version 1) or,
 * when the extra field has a TE subfield (version 2), the differences
 * from entry to entry, from 0 in each member: zigzag LEB128 varints, one
 * an entry (encoding 1), or runs, each such a varint and then an unsigned
 * varint count of entries that differ by it (encoding 2).
 * Stops at the EOF block; returns the entries (at most cap).
 */
static size_t zlib_entries(const char *path, uint64_t *e, size_t cap)
{
	static uint8_t out[65536];
	size_t flen, off = 0, n = 0;
	uint8_t *f = slurp(path, &flen);

	while (off + 18 <= flen) {
		const uint8_t *m = f + off;
		size_t xlen = m[10] | m[11] << 8, bsize = 0, te = 0, enc = 0;
		size_t isize, i;
		z_stream zs = { 0 };

		for (i = 0; i + 4 <= xlen;
		     i += 4 + (m[12 + i + 2] | m[12 + i + 3] << 8)) {
			if (m[12 + i] == 'B' && m[12 + i + 1] == 'C')
				bsize = (m[12 + i + 4] | m[12 + i + 5] << 8) +
					1u;
			if (m[12 + i] == 'T' && m[12 + i + 1] == 'E') {
				enc = m[12 + i + 4];
				assert_true(enc == 1 || enc == 2);
				te = m[12 + i + 5] | m[12 + i + 6] << 8;
			}
		}
		assert_true(bsize && off + bsize <= flen);
		isize = bach_get_le32(m + bsize - 4);
		if (!isize)
			break;
		assert_int_equal(inflateInit2(&zs, -15), Z_OK);
		zs.next_in = (uint8_t *)m + 12 + xlen;
		zs.avail_in = (uInt)(bsize - 12 - xlen - 8);
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
		assert_int_equal(zs.total_out, isize);
		inflateEnd(&zs);
		if (!te) {
			for (i = 0; i + 8 <= isize && n < cap; i += 8)
				e[n++] = bach_get_le64(out + i);
		} else {
			uint64_t v = 0;

			for (i = 0; te && n < cap;) {
				uint64_t z = 0, k = 0, d;
				unsigned sh = 0;

				do
					z |= (uint64_t)(out[i] & 0x7f) << sh,
						sh += 7;
				while (out[i++] & 0x80);
				d = z & 1 ? ~(z >> 1) : z >> 1;
				if (enc == 1) {
					k = 1;
				} else {
					sh = 0;
					do
						k |= (uint64_t)(out[i] & 0x7f)
						     << sh,
							sh += 7;
					while (out[i++] & 0x80);
				}
				assert_true(k >= 1 && k <= te);
				for (; k && n < cap; k--, te--)
					e[n++] = v += d;
			}
			assert_int_equal(i, isize);
		}
		off += bsize;
	}
	free(f);
	return n;
}

static size_t gz_entries(const char *name, uint64_t *e, size_t cap)
{
	char path[512];

	snprintf(path, sizeof(path), "r/%s", name);
	return zlib_entries(path, e, cap);
}

static void pooled_is_the_same(void **state)
{
	struct bach_zpool *pool =
		bach_zpool_new(2, 3, BACH_TIME_BACKEND, BACH_TIME_LEVEL);
	uint8_t *a, *b;
	size_t alen, blen;
	char trace[256];
	struct bach_times *t;
	const uint64_t *got;

	(void)state;
	assert_non_null(pool);
	for (size_t i = 0; i < N; i++)
		clk[i] = i >= 20000 && i < 20100 ? BACH_TIME_NONE
						 : 1000000 + 8 * i + (i % 7);
	write_sidecar("own.time.gz", NULL);
	write_sidecar("pool.time.gz", pool);
	/* the pool serves the next writer once the last is closed */
	write_sidecar("pool2.time.gz", pool);
	a = slurp("own.time.gz", &alen);
	b = slurp("pool.time.gz", &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(b);
	b = slurp("pool2.time.gz", &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(a);
	free(b);

	{
		static uint64_t ref[N + 1];

		assert_int_equal(zlib_entries("pool.time.gz", ref, N + 1), N);
		assert_memory_equal(ref, clk, sizeof(clk));
	}

	snprintf(trace, sizeof(trace), "%s/pool.byu.gz", dir);
	t = bach_times_new();
	assert_non_null(t);
	assert_int_equal(bach_times_get(t, trace, 0, N, &got), 0);
	assert_memory_equal(got, clk, sizeof(clk));
	assert_true(bach_times_clock_hz(t) == 66666666);
	assert_int_equal(bach_times_end(t), 0);
	bach_times_free(t);
	bach_zpool_free(pool);
}

static void freed_with_members_pending(void **state)
{
	struct bach_zpool *pool =
		bach_zpool_new(1, 4, BACH_TIME_BACKEND, BACH_TIME_LEVEL);
	struct bach_time_writer *w;
	char path[256];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	(void)state;
	assert_non_null(pool);
	assert_int_equal(bach_time_writer_open(&w, dfd, "gone.time.gz", 0), 0);
	assert_int_equal(bach_time_writer_pool(w, pool), 0);
	assert_int_equal(bach_time_writer_put(w, clk, N), 0);
	bach_time_writer_free(w);
	assert_int_equal(bach_zpool_pending(pool), 0);
	snprintf(path, sizeof(path), "%s/gone.time.gz.part", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	close(dfd);
	bach_zpool_free(pool);
}

/* The sidecar's summary is the file's: its size, zlib's CRC-32 of it. */
static void summary_is_the_file(void **state)
{
	struct bach_time_summary sum;
	uint8_t *a;
	size_t alen;

	(void)state;
	for (size_t i = 0; i < N; i++)
		clk[i] = i < 10 || (i >= 20000 && i < 20100) || i == N - 1
				 ? BACH_TIME_NONE
				 : 5000 + 2 * i;
	write_sidecar_sum("sum.time.gz", NULL, &sum);
	a = slurp("sum.time.gz", &alen);
	assert_true(sum.bytes == alen);
	assert_true(sum.crc == crc32(0, a, (uInt)alen));
	assert_true(sum.entries == N);
	assert_true(sum.clock_hz == 66666666);
	assert_true(sum.has_clocks);
	assert_true(sum.first_clock == 5000 + 2 * 10);
	assert_true(sum.last_clock == 5000 + 2 * (N - 2));
	free(a);
}

/* Write n entries of e to dir/sub/name, closed. */
static void write_entries(const char *sub, const char *name, const uint64_t *e,
			  size_t n)
{
	struct bach_time_writer *w;
	char d[256];
	int dfd;

	snprintf(d, sizeof(d), "%s/%s", dir, sub);
	mkdir(d, 0755);
	dfd = open(d, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(bach_time_writer_open(&w, dfd, name, 1000), 0);
	assert_int_equal(bach_time_writer_put(w, e, n), 0);
	assert_int_equal(bach_time_writer_close(w, false), 0);
	bach_time_writer_free(w);
	close(dfd);
}

/* bach_times_get() of n entries of dir/sub/trace, in one call. */
static int get_all(struct bach_times *t, const char *sub, const char *trace,
		   size_t n, const uint64_t **got)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, trace);
	return bach_times_get(t, path, 0, n, got);
}

static void put_manifest(const char *sub, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/manifest.jsonl", dir, sub);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void backwards_within_refused(void **state)
{
	struct bach_times *t = bach_times_new();
	const uint64_t *got;
	char want[200];

	(void)state;
	for (size_t i = 0; i < N; i++)
		clk[i] = i == 9001 ? BACH_TIME_NONE : 100 + 2 * i;
	clk[9002] = clk[9000] - 1; /* a NONE between is no clock */
	write_entries("w", "back.time.gz", clk, N);
	assert_int_equal(get_all(t, "w", "back.byu.gz", N, &got), -EBADMSG);
	assert_non_null(strstr(
		bach_times_strerror(t),
		"back.time.gz: entry 9002 (in the member at byte offset "));
	snprintf(
		want, sizeof(want),
		"clock %llu is before clock %llu of entry 9000: the clocks go backwards",
		(unsigned long long)clk[9002], (unsigned long long)clk[9000]);
	assert_non_null(strstr(bach_times_strerror(t), want));
	/* equal clocks (a gap marker's) are no step back */
	clk[9002] = clk[9000];
	write_entries("w", "same.time.gz", clk, N);
	assert_int_equal(get_all(t, "w", "same.byu.gz", N, &got), 0);
	assert_int_equal(bach_times_end(t), 0);
	bach_times_free(t);
}

static void backwards_across_segments(void **state)
{
	struct bach_times *t = bach_times_new();
	uint64_t a[100], b[100];
	const uint64_t *got;

	(void)state;
	for (size_t i = 0; i < 100; i++) {
		a[i] = 1000 + i;
		b[i] = 500 + i; /* the next segment starts before a ended */
	}
	write_entries("c", "seg-000001.time.gz", a, 100);
	write_entries("c", "seg-000002.time.gz", b, 100);
	assert_int_equal(get_all(t, "c", "seg-000001.byu.gz", 100, &got), 0);
	assert_int_equal(get_all(t, "c", "seg-000002.byu.gz", 100, &got),
			 -EBADMSG);
	assert_non_null(strstr(
		bach_times_strerror(t),
		"seg-000002.time.gz: entry 0 (in the member at byte offset 0): clock 500 is before 1099, the last clock of "));
	assert_non_null(strstr(
		bach_times_strerror(t),
		"c/seg-000001.time.gz (entry 99): the clocks go backwards from one segment to the next"));
	bach_times_free(t);
	/* another directory's segment is another capture: not compared */
	write_entries("d", "seg-000002.time.gz", b, 100);
	t = bach_times_new();
	assert_int_equal(get_all(t, "c", "seg-000001.byu.gz", 100, &got), 0);
	assert_int_equal(get_all(t, "d", "seg-000002.byu.gz", 100, &got), 0);
	bach_times_free(t);
	/* a board back in the later segment started its clock again */
	put_manifest(
		"c",
		"{\"event\":\"started\"}\n"
		"{\"event\":\"device_back\",\"segment\":\"seg-000002.byu.gz\",\"at\":100}\n");
	t = bach_times_new();
	assert_int_equal(get_all(t, "c", "seg-000001.byu.gz", 100, &got), 0);
	assert_int_equal(get_all(t, "c", "seg-000002.byu.gz", 100, &got), 0);
	assert_true(got[0] == 500);
	bach_times_free(t);
}

#define SEG_EVENT(n, timing)                                                   \
	"{\"event\":\"segment\",\"name\":\"seg-00000" #n                       \
	".byu.gz\",\"records\":100,\"bytes\":0,\"crc32\":\"00000000\"" timing  \
	"}\n"

/*
 * Version 2 (docs/formats.md 3.2): a steady clock takes almost nothing
 * (encoding 2, runs); a member whose runs would be larger than u64s is
 * written as version 1; a TE subfield that promises more entries than
 * the data holds is damage, named with the member's offset.
 */
static void delta_members(void **state)
{
	static uint64_t ref[N + 1];
	const uint64_t *got;
	struct bach_times *t;
	char trace[256], path[256];
	uint8_t *f;
	size_t flen;
	FILE *fp;

	(void)state;
	for (size_t i = 0; i < N; i++) /* the fake board: 2 clocks a record */
		clk[i] = i < 10 ? BACH_TIME_NONE : 5000 + 2 * i;
	write_sidecar("steady.time.gz", NULL);
	f = slurp("steady.time.gz", &flen);
	/* 6 members and the EOF block, each a few dozen bytes */
	assert_true(flen < 6 * 60 + 28);
	assert_int_equal(f[10] | f[11] << 8, 6 + 12 + 7); /* BC, BT, TE */
	free(f);
	assert_int_equal(zlib_entries("steady.time.gz", ref, N + 1), N);
	assert_memory_equal(ref, clk, sizeof(clk));
	snprintf(trace, sizeof(trace), "%s/steady.byu.gz", dir);
	t = bach_times_new();
	assert_int_equal(bach_times_get(t, trace, 0, N, &got), 0);
	assert_memory_equal(got, clk, sizeof(clk));
	bach_times_free(t);

	/* differences of 2^56 and more, no two alike: 10 or 11 bytes each,
	 * so u64s */
	for (size_t i = 0; i < N; i++)
		clk[i] = (uint64_t)i * i * 0x9e3779b97f4a7c15ull;
	write_sidecar("wild.time.gz", NULL);
	f = slurp("wild.time.gz", &flen);
	assert_int_equal(f[10] | f[11] << 8, 6 + 12); /* BC, BT: version 1 */
	free(f);
	assert_int_equal(zlib_entries("wild.time.gz", ref, N + 1), N);
	assert_memory_equal(ref, clk, sizeof(clk));

	/* the steady one's first TE says one entry fewer than it holds */
	snprintf(path, sizeof(path), "%s/steady.time.gz", dir);
	fp = fopen(path, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, 18 + 12 + 5, SEEK_SET), 0);
	assert_int_equal(fputc((BACH_TIME_MEMBER_ENTRIES - 1) & 0xff, fp),
			 (BACH_TIME_MEMBER_ENTRIES - 1) & 0xff);
	assert_int_equal(fputc((BACH_TIME_MEMBER_ENTRIES - 1) >> 8, fp),
			 (BACH_TIME_MEMBER_ENTRIES - 1) >> 8);
	fclose(fp);
	t = bach_times_new();
	assert_int_equal(bach_times_get(t, trace, 0, 100, &got), -EBADMSG);
	assert_non_null(
		strstr(bach_times_strerror(t),
		       "steady.time.gz: member at byte offset 0: its data ("));
	assert_non_null(strstr(
		bach_times_strerror(t),
		" bytes) is not the 8159 entries its TE subfield says, as runs"));
	bach_times_free(t);
}

/*
 * A sidecar of encoding 1 (what bach wrote before encoding 2: one zigzag
 * varint an entry), made here with zlib from docs/formats.md 3.2, and
 * one member of version 1 (u64s) after it: both still read.
 */
static void put_member(FILE *fp, const uint8_t *data, size_t len, unsigned enc,
		       size_t entries)
{
	static uint8_t out[70000];
	uint8_t h[37] = { 0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff };
	size_t xlen = enc ? 25 : 18, clen;
	uLong crc = crc32(0, data, (uInt)len);
	z_stream zs = { 0 };

	assert_int_equal(
		deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY),
		Z_OK);
	zs.next_in = (uint8_t *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = sizeof(out);
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	clen = zs.total_out;
	deflateEnd(&zs);
	bach_put_le16(h + 10, (uint16_t)xlen);
	memcpy(h + 12, "BC\2\0", 4);
	bach_put_le16(h + 16, (uint16_t)(12 + xlen + clen + 8 - 1));
	memcpy(h + 18, "BT\10\0", 4);
	bach_put_le64(h + 22, 1000);
	memcpy(h + 30, "TE\3\0", 4);
	h[34] = (uint8_t)enc;
	bach_put_le16(h + 35, (uint16_t)entries);
	assert_int_equal(fwrite(h, 1, 12 + xlen, fp), 12 + xlen);
	assert_int_equal(fwrite(out, 1, clen, fp), clen);
	bach_put_le32(h, (uint32_t)crc);
	bach_put_le32(h + 4, (uint32_t)len);
	assert_int_equal(fwrite(h, 1, 8, fp), 8);
}

static void older_encodings_read(void **state)
{
	static uint8_t data[BACH_TIME_MEMBER_ENTRIES * 10];
	uint64_t e[BACH_TIME_MEMBER_ENTRIES + 3];
	size_t n = BACH_TIME_MEMBER_ENTRIES, len = 0;
	const uint64_t *got;
	struct bach_times *t = bach_times_new();
	char path[256];
	uint64_t prev = 0;
	FILE *fp;

	(void)state;
	for (size_t i = 0; i < n + 3; i++)
		e[i] = i < 5 ? BACH_TIME_NONE : 70000 + 3 * i + 40 * (i / 7);
	for (size_t i = 0; i < n; i++) {
		uint64_t d = e[i] - prev;
		uint64_t z = (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);

		prev = e[i];
		for (; z >= 0x80; z >>= 7)
			data[len++] = (uint8_t)(z | 0x80);
		data[len++] = (uint8_t)z;
	}
	mkdir(strcat(strcpy(path, dir), "/old"), 0755);
	strcat(path, "/o.time.gz");
	fp = fopen(path, "wb");
	assert_non_null(fp);
	put_member(fp, data, len, 1, n);
	for (size_t i = 0; i < 3; i++)
		bach_put_le64(data + 8 * i, e[n + i]);
	put_member(fp, data, 24, 0, 3);
	assert_int_equal(fwrite(bach_bgzf_eof, 1, BACH_BGZF_EOF_SIZE, fp),
			 BACH_BGZF_EOF_SIZE);
	fclose(fp);
	assert_int_equal(get_all(t, "old", "o.byu.gz", n + 3, &got), 0);
	assert_memory_equal(got, e, sizeof(e));
	assert_int_equal(bach_times_end(t), 0);
	bach_times_free(t);
}

/*
 * bach_time_writer_steps() (the capture's ring's steps) writes the file
 * bach_time_writer_put() writes of the same entries, and the same
 * summary: steps of every size, escapes (steps of 65535 and more, and
 * to and from BACH_TIME_NONE), runs across members, and chunks whose
 * base is not the entry before them.
 */
static void steps_are_put(void **state)
{
	static uint16_t step[N];
	static uint64_t esc[N];
	struct bach_time_summary a, b;
	struct bach_time_writer *w;
	uint8_t *fa, *fb;
	size_t la, lb, ne = 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	uint64_t v = BACH_TIME_NONE;

	(void)state;
	assert_true(dfd >= 0);
	for (size_t i = 0; i < N; i++) {
		if (i < 300 || (i >= 20000 && i < 20017))
			clk[i] = BACH_TIME_NONE;
		else if (i < 9000)
			clk[i] = 1000 + 2 * i; /* the board: a run */
		else if (i < 12000)
			clk[i] = clk[i - 1] + (i % 3 ? 65535 : 65534);
		else if (i < 14000)
			clk[i] = clk[i - 1] + (i % 7 == 0 ? 1ull << 40 : i % 5);
		else
			clk[i] = (i == 20017 ? clk[19999] : clk[i - 1]) +
				 (i % 4096 ? 2 : 70000);
	}
	/* as core/producer.c makes them: a block's steps begin at NONE */
	for (size_t i = 0; i < N; i++) {
		uint64_t d = clk[i] - v;

		if (i % 10880 == 0)
			v = BACH_TIME_NONE, d = clk[i] - v;
		if (d >= BACH_TIME_ESCAPE ||
		    (clk[i] == BACH_TIME_NONE) != (v == BACH_TIME_NONE)) {
			step[i] = BACH_TIME_ESCAPE;
			esc[ne++] = clk[i];
		} else {
			step[i] = (uint16_t)d;
		}
		v = clk[i];
	}
	write_sidecar_sum("put.time.gz", NULL, &a);
	assert_int_equal(
		bach_time_writer_open(&w, dfd, "steps.time.gz", 66666666), 0);
	ne = 0;
	for (size_t i = 0; i < N;) {
		size_t k = i + 10880 <= N ? 10880 : N - i, e = 0;

		for (size_t j = 0; j < k; j++)
			e += step[i + j] == BACH_TIME_ESCAPE;
		assert_int_equal(bach_time_writer_steps(w, BACH_TIME_NONE,
							step + i, esc + ne, k),
				 0);
		ne += e;
		i += k;
	}
	assert_int_equal(bach_time_writer_close(w, false), 0);
	bach_time_writer_summary(w, &b);
	bach_time_writer_free(w);
	close(dfd);
	fa = slurp("put.time.gz", &la);
	fb = slurp("steps.time.gz", &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(fa, fb, la);
	free(fa);
	free(fb);
	assert_int_equal(a.entries, b.entries);
	assert_true(a.has_clocks && b.has_clocks);
	assert_int_equal(a.first_clock, b.first_clock);
	assert_int_equal(a.last_clock, b.last_clock);
	assert_int_equal(a.crc, b.crc);
}

static void untimed_segment(void **state)
{
	struct bach_times *t = bach_times_new();
	uint64_t a[100];
	const uint64_t *got;

	(void)state;
	for (size_t i = 0; i < 100; i++)
		a[i] = 1000 + i;
	write_entries("u", "seg-000001.time.gz", a, 100);
	write_entries("u", "seg-000003.time.gz", a, 100);
	/* the event of segment 2 names no sidecar: it reads untimed, and
	 * segment 3 goes on from segment 1's clocks */
	put_manifest("u",
		     SEG_EVENT(1, ",\"timing\":\"seg-000001.time.gz\"")
			     SEG_EVENT(2, "") SEG_EVENT(
				     3, ",\"timing\":\"seg-000003.time.gz\""));
	assert_int_equal(get_all(t, "u", "seg-000001.byu.gz", 100, &got), 0);
	assert_int_equal(get_all(t, "u", "seg-000002.byu.gz", 100, &got), 0);
	for (size_t i = 0; i < 100; i++)
		assert_true(got[i] == BACH_TIME_NONE);
	assert_int_equal(bach_times_end(t), 0);
	assert_int_equal(get_all(t, "u", "seg-000003.byu.gz", 100, &got),
			 -EBADMSG); /* 1000 after 1099 */
	assert_non_null(strstr(bach_times_strerror(t), "the last clock of "));
	bach_times_free(t);
	/* one its event names is missing: damage */
	put_manifest(
		"u",
		SEG_EVENT(1, ",\"timing\":\"seg-000001.time.gz\"")
			SEG_EVENT(2, ",\"timing\":\"seg-000002.time.gz\""));
	t = bach_times_new();
	assert_int_equal(get_all(t, "u", "seg-000002.byu.gz", 100, &got),
			 -EBADMSG);
	assert_non_null(strstr(bach_times_strerror(t),
			       "u/seg-000002.time.gz: missing: "));
	assert_non_null(strstr(
		bach_times_strerror(t),
		"u/manifest.jsonl line 2 says seg-000002.byu.gz has it"));
	bach_times_free(t);
	/* a capture whose events name none has no timing */
	put_manifest("u", SEG_EVENT(1, "") SEG_EVENT(2, ""));
	t = bach_times_new();
	assert_int_equal(get_all(t, "u", "seg-000002.byu.gz", 100, &got),
			 -ENOENT);
	assert_non_null(strstr(bach_times_strerror(t), "no timing sidecar"));
	bach_times_free(t);
}

/*
 * dir/r/NAME.part as a crash leaves it: members entries whole members
 * written (clk[]), then the last cut bytes cut off.
 */
static void crashed_part(const char *name, size_t members, size_t cut)
{
	struct bach_time_writer *w;
	char d[256], path[512], keep[520];
	struct stat st;
	int dfd;

	snprintf(d, sizeof(d), "%s/r", dir);
	mkdir(d, 0755);
	dfd = open(d, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(bach_time_writer_open(&w, dfd, name, 66666666), 0);
	assert_int_equal(
		bach_time_writer_put(w, clk,
				     members * BACH_TIME_MEMBER_ENTRIES + 7),
		0);
	snprintf(path, sizeof(path), "%s/%s.part", d, name);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - (off_t)cut), 0);
	/* as the crash left it: out of the way while the writer is freed
	 * (which removes an unfinished one) */
	snprintf(keep, sizeof(keep), "%s.keep", path);
	assert_int_equal(rename(path, keep), 0);
	bach_time_writer_free(w);
	assert_int_equal(rename(keep, path), 0);
	close(dfd);
}

/* name's entries, read by zlib's gzread (multi-member gzip), in e. */
static void recovered_for_the_records(void **state)
{
	static uint64_t got[N];
	struct bach_time_summary sum;
	struct bach_times *t;
	const uint64_t *e;
	char d[256], path[512];
	uint8_t *f;
	size_t flen;
	int dfd;

	(void)state;
	for (size_t i = 0; i < N; i++)
		clk[i] = 7 + 3 * i;
	snprintf(d, sizeof(d), "%s/r", dir);
	/* 4 members written, the last one cut: 3 whole (24480 entries) */
	crashed_part("a.time.gz", 4, 10);
	dfd = open(d, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	/* the segment kept fewer records: cut in the third member */
	assert_int_equal(bach_time_recover(dfd, "a.time.gz", 20000, &sum), 1);
	assert_int_equal(gz_entries("a.time.gz", got, N), 20000);
	assert_memory_equal(got, clk, 20000 * sizeof(*got));
	f = slurp("r/a.time.gz", &flen);
	assert_true(sum.bytes == flen && sum.crc == crc32(0, f, (uInt)flen));
	assert_true(sum.entries == 20000 && sum.filled == 0);
	assert_true(sum.has_clocks && sum.first_clock == 7 &&
		    sum.last_clock == 7 + 3 * 19999);
	assert_true(sum.clock_hz == 66666666);
	free(f);
	snprintf(path, sizeof(path), "%s/a.time.gz.part", d);
	assert_int_not_equal(access(path, F_OK), 0);
	t = bach_times_new();
	snprintf(path, sizeof(path), "%s/a.byu.gz", d);
	assert_int_equal(bach_times_get(t, path, 0, 20000, &e), 0);
	assert_int_equal(bach_times_end(t), 0);
	bach_times_free(t);

	/* more records than whole entries: the rest without a time */
	crashed_part("b.time.gz", 4, 10);
	assert_int_equal(bach_time_recover(dfd, "b.time.gz", 30000, &sum), 1);
	assert_int_equal(gz_entries("b.time.gz", got, N), 30000);
	assert_memory_equal(got, clk, 24480 * sizeof(*got));
	for (size_t i = 24480; i < 30000; i++)
		assert_true(got[i] == BACH_TIME_NONE);
	assert_true(sum.entries == 30000 && sum.filled == 30000 - 24480);
	assert_true(sum.last_clock == 7 + 3 * 24479);

	/* no whole member: left alone */
	crashed_part("c.time.gz", 1, 0);
	snprintf(path, sizeof(path), "%s/c.time.gz.part", d);
	assert_int_equal(truncate(path, 40), 0);
	assert_int_equal(bach_time_recover(dfd, "c.time.gz", 500, &sum), 0);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/c.time.gz", d);
	assert_int_not_equal(access(path, F_OK), 0);

	/* a finished one measured: what the recovery wrote */
	assert_int_equal(bach_time_measure(dfd, "b.time.gz", &sum), 0);
	assert_true(sum.entries == 30000 && sum.last_clock == 7 + 3 * 24479);
	f = slurp("r/b.time.gz", &flen);
	assert_true(sum.bytes == flen && sum.crc == crc32(0, f, (uInt)flen));
	free(f);
	close(dfd);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pooled_is_the_same),
		cmocka_unit_test(freed_with_members_pending),
		cmocka_unit_test(summary_is_the_file),
		cmocka_unit_test(backwards_within_refused),
		cmocka_unit_test(backwards_across_segments),
		cmocka_unit_test(untimed_segment),
		cmocka_unit_test(delta_members),
		cmocka_unit_test(older_encodings_read),
		cmocka_unit_test(steps_are_put),
		cmocka_unit_test(recovered_for_the_records),
	};

	if (!mkdtemp(dir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, teardown);
}
