// SPDX-License-Identifier: MIT
/*
 * The feed (la_shared.h): libsigrok's packets into the bus decoder, for
 * recorded captures (la_srzip.c, la_input.c) and live devices
 * (drivers/sigrok/sigrok.c) alike. It resolves the channel map once the
 * channels are known, builds the decoder at the first samples, decodes
 * every logic packet whole and hands the records to the sink, a block at
 * a time; the first failure, with its message, is kept for the caller.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/record.h"
#include "la_shared.h"

#define OUT_RECS 65536u /* records per sink call */

void la_fail(struct la_feed *f, int status, const char *fmt, ...)
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
			"%s: no logic channels (if this is not %s data, say the format with --format)",
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
				"%s: channel %s is number %d; the decoder takes at most %u channels",
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

void la_datafeed(const struct sr_dev_inst *sdi,
		 const struct sr_datafeed_packet *pkt, void *cb_data)
{
	(void)sdi;
	la_feed_packet(cb_data, pkt);
}
