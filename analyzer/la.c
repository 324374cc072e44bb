// SPDX-License-Identifier: MIT
/*
 * Recorded logic-analyzer captures through libsigrok (include/bach/la.h).
 *
 * A .sr file is a libsigrok session (sr_session_load), anything else goes
 * through an input module fed the file in large chunks. Either way the
 * samples arrive as SR_DF_LOGIC packets in the datafeed callback, where the
 * bus decoder turns each whole packet into records, a block at a time.
 *
 * libsigrok reports problems through its log; while a decode runs, the
 * log's errors and warnings are kept, so that our message can say what
 * libsigrok found wrong rather than only that something failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <libsigrok/libsigrok.h>
#include <zip.h>

#include "bach/la.h"
#include "bach/record.h"
#include "la_priv.h"

#define CHUNK	 (4u << 20) /* bytes of a file per sr_input_send */
#define OUT_RECS 65536u	    /* records per sink call */

/* ---- libsigrok's log --------------------------------------------------- */

/*
 * libsigrok's log is process-wide and may be written from its own
 * threads: the first error or warning since la_log_begin() is kept under a
 * lock (and the first error apart), and la_log_said() and la_log_error()
 * hand out copies.
 */
static pthread_mutex_t sr_mu = PTHREAD_MUTEX_INITIALIZER;
static char sr_last[512], sr_error[sizeof sr_last];

__attribute__((format(printf, 3, 0))) static int
log_keep(void *cb_data, int level, const char *fmt, va_list args)
{
	va_list again;

	(void)cb_data;
	pthread_mutex_lock(&sr_mu);
	if (level <= SR_LOG_ERR && !sr_error[0]) {
		va_copy(again, args);
		vsnprintf(sr_error, sizeof sr_error, fmt, again);
		va_end(again);
	}
	if (level <= SR_LOG_WARN && !sr_last[0])
		vsnprintf(sr_last, sizeof sr_last, fmt, args);
	pthread_mutex_unlock(&sr_mu);
	return SR_OK;
}

void la_log_begin(void)
{
	pthread_mutex_lock(&sr_mu);
	sr_last[0] = '\0';
	sr_error[0] = '\0';
	pthread_mutex_unlock(&sr_mu);
	sr_log_loglevel_set(SR_LOG_WARN);
	sr_log_callback_set(log_keep, NULL);
}

/* A copy of a kept message for this thread, or NULL when there is none. */
static const char *log_copy(const char *kept, char *copy)
{
	pthread_mutex_lock(&sr_mu);
	memcpy(copy, kept, sizeof sr_last);
	pthread_mutex_unlock(&sr_mu);
	return copy[0] ? copy : NULL;
}

const char *la_log_said(void)
{
	static __thread char copy[sizeof sr_last];

	return log_copy(sr_last, copy);
}

const char *la_log_error(void)
{
	static __thread char copy[sizeof sr_error];

	return log_copy(sr_error, copy);
}

/* ---- the decoding side of the datafeed --------------------------------- */

