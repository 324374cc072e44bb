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

static void pooled_is_the_same(void **state)
{
	struct bach_zpool *pool = bach_zpool_new(2, 3, BACH_DEFLATE_U64, 0);
	uint8_t *a, *b, raw[8];
	size_t alen, blen;
	char path[256], trace[256];
	struct bach_times *t;
	const uint64_t *got;
	gzFile gz;

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

	snprintf(path, sizeof(path), "%s/pool.time.gz", dir);
	gz = gzopen(path, "rb");
	assert_non_null(gz);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(gzread(gz, raw, 8), 8);
		assert_true(bach_get_le64(raw) == clk[i]);
	}
	assert_int_equal(gzread(gz, raw, 8), 0);
	gzclose(gz);

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
	struct bach_zpool *pool = bach_zpool_new(1, 4, BACH_DEFLATE_U64, 0);
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
static size_t gz_entries(const char *name, uint64_t *e, size_t cap)
{
	char path[512];
	uint8_t raw[8];
	size_t n = 0;
	gzFile gz;

	snprintf(path, sizeof(path), "%s/r/%s", dir, name);
	gz = gzopen(path, "rb");
	assert_non_null(gz);
	while (n < cap && gzread(gz, raw, 8) == 8)
		e[n++] = bach_get_le64(raw);
	assert_int_equal(gzread(gz, raw, 8), 0);
	gzclose(gz);
	return n;
}

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
	crashed_part("a.time.gz", 4, 1000);
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
	crashed_part("b.time.gz", 4, 1000);
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
		cmocka_unit_test(recovered_for_the_records),
	};

	if (!mkdtemp(dir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, teardown);
}
