// SPDX-License-Identifier: MIT
/*
 * lackey: the memory trace of valgrind's lackey tool
 * (valgrind --tool=lackey --trace-mem=yes; lackey/lk_main.c). Import only.
 */
#include "lib/formats/format_kit.h"

/* ---- lackey ------------------------------------------------------------ */

/*
 * "I  04016a0e,3", " L 04222cac,8", " S 04222cac,4", " M 0421be08,4":
 * operation, hex address, comma, decimal size. "==pid==" lines are
 * valgrind's own and are passed over, as are blank lines.
 */
static int lackey_line(const char *line, size_t len, unsigned flags,
		       uint8_t *out, uint64_t *skipped, const char **why)
{
	struct scan s = { line, line + len };
	uint64_t addr, size;
	const char *op;
	size_t oplen;
	int n, m;

	(void)skipped; /* nothing in a lackey trace lacks a bus cycle */
	if (len >= 2 && line[0] == '=' && line[1] == '=')
		return 0;
	if (!token(&s, &op, &oplen))
		return 0;
	if (oplen != 1 || !memchr("ILSM", *op, 4))
		return bad(why, "unknown operation '%.*s'",
			   (int)(oplen > 16 ? 16 : oplen), op);
	skip_ws(&s);
	if (!get_hex(&s, false, &addr))
		return bad_str(why, "bad address");
	if (at_end(&s) || *s.p != ',')
		return bad_str(why, at_end(&s) || is_space(*s.p)
					    ? "missing ',' before the size"
					    : "bad address");
	s.p++;
	if (!get_dec(&s, &size))
		return bad_str(why, "bad size");
	skip_ws(&s);
	if (!at_end(&s))
		return bad_str(why, "unexpected text after the size");

	switch (*op) {
	case 'I':
		return split(out, addr, size, CTL_NC_I_FETCH, flags,
			     BACH_IMPORT_MAX_RECS, why);
	case 'L':
		return split(out, addr, size, CTL_NC_D_READ, flags,
			     BACH_IMPORT_MAX_RECS, why);
	case 'S':
		return split(out, addr, size, CTL_D_WRITE, flags,
			     BACH_IMPORT_MAX_RECS, why);
	default: /* 'M': the read, then the write */
		n = split(out, addr, size, CTL_NC_D_READ, flags,
			  BACH_IMPORT_MAX_RECS / 2, why);
		if (n < 0)
			return n;
		m = split(out + n * BACH_REC_SIZE, addr, size, CTL_D_WRITE,
			  flags, BACH_IMPORT_MAX_RECS / 2, why);
		return m < 0 ? m : n + m;
	}
}

const struct bach_format fmt_lackey = {
	.name = "lackey",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "valgrind --tool=lackey --trace-mem=yes",
	.line = lackey_line,
};