static void la_fail(struct la_feed *f, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void la_fail(struct la_feed *f, int status, const char *fmt, ...)
{
	va_list ap;

	if (f->status)
		return;
	f->status = status;
	va_start(ap, fmt);
	vsnprintf(f->err, sizeof f->err, fmt, ap);
	va_end(ap);
}

int la_feed_init(struct la_feed *f, const char *what, const char *map,
		 bach_la_sink_fn sink, void *arg)
{
	memset(f, 0, sizeof *f);
	f->what = what;
	f->sink = sink;
	f->arg = arg;
	f->out = malloc(OUT_RECS * BACH_REC_SIZE);
	f->at = malloc(OUT_RECS * sizeof *f->at);
	if (!f->out || !f->at) {
		la_fail(f, BACH_LA_BAD_INPUT, "out of memory");
		return -1;
	}
	if (map && bach_mapspec_load(&f->spec, map, f->err, sizeof f->err)) {
		f->status = BACH_LA_BAD_INPUT;
		return -1;
	}
	return 0;
}

void la_feed_free(struct la_feed *f)
{
	bach_busdec_free(f->dec);
	bach_mapspec_free(&f->spec);
	free(f->out);
	free(f->at);
	f->dec = NULL;
	f->out = NULL;
	f->at = NULL;
}

/* The capture's channels (names[i] is channel i) are known: resolve. */
int la_feed_names(struct la_feed *f, const char *const *names, unsigned n)
{
	f->channels = n;
	if (!n) {
		la_fail(f, BACH_LA_BAD_INPUT,
			"%s: no logic channels (if this is not %s data, say "
			"the format with --format)",
			f->what, f->format ? f->format : "logic");
		return -1;
	}
	if (bach_busmap_resolve(&f->map, &f->spec, names, n, f->err,
				sizeof f->err)) {
		char msg[sizeof f->err];

		/* name the capture too */
		snprintf(msg, sizeof msg, "%s", f->err);
		f->err[0] = '\0';
		la_fail(f, BACH_LA_BAD_INPUT, "%s: %s", f->what, msg);
		return -1;
	}
	f->map.ads_edge = f->ads_edge;
	f->resolved = true;
	return 0;
}

/* The same, from a libsigrok device's channel list. */
int la_feed_channels(struct la_feed *f, const struct sr_dev_inst *sdi)
{
	const char *names[BACH_BUS_MAX_UNIT * 8] = { NULL };
	unsigned n = 0;

	for (GSList *l = sr_dev_inst_channels_get(sdi); l; l = l->next) {
		const struct sr_channel *ch = l->data;

		if (ch->type != SR_CHANNEL_LOGIC || !ch->enabled)
			continue;
		if (ch->index < 0 || ch->index >= BACH_BUS_MAX_UNIT * 8) {
			la_fail(f, BACH_LA_BAD_INPUT,
				"%s: channel %s is number %d; the decoder "
				"takes at most %u channels",
				f->what, ch->name, ch->index,
				BACH_BUS_MAX_UNIT * 8);
			return -1;
		}
		names[ch->index] = ch->name;
		if ((unsigned)ch->index + 1 > n)
			n = (unsigned)ch->index + 1;
	}
	return la_feed_names(f, names, n);
}

static void flush_out(struct la_feed *f, size_t k)
{
	if (!k || f->status)
		return;
	if (f->tsink ? f->tsink(f->arg, f->out, f->at, k, f->samplerate)
		     : f->sink(f->arg, f->out, k))
		la_fail(f, BACH_LA_SINK, "the output refused the records");
}

/* Samples, whole ones (len a multiple of unitsize), into records. */
void la_feed_logic(struct la_feed *f, const uint8_t *s, size_t len,
		   unsigned unitsize)
{
	size_t n = len / (unitsize ? unitsize : 1);

	if (f->status)
		return;
	if (!f->resolved) {
		la_fail(f, BACH_LA_BAD_DATA,
			"%s: samples came before the channel list", f->what);
		return;
	}
	if (!f->dec) {
		f->unitsize = unitsize;
		f->dec = bach_busdec_new(&f->map, unitsize, f->err,
					 sizeof f->err);
		if (!f->dec) {
			char msg[sizeof f->err];

			snprintf(msg, sizeof msg, "%s", f->err);
			f->err[0] = '\0';
			la_fail(f, BACH_LA_BAD_INPUT, "%s: %s", f->what, msg);
			return;
		}
	} else if (unitsize != f->unitsize) {
		la_fail(f, BACH_LA_BAD_DATA,
			"%s: samples changed from %u to %u bytes", f->what,
			f->unitsize, unitsize);
		return;
	}
	while (n && !f->status) {
		size_t used;
		size_t k = bach_busdec_feed(f->dec, s, n, &used, f->out, f->at,
					    OUT_RECS);

		flush_out(f, k);
		s += used * f->unitsize;
		n -= used;
	}
}

void la_feed_packet(struct la_feed *f, const struct sr_datafeed_packet *pkt)
{
	if (f->status)
		return;
	switch (pkt->type) {
	case SR_DF_META: {
		const struct sr_datafeed_meta *m = pkt->payload;

		for (GSList *l = m->config; l; l = l->next) {
			const struct sr_config *c = l->data;

			if (c->key == SR_CONF_SAMPLERATE)
				f->samplerate = g_variant_get_uint64(c->data);
		}
		break;
	}
	case SR_DF_LOGIC: {
		const struct sr_datafeed_logic *lg = pkt->payload;

		la_feed_logic(f, lg->data, (size_t)lg->length, lg->unitsize);
		break;
	}
	case SR_DF_END:
		f->ended = true;
		break;
	default:
		break;
	}
}

/* The capture is over: cycles still open become records. */
void la_feed_finish(struct la_feed *f)
{
	size_t k;

	while (f->dec && !f->status &&
	       (k = bach_busdec_finish(f->dec, f->out, f->at, OUT_RECS)) > 0)
		flush_out(f, k);
}

static void datafeed(const struct sr_dev_inst *sdi,
		     const struct sr_datafeed_packet *pkt, void *cb_data)
{
	(void)sdi;
	la_feed_packet(cb_data, pkt);
}

/* ---- files ------------------------------------------------------------- */

static bool has_ext(const char *path, const char *ext)
{
	size_t lp = strlen(path), le = strlen(ext);

	return lp > le + 1 && path[lp - le - 1] == '.' &&
	       !strcasecmp(path + lp - le, ext);
}

/*
 * The input module whose extensions include the file's. A .bin of a logic
 * analyzer is raw logic data, whatever raw_analog claims.
 */
static const struct sr_input_module *module_for(const char *path)
{
	const struct sr_input_module **mods = sr_input_list();

	if (has_ext(path, "bin"))
		return sr_input_find((char *)"binary");
	for (size_t i = 0; mods && mods[i]; i++) {
		const char *const *ext = sr_input_extensions_get(mods[i]);

		for (size_t e = 0; ext && ext[e]; e++)
			if (has_ext(path, ext[e]))
				return mods[i];
	}
	return NULL;
}

/*
 * Integer options passed on only within these ranges, whichever module has
 * them: beyond, libsigrok makes the channels one by one (binary with
 * numchannels=99999999 never ends) for a decoder that takes 128 at most.
 */
static const struct {
	const char *id;
	long long min, max;
	const char *why;
} opt_ranges[] = {
	{ "numchannels", 0, BACH_BUS_MAX_UNIT * 8,
	  "the decoder takes at most 128 channels" },
	{ "logic_channels", 0, BACH_BUS_MAX_UNIT * 8,
	  "the decoder takes at most 128 channels" },
};

static int check_range(const struct sr_input_module *imod, const char *kv,
		       const char *key, long long x, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof opt_ranges / sizeof *opt_ranges; i++) {
		if (strcmp(opt_ranges[i].id, key) ||
		    (x >= opt_ranges[i].min && x <= opt_ranges[i].max))
			continue;
		snprintf(err, errlen,
			 "--option %s: out of range for the %s input: %lld to "
			 "%lld (%s)",
			 kv, sr_input_id_get(imod), opt_ranges[i].min,
			 opt_ranges[i].max, opt_ranges[i].why);
		return -1;
	}
	return 0;
}

