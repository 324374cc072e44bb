// SPDX-License-Identifier: MIT
/*
 * The block compressors on the same blocks, in one process: time and
 * compressed size of every 64 KiB block of a trace, per backend and level,
 * each block a whole blocked-gzip member (deflate, CRC, header). ISA-L's
 * igzip is measured too, outside lib/ (bach does not use it: on these
 * blocks its best level compresses less than gzip -1).
 * usage: deflate_backends TRACE.byu [MAX_MB]
 */
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bach/trace.h"
#include "lib/exit.h"

#define ISAL -1 /* a backend number of this file's own */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One member's worth of igzip at level: deflate and CRC, as bgzf.c does. */
static size_t isal_block(int level, uint8_t *lbuf, uint32_t lbuf_size,
			 uint8_t *dst, const uint8_t *src, size_t len)
{
	struct isal_zstream s;
	size_t clen;

	isal_deflate_stateless_init(&s);
	s.level = (uint32_t)level;
	s.level_buf = lbuf;
	s.level_buf_size = lbuf_size;
	s.next_in = (uint8_t *)src;
	s.avail_in = (uint32_t)len;
	s.next_out = dst + BACH_BGZF_HDR;
	s.avail_out = (uint32_t)len;
	s.end_of_stream = 1;
	s.gzip_flag = IGZIP_DEFLATE;
	if (isal_deflate_stateless(&s) != COMP_OK)
		clen = len + 5; /* stored, as bgzf.c would */
	else
		clen = len - s.avail_out;
	(void)crc32_gzip_refl(0, src, len);
	return BACH_BGZF_HDR + clen + BACH_BGZF_TRAILER;
}

int main(int argc, char **argv)
{
	static uint8_t out[BACH_BGZF_MAX_BLOCK];
	static const struct {
		int b;
		int level;
		const char *name;
	} runs[] = {
		{ BACH_DEFLATE_ZLIB, 1, "zlib -1" },
		{ BACH_DEFLATE_LIBDEFLATE, 1, "libdeflate -1" },
		{ BACH_DEFLATE_LIBDEFLATE, 4, "libdeflate -4" },
		{ BACH_DEFLATE_LIBDEFLATE, 5, "libdeflate -5" },
		{ BACH_DEFLATE_LIBDEFLATE, 6, "libdeflate -6" },
		{ ISAL, 0, "isa-l igzip -0" },
		{ ISAL, 1, "isa-l igzip -1" },
		{ ISAL, 2, "isa-l igzip -2" },
		{ ISAL, 3, "isa-l igzip -3" },
		{ BACH_DEFLATE_RECORD, 1, "record -1" },
		{ BACH_DEFLATE_RECORD, 2, "record -2" },
		{ BACH_DEFLATE_AUTO, 0, "default (record)" },
	};
	static const uint32_t isal_lbuf[] = {
		ISAL_DEF_LVL0_DEFAULT,
		ISAL_DEF_LVL1_DEFAULT,
		ISAL_DEF_LVL2_DEFAULT,
		ISAL_DEF_LVL3_DEFAULT,
	};
	size_t max = (argc > 2 ? strtoul(argv[2], NULL, 0) : 256) << 20;
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	uint8_t *buf, *lbuf;
	size_t len;
	double base = 0;

	if (!f) {
		fprintf(stderr, "usage: deflate_backends TRACE.byu [MAX_MB]\n");
		return EXIT_USAGE;
	}
	buf = malloc(max);
	lbuf = malloc(ISAL_DEF_LVL3_DEFAULT);
	if (!buf || !lbuf) {
		fprintf(stderr, "deflate_backends: out of memory\n");
		return 1;
	}
	len = fread(buf, 1, max, f);
	fclose(f);
	len -= len % BACH_BGZF_MAX_INPUT;
	printf("%-20s %10s %10s %8s\n", "backend", "MB/s", "ratio", "speed");
	for (size_t i = 0; i < sizeof(runs) / sizeof(*runs); i++) {
		struct bach_deflater *d = NULL;
		size_t total = 0;
		double t0, dt, mbs;

		if (runs[i].b != ISAL) {
			d = bach_deflater_new(runs[i].b, runs[i].level);
			if (!d) {
				fprintf(stderr,
					"deflate_backends: out of memory\n");
				return 1;
			}
		}
		t0 = now();
		for (size_t off = 0; off < len; off += BACH_BGZF_MAX_INPUT)
			total += d ? bach_bgzf_block(d, out, buf + off,
						     BACH_BGZF_MAX_INPUT)
				   : isal_block(runs[i].level, lbuf,
						isal_lbuf[runs[i].level], out,
						buf + off, BACH_BGZF_MAX_INPUT);
		dt = now() - t0;
		mbs = (double)len / dt / 1e6;
		if (i == 0)
			base = mbs;
		printf("%-20s %10.1f %10.2f %7.2fx\n", runs[i].name, mbs,
		       (double)len / (double)total, mbs / base);
		bach_deflater_free(d);
	}
	free(lbuf);
	free(buf);
	return 0;
}
