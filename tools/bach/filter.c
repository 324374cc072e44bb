// SPDX-License-Identifier: MIT
/*
 * --type, --addr and --port (cmd.h): which records a command keeps, and
 * the block-wise compaction that keeps them. A command adds the three
 * rows to its option table, hands their codes to filter_arg(), and runs
 * each block it reads through filter_block() (read_traces() does it for
 * the commands that read through it). The rules: docs/analysis.md section
 * 6.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bach/record.h"
#include "cmd.h"

/* the groups --type names, besides the type names themselves */
static const struct {
	const char *name;
	uint16_t types;
} groups[] = {
	{ "fetch", 1u << BACH_T_I_FETCH | 1u << BACH_T_NC_I_FETCH },
	{ "read", 1u << BACH_T_D_READ | 1u << BACH_T_NC_D_READ },
	{ "write", 1u << BACH_T_D_WRITE | 1u << BACH_T_WRITE_BACK },
	{ "io", 1u << BACH_T_IO_READ | 1u << BACH_T_IO_WRITE },
	{ "special", 1u << BACH_T_SPECIAL | 1u << BACH_T_INT_ACK },
	{ "invalid", BACH_INVALID_TYPES },
};

static int parse_types(struct rec_filter *f, const char *arg)
{
	char tok[64];
	const char *s = arg;

	f->types = 0;
	for (;;) {
		size_t len = strcspn(s, ",");
		size_t g;
		int t = -1;

		if (len >= sizeof(tok))
			len = sizeof(tok) - 1;
		memcpy(tok, s, len);
		tok[len] = 0;
		for (g = 0; g < sizeof(groups) / sizeof(*groups); g++)
			if (!strcasecmp(tok, groups[g].name))
				break;
		if (g < sizeof(groups) / sizeof(*groups))
			f->types |= groups[g].types;
		else if ((t = bach_type_parse(tok)) >= 0)
			f->types |= (uint16_t)(1u << t);
		else
			return usage_error(
				"--type: unknown type '%s' (a type as bach dump prints it, or fetch, read, write, io, special, invalid)",
				tok);
		s += strcspn(s, ",");
		if (!*s++)
			return EXIT_OK;
	}
}

/* LO-HI, each a number bach_parse_u64() reads, LO <= HI < 2^32 */
static int parse_span(const char *opt, const char *arg, uint64_t *lo,
		      uint64_t *hi)
{
	const char *dash = strchr(arg, '-');
	char first[32];
	size_t len = dash ? (size_t)(dash - arg) : 0;

	if (dash && len < sizeof(first)) {
		memcpy(first, arg, len);
		first[len] = 0;
		if (parse_u64(first, lo) && parse_u64(dash + 1, hi) &&
		    *lo <= *hi && *hi <= UINT32_MAX)
			return EXIT_OK;
	}
	return usage_error("%s: not LO-HI with LO <= HI < 2^32: '%s'", opt,
			   arg);
}

int filter_arg(struct rec_filter *f, int c, const char *arg)
{
	if (c != FILTER_TYPE && c != FILTER_ADDR && c != FILTER_PORT)
		return usage_error("bad option");
	f->on = true;
	if (c == FILTER_TYPE) {
		f->by_type = true;
		return parse_types(f, arg);
	}
	if (c == FILTER_ADDR) {
		f->by_addr = true;
		return parse_span("--addr", arg, &f->lo[0], &f->hi[0]);
	}
	f->by_port = true;
	return parse_span("--port", arg, &f->lo[1], &f->hi[1]);
}

/* the first and last byte BE# (active low) enables; none: the quadword */
static uint8_t be_first[256], be_last[256];

/*
 * The tables a record is kept by, per control byte: a byte of it in
 * [tlo, thi] (all of them for a type kept whole and for a gap marker, none
 * for a type dropped); keep: kept whole. No branch per record.
 */
static void filter_ready(struct rec_filter *f)
{
	uint16_t types = f->by_type ? f->types : 0xffff;

	for (int be = 0; be < 256; be++) {
		unsigned on = ~(unsigned)be & 0xff;

		be_first[be] = on ? (uint8_t)__builtin_ctz(on) : 0;
		be_last[be] = on ? (uint8_t)(31 - __builtin_clz(on)) : 7;
	}
	for (unsigned ctl = 0; ctl < 256; ctl++) {
		unsigned t = ctl >> 4;
		int span = types >> t & 1 ? 2 : -1; /* 2: all; -1: none */

		if (span == 2 && (f->by_addr || f->by_port)) {
			if (bach_type_is_memory(t))
				span = f->by_addr ? 0 : -1;
			else if (t == BACH_T_IO_READ || t == BACH_T_IO_WRITE)
				span = f->by_port ? 1 : -1;
			else
				span = -1;
		}
		if (bach_rec_is_gap(
			    (const uint8_t[6]){ 0, 0, 0, 0, 0, (uint8_t)ctl }))
			span = 2; /* gap markers stay */
		f->tlo[ctl] = span < 0	  ? UINT64_MAX
			      : span == 2 ? 0
					  : f->lo[span];
		f->thi[ctl] = span < 0	  ? 0
			      : span == 2 ? UINT64_MAX
					  : f->hi[span];
		f->keep[ctl] = span == 2;
	}
	f->ready = true;
}