/* "key=value" options, typed as the module's own defaults are. */
static GHashTable *module_options(const struct sr_input_module *imod,
				  const char *const *kv, size_t n, char *err,
				  size_t errlen)
{
	const struct sr_option **opts = sr_input_options_get(imod);
	GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					      (GDestroyNotify)g_variant_unref);

	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(kv[i], '=');
		const struct sr_option *o = NULL;
		GVariant *v = NULL;
		char key[64], *end;

		if (!eq || eq == kv[i] || (size_t)(eq - kv[i]) >= sizeof key) {
			snprintf(err, errlen, "--option %s: expected KEY=VALUE",
				 kv[i]);
			goto fail;
		}
		memcpy(key, kv[i], (size_t)(eq - kv[i]));
		key[eq - kv[i]] = '\0';
		for (size_t k = 0; opts && opts[k]; k++)
			if (!strcmp(opts[k]->id, key))
				o = opts[k];
		if (!o) {
			size_t off = (size_t)snprintf(
				err, errlen,
				"--option %s: the %s input has no option '%s' "
				"(it has:",
				kv[i], sr_input_id_get(imod), key);
			for (size_t k = 0; opts && opts[k] && off < errlen; k++)
				off += (size_t)snprintf(err + off, errlen - off,
							" %s", opts[k]->id);
			if (off < errlen)
				snprintf(err + off, errlen - off, ")");
			goto fail;
		}
		const char *val = eq + 1;
		long long x = 0; /* an integer's value, for its range */

		errno = 0;
		if (g_variant_is_of_type(o->def, G_VARIANT_TYPE_UINT64)) {
			uint64_t u = strtoull(val, &end, 0);

			if (!*end && !errno && *val != '-')
				v = g_variant_new_uint64(u);
			x = u > LLONG_MAX ? LLONG_MAX : (long long)u;
		} else if (g_variant_is_of_type(o->def,
						G_VARIANT_TYPE_UINT32)) {
			x = strtoll(val, &end, 0);
			if (!*end && !errno && *val != '-' && x <= UINT32_MAX)
				v = g_variant_new_uint32((uint32_t)x);
		} else if (g_variant_is_of_type(o->def, G_VARIANT_TYPE_INT32)) {
			x = strtoll(val, &end, 0);
			if (!*end && !errno && x >= INT32_MIN && x <= INT32_MAX)
				v = g_variant_new_int32((int32_t)x);
		} else if (g_variant_is_of_type(o->def,
						G_VARIANT_TYPE_DOUBLE)) {
			double d = strtod(val, &end);

			if (!*end && !errno)
				v = g_variant_new_double(d);
		} else if (g_variant_is_of_type(o->def,
						G_VARIANT_TYPE_BOOLEAN)) {
			if (!strcmp(val, "1") || !strcasecmp(val, "true") ||
			    !strcasecmp(val, "yes"))
				v = g_variant_new_boolean(TRUE);
			else if (!strcmp(val, "0") ||
				 !strcasecmp(val, "false") ||
				 !strcasecmp(val, "no"))
				v = g_variant_new_boolean(FALSE);
		} else if (g_variant_is_of_type(o->def,
						G_VARIANT_TYPE_STRING)) {
			v = g_variant_new_string(val);
		}
		if (!v || *val == '\0') {
			if (v)
				g_variant_unref(g_variant_ref_sink(v));
			snprintf(err, errlen,
				 "--option %s: not a valid value for %s (%s)",
				 kv[i], key, o->desc ? o->desc : "");
			goto fail;
		}
		if (check_range(imod, kv[i], key, x, err, errlen)) {
			g_variant_unref(g_variant_ref_sink(v));
			goto fail;
		}
		g_hash_table_insert(h, g_strdup(key), g_variant_ref_sink(v));
	}
	sr_input_options_free(opts);
	return h;
fail:
	sr_input_options_free(opts);
	g_hash_table_destroy(h);
	return NULL;
}

/* ---- VCD timestamps ---------------------------------------------------- */

/*
 * libsigrok's VCD input turns time into samples: every timestamp unit from
 * one change to the next is a sample (divided by its downsample option),
 * which it writes out one by one, and it stops without an error at a
 * timestamp that goes backwards. So before each chunk goes to it, the
 * chunk's timestamps are checked here, its tokens taken as the module takes
 * them: time must never go back, nor jump more than VCD_MAX_GAP samples.
 */
