// SPDX-License-Identifier: MIT
/* The metrics file (metrics.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/bus/frame.h"
#include "lib/io/outfile.h"
#include "lib/options.h"
#include "log.h"
#include "metrics.h"

#define U(x) ((unsigned long long)(x))

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct out {
	char *buf;
	size_t cap, n;
	const char *lab; /* the labels of every series, escaped, or "" */
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o,
						      const char *fmt, ...)
{
	va_list ap;
	int k;

	if (o->n >= o->cap)
		return;
	va_start(ap, fmt);
	k = vsnprintf(o->buf + o->n, o->cap - o->n, fmt, ap);
	va_end(ap);
	o->n = k < 0 ? o->cap : o->n + (size_t)k;
}

/*
 * A label value as the text format wants it: backslash, double quote and
 * newline escaped, and a byte that is not well-formed UTF-8 (which
 * Prometheus refuses) as U+FFFD.
 */
static void label(struct out *o, const char *s)
{
	while (*s) {
		size_t k = bach_utf8_len(s);

		if (!k)
			put(o, "\xef\xbf\xbd");
		else if (*s == '\\' || *s == '"')
			put(o, "\\%c", *s);
		else if (*s == '\n')
			put(o, "\\n");
		else
			put(o, "%.*s", (int)k, s);
		s += k ? k : 1;
	}
}

/* KEY="VALUE", escaped, after a comma unless it is the first */
static void label_pair(struct out *o, const char *key, const char *value)
{
	put(o, "%s%s=\"", o->n ? "," : "", key);
	label(o, value);
	put(o, "\"");
}

void metrics_init(struct metrics *m, const struct bachd_config *c)
{
	struct out o;

	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", c->cap.metrics_file);
	m->interval = c->metrics_interval ? c->metrics_interval : 1;
	m->min_free_bytes = c->cap.min_free_bytes;
	m->min_free_pct = c->cap.min_free_pct;
	o = (struct out){ m->labels, sizeof(m->labels), 0, "" };
	if (c->instance_name[0])
		label_pair(&o, "instance_name", c->instance_name);
	/* each key has its label (bachd_parse_args() checked) */
	for (const char *p = c->metrics_labels; *p; p += *p == ',') {
		size_t len = strcspn(p, ",");
		const struct capture_label *l = bachd_config_label(c, p, len);

		if (l)
			label_pair(&o, l->key, l->value);
		p += len;
	}
}

bool metrics_due(struct metrics *m)
{
	return m->path[0] && mono() >= m->due;
}

