// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bach/record.h"
#include "lib/io/manifest.h"
#include "lib/options.h"
#include "log.h"
#include "manifest_write.h"

#define U(x) ((unsigned long long)(x))

int manifest_open(struct manifest *m, int dirfd, bool create)
{
	struct stat st;

	m->fd = openat(dirfd, BACH_MANIFEST_NAME,
		       O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK |
			       O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0),
		       0644);
	if (m->fd < 0)
		return -errno;
	if (fstat(m->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(m->fd);
		m->fd = -1;
		return -EINVAL;
	}
	return 0;
}

void manifest_close(struct manifest *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

int manifest_sync(struct manifest *m)
{
	int err = fdatasync(m->fd) < 0 ? -errno : 0;

	if (err && !m->err)
		m->err = err;
	return err;
}

/* Every line: its "event" member is kind's name in bach_manifest_ev_names[] */
__attribute__((format(printf, 3, 4))) static int
manifest_event(struct manifest *m, enum bach_manifest_ev kind,
	       const char *members_fmt, ...)
{
	const char *event = bach_manifest_ev_name(kind);
	char line[MANIFEST_LINE_MAX];
	struct timeval tv;
	struct tm tm;
	size_t n;
	ssize_t w;
	off_t off;
	int err;
	va_list ap;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = strftime(line, sizeof(line), "{\"time\":\"%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(line + n, sizeof(line) - n,
			      ".%03ldZ\",\"event\":\"%s\"", tv.tv_usec / 1000,
			      event);
	if (members_fmt && *members_fmt && n < sizeof(line)) {
		line[n++] = ',';
		va_start(ap, members_fmt);
		n += (size_t)vsnprintf(line + n, sizeof(line) - n, members_fmt,
				       ap);
		va_end(ap);
	}
	/* cut, it would not be JSON: refuse it whole (the caller fails) */
	if (n > sizeof(line) - 3) {
		log_err("manifest.jsonl: a %s event of more than %zu bytes: not written",
			event, sizeof(line) - 3);
		return -EOVERFLOW;
	}
	line[n++] = '}';
	line[n++] = '\n';
	/*
	 * O_APPEND and one write; a short write (a full disk) is cut off
	 * again, so that a line is whole or absent.
	 */
	off = lseek(m->fd, 0, SEEK_END);
	w = write(m->fd, line, n);
	if (w == (ssize_t)n) {
		m->since += (off_t)n;
		if (m->reserve && m->since >= m->reserve / 4)
			manifest_reserve(m, m->reserve);
		return 0;
	}
	err = w < 0 ? -errno : -ENOSPC;
	if (w > 0 && off >= 0 && ftruncate(m->fd, off) < 0)
		err = -errno;
	if (!m->err)
		m->err = err;
	return err;
}

void json_escape(char *dst, size_t cap, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = 0;

	/* whole characters only: a cut never splits one */
	while (*s) {
		size_t u = bach_utf8_len((const char *)s);

		if (*s == '"' || *s == '\\') {
			if (n + 2 >= cap)
				break;
			dst[n++] = '\\';
			dst[n++] = (char)*s++;
		} else if (*s < 0x20 || (*s >= 0x80 && !u)) {
			/* control characters escaped; bytes that are not UTF-8
			 * become U+FFFD */
			if (n + 6 >= cap)
				break;
			n += (size_t)snprintf(dst + n, cap - n, "\\u%04x",
					      *s < 0x20 ? *s : 0xfffd);
			s++;
		} else {
			if (n + u >= cap)
				break;
			memcpy(dst + n, s, u);
			n += u;
			s += u;
		}
	}
	dst[n] = 0;
}

int manifest_reserve(struct manifest *m, off_t bytes)
{
	struct stat st;

	m->reserve = bytes;
	m->since = 0;
	if (fstat(m->fd, &st) < 0)
		return -errno;
	/* blocks past the end, used by later appends: room for the last lines
	 */
	if (fallocate(m->fd, FALLOC_FL_KEEP_SIZE, st.st_size, bytes) < 0)
		return -errno;
	return 0;
}

/*
 * The settings as members of the started event's "config", each named as
 * its key and valued as bach_opt_show() writes it: a number, true or
 * false, a string, or an array of the strings of a comma list. A value
 * that cannot be shown is null. Returns the length, or -EOVERFLOW when
 * they do not fit in cap.
 */
static int settings_json(char *buf, size_t cap, const struct bach_optdesc *d,
			 const void *obj)
{
	/* manifest_started()'s, and one capture opens at a time */
	static char text[8192], esc[6 * sizeof(text)];
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; d && d[i].key; i++) {
		int kind = bach_opt_show(&d[i], obj, text, sizeof(text));

		n += (size_t)snprintf(buf + n, cap - n, ",\"%s\":", d[i].key);
		if (n >= cap)
			return -EOVERFLOW;
		if (kind == BACH_JSON_NUMBER || kind == BACH_JSON_BOOL) {
			n += (size_t)snprintf(buf + n, cap - n, "%s", text);
		} else if (kind == BACH_JSON_STRING) {
			json_escape(esc, sizeof(esc), text);
			n += (size_t)snprintf(buf + n, cap - n, "\"%s\"", esc);
		} else if (kind == BACH_JSON_LIST) {
			char *t = text;
			bool more = *t;

			n += (size_t)snprintf(buf + n, cap - n, "[");
			while (more && n < cap) {
				char *end = t + strcspn(t, ",");

				more = *end == ',';
				*end = 0;
				json_escape(esc, sizeof(esc), t);
				n += (size_t)snprintf(
					buf + n, cap - n, "%s\"%s\"",
					t == text ? "" : ",", esc);
				t = end + 1;
			}
			if (n < cap)
				n += (size_t)snprintf(buf + n, cap - n, "]");
		} else {
			n += (size_t)snprintf(buf + n, cap - n, "null");
		}
		if (n >= cap)
			return -EOVERFLOW;
	}
	return (int)n;
}