#define VCD_MAX_GAP (1ull << 28) /* ~2 s of libsigrok's expansion */

struct vcd_scan {
	const char *path;
	uint64_t line;	   /* of the next byte, from 1 */
	uint64_t tok_line; /* where the token being read began */
	char tok[24];	   /* its first bytes, NUL-terminated */
	size_t tok_len;	   /* its whole length */
	bool body;	   /* past "$enddefinitions $end" */
	bool enddefs;	   /* "$enddefinitions" seen, "$end" next */
	bool section;	   /* inside "$comment ... $end" and the like */
	bool want_id;	   /* the next token is a value's identifier */
	bool have;	   /* a timestamp was seen: last and at hold */
	uint64_t last;	   /* the last timestamp, as written */
	uint64_t at;	   /* the sample it became */
	uint64_t downsample, compress;
	int64_t skip;
};

/* The module's options that change how time becomes samples. */
static void vcd_scan_init(struct vcd_scan *v, const char *path,
			  GHashTable *opts)
{
	GVariant *ds = g_hash_table_lookup(opts, "downsample");
	GVariant *cp = g_hash_table_lookup(opts, "compress");
	GVariant *sk = g_hash_table_lookup(opts, "skip");

	memset(v, 0, sizeof *v);
	v->path = path;
	v->line = 1;
	v->downsample = ds && g_variant_get_int32(ds) > 1
				? (uint64_t)g_variant_get_int32(ds)
				: 1;
	v->compress = cp && g_variant_get_int32(cp) > 0
			      ? (uint64_t)g_variant_get_int32(cp)
			      : 0;
	v->skip = sk ? g_variant_get_int32(sk) : -1;
}

static int vcd_time(struct vcd_scan *v, struct la_feed *f)
{
	uint64_t t = 0, s, gap;

	for (const char *c = v->tok + 1; *c; c++)
		t = t > (UINT64_MAX - 9) / 10
			    ? UINT64_MAX
			    : t * 10 + (uint64_t)(*c >= '0' && *c <= '9'
							  ? *c - '0'
							  : 0);
	if (v->tok_len >= sizeof v->tok)
		t = UINT64_MAX; /* more digits than we keep: far too many */
	if (v->have && t < v->last) {
		la_fail(f, BACH_LA_BAD_DATA,
			"%s:%" PRIu64 ": timestamp #%" PRIu64 " is before the "
			"previous one (#%" PRIu64 ")",
			v->path, v->tok_line, t, v->last);
		return -1;
	}
	s = t / v->downsample;
	if (!v->have)
		v->at = v->skip < 0 ? s : (uint64_t)v->skip / v->downsample;
	v->have = true;
	v->last = t;
	if (s <= v->at)
		return 0; /* skipped, or no time passed */
	gap = s - v->at;
	if (v->compress && gap > v->compress)
		gap = v->compress;
	if (gap > VCD_MAX_GAP) {
		la_fail(f, BACH_LA_BAD_DATA,
			"%s:%" PRIu64 ": timestamp #%" PRIu64 " comes %" PRIu64
			" samples after the last change, more than the %llu "
			"read between two changes (--option downsample=N or "
			"compress=N shortens such spans)",
			v->path, v->tok_line, t, s - v->at, VCD_MAX_GAP);
		return -1;
	}
	v->at = s;
	return 0;
}

static int vcd_token(struct vcd_scan *v, struct la_feed *f)
{
	const char *t = v->tok;

	if (!v->body) {
		if (v->enddefs && !strcmp(t, "$end"))
			v->body = true;
		else if (!strcmp(t, "$enddefinitions"))
			v->enddefs = true;
	} else if (v->section) {
		v->section = strcmp(t, "$end") != 0;
	} else if (v->want_id) {
		v->want_id = false;
	} else if (t[0] == '#' && t[1] >= '0' && t[1] <= '9') {
		return vcd_time(v, f);
	} else if (t[0] == '$') {
		v->section = strcmp(t, "$dumpvars") && strcmp(t, "$dumpon") &&
			     strcmp(t, "$dumpoff") && strcmp(t, "$dumpall") &&
			     strcmp(t, "$end");
	} else if (strchr("bBrR", t[0]) ||
		   (v->tok_len == 1 && strchr("01xXzZ", t[0]))) {
		v->want_id = true; /* "b0101 ID", "1 ID" */
	}
	return 0;
}

/* The next bytes of the file; tokens may run on into the next chunk. */
static int vcd_scan(struct vcd_scan *v, const char *p, size_t n,
		    struct la_feed *f)
{
	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			if (v->tok_len && vcd_token(v, f))
				return -1;
			v->tok_len = 0;
			if (c == '\n')
				v->line++;
			continue;
		}
		if (!v->tok_len)
			v->tok_line = v->line;
		if (v->tok_len < sizeof v->tok - 1) {
			v->tok[v->tok_len] = c;
			v->tok[v->tok_len + 1] = '\0';
		}
		v->tok_len++;
	}
	return 0;
}

