// SPDX-License-Identifier: MIT
/*
 * Trace reader and writer: formats, round trips, seeks and every kind of
 * damage.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "lib/bus/gen.h"

static char dir[] = "/tmp/bach-test-trace.XXXXXX";

static char *path(const char *name)
{
	static char buf[8][256];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static uint8_t *gen(size_t n, uint64_t seed)
{
	uint8_t *p = malloc(n * 6 + 1);
	struct bach_gen g;

	bach_gen_init(&g, seed);
	bach_gen_fill(&g, p, n);
	return p;
}

static void write_file(const char *name, const void *p, size_t len)
{
	FILE *f = fopen(path(name), "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	fclose(f);
}

static uint8_t *read_file(const char *name, size_t *len)
{
	FILE *f = fopen(path(name), "rb");
	uint8_t *p;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

static void write_trace(const char *name, const uint8_t *recs, size_t n,
			enum bach_out_format fmt, int threads)
{
	struct bach_writer_opts o = { .format = fmt, .threads = threads };
	struct bach_writer *w;

	assert_int_equal(bach_writer_open(&w, path(name), &o), 0);
	/* in uneven pieces, to cross batch and block boundaries */
	for (size_t off = 0; off < n;) {
		size_t k = n - off < 7777 ? n - off : 7777;

		assert_int_equal(bach_writer_write(w, recs + off * 6, k), 0);
		off += k;
	}
	assert_int_equal(bach_writer_close(w), 0);
	bach_writer_free(w);
}

/* Read a whole trace; returns the status and the records in *out. */
static int read_trace(const char *p, uint8_t **out, size_t *n, char *msg,
		      size_t msglen)
{
	struct bach_reader *r = bach_reader_new();
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	const uint8_t *recs;
	ssize_t k;
	int err;

	err = bach_reader_add(r, p);
	if (!err) {
		while ((k = bach_reader_read(r, &recs)) > 0) {
			while (len + (size_t)k * 6 > cap)
				buf = realloc(buf, cap *= 2);
			memcpy(buf + len, recs, (size_t)k * 6);
			len += (size_t)k * 6;
		}
		err = (int)k;
	}
	if (msg)
		snprintf(msg, msglen, "%s", bach_reader_strerror(r));
	bach_reader_free(r);
	*out = buf;
	*n = len / 6;
	return err;
}

static int expect_error(const char *name, int want, const char *text)
{
	char msg[512];
	uint8_t *buf;
	size_t n;
	int err = read_trace(path(name), &buf, &n, msg, sizeof(msg));

	free(buf);
	if (err != want || !strstr(msg, text)) {
		fail_msg("%s: got %d '%s', want %d '%s'", name, err, msg, want,
			 text);
	}
	return 0;
}

static void raw_round_trip(void **state)
{
	size_t n = 1000003, got;
	uint8_t *a = gen(n, 1), *b;

	(void)state;
	write_trace("a.byu", a, n, BACH_OUT_BYU, 0);
	assert_int_equal(read_trace(path("a.byu"), &b, &got, NULL, 0), 0);
	assert_int_equal(got, n);
	assert_memory_equal(a, b, n * 6);
	free(a);
	free(b);
}

