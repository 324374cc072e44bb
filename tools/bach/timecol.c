// SPDX-License-Identifier: MIT
/* The timing of a trace being read, for dump --time and stat --time. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

int times_open(struct trace_times *tt, bool whole)
{
	memset(tt, 0, sizeof(*tt));
	tt->whole = whole;
	return EXIT_OK;
}

/* The reader's own timing (bach_reader_times()): its message names the
 * sidecar and the offset. */
static int times_error(struct trace_times *tt, ssize_t err)
{
	errmsg("%s", bach_reader_strerror(tt->r));
	return bach_exit_status((int)err);
}

int times_block(struct trace_times *tt, struct bach_reader *r, size_t n,
		const uint64_t **clk)
{
	ssize_t m;

	tt->r = r;
	m = bach_reader_times(r, clk);
	if (m < 0)
		return times_error(tt, m);
	if ((size_t)m != n) {
		errmsg("%s: %zu timing entries for %zu records",
		       bach_reader_file(r), (size_t)m, n);
		return EXIT_USAGE;
	}
	tt->hz = bach_reader_clock_hz(r);
	return EXIT_OK;
}

int times_finish(struct trace_times *tt)
{
	const uint64_t *clk;
	ssize_t m = tt->r && tt->whole ? bach_reader_times(tt->r, &clk) : 0;

	return m < 0 ? times_error(tt, m) : EXIT_OK;
}

void times_close(struct trace_times *tt)
{
	tt->r = NULL;
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
