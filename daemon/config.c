// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "lib/io/outfile.h"
#include "log.h"

/*
 * Each row of bachd_settings[] names the member of struct bachd_config its
 * value goes to: a setting is one row and one field. The manifest's
 * started event shows every row by its key (bach_opt_show()).
 */

/* in the order of enum bach_loss_policy */
static const char *const policies[] = { "stall", "drop", NULL };
static const char *const compressors[] = { "libdeflate", "record", "zstd",
					   NULL };
static const int compressor_values[] = { BACH_DEFLATE_LIBDEFLATE,
					 BACH_DEFLATE_RECORD,
					 BACH_DEFLATE_ZSTD };
/* in the order of enum capture_on_full */
static const char *const on_full_names[] = { "wait", "stop", NULL };

/*
 * The manifest shows every value (bach_opt_show()): a number must be one
 * its readers take, which jansson's (lib/io/manifest_read.c) are not past
 * 2^63 - 1. A row without a smaller max says so.
 */
#define MANIFEST_NUMBER_MAX INT64_MAX

/* min_free: bytes (k, M, G, T suffixes, 10^3...) or N% of the filesystem */
static int parse_min_free(const char *text, struct bach_optval *v, char *msg,
			  size_t cap)
{
	size_t len = strlen(text);
	char num[32];

	snprintf(
		msg, cap,
		"want bytes (k, M, G, T suffixes) or a percentage from 0%% to 99%%");
	v->u2 = len && text[len - 1] == '%';
	if (!v->u2)
		return bach_parse_size(text, "B", &v->u) ||
				       v->u > MANIFEST_NUMBER_MAX
			       ? -EINVAL
			       : 0;
	if (len - 1 >= sizeof(num))
		return -EINVAL;
	snprintf(num, sizeof(num), "%.*s", (int)(len - 1), text);
	if (bach_parse_u64(num, &v->u) || v->u > 99)
		return -EINVAL;
	return 0;
}

/* min_free's two members: bytes, or a percentage (the other 0) */
static int set_min_free(void *obj, const struct bach_optval *v, char *msg,
			size_t cap)
{
	struct capture_config *c = &((struct bachd_config *)obj)->cap;

	(void)msg;
	(void)cap;
	c->min_free_bytes = v->u2 ? 0 : v->u;
	c->min_free_pct = v->u2 ? (unsigned)v->u : 0;
	return 0;
}

static int show_min_free(const void *obj, char *buf, size_t cap)
{
	const struct capture_config *c =
		&((const struct bachd_config *)obj)->cap;
	int n = c->min_free_pct
			? snprintf(buf, cap, "%u%%", c->min_free_pct)
			: snprintf(buf, cap, "%llu",
				   (unsigned long long)c->min_free_bytes);

	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return c->min_free_pct ? BACH_JSON_STRING : BACH_JSON_NUMBER;
}

/* duration: seconds, or a number with s, m, h or d */
static int parse_duration(const char *text, struct bach_optval *v, char *msg,
			  size_t cap)
{
	static const struct {
		char c;
		uint64_t s;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	size_t len = strlen(text);
	uint64_t mul = 1;
	char num[32];

	snprintf(
		msg, cap,
		"want seconds, or a number with s, m, h or d (90m), 0 for no limit");
	for (size_t i = 0; len && i < sizeof(units) / sizeof(*units); i++)
		if (text[len - 1] == units[i].c) {
			mul = units[i].s;
			len--;
		}
	if (!len || len >= sizeof(num))
		return -EINVAL;
	snprintf(num, sizeof(num), "%.*s", (int)len, text);
	if (bach_parse_u64(num, &v->u) || v->u > (1ull << 40) / mul)
		return -EINVAL;
	v->u *= mul;
	return 0;
}
/*
 * marker: in-band marker rules, comma-separated; each line or --set adds
 * to the earlier ones, an empty value clears them.
 */
static int for_each_marker(const char *text, struct capture_config *cap,
			   char *msg, size_t cap_len)
{
	char item[64];

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ",");
		struct capture_marker m;

		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		for (size_t n = strlen(item);
		     n && (item[n - 1] == ' ' || item[n - 1] == '\t');)
			item[--n] = 0;
		if (len >= sizeof(item) ||
		    capture_marker_parse(&m, item, msg, cap_len))
			return -EINVAL;
		if (cap) {
			if (cap->nmarkers == CAPTURE_MAX_MARKERS) {
				snprintf(msg, cap_len, "more than %d rules",
					 CAPTURE_MAX_MARKERS);
				return -E2BIG;
			}
			cap->markers[cap->nmarkers++] = m;
		}
		p += len;
		/* a comma ends no list: "io:0x80," has an empty last rule */
		if (*p == ',' && !*++p)
			return capture_marker_parse(&m, "", msg, cap_len);
	}
	return 0;
}

