// SPDX-License-Identifier: MIT
/*
 * sigrok: a live logic analyzer through libsigrok, its samples through the
 * bus decoder (docs/design.md section 5) into the capture pipeline.
 *
 * Any libsigrok device, named as sigrok-cli names it: a driver and its scan
 * options, "demo", "fx2lafw:conn=1.5", "dreamsourcelab-dslogic". open()
 * scans, opens and configures it (samplerate, external clock, channels, a
 * sample limit); run() runs a libsigrok session whose datafeed hands each
 * logic packet whole to the decoder and each block of records to the ring.
 * stop() asks the session to stop, which libsigrok allows from any thread.
 * The end of the acquisition (a limit reached, the device gone) ends run()
 * and with it the capture; a device error is reported as such.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <libsigrok/libsigrok.h>

#include "drivers/driver.h"
#include "la_shared.h"

struct sigrok {
	/* the options' strings (the core's) */
	const char *device; /* "driver[:key=value...]" */
	const char *map;
	const char *channels; /* names to enable, comma-separated; or NULL */
	uint64_t samplerate, limit;
	int external_clock; /* -1: leave as it is */
	bool edge;

	struct sr_context *ctx;
	struct sr_dev_driver *drv;
	struct sr_dev_inst *sdi;
	bool opened;
	/* the session, once made; stop() may run on another thread */
	pthread_mutex_t mu;
	bool mu_init;
	struct sr_session *sess;
	bool stopping; /* under mu: a stop was asked for */
	struct bach_source *src;
	struct la_feed feed;
	bool feed_init;
};

/* A GVariant of the type libsigrok wants for config key `id`. */
static GVariant *config_value(const struct sr_key_info *ki, const char *v)
{
	uint64_t u;
	char *end;
	bool b;

	switch (ki->datatype) {
	case SR_T_UINT64:
		/* as sr_parse_sizestring() reads it, but refusing overflow */
		if (bach_parse_size(v, "Hz", &u))
			return NULL;
		return g_variant_new_uint64(u);
	case SR_T_STRING:
		return g_variant_new_string(v);
	case SR_T_BOOL:
		if (bach_parse_bool(v, &b))
			return NULL;
		return g_variant_new_boolean(b);
	case SR_T_INT32: {
		long x = strtol(v, &end, 0);

		return *v && !*end ? g_variant_new_int32((int32_t)x) : NULL;
	}
	case SR_T_FLOAT: {
		double x = strtod(v, &end);

		return *v && !*end ? g_variant_new_double(x) : NULL;
	}
	default:
		return NULL;
	}
}

static void free_config(void *p)
{
	struct sr_config *c = p;

	g_variant_unref(c->data);
	g_free(c);
}

/* "driver:key=value:key=value" into the driver and its scan options. */
static int find_device(struct bach_source *src, struct sigrok *s)
{
	gchar **parts = g_strsplit(s->device, ":", 0);
	struct sr_dev_driver **drivers = sr_driver_list(s->ctx);
	GSList *scan_opts = NULL, *devs;
	int err = 0;

	for (size_t i = 0; parts[0] && drivers && drivers[i]; i++)
		if (!strcmp(drivers[i]->name, parts[0]))
			s->drv = drivers[i];
	if (!s->drv) {
		err = bach_source_error(
			src, -ENODEV,
			"device=%s: libsigrok has no driver '%s' (sigrok-cli --list-supported lists them)",
			s->device, parts[0] ? parts[0] : "");
		goto out;
	}
	for (size_t i = 1; parts[i]; i++) {
		char *eq = strchr(parts[i], '=');
		const struct sr_key_info *ki;
		struct sr_config *c;
		GVariant *v;

		if (eq)
			*eq = '\0';
		ki = sr_key_info_name_get(SR_KEY_CONFIG, parts[i]);
		v = ki ? config_value(ki, eq ? eq + 1 : "1") : NULL;
		if (!v) {
			err = bach_source_error(
				src, -EINVAL, "device=%s: %s '%s'", s->device,
				ki ? "bad value for" : "no such option",
				parts[i]);
			goto out;
		}
		c = g_malloc0(sizeof *c);
		c->key = ki->key;
		c->data = g_variant_ref_sink(v);
		scan_opts = g_slist_append(scan_opts, c);
	}
	if (sr_driver_init(s->ctx, s->drv) != SR_OK) {
		err = bach_source_error(
			src, -EIO,
			"device=%s: the %s driver would not start: %s",
			s->device, s->drv->name,
			la_log_said() ? la_log_said() : "?");
		goto out;
	}
	devs = sr_driver_scan(s->drv, scan_opts);
	if (!devs) {
		err = bach_source_error(src, -ENODEV,
					"device=%s: no such device found%s%s",
					s->device, la_log_said() ? ": " : "",
					la_log_said() ? la_log_said() : "");
		goto out;
	}
	s->sdi = devs->data; /* the first one found */
	g_slist_free(devs);
out:
	g_slist_free_full(scan_opts, free_config);
	g_strfreev(parts);
	return err;
}