/* A VCD cut short ends in the middle of a line. */
static int check_text_whole(const char *path, int fd, char *err, size_t errlen)
{
	struct stat st;
	char last;

	if (fstat(fd, &st) || st.st_size == 0)
		return 0;
	if (pread(fd, &last, 1, st.st_size - 1) != 1)
		return 0;
	if (last != '\n') {
		snprintf(err, errlen,
			 "%s: truncated: the last line (ending at byte %jd) "
			 "is incomplete",
			 path, (intmax_t)st.st_size);
		return -1;
	}
	return 0;
}

/* A session's zip archive, or NULL with the feed failed. */
static zip_t *open_srzip(const char *path, struct la_feed *f)
{
	zip_t *z;
	int zerr;

	z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
	if (!z) {
		zip_error_t e;

		zip_error_init_with_code(&e, zerr);
		la_fail(f, BACH_LA_BAD_INPUT,
			"%s: not a readable libsigrok session (.sr): %s", path,
			zip_error_strerror(&e));
		zip_error_fini(&e);
	}
	return z;
}

/*
 * A session's samples are in numbered members, NAME-1, NAME-2, ...
 * (logic-1-1, analog-1-3-1), read in order until one is missing: a hole
 * would silently cut the capture short, and an empty member hides one. Each
 * numbered member must follow its predecessor and hold bytes.
 */
static int check_members(const char *path, zip_t *z, struct la_feed *f)
{
	for (zip_int64_t i = 0, n = zip_get_num_entries(z, 0); i < n; i++) {
		const char *name = zip_get_name(z, (zip_uint64_t)i, 0);
		const char *dash = name ? strrchr(name, '-') : NULL;
		char prev[256], *end;
		unsigned long k;
		zip_stat_t st;

		if (!dash ||
		    (strncmp(name, "logic-", 6) && strncmp(name, "analog-", 7)))
			continue;
		k = strtoul(dash + 1, &end, 10);
		if (*end || !k || dash[1] < '1' || dash[1] > '9')
			continue;
		if (zip_stat_index(z, (zip_uint64_t)i, 0, &st) == 0 &&
		    (st.valid & ZIP_STAT_SIZE) && st.size == 0) {
			la_fail(f, BACH_LA_BAD_DATA,
				"%s: damaged: member %s is empty (no samples)",
				path, name);
			return -1;
		}
		snprintf(prev, sizeof prev, "%.*s-%lu", (int)(dash - name),
			 name, k - 1);
		if (k > 1 && zip_name_locate(z, prev, 0) < 0) {
			la_fail(f, BACH_LA_BAD_DATA,
				"%s: damaged: member %s is missing (%s "
				"follows)",
				path, prev, name);
			return -1;
		}
	}
	return 0;
}

/*
 * libsigrok reads a session's members without checking their CRCs, so a
 * damaged member would decode as garbage: read each whole through libzip
 * first, which does check them.
 */
static int check_srzip(const char *path, struct la_feed *f)
{
	static char buf[1 << 20];
	zip_t *z;

	z = open_srzip(path, f);
	if (!z)
		return -1;
	for (zip_int64_t i = 0, n = zip_get_num_entries(z, 0); i < n; i++) {
		zip_file_t *m = zip_fopen_index(z, (zip_uint64_t)i, 0);
		zip_int64_t got = 0;

		while (m && (got = zip_fread(m, buf, sizeof buf)) > 0)
			;
		if (!m || got < 0) {
			la_fail(f, BACH_LA_BAD_DATA,
				"%s: damaged: member %s: %s", path,
				zip_get_name(z, (zip_uint64_t)i, 0),
				m ? zip_file_strerror(m) : zip_strerror(z));
			if (m)
				zip_fclose(m);
			zip_discard(z);
			return -1;
		}
		zip_fclose(m);
	}
	zip_discard(z);
	return 0;
}

/*
 * A member's whole text, NUL-terminated, read to its end so that libzip
 * checks its CRC; or NULL with the reason in why.
 */
static char *read_member(zip_t *z, const char *name, size_t max, char *why,
			 size_t whylen)
{
	zip_stat_t st;
	zip_file_t *m;
	char *buf;
	zip_int64_t got = 0, n;

	if (zip_stat(z, name, 0, &st) || !(st.valid & ZIP_STAT_SIZE) ||
	    st.size > max) {
		snprintf(why, whylen, "member %s missing or too large", name);
		return NULL;
	}
	m = zip_fopen(z, name, 0);
	buf = malloc((size_t)st.size + 1);
	if (!m || !buf) {
		snprintf(why, whylen, "member %s: %s", name,
			 m ? "out of memory" : zip_strerror(z));
		free(buf);
		if (m)
			zip_fclose(m);
		return NULL;
	}
	/* one byte of room past the size: the last read sees the end */
	while ((n = zip_fread(m, buf + got, st.size + 1 - (zip_uint64_t)got)) >
	       0)
		got += n;
	if (n < 0 || got != (zip_int64_t)st.size) {
		snprintf(why, whylen, "damaged: member %s: %s", name,
			 n < 0 ? zip_file_strerror(m) : "wrong size");
		zip_fclose(m);
		free(buf);
		return NULL;
	}
	zip_fclose(m);
	buf[st.size] = '\0';
	return buf;
}