static int parse_marker(const char *text, struct bach_optval *v, char *msg,
			size_t cap)
{
	(void)v;
	return for_each_marker(text, NULL, msg, cap);
}

static int set_marker(void *obj, const struct bach_optval *v, char *msg,
		      size_t cap)
{
	struct capture_config *c = &((struct bachd_config *)obj)->cap;

	if (!*v->s) {
		c->nmarkers = 0;
		return 0;
	}
	return for_each_marker(v->s, c, msg, cap);
}

/* the rules as mark events spell them, a comma list */
static int show_marker(const void *obj, char *buf, size_t cap)
{
	const struct capture_config *c =
		&((const struct bachd_config *)obj)->cap;
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < c->nmarkers; i++) {
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? "," : "",
				      c->markers[i].text);
		if (n >= cap)
			return -ENOSPC;
	}
	return BACH_JSON_LIST;
}

/*
 * metrics_labels: a comma list of label keys, each a Prometheus label name
 * ([A-Za-z_][A-Za-z0-9_]*, not __...) that none of the metrics' own labels
 * uses; that each has its label.KEY is checked once all is read.
 */
static int parse_metrics_labels(const char *text, struct bach_optval *v,
				char *msg, size_t cap)
{
	static const char *const taken[] = { "instance_name", "cause",
					     "version", "gateware", "driver" };
	static const char first[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";

	(void)v;
	snprintf(
		msg, cap,
		"want label keys, comma-separated, each a Prometheus label name (a letter or _, then letters, digits or _; not __...) other than instance_name, cause, version, gateware and driver");
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ",");

		if (!len || !strchr(first, *p) || !strncmp(p, "__", 2) ||
		    strspn(p,
			   "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_") <
			    len)
			return -EINVAL;
		for (size_t i = 0; i < sizeof(taken) / sizeof(*taken); i++)
			if (strlen(taken[i]) == len &&
			    !strncmp(p, taken[i], len))
				return -EINVAL;
		p += len;
		/* a comma ends no list */
		if (*p == ',' && !*++p)
			return -EINVAL;
	}
	return 0;
}

/* in the order of levels[] */
static const char *const log_levels[] = { "debug", "info", "notice", "warning",
					  NULL };
static const int levels[] = { LOG_P_DEBUG, LOG_P_INFO, LOG_P_NOTICE,
			      LOG_P_WARNING };

