// SPDX-License-Identifier: MIT
/*
 * replay: a recorded capture through the whole pipeline again. The input is
 * a trace (.byu, .byu.gz, a capture directory) delivered as records, a
 * raw board stream dump (a file that starts with the frame magic), fed to
 * the frame parser exactly as the USB driver would feed it, or a logic
 * analyzer's capture (.sr, .vcd, .csv, ... as bach decode reads them)
 * through the bus decoder. A trace with timing sidecars (docs/formats.md
 * 3.2) carries its clocks into the capture, and can be paced by them. A
 * capture directory carries its provenance too: its manifest's marks and
 * gaps at the same positions, its labels, and where it came from.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyzer/la.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "board_model.h"
#include "drivers/driver.h"
#include "lib/bus/frame.h"
#include "lib/io/manifest.h"
#include "lib/io/outfile.h"
#include "lib/io/timing.h"

#define CHUNK (256u << 10)

struct replay {
	const char *path; /* the options' strings: the core's */
	uint64_t rate;	  /* records/s (frames: bytes/6 per s); 0: max */
	bool loop;
	bool frames;		  /* a board stream dump */
	bool analyzer;		  /* a logic-analyzer capture */
	const char *map, *format; /* the analyzer's channel map and format */
	bool edge;
	const char *input[16]; /* its input module's options, K=V */
	size_t ninput;
	struct bach_source *src;
	bool original;	   /* pace by the frames' board timestamps */
	uint64_t clock_hz; /* the board clock those timestamps count */
	bool hz_given;	   /* clock_hz= was given */
	/* a trace's timing sidecars, read with its records
	 * (bach_reader_times) */
	bool timed;
	char sidecar[4096]; /* the first one's name */
	uint64_t trace_hz;  /* their clock rate (0: unknown) */
	uint64_t pace_hz;   /* pace=original: clock_hz=, else trace_hz */
	bool have_clk0;
	uint64_t clk0, pass_t0; /* pace=original of a trace: this pass's */
	bool have_ts0;
	uint64_t ts0; /* timestamp of the first data frame */
	uint64_t t0;  /* when the replay began (bach_now_ns) */
	atomic_bool stop;
	uint64_t records; /* records delivered (done paces frames by
			     bytes) */
	uint8_t *buf;
	/*
	 * A capture directory's manifest (provenance()): its gaps and marks
	 * in trace order, positions less base (the records of the segments
	 * retention removed, which the trace read lacks); the manifest holds
	 * the marks' strings until close().
	 */
	struct bach_manifest man;
	struct replay_gap {
		uint64_t at, lost;
		enum bach_gap_cause cause;
		size_t seq; /* its place in the manifest */
	} * gaps;
	struct replay_mark {
		uint64_t at;
		struct bach_source_mark m;
	} * marks;
	size_t ngaps, nmarks;
	/* this pass: the trace position read up to, the next gap and mark,
	 * the records lost at the gap just given whose gap markers are yet
	 * to be passed over */
	uint64_t pos, skip;
	size_t gi, mi;
};

enum {
	OPT_PATH,
	OPT_RATE,
	OPT_PACE,
	OPT_CLOCK_HZ,
	OPT_LOOP,
	OPT_MAP,
	OPT_FORMAT,
	OPT_INPUT,
	OPT_EDGE
};

static const char *const paces[] = { "original", NULL };

