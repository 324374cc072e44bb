// SPDX-License-Identifier: MIT
/*
 * gapwalk: is a captured trace the reference stream minus its gaps?
 *
 *   gapwalk [-p] REFERENCE.byu TRACE.byu|-
 *
 * Both files are raw 6-byte BYU records (zcat a .byu.gz first). Walks the
 * trace against the reference (`bach gen` output): a gap marker (an
 * INVALID type with control low nibble 0xF, address = records lost) skips
 * that many reference records; every other record must equal the next
 * reference record. The walk must end exactly at the reference's end, or
 * with -p anywhere (the trace is a prefix, gaps allowed). Prints
 * "records R markers M lost L walked W" and exits 0 when it holds;
 * otherwise says where it broke and exits 1 (2 on a usage or I/O error).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/exit.h"

#define REC 6

static int invalid_type(unsigned t)
{
	return t == 0 || t == 2 || t == 4 || t == 6 || t == 10 || t == 11;
}

/* Walk TRACE (t) against the reference g of ng records; the status. */
static int walk(const uint8_t *g, uint64_t ng, FILE *t, int prefix)
{
	uint64_t pos = 0, recs = 0, markers = 0, lost = 0, idx = 0;
	uint8_t r[REC];
	size_t n;

	while ((n = fread(r, 1, REC, t)) == REC) {
		unsigned ctl = r[5];

		if (invalid_type(ctl >> 4) && (ctl & 0xf) == 0xf) {
			uint64_t k = (uint64_t)r[0] << 24 |
				     (uint64_t)r[1] << 16 |
				     (uint64_t)r[2] << 8 | r[3];

			markers++;
			lost += k;
			pos += k;
			if (pos > ng) {
				printf("trace record %llu: a marker for %llu records goes past the reference's end (%llu)\n",
				       (unsigned long long)idx,
				       (unsigned long long)k,
				       (unsigned long long)ng);
				return 1;
			}
		} else {
			if (pos >= ng) {
				printf("trace record %llu: beyond the reference's %llu records\n",
				       (unsigned long long)idx,
				       (unsigned long long)ng);
				return 1;
			}
			if (memcmp(r, g + pos * REC, REC)) {
				printf("trace record %llu (reference %llu) differs\n",
				       (unsigned long long)idx,
				       (unsigned long long)pos);
				return 1;
			}
			pos++;
			recs++;
		}
		idx++;
	}
	if (n) {
		printf("trace: a truncated record at the end\n");
		return 1;
	}
	printf("records %llu markers %llu lost %llu walked %llu\n",
	       (unsigned long long)recs, (unsigned long long)markers,
	       (unsigned long long)lost, (unsigned long long)pos);
	if (!prefix && pos != ng) {
		printf("walked %llu of the reference's %llu records\n",
		       (unsigned long long)pos, (unsigned long long)ng);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int prefix = 0, i = 1;
	uint64_t gsize = 0, gcap = 1 << 20, ng;
	uint8_t *g, *more;
	FILE *f, *t;
	size_t n;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "-p")) {
		prefix = 1;
		i++;
	}
	if (argc - i != 2) {
		fprintf(stderr,
			"usage: gapwalk [-p] REFERENCE.byu TRACE.byu|-\n");
		return EXIT_USAGE;
	}
	f = fopen(argv[i], "rb");
	if (!f) {
		perror(argv[i]);
		return EXIT_USAGE;
	}
	g = malloc(gcap);
	while (g && (n = fread(g + gsize, 1, gcap - gsize, f)) > 0) {
		gsize += n;
		if (gsize == gcap) {
			more = realloc(g, gcap *= 2);
			if (!more)
				free(g);
			g = more;
		}
	}
	fclose(f);
	if (!g || gsize % REC) {
		fprintf(stderr, "gapwalk: %s: not whole records\n", argv[i]);
		free(g);
		return EXIT_USAGE;
	}
	ng = gsize / REC;
	t = strcmp(argv[i + 1], "-") ? fopen(argv[i + 1], "rb") : stdin;
	if (!t) {
		perror(argv[i + 1]);
		free(g);
		return EXIT_USAGE;
	}
	rc = walk(g, ng, t, prefix);
	free(g);
	return rc;
}
