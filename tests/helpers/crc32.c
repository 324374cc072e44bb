// SPDX-License-Identifier: MIT
/*
 * crc32: the CRC-32 (zlib's, as in gzip and the manifest's "crc32") of
 * each FILE, printed as "%08x  FILE", one line per file.
 *
 *   crc32 FILE...      (cc crc32.c -lz)
 */
#include <stdio.h>
#include <zlib.h>

#include "lib/exit.h"

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 16];
	int status = 0;

	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uLong crc = crc32(0, NULL, 0);
		size_t n;

		if (!f) {
			perror(argv[i]);
			status = EXIT_USAGE;
			continue;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			crc = crc32(crc, buf, (uInt)n);
		if (ferror(f)) {
			perror(argv[i]);
			status = EXIT_USAGE;
		} else {
			printf("%08lx  %s\n", crc, argv[i]);
		}
		fclose(f);
	}
	return status;
}
