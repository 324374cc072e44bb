// SPDX-License-Identifier: MIT
/*
 * The data behind bach plot's pictures (plot_kinds.h), for `bach plot
 * KIND TRACE... --csv | --json` (docs/analysis.md section 4): what each
 * kind computed, written as text instead of drawn, so that any tool can
 * draw it again. Strings go out through jansson, so names are JSON
 * whatever bytes they hold; CSV quotes them as RFC 4180 says.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/io/manifest.h"
#include "plot_kinds.h"

void dout_flush(struct dout *d)
{
	if (d->len && !d->err)
		d->err = d->write(d->closure, (const uint8_t *)d->buf, d->len);
	d->len = 0;
}

void dout_printf(struct dout *d, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || d->err)
		return;
	if ((size_t)n < sizeof(buf)) {
		if (d->len + (size_t)n > sizeof(d->buf))
			dout_flush(d);
		memcpy(d->buf + d->len, buf, (size_t)n);
		d->len += (size_t)n;
		return;
	}
	dout_flush(d);
	{ /* longer than a line here: again */
		char *big = malloc((size_t)n + 1);

		if (!big) {
			d->err = -ENOMEM;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		d->err = d->write(d->closure, (const uint8_t *)big, (size_t)n);
		free(big);
	}
}

void dout_string(struct dout *d, const char *s)
{
	if (d->json) {
		json_t *j = json_string(s);
		char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

		if (!t) { /* not UTF-8: jansson takes none of it */
			json_decref(j);
			j = json_stringn_nocheck(s, strlen(s));
			t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
		}
		dout_printf(d, "%s", t ? t : "\"\"");
		free(t);
		json_decref(j);
		return;
	}
	if (!strpbrk(s, ",\"\r\n")) {
		dout_printf(d, "%s", s);
		return;
	}
	dout_printf(d, "\"");
	for (const char *p = s; *p; p++)
		dout_printf(d, *p == '"' ? "\"\"" : "%c", *p);
	dout_printf(d, "\"");
}

static const char *rule_event(int kind)
{
	return bach_manifest_ev_name((enum bach_manifest_ev)kind);
}

/* JSON only: a CSV file is the one table */
void dout_rules(struct dout *d, const struct rules *rs)
{
	if (!d->json)
		return;
	dout_printf(d, ",\"events\":[");
	for (size_t i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->r[i];

		dout_printf(d, "%s{\"event\":\"%s\",\"at\":%llu", i ? "," : "",
			    rule_event(r->kind), (unsigned long long)r->at);
		if (r->kind == BACH_EV_GAP)
			dout_printf(d, ",\"lost\":%llu",
				    (unsigned long long)r->count);
		dout_printf(d, ",\"label\":");
		dout_string(d, r->label);
		dout_printf(d, "}");
	}
	dout_printf(d, "],\"events_left_out\":%llu",
		    (unsigned long long)rs->dropped);
}
