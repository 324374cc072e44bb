// SPDX-License-Identifier: MIT
/*
 * bench/seek.sh's in-process figure: open TRACE, seek to record START,
 * print 10 records as bach dump does, and say on stderr how long that took
 * inside the process (what the library costs, without a program's start).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bach/trace.h"
#include "lib/exit.h"
#include "lib/formats/formats.h"

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
	struct bach_reader *r;
	struct timespec t0;
	const uint8_t *p;
	char line[BACH_TEXT_MAX];
	uint64_t start;
	ssize_t n;
	int err;

	if (argc != 3)
		return EXIT_USAGE;
	start = strtoull(argv[2], NULL, 10);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = bach_reader_new();
	if ((err = bach_reader_add(r, argv[1])) ||
	    (err = bach_reader_range(r, start, start + 10))) {
		fprintf(stderr, "%s\n", bach_reader_strerror(r));
		return 1;
	}
	while ((n = bach_reader_read(r, &p)) > 0)
		for (ssize_t i = 0; i < n; i++)
			fwrite(line, 1, bach_fmt_text(line, p + i * 6), stdout);
	fflush(stdout);
	fprintf(stderr, "%.3f\n", ms_since(&t0));
	bach_reader_free(r);
	return n < 0;
}
