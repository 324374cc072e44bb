/* SPDX-License-Identifier: MIT */
/*
 * Inside drivers/sigrok: the datafeed side shared by recorded captures
 * (la.c) and live devices (sigrok.c). A feed takes libsigrok's packets,
 * resolves the channel map once the device's channels are known, and
 * decodes every logic packet whole into records for its sink.
 */
#ifndef BACH_LA_PRIV_H
#define BACH_LA_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <libsigrok/libsigrok.h>

#include "bach/busdecode.h"
#include "bach/la.h"

struct la_feed {
	const char *what;   /* the file or device, for messages */
	const char *format; /* the input module's id, for messages */
	bach_la_sink_fn sink;
	bach_la_tsink_fn tsink; /* instead of sink, when set */
	void *arg;
	struct bach_mapspec spec;
	struct bach_busmap map;
	bool ads_edge;
	bool resolved, ended;
	unsigned channels, unitsize;
	uint64_t samplerate;
	struct bach_busdec *dec;
	uint8_t *out;
	uint64_t *at; /* each record's sample (bach_busdec_feed()) */
	int status;   /* enum bach_la_status */
	char err[1024];
};

int la_feed_init(struct la_feed *f, const char *what, const char *map,
		 bach_la_sink_fn sink, void *arg);
int la_feed_names(struct la_feed *f, const char *const *names, unsigned n);
int la_feed_channels(struct la_feed *f, const struct sr_dev_inst *sdi);
void la_feed_logic(struct la_feed *f, const uint8_t *s, size_t len,
		   unsigned unitsize);
void la_feed_packet(struct la_feed *f, const struct sr_datafeed_packet *pkt);
void la_feed_finish(struct la_feed *f);
void la_feed_free(struct la_feed *f);

/* libsigrok's log: keep its first error or warning from now on. */
void la_log_begin(void);
const char *la_log_said(void);
/* Its first error alone (libsigrok's modules log some and go on). */
const char *la_log_error(void);

#endif
