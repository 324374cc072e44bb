// SPDX-License-Identifier: MIT
/*
 * The baseline of `make bench`: the BYU reader as commonly written, three
 * fread()s and one printf() per record.
 */
#include <stdint.h>
#include <stdio.h>

#include "lib/exit.h"

static const char *const names[16] = {
	"INVALID", "INT_ACK",	 "INVALID",    "SPECIAL",
	"INVALID", "IO_READ",	 "INVALID",    "IO_WRITE",
	"I_FETCH", "NC_I_FETCH", "INVALID",    "INVALID",
	"D_READ",  "NC_D_READ",	 "WRITE_BACK", "D_WRITE",
};

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
	uint8_t a[4];
	uint8_t be, ctl;

	if (!f)
		return EXIT_USAGE;
	while (fread(a, 4, 1, f) == 1 && fread(&be, 1, 1, f) == 1 &&
	       fread(&ctl, 1, 1, f) == 1)
		printf("%08x %02x %s\n",
		       (unsigned)a[0] << 24 | (unsigned)a[1] << 16 |
			       (unsigned)a[2] << 8 | a[3],
		       be, names[ctl >> 4]);
	return 0;
}