int manifest_started(struct manifest *m, const struct manifest_started *s)
{
	char opts[8192];
	char k[256], v[1024], cfgp[4200], host[800], gw[200], abs[4200];
	char id[500];
	char labels[CAPTURE_MAX_LABELS * 1700];
	/* static, as settings_json()'s buffers */
	static char settings[MANIFEST_LINE_MAX];
	size_t n = 0, nl = 0;
	int err;

	opts[0] = 0;
	labels[0] = 0;
	for (size_t i = 0; i < s->nopts && n < sizeof(opts) - 1; i++) {
		json_escape(k, sizeof(k), s->opts[i].key);
		json_escape(v, sizeof(v), s->opts[i].value);
		n += (size_t)snprintf(opts + n, sizeof(opts) - n,
				      "%s\"%s\":\"%s\"", i ? "," : "", k, v);
	}
	err = settings_json(settings, sizeof(settings), s->settings,
			    s->settings_of);
	if (err < 0) {
		log_err("manifest.jsonl: the settings take more than %zu bytes: not written",
			sizeof(settings));
		return err;
	}
	json_escape(cfgp, sizeof(cfgp), s->config_file);
	json_escape(host, sizeof(host), s->host ? s->host : "");
	json_escape(gw, sizeof(gw), s->gateware ? s->gateware : "");
	json_escape(abs, sizeof(abs), s->config_abs ? s->config_abs : "");
	for (size_t i = 0; i < s->nlabels && nl < sizeof(labels) - 1; i++) {
		json_escape(k, sizeof(k), s->labels[i].key);
		json_escape(v, sizeof(v), s->labels[i].value);
		nl += (size_t)snprintf(labels + nl, sizeof(labels) - nl,
				       "%s\"%s\":\"%s\"", i ? "," : "", k, v);
	}
	json_escape(id, sizeof(id), s->capture ? s->capture : "");
	/* version 2: config's members are the settings' keys */
	return manifest_event(
		m, BACH_EV_STARTED,
		"\"version\":2,\"capture\":\"%s\",\"host\":\"%s\",\"bach_version\":\"%s\",\"gateware\":\"%s\",\"config_path\":\"%s\",\"labels\":{%s},%s%s%s\"driver\":\"%s\",\"options\":{%s},\"device\":{%s},\"config\":{\"file\":\"%s\"%s,\"io\":\"%s\"}",
		id, host, s->version ? s->version : "", gw, abs, labels,
		s->source ? "\"source\":{" : "", s->source ? s->source : "",
		s->source ? "}," : "", s->driver, opts, s->device, cfgp,
		settings, s->io);
}

