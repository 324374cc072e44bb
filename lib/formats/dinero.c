// SPDX-License-Identifier: MIT
/*
 * din, the input format of Dinero IV (its dinfmt.c), and dinx, bach's
 * din with the direction spelt out and a size (read and written).
 */
#include "lib/formats/format_kit.h"

/* ---- din --------------------------------------------------------------- */

/*
 * "label address [ignored...]" as Dinero IV's dinfmt.c reads it: label
 * and address in hex, each with an optional 0x; label 0 read, 1 write,
 * 2 fetch. din has no size: 4 bytes at the address rounded down to 4.
 * Other labels (3 misc, 4 copy-back, 5 invalidate, ...) have no bus cycle
 * and are skipped.
 */
static int din_line(const char *line, size_t len, unsigned flags, uint8_t *out,
		    uint64_t *skipped, const char **why)
{
	static const uint8_t ctl[3] = { CTL_NC_D_READ, CTL_D_WRITE,
					CTL_NC_I_FETCH };
	struct scan s = { line, line + len };
	uint64_t label, addr;

	skip_ws(&s);
	if (at_end(&s))
		return 0;
	if (!get_hex(&s, true, &label) || (!at_end(&s) && !is_space(*s.p)))
		return bad_str(why, "bad label");
	if (label > 2) {
		(*skipped)++;
		return 0;
	}
	skip_ws(&s);
	if (at_end(&s))
		return bad_str(why, "missing address");
	if (!get_hex(&s, true, &addr) || (!at_end(&s) && !is_space(*s.p)))
		return bad_str(why, "bad address");
	return split(out, addr & ~(uint64_t)3, 4, ctl[label], flags,
		     BACH_IMPORT_MAX_RECS, why);
}

/* "label address": 0 read, 1 write, 2 fetch */
static char *din_put(char *d, char c, uint64_t addr, unsigned size,
		     uint64_t time)
{
	(void)size;
	(void)time;
	*d++ = c == 'r' ? '0' : c == 'w' ? '1' : '2';
	*d++ = ' ';
	d = put_hex(d, addr);
	*d++ = '\n';
	return d;
}

REF_WRITE(din)

const struct bach_format fmt_din = {
	.name = "din",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "Dinero 'label address' (0 read, 1 write, 2 fetch)",
	.ext = ".din",
	.line = din_line,
	.write = din_write,
};

/* ---- dinx (extended din) ----------------------------------------------- */

/*
 * "r|w|i address size": bach's own extension of din (docs/formats.md
 * section 7.2), the direction spelt out and the size kept; the address in
 * hex (an optional 0x), the size in decimal. It reads back as laplace
 * does (rwi_ref()), so `--from dinx` takes what `--to dinx` writes.
 */
static int dinx_line(const char *line, size_t len, unsigned flags, uint8_t *out,
		     uint64_t *skipped, const char **why)
{
	struct scan s = { line, line + len }, u;
	const char *t, *f;
	size_t tl, fl;
	uint64_t addr, size;

	(void)skipped; /* every reference is taken */
	if (!token(&s, &t, &tl))
		return 0;
	if (tl != 1)
		return bad(why, "bad direction '%.*s' (r, w or i)",
			   (int)(tl > 16 ? 16 : tl), t);
	if (!token(&s, &f, &fl))
		return bad_str(why, "missing address (3 fields)");
	if (!tok_hex(f, fl, &addr))
		return bad(why, "bad address '%.*s'", (int)(fl > 20 ? 20 : fl),
			   f);
	if (!token(&s, &f, &fl))
		return bad_str(why, "missing size (3 fields)");
	u = (struct scan){ f, f + fl };
	if (!get_dec(&u, &size) || !at_end(&u))
		return bad(why, "bad size '%.*s'", (int)(fl > 20 ? 20 : fl), f);
	skip_ws(&s);
	if (!at_end(&s))
		return bad_str(why, "more than 3 fields");
	return rwi_ref(*t, size, addr, flags, out, why);
}

/* "r|w|i addr size" */
static char *dinx_put(char *d, char c, uint64_t addr, unsigned size,
		      uint64_t time)
{
	(void)time;
	*d++ = c;
	*d++ = ' ';
	d = put_hex(d, addr);
	*d++ = ' ';
	*d++ = (char)('0' + size);
	*d++ = '\n';
	return d;
}

REF_WRITE(dinx)

const struct bach_format fmt_dinx = {
	.name = "dinx",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "extended din 'r|w|i addr size'",
	.line = dinx_line,
	.write = dinx_write,
};