static void gzip_round_trip_and_layout(void **state)
{
	size_t n = 500000, got, len;
	uint8_t *a = gen(n, 2), *b, *f;
	size_t off = 0, members = 0, data = 0;

	(void)state;
	for (int threads = 1; threads <= 3; threads++) {
		write_trace("a.byu.gz", a, n, BACH_OUT_BYU_GZ, threads);
		assert_int_equal(
			read_trace(path("a.byu.gz"), &b, &got, NULL, 0), 0);
		assert_int_equal(got, n);
		assert_memory_equal(a, b, n * 6);
		free(b);
	}
	/* walk the members by their BC sizes */
	f = read_file("a.byu.gz", &len);
	while (off < len) {
		uint32_t bsize, isize;

		assert_true(len - off >= 28);
		assert_memory_equal(f + off, "\x1f\x8b\x08\x04", 4);
		assert_int_equal(bach_get_le16(f + off + 10), 6);
		assert_memory_equal(f + off + 12, "BC\x02\x00", 4);
		bsize = bach_get_le16(f + off + 16) + 1u;
		assert_true(bsize <= 65536);
		isize = bach_get_le32(f + off + bsize - 4);
		assert_true(isize <= BACH_BGZF_MAX_INPUT);
		assert_int_equal(isize % 6, 0); /* whole records */
		data += isize;
		members++;
		off += bsize;
	}
	assert_int_equal(off, len);
	assert_int_equal(data, n * 6);
	/* the last member is the standard 28-byte EOF block */
	assert_memory_equal(f + len - 28, bach_bgzf_eof, 28);
	assert_int_equal(
		members,
		(n * 6 + BACH_BGZF_MAX_INPUT - 1) / BACH_BGZF_MAX_INPUT + 1);
	free(f);
	free(a);
}

static void stored_block_when_incompressible(void **state)
{
	uint8_t src[BACH_BGZF_MAX_INPUT], dst[BACH_BGZF_MAX_BLOCK];
	uint64_t x = 88172645463325252ull;
	struct bach_deflater *d = bach_deflater_new(BACH_DEFLATE_LIBDEFLATE, 5);
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(src); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		src[i] = (uint8_t)x;
	}
	len = bach_bgzf_block(d, dst, src, sizeof(src));
	assert_int_equal(len, 18 + 5 + sizeof(src) + 8);
	assert_int_equal(dst[18], 1); /* BFINAL, stored */
	assert_int_equal(bach_get_le16(dst + 16) + 1u, len);
	assert_int_equal(bach_get_le32(dst + len - 8),
			 crc32(0, src, sizeof(src)));
	write_file("stored.byu.gz", dst, len);
	{
		uint8_t *b;
		size_t n;

		/* a member without the EOF block after it is reported */
		assert_int_equal(
			read_trace(path("stored.byu.gz"), &b, &n, NULL, 0),
			-BACH_EDATA);
		assert_int_equal(n, sizeof(src) / 6);
		assert_memory_equal(b, src, sizeof(src));
		free(b);
	}
	bach_deflater_free(d);
}

static void zlib_backend_same_records(void **state)
{
	uint8_t src[60000], a[BACH_BGZF_MAX_BLOCK], b[BACH_BGZF_MAX_BLOCK];
	struct bach_deflater *dz = bach_deflater_new(BACH_DEFLATE_ZLIB, 1);
	struct bach_gen g;
	size_t la;
	z_stream zs = { 0 };

	(void)state;
	bach_gen_init(&g, 9);
	bach_gen_fill(&g, src, sizeof(src) / 6);
	la = bach_bgzf_block(dz, a, src, sizeof(src));
	assert_true(la < sizeof(src));
	/* zlib itself reads the member back */
	assert_int_equal(inflateInit2(&zs, 31), Z_OK);
	zs.next_in = a;
	zs.avail_in = (uInt)la;
	zs.next_out = b;
	zs.avail_out = sizeof(b);
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.total_out, sizeof(src));
	assert_memory_equal(b, src, sizeof(src));
	inflateEnd(&zs);
	bach_deflater_free(dz);
}

