// SPDX-License-Identifier: MIT
/*
 * The analyzer file reader in a build without libsigrok (make NO_SIGROK=1):
 * every capture is refused, saying why, so that `bach decode` and replay of
 * an analyzer capture fail clearly while everything else works. la.c is
 * the reader (with the la_*.c files beside it); this file defines the
 * same three functions of analyzer/la.h.
 */
#include <stdio.h>
#include <string.h>

#include "analyzer/la.h"

#define WHY "this bach was built without libsigrok (make NO_SIGROK=1)"

int bach_la_decode_file(const char *path, const struct bach_la_params *p,
			struct bach_la_report *rep, char *err, size_t errlen)
{
	(void)p;
	memset(rep, 0, sizeof(*rep));
	snprintf(err, errlen, "%s: cannot read a logic-analyzer capture: %s",
		 path, WHY);
	return BACH_LA_BAD_INPUT;
}

/* by name alone, so that replay of a .sr says why it cannot */
bool bach_la_is_capture(const char *path)
{
	static const char *const exts[] = { ".sr", ".vcd", ".csv", NULL };
	size_t n = strlen(path);

	for (size_t i = 0; exts[i]; i++) {
		size_t k = strlen(exts[i]);

		if (n > k && !strcmp(path + n - k, exts[i]))
			return true;
	}
	return false;
}

size_t bach_la_formats(char *buf, size_t len)
{
	return (size_t)snprintf(buf, len, "none: %s\n", WHY);
}