static int set_u64(struct bach_source *src, struct sigrok *s, uint32_t key,
		   const char *what, uint64_t v)
{
	if (sr_config_set(s->sdi, NULL, key, g_variant_new_uint64(v)) != SR_OK)
		return bach_source_error(
			src, -EINVAL, "%s: cannot set %s to %" PRIu64 "%s%s",
			s->device, what, v, la_log_said() ? ": " : "",
			la_log_said() ? la_log_said() : "");
	return 0;
}

static int select_channels(struct bach_source *src, struct sigrok *s)
{
	gchar **want = g_strsplit(s->channels, ",", 0);
	int err = 0;

	for (size_t i = 0; want[i]; i++) {
		bool found = false;

		for (GSList *l = sr_dev_inst_channels_get(s->sdi); l;
		     l = l->next)
			found |= !strcmp(((struct sr_channel *)l->data)->name,
					 want[i]);
		if (!found) {
			err = bach_source_error(
				src, -EINVAL,
				"channels: %s has no channel '%s'", s->device,
				want[i]);
			goto out;
		}
	}
	for (GSList *l = sr_dev_inst_channels_get(s->sdi); l; l = l->next) {
		struct sr_channel *ch = l->data;

		sr_dev_channel_enable(
			ch,
			g_strv_contains((const gchar *const *)want, ch->name));
	}
out:
	g_strfreev(want);
	return err;
}

enum {
	OPT_DEVICE,
	OPT_SAMPLERATE,
	OPT_EXTERNAL_CLOCK,
	OPT_CHANNELS,
	OPT_MAP,
	OPT_EDGE,
	OPT_LIMIT
};

static const struct bach_optdesc sigrok_options[] = {
	[OPT_DEVICE] = { .key = "device",
			 .type = BACH_OPT_STRING,
			 .arg = "DRIVER[:KEY=VALUE...]",
			 .required = true,
			 .hint = "for example demo",
			 .help = "a libsigrok driver and its scan options, as sigrok-cli names them: demo, fx2lafw:conn=1.5, ..." },
	[OPT_SAMPLERATE] = { .key = "samplerate",
			     .type = BACH_OPT_SIZE,
			     .arg = "HZ",
			     .unit = "Hz",
			     .min = 1,
			     .def_help = "the device's",
			     .help = "sample rate (k, M, G suffixes)" },
	[OPT_EXTERNAL_CLOCK] = { .key = "external_clock",
				 .type = BACH_OPT_BOOL,
				 .def_help = "as the device is",
				 .help = "sample on the device's clock input (the bus clock)" },
	[OPT_CHANNELS] = { .key = "channels",
			   .type = BACH_OPT_STRING,
			   .arg = "A,B,...",
			   .def_help = "the device's",
			   .help = "the channels to capture" },
	[OPT_MAP] = { .key = "map",
		      .type = BACH_OPT_STRING,
		      .arg = "FILE",
		      .def_help = "channels named as in the design",
		      .help = "channel map (docs/decoding.md)" },
	[OPT_EDGE] = { .key = "edge",
		       .type = BACH_OPT_BOOL,
		       .def = "0",
		       .help = "a cycle opens where ads_n falls" },
	[OPT_LIMIT] = { .key = "limit",
			.type = BACH_OPT_SIZE,
			.arg = "N",
			.min = 1,
			.def_help = "until stopped",
			.hint = "leave it out to run until stopped",
			.help = "stop after N samples" },
	{ 0 },
};

static int sigrok_open(struct bach_source *src, void *priv,
		       const struct bach_optval *opts)
{
	struct sigrok *s = priv;
	char ident[2048], e1[256], e2[256], e3[256], e4[256];
	int err;

	s->src = src;
	pthread_mutex_init(&s->mu, NULL);
	s->mu_init = true;
	s->device = opts[OPT_DEVICE].s;
	s->samplerate = opts[OPT_SAMPLERATE].set ? opts[OPT_SAMPLERATE].u : 0;
	s->external_clock = opts[OPT_EXTERNAL_CLOCK].set
				    ? (int)opts[OPT_EXTERNAL_CLOCK].u
				    : -1;
	s->channels = opts[OPT_CHANNELS].s;
	s->map = opts[OPT_MAP].s;
	s->edge = opts[OPT_EDGE].u;
	s->limit = opts[OPT_LIMIT].set ? opts[OPT_LIMIT].u : 0;
	if (la_feed_init(&s->feed, s->device, s->map, NULL, NULL)) {
		s->feed_init = true;
		return bach_source_error(src, -EINVAL, "%s", s->feed.err);
	}
	s->feed_init = true;
	s->feed.ads_edge = s->edge;
	la_log_begin();
	if (sr_init(&s->ctx) != SR_OK)
		return bach_source_error(src, -EIO,
					 "libsigrok would not start");
	err = find_device(src, s);
	if (err)
		return err;
	if (sr_dev_open(s->sdi) != SR_OK)
		return bach_source_error(src, -EIO, "%s: cannot open%s%s",
					 s->device, la_log_said() ? ": " : "",
					 la_log_said() ? la_log_said() : "");
	s->opened = true;
	if (s->channels && (err = select_channels(src, s)))
		return err;
	if (s->external_clock >= 0 &&
	    sr_config_set(s->sdi, NULL, SR_CONF_EXTERNAL_CLOCK,
			  g_variant_new_boolean(s->external_clock)) != SR_OK)
		return bach_source_error(
			src, -EINVAL,
			"%s: has no external clock input to switch", s->device);
	if (s->samplerate && (err = set_u64(src, s, SR_CONF_SAMPLERATE,
					    "samplerate", s->samplerate)))
		return err;
	if (s->limit && (err = set_u64(src, s, SR_CONF_LIMIT_SAMPLES,
				       "limit_samples", s->limit)))
		return err;
	/* the map must fit the channels before anything is captured */
	if (la_feed_channels(&s->feed, s->sdi))
		return bach_source_error(src, -EINVAL, "%s", s->feed.err);
	bach_json_escape(e1, sizeof e1, s->device);
	bach_json_escape(e2, sizeof e2,
			 sr_dev_inst_vendor_get(s->sdi)
				 ? sr_dev_inst_vendor_get(s->sdi)
				 : "");
	bach_json_escape(e3, sizeof e3,
			 sr_dev_inst_model_get(s->sdi)
				 ? sr_dev_inst_model_get(s->sdi)
				 : "");
	bach_json_escape(e4, sizeof e4, s->map ? s->map : "");
	snprintf(
		ident, sizeof ident,
		"\"name\":\"sigrok\",\"device\":\"%s\",\"vendor\":\"%s\",\"model\":\"%s\",\"channels\":%u,\"samplerate\":%" PRIu64
		",\"map\":\"%s\"",
		e1, e2, e3, s->feed.channels, s->samplerate, e4);
	bach_source_identity(src, ident);
	return 0;
}