static void plain_and_concatenated_gzip(void **state)
{
	size_t n = 100000, got;
	uint8_t *a = gen(n, 3), *b;
	char cmd[1024];

	(void)state;
	write_trace("p.byu", a, n, BACH_OUT_BYU, 0);
	snprintf(cmd, sizeof(cmd), "gzip -c %s > %s && cat %s %s > %s",
		 path("p.byu"), path("p.byu.gz"), path("p.byu.gz"),
		 path("p.byu.gz"), path("pp.byu.gz"));
	assert_int_equal(system(cmd), 0);
	assert_int_equal(read_trace(path("p.byu.gz"), &b, &got, NULL, 0), 0);
	assert_int_equal(got, n);
	assert_memory_equal(a, b, n * 6);
	free(b);
	assert_int_equal(read_trace(path("pp.byu.gz"), &b, &got, NULL, 0), 0);
	assert_int_equal(got, 2 * n);
	assert_memory_equal(a, b, n * 6);
	assert_memory_equal(a, b + n * 6, n * 6);
	free(b);
	free(a);
}

static void damage(void **state)
{
	size_t n = 30000, len;
	uint8_t *a = gen(n, 4), *f;

	(void)state;
	/* truncated record: names the byte offset where it starts */
	write_file("t.byu", a, n * 6 - 2);
	expect_error("t.byu", -BACH_EDATA,
		     "truncated record at byte offset 179994 (4 of 6 bytes)");
	/* an empty .byu is an empty trace; an empty file is not gzip */
	write_file("e.byu", a, 0);
	{
		uint8_t *none;
		size_t k;

		assert_int_equal(read_trace(path("e.byu"), &none, &k, NULL, 0),
				 0);
		assert_int_equal(k, 0);
		free(none);
	}
	write_file("e.byu.gz", a, 0);
	expect_error("e.byu.gz", -BACH_EDATA, "empty file: not gzip");
	/* missing path */
	expect_error("nope.byu", -ENOENT, "No such file");

	write_trace("g.byu.gz", a, n, BACH_OUT_BYU_GZ, 1);
	f = read_file("g.byu.gz", &len);
	/* missing EOF block */
	write_file("noeof.byu.gz", f, len - 28);
	expect_error("noeof.byu.gz", -BACH_EDATA, "missing EOF block");
	/* cut inside the second member */
	{
		size_t second = bach_get_le16(f + 16) + 1u;

		write_file("cut.byu.gz", f, second + 100);
		expect_error("cut.byu.gz", -BACH_EDATA,
			     "truncated gzip member at byte offset");
		{
			char want[64];

			snprintf(want, sizeof(want), "byte offset %zu", second);
			expect_error("cut.byu.gz", -BACH_EDATA, want);
		}
	}
	/* bad CRC in the first member */
	{
		size_t first = bach_get_le16(f + 16) + 1u;

		f[first - 8] ^= 0x55;
		write_file("crc.byu.gz", f, len);
		expect_error(
			"crc.byu.gz", -BACH_EDATA,
			"bad gzip member at byte offset 0: incorrect data check");
		f[first - 8] ^= 0x55;
		/* corrupt deflate data in the first member */
		memset(f + 30, 0xff, 64);
		write_file("bad.byu.gz", f, len);
		expect_error("bad.byu.gz", -BACH_EDATA,
			     "bad gzip member at byte offset 0");
	}
	/* trailing garbage after the EOF block */
	{
		uint8_t *g;

		free(f);
		f = read_file("g.byu.gz", &len);
		g = malloc(len + 5);
		memcpy(g, f, len);
		memcpy(g + len, "junk!", 5);
		write_file("junk.byu.gz", g, len + 5);
		expect_error("junk.byu.gz", -BACH_EDATA, "not a gzip member");
		free(g);
	}
	free(f);
	free(a);
}