const struct bach_optdesc bachd_settings[] = {
	{ .key = "output",
	  .type = BACH_OPT_STRING,
	  .arg = "DIR",
	  .def_help = "none",
	  .help = "where capture directories are made: it must be given, and exist",
	  BACH_OPT_AT(struct bachd_config, cap.output) },
	{ .key = "driver",
	  .type = BACH_OPT_STRING,
	  .arg = "NAME",
	  .def_help = "none",
	  .help = "the source, which must be given; its options go in [driver]",
	  BACH_OPT_AT(struct bachd_config, cap.driver) },
	{ .key = "policy",
	  .type = BACH_OPT_ENUM,
	  .names = policies,
	  .def = "stall",
	  .help = "what a full ring does: hold the source back, or drop and count",
	  BACH_OPT_AT(struct bachd_config, cap.policy) },
	{ .key = "gap_markers",
	  .type = BACH_OPT_BOOL,
	  .arg = "yes|no",
	  .def = "yes",
	  .help = "a marker record in the trace at each gap",
	  BACH_OPT_AT(struct bachd_config, cap.gap_markers) },
	{ .key = "compress",
	  .type = BACH_OPT_BOOL,
	  .arg = "yes|no",
	  .def = "yes",
	  .help = "compressed segments (.byu.zst, or .byu.gz with the record encoder or libdeflate) instead of .byu",
	  BACH_OPT_AT(struct bachd_config, cap.compress) },
	/*
	 * zstd (at its level 3): the best ratio of those above the bus's 33 M
	 * records/s on two cores, on a real program's trace, bach gen and a
	 * decoded bus capture (make bench-compress, docs/bachd.md)
	 */
	{ .key = "compressor",
	  .type = BACH_OPT_ENUM,
	  .names = compressors,
	  .def = "zstd",
	  .help = "the block compressor: bach's own record encoder (levels 1 and 2), or libdeflate (faster, about 30% larger), .byu.gz segments; or zstd (levels 1 to 19), .byu.zst segments",
	  .values = compressor_values,
	  BACH_OPT_AT(struct bachd_config, cap.compressor) },
	{ .key = "level",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .max = 19,
	  .def = "0",
	  .help = "the compressor's level (libdeflate 1 to 12, the record encoder 1 to 2, zstd 1 to 19); 0: its own default (zstd 3, the others 1)",
	  BACH_OPT_AT(struct bachd_config, cap.level) },
	/*
	 * 8 MiB: on a real program's trace no larger than zstd -3 of the
	 * whole file, where 64 KiB frames were 1.6x larger; a seek still
	 * decompresses one frame (make bench-compress, bench-seek)
	 */
	{ .key = "zstd_frame_kb",
	  .type = BACH_OPT_UINT,
	  .arg = "KIB",
	  .min = 64,
	  .max = 16384,
	  .def = "8192",
	  .help = "zstd: the records of one frame, KiB, in whole 64 KiB blocks; a crash loses at most the frame being gathered",
	  BACH_OPT_AT(struct bachd_config, cap.zstd_frame_kb) },
	{ .key = "threads",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .max = 64,
	  .def = "0",
	  .help = "compressing threads, 0 for one per online CPU",
	  BACH_OPT_AT(struct bachd_config, cap.threads) },
	{ .key = "ring_mb",
	  .type = BACH_OPT_UINT,
	  .arg = "MIB",
	  .min = 1,
	  .max = 1u << 20,
	  .def = "256",
	  .help = "the ring between acquisition and disk, MiB",
	  .scale = 1u << 20,
	  BACH_OPT_AT(struct bachd_config, cap.ring_bytes) },
	{ .key = "rotate_mb",
	  .type = BACH_OPT_UINT,
	  .arg = "MIB",
	  .max = 1u << 30,
	  .def = "1024",
	  .help = "close the segment once it holds this many MiB of records, 0 for no size limit",
	  .scale = 1u << 20,
	  BACH_OPT_AT(struct bachd_config, cap.rotate_bytes) },
	{ .key = "rotate_seconds",
	  .type = BACH_OPT_UINT,
	  .arg = "S",
	  .max = 1u << 30,
	  .def = "3600",
	  .help = "close the segment once it has been open this long, 0 for no time limit",
	  BACH_OPT_AT(struct bachd_config, cap.rotate_seconds) },
	{ .key = "io_uring",
	  .type = BACH_OPT_BOOL,
	  .arg = "yes|no",
	  .def = "yes",
	  .help = "write with io_uring (pwrite when it is refused)",
	  BACH_OPT_AT(struct bachd_config, cap.io_uring) },
	{ .key = "flush_ms",
	  .type = BACH_OPT_UINT,
	  .arg = "MS",
	  .min = 1,
	  .max = 3600000,
	  .def = "200",
	  .help = "a block still filling goes to the disk once it has waited this long",
	  BACH_OPT_AT(struct bachd_config, cap.flush_ms) },
	{ .key = "raw_dump",
	  .type = BACH_OPT_BOOL,
	  .arg = "yes|no",
	  .def = "no",
	  .help = "keep the board's bytes in board-stream.bin",
	  BACH_OPT_AT(struct bachd_config, cap.raw_dump) },
	{ .key = "queue_depth",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .min = 2,
	  .max = 256,
	  .def = "8",
	  .help = "segment writes in flight",
	  BACH_OPT_AT(struct bachd_config, cap.queue_depth) },
	{ .key = "test_writer_delay_ms",
	  .type = BACH_OPT_UINT,
	  .arg = "MS",
	  .max = 600000,
	  .def = "0",
	  .help = "test hook: sleep this long before every segment write",
	  BACH_OPT_AT(struct bachd_config, cap.test_writer_delay_ms) },
	{ .key = "control_socket",
	  .type = BACH_OPT_STRING,
	  .arg = "PATH",
	  .def_help =
		  "bach ctl's, /run/bach/bachd.sock as root, else $XDG_RUNTIME_DIR/bach/bachd.sock; bach capture: capture-PID.sock there",
	  .help = "the control socket bach ctl talks to, none for no socket",
	  BACH_OPT_AT(struct bachd_config, control_socket) },
	{ .key = "control_group",
	  .type = BACH_OPT_STRING,
	  .arg = "GROUP",
	  .def_help = "none: mode 0600",
	  .help = "the socket's group, mode 0660",
	  BACH_OPT_AT(struct bachd_config, control_group) },
	{ .key = "log_level",
	  .type = BACH_OPT_ENUM,
	  .names = log_levels,
	  .def = "info",
	  .help = "least important message logged",
	  .values = levels,
	  BACH_OPT_AT(struct bachd_config, log_level) },
	{ .key = "metrics_file",
	  .type = BACH_OPT_STRING,
	  .arg = "PATH",
	  .def_help = "none",
	  .help = "Prometheus text-format metrics, rewritten whole every metrics_interval (node_exporter's textfile collector reads NAME.prom)",
	  BACH_OPT_AT(struct bachd_config, cap.metrics_file) },
	{ .key = "metrics_interval",
	  .type = BACH_OPT_UINT,
	  .arg = "S",
	  .min = 1,
	  .max = 86400,
	  .def = "15",
	  .help = "seconds between two writes of metrics_file",
	  BACH_OPT_AT(struct bachd_config, metrics_interval) },
	{ .key = "instance_name",
	  .type = BACH_OPT_STRING,
	  .arg = "NAME",
	  .def_help =
		  "none: $BACHD_INSTANCE, which bachd@NAME.service sets to NAME",
	  .help = "the instance_name label of every series in metrics_file, so that several bachd's metrics differ",
	  BACH_OPT_AT(struct bachd_config, instance_name) },
	{ .key = "metrics_labels",
	  .type = BACH_OPT_STRING,
	  .arg = "KEY,...",
	  .parse = parse_metrics_labels,
	  .def_help = "none",
	  .help = "label.KEY settings whose values become labels KEY of every series in metrics_file",
	  BACH_OPT_AT(struct bachd_config, metrics_labels) },
	{ .key = "min_free",
	  .type = BACH_OPT_CUSTOM,
	  .arg = "BYTES|N%",
	  .parse = parse_min_free,
	  .def = "0",
	  .help = "keep this much free on the output's filesystem (k, M, G suffixes, or a percentage of it): below it the segment is closed and on_full applies; 0 for no floor",
	  .set = set_min_free,
	  .show = show_min_free },
	{ .key = "on_full",
	  .type = BACH_OPT_ENUM,
	  .names = on_full_names,
	  .def = "wait",
	  .help = "below min_free: wait for space (the records lost meanwhile are one gap, cause disk), or stop the capture cleanly (exit 0)",
	  BACH_OPT_AT(struct bachd_config, cap.on_full) },
	{ .key = "keep_bytes",
	  .type = BACH_OPT_SIZE,
	  .arg = "BYTES",
	  .unit = "B",
	  .max = MANIFEST_NUMBER_MAX,
	  .def = "0",
	  .help = "retention: remove the oldest closed segments while the captures in the output directory hold more (k, M, G suffixes); 0 for no limit",
	  BACH_OPT_AT(struct bachd_config, cap.keep_bytes) },
	{ .key = "keep_days",
	  .type = BACH_OPT_UINT,
	  .arg = "DAYS",
	  .max = 36500,
	  .def = "0",
	  .help = "retention: remove closed segments older than this; 0 for no limit",
	  BACH_OPT_AT(struct bachd_config, cap.keep_days) },
	{ .key = "keep_captures",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .max = 1000000,
	  .def = "0",
	  .help = "retention: keep at most this many captures (the running one included), removing the oldest whole; 0 for no limit",
	  BACH_OPT_AT(struct bachd_config, cap.keep_captures) },
	{ .key = "post_rotate",
	  .type = BACH_OPT_STRING,
	  .arg = "COMMAND",
	  .def_help = "none",
	  .help = "run /bin/sh -c 'COMMAND \"$1\"' with each closed segment's path as $1; failures are logged, never fatal",
	  BACH_OPT_AT(struct bachd_config, cap.post_rotate) },
	{ .key = "duration",
	  .type = BACH_OPT_CUSTOM,
	  .arg = "SECONDS",
	  .parse = parse_duration,
	  .def = "0",
	  .help = "autostop: end the capture cleanly after this long (s, m, h, d suffixes); 0 for no limit",
	  BACH_OPT_AT(struct bachd_config, cap.stop_seconds) },
	{ .key = "records",
	  .type = BACH_OPT_SIZE,
	  .arg = "N",
	  .max = MANIFEST_NUMBER_MAX,
	  .def = "0",
	  .help = "autostop: end the capture cleanly once the source has produced exactly N records (k, M, G suffixes); 0 for no limit",
	  BACH_OPT_AT(struct bachd_config, cap.stop_records) },
	{ .key = "segments",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .max = 1u << 30,
	  .def = "0",
	  .help = "autostop: end the capture cleanly with its Nth segment (that segment takes what the ring still holds); 0 for no limit",
	  BACH_OPT_AT(struct bachd_config, cap.stop_segments) },
	{ .key = "marker",
	  .type = BACH_OPT_CUSTOM,
	  .arg = "KIND:RANGE",
	  .parse = parse_marker,
	  .def_help = "none",
	  .help = "in-band markers: each record matching io:LO-HI (I/O cycles) or mem:BASE/SIZE (memory cycles) becomes a mark event; a comma list, and each use adds rules (an empty value clears them)",
	  .set = set_marker,
	  .show = show_marker },
	{ .key = "marker_rate",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .min = 1,
	  .max = 1000000,
	  .def = "100",
	  .help = "marker events a second per rule; the rest of that second's matches make one event with a count",
	  BACH_OPT_AT(struct bachd_config, cap.marker_rate) },
	{ 0 },
};

