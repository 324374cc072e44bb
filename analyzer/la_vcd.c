// SPDX-License-Identifier: MIT
/*
 * VCD files checked before libsigrok's VCD input reads them
 * (la_shared.h; la_input.c sends each chunk here first).
 *
 * libsigrok's VCD input turns time into samples: every timestamp unit from
 * one change to the next is a sample (divided by its downsample option),
 * which it writes out one by one, and it stops without an error at a
 * timestamp that goes backwards. So before each chunk goes to it, the
 * chunk's timestamps are checked here, its tokens taken as the module takes
 * them: time must never go back, nor jump more than VCD_MAX_GAP samples.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "la_shared.h"

#define VCD_MAX_GAP (1ull << 28) /* ~2 s of libsigrok's expansion */

void vcd_scan_init(struct vcd_scan *v, const char *path, GHashTable *opts)
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
			"%s:%" PRIu64 ": timestamp #%" PRIu64
			" is before the previous one (#%" PRIu64 ")",
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
			" samples after the last change, more than the %llu read between two changes (--option downsample=N or compress=N shortens such spans)",
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

int vcd_scan(struct vcd_scan *v, const char *p, size_t n, struct la_feed *f)
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

int vcd_check_whole(const char *path, int fd, char *err, size_t errlen)
{
	struct stat st;
	char last;

	if (fstat(fd, &st) || st.st_size == 0)
		return 0;
	if (pread(fd, &last, 1, st.st_size - 1) != 1)
		return 0;
	if (last != '\n') {
		snprintf(
			err, errlen,
			"%s: truncated: the last line (ending at byte %jd) is incomplete",
			path, (intmax_t)st.st_size);
		return -1;
	}
	return 0;
}
