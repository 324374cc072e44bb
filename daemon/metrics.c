// SPDX-License-Identifier: MIT
/* The metrics file (metrics.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/bus/frame.h"
#include "lib/io/outfile.h"
#include "log.h"
#include "metrics.h"

#define U(x) ((unsigned long long)(x))

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void metrics_init(struct metrics *m, const char *path, unsigned interval)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->interval = interval ? interval : 1;
}

bool metrics_due(struct metrics *m)
{
	return m->path[0] && mono() >= m->due;
}

struct out {
	char *buf;
	size_t cap, n;
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

/* HELP and TYPE of one metric family */
static void family(struct out *o, const char *name, const char *type,
		   const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metric(struct out *o, const char *name, const char *type,
		   const char *help, unsigned long long v)
{
	family(o, name, type, help);
	put(o, "%s %llu\n", name, v);
}

/* One unlabelled sample of a real value. */
static void metric_f(struct out *o, const char *name, const char *type,
		     const char *help, double v)
{
	family(o, name, type, help);
	put(o, "%s %.6f\n", name, v);
}

/* A label value: backslash, double quote and newline escaped. */
static const char *label(char *dst, size_t cap, const char *s)
{
	size_t n = 0;

	for (; *s && n + 3 < cap; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n') {
			dst[n++] = '\\';
			dst[n++] = *s == '\n' ? 'n' : *s;
		} else {
			dst[n++] = *s;
		}
	}
	dst[n] = 0;
	return dst;
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

size_t metrics_format(char *buf, size_t cap, const struct metrics_state *s)
{
	const struct capture_status *st = s->st;
	struct out o = { buf, cap, 0 };
	char v[64], g[80], d[160];
	struct statvfs fs;

	metric(&o, "bach_up", "gauge",
	       "1 while a capture is running, 0 when bachd is idle or its capture has ended.",
	       s->up);
	family(&o, "bach_build_info", "gauge",
	       "bach's version, and the capture device's gateware version (empty when the driver has none).");
	put(&o,
	    "bach_build_info{version=\"%s\",gateware=\"%s\",driver=\"%s\"} 1\n",
	    label(v, sizeof(v), BACH_VERSION),
	    label(g, sizeof(g), st ? st->gateware : ""),
	    label(d, sizeof(d), st ? st->driver : ""));
	if (s->output && s->output[0] && statvfs(s->output, &fs) == 0) {
		metric(&o, "bach_output_free_bytes", "gauge",
		       "Bytes available to bachd on the output directory's filesystem.",
		       U(fs.f_bavail) * fs.f_frsize);
		metric(&o, "bach_output_size_bytes", "gauge",
		       "Size of the output directory's filesystem, bytes.",
		       U(fs.f_blocks) * fs.f_frsize);
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
	for (int i = 0; i < BACH_GAP_NCAUSES; i++)
		put(&o, "bach_records_lost_total{cause=\"%s\"} %llu\n",
		    bach_gap_cause_name((enum bach_gap_cause)i),
		    U(st->lost_by[i]));
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
	char buf[8192], tmp[sizeof(m->path) + 16];
	const char *base = strrchr(m->path, '/');
	size_t n = metrics_format(buf, sizeof(buf), s);
	unsigned what = 0;
	int fd, err;

	if (!m->path[0])
		return 0;
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
		return fd;
	}
	if (fd < 0) {
		err = fd;
		goto out;
	}
	err = write_all(fd, buf, n);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, m->path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
out:
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