void bachd_config_defaults(struct bachd_config *c)
{
	memset(c, 0, sizeof(*c));
	bach_opts_defaults(bachd_settings, c);
	c->cap.settings = bachd_settings;
	c->cap.settings_of = c;
}

int bachd_config_set(struct bachd_config *c, const char *key, const char *v,
		     char *msg, size_t msglen)
{
	char keys[1024], esc[128];
	int err;

	if (!strncmp(key, "label.", 6)) {
		err = capture_config_label(&c->cap, key + 6, v);

		if (err == -E2BIG)
			snprintf(msg, msglen, "%s: more than %d labels", key,
				 CAPTURE_MAX_LABELS);
		else if (err)
			snprintf(
				msg, msglen,
				"%s: a label is label.KEY = VALUE: KEY a letter or _, then letters, digits, _ . or -, at most %d bytes; VALUE at most %d bytes",
				bach_escape_ctl(esc, sizeof(esc), key),
				CAPTURE_LABEL_KEY - 1, CAPTURE_LABEL_VALUE - 1);
		return err ? -EINVAL : 0;
	}
	err = bach_opt_set(bachd_settings, c, key, v, msg, msglen);
	if (err == -ENOENT) {
		bach_opts_keys(bachd_settings, keys, sizeof(keys));
		snprintf(msg, msglen, "unknown setting '%s' (%s)",
			 bach_escape_ctl(esc, sizeof(esc), key), keys);
	}
	return err ? -EINVAL : 0;
}

