// SPDX-License-Identifier: MIT
/* The timing of a trace being read, for dump --time and stat --time. */
#include <stdio.h>
#include <string.h>

#include "bach.h"

int times_open(struct trace_times *tt, bool whole)
{
	memset(tt, 0, sizeof(*tt));
	tt->whole = whole;
	tt->t = bach_times_new();
	if (!tt->t) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int times_error(struct trace_times *tt, int err)
{
	errmsg("%s", bach_times_strerror(tt->t));
	return bach_exit_status(err);
}

int times_block(struct trace_times *tt, struct bach_reader *r, size_t n,
		const uint64_t **clk)
{
	const char *file = bach_reader_file(r);
	int err;

	if (tt->last[0] && strcmp(tt->last, file) && tt->whole &&
	    (err = bach_times_end(tt->t)))
		return times_error(tt, err);
	snprintf(tt->last, sizeof(tt->last), "%s", file);
	err = bach_times_get(tt->t, file, bach_reader_file_records(r) - n, n,
			     clk);
	if (err)
		return times_error(tt, err);
	tt->hz = bach_times_clock_hz(tt->t);
	return EXIT_OK;
}

int times_finish(struct trace_times *tt)
{
	int err = tt->last[0] && tt->whole ? bach_times_end(tt->t) : 0;

	return err ? times_error(tt, err) : EXIT_OK;
}

void times_close(struct trace_times *tt)
{
	bach_times_free(tt->t);
	tt->t = NULL;
}

size_t fmt_time(char *dst, uint64_t clk, uint64_t hz, char sep)
{
	if (clk == BACH_TIME_NONE)
		return (size_t)sprintf(dst, "%c-%c-", sep, sep);
	if (!hz)
		return (size_t)sprintf(dst, "%c%llu%c-", sep,
				       (unsigned long long)clk, sep);
	return (size_t)sprintf(
		dst, "%c%llu%c%llu.%09llu", sep, (unsigned long long)clk, sep,
		(unsigned long long)(clk / hz),
		(unsigned long long)((clk % hz) * 1000000000ull / hz));
}
