// SPDX-License-Identifier: MIT
/*
 * --range START:END, the records a command reads: parsing it (parse_range,
 * range_arg), seeking a reader to it (apply_range), and choosing between
 * it and --between (select_records; --between itself is in between.c).
 */
#include <string.h>

#include "cmd.h"

bool parse_range(const char *s, uint64_t *start, uint64_t *end)
{
	const char *colon = strchr(s, ':');
	char first[32];
	size_t len;

	if (!colon)
		return false;
	len = (size_t)(colon - s);
	if (len >= sizeof(first))
		return false;
	memcpy(first, s, len);
	first[len] = 0;
	*start = 0;
	*end = UINT64_MAX;
	if (len && !parse_u64(first, start))
		return false;
	if (colon[1] && !parse_u64(colon + 1, end))
		return false;
	return *end >= *start;
}

int range_arg(const char *s, uint64_t *start, uint64_t *end)
{
	if (parse_range(s, start, end))
		return EXIT_OK;
	return usage_error("--range: not START:END with START <= END: '%s'", s);
}

int select_records(struct bach_reader *r, int argc, char **argv, const char *ba,
		   const char *bb, uint64_t *start, uint64_t end)
{
	if (ba && (*start || end != UINT64_MAX))
		return usage_error("--range and --between: one or the other");
	if (ba)
		return between_window(r, argc, argv, ba, bb, start);
	return apply_range(r, *start, end);
}

int apply_range(struct bach_reader *r, uint64_t start, uint64_t end)
{
	int err;

	if (!start && end == UINT64_MAX)
		return EXIT_OK;
	err = bach_reader_range(r, start, end);
	if (err) {
		errmsg("%s", bach_reader_strerror(r));
		return bach_exit_status(err);
	}
	return EXIT_OK;
}