static void capture_directory(void **state)
{
	size_t n = 20000, got;
	uint8_t *a = gen(3 * n, 5), *b;
	char **segs;
	size_t parts;

	(void)state;
	mkdir(path("cap"), 0755);
	/* written out of order: the reader goes by name */
	write_trace("cap/seg-000003.byu.gz", a + 2 * n * 6, n, BACH_OUT_BYU_GZ,
		    0);
	write_trace("cap/seg-000001.byu", a, n, BACH_OUT_BYU, 0);
	write_trace("cap/seg-000002.byu.gz", a + n * 6, n, BACH_OUT_BYU_GZ, 0);
	write_file("cap/seg-000004.byu.gz.part", a, 60);
	write_file("cap/manifest.jsonl", "{}\n", 3);
	assert_int_equal(bach_capture_segments(path("cap"), &segs, &parts), 3);
	assert_int_equal(parts, 1);
	assert_non_null(strstr(segs[0], "seg-000001.byu"));
	for (int i = 0; i < 3; i++)
		free(segs[i]);
	free(segs);
	assert_int_equal(read_trace(path("cap"), &b, &got, NULL, 0), 0);
	assert_int_equal(got, 3 * n);
	assert_memory_equal(a, b, 3 * n * 6);
	free(b);
	free(a);
}

static void writer_errors_are_sticky(void **state)
{
	struct bach_writer_opts o = { .format = BACH_OUT_BYU };
	struct bach_writer *w;
	uint8_t *a = gen(1 << 20, 6);
	int err;

	(void)state;
	/* no such directory: nothing created, a message naming the path */
	assert_int_equal(bach_writer_open(&w, path("no/such/dir.byu"), &o),
			 -ENOENT);
	assert_non_null(strstr(bach_writer_strerror(w), "no/such/dir.byu"));
	bach_writer_free(w);

	/* a full device: the error sticks, and no file appears */
	w = NULL;
	{
		int fd = open("/dev/full", O_WRONLY);
		int saved = dup(1);

		assert_true(fd >= 0);
		dup2(fd, 1);
		assert_int_equal(bach_writer_open(&w, "-", &o), 0);
		err = bach_writer_write(w, a, 1 << 20);
		assert_int_equal(err, -ENOSPC);
		assert_int_equal(bach_writer_write(w, a, 1), -ENOSPC);
		assert_int_equal(bach_writer_close(w), -ENOSPC);
		assert_non_null(strstr(bach_writer_strerror(w), "No space"));
		bach_writer_free(w);
		dup2(saved, 1);
		close(saved);
		close(fd);
	}
	free(a);
}

/*
 * A blocked output gets its index, NAME.gzi, on close: the one
 * bach_index_build() makes from the file; it replaces an index already
 * there, and raw records written over the name take it away.
 */
static void writer_writes_index(void **state)
{
	uint8_t *a = gen(300000, 8);
	struct bach_index built, loaded;
	char msg[256];

	(void)state;
	write_file("ix.byu.gz.gzi", "not an index", 12);
	for (int threads = 1; threads <= 4; threads += 3) {
		write_trace("ix.byu.gz", a, 300000, BACH_OUT_BYU_GZ, threads);
		assert_int_equal(bach_index_load(path("ix.byu.gz"), &loaded,
						 msg, sizeof(msg)),
				 0);
		assert_int_equal(bach_index_build(path("ix.byu.gz"), &built,
						  msg, sizeof(msg)),
				 0);
		assert_true(built.n > 20);
		assert_int_equal(loaded.n, built.n);
		assert_memory_equal(loaded.coff, built.coff,
				    (built.n + 1) * sizeof(uint64_t));
		assert_memory_equal(loaded.uoff, built.uoff,
				    (built.n + 1) * sizeof(uint64_t));
		assert_int_equal(built.uoff[built.n], 300000 * 6);
		bach_index_free(&loaded);
		bach_index_free(&built);
	}
	write_trace("ix.byu.gz", a, 1000, BACH_OUT_BYU, 1);
	assert_int_equal(access(path("ix.byu.gz.gzi"), F_OK), -1);
	free(a);
}

/*
 * .byu.zst through the library (docs/formats.md section 10): written on 1
 * and 3 threads, read whole, and seeked through its seek table to records
 * at, before and after frame boundaries, and to a range, in one reader
 * (the frames of a block decompressed on two threads, a seek between).
 */
