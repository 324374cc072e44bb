// SPDX-License-Identifier: MIT
/*
 * A recorded capture through a libsigrok input module (la_shared.h): its
 * KEY=VALUE options typed as the module's own and kept within ranges the
 * decoder takes, the file sent to it in large chunks (a VCD checked
 * first by la_vcd.c), and its errors, logged or returned, made ours.
 * la.c picks the module; the packets go to the feed (la_feed.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <libsigrok/libsigrok.h>

#include "la_shared.h"

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
		snprintf(
			err, errlen,
			"--option %s: out of range for the %s input: %lld to %lld (%s)",
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
				"--option %s: the %s input has no option '%s' (it has:",
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

int la_run_input_module(struct sr_context *ctx, const char *path,
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
	    vcd_check_whole(path, fd, f->err, sizeof f->err)) {
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
	sr_session_datafeed_callback_add(sess, la_datafeed, f);
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