/* One logic member, through the decoder; 0, or -1 with the feed failed. */
static int read_logic(const char *path, zip_t *z, zip_int64_t idx,
		      struct la_feed *f, unsigned unit, uint8_t *buf)
{
	zip_file_t *m = zip_fopen_index(z, (zip_uint64_t)idx, 0);
	const char *name = zip_get_name(z, (zip_uint64_t)idx, 0);
	size_t have = 0; /* bytes of a partial sample carried over */
	zip_int64_t got;

	if (!m) {
		la_fail(f, BACH_LA_BAD_INPUT, "%s: member %s: %s", path, name,
			zip_strerror(z));
		return -1;
	}
	while (!f->status &&
	       (got = zip_fread(m, buf + have, CHUNK - have)) > 0) {
		size_t len = have + (size_t)got, whole = len - len % unit;

		la_feed_logic(f, buf, whole, unit);
		have = len - whole;
		memmove(buf, buf + whole, have);
	}
	if (!f->status && got < 0)
		/* libzip checks the member's CRC as it reaches the end */
		la_fail(f, BACH_LA_BAD_DATA, "%s: damaged: member %s: %s", path,
			name, zip_file_strerror(m));
	else if (!f->status && have)
		la_fail(f, BACH_LA_BAD_DATA,
			"%s: damaged: member %s ends in a partial sample (%zu "
			"of %u bytes)",
			path, name, have, unit);
	zip_fclose(m);
	return f->status ? -1 : 0;
}

/*
 * A sigrok session of version 2 with logic channels only, read here with
 * libzip: every member inflated once, its CRC checked, its samples straight
 * into the decoder. libsigrok's own loader, used for any other shape,
 * neither checks CRCs nor avoids a copy of every chunk. Returns 1 when the
 * file is not of this shape, 0 when decoded, -1 when it failed.
 */
static int run_srzip(const char *path, struct la_feed *f)
{
	const char *names[BACH_BUS_MAX_UNIT * 8] = { NULL };
	char *ver = NULL, *meta = NULL, *cap = NULL, *rate = NULL;
	char *probe[BACH_BUS_MAX_UNIT * 8] = { NULL };
	GKeyFile *kf = NULL;
	GError *gerr = NULL;
	uint8_t *buf = NULL;
	char why[256] = "";
	int rc = 1, unit, nprobes;
	zip_t *z;

	z = open_srzip(path, f);
	if (!z)
		return -1;
	if (check_members(path, z, f)) {
		zip_discard(z);
		return -1;
	}
	ver = read_member(z, "version", 16, why, sizeof why);
	if (!ver || strcmp(g_strstrip(ver), "2"))
		goto out; /* libsigrok's (or its error) */
	meta = read_member(z, "metadata", 1u << 20, why, sizeof why);
	kf = g_key_file_new();
	if (!meta || !g_key_file_load_from_data(kf, meta, strlen(meta),
						G_KEY_FILE_NONE, &gerr)) {
		la_fail(f, BACH_LA_BAD_DATA, "%s: metadata: %s", path,
			gerr ? gerr->message : why);
		rc = -1;
		goto out;
	}
	if (g_key_file_has_group(kf, "device 2") ||
	    g_key_file_get_integer(kf, "device 1", "total analog", NULL) > 0)
		goto out; /* more than one logic device */
	cap = g_key_file_get_string(kf, "device 1", "capturefile", NULL);
	unit = g_key_file_get_integer(kf, "device 1", "unitsize", NULL);
	nprobes = g_key_file_get_integer(kf, "device 1", "total probes", NULL);
	if (!cap || unit < 1 || unit > BACH_BUS_MAX_UNIT || nprobes < 1 ||
	    nprobes > unit * 8) {
		la_fail(f, BACH_LA_BAD_INPUT,
			"%s: metadata: [device 1] needs capturefile, "
			"unitsize (1 to %d) and total probes (1 to 8 per "
			"unit byte)",
			path, BACH_BUS_MAX_UNIT);
		rc = -1;
		goto out;
	}
	rate = g_key_file_get_string(kf, "device 1", "samplerate", NULL);
	if (rate)
		sr_parse_sizestring(rate, &f->samplerate);
	for (int i = 0; i < nprobes; i++) {
		char key[16];

		snprintf(key, sizeof key, "probe%d", i + 1);
		probe[i] = g_key_file_get_string(kf, "device 1", key, NULL);
		names[i] = probe[i];
	}
	rc = -1;
	if (la_feed_names(f, names, (unsigned)nprobes))
		goto out;
	buf = malloc(CHUNK);
	if (!buf) {
		la_fail(f, BACH_LA_BAD_INPUT, "out of memory");
		goto out;
	}
	for (unsigned k = 1;; k++) {
		char name[256];
		zip_int64_t idx;

		snprintf(name, sizeof name, "%s-%u", cap, k);
		idx = zip_name_locate(z, name, 0);
		if (idx < 0 && k == 1)
			idx = zip_name_locate(z, cap, 0);
		if (idx < 0) {
			if (k == 1)
				la_fail(f, BACH_LA_BAD_INPUT,
					"%s: no member %s-1 holds samples",
					path, cap);
			break;
		}
		if (read_logic(path, z, idx, f, (unsigned)unit, buf))
			break;
	}
	if (!f->status && !f->dec)
		/* no samples at all: a decoder still says what it assumed */
		la_feed_logic(f, buf, 0, (unsigned)unit);
	rc = f->status ? -1 : 0;
out:
	for (int i = 0; i < BACH_BUS_MAX_UNIT * 8; i++)
		g_free(probe[i]);
	g_free(cap);
	g_free(rate);
	if (kf)
		g_key_file_free(kf);
	if (gerr)
		g_error_free(gerr);
	free(ver);
	free(meta);
	free(buf);
	zip_discard(z);
	return rc;
}

