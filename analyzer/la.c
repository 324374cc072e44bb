// SPDX-License-Identifier: MIT
/*
 * Recorded logic-analyzer captures through libsigrok (analyzer/la.h).
 *
 * A .sr file is a libsigrok session (sr_session_load), anything else goes
 * through an input module fed the file in large chunks. Either way the
 * samples arrive as SR_DF_LOGIC packets in the datafeed callback, where the
 * bus decoder turns each whole packet into records, a block at a time.
 *
 * libsigrok reports problems through its log; while a decode runs, the
 * log's errors and warnings are kept, so that our message can say what
 * libsigrok found wrong rather than only that something failed.
 *
 * This file picks the reader by the name or --format, runs it and
 * reports: sessions are la_srzip.c's, other formats la_input.c's (with
 * la_vcd.c's checks of a VCD); both give the packets to a feed
 * (la_feed.c), and la_log.c keeps the log. la_shared.h holds what they
 * share; la_none.c stands in for this file without libsigrok.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libsigrok/libsigrok.h>

#include "analyzer/la.h"
#include "la_shared.h"

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
				snprintf(
					err, errlen,
					"--format %s: no such input format (bach decode --list-formats lists them)",
					p->format);
			else
				snprintf(
					err, errlen,
					"%s: cannot tell the format from the name; say it with --format (bach decode --list-formats lists them)",
					path);
			sr_exit(ctx);
			la_feed_free(&f);
			return BACH_LA_BAD_INPUT;
		}
	} else if (p->noptions) {
		snprintf(
			err, errlen,
			"%s: a .sr session takes no --option (it says its own channels and rate)",
			path);
		sr_exit(ctx);
		la_feed_free(&f);
		return BACH_LA_BAD_INPUT;
	}
	snprintf(rep->format, sizeof rep->format, "%s",
		 session ? "srzip" : sr_input_id_get(imod));
	f.format = rep->format;
	if (!session)
		la_run_input_module(ctx, path, imod, p, &f);
	else if (la_run_srzip(path, &f) == 1)
		la_run_session_file(ctx, path, &f);
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