static void zstd_write_read_seek(void **state)
{
	static const uint64_t at[] = {
		0, 10879, 10880, 10881, 123456, 299999, 5
	};
	uint8_t *a = gen(300000, 9), *back;
	struct bach_file_info fi;
	struct bach_reader *r;
	const uint8_t *recs;
	char msg[512];
	size_t n;

	(void)state;
	write_file("z.byu.zst.gzi", "stale", 5);
	for (int threads = 1; threads <= 3; threads += 2) {
		write_trace("z.byu.zst", a, 300000, BACH_OUT_BYU_ZST, threads);
		assert_int_equal(read_trace(path("z.byu.zst"), &back, &n, msg,
					    sizeof(msg)),
				 0);
		assert_int_equal(n, 300000);
		assert_memory_equal(back, a, 300000 * 6);
		free(back);
	}
	/* no .gzi: the seek table is the index; a stale one is removed */
	assert_int_equal(access(path("z.byu.zst.gzi"), F_OK), -1);
	r = bach_reader_new();
	assert_int_equal(bach_reader_add(r, path("z.byu.zst")), 0);
	for (size_t i = 0; i < sizeof(at) / sizeof(*at); i++) {
		assert_int_equal(bach_reader_seek(r, at[i]), 0);
		assert_true(bach_reader_read(r, &recs) > 0);
		assert_memory_equal(recs, a + at[i] * 6, 6);
		assert_int_equal(bach_reader_records(r) > at[i], 1);
	}
	/* entered at frame 11 through the table, not read through to it */
	assert_int_equal(bach_reader_seek(r, 123456), 0);
	assert_true(bach_reader_read(r, &recs) > 0);
	bach_reader_info(r, &fi);
	assert_true(fi.members <= 4);
	assert_int_equal(bach_reader_range(r, 20000, 20003), 0);
	assert_int_equal(bach_reader_read(r, &recs), 3);
	assert_memory_equal(recs, a + 20000 * 6, 18);
	assert_int_equal(bach_reader_read(r, &recs), 0);
	bach_reader_free(r);
	free(a);
}

static void failed_writer_leaves_nothing(void **state)
{
	struct bach_writer_opts o = { .format = BACH_OUT_BYU_GZ };
	struct bach_writer *w;
	uint8_t *a = gen(1000, 7);
	char cmd[600];

	(void)state;
	assert_int_equal(bach_writer_open(&w, path("gone.byu.gz"), &o), 0);
	assert_int_equal(bach_writer_write(w, a, 1000), 0);
	bach_writer_free(w); /* never closed */
	assert_int_equal(access(path("gone.byu.gz"), F_OK), -1);
	snprintf(cmd, sizeof(cmd), "ls -A %s | grep -q gone", dir);
	assert_int_not_equal(system(cmd), 0);
	free(a);
}

/* ---- seeks at record numbers whose byte offsets wrap; files cut short --
 *
 * Past the end, reads return 0 and bach_reader_records() says the record
 * sought (docs/api.md), whatever it is up to 2^64 - 1: never records found
 * where 6 * rec wrapped to. A file another process truncates while it is
 * read is damage named with its byte offsets, never a SIGBUS.
 */

#define FAR_N 30000 /* three gzip members of 10880 records, the last short */

static uint8_t *far_recs; /* what each of the far files holds */

/* A raw, a blocked (with its .gzi) and a plain gzip file (zlib's, no
 * index: read through), each of the same FAR_N records. */
static void far_files(void)
{
	gzFile z;

	if (far_recs)
		return;
	far_recs = gen(FAR_N, 7);
	write_file("far.byu", far_recs, FAR_N * 6);
	write_trace("far.byu.gz", far_recs, FAR_N, BACH_OUT_BYU_GZ, 0);
	z = gzopen(path("farp.byu.gz"), "wb");
	assert_non_null(z);
	assert_int_equal(gzwrite(z, far_recs, FAR_N * 6), FAR_N * 6);
	assert_int_equal(gzclose(z), Z_OK);
}