static const struct bach_optdesc replay_options[] = {
	[OPT_PATH] = { .key = "path",
		       .type = BACH_OPT_STRING,
		       .arg = "FILE",
		       .required = true,
		       .help = ".byu, .byu.gz, capture directory, raw board stream dump, or a logic-analyzer capture (.sr .vcd .csv ...)" },
	[OPT_RATE] = { .key = "rate",
		       .type = BACH_OPT_UINT,
		       .arg = "R",
		       .def = "0",
		       .help = "records per second (a board stream: bytes/6 per second), 0 for as fast as possible" },
	[OPT_PACE] = { .key = "pace",
		       .type = BACH_OPT_ENUM,
		       .names = paces,
		       .def_help = "off",
		       .hint = "rate=R sets a rate",
		       .help = "at the pace the board's clocks give: a board stream dump's frame timestamps, a trace's timing sidecars" },
	[OPT_CLOCK_HZ] = { .key = "clock_hz",
			   .type = BACH_OPT_UINT,
			   .arg = "N",
			   .min = 1,
			   .def_help = BOARD_CLOCK_TEXT
			   " (the fake board's) for a board stream, a trace's sidecar's own",
			   .help = "the board clock those timestamps count (for a trace: pace=original by it instead of its sidecar's rate)" },
	[OPT_LOOP] = { .key = "loop",
		       .type = BACH_OPT_BOOL,
		       .def = "0",
		       .help = "start again at the end, until stopped" },
	[OPT_MAP] = { .key = "map",
		      .type = BACH_OPT_STRING,
		      .arg = "FILE",
		      .def_help = "channels by their default names",
		      .help = "an analyzer capture's channel map (as bach decode --map)" },
	[OPT_FORMAT] = { .key = "format",
			 .type = BACH_OPT_STRING,
			 .arg = "NAME",
			 .def_help = "from the extension",
			 .help = "its libsigrok input format (as bach decode --format)" },
	[OPT_INPUT] = { .key = "input",
			.type = BACH_OPT_LIST,
			.arg = "K=V",
			.max = 16,
			.help = "an option of that input format (as bach decode --option)" },
	[OPT_EDGE] = { .key = "edge",
		       .type = BACH_OPT_BOOL,
		       .def = "0",
		       .help = "a cycle opens where ads_n falls (as bach decode --edge)" },
	{ 0 },
};

/*
 * A trace's timing: when its (first) file has a sidecar, the clocks go
 * with the records, and their rate is the sidecar's (BT), else
 * clock_hz=. pace=original without a sidecar, or without a known rate,
 * is refused, naming the sidecar.
 */