/*
 * One pass over the block; by address (ranged) or by type alone, clocks
 * (c) or not: the compiler makes each. What the loop reads is not
 * written through the records' bytes (restrict).
 */
static inline size_t compact(const struct rec_filter *restrict f,
			     const uint8_t *restrict s,
			     const uint64_t *restrict c, size_t n, bool ranged)
{
	uint8_t *restrict d = f->buf;
	uint32_t *restrict off = f->off;
	uint64_t *restrict dc = f->clk;
	size_t k = 0;

	for (size_t i = 0; i < n; i++, s += BACH_REC_SIZE) {
		unsigned keep;

		if (ranged) {
			uint64_t a = bach_get_be32(s);

			keep = (a + be_first[s[4]] <= f->thi[s[5]]) &
			       (a + be_last[s[4]] >= f->tlo[s[5]]);
		} else {
			keep = f->keep[s[5]];
		}
		/* always copied; kept when the count moves past it */
		memcpy(d + k * BACH_REC_SIZE, s, BACH_REC_SIZE);
		off[k] = (uint32_t)i;
		if (c)
			dc[k] = c[i];
		k += keep;
	}
	return k;
}

ssize_t filter_block(struct rec_filter *f, const uint8_t **p,
		     const uint64_t **clk, size_t n)
{
	const uint64_t *c = clk ? *clk : NULL;
	size_t k;

	if (!f || !f->on)
		return (ssize_t)n;
	if (!f->ready)
		filter_ready(f);
	if (n > f->cap) {
		uint8_t *b = realloc(f->buf, n * BACH_REC_SIZE);
		uint64_t *cb = b ? realloc(f->clk, n * sizeof(*cb)) : NULL;
		uint32_t *o = cb ? realloc(f->off, n * sizeof(*o)) : NULL;

		if (b)
			f->buf = b;
		if (cb)
			f->clk = cb;
		if (!o)
			return -ENOMEM;
		f->off = o;
		f->cap = n;
	}
	if (f->by_addr || f->by_port)
		k = c ? compact(f, *p, c, n, true)
		      : compact(f, *p, NULL, n, true);
	else
		k = c ? compact(f, *p, c, n, false)
		      : compact(f, *p, NULL, n, false);
	*p = f->buf;
	if (c)
		*clk = f->clk;
	return (ssize_t)k;
}

void filter_free(struct rec_filter *f)
{
	free(f->buf);
	free(f->clk);
	free(f->off);
}

json_t *filter_json(const struct rec_filter *f)
{
	json_t *t = f->by_type ? json_integer(f->types) : json_null();
	json_t *a = f->by_addr ? json_pack("[II]", (json_int_t)f->lo[0],
					   (json_int_t)f->hi[0])
			       : json_null();
	json_t *p = f->by_port ? json_pack("[II]", (json_int_t)f->lo[1],
					   (json_int_t)f->hi[1])
			       : json_null();

	return json_pack("{sososo}", "type", t, "addr", a, "port", p);
}

/* [LO, HI] with LO <= HI < 2^32, or null (not given) */
static bool span_from_json(const json_t *a, bool *on, uint64_t *lo,
			   uint64_t *hi)
{
	const json_t *l = json_array_get(a, 0), *h = json_array_get(a, 1);

	*on = !json_is_null(a);
	if (!*on)
		return true;
	if (json_array_size(a) != 2 || !json_is_integer(l) ||
	    !json_is_integer(h) || json_integer_value(l) < 0 ||
	    json_integer_value(h) < json_integer_value(l) ||
	    json_integer_value(h) > UINT32_MAX)
		return false;
	*lo = (uint64_t)json_integer_value(l);
	*hi = (uint64_t)json_integer_value(h);
	return true;
}

bool filter_from_json(struct rec_filter *f, const json_t *o)
{
	const json_t *t = json_object_get(o, "type");

	memset(f, 0, sizeof(*f));
	if (!json_is_object(o) || !t ||
	    (!json_is_null(t) &&
	     (!json_is_integer(t) || json_integer_value(t) < 0 ||
	      json_integer_value(t) > 0xffff)) ||
	    !span_from_json(json_object_get(o, "addr"), &f->by_addr, &f->lo[0],
			    &f->hi[0]) ||
	    !span_from_json(json_object_get(o, "port"), &f->by_port, &f->lo[1],
			    &f->hi[1]))
		return false;
	f->by_type = !json_is_null(t);
	f->types = f->by_type ? (uint16_t)json_integer_value(t) : 0;
	f->on = f->by_type || f->by_addr || f->by_port;
	return true;
}
