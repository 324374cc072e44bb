/* SPDX-License-Identifier: MIT */
/*
 * The metrics file: a capture's figures in the Prometheus text format, for
 * node_exporter's textfile collector (docs/bachd.md section 8). Written
 * whole under a temporary name in the same directory, then renamed over
 * the file, so a reader sees the previous file or the next, never half of
 * one. Called from the caller's own loop (bachd's main loop, `bach
 * capture`'s), never from the capture's threads.
 */
#ifndef BACHD_METRICS_H
#define BACHD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "session.h"

struct metrics {
	char path[4096];	 /* "": no metrics */
	unsigned interval;	 /* seconds between writes */
	double due;		 /* monotonic seconds of the next write */
	int err;		 /* the last write's -errno, logged once */
	char why[4200];		 /* ... in words (metrics_strerror) */
	uint64_t min_free_bytes; /* the disk guard's floor, or ... */
	unsigned min_free_pct;	 /* ... this % of the filesystem */
	/* every series' labels, escaped: instance_name, metrics_labels */
	char labels[CAPTURE_MAX_LABELS *
			    (CAPTURE_LABEL_KEY + 3 * CAPTURE_LABEL_VALUE) +
		    256];
};

/* What the file says besides the capture's figures. */
struct metrics_state {
	const struct capture_status *st; /* the capture's, or NULL: none yet */
	bool up;			 /* a capture is running */
	const char *output;		 /* the output directory (free space) */
};

/*
 * The file of c's metrics_file, written every metrics_interval, each
 * series labelled with instance_name and the label.KEY values of
 * metrics_labels (docs/bachd.md section 8).
 */
void metrics_init(struct metrics *m, const struct bachd_config *c);
/*
 * Write the file now; returns 0 or -errno (-EEXIST: its temporary
 * .NAME.tmp is there and is not a regular file; it is left alone).
 */
int metrics_write(struct metrics *m, const struct metrics_state *s);
/* The last failed write's error in words, naming what was refused. */
const char *metrics_strerror(const struct metrics *m);
/*
 * The same, logging a failure once (until a write succeeds again): the
 * capture goes on without its metrics meanwhile.
 */
int metrics_update(struct metrics *m, const struct metrics_state *s);
/*
 * The file's text into buf, m's labels on every series; returns its
 * length (cap - 1 when cut).
 */
size_t metrics_format(char *buf, size_t cap, const struct metrics *m,
		      const struct metrics_state *s);
/* True when the interval has passed since the last write (or none yet). */
bool metrics_due(struct metrics *m);

#endif
