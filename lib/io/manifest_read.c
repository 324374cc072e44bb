// SPDX-License-Identifier: MIT
/* Reading manifest.jsonl (lib/io/manifest.h), one line at a time, with jansson.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bach/trace.h"
#include "lib/io/found.h"
#include "lib/io/manifest.h"
#include "lib/options.h"

/* Far more than a year of hourly segments with every event they can carry. */
#define MANIFEST_MAX_BYTES (1ull << 30)

struct ctx {
	const char *dir;
	uint64_t line;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int bad(struct ctx *x,
						     const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(x->err, x->errlen, "%s/%s: line %llu: ", x->dir,
		     BACH_MANIFEST_NAME, (unsigned long long)x->line);
	if (n >= 0 && (size_t)n < x->errlen) {
		va_start(ap, fmt);
		vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -BACH_EDATA;
}

/* An optional unsigned member: absent leaves *v alone. */
static int get_u64(struct ctx *x, json_t *o, const char *key, uint64_t *v)
{
	json_t *j = json_object_get(o, key);

	if (!j)
		return 0;
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return bad(x, "\"%s\" is not a count", key);
	*v = (uint64_t)json_integer_value(j);
	return 0;
}

/* An optional CRC-32, as 8 hex digits: absent leaves *has false. */
static int get_crc(struct ctx *x, json_t *o, const char *key, uint32_t *v,
		   bool *has)
{
	const char *crc = json_string_value(json_object_get(o, key));
	char *end;
	unsigned long n;

	*has = false;
	if (!crc)
		return 0;
	n = strtoul(crc, &end, 16);
	if (strlen(crc) != 8 || *end)
		return bad(x, "\"%s\" is not 8 hex digits", key);
	*v = (uint32_t)n;
	*has = true;
	return 0;
}

static bool get_true(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static int add_segment(struct ctx *x, struct bach_manifest *m, json_t *o)
{
	struct bach_manifest_seg *s;
	const char *name = json_string_value(json_object_get(o, "name"));
	const char *tname = json_string_value(json_object_get(o, "timing"));
	json_t *first = json_object_get(o, "first_clock");
	int err;

	if (!name || !*name || strlen(name) >= sizeof(s->name) ||
	    strchr(name, '/'))
		return bad(x, "segment event without a proper \"name\"");
	if (!(m->nsegs & (m->nsegs + 1))) { /* 0, 1, 3, 7, ...: grow */
		size_t cap = (m->nsegs + 1) * 2;

		s = realloc(m->segs, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		m->segs = s;
	}
	s = &m->segs[m->nsegs];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->line = x->line;
	if ((err = get_u64(x, o, "records", &s->records)) ||
	    (err = get_u64(x, o, "gap_markers", &s->gap_markers)) ||
	    (err = get_u64(x, o, "bytes", &s->bytes)) ||
	    (err = get_crc(x, o, "crc32", &s->crc, &s->has_crc)))
		return err;
	if (tname) {
		if (!*tname || strlen(tname) >= sizeof(s->timing) ||
		    strchr(tname, '/'))
			return bad(x,
				   "segment %s: \"timing\" is not a file name",
				   name);
		snprintf(s->timing, sizeof(s->timing), "%s", tname);
		if ((err = get_u64(x, o, "timing_bytes", &s->timing_bytes)) ||
		    (err = get_crc(x, o, "timing_crc32", &s->timing_crc,
				   &s->has_timing_crc)) ||
		    (err = get_u64(x, o, "first_clock", &s->first_clock)) ||
		    (err = get_u64(x, o, "last_clock", &s->last_clock)))
			return err;
		s->has_clocks = first != NULL;
		if (s->has_clocks != (json_object_get(o, "last_clock") != NULL))
			return bad(
				x,
				"segment %s: \"first_clock\" without \"last_clock\" or the other way round",
				name);
	}
	s->recovered = get_true(o, "recovered");
	s->orphan = get_true(o, "orphan");
	s->removed = get_true(o, "removed");
	s->error = json_object_get(o, "error") != NULL;
	if (!s->removed && !s->has_crc) {
		char esc[200];

		return bad(x, "segment %s has no \"crc32\"",
			   bach_escape_ctl(esc, sizeof(esc), name));
	}
	m->nsegs++;
	return 0;
}

/* A "mark" event, kept for selection (bach dump --between) and bach ls. */
static int add_mark(struct ctx *x, struct bach_manifest *m, json_t *o)
{
	struct bach_manifest_mark *k;
	const char *src = json_string_value(json_object_get(o, "source"));
	const char *text = json_string_value(json_object_get(o, "text"));
	int err;

	if (!(m->nmarks & (m->nmarks + 1))) {
		k = realloc(m->marks, (m->nmarks + 1) * 2 * sizeof(*k));
		if (!k)
			return -ENOMEM;
		m->marks = k;
	}
	k = &m->marks[m->nmarks];
	memset(k, 0, sizeof(*k));
	k->line = x->line;
	k->count = 1;
	snprintf(k->source, sizeof(k->source), "%s", src ? src : "");
	if ((err = get_u64(x, o, "at", &k->at)) ||
	    (err = get_u64(x, o, "record", &k->record)) ||
	    (err = get_u64(x, o, "count", &k->count)))
		return err;
	if (src && !strcmp(src, "marker")) {
		const char *a =
			json_string_value(json_object_get(o, "address"));
		const char *b = json_string_value(json_object_get(o, "be"));
		char *e1 = NULL, *e2 = NULL;
		unsigned long av = a ? strtoul(a, &e1, 16) : 0;
		unsigned long bv = b ? strtoul(b, &e2, 16) : 0;

		if (!a || !b || *e1 || *e2 || av > UINT32_MAX || bv > 0xff)
			return bad(
				x,
				"marker event without a proper \"address\" and \"be\"");
		k->marker = true;
		k->address = (uint32_t)av;
		k->be = (uint8_t)bv;
	} else if (text) {
		k->text = strdup(text);
		if (!k->text)
			return -ENOMEM;
	}
	m->nmarks++;
	return 0;
}

static void copy_str(char *dst, size_t cap, json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	snprintf(dst, cap, "%s", v ? v : "");
}

static uint64_t num(json_t *o, const char *key)
{
	json_t *j = json_object_get(o, key);

	return json_is_integer(j) && json_integer_value(j) > 0
		       ? (uint64_t)json_integer_value(j)
		       : 0;
}

/* The event for the timeline; types were checked where they matter. */
static int add_event(struct ctx *x, struct bach_manifest *m, json_t *o,
		     const char *ev, enum bach_manifest_ev kind)
{
	struct bach_manifest_event *e;
	json_t *at = json_object_get(o, "at");

	if (m->nevents % 256 == 0) {
		e = realloc(m->events, (m->nevents + 256) * sizeof(*e));
		if (!e)
			return -ENOMEM;
		m->events = e;
	}
	e = &m->events[m->nevents++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	snprintf(e->name, sizeof(e->name), "%s", ev);
	e->name_cut = strlen(ev) >= sizeof(e->name);
	copy_str(e->time, sizeof(e->time), o, "time");
	copy_str(e->segment, sizeof(e->segment), o, "segment");
	e->line = x->line;
	if (at && (!json_is_integer(at) || json_integer_value(at) < 0))
		return bad(x, "\"at\" is not a record index");
	e->has_at = at != NULL;
	e->at = num(o, "at");
	switch (e->kind) {
	case BACH_EV_STARTED:
		copy_str(e->detail, sizeof(e->detail), o, "driver");
		break;
	case BACH_EV_SEGMENT:
		copy_str(e->detail, sizeof(e->detail), o, "name");
		e->count = num(o, "records");
		break;
	case BACH_EV_GAP:
		copy_str(e->detail, sizeof(e->detail), o, "cause");
		e->count = num(o, "lost");
		break;
	case BACH_EV_STALL:
		copy_str(e->detail, sizeof(e->detail), o, "source");
		e->count = num(o, "count") + num(o, "episodes");
		break;
	case BACH_EV_MARK:
		copy_str(e->detail, sizeof(e->detail), o, "text");
		break;
	case BACH_EV_ENDED:
		copy_str(e->detail, sizeof(e->detail), o, "state");
		break;
	default:
		break;
	}
	return 0;
}

static int add_gap(struct ctx *x, struct bach_manifest *m, json_t *o)
{
	const char *cause = json_string_value(json_object_get(o, "cause"));
	const char *seg = json_string_value(json_object_get(o, "segment"));
	struct bach_gap *g;
	int err;

	if (!(m->gaps & (m->gaps + 1))) { /* 0, 1, 3, 7, ...: grow */
		g = realloc(m->gap_list, (m->gaps + 1) * 2 * sizeof(*g));
		if (!g)
			return -ENOMEM;
		m->gap_list = g;
	}
	g = &m->gap_list[m->gaps];
	memset(g, 0, sizeof(*g));
	if ((err = get_u64(x, o, "at", &g->at)) ||
	    (err = get_u64(x, o, "lost", &g->lost)))
		return err;
	snprintf(g->cause, sizeof(g->cause), "%s", cause ? cause : "");
	snprintf(g->segment, sizeof(g->segment), "%s", seg ? seg : "");
	return 0;
}

static void take_started(struct bach_manifest *m, json_t *o)
{
	json_t *labels = json_object_get(o, "labels"), *v;
	const char *key;

	m->started = true;
	copy_str(m->start_time, sizeof(m->start_time), o, "time");
	copy_str(m->host, sizeof(m->host), o, "host");
	json_object_foreach(labels, key, v)
	{
		if (m->nlabels == BACH_MANIFEST_MAX_LABELS ||
		    !json_is_string(v))
			continue;
		snprintf(m->labels[m->nlabels].key,
			 sizeof(m->labels[m->nlabels].key), "%s", key);
		snprintf(m->labels[m->nlabels].value,
			 sizeof(m->labels[m->nlabels].value), "%s",
			 json_string_value(v));
		m->nlabels++;
	}
}

static int take_line(struct ctx *x, struct bach_manifest *m, const char *p,
		     size_t len)
{
	json_error_t je;
	json_t *o = json_loadb(p, len, JSON_REJECT_DUPLICATES, &je);
	const char *ev;
	enum bach_manifest_ev kind;
	int err = 0;

	if (!o)
		return bad(x, "not JSON: %s (column %d)", je.text, je.column);
	ev = json_string_value(json_object_get(o, "event"));
	if (!json_is_object(o) || !ev) {
		err = bad(x, "not an event (a JSON object with \"event\")");
		goto out;
	}
	kind = bach_manifest_ev_kind(ev);
	err = add_event(x, m, o, ev, kind);
	if (err)
		goto out;
	/* no default: the compiler names a kind left out (-Wswitch) */
	switch (kind) {
	case BACH_EV_STARTED: {
		json_t *v = json_object_get(o, "version");

		m->started = true;
		if (json_is_integer(v))
			snprintf(m->version, sizeof(m->version), "%lld",
				 (long long)json_integer_value(v));
		take_started(m, o);
		break;
	}
	case BACH_EV_MARK:
		err = add_mark(x, m, o);
		break;
	case BACH_EV_SEGMENT:
		err = add_segment(x, m, o);
		break;
	case BACH_EV_GAP: {
		uint64_t lost = 0;

		err = get_u64(x, o, "lost", &lost);
		if (!err)
			err = add_gap(x, m, o);
		if (!err) { /* gap_list holds gaps entries */
			m->gaps++;
			m->gap_lost += lost;
		}
		break;
	}
	case BACH_EV_RETENTION: {
		/* a segment of this capture (a whole capture is named by
		 * "capture" in another one's manifest: nothing to do here) */
		const char *name =
			json_string_value(json_object_get(o, "name"));
		struct bach_manifest_seg *s = NULL;

		for (size_t i = 0; name && i < m->nsegs; i++)
			if (!strcmp(m->segs[i].name, name))
				s = &m->segs[i];
		if (s && !s->retained) {
			s->retained = true;
			m->retained++;
			m->retained_records += s->records - s->gap_markers;
		}
		break;
	}
	case BACH_EV_ENDED: {
		const char *st = json_string_value(json_object_get(o, "state"));

		m->ended = true;
		snprintf(m->state, sizeof(m->state), "%s", st ? st : "");
		copy_str(m->end_time, sizeof(m->end_time), o, "time");
		m->has_totals = json_object_get(o, "lost") != NULL;
		if (!err)
			err = get_u64(x, o, "produced", &m->produced);
		if (!err)
			err = get_u64(x, o, "written", &m->written);
		if (!err)
			err = get_u64(x, o, "lost", &m->lost);
		if (!err)
			err = get_u64(x, o, "segments", &m->segments);
		break;
	}
	case BACH_EV_STALL:
	case BACH_EV_DEVICE_LOST:
	case BACH_EV_DEVICE_BACK:
		break; /* in the timeline (add_event) alone */
	case BACH_EV_OTHER:
		break; /* read past (docs/formats.md section 4) */
	}
out:
	json_decref(o);
	return err;
}

int bach_manifest_load(int dirfd, const char *dir, struct bach_manifest *m,
		       char *err, size_t errlen)
{
	struct ctx x = { dir, 0, err, errlen };
	char path[4200];
	struct stat st;
	char *buf = NULL;
	size_t have = 0;
	int fd, rc = 0;

	memset(m, 0, sizeof(*m));
	if (errlen)
		err[0] = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, BACH_MANIFEST_NAME);
	fd = bach_open_found(dirfd, BACH_MANIFEST_NAME, path, true, &st, err,
			     errlen);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > MANIFEST_MAX_BYTES) {
		rc = -EFBIG;
		snprintf(err, errlen, "%s: larger than 1 GiB", path);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	while (have < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + have, (size_t)st.st_size - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s/%s: %s", dir,
				 BACH_MANIFEST_NAME, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	for (size_t at = 0; at < have && !rc;) {
		char *nl = memchr(buf + at, '\n', have - at);

		x.line++;
		if (!nl) { /* a crash cut the last line */
			m->partial_tail = true;
			break;
		}
		rc = take_line(&x, m, buf + at, (size_t)(nl - (buf + at)));
		at = (size_t)(nl - buf) + 1;
		m->lines++;
		m->whole_bytes = at;
	}
out:
	free(buf);
	close(fd);
	if (rc) { /* nothing half-read is handed back: callers need not free */
		bach_manifest_free(m);
		memset(m, 0, sizeof(*m));
	}
	return rc;
}

void bach_manifest_free(struct bach_manifest *m)
{
	free(m->segs);
	free(m->gap_list);
	m->segs = NULL;
	m->gap_list = NULL;
	m->nsegs = 0;
	free(m->events);
	m->events = NULL;
	m->nevents = 0;
	for (size_t i = 0; i < m->nmarks; i++)
		free(m->marks[i].text);
	free(m->marks);
	m->marks = NULL;
	m->nmarks = 0;
}

ssize_t bach_capture_gaps(const char *dir, struct bach_gap **gaps, char *msg,
			  size_t len)
{
	struct bach_manifest m;
	int dfd, err;

	*gaps = NULL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = -errno;
		snprintf(msg, len, "%s: %s", dir, strerror(errno));
		return err;
	}
	err = bach_manifest_load(dfd, dir, &m, msg, len);
	close(dfd);
	if (err == -ENOMEM)
		snprintf(msg, len, "%s/%s: out of memory", dir,
			 BACH_MANIFEST_NAME);
	if (err) {
		bach_manifest_free(&m);
		return err;
	}
	*gaps = m.gap_list;
	m.gap_list = NULL;
	bach_manifest_free(&m);
	return (ssize_t)m.gaps;
}

double bach_manifest_time(const char *iso)
{
	struct tm tm = { 0 };
	unsigned ms = 0;
	char z = 0;
	int n = sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d.%3u%c", &tm.tm_year,
		       &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		       &tm.tm_sec, &ms, &z);

	if (n != 8 || z != 'Z')
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + ms / 1000.0;
}

const struct bach_manifest_seg *
bach_manifest_find_seg(const struct bach_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nsegs; i++)
		if (!strcmp(m->segs[i].name, name))
			return &m->segs[i];
	return NULL;
}
