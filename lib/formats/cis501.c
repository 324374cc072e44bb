// SPDX-License-Identifier: MIT
/*
 * CIS 501's instruction trace: Milo Martin's "Instruction Trace Format"
 * (../shared/references: 001, trace-format.html). Import only.
 */
#include "lib/formats/format_kit.h"

/* ---- CIS 501 ----------------------------------------------------------- */

enum {
	C_UOP,
	C_PC,
	C_SRC1,
	C_SRC2,
	C_DEST,
	C_FLAGS,
	C_BRANCH,
	C_LDST,
	C_IMM,
	C_ADDR,
	C_FALL,
	C_TARGET,
	C_MACRO,
	C_MICRO,
	C_NFIELDS
};

/*
 * One micro-op per line, 14 fields separated by blanks (Milo Martin's
 * trace-format.html): uop-number PC src1 src2 dest flags branch ld/st
 * immediate mem-address fallthrough-PC target-PC macro-op micro-op.
 * Micro-op 1 fetches the macro-op: PC up to the fall-through PC. A load
 * or store adds one record for its address's quadword, BE# 0x00.
 */
static int cis501_line(const char *line, size_t len, unsigned flags,
		       uint8_t *out, uint64_t *skipped, const char **why)
{
	struct scan s = { line, line + len };
	const char *f[C_NFIELDS + 1];
	size_t fl[C_NFIELDS + 1];
	unsigned nf = 0;
	uint64_t uop, pc, addr, fall, target;
	int64_t v;
	int n = 0, m;

	(void)skipped; /* every micro-op is taken */
	while (nf <= C_NFIELDS && token(&s, &f[nf], &fl[nf]))
		nf++;
	if (nf == 0)
		return 0;
	if (nf != C_NFIELDS)
		return nf > C_NFIELDS ? bad_str(why, "more than 14 fields")
				      : bad(why, "%u fields, expected 14", nf);
	{
		struct scan u = { f[C_UOP], f[C_UOP] + fl[C_UOP] };

		/* "a counter for the micro-ops within a macro-op", from 1;
		 * a 32-bit decimal */
		if (!get_dec(&u, &uop) || !at_end(&u))
			return bad_str(why, "bad micro-op number");
		if (uop == 0 || uop > UINT32_MAX)
			return bad(why,
				   "micro-op number %.*s (1 to 4294967295)",
				   (int)(fl[C_UOP] > 24 ? 24 : fl[C_UOP]),
				   f[C_UOP]);
	}
	if (!tok_hex(f[C_PC], fl[C_PC], &pc))
		return bad_str(why, "bad PC");
	/* registers are 32-bit signed decimals, -1 for none */
	for (unsigned i = C_SRC1; i <= C_DEST; i++)
		if (!tok_int(f[i], fl[i], &v) || v < INT32_MIN || v > INT32_MAX)
			return bad(
				why,
				"bad register number '%.*s' (32-bit signed decimal)",
				(int)(fl[i] > 24 ? 24 : fl[i]), f[i]);
	if (fl[C_FLAGS] != 1 || !memchr("RW-", f[C_FLAGS][0], 3))
		return bad(why, "bad flags field '%.*s' (R, W or -)",
			   (int)(fl[C_FLAGS] > 8 ? 8 : fl[C_FLAGS]),
			   f[C_FLAGS]);
	if (fl[C_BRANCH] != 1 || !memchr("TN-", f[C_BRANCH][0], 3))
		return bad(why, "bad branch field '%.*s' (T, N or -)",
			   (int)(fl[C_BRANCH] > 8 ? 8 : fl[C_BRANCH]),
			   f[C_BRANCH]);
	if (fl[C_LDST] != 1 || !memchr("LS-", f[C_LDST][0], 3))
		return bad_str(why, "bad load/store field");
	if (!tok_int(f[C_IMM], fl[C_IMM], &v))
		return bad_str(why, "bad immediate");
	if (!tok_hex(f[C_ADDR], fl[C_ADDR], &addr))
		return bad_str(why, "bad memory address");
	if (!tok_hex(f[C_FALL], fl[C_FALL], &fall))
		return bad_str(why, "bad fall-through PC");
	if (!tok_hex(f[C_TARGET], fl[C_TARGET], &target))
		return bad_str(why, "bad target PC");

	if (uop == 1) {
		if (fall <= pc)
			return bad_str(why, "fall-through PC not above PC");
		if (fall - pc > MAX_INSN)
			return bad(why,
				   "instruction of %llu bytes (at most %d)",
				   (unsigned long long)(fall - pc), MAX_INSN);
		n = split(out, pc, fall - pc, CTL_NC_I_FETCH, flags,
			  BACH_IMPORT_MAX_RECS, why);
		if (n < 0)
			return n;
	}
	if (f[C_LDST][0] == '-')
		return n;
	m = split(out + n * BACH_REC_SIZE, addr & ~(uint64_t)7, 8,
		  f[C_LDST][0] == 'L' ? CTL_NC_D_READ : CTL_D_WRITE, flags,
		  BACH_IMPORT_MAX_RECS - (unsigned)n, why);
	return m < 0 ? m : n + m;
}

const struct bach_format fmt_cis501 = {
	.name = "cis501",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "Penn CIS 501 micro-op traces",
	.line = cis501_line,
};
