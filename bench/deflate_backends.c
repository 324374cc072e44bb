// SPDX-License-Identifier: MIT
/*
 * libdeflate against zlib on the same blocks, in one process: time and
 * compressed size of every 64 KiB block of a trace, per backend and level.
 * usage: deflate_backends TRACE.byu [MAX_MB]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bach/trace.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static uint8_t out[BACH_BGZF_MAX_BLOCK];
	static const struct {
		enum bach_deflate_backend b;
		int level;
		const char *name;
	} runs[] = {
		{ BACH_DEFLATE_ZLIB, 1, "zlib -1" },
		{ BACH_DEFLATE_ZLIB, 2, "zlib -2" },
		{ BACH_DEFLATE_ZLIB, 3, "zlib -3" },
		{ BACH_DEFLATE_LIBDEFLATE, 4, "libdeflate -4" },
		{ BACH_DEFLATE_LIBDEFLATE, 1, "libdeflate -1" },
		{ BACH_DEFLATE_LIBDEFLATE, BACH_DEFAULT_LEVEL,
		  "libdeflate default" },
		{ BACH_DEFLATE_LIBDEFLATE, 6, "libdeflate -6" },
	};
	size_t max = (argc > 2 ? strtoul(argv[2], NULL, 0) : 256) << 20;
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	uint8_t *buf;
	size_t len;
	double base = 0;

	if (!f) {
		fprintf(stderr, "usage: deflate_backends TRACE.byu [MAX_MB]\n");
		return 2;
	}
	buf = malloc(max);
	len = fread(buf, 1, max, f);
	fclose(f);
	len -= len % BACH_BGZF_MAX_INPUT;
	printf("%-20s %10s %10s %8s\n", "backend", "MB/s", "ratio", "speed");
	for (size_t i = 0; i < sizeof(runs) / sizeof(*runs); i++) {
		struct bach_deflater *d = bach_deflater_new(runs[i].b, runs[i].level);
		size_t total = 0;
		double t0 = now(), dt, mbs;

		for (size_t off = 0; off < len; off += BACH_BGZF_MAX_INPUT)
			total += bach_bgzf_block(d, out, buf + off,
						 BACH_BGZF_MAX_INPUT);
		dt = now() - t0;
		mbs = (double)len / dt / 1e6;
		if (i == 0)
			base = mbs;
		printf("%-20s %10.1f %10.2f %7.2fx\n", runs[i].name, mbs,
		       (double)len / (double)total, mbs / base);
		bach_deflater_free(d);
	}
	free(buf);
	return 0;
}
