// SPDX-License-Identifier: MIT
/*
 * The timing sidecars of the records the reader hands out
 * (bach_reader_times(), docs/api.md "Timing"): each block's bus clocks from
 * the NAME.time.gz beside the file it came from (lib/io/timing.c), a file read
 * whole checked to leave no entry over. bach_reader_read()
 * (lib/io/reader_read.c) notes how many records it handed out, and a seek
 * (lib/io/reader_seek.c) that files are no longer read whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/trace.h"
#include "lib/io/reader_state.h"
#include "lib/io/timing.h"

/* The message of a sidecar's failure, as the reader's. */
static ssize_t times_fail(struct bach_reader *r, int err)
{
	snprintf(r->msg, sizeof(r->msg), "%s", bach_times_strerror(r->times));
	return err;
}

ssize_t bach_reader_times(struct bach_reader *r, const uint64_t **clk)
{
	const char *file = bach_reader_file(r);
	int err;

	*clk = NULL;
	if (!r->times && !(r->times = bach_times_new()))
		return reader_fail(r, -ENOMEM, "out of memory");
	/* a file read whole: its sidecar must hold no more entries */
	if (r->tfile && (!r->last_n || strcmp(r->tfile, file))) {
		free(r->tfile);
		r->tfile = NULL;
		if (!r->jumped && (err = bach_times_end(r->times)))
			return times_fail(r, err);
	}
	if (!r->last_n)
		return 0;
	if (!r->tfile && !(r->tfile = strdup(file)))
		return reader_fail(r, -ENOMEM, "out of memory");
	err = bach_times_get(r->times, file,
			     bach_reader_file_records(r) - r->last_n, r->last_n,
			     clk);
	if (err)
		return times_fail(r, err);
	return (ssize_t)r->last_n;
}

uint64_t bach_reader_clock_hz(const struct bach_reader *r)
{
	return r->times ? bach_times_clock_hz(r->times) : 0;
}