static int to_ring(void *arg, const uint8_t *recs, size_t n)
{
	struct sigrok *s = arg;

	bach_source_records(s->src, recs, n);
	return 0;
}

static void datafeed(const struct sr_dev_inst *sdi,
		     const struct sr_datafeed_packet *pkt, void *cb_data)
{
	struct sigrok *s = cb_data;

	(void)sdi;
	la_feed_packet(&s->feed, pkt);
	if (pkt->type == SR_DF_LOGIC)
		bach_source_flush(s->src);
	if (s->feed.status && !s->feed.ended) {
		/* the decoder cannot go on: end the acquisition now, rather
		 * than run on recording nothing */
		s->feed.ended = true;
		sr_session_stop(s->sess);
	}
}

static int sigrok_run(struct bach_source *src, void *priv)
{
	struct sigrok *s = priv;
	struct sr_session *sess;
	int rc;

	s->feed.sink = to_ring;
	s->feed.arg = s;
	if (sr_session_new(s->ctx, &sess) != SR_OK)
		return bach_source_error(src, -EIO, "libsigrok: no session");
	sr_session_dev_add(sess, s->sdi);
	sr_session_datafeed_callback_add(sess, datafeed, s);
	la_log_begin(); /* what the acquisition says, not the opening */
	pthread_mutex_lock(&s->mu);
	s->sess = sess;
	if (s->stopping) {
		/* stopped before it started: nothing to acquire */
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	rc = sr_session_start(sess);
	pthread_mutex_unlock(&s->mu);
	if (rc != SR_OK)
		return bach_source_error(
			src, -EIO, "%s: acquisition would not start: %s",
			s->device,
			la_log_said() ? la_log_said() : sr_strerror(rc));
	/* a stop asked for from here on stops the running session, which
	 * sr_session_run() then drains */
	rc = sr_session_run(sess);
	la_feed_finish(&s->feed);
	if (s->feed.dec) {
		struct bach_busdec_stats st;

		bach_busdec_stats(s->feed.dec, &st);
		bach_source_decoded(src, &st);
	}
	if (s->feed.status)
		return bach_source_error(src, -EIO, "%s", s->feed.err);
	if (rc != SR_OK)
		return bach_source_error(
			src, -EIO, "%s: acquisition failed: %s", s->device,
			la_log_said() ? la_log_said() : sr_strerror(rc));
	return 0;
}

static void sigrok_stop(void *priv)
{
	struct sigrok *s = priv;

	if (!s->mu_init)
		return;
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	if (s->sess)
		sr_session_stop(s->sess);
	pthread_mutex_unlock(&s->mu);
}

static void sigrok_close(void *priv)
{
	struct sigrok *s = priv;

	if (s->sess)
		sr_session_destroy(s->sess);
	if (s->mu_init)
		pthread_mutex_destroy(&s->mu);
	if (s->opened)
		sr_dev_close(s->sdi);
	if (s->ctx)
		sr_exit(s->ctx);
	if (s->feed_init)
		la_feed_free(&s->feed);
	sr_log_callback_set_default();
}

const struct bach_driver bach_driver_sigrok = {
	.name = "sigrok",
	.summary = "a live logic analyzer on the bus pins, through libsigrok",
	.options = sigrok_options,
	.priv_size = sizeof(struct sigrok),
	.open = sigrok_open,
	.run = sigrok_run,
	.stop = sigrok_stop,
	.close = sigrok_close,
};