static const uint64_t far[] = {
	UINT64_MAX,
	UINT64_MAX - 1,
	UINT64_MAX - 5,
	(UINT64_MAX / 6) * 5,
	UINT64_MAX / 6 + 1, /* 3074457345618258603: 6 * it = 2^64 + 2 */
	UINT64_MAX / 6,	    /* 3074457345618258602: 2^64 - 4 */
	UINT64_MAX / 6 - 1,
	(1ull << 63) + 5, /* 6 * it wraps to 30: record 5 */
	1ull << 63,
	(1ull << 63) - 1,
	(1ull << 63) / 6 + 1, /* 6 * it is above off_t's largest */
	(1ull << 63) / 6,
};

#define NFAR (sizeof(far) / sizeof(*far))

/* Each file, and lists of them, as one trace. */
static const char *const far_traces[][3] = {
	{ "far.byu", NULL, NULL },
	{ "far.byu.gz", NULL, NULL },
	{ "farp.byu.gz", NULL, NULL },
	{ "far.byu", "far.byu.gz", NULL },
	{ "far.byu.gz", "far.byu", "farp.byu.gz" },
};

#define NFAR_TRACES (sizeof(far_traces) / sizeof(*far_traces))

static struct bach_reader *far_open(size_t t, uint64_t *count)
{
	struct bach_reader *r = bach_reader_new();

	assert_non_null(r);
	far_files();
	*count = 0;
	for (size_t i = 0; i < 3 && far_traces[t][i]; i++, *count += FAR_N)
		assert_int_equal(bach_reader_add(r, path(far_traces[t][i])), 0);
	return r;
}

/* The records read from record at to the end, checked against the files'. */
static uint64_t far_read(struct bach_reader *r, uint64_t at)
{
	const uint8_t *p;
	ssize_t n;
	uint64_t got = 0;

	while ((n = bach_reader_read(r, &p)) > 0) {
		for (ssize_t i = 0; i < n; i++, at++)
			if (memcmp(p + i * 6, far_recs + (at % FAR_N) * 6, 6))
				fail_msg("record %llu differs",
					 (unsigned long long)at);
		got += (uint64_t)n;
	}
	if (n < 0)
		fail_msg("read: %s", bach_reader_strerror(r));
	return got;
}

static void seek_far_past_the_end(void **state)
{
	(void)state;
	for (size_t t = 0; t < NFAR_TRACES; t++) {
		for (size_t i = 0; i < NFAR; i++) {
			uint64_t count;
			struct bach_reader *r = far_open(t, &count);

			assert_int_equal(bach_reader_seek(r, far[i]), 0);
			assert_true(bach_reader_records(r) == far[i]);
			if (far_read(r, far[i]))
				fail_msg("trace %zu: seek to %llu gave records",
					 t, (unsigned long long)far[i]);
			assert_true(bach_reader_records(r) == far[i]);
			/* and back: the same reader still reads right */
			assert_int_equal(bach_reader_seek(r, 10), 0);
			assert_true(far_read(r, 10) == count - 10);
			bach_reader_free(r);
		}
	}
}

static void range_far_past_the_end(void **state)
{
	(void)state;
	for (size_t t = 0; t < NFAR_TRACES; t++) {
		for (size_t i = 0; i < NFAR; i++) {
			uint64_t count, s = far[i];
			struct bach_reader *r = far_open(t, &count);

			/* START:START+3 and START: */
			assert_int_equal(
				bach_reader_range(r, s, s + 3 < s ? s : s + 3),
				0);
			assert_true(far_read(r, s) == 0);
			assert_int_equal(bach_reader_range(r, s, UINT64_MAX),
					 0);
			assert_true(far_read(r, s) == 0);
			/* an END that wraps: records up to the real end */
			assert_int_equal(bach_reader_range(r, count - 5, s), 0);
			if (far_read(r, count - 5) != 5)
				fail_msg("trace %zu: range %llu:%llu", t,
					 (unsigned long long)(count - 5),
					 (unsigned long long)s);
			assert_int_equal(bach_reader_range(r, 0, s), 0);
			assert_true(far_read(r, 0) == count);
			bach_reader_free(r);
		}
	}
}

