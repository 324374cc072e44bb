// SPDX-License-Identifier: MIT
/*
 * Readers of command-line arguments the commands share: numbers
 * (parse_u64) and file names' endings (ends_with, which picks a format by
 * name). --range is in range.c, --between in between.c.
 */
#include <string.h>

#include "cmd.h"
#include "lib/options.h"

bool parse_u64(const char *s, uint64_t *v)
{
	return !bach_parse_u64(s, v); /* the options' reader (lib/options.h) */
}

bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int word_find(const char *const *words, const char *w)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(words[i], w))
			return i;
	return -1;
}
