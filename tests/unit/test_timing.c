// SPDX-License-Identifier: MIT
/*
 * Timing sidecars (bach/timing.h, docs/formats.md 3.2) written with their
 * members compressed in a pool (bach_time_writer_pool()): the same bytes
 * as written on the caller's thread, read back whole by zlib's gzread (a
 * reader not ours: multi-member gzip) and entry for entry by bach_times,
 * with the BT rate; a writer freed with members pending leaves no file.
 */
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
#include "bach/timing.h"
#include "bach/trace.h"
#include "bach/zpool.h"

#define N (5 * BACH_TIME_MEMBER_ENTRIES + 123)

static char dir[] = "/tmp/bach-timing.XXXXXX";
static uint64_t clk[N];

static void write_sidecar(const char *name, struct bach_zpool *pool)
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
	bach_time_writer_free(w);
	close(dfd);
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
						 : 1000000 + 3 * i + (i % 7);
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

static int teardown(void **state)
{
	const char *names[] = { "own.time.gz", "pool.time.gz",
				"pool2.time.gz" };
	char path[256];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pooled_is_the_same),
		cmocka_unit_test(freed_with_members_pending),
	};

	if (!mkdtemp(dir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, teardown);
}