/* A seek past the end of a file whose last record is cut still finds it. */
static void seek_past_a_cut_record(void **state)
{
	struct bach_reader *r = bach_reader_new();
	const uint8_t *p;

	(void)state;
	far_files();
	write_file("cut.byu", far_recs, 10 * 6 + 2);
	assert_int_equal(bach_reader_add(r, path("cut.byu")), 0);
	assert_int_equal(bach_reader_add(r, path("far.byu")), 0);
	assert_int_equal(bach_reader_seek(r, 15), 0);
	assert_int_equal(bach_reader_read(r, &p), -BACH_EDATA);
	assert_non_null(strstr(
		bach_reader_strerror(r),
		"cut.byu: truncated record at byte offset 60 (2 of 6 bytes)"));
	bach_reader_free(r);
}

/*
 * Another process cuts the file short after the first block was read:
 * below what was read, and within what is still to come.
 */
static void truncated_while_read(void **state)
{
	static const struct {
		const char *name;
		off_t to;
		uint64_t keep; /* records it still gives */
		const char *msg;
	} cases[] = {
		{ "t0.byu", 0, 0,
		  "t0.byu: truncated while being read: 1800000 bytes when opened, 0 now; reading stopped at byte offset 262144" },
		{ "t1.byu", 600000, 100000,
		  "t1.byu: truncated while being read: 1800000 bytes when opened, 600000 now; reading stopped at byte offset 600000" },
		{ "t2.byu", 600003, 100000,
		  "t2.byu: truncated while being read: 1800000 bytes when opened, 600003 now; reading stopped at byte offset 600003" },
	};
	uint8_t *big = gen(300000, 3);

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		struct bach_reader *r = bach_reader_new();
		uint64_t got;
		const uint8_t *p;
		ssize_t n;

		write_file(cases[c].name, big, 300000 * 6);
		assert_int_equal(bach_reader_add(r, path(cases[c].name)), 0);
		n = bach_reader_read(r, &p);
		assert_true(n > 0 && n < 100000);
		assert_memory_equal(p, big, (size_t)n * 6);
		got = (uint64_t)n;
		assert_int_equal(truncate(path(cases[c].name), cases[c].to), 0);
		while ((n = bach_reader_read(r, &p)) > 0) {
			assert_memory_equal(p, big + got * 6, (size_t)n * 6);
			got += (uint64_t)n;
		}
		assert_int_equal(n, -BACH_EDATA);
		if (!strstr(bach_reader_strerror(r), cases[c].msg))
			fail_msg("%s: '%s'", cases[c].name,
				 bach_reader_strerror(r));
		if (cases[c].keep && got != cases[c].keep)
			fail_msg("%s: %llu records", cases[c].name,
				 (unsigned long long)got);
		bach_reader_free(r);
	}
	free(big);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	free(far_recs);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(raw_round_trip),
		cmocka_unit_test(gzip_round_trip_and_layout),
		cmocka_unit_test(stored_block_when_incompressible),
		cmocka_unit_test(zlib_backend_same_records),
		cmocka_unit_test(plain_and_concatenated_gzip),
		cmocka_unit_test(damage),
		cmocka_unit_test(capture_directory),
		cmocka_unit_test(writer_errors_are_sticky),
		cmocka_unit_test(writer_writes_index),
		cmocka_unit_test(zstd_write_read_seek),
		cmocka_unit_test(failed_writer_leaves_nothing),
		cmocka_unit_test(seek_far_past_the_end),
		cmocka_unit_test(range_far_past_the_end),
		cmocka_unit_test(seek_past_a_cut_record),
		cmocka_unit_test(truncated_while_read),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