static int run_session_file(struct sr_context *ctx, const char *path,
			    struct la_feed *f)
{
	struct sr_session *sess = NULL;
	GSList *devs = NULL;
	int rc;

	if (check_srzip(path, f))
		return -1;
	rc = sr_session_load(ctx, path, &sess);
	if (rc != SR_OK) {
		la_fail(f, BACH_LA_BAD_INPUT,
			"%s: not a readable libsigrok session (.sr): %s", path,
			la_log_said() ? la_log_said()
				      : "no zip archive with a 'metadata' "
					"member here, or a damaged one");
		return -1;
	}
	if (sr_session_dev_list(sess, &devs) != SR_OK || !devs) {
		la_fail(f, BACH_LA_BAD_INPUT, "%s: the session has no device",
			path);
		goto out;
	}
	if (la_feed_channels(f, devs->data))
		goto out;
	sr_session_datafeed_callback_add(sess, datafeed, f);
	la_log_begin(); /* what the acquisition says, not the loading */
	rc = sr_session_start(sess);
	if (rc == SR_OK)
		rc = sr_session_run(sess);
	if (rc != SR_OK)
		la_fail(f, BACH_LA_BAD_INPUT, "%s: %s", path,
			la_log_said() ? la_log_said() : sr_strerror(rc));
	else if (la_log_said())
		/* the session driver logs a damaged member, then ends */
		la_fail(f, BACH_LA_BAD_DATA, "%s: damaged: %s", path,
			la_log_said());
out:
	g_slist_free(devs);
	sr_session_destroy(sess);
	return f->status ? -1 : 0;
}

/*
 * Whether the module refused its input, or logged an error and went on (as
 * the VCD module does at a timestamp that goes back): the feed fails with
 * libsigrok's reason.
 */
static bool input_failed(struct la_feed *f, const char *path,
			 const struct sr_input_module *imod, int rc)
{
	const char *why = la_log_error();

	if (rc == SR_OK && !why)
		return false;
	if (rc != SR_OK && la_log_said())
		why = la_log_said();
	la_fail(f, BACH_LA_BAD_INPUT, "%s: not valid %s input: %s", path,
		sr_input_id_get(imod), why ? why : sr_strerror(rc));
	return true;
}

static int run_input_module(struct sr_context *ctx, const char *path,
			    const struct sr_input_module *imod,
			    const struct bach_la_params *p, struct la_feed *f)
{
	struct sr_session *sess = NULL;
	struct vcd_scan vs, *vcd = NULL;
	const struct sr_input *in;
	GHashTable *opts;
	GString *buf = NULL;
	bool added = false;
	int fd, rc = SR_OK;

	opts = module_options(imod, p->options, p->noptions, f->err,
			      sizeof f->err);
	if (!opts) {
		f->status = BACH_LA_BAD_INPUT;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		la_fail(f, BACH_LA_BAD_INPUT, "%s: %s", path, strerror(errno));
		g_hash_table_destroy(opts);
		return -1;
	}
	if (!strcmp(sr_input_id_get(imod), "vcd") &&
	    check_text_whole(path, fd, f->err, sizeof f->err)) {
		f->status = BACH_LA_BAD_DATA;
		g_hash_table_destroy(opts);
		close(fd);
		return -1;
	}
	if (!strcmp(sr_input_id_get(imod), "vcd")) {
		vcd = &vs;
		vcd_scan_init(vcd, path, opts);
	}
	in = sr_input_new(imod, opts);
	g_hash_table_destroy(opts);
	if (!in) {
		la_fail(f, BACH_LA_BAD_INPUT, "%s: the %s input refused: %s",
			path, sr_input_id_get(imod),
			la_log_said() ? la_log_said() : "its options");
		close(fd);
		return -1;
	}
	la_log_begin(); /* what the input says, not the setting up */
	sr_session_new(ctx, &sess);
	sr_session_datafeed_callback_add(sess, datafeed, f);
	buf = g_string_sized_new(CHUNK);
	for (;;) {
		ssize_t got = read(fd, buf->str, CHUNK);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			la_fail(f, BACH_LA_BAD_INPUT, "%s: %s", path,
				strerror(errno));
			break;
		}
		buf->len = (gsize)got;
		if (vcd && vcd_scan(vcd, buf->str, buf->len, f))
			break;
		/* a zero-length send lets small files set up the device */
		rc = sr_input_send(in, buf);
		if (input_failed(f, path, imod, rc))
			break;
		if (!added) {
			struct sr_dev_inst *sdi = sr_input_dev_inst_get(in);

			if (sdi) {
				if (la_feed_channels(f, sdi))
					break;
				sr_session_dev_add(sess, sdi);
				added = true;
			}
		}
		if (f->status || got == 0)
			break;
	}
	if (!f->status) {
		rc = sr_input_end(in);
		input_failed(f, path, imod, rc);
	}
	if (!f->status && !added)
		la_fail(f, BACH_LA_BAD_INPUT,
			"%s: no channels found: not %s input%s%s", path,
			sr_input_id_get(imod), la_log_said() ? ": " : "",
			la_log_said() ? la_log_said() : "");
	g_string_free(buf, TRUE);
	sr_input_free(in);
	sr_session_destroy(sess);
	close(fd);
	return f->status ? -1 : 0;
}