static int trace_timing(struct bach_source *src, struct replay *r)
{
	char **paths = NULL;
	const char *first = r->path;
	const uint64_t *clk;
	struct stat st;
	ssize_t n = 0;
	int err = 0;

	if (stat(r->path, &st) == 0 && S_ISDIR(st.st_mode)) {
		n = bach_capture_segments(r->path, &paths, NULL);
		if (n > 0)
			first = paths[0];
	}
	if (bach_time_name(r->sidecar, sizeof(r->sidecar), first))
		r->sidecar[0] = 0;
	if (n >= 0 && bach_times_present(first)) {
		struct bach_times *t = bach_times_new();

		r->timed = true;
		if (!t)
			err = -ENOMEM;
		/* the rate is in the first member */
		else if ((err = bach_times_get(t, first, 0, 1, &clk)) == 0)
			r->trace_hz = bach_times_clock_hz(t);
		/* pace=original needs it: say why it cannot be had (a FIFO
		 * of that name, say); else reading the records says so */
		else if (r->original)
			err = bach_source_error(src, err, "%s",
						bach_times_strerror(t));
		else
			err = 0;
		bach_times_free(t);
	}
	for (ssize_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (r->timed && !r->trace_hz && r->hz_given)
		r->trace_hz = r->clock_hz;
	r->pace_hz = r->hz_given ? r->clock_hz : r->trace_hz;
	if (err || !r->original)
		return err;
	if (!r->timed)
		return bach_source_error(
			src, -EINVAL,
			"%s: pace=original needs the trace's timing sidecar %s, which is missing (docs/formats.md 3.2): use rate=R",
			r->path, r->sidecar[0] ? r->sidecar : "(none)");
	if (!r->pace_hz)
		return bach_source_error(
			src, -EINVAL,
			"%s: the clock rate is unknown (0 in its BT subfield): pace=original needs clock_hz=N",
			r->sidecar);
	return 0;
}

/* by position, then by manifest line (as --between walks them) */
static int mark_order(const void *x, const void *y)
{
	const struct bach_manifest_mark *a = *(const void *const *)x;
	const struct bach_manifest_mark *b = *(const void *const *)y;

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* by position, then in the manifest's order */
static int gap_order(const void *x, const void *y)
{
	const struct replay_gap *a = x, *b = y;

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The gaps of r->man to replay, from base on, in trace order. */
static int take_gaps(struct bach_source *src, struct replay *r, uint64_t base)
{
	const struct bach_manifest *m = &r->man;

	r->gaps = calloc(m->gaps + 1, sizeof(*r->gaps));
	if (!r->gaps)
		return -ENOMEM;
	for (uint64_t i = 0; i < m->gaps; i++) {
		const struct bach_gap *g = &m->gap_list[i];
		unsigned c = 0;

		while (c < BACH_GAP_NCAUSES &&
		       strcmp(g->cause, bach_gap_cause_name(c)))
			c++;
		if (c == BACH_GAP_NCAUSES)
			return bach_source_error(
				src, -EINVAL,
				"%s/%s: the gap at record %llu has cause \"%.16s\", which this bach does not know: it cannot be replayed as one",
				r->path, BACH_MANIFEST_NAME,
				(unsigned long long)g->at, g->cause);
		if (g->at < base) /* in a segment retention removed */
			continue;
		r->gaps[r->ngaps] = (struct replay_gap){ .at = g->at - base,
							 .lost = g->lost,
							 .cause = c,
							 .seq = r->ngaps };
		r->ngaps++;
	}
	/* the manifest's order is the trace's but for the gaps a failed
	 * write put at its end: sorted, equal ones as they were */
	for (size_t i = 1; i < r->ngaps; i++)
		if (r->gaps[i].at < r->gaps[i - 1].at) {
			qsort(r->gaps, r->ngaps, sizeof(*r->gaps), gap_order);
			break;
		}
	return 0;
}

/* The marks of r->man to replay, from base on, in trace order. */
static int take_marks(struct bach_source *src, struct replay *r, uint64_t base)
{
	struct bach_manifest *m = &r->man;
	const struct bach_manifest_mark **order;

	order = calloc(m->nmarks + 1, sizeof(*order));
	r->marks = calloc(m->nmarks + 1, sizeof(*r->marks));
	if (!order || !r->marks) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nmarks; i++)
		order[i] = &m->marks[i];
	qsort(order, m->nmarks, sizeof(*order), mark_order);
	for (size_t i = 0; i < m->nmarks; i++) {
		const struct bach_manifest_mark *k = order[i];
		struct replay_mark *x = &r->marks[r->nmarks];
		int type = k->marker ? bach_type_parse(k->type) : 0;

		if (k->at < base || (!k->marker && !k->text))
			continue;
		if (type < 0) {
			bach_source_warn(
				src,
				"%s/%s: line %llu: a marker without a proper \"type\": not replayed",
				r->path, BACH_MANIFEST_NAME,
				(unsigned long long)k->line);
			continue;
		}
		x->at = k->at - base;
		x->m.source = k->source;
		x->m.text = k->text;
		if (k->marker) {
			x->m.rule = k->rule;
			bach_rec_put(x->m.rec, k->address, k->be,
				     (uint8_t)(type << 4));
			x->m.count = k->count;
			x->m.last_off =
				k->last_at > k->at ? k->last_at - k->at : 0;
		}
		r->nmarks++;
	}
	free(order);
	return 0;
}

/*
 * "key":"value", both escaped, onto the n bytes of json (a comma first
 * unless it opens an object). json is sized for every member (origin()).
 */
static void json_member(char *json, size_t cap, size_t *n, const char *key,
			const char *value)
{
	const char *s[2] = { key, value };

	if (*n && json[*n - 1] != '{')
		json[(*n)++] = ',';
	for (int i = 0; i < 2; i++) {
		json[(*n)++] = '"';
		bach_json_escape(json + *n, cap - *n - 4, s[i]);
		*n += strlen(json + *n);
		json[(*n)++] = '"';
		if (!i)
			json[(*n)++] = ':';
	}
	json[*n] = 0;
}

/*
 * The started event's "source" object: the capture's id (its manifest's,
 * else its directory's name), absolute path, bach version, gateware,
 * host, start time, driver and labels.
 */
static int origin(struct bach_source *src, struct replay *r)
{
	const struct bach_manifest *m = &r->man;
	struct bach_label labels[BACH_MANIFEST_MAX_LABELS];
	char abs[PATH_MAX], base[PATH_MAX], *json;
	/* every member escaped at 6 bytes a byte still fits */
	size_t cap = 1 << 16, n = 0;

	if (!realpath(r->path, abs))
		return bach_source_error(src, -errno, "%s: %s", r->path,
					 strerror(errno));
	snprintf(base, sizeof(base), "%s", abs);
	json = malloc(cap);
	if (!json)
		return -ENOMEM;
	json_member(json, cap, &n, "capture",
		    m->capture[0] ? m->capture : basename(base));
	json_member(json, cap, &n, "path", abs);
	json_member(json, cap, &n, "bach_version", m->bach_version);
	json_member(json, cap, &n, "gateware", m->gateware);
	json_member(json, cap, &n, "host", m->host);
	json_member(json, cap, &n, "start_time", m->start_time);
	json_member(json, cap, &n, "driver", m->driver);
	n += (size_t)snprintf(json + n, cap - n, ",\"labels\":{");
	for (size_t i = 0; i < m->nlabels; i++) {
		json_member(json, cap, &n, m->labels[i].key,
			    m->labels[i].value);
		labels[i] = (struct bach_label){ m->labels[i].key,
						 m->labels[i].value };
	}
	snprintf(json + n, cap - n, "}");
	bach_source_origin(src, json, labels, m->nlabels);
	free(json);
	return 0;
}

/*
 * A capture directory's provenance, from its manifest: what it carries
 * into the new capture (docs/bachd.md section 3, replay). A directory
 * without a manifest carries nothing (a warning); a manifest that cannot
 * be read refuses the replay, naming its line.
 */
static int provenance(struct bach_source *src, struct replay *r)
{
	char err[1024];
	uint64_t base = 0;
	int fd = open(r->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return bach_source_error(src, -errno, "%s: %s", r->path,
					 strerror(errno));
	rc = bach_manifest_load(fd, r->path, &r->man, err, sizeof(err));
	close(fd);
	if (rc == -ENOENT) {
		bach_source_warn(
			src,
			"%s: no %s: replayed without its marks, gaps and labels",
			r->path, BACH_MANIFEST_NAME);
		return 0;
	}
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return bach_source_error(
			src, rc,
			"%s (a replay carries the capture's marks, gaps and labels from it; replay its segment files to go without)",
			err);
	/* retention removes the oldest segments: the trace read starts later */
	for (size_t i = 0; i < r->man.nsegs; i++)
		if (r->man.segs[i].retained)
			base += r->man.segs[i].records;
	if ((rc = take_gaps(src, r, base)) || (rc = take_marks(src, r, base)))
		return rc;
	return origin(src, r);
}

static int replay_open(struct bach_source *src, void *priv,
		       const struct bach_optval *opts)
{
	struct replay *r = priv;
	char head[4] = { 0 }, ident[1200], esc[1024];
	struct stat st;
	int fd, k;

	r->path = opts[OPT_PATH].s;
	r->rate = opts[OPT_RATE].u;
	r->original = opts[OPT_PACE].set;
	r->hz_given = opts[OPT_CLOCK_HZ].set;
	r->clock_hz = r->hz_given ? opts[OPT_CLOCK_HZ].u : BOARD_CLOCK_HZ;
	r->loop = opts[OPT_LOOP].u;
	r->map = opts[OPT_MAP].s;
	r->format = opts[OPT_FORMAT].s;
	for (size_t i = 0; i < opts[OPT_INPUT].n; i++)
		r->input[i] = opts[OPT_INPUT].list[i];
	r->ninput = opts[OPT_INPUT].n;
	r->edge = opts[OPT_EDGE].u;
	r->buf = malloc(CHUNK);
	if (!r->buf)
		return -ENOMEM;
	/*
	 * O_NONBLOCK: a FIFO with no writer would block open() where no
	 * signal reaches it; a FIFO, a device or a socket is refused (replay
	 * reads the file more than once, and from /dev/zero for ever).
	 */
	fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return bach_source_error(src, -errno, "%s: %s", r->path,
					 strerror(errno));
	if (fstat(fd, &st) < 0 ||
	    (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
		close(fd);
		return bach_source_error(
			src, -EINVAL,
			"%s: not a regular file or a capture directory (%s)",
			r->path, bach_file_type(st.st_mode));
	}
	if (S_ISREG(st.st_mode))
		r->frames = read(fd, head, 4) == 4 &&
			    !memcmp(head, BACH_FRAME_MAGIC, 4);
	close(fd);
	r->analyzer = !r->frames &&
		      (r->format || r->map || bach_la_is_capture(r->path));
	if (r->original && r->analyzer)
		return bach_source_error(
			src, -EINVAL,
			"%s: pace=original needs a board stream dump or a trace with timing sidecars; an analyzer capture has no board clocks: use rate=R",
			r->path);
	if (!r->frames && !r->analyzer) {
		int err = trace_timing(src, r);

		if (!err && S_ISDIR(st.st_mode))
			err = provenance(src, r);
		if (err)
			return err;
	}
	bach_json_escape(esc, sizeof(esc), r->path);
	k = snprintf(ident, sizeof(ident),
		     "\"name\":\"replay\",\"path\":\"%s\",\"input\":\"%s\"",
		     esc,
		     r->frames	   ? "board stream"
		     : r->analyzer ? "analyzer capture"
				   : "trace");
	/* the replayed sidecars get the same rate (bach_source_identity) */
	if (r->timed && r->trace_hz && k > 0 && (size_t)k < sizeof(ident))
		snprintf(ident + k, sizeof(ident) - (size_t)k,
			 ",\"timing\":true,\"clock_hz\":%llu",
			 (unsigned long long)r->trace_hz);
	bach_source_identity(src, ident);
	return 0;
}

/* Sleep until done records are due at the set rate. */
static void pace(struct bach_source *src, struct replay *r, uint64_t t0,
		 uint64_t done)
{
	if (!r->rate)
		return;
	bach_source_flush(src);
	bach_sleep_until(t0 + done * 1000000000ull / r->rate, &r->stop);
}

/*
 * pace=original: each data frame the core's parser finds is held back
 * until its board timestamp comes round (struct bach_driver.frame, called
 * before the frame's records are delivered); what came before it goes to
 * the disk meanwhile.
 */
static void replay_frame(void *priv, const struct bach_frame *f)
{
	struct replay *r = priv;
	uint64_t d;

	if (!r->original || f->type != BACH_FT_DATA || atomic_load(&r->stop))
		return;
	if (!r->have_ts0) {
		r->ts0 = f->b;
		r->have_ts0 = true;
	}
	if (f->b < r->ts0)
		return;
	d = f->b - r->ts0;
	bach_source_flush(r->src);
	bach_sleep_until(r->t0 + d / r->clock_hz * 1000000000ull +
				 d % r->clock_hz * 1000000000ull / r->clock_hz,
			 &r->stop);
}

/*
 * A board stream dump read to its end. Records it held that nothing
 * counts are a source error, as a truncated .byu.gz is: a frame cut
 * short or bytes that are not frames at the end, or frames rejected after
 * the last data frame with no STATUS after them (a STATUS's records
 * sampled lets the capture count what went missing at the end). A stream
 * cut exactly between frames is only noticed by its missing LAST frame,
 * which a board that was lost never sent either: a warning.
 */
static int stream_end(struct bach_source *src, struct replay *r, uint64_t start)
{
	struct bach_parser_tail t;
	uint64_t good, data;

	bach_source_frames_tail(src, &t);
	good = t.good_end > start ? t.good_end - start : 0;
	data = t.data_end > start ? t.data_end - start : 0;
	if (start + good < t.bytes)
		return bach_source_error(
			src, -EBADMSG,
			"%s: byte %llu to the end (%llu bytes) is not a whole frame: the stream is truncated or damaged there",
			r->path, (unsigned long long)good,
			(unsigned long long)(t.bytes - start - good));
	if (t.last_type == BACH_FT_STATUS)
		return 0;
	if (t.damaged)
		return bach_source_error(
			src, -EBADMSG,
			"%s: frames rejected after byte %llu (the end of the last data frame) and no STATUS after them: the records they held cannot be counted",
			r->path, (unsigned long long)data);
	if (!t.last)
		bach_source_warn(
			src,
			"%s: the stream ends without the board's LAST frame or a STATUS: it may have been cut short between frames",
			r->path);
	return 0;
}

static int replay_frames(struct bach_source *src, struct replay *r, uint64_t t0,
			 uint64_t *done)
{
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);
	struct bach_parser_tail t;
	uint64_t start;
	ssize_t n = 0;

	if (fd < 0)
		return bach_source_error(src, -errno, "%s: %s", r->path,
					 strerror(errno));
	bach_source_frames_tail(src, &t);
	start = t.bytes; /* the parser's offset of this pass's byte 0 */
	r->records -= t.records;
	r->have_ts0 = false;
	r->src = src;
	r->t0 = t0;
	while (!atomic_load(&r->stop) && (n = read(fd, r->buf, CHUNK)) > 0) {
		bach_source_frames(src, r->buf, (size_t)n);
		*done += (uint64_t)n / BACH_REC_SIZE;
		if (!r->original)
			pace(src, r, t0, *done);
	}
	close(fd);
	bach_source_frames_tail(src, &t);
	r->records += t.records;
	if (n < 0)
		return bach_source_error(src, -errno, "%s: %s", r->path,
					 strerror(errno));
	if (atomic_load(&r->stop))
		return 0;
	return stream_end(src, r, start);
}

/*
 * pace=original of a trace: records up to the first whose clock is more
 * than 10 ms after clk[0] go together (a scan of the clocks, no call per
 * record), once clk[0] is due; records without a time go with the ones
 * before them. Returns how many of n to deliver now.
 */
static size_t pace_clocks(struct bach_source *src, struct replay *r,
			  const uint64_t *clk, size_t n)
{
	uint64_t c = BACH_TIME_NONE, d, span = r->pace_hz / 100;
	size_t i = 0, k;

	while (i < n && (c = clk[i]) == BACH_TIME_NONE)
		i++;
	if (c == BACH_TIME_NONE)
		return n;
	for (k = i + 1; k < n; k++)
		if (clk[k] != BACH_TIME_NONE && clk[k] - c > span)
			break;
	if (!r->have_clk0) {
		r->have_clk0 = true;
		r->clk0 = c;
		r->pass_t0 = bach_now_ns();
	}
	if (c > r->clk0) {
		d = c - r->clk0;
		bach_source_flush(src);
		bach_sleep_until(r->pass_t0 + d / r->pace_hz * 1000000000ull +
					 d % r->pace_hz * 1000000000ull /
						 r->pace_hz,
				 &r->stop);
	}
	return k;
}

/*
 * The clocks of the records the reader just gave (bach_reader_times():
 * whole members of the sidecar beside their file, no call per record), or
 * NULL. A file without one is replayed untimed, said once, unless
 * pace=original needs its clocks. After the last read (n == 0) it checks
 * that the last sidecar holds no more entries than its file's records.
 */
static int trace_clocks(struct bach_source *src, struct replay *r,
			struct bach_reader *rd, const uint64_t **clk)
{
	ssize_t err;

	*clk = NULL;
	if (!r->timed)
		return 0;
	err = bach_reader_times(rd, clk);
	if (err == -ENOENT && !r->original) {
		bach_source_warn(src, "%s: replayed without timing",
				 bach_reader_strerror(rd));
		r->timed = false;
		*clk = NULL;
		return 0;
	}
	if (err < 0)
		return bach_source_error(src, (int)err, "%s",
					 bach_reader_strerror(rd));
	return 0;
}

/* The position of the next mark or gap of this pass (UINT64_MAX: none). */
static uint64_t next_at(const struct replay *r)
{
	uint64_t m = r->mi < r->nmarks ? r->marks[r->mi].at : UINT64_MAX;
	uint64_t g = r->gi < r->ngaps ? r->gaps[r->gi].at : UINT64_MAX;

	return m < g ? m : g;
}

/*
 * What stands at the pass's position r->pos: its marks, then its first
 * gap, given to the core (which writes the gap's own markers); the gap's
 * markers in the trace read are passed over next (pass_markers()).
 * Returns how many of the k records that follow to deliver before the
 * next mark or gap: 0 after a gap.
 */
static size_t provenance_at(struct bach_source *src, struct replay *r, size_t k)
{
	uint64_t next;

	while (r->mi < r->nmarks && r->marks[r->mi].at <= r->pos)
		bach_source_mark(src, &r->marks[r->mi++].m);
	if (r->gi < r->ngaps && r->gaps[r->gi].at <= r->pos) {
		const struct replay_gap *g = &r->gaps[r->gi++];

		bach_source_gap(src, g->lost, g->cause);
		r->skip = g->lost;
		return 0;
	}
	next = next_at(r) - r->pos;
	return next < k ? (size_t)next : k;
}

/*
 * After a replayed gap: how many of the n records at p are its gap
 * markers (their counts adding up to the records it lost), counted into
 * the pass's position. None when the source wrote none (gap_markers off).
 */
static size_t pass_markers(struct replay *r, const uint8_t *p, size_t n)
{
	size_t k = 0;

	for (; r->skip && k < n && bach_rec_is_gap(p);
	     k++, p += BACH_REC_SIZE) {
		uint64_t c = bach_get_be32(p);

		r->skip -= c < r->skip ? c : r->skip;
	}
	if (k < n)
		r->skip = 0; /* a record that is not one: no more of them */
	r->pos += k;
	return k;
}

static int replay_trace(struct bach_source *src, struct replay *r, uint64_t t0,
			uint64_t *done)
{
	struct bach_reader *rd = bach_reader_new();
	const uint64_t *clk;
	const uint8_t *p;
	ssize_t n = 0;
	int err;

	if (!rd)
		return -ENOMEM;
	err = bach_reader_add(rd, r->path);
	if (err) {
		err = bach_source_error(src, err, "%s",
					bach_reader_strerror(rd));
		bach_reader_free(rd);
		return err;
	}
	r->have_clk0 = false;
	r->pos = r->skip = 0;
	r->gi = r->mi = 0;
	while (!atomic_load(&r->stop) && (n = bach_reader_read(rd, &p)) > 0) {
		err = trace_clocks(src, r, rd, &clk);
		if (err)
			break;
		/* in slices, so that pacing and stop stay responsive */
		while (n > 0 && !atomic_load(&r->stop)) {
			size_t k = pass_markers(r, p, (size_t)n);

			if (k) { /* a replayed gap's markers: the core's now */
				p += k * BACH_REC_SIZE;
				clk = clk ? clk + k : NULL;
				n -= (ssize_t)k;
				continue;
			}
			k = provenance_at(src, r,
					  n > 16384 ? 16384 : (size_t)n);
			if (!k)
				continue;
			if (r->original && clk)
				k = pace_clocks(src, r, clk, k);
			bach_source_timed_records(src, p, clk, k);
			p += k * BACH_REC_SIZE;
			clk = clk ? clk + k : NULL;
			n -= (ssize_t)k;
			r->pos += k;
			*done += k;
			r->records += k;
			if (!r->original)
				pace(src, r, t0, *done);
		}
	}
	if (n < 0)
		err = bach_source_error(src, (int)n, "%s",
					bach_reader_strerror(rd));
	if (!err && n == 0)
		err = trace_clocks(src, r, rd, &clk);
	/* what stood at the trace's end; what stands past it is of records
	 * the trace read lacks (a segment still being written) */
	if (!err && n == 0 && !atomic_load(&r->stop)) {
		while (next_at(r) <= r->pos)
			provenance_at(src, r, 0);
		if (r->mi < r->nmarks || r->gi < r->ngaps)
			bach_source_warn(
				src,
				"%s: %zu mark%s and %zu gap%s of its manifest stand past the end of its closed segments (record %llu): not replayed",
				r->path, r->nmarks - r->mi,
				r->nmarks - r->mi == 1 ? "" : "s",
				r->ngaps - r->gi,
				r->ngaps - r->gi == 1 ? "" : "s",
				(unsigned long long)r->pos);
	}
	bach_reader_free(rd);
	return err;
}

struct la_pace {
	struct replay *r;
	uint64_t t0, *done;
};

static int la_records(void *arg, const uint8_t *recs, size_t n)
{
	struct la_pace *lp = arg;
	struct replay *r = lp->r;

	if (atomic_load(&r->stop))
		return 1; /* stopped: not an error */
	bach_source_records(r->src, recs, n);
	*lp->done += n;
	r->records += n;
	pace(r->src, r, lp->t0, *lp->done);
	return 0;
}

/* A logic-analyzer capture, through libsigrok and the bus decoder. */
static int replay_analyzer(struct bach_source *src, struct replay *r,
			   uint64_t t0, uint64_t *done)
{
	struct la_pace lp = { .r = r, .t0 = t0, .done = done };
	struct bach_la_params p = {
		.map = r->map,
		.format = r->format,
		.ads_edge = r->edge,
		.options = (const char *const *)r->input,
		.noptions = r->ninput,
		.sink = la_records,
		.arg = &lp,
	};
	struct bach_la_report rep;
	char err[2048];
	int rc;

	r->src = src;
	rc = bach_la_decode_file(r->path, &p, &rep, err, sizeof err);
	if (!rc || rep.st.samples)
		bach_source_decoded(src, &rep.st);
	if (rc == BACH_LA_SINK && atomic_load(&r->stop))
		return 0;
	if (rc)
		return bach_source_error(src, -EINVAL, "%s", err);
	return 0;
}

static int replay_run(struct bach_source *src, void *priv)
{
	struct replay *r = priv;
	uint64_t t0 = bach_now_ns(), done = 0;
	int err;

	do {
		uint64_t before = r->records;

		err = r->frames	    ? replay_frames(src, r, t0, &done)
		      : r->analyzer ? replay_analyzer(src, r, t0, &done)
				    : replay_trace(src, r, t0, &done);
		/* looping over nothing would spin at full speed for ever */
		if (!err && r->loop && r->records == before &&
		    !atomic_load(&r->stop))
			err = bach_source_error(
				src, -ENODATA,
				"%s: no records to loop over (loop=1)",
				r->path);
	} while (!err && r->loop && !atomic_load(&r->stop));
	return err;
}

static void replay_stop(void *priv)
{
	struct replay *r = priv;

	atomic_store(&r->stop, true);
}

static void replay_close(void *priv)
{
	struct replay *r = priv;

	free(r->buf);
	free(r->gaps);
	free(r->marks);
	bach_manifest_free(&r->man);
}

const struct bach_driver bach_driver_replay = {
	.name = "replay",
	.summary = "a recorded trace, capture directory or board stream dump",
	.options = replay_options,
	.priv_size = sizeof(struct replay),
	.open = replay_open,
	.run = replay_run,
	.stop = replay_stop,
	.close = replay_close,
	.frame = replay_frame,
};