const struct capture_label *bachd_config_label(const struct bachd_config *c,
					       const char *key, size_t len)
{
	for (size_t i = 0; i < c->cap.nlabels; i++)
		if (strlen(c->cap.labels[i].key) == len &&
		    !strncmp(c->cap.labels[i].key, key, len))
			return &c->cap.labels[i];
	return NULL;
}

/* a configuration is a few KiB: anything larger is not one */
#define CONFIG_MAX_BYTES (1u << 20)

struct load_ctx {
	struct bachd_config *c;
	const char *file;
	const char *p, *end; /* the file's bytes inih has not had yet */
	unsigned line;	     /* the line inih is looking at */
	char why[512];	     /* the first error a handler saw */
	unsigned why_line;   /* ... on this line (0: none) */
	char bad[256];	     /* the reader's error, which ends the file */
	unsigned bad_line;   /* ... on this line (0: none) */
};

/*
 * inih's reader: the next line of the file, counted for the messages.
 * inih's line buffer is fixed when libinih is built (INI_MAX_LINE, 200 in
 * Debian's): a longer line, which inih would cut in two and misread, is
 * an error that says so; a long comment is passed over.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct load_ctx *x = stream;
	const char *nl, *s;
	size_t len, max = num > 2 ? (size_t)num - 2 : 0;

	if (x->p == x->end || x->bad_line)
		return NULL;
	nl = memchr(x->p, '\n', (size_t)(x->end - x->p));
	len = nl ? (size_t)(nl - x->p) : (size_t)(x->end - x->p);
	s = x->p;
	x->p += len + (nl != NULL);
	x->line++;
	if (memchr(s, 0, len)) {
		x->bad_line = x->line;
		snprintf(x->bad, sizeof(x->bad),
			 "a NUL byte: this is not a text file");
		return NULL;
	}
	if (len > max) {
		size_t sp = strspn(s, " \t");

		if (sp < len && (s[sp] == '#' || s[sp] == ';')) {
			strcpy(str, "\n");
			return str;
		}
		x->bad_line = x->line;
		snprintf(
			x->bad, sizeof(x->bad),
			"line longer than %zu bytes, the most libinih reads; give a long value on the command line (--output, --option, --set)",
			max);
		return NULL;
	}
	memcpy(str, s, len);
	str[len] = '\n';
	str[len + 1] = 0;
	return str;
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct load_ctx *x = user;
	char why[512] = "";
	int err;

	if (!name) /* a section line on its own */
		return 1;
	if (!strcmp(section, "bachd")) {
		err = bachd_config_set(x->c, name, value, why, sizeof(why));
	} else if (!strcmp(section, "driver")) {
		/* checked against the driver's table once it is known */
		err = capture_config_option(&x->c->cap, name, value, x->file,
					    x->line);
		if (err)
			snprintf(why, sizeof(why), "%s",
				 err == -E2BIG ? "too many driver options"
					       : strerror(-err));
	} else {
		snprintf(why, sizeof(why),
			 "unknown section [%s] (bachd, driver)", section);
		err = -EINVAL;
	}
	if (!err)
		return 1;
	/* inih reports the line of the first error: keep its reason */
	if (!x->why_line) {
		x->why_line = x->line;
		snprintf(x->why, sizeof(x->why), "%s", why);
	}
	return 0;
}