int bach_la_decode_file(const char *path, const struct bach_la_params *p,
			struct bach_la_report *rep, char *err, size_t errlen)
{
	struct sr_context *ctx = NULL;
	const struct sr_input_module *imod = NULL;
	struct la_feed f;
	bool session;
	int rc;

	memset(rep, 0, sizeof *rep);
	if (access(path, R_OK)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return BACH_LA_BAD_INPUT;
	}
	if (la_feed_init(&f, path, p->map, p->sink, p->arg)) {
		snprintf(err, errlen, "%s", f.err);
		la_feed_free(&f);
		return BACH_LA_BAD_INPUT;
	}
	f.ads_edge = p->ads_edge;
	f.tsink = p->tsink;
	la_log_begin();
	rc = sr_init(&ctx);
	if (rc != SR_OK) {
		snprintf(err, errlen, "libsigrok: %s", sr_strerror(rc));
		la_feed_free(&f);
		return BACH_LA_BAD_INPUT;
	}
	session = p->format ? !strcmp(p->format, "srzip") : has_ext(path, "sr");
	if (!session) {
		imod = p->format ? sr_input_find((char *)p->format)
				 : module_for(path);
		if (!imod) {
			if (p->format)
				snprintf(err, errlen,
					 "--format %s: no such input format "
					 "(bach decode --list-formats lists "
					 "them)",
					 p->format);
			else
				snprintf(err, errlen,
					 "%s: cannot tell the format from the "
					 "name; say it with --format (bach "
					 "decode --list-formats lists them)",
					 path);
			sr_exit(ctx);
			la_feed_free(&f);
			return BACH_LA_BAD_INPUT;
		}
	} else if (p->noptions) {
		snprintf(err, errlen,
			 "%s: a .sr session takes no --option (it says its "
			 "own channels and rate)",
			 path);
		sr_exit(ctx);
		la_feed_free(&f);
		return BACH_LA_BAD_INPUT;
	}
	snprintf(rep->format, sizeof rep->format, "%s",
		 session ? "srzip" : sr_input_id_get(imod));
	f.format = rep->format;
	if (!session)
		run_input_module(ctx, path, imod, p, &f);
	else if (run_srzip(path, &f) == 1)
		run_session_file(ctx, path, &f);
	if (!f.status && !f.dec)
		la_fail(&f, BACH_LA_BAD_INPUT, "%s: no logic samples", path);
	la_feed_finish(&f);
	rep->samplerate = f.samplerate;
	rep->channels = f.channels;
	rep->unitsize = f.unitsize;
	if (f.resolved)
		bach_busmap_describe(&f.map, rep->assumed, sizeof rep->assumed);
	if (f.dec)
		bach_busdec_stats(f.dec, &rep->st);
	rc = f.status;
	if (rc)
		snprintf(err, errlen, "%s", f.err);
	la_feed_free(&f);
	sr_log_callback_set_default();
	sr_exit(ctx);
	return rc;
}

bool bach_la_is_capture(const char *path)
{
	struct sr_context *ctx = NULL;
	bool yes;

	if (has_ext(path, "sr"))
		return true;
	if (sr_init(&ctx) != SR_OK)
		return false;
	yes = module_for(path) != NULL;
	sr_exit(ctx);
	return yes;
}

size_t bach_la_formats(char *buf, size_t len)
{
	struct sr_context *ctx = NULL;
	const struct sr_input_module **mods;
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (sr_init(&ctx) != SR_OK)
		return 0;
	off += (size_t)snprintf(buf + off, len - off, "  %-14s %s\n", "srzip",
				"sigrok session file (.sr)");
	mods = sr_input_list();
	for (size_t i = 0; mods && mods[i] && off < len; i++) {
		const char *const *ext = sr_input_extensions_get(mods[i]);
		char exts[64] = "";
		size_t eo = 0;

		for (size_t e = 0; ext && ext[e] && eo < sizeof exts; e++)
			eo += (size_t)snprintf(exts + eo, sizeof exts - eo,
					       "%s.%s", e ? " " : " (", ext[e]);
		if (eo && eo < sizeof exts)
			snprintf(exts + eo, sizeof exts - eo, ")");
		off += (size_t)snprintf(buf + off, len - off, "  %-14s %s%s\n",
					sr_input_id_get(mods[i]),
					sr_input_description_get(mods[i]),
					exts);
	}
	sr_exit(ctx);
	return off;
}