int manifest_segment(struct manifest *m, const struct manifest_segment *s)
{
	char crc[32] = "", why[300] = "", cut[48] = "", err[256];
	char tm[400] = "";
	const struct bach_time_summary *ts = s->tsum;
	size_t n;

	if (!s->removed)
		snprintf(crc, sizeof(crc), ",\"crc32\":\"%08x\"", s->crc);
	if (s->error) {
		json_escape(err, sizeof(err), s->error);
		snprintf(why, sizeof(why), ",\"error\":\"%s\"", err);
	}
	if (s->timing) {
		n = (size_t)snprintf(tm, sizeof(tm),
				     ",\"timing\":\"%s\",\"clock_hz\":%llu",
				     s->timing, U(s->clock_hz));
		if (ts)
			n += (size_t)snprintf(
				tm + n, sizeof(tm) - n,
				",\"timing_bytes\":%llu,\"timing_crc32\":\"%08x\"",
				U(ts->bytes), ts->crc);
		/* JSON readers take integers up to 2^63 - 1 */
		if (ts && bach_time_summary_json(ts))
			snprintf(tm + n, sizeof(tm) - n,
				 ",\"first_clock\":%llu,\"last_clock\":%llu",
				 U(ts->first_clock), U(ts->last_clock));
	}
	if (s->error || s->recovered)
		snprintf(cut, sizeof(cut), ",\"cut_bytes\":%llu",
			 U(s->cut_bytes));
	return manifest_event(
		m, BACH_EV_SEGMENT,
		"\"name\":\"%s\",\"records\":%llu,\"gap_markers\":%llu,\"bytes\":%llu%s%s%s%s%s%s%s",
		s->name, U(s->records), U(s->gap_markers), U(s->bytes), crc, tm,
		why, s->recovered ? ",\"recovered\":true" : "",
		s->orphan ? ",\"orphan\":true" : "",
		s->removed ? ",\"removed\":true" : "", cut);
}

int manifest_gap(struct manifest *m, const char *seg, uint64_t at,
		 uint64_t lost, enum bach_gap_cause cause)
{
	return manifest_event(
		m, BACH_EV_GAP,
		"\"segment\":\"%s\",\"at\":%llu,\"lost\":%llu,\"cause\":\"%s\"",
		seg, U(at), U(lost), bach_gap_cause_name(cause));
}

int manifest_stall_ring(struct manifest *m, const char *seg, uint64_t at,
			uint64_t start_ns, uint64_t end_ns, uint64_t held_ns,
			uint64_t count, uint64_t cycles)
{
	return manifest_event(
		m, BACH_EV_STALL,
		"\"segment\":\"%s\",\"at\":%llu,\"source\":\"ring\",\"start_ns\":%llu,\"end_ns\":%llu,\"ns\":%llu,\"count\":%llu,\"cycles\":%llu",
		seg, U(at), U(start_ns), U(end_ns), U(held_ns), U(count),
		U(cycles));
}

int manifest_stall_board(struct manifest *m, const char *seg, uint64_t at,
			 uint64_t episodes, uint64_t cycles)
{
	return manifest_event(
		m, BACH_EV_STALL,
		"\"segment\":\"%s\",\"at\":%llu,\"source\":\"board\",\"episodes\":%llu,\"cycles\":%llu",
		seg, U(at), U(episodes), U(cycles));
}

int manifest_mark(struct manifest *m, const char *seg, uint64_t at,
		  uint64_t record, const char *source, const char *text,
		  bool replayed)
{
	static char esc[JSON_ESCAPED_MAX]; /* the writer thread's alone */
	char src[64] = "";

	if (*source)
		snprintf(src, sizeof(src), ",\"source\":\"%s\"", source);
	json_escape(esc, sizeof(esc), text);
	return manifest_event(
		m, BACH_EV_MARK,
		"\"segment\":\"%s\",\"at\":%llu,\"record\":%llu%s,\"text\":\"%s\"%s",
		seg, U(at), U(record), src, esc,
		replayed ? ",\"replayed\":true" : "");
}

