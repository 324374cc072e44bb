// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: seeking in a gzip file through a .gzi index, both
 * fuzzed (bach_reader_seek(), bach/index.h).
 *
 * Input: u32 LE record to seek to (taken modulo the records read plus 8),
 * u16 LE length of the index, the index's bytes (written as FILE.gzi,
 * newer than FILE), then the gzip file itself.
 *
 * Oracle: the same file read from its start, with no seek. Every record
 * the seek delivers must be the record of that index the plain reading
 * delivered: an index, however wrong, never yields a wrong record. When
 * the plain reading got to the end, the seek must deliver exactly the
 * records from the target on, without an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bach/trace.h"

#include "fuzz_check.h"

#define CAP (80u << 20)

static char dir[64], gz[96], gzi[104];

/* the two files and their directory go when the fuzzer exits */
static void cleanup(void)
{
	unlink(gzi);
	unlink(gz);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *all;
	struct timespec ts[2];
	struct bach_reader *r;
	const uint8_t *recs;
	uint64_t want, have = 0, total = 0;
	size_t ilen;
	ssize_t n;
	bool whole;

	if (size < 6)
		return 0;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-seek.%d", (int)getpid());
		CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST, "mkdir");
		snprintf(gz, sizeof(gz), "%s/t.byu.gz", dir);
		snprintf(gzi, sizeof(gzi), "%s.gzi", gz);
		all = malloc(CAP);
		CHECK(all, "out of memory");
		atexit(cleanup);
	}
	want = (uint64_t)data[0] | (uint64_t)data[1] << 8 |
	       (uint64_t)data[2] << 16 | (uint64_t)data[3] << 24;
	ilen = (size_t)(data[4] | data[5] << 8);
	if (ilen > size - 6)
		ilen = size - 6;
	fuzz_put_path(gz, data + 6 + ilen, size - 6 - ilen);
	fuzz_put_path(gzi, data + 6, ilen);
	/* the index one second newer than the file: it passes the age check */
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec += 1;
	ts[1] = ts[0];
	utimensat(AT_FDCWD, gzi, ts, 0);

	/* the oracle: the file read from its start */
	r = bach_reader_new();
	CHECK(r && bach_reader_add(r, gz) == 0, "add");
	while ((n = bach_reader_read(r, &recs)) > 0 &&
	       (total + (uint64_t)n) * 6 <= CAP) {
		memcpy(all + total * 6, recs, (size_t)n * 6);
		total += (uint64_t)n;
	}
	whole = n == 0;
	bach_reader_free(r);

	want %= total + 8;
	r = bach_reader_new();
	CHECK(r && bach_reader_add(r, gz) == 0, "add");
	n = bach_reader_seek(r, want);
	CHECK(n == 0, "seek: %s", bach_reader_strerror(r));
	CHECK(bach_reader_records(r) == want, "records() after the seek");
	while ((n = bach_reader_read(r, &recs)) > 0) {
		for (ssize_t i = 0; i < n; i++, have++) {
			uint64_t at = want + have;

			if (at < total)
				CHECK(!memcmp(recs + i * 6, all + at * 6, 6),
				      "record %llu differs from the plain reading",
				      (unsigned long long)at);
			else
				CHECK(!whole, "record %llu past the end (%llu)",
				      (unsigned long long)at,
				      (unsigned long long)total);
		}
	}
	if (whole) {
		CHECK(n == 0, "seek to %llu of a good file: %s",
		      (unsigned long long)want, bach_reader_strerror(r));
		CHECK(want + have == (want > total ? want : total),
		      "%llu records from %llu, of %llu",
		      (unsigned long long)have, (unsigned long long)want,
		      (unsigned long long)total);
	} else if (n < 0) {
		CHECK(strstr(bach_reader_strerror(r), gz),
		      "message does not name the file: %s",
		      bach_reader_strerror(r));
	}
	bach_reader_free(r);
	return 0;
}
