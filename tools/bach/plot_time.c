// SPDX-License-Identifier: MIT
/*
 * bach plot --x time (plot_kinds.h): the x axis of map, mix and wss as
 * time rather than trace position. One pass over the traces' timing
 * sidecars (docs/formats.md section 3.2) keeps the clock of every so many
 * kept records (at most TIME_SAMPLES, thinned by half as the trace grows),
 * of each gap marker and the record after it (the time lost lies between
 * them) and of the last one, whole blocks at a time; a trace position's x is
 * then the clock between the two samples around it, interpolated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bach/record.h"
#include "cmd.h"
#include "plot_kinds.h"

#define TIME_SAMPLES 65536

struct tsample {
	uint64_t pos, clk;
	bool gap; /* a gap marker's or the record's after it: kept */
};

static struct tsample *ts;
static size_t nts, cursor;
static uint64_t time_hz;

void time_reset(void)
{
	free(ts);
	ts = NULL;
	nts = cursor = 0;
	time_hz = 0;
}

bool time_axis_on(void)
{
	return nts > 0;
}

static int sample(uint64_t pos, uint64_t clk, bool gap, uint64_t *step)
{
	if (!ts && !(ts = malloc(TIME_SAMPLES * sizeof(*ts))))
		return -1;
	if (nts == TIME_SAMPLES) { /* half as many, from now on too */
		size_t n = 0;

		*step *= 2;
		for (size_t i = 0; i < nts; i++)
			if (ts[i].pos % *step == 0 || ts[i].gap)
				ts[n++] = ts[i];
		if (n > TIME_SAMPLES * 3 / 4) { /* gaps everywhere */
			for (size_t i = 0; i < TIME_SAMPLES / 2; i++)
				ts[i] = ts[2 * i];
			n = TIME_SAMPLES / 2;
		}
		nts = n;
	}
	ts[nts].pos = pos;
	ts[nts].clk = clk;
	ts[nts++].gap = gap;
	return 0;
}

int time_table(int ntraces, char **traces, struct rec_filter *f)
{
	uint64_t pos = 0, step = 1, last_pos = 0, last_clk = BACH_TIME_NONE;
	bool after_gap = false;
	int status = EXIT_OK;

	time_reset();
	for (int i = 0; i < ntraces; i++) {
		if (!bach_times_present(traces[i]))
			return usage_error(
				"--x time: %s has no timing (no .time.gz sidecar)",
				traces[i]);
	}
	for (int i = 0; i < ntraces && !status; i++) {
		struct bach_reader *r;
		struct trace_times tt;
		ssize_t n = 0, k;

		status = open_traces(&r, 1, &traces[i]);
		if (!status)
			status = times_open(&tt, true);
		while (!status) {
			const uint8_t *p;
			const uint64_t *clk;

			n = bach_reader_read(r, &p);
			if (n <= 0)
				break;
			status = times_block(&tt, r, (size_t)n, &clk);
			if (status)
				break;
			k = filter_block(f, &p, &clk, (size_t)n);
			if (k < 0) {
				errmsg("out of memory");
				status = EXIT_USAGE;
				break;
			}
			/* every step-th record, and each gap marker and the
			 * record after it: the clock jumps there */
			for (size_t j = 0; j < (size_t)k; j++) {
				bool at_gap =
					bach_rec_is_gap(p +
							j * BACH_REC_SIZE) ||
					(j ? bach_rec_is_gap(
						     p +
						     (j - 1) * BACH_REC_SIZE)
					   : after_gap);

				if (((pos + j) % step == 0 || at_gap) &&
				    clk[j] != BACH_TIME_NONE &&
				    sample(pos + j, clk[j], at_gap, &step)) {
					errmsg("out of memory");
					return EXIT_USAGE;
				}
			}
			if (k)
				after_gap = bach_rec_is_gap(
					p + (size_t)(k - 1) * BACH_REC_SIZE);
			for (ssize_t j = k - 1; j >= 0; j--)
				if (clk[j] != BACH_TIME_NONE) {
					last_pos = pos + (uint64_t)j;
					last_clk = clk[j];
					break;
				}
			pos += (uint64_t)k;
			if (!time_hz)
				time_hz = tt.hz;
		}
		if (!status && n < 0) {
			errmsg("%s", bach_reader_strerror(r));
			status = bach_exit_status((int)n);
		}
		if (!status)
			status = times_finish(&tt);
		times_close(&tt);
		bach_reader_free(r);
	}
	if (status)
		return status;
	if (last_clk != BACH_TIME_NONE &&
	    (!nts || ts[nts - 1].pos != last_pos)) {
		if (sample(last_pos, last_clk, true, &step)) {
			errmsg("out of memory");
			return EXIT_USAGE;
		}
	}
	if (!nts)
		return usage_error("--x time: the records have no clocks");
	return EXIT_OK;
}

/* x of trace position pos: of its clock when timed, else linear */
double pos_x(uint64_t pos, uint64_t total)
{
	double c, span;

	if (!nts)
		return LEFT + (total ? (double)pos / (double)total : 0) * PW;
	if (cursor >= nts || ts[cursor].pos > pos)
		cursor = 0;
	while (cursor + 1 < nts && ts[cursor + 1].pos <= pos)
		cursor++;
	if (pos <= ts[cursor].pos || cursor + 1 == nts) {
		c = (double)ts[cursor].clk;
	} else {
		const struct tsample *a = &ts[cursor], *b = &ts[cursor + 1];

		c = (double)a->clk + (double)(b->clk - a->clk) *
					     (double)(pos - a->pos) /
					     (double)(b->pos - a->pos);
	}
	span = (double)(ts[nts - 1].clk - ts[0].clk);
	return LEFT + (span > 0 ? (c - (double)ts[0].clk) / span : 0) * PW;
}

/* The x axis of time: from the first clock, in s, ms, us or ns (clocks
 * when the rate is not known), with its title. */
void time_ticks(cairo_t *cr)
{
	static const char *const unit[] = { "s", "ms", "\xc2\xb5s", "ns" };
	double span = (double)(ts[nts - 1].clk - ts[0].clk), div = 1, step;
	char b[64], brief[32];
	int u = 0;

	if (time_hz) {
		span /= (double)time_hz;
		while (u < 3 && span > 0 && span * div < 1) {
			div *= 1000;
			u++;
		}
	}
	span *= div;
	if (!(span > 0))
		span = 1;
	font(cr, 11, false);
	if (time_hz)
		snprintf(b, sizeof(b), "%g", span * 0.999);
	else
		si(b, sizeof(b), span * 0.999);
	step = tick_step(cr, span, b);
	cairo_set_source_rgb(cr, 0, 0, 0);
	text_role = "tick";
	for (double v = 0; v <= span * 1.0001; v += step) {
		double x = LEFT + v / span * PW;

		cairo_move_to(cr, x + 0.5, TOP + PH);
		cairo_line_to(cr, x + 0.5, TOP + PH + S(5));
		cairo_stroke(cr);
		if (time_hz)
			snprintf(b, sizeof(b), "%g", v);
		else
			si(b, sizeof(b), v);
		if (!text_collides(cr, x, TOP + PH + S(8), 0.5, 0, b, S(2)))
			text(cr, x, TOP + PH + S(8), 0.5, 0, b);
	}
	snprintf(b, sizeof(b), "time (%s from the first timed record)",
		 time_hz ? unit[u] : "clocks");
	snprintf(brief, sizeof(brief), "time (%s)",
		 time_hz ? unit[u] : "clocks");
	axis_title(cr, false, b, brief);
}
