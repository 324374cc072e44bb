// SPDX-License-Identifier: MIT
/*
 * sigrok session files, .sr (la_shared.h): a zip archive of a metadata
 * member and numbered members of samples. The usual shape, one logic
 * device, is read here with libzip, every member's CRC checked and its
 * samples straight into the feed (la_feed.c); any other goes through
 * libsigrok's loader, after the same checks of the archive. la.c says
 * which file is a session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <libsigrok/libsigrok.h>
#include <zip.h>

#include "la_shared.h"

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
				"%s: damaged: member %s is missing (%s follows)",
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
			"%s: damaged: member %s ends in a partial sample (%zu of %u bytes)",
			path, name, have, unit);
	zip_fclose(m);
	return f->status ? -1 : 0;
}

int la_run_srzip(const char *path, struct la_feed *f)
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
			"%s: metadata: [device 1] needs capturefile, unitsize (1 to %d) and total probes (1 to 8 per unit byte)",
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

int la_run_session_file(struct sr_context *ctx, const char *path,
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
			la_log_said()
				? la_log_said()
				: "no zip archive with a 'metadata' member here, or a damaged one");
		return -1;
	}
	if (sr_session_dev_list(sess, &devs) != SR_OK || !devs) {
		la_fail(f, BACH_LA_BAD_INPUT, "%s: the session has no device",
			path);
		goto out;
	}
	if (la_feed_channels(f, devs->data))
		goto out;
	sr_session_datafeed_callback_add(sess, la_datafeed, f);
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
