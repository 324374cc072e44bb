// SPDX-License-Identifier: MIT
/*
 * --type, --addr and --port (cmd.h): which records a command keeps, and
 * the block-wise compaction that keeps them. A command adds the three
 * rows to its option table, hands their codes to filter_arg(), and runs
 * each block it reads through filter_block() (read_traces() does it for
 * the commands that read through it). The rules are in docs/analysis.md,
 * "Filters".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bach/record.h"
#include "cmd.h"

/* what a record of a type needs to be kept (cls[]) */
enum { K_DROP, K_KEEP, K_ADDR, K_PORT, K_GAP };

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

static void filter_ready(struct rec_filter *f)
{
	uint16_t types = f->by_type ? f->types : 0xffff;

	for (int be = 0; be < 256; be++) {
		unsigned on = ~(unsigned)be & 0xff;

		be_first[be] = on ? (uint8_t)__builtin_ctz(on) : 0;
		be_last[be] = on ? (uint8_t)(31 - __builtin_clz(on)) : 7;
	}
	for (unsigned t = 0; t < BACH_NTYPES; t++) {
		uint8_t k = types >> t & 1 ? K_KEEP : K_DROP;

		if (k && (f->by_addr || f->by_port)) {
			if (bach_type_is_memory(t))
				k = f->by_addr ? K_ADDR : K_DROP;
			else if (t == BACH_T_IO_READ || t == BACH_T_IO_WRITE)
				k = f->by_port ? K_PORT : K_DROP;
			else
				k = K_DROP;
		}
		if (!bach_type_valid(t) && k == K_DROP)
			k = K_GAP; /* gap markers stay */
		f->cls[t] = k;
	}
	f->ready = true;
}

ssize_t filter_block(struct rec_filter *f, const uint8_t **p,
		     const uint64_t **clk, size_t n)
{
	const uint8_t *s = *p;
	const uint64_t *c = clk ? *clk : NULL;
	uint8_t *d;
	size_t k = 0;

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
	d = f->buf;
	for (size_t i = 0; i < n; i++, s += BACH_REC_SIZE) {
		unsigned m = f->cls[s[5] >> 4];
		bool keep = m == K_KEEP;

		if (m == K_ADDR || m == K_PORT) {
			uint64_t a = bach_get_be32(s);
			unsigned r = m - K_ADDR;

			keep = a + be_first[s[4]] <= f->hi[r] &&
			       a + be_last[s[4]] >= f->lo[r];
		} else if (m == K_GAP) {
			keep = (s[5] & 0x0f) == 0x0f;
		}
		/* always copied; kept when the count moves past it */
		memcpy(d + k * BACH_REC_SIZE, s, BACH_REC_SIZE);
		f->off[k] = (uint32_t)i;
		if (c)
			f->clk[k] = c[i];
		k += keep;
	}
	*p = f->buf;
	if (clk && c)
		*clk = f->clk;
	return (ssize_t)k;
}

void filter_free(struct rec_filter *f)
{
	free(f->buf);
	free(f->clk);
	free(f->off);
}