/* HELP and TYPE of one metric family */
static void family(struct out *o, const char *name, const char *type,
		   const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A series' name and labels: every series' (o->lab), then more's. */
static void series(struct out *o, const char *name, const char *more)
{
	bool any = o->lab[0] || more;

	put(o, "%s%s%s%s%s%s", name, any ? "{" : "", o->lab,
	    o->lab[0] && more ? "," : "", more ? more : "", any ? "}" : "");
}

static void metric(struct out *o, const char *name, const char *type,
		   const char *help, unsigned long long v)
{
	family(o, name, type, help);
	series(o, name, NULL);
	put(o, " %llu\n", v);
}

/* One sample of a real value. */
static void metric_f(struct out *o, const char *name, const char *type,
		     const char *help, double v)
{
	family(o, name, type, help);
	series(o, name, NULL);
	put(o, " %.6f\n", v);
}

#define CS(m) offsetof(struct capture_status, m)

/* The capture's figures that go into the file as they are. */
static const struct {
	const char *name, *type, *help;
	size_t off;
} totals[] = {
	{ "bach_records_produced_total", "counter",
	  "Records the source produced, lost ones included.", CS(produced) },
	{ "bach_records_written_total", "counter",
	  "Records written to segments, gap markers not counted.",
	  CS(written) },
	{ "bach_gap_markers_total", "counter",
	  "Gap marker records written into the trace.", CS(markers) },
	{ "bach_written_bytes_total", "counter",
	  "Bytes written to segments, the open one included.", CS(bytes) },
	{ "bach_segments_total", "counter", "Segments closed.", CS(segments) },
	{ "bach_stalls_total", "counter",
	  "Times a full ring held the source back (policy stall).",
	  CS(stalls) },
	{ "bach_board_stalls_total", "counter",
	  "Times the board held the CPU (HOLD), from its status frames.",
	  CS(board_stalls) },
	{ "bach_corrupt_frames_total", "counter",
	  "Board frames rejected for a bad CRC or header.",
	  CS(corrupt_frames) },
	{ "bach_ring_used_blocks", "gauge",
	  "Ring blocks waiting for the writer.", CS(ring_used) },
	{ "bach_ring_size_blocks", "gauge",
	  "Ring blocks in all (10880 records each).", CS(ring_blocks) },
	{ "bach_timing_buffer_bytes", "gauge",
	  "Memory of the clock buffers beside the ring (timing sidecars).",
	  CS(timing_bytes) },
	{ "bach_retention_over_bytes", "gauge",
	  "Bytes over keep_bytes that retention's last run could not remove.",
	  CS(retention_over_bytes) },
};

size_t metrics_format(char *buf, size_t cap, const struct metrics *m,
		      const struct metrics_state *s)
{
	const struct capture_status *st = s->st;
	const char *labels = m->labels;
	struct out o = { buf, cap, 0, labels };
	char more[64];
	struct statvfs fs;

	metric(&o, "bach_up", "gauge",
	       "1 while a capture is running, 0 when bachd is idle or its capture has ended.",
	       s->up);
	family(&o, "bach_build_info", "gauge",
	       "bach's version, and the capture device's gateware version (empty when the driver has none).");
	put(&o, "bach_build_info{%s%sversion=\"", labels, labels[0] ? "," : "");
	label(&o, BACH_VERSION);
	put(&o, "\",gateware=\"");
	label(&o, st ? st->gateware : "");
	put(&o, "\",driver=\"");
	label(&o, st ? st->driver : "");
	put(&o, "\"} 1\n");
	if (s->output && s->output[0] && statvfs(s->output, &fs) == 0) {
		metric(&o, "bach_output_free_bytes", "gauge",
		       "Bytes available to bachd on the output directory's filesystem.",
		       U(fs.f_bavail) * fs.f_frsize);
		metric(&o, "bach_output_size_bytes", "gauge",
		       "Size of the output directory's filesystem, bytes.",
		       U(fs.f_blocks) * fs.f_frsize);
		/* the disk guard's floor as it reckons it (diskguard.c) */
		metric(&o, "bach_output_min_free_bytes", "gauge",
		       "min_free in bytes: the free space below which the disk guard closes the segment (0: no floor).",
		       m->min_free_pct ? U(fs.f_blocks) * fs.f_frsize / 100 *
						 m->min_free_pct
				       : U(m->min_free_bytes));
	}
	if (!st || !st->start_unix_ns)
		goto out;
	metric_f(&o, "bach_capture_start_time_seconds", "gauge",
		 "When the capture started, seconds since the epoch.",
		 (double)st->start_unix_ns / 1e9);
	metric_f(&o, "bach_capture_uptime_seconds", "gauge",
		 "How long the capture has been running (or ran), seconds.",
		 (double)st->uptime_ns / 1e9);
	for (size_t i = 0; i < sizeof(totals) / sizeof(*totals); i++)
		metric(&o, totals[i].name, totals[i].type, totals[i].help,
		       *(const uint64_t *)((const char *)st + totals[i].off));
	family(&o, "bach_records_lost_total", "counter",
	       "Records lost, by cause (the manifest's gap causes).");
	for (int i = 0; i < BACH_GAP_NCAUSES; i++) {
		snprintf(more, sizeof(more), "cause=\"%s\"",
			 bach_gap_cause_name((enum bach_gap_cause)i));
		series(&o, "bach_records_lost_total", more);
		put(&o, " %llu\n", U(st->lost_by[i]));
	}
	metric(&o, "bach_records_in_flight", "gauge",
	       "Records produced but neither written nor lost yet (in the ring or being compressed).",
	       st->produced > st->written + st->lost
		       ? st->produced - st->written - st->lost
		       : 0);
	metric_f(&o, "bach_stall_seconds_total", "counter",
		 "Time the source was held back by a full ring, seconds.",
		 (double)st->stall_ns / 1e9);
	metric_f(&o, "bach_ring_fill_ratio", "gauge", "Ring fill, 0 to 1.",
		 st->ring_blocks
			 ? (double)st->ring_used / (double)st->ring_blocks
			 : 0.0);
	metric(&o, "bach_writer_blocked", "gauge",
	       "1 when a segment write has been pending for more than 2 s.",
	       st->writer_blocked);
	metric(&o, "bach_retention_kept_newest", "gauge",
	       "1 when retention's last run kept the running capture's newest closed segment against a limit.",
	       st->retention_kept_newest);
	if (st->have_board) {
		metric(&o, "bach_board_fifo_fill_records", "gauge",
		       "Records in the board's FIFO at its last status frame.",
		       st->board.fifo_fill);
		metric(&o, "bach_board_fifo_size_records", "gauge",
		       "The board's FIFO capacity, records.",
		       st->board.fifo_size);
		metric_f(
			&o, "bach_board_fifo_fill_ratio", "gauge",
			"The board's FIFO fill at its last status frame, 0 to 1.",
			st->board.fifo_size ? (double)st->board.fifo_fill /
						      st->board.fifo_size
					    : 0.0);
		metric(&o, "bach_board_off_bus_cycles_total", "counter",
		       "ADS#s the board saw while the CPU was off the bus (HLDA, BOFF#), not recorded.",
		       st->board.offbus);
	}
	if (st->have_decode) {
		metric(&o, "bach_decode_off_bus_cycles_total", "counter",
		       "ADS#s the bus decoder saw while the CPU was off the bus (HLDA, BOFF#), not recorded.",
		       st->decode.off_bus);
		metric(&o, "bach_decode_backoffs_total", "counter",
		       "BOFF# assertions the bus decoder saw.",
		       st->decode.backoffs);
	}
out:
	return o.n < cap ? o.n : cap - 1;
}

/* write all of buf to fd */
static int write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

int metrics_write(struct metrics *m, const struct metrics_state *s)
{
	/* some 40 series, each with the labels */
	size_t cap = 8192 + 64 * strlen(m->labels), n;
	char tmp[sizeof(m->path) + 16], *buf;
	const char *base = strrchr(m->path, '/');
	unsigned what = 0;
	int fd, err;

	if (!m->path[0])
		return 0;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	n = metrics_format(buf, cap, m, s);
	m->due = mono() + m->interval;
	/* ".NAME.tmp" beside it: the textfile collector reads only *.prom */
	base = base ? base + 1 : m->path;
	snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp", (int)(base - m->path),
		 m->path, base);
	/* anything but a regular file there is refused, a FIFO at once */
	fd = bach_tmp_openat(AT_FDCWD, tmp, 0644, &what);
	if (fd == -EEXIST) {
		snprintf(m->why, sizeof(m->why),
			 "%s is %s, not a regular file: not written", tmp,
			 bach_file_type(what));
		free(buf);
		return fd;
	}
	if (fd < 0) {
		err = fd;
		goto out;
	}
	err = write_all(fd, buf, n);
	free(buf);
	buf = NULL;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, m->path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
out:
	free(buf);
	if (err)
		snprintf(m->why, sizeof(m->why), "%s", strerror(-err));
	return err;
}

const char *metrics_strerror(const struct metrics *m)
{
	return m->why;
}

int metrics_update(struct metrics *m, const struct metrics_state *s)
{
	int err = metrics_write(m, s);

	if (err && err != m->err)
		log_warn("metrics file %s: %s (the capture goes on)", m->path,
			 metrics_strerror(m));
	else if (!err && m->err)
		log_notice("metrics file %s: written again", m->path);
	m->err = err;
	return err;
}