/* FILE's bytes, if it is a regular file of a sensible size. */
static int slurp(const char *file, char **buf, size_t *len, char *msg,
		 size_t msglen)
{
	struct stat st;
	ssize_t n;
	int fd, err;

	/* O_NONBLOCK: a FIFO must not hang the check */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		snprintf(msg, msglen, "%s: %s", file, strerror(errno));
		goto out;
	}
	err = -EINVAL;
	if (!S_ISREG(st.st_mode)) {
		snprintf(msg, msglen, "%s: not a regular file (%s)", file,
			 bach_file_type(st.st_mode));
		goto out;
	}
	*buf = malloc(CONFIG_MAX_BYTES + 1);
	if (!*buf) {
		err = -ENOMEM;
		snprintf(msg, msglen, "%s: %s", file, strerror(ENOMEM));
		goto out;
	}
	*len = 0;
	/* st_size may be stale: read up to one byte past the limit */
	while (*len <= CONFIG_MAX_BYTES &&
	       (n = read(fd, *buf + *len, CONFIG_MAX_BYTES + 1 - *len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			snprintf(msg, msglen, "%s: %s", file, strerror(errno));
			goto out;
		}
		*len += (size_t)n;
	}
	if (*len > CONFIG_MAX_BYTES) {
		snprintf(msg, msglen,
			 "%s: larger than %u KiB: not a configuration", file,
			 CONFIG_MAX_BYTES >> 10);
		goto out;
	}
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

int bachd_config_load(struct bachd_config *c, const char *file, char *msg,
		      size_t msglen)
{
	struct load_ctx x = { .c = c, .file = file };
	char *buf = NULL;
	size_t len = 0;
	int line, err;

	err = slurp(file, &buf, &len, msg, msglen);
	if (err)
		return err;
	x.p = buf;
	x.end = buf + len;
	line = ini_parse_stream(read_line, &x, handler, &x);
	free(buf);
	snprintf(c->cap.config_path, sizeof(c->cap.config_path), "%s", file);
	if (!realpath(file, c->cap.config_abs))
		c->cap.config_abs[0] = 0;
	if (line > 0) /* inih's first error: a handler's, or its own */
		snprintf(msg, msglen, "%s:%d: %s", file, line,
			 (unsigned)line == x.why_line ? x.why : "syntax error");
	else if (x.bad_line)
		snprintf(msg, msglen, "%s:%u: %s", file, x.bad_line, x.bad);
	else
		return 0;
	return -EINVAL;
}
