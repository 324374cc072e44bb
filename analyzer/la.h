/* SPDX-License-Identifier: MIT */
/*
 * Logic-analyzer data through libsigrok into the bus decoder: recorded
 * captures in any libsigrok input format (srzip .sr sessions, VCD, CSV,
 * raw binary, ...) for `bach decode` and the replay driver, and live
 * devices for the sigrok driver. Records leave through a sink in blocks.
 * No glib or libsigrok type appears here.
 */
#ifndef BACH_LA_H
#define BACH_LA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/bus/busdecode.h"

/* Take n records; nonzero stops the decode (the sink says why itself). */
typedef int (*bach_la_sink_fn)(void *arg, const uint8_t *recs, size_t n);
/*
 * The same with each record's sample index (bach_busdec_feed()'s at[]) and
 * the capture's sample rate in Hz (0 while unknown).
 */
typedef int (*bach_la_tsink_fn)(void *arg, const uint8_t *recs,
				const uint64_t *at, size_t n,
				uint64_t samplerate);

struct bach_la_params {
	const char *map;	    /* map file, or NULL: default names */
	bool ads_edge;		    /* struct bach_busmap's ads_edge */
	const char *format;	    /* input module id; NULL: by extension */
	const char *const *options; /* "key=value" for the input module */
	size_t noptions;
	bach_la_sink_fn sink;
	bach_la_tsink_fn tsink; /* used instead of sink when set */
	void *arg;
};

struct bach_la_report {
	char format[32];     /* the input module used ("srzip" for .sr) */
	uint64_t samplerate; /* 0 when the capture does not say */
	unsigned channels;   /* logic channels in the capture */
	unsigned unitsize;   /* bytes per sample */
	char assumed[1024];  /* bach_busmap_describe() of the capture */
	struct bach_busdec_stats st;
};

/* Why a decode failed. */
enum bach_la_status {
	BACH_LA_OK = 0,
	BACH_LA_BAD_INPUT = -1, /* the capture, the map or an option */
	BACH_LA_SINK = -2,	/* the sink refused (its own message) */
	BACH_LA_BAD_DATA = -3,	/* the capture is damaged: cut, corrupt, or
				 * samples that break its format's rules */
};

/*
 * Decode a recorded capture. The format follows the extension (.sr is a
 * libsigrok session, others by the input modules' own extensions) unless
 * params->format names a module. Errors name the file and the problem.
 */
int bach_la_decode_file(const char *path, const struct bach_la_params *p,
			struct bach_la_report *rep, char *err, size_t errlen);

/* Whether the name says a logic-analyzer capture (.sr, .vcd, .csv, ...). */
bool bach_la_is_capture(const char *path);

/* The input formats libsigrok offers, one "id  description" per line. */
size_t bach_la_formats(char *buf, size_t len);

#endif
