/* SPDX-License-Identifier: MIT */
/*
 * What the analyzer's files share, and with them the sigrok driver
 * (drivers/sigrok/sigrok.c), which takes the feed and the log. la.c reads
 * a recorded capture (analyzer/la.h): it hands the file to a reader,
 * a session's (la_srzip.c) or an input module's (la_input.c, with
 * la_vcd.c's checks for VCD); each gives libsigrok's packets to a feed
 * (la_feed.c), which decodes them into records for the sink. la_log.c
 * keeps what libsigrok's log says, for the messages.
 */
#ifndef BACH_LA_SHARED_H
#define BACH_LA_SHARED_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <libsigrok/libsigrok.h>

#include "analyzer/la.h"
#include "lib/bus/busdecode.h"

#define CHUNK (4u << 20) /* bytes of a file per sr_input_send */

/* ---- the feed (la_feed.c) ---------------------------------------------- */

/*
 * The datafeed side shared by recorded captures and live devices. A feed
 * takes libsigrok's packets, resolves the channel map once the device's
 * channels are known, and decodes every logic packet whole into records
 * for its sink.
 */
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

/* The feed fails with status and a message; its first failure stays. */
void la_fail(struct la_feed *f, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* libsigrok's datafeed callback: the packet to the feed in cb_data. */
void la_datafeed(const struct sr_dev_inst *sdi,
		 const struct sr_datafeed_packet *pkt, void *cb_data);

/* ---- libsigrok's log (la_log.c) ---------------------------------------- */

/* libsigrok's log: keep its first error or warning from now on. */
void la_log_begin(void);
const char *la_log_said(void);
/* Its first error alone (libsigrok's modules log some and go on). */
const char *la_log_error(void);

/* ---- the readers of recorded captures, for la.c ------------------------ */

/*
 * A sigrok session of version 2 with logic channels only, read here with
 * libzip: every member inflated once, its CRC checked, its samples straight
 * into the decoder. libsigrok's own loader, used for any other shape,
 * neither checks CRCs nor avoids a copy of every chunk. Returns 1 when the
 * file is not of this shape, 0 when decoded, -1 when it failed.
 */
int la_run_srzip(const char *path, struct la_feed *f);
/* Any other session, through libsigrok's loader (la_srzip.c). */
int la_run_session_file(struct sr_context *ctx, const char *path,
			struct la_feed *f);
/* Any other format, through its input module (la_input.c). */
int la_run_input_module(struct sr_context *ctx, const char *path,
			const struct sr_input_module *imod,
			const struct bach_la_params *p, struct la_feed *f);

/* ---- VCD (la_vcd.c), checked before libsigrok's input reads it --------- */

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
void vcd_scan_init(struct vcd_scan *v, const char *path, GHashTable *opts);
/* The next bytes of the file; tokens may run on into the next chunk. */
int vcd_scan(struct vcd_scan *v, const char *p, size_t n, struct la_feed *f);
/* A VCD cut short ends in the middle of a line. */
int vcd_check_whole(const char *path, int fd, char *err, size_t errlen);

#endif
