// SPDX-License-Identifier: MIT
/*
 * tracematcher: ISP RAS Trace Matcher's "Trace Format"
 * (../shared/references: 002).
 */
#include "lib/formats/format_kit.h"

/* ---- ISP RAS Trace Matcher ---------------------------------------------- */

/*
 * Trace Matcher's "Trace Format": memory access records
 * "<time> <scale> M<rw><sz><attrib> <addr> <data>" become a read or write
 * of sz bytes at addr; instruction records ("<time> <scale> <cpu> IT|IS
 * ...") and register writes ("<time> <scale> R <register> <value>") are
 * not bus cycles bach can place, and are skipped.
 */
static int tracematcher_line(const char *line, size_t len, unsigned flags,
			     uint8_t *out, uint64_t *skipped, const char **why)
{
	struct scan s = { line, line + len }, u;
	const char *t;
	size_t tl;
	uint64_t v, size, addr;
	bool write;

	if (!token(&s, &t, &tl))
		return 0;
	u = (struct scan){ t, t + tl };
	if (!get_dec(&u, &v) || !at_end(&u))
		return bad_str(why, "bad timestamp (a decimal integer)");
	if (!token(&s, &t, &tl))
		return bad_str(why, "missing timestamp unit");
	if (!token(&s, &t, &tl))
		return bad_str(why, "missing record kind");
	if (tl == 1 && *t == 'R') {
		/* register write: <register> <value> */
		if (!token(&s, &t, &tl))
			return bad_str(why,
				       "register write without a register");
		if (!token(&s, &t, &tl) || !tok_hex(t, tl, &v))
			return bad_str(why,
				       "register write without a hex value");
		(*skipped)++;
		return 0;
	}
	if (tl >= 2 && *t == 'M' && (t[1] == 'R' || t[1] == 'W')) {
		write = t[1] == 'W';
		u = (struct scan){ t + 2, t + tl };
		if (!get_dec(&u, &size))
			return bad(why, "bad access '%.*s' (M, R or W, size)",
				   (int)(tl > 16 ? 16 : tl), t);
		if (!at_end(&u) &&
		    (u.end - u.p != 1 || (*u.p != 'X' && *u.p != 'T')))
			return bad(why, "bad access attribute '%.*s' (X or T)",
				   (int)(u.end - u.p > 8 ? 8 : u.end - u.p),
				   u.p);
		if (!token(&s, &t, &tl) || !tok_hex(t, tl, &addr))
			return bad_str(why, "bad address");
		if (!token(&s, &t, &tl))
			return bad_str(why, "missing data");
		u = (struct scan){ t, t + tl };
		while (u.p < u.end && hex_digit(*u.p) >= 0)
			u.p++;
		if (!at_end(&u) ||
		    (size && size <= MAX_ACCESS && tl > 2 * size))
			return bad(why,
				   "bad data '%.*s' (at most %llu hex digits)",
				   (int)(tl > 16 ? 16 : tl), t,
				   (unsigned long long)(2 * size));
		skip_ws(&s);
		if (!at_end(&s))
			return bad_str(why, "unexpected text after the data");
		return split(out, addr, size,
			     write ? CTL_D_WRITE : CTL_NC_D_READ, flags,
			     BACH_IMPORT_MAX_RECS, why);
	}
	/* an instruction record: <cpu> IT|IS (<inst_id>) ... */
	u = (struct scan){ t, t + tl };
	if (get_dec(&u, &v) && at_end(&u) && token(&s, &t, &tl) && tl == 2 &&
	    t[0] == 'I' && (t[1] == 'T' || t[1] == 'S')) {
		(*skipped)++;
		return 0;
	}
	return bad_str(
		why,
		"not an instruction, memory access or register write record");
}

/*
 * "<time> clk M<R|W><size> <addr> <data>": data reads and writes only; the
 * data is not on record: zeros. A fetch has no place (NULL).
 */
static char *tracematcher_put(char *d, char c, uint64_t addr, unsigned size,
			      uint64_t time)
{
	if (c == 'i')
		return NULL;
	d = bach_put_dec(d, time);
	memcpy(d, " clk M", 6);
	d += 6;
	*d++ = c == 'r' ? 'R' : 'W';
	*d++ = (char)('0' + size);
	*d++ = ' ';
	for (int k = 28; k >= 0; k -= 4)
		*d++ = hex[(addr >> k) & 15];
	*d++ = ' ';
	memset(d, '0', 2 * size);
	d += 2 * size;
	*d++ = '\n';
	return d;
}

REF_WRITE(tracematcher)

const struct bach_format fmt_tracematcher = {
	.name = "tracematcher",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "ISP RAS Trace Matcher 'time clk MR|MWsize addr data'",
	.line = tracematcher_line,
	.write = tracematcher_write,
	.timed = true,
};