int manifest_marker(struct manifest *m, const char *seg, uint64_t at,
		    uint64_t record, const char *rule, const uint8_t *rec,
		    uint64_t count, uint64_t last_at, bool replayed)
{
	char merged[80] = "";

	if (count > 1)
		snprintf(merged, sizeof(merged),
			 ",\"count\":%llu,\"last_at\":%llu", U(count),
			 U(last_at));
	return manifest_event(
		m, BACH_EV_MARK,
		"\"segment\":\"%s\",\"at\":%llu,\"record\":%llu,\"source\":\"marker\",\"rule\":\"%s\",\"address\":\"0x%08x\",\"be\":\"0x%02x\",\"type\":\"%s\"%s%s",
		seg, U(at), U(record), rule, bach_get_be32(rec), rec[4],
		bach_type_name(rec[5] >> 4), merged,
		replayed ? ",\"replayed\":true" : "");
}

int manifest_device(struct manifest *m, bool lost, const char *seg, uint64_t at)
{
	return manifest_event(m,
			      lost ? BACH_EV_DEVICE_LOST : BACH_EV_DEVICE_BACK,
			      "\"segment\":\"%s\",\"at\":%llu", seg, U(at));
}

size_t manifest_decode_json(char *buf, size_t cap,
			    const struct bach_busdec_stats *s)
{
	int n = snprintf(
		buf, cap,
		"{\"samples\":%llu,\"clocks\":%llu,\"cycles\":%llu,\"records\":%llu,\"off_bus\":%llu,\"off_bus_clocks\":%llu,\"backoffs\":%llu,\"aborted\":%llu,\"ken_uncached\":%llu,\"ken_unknown\":%llu,\"inquire_addr\":%llu,\"inquire_unsure\":%llu,\"boff_unsure\":%llu,\"stray_brdy\":%llu,\"overlapped\":%llu,\"unfinished\":%llu}",
		U(s->samples), U(s->clocks), U(s->cycles), U(s->records),
		U(s->off_bus), U(s->off_bus_clocks), U(s->backoffs),
		U(s->aborted), U(s->ken_uncached), U(s->ken_unknown),
		U(s->inquire_addr), U(s->inquire_unsure), U(s->boff_unsure),
		U(s->stray_brdy), U(s->overlapped), U(s->unfinished));

	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

int manifest_ended(struct manifest *m, const struct manifest_ended *e)
{
	char by[64] = "", board[64] = "", dec[768] = "";

	if (e->stopped_by)
		snprintf(by, sizeof(by), ",\"stopped_by\":\"%s\"",
			 e->stopped_by);
	if (e->have_board)
		snprintf(board, sizeof(board), ",\"board_off_bus\":%llu",
			 U(e->board_off_bus));
	if (e->decode) {
		memcpy(dec, ",\"decode\":", 10);
		manifest_decode_json(dec + 10, sizeof(dec) - 10, e->decode);
	}
	return manifest_event(
		m, BACH_EV_ENDED,
		"\"state\":\"%s\",\"produced\":%llu,\"written\":%llu,\"lost\":%llu,\"gap_markers\":%llu,\"segments\":%llu,\"bytes\":%llu,\"stalls\":%llu,\"board_stalls\":%llu%s%s%s",
		e->state, U(e->produced), U(e->written), U(e->lost),
		U(e->gap_markers), U(e->segments), U(e->bytes), U(e->stalls),
		U(e->board_stalls), board, by, dec);
}

int manifest_retention_segment(struct manifest *m, const char *name,
			       uint64_t bytes, const char *reason)
{
	return manifest_event(
		m, BACH_EV_RETENTION,
		"\"name\":\"%s\",\"bytes\":%llu,\"reason\":\"%s\"", name,
		U(bytes), reason);
}

int manifest_retention_capture(struct manifest *m, const char *capture,
			       uint64_t segments, uint64_t bytes,
			       const char *reason)
{
	char esc[256];

	json_escape(esc, sizeof(esc), capture);
	return manifest_event(
		m, BACH_EV_RETENTION,
		"\"capture\":\"%s\",\"segments\":%llu,\"bytes\":%llu,\"reason\":\"%s\"",
		esc, U(segments), U(bytes), reason);
}

int manifest_ended_recovered(struct manifest *m,
			     const struct manifest_recovered *r)
{
	return manifest_event(
		m, BACH_EV_ENDED,
		"\"state\":\"recovered\",\"segments_recovered\":%u,\"written\":%llu,\"lost\":%llu,\"gap_markers\":%llu,\"segments\":%llu,\"bytes\":%llu",
		r->segments_recovered, U(r->written), U(r->lost),
		U(r->gap_markers), U(r->segments), U(r->bytes));
}
