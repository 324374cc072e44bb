// SPDX-License-Identifier: MIT
/*
 * Every format `bach convert` reads and writes (lib/formats/formats.h):
 * for each, its parser (line(): one input line or one binary record in,
 * up to BACH_IMPORT_MAX_RECS records out), its exporter (write(): a block
 * of records out), its descriptor; bach_formats[] at the end lists them.
 * docs/formats.md describes every field and what is lost.
 *
 * Imports describe a trace taken with the L1 caches off: a fetch is
 * NC_I_FETCH, a load NC_D_READ, a store D_WRITE, and an access of size
 * bytes becomes one record per quadword it touches, in address order.
 * Exports run once per record over whole traces, so digits are written by
 * hand, never printf.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/formats/formats.h"

#define CTL_I_FETCH    0x80
#define CTL_NC_I_FETCH 0x90
#define CTL_D_READ     0xc0
#define CTL_NC_D_READ  0xd0
#define CTL_WRITE_BACK 0xe0
#define CTL_D_WRITE    0xf0
#define CTL_INT_ACK    0x10
#define CTL_SPECIAL    0x30
#define CTL_IO_READ    0x50
#define CTL_IO_WRITE   0x70

/* Widest single access: lackey's own limit (MAX_DSIZE in lk_main.c). */
#define MAX_ACCESS 512
/* Longest x86 instruction. */
#define MAX_INSN 15

/* p2AddrTr request types (BYU byutr.h) */
enum {
	P2_FETCH = 0x00,
	P2_MEMREAD = 0x01,
	P2_MEMREADINV = 0x02,
	P2_MEMWRITE = 0x03,
	P2_IOREAD = 0x10,
	P2_IOWRITE = 0x11,
	P2_DEFERREPLY = 0x20,
	P2_INTA = 0x21,
	P2_CNTRLAGNTRES = 0x22,
	P2_BRTRACEREC = 0x23,
	P2_SHUTDOWN = 0x31,
	P2_FLUSH = 0x32,
	P2_HALT = 0x33,
	P2_SYNC = 0x34,
	P2_FLUSHACK = 0x35,
	P2_STOPCLKACK = 0x36,
	P2_SMIACK = 0x37,
};

#define P2_SIZE 12
#define P2_LINE 32

/* Reasons that name a value are formatted here; one per thread. */
static _Thread_local char why_buf[96];

__attribute__((format(printf, 2, 3))) static int bad(const char **why,
						     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	*why = why_buf;
	return -EBADMSG;
}

static int bad_str(const char **why, const char *reason)
{
	*why = reason;
	return -EBADMSG;
}

/* ---- scanning ---------------------------------------------------------- */

struct scan {
	const char *p, *end;
};

static inline bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && is_space(*s->p))
		s->p++;
}

static inline bool at_end(const struct scan *s)
{
	return s->p == s->end;
}

/* The next run of non-blank characters; false when there is none. */
static bool token(struct scan *s, const char **tok, size_t *len)
{
	skip_ws(s);
	if (at_end(s))
		return false;
	*tok = s->p;
	while (s->p < s->end && !is_space(*s->p))
		s->p++;
	*len = (size_t)(s->p - *tok);
	return true;
}

static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Hex number of at most 16 digits at s->p, with an optional 0x when
 * allow_0x; stops at the first non-digit. False when there is no digit or
 * the value does not fit 64 bits.
 */
static bool get_hex(struct scan *s, bool allow_0x, uint64_t *v)
{
	const char *p = s->p;
	unsigned n = 0;
	uint64_t x = 0;
	int d;

	if (allow_0x && s->end - p > 2 && p[0] == '0' &&
	    (p[1] == 'x' || p[1] == 'X') && hex_digit(p[2]) >= 0)
		p += 2;
	while (p < s->end && (d = hex_digit(*p)) >= 0) {
		if (x >> 60)
			return false;
		x = x << 4 | (uint64_t)d;
		p++;
		n++;
	}
	if (!n)
		return false;
	s->p = p;
	*v = x;
	return true;
}

/* Unsigned decimal at s->p; false without a digit or on overflow. */
static bool get_dec(struct scan *s, uint64_t *v)
{
	const char *p = s->p;
	uint64_t x = 0;

	if (p == s->end || *p < '0' || *p > '9')
		return false;
	while (p < s->end && *p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
		p++;
	}
	s->p = p;
	*v = x;
	return true;
}

/* A whole token: hex (optional 0x) / decimal with an optional sign. */
static bool tok_hex(const char *t, size_t len, uint64_t *v)
{
	struct scan s = { t, t + len };

	return get_hex(&s, true, v) && at_end(&s);
}

static bool tok_int(const char *t, size_t len, int64_t *v)
{
	struct scan s = { t, t + len };
	bool neg = false;
	uint64_t u;

	if (len && (*t == '-' || *t == '+')) {
		neg = *t == '-';
		s.p++;
	}
	if (!get_dec(&s, &u) || !at_end(&s))
		return false;
	/* the full signed range: -9223372036854775808 has no positive twin */
	if (u > (uint64_t)INT64_MAX + neg)
		return false;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

/* ---- the quadword rule ------------------------------------------------- */

/* BE# for bytes lo..hi (0..7) of a quadword: those bits clear. */
static inline uint8_t be_bytes(unsigned lo, unsigned hi)
{
	unsigned want = (0xffu >> (7 - hi)) & (0xffu << lo);

	return (uint8_t)~want;
}

/*
 * size bytes at addr as one record per quadword touched, at most room
 * records. Addresses above 4 GiB are an error unless flags masks them to
 * their low 32 bits (each quadword's address is masked on its own, so an
 * access across the 4 GiB line wraps to quadword 0).
 */
static int split(uint8_t *out, uint64_t addr, uint64_t size, uint8_t ctl,
		 unsigned flags, unsigned room, const char **why)
{
	uint64_t q = addr & ~(uint64_t)7;
	uint64_t last = addr + size - 1;
	unsigned nq;

	if (size == 0)
		return bad_str(why, "size 0");
	if (size > MAX_ACCESS)
		return bad(why, "size %llu too large (at most %d bytes)",
			   (unsigned long long)size, MAX_ACCESS);
	if (!(flags & BACH_IMPORT_MASK_ADDRESS) &&
	    (addr > 0xffffffffu || size - 1 > 0xffffffffu - addr))
		return bad_str(
			why,
			"address above 4 GiB (--mask-address keeps the low 32 bits)");
	nq = (unsigned)(((addr & 7) + size + 7) / 8);
	if (nq > room)
		return bad(why,
			   "access of %llu bytes needs more than %u records",
			   (unsigned long long)size, room);
	for (unsigned i = 0; i < nq; i++) {
		unsigned lo = i == 0 ? (unsigned)(addr & 7) : 0;
		unsigned hi = i == nq - 1 ? (unsigned)(last & 7) : 7;

		bach_rec_put(out + i * BACH_REC_SIZE,
			     (uint32_t)(q + (uint64_t)i * 8), be_bytes(lo, hi),
			     ctl);
	}
	return (int)nq;
}

/* ---- exports: the reference in a record --------------------------------- */

static const char hex[] = "0123456789abcdef";

/* Lowercase hex in as few digits as it takes, no prefix. */
static inline char *put_hex(char *d, uint64_t v)
{
	int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;

	for (int i = n - 1; i >= 0; i--) {
		d[i] = hex[v & 15];
		v >>= 4;
	}
	return d + n;
}

/*
 * Direction of each cycle type: 'r' read, 'w' write, 'i' instruction
 * fetch; 0 for the cycles din and its relatives cannot express (I/O,
 * interrupt acknowledge, special cycles, INVALID types and gap markers).
 */
static const char direction[BACH_NTYPES] = {
	[BACH_T_I_FETCH] = 'i',	   [BACH_T_NC_I_FETCH] = 'i',
	[BACH_T_D_READ] = 'r',	   [BACH_T_NC_D_READ] = 'r',
	[BACH_T_WRITE_BACK] = 'w', [BACH_T_D_WRITE] = 'w',
};

/*
 * The requested bytes of a record: address of the lowest and the count
 * from lowest to highest (BE# gaps included). BE# 0xff requests nothing;
 * it is taken as the whole quadword, as 0x00 is (so, rather than by an
 * early return: with one way to the address gcc stores it whole in
 * laplace-bin, and that export ran 15% faster).
 */
static inline uint64_t span(const uint8_t *rec, unsigned *size)
{
	unsigned want = (uint8_t)~rec[4];
	unsigned lo, hi;

	if (!want)
		want = 0xff;
	lo = (unsigned)__builtin_ctz(want);
	hi = 31 - (unsigned)__builtin_clz(want);
	*size = hi - lo + 1;
	return (uint64_t)bach_get_be32(rec) + lo;
}

/*
 * One reference of a din-like export at d: direction c ('r', 'w', 'i'),
 * address, size and time (the sidecar's, else the trace position).
 * Returns the end, or NULL when the format has no place for it.
 */
typedef char *put_ref_fn(char *d, char c, uint64_t addr, unsigned size,
			 uint64_t time);

/*
 * The loop of the din-like text exports: the memory records of a block,
 * each through put, the others skipped. Inlined into each format's write()
 * with its put, so each has its own loop and no call per record.
 */
static inline __attribute__((always_inline)) size_t
each_ref(char *dst, const uint8_t *recs, size_t n, uint64_t index,
	 const uint64_t *time, uint64_t *skipped, put_ref_fn *put)
{
	char *d = dst;
	uint64_t skip = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *rec = recs + i * BACH_REC_SIZE;
		char c = direction[rec[5] >> 4], *e;
		unsigned size;
		uint64_t addr;

		if (!c) {
			skip++;
			continue;
		}
		addr = span(rec, &size);
		e = put(d, c, addr, size, time ? time[i] : index + i);
		if (!e) {
			skip++;
			continue;
		}
		d = e;
	}
	*skipped += skip;
	return (size_t)(d - dst);
}

/* The write() of a din-like text export NAME: each_ref() with NAME_put. */
#define REF_WRITE(name)                                                        \
	static size_t name##_write(char *dst, const uint8_t *recs, size_t n,   \
				   uint64_t index, const uint64_t *time,       \
				   uint64_t *skipped,                          \
				   struct bach_export_carry *carry)            \
	{                                                                      \
		(void)carry;                                                   \
		return each_ref(dst, recs, n, index, time, skipped,            \
				name##_put);                                   \
	}

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

static const struct bach_format fmt_lackey = {
	.name = "lackey",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "valgrind --tool=lackey --trace-mem=yes",
	.line = lackey_line,
};

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

static const struct bach_format fmt_din = {
	.name = "din",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "Dinero 'label address' (0 read, 1 write, 2 fetch)",
	.ext = ".din",
	.line = din_line,
	.write = din_write,
};

/* ---- dinx (extended din) ----------------------------------------------- */

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

static const struct bach_format fmt_dinx = {
	.name = "dinx",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "extended din 'r|w|i addr size'",
	.write = dinx_write,
};

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

static const struct bach_format fmt_cis501 = {
	.name = "cis501",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "Penn CIS 501 micro-op traces",
	.line = cis501_line,
};

/* ---- BYU p2AddrTr ------------------------------------------------------ */

/* A special cycle: BE# names the kind, A4 tells stop grant from halt. */
static int special(uint8_t *out, uint32_t addr, uint8_t be)
{
	bach_rec_put(out, addr, be, CTL_SPECIAL);
	return 1;
}

/*
 * A memory transfer: a 32-byte line is one burst cycle, one record for
 * the quadword the address names with BE# 0x00; up to 16 bytes follow the
 * quadword rule.
 */
static int p2_mem(uint8_t *out, uint32_t addr, unsigned size, uint8_t ctl,
		  unsigned flags, const char **why)
{
	if (size == P2_LINE) {
		bach_rec_put(out, addr & ~7u, 0x00, ctl);
		return 1;
	}
	if (size > 16)
		return bad(why, "bad size %u (1 to 16, or 32 for a line)",
			   size);
	return split(out, addr, size, ctl, flags, BACH_IMPORT_MAX_RECS, why);
}

/*
 * 12 bytes: address (LE32), request type, size, attribute, processor,
 * delta time (LE32). Attribute bits 1..0 of 00 mean uncacheable.
 */
static int p2_record(const char *line, size_t len, unsigned flags, uint8_t *out,
		     uint64_t *skipped, const char **why)
{
	const uint8_t *p = (const uint8_t *)line;
	uint32_t addr;
	unsigned type, size;
	bool cacheable;

	if (len != P2_SIZE)
		return bad(why, "p2AddrTr record of %zu bytes, not 12", len);
	addr = bach_get_le32(p);
	type = p[4];
	size = p[5];
	cacheable = (p[6] & 3) != 0;

	switch (type) {
	case P2_FETCH:
		return p2_mem(out, addr, size,
			      cacheable ? CTL_I_FETCH : CTL_NC_I_FETCH, flags,
			      why);
	case P2_MEMREAD:
	case P2_MEMREADINV:
		return p2_mem(out, addr, size,
			      cacheable ? CTL_D_READ : CTL_NC_D_READ, flags,
			      why);
	case P2_MEMWRITE:
		/* a burst write of a whole line is the Pentium's writeback */
		return p2_mem(out, addr, size,
			      size == P2_LINE ? CTL_WRITE_BACK : CTL_D_WRITE,
			      flags, why);
	case P2_IOREAD:
		return split(out, addr, size, CTL_IO_READ, flags, 8, why);
	case P2_IOWRITE:
		return split(out, addr, size, CTL_IO_WRITE, flags, 8, why);
	case P2_INTA:
		return split(out, addr, size ? size : 1, CTL_INT_ACK, flags, 8,
			     why);
	case P2_BRTRACEREC:
		return special(out, 0, 0xdf);
	case P2_SHUTDOWN:
		return special(out, 0, 0xfe);
	case P2_FLUSH:
		return special(out, 0, 0xfd);
	case P2_HALT:
		return special(out, 0, 0xfb);
	case P2_SYNC:
		return special(out, 0, 0xf7);
	case P2_FLUSHACK:
		return special(out, 0, 0xef);
	case P2_STOPCLKACK:
		return special(out, 0x10, 0xfb);
	case P2_DEFERREPLY:
	case P2_CNTRLAGNTRES:
	case P2_SMIACK:
		(*skipped)++;
		return 0;
	default:
		return bad(why, "unknown request type 0x%02x", type);
	}
}

static const struct bach_format fmt_p2 = {
	.name = "p2",
	.alias = "p2AddrTr",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "BYU 12-byte Pentium II records (p2AddrTr)",
	.line = p2_record,
	.unit = P2_SIZE,
	.units = "p2AddrTr records",
};

/* ---- Laplace ----------------------------------------------------------- */

/*
 * Kaplan's "Laplace: Raw Trace Formats": each load, store and instruction
 * fetch is a reference record (type, timestamp, length, address space,
 * address). The document shows the type 'r' only; bach reads and writes
 * 'r' load, 'w' store, 'i' instruction fetch. The timestamp and address
 * space have no place in a BYU record and are dropped.
 */
static int laplace_ref(char type, uint64_t length, uint64_t addr,
		       unsigned flags, uint8_t *out, const char **why)
{
	uint8_t ctl;

	switch (type) {
	case 'r':
		ctl = CTL_NC_D_READ;
		break;
	case 'w':
		ctl = CTL_D_WRITE;
		break;
	case 'i':
		ctl = CTL_NC_I_FETCH;
		break;
	default:
		if (type > 0x20 && type < 0x7f)
			return bad(why,
				   "unknown reference type '%c' (r, w or i)",
				   type);
		return bad(why, "unknown reference type 0x%02x (r, w or i)",
			   (unsigned char)type);
	}
	return split(out, addr, length, ctl, flags, BACH_IMPORT_MAX_RECS, why);
}

/* "r 123456789abcdef0 4 9f8e7 9a8b7c6d": every number in hex, no 0x. */
static int laplace_line(const char *line, size_t len, unsigned flags,
			uint8_t *out, uint64_t *skipped, const char **why)
{
	static const char *const names[] = { "timestamp", "length",
					     "address space", "address" };
	static const uint64_t max[] = { UINT64_MAX, 0xff, 0xffffffffu,
					0xffffffffu };
	struct scan s = { line, line + len };
	uint64_t v[4];
	const char *t;
	size_t tl;

	(void)skipped; /* every reference is taken */
	if (!token(&s, &t, &tl))
		return 0;
	if (tl != 1)
		return bad(why, "bad reference type '%.*s'",
			   (int)(tl > 16 ? 16 : tl), t);
	for (unsigned i = 0; i < 4; i++) {
		const char *f;
		size_t fl;
		struct scan u;

		if (!token(&s, &f, &fl))
			return bad(why, "missing %s (5 fields)", names[i]);
		u = (struct scan){ f, f + fl };
		if (!get_hex(&u, false, &v[i]) || !at_end(&u) || v[i] > max[i])
			return bad(why, "bad %s '%.*s'", names[i],
				   (int)(fl > 20 ? 20 : fl), f);
	}
	skip_ws(&s);
	if (!at_end(&s))
		return bad_str(why, "more than 5 fields");
	return laplace_ref(*t, v[1], v[3], flags, out, why);
}

/* "type timestamp length asid address" */
static char *laplace_put(char *d, char c, uint64_t addr, unsigned size,
			 uint64_t time)
{
	*d++ = c;
	*d++ = ' ';
	d = put_hex(d, time);
	*d++ = ' ';
	*d++ = (char)('0' + size);
	memcpy(d, " 0 ", 3);
	d += 3;
	d = put_hex(d, addr);
	*d++ = '\n';
	return d;
}

REF_WRITE(laplace)

static const struct bach_format fmt_laplace = {
	.name = "laplace",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "Laplace text 'r|w|i timestamp length asid address'",
	.line = laplace_line,
	.write = laplace_write,
	.timed = true,
};

/*
 * The 18-byte binary record: type, u64 timestamp, u8 length, u32 address
 * space, u32 address, packed. The document gives no byte order; Laplace
 * ran on x86 hosts and logged its records as the host held them, so bach
 * takes little-endian (docs/formats.md).
 */
static int laplace_bin_line(const char *line, size_t len, unsigned flags,
			    uint8_t *out, uint64_t *skipped, const char **why)
{
	const uint8_t *p = (const uint8_t *)line;

	(void)skipped;
	if (len != BACH_LAPLACE_BIN_SIZE)
		return bad(why, "Laplace record of %zu bytes, not 18", len);
	return laplace_ref((char)p[0], p[9], bach_get_le32(p + 14), flags, out,
			   why);
}

/*
 * The same fields as the text form, 18 bytes, little-endian. Its own loop,
 * not each_ref(): there gcc 12 merged the type byte and the timestamp into
 * one store built by shifts, and the export took twice as long.
 */
static size_t laplace_bin_write(char *dst, const uint8_t *recs, size_t n,
				uint64_t index, const uint64_t *time,
				uint64_t *skipped,
				struct bach_export_carry *carry)
{
	uint8_t *b = (uint8_t *)dst;
	uint64_t skip = 0;

	(void)carry;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *rec = recs + i * BACH_REC_SIZE;
		char c = direction[rec[5] >> 4];
		unsigned size;
		uint64_t addr;

		if (!c) {
			skip++;
			continue;
		}
		addr = span(rec, &size);
		b[0] = (uint8_t)c;
		bach_put_le64(b + 1, time ? time[i] : index + i);
		b[9] = (uint8_t)size;
		bach_put_le32(b + 10, 0);
		bach_put_le32(b + 14, (uint32_t)addr);
		b += BACH_LAPLACE_BIN_SIZE;
	}
	*skipped += skip;
	return (size_t)((char *)b - dst);
}

static const struct bach_format fmt_laplace_bin = {
	.name = "laplace-bin",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "Laplace 18-byte raw reference records",
	.line = laplace_bin_line,
	.write = laplace_bin_write,
	.unit = BACH_LAPLACE_BIN_SIZE,
	.timed = true,
};

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

static const struct bach_format fmt_tracematcher = {
	.name = "tracematcher",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "ISP RAS Trace Matcher 'time clk MR|MWsize addr data'",
	.line = tracematcher_line,
	.write = tracematcher_write,
	.timed = true,
};

/* ---- IDtrace ------------------------------------------------------------ */

/* IDtrace's tags (CSE-TR-203-94, appendix A.1, "Cache Trace") */
enum {
	IDT_RDTAG = 0x10,
	IDT_WRTAG = 0x20,
	IDT_RRDTAG = 0x30,
	IDT_RWRTAG = 0x40,
	IDT_RENDTAG = 0x50,
	IDT_CLTAG = 0x60,
};
#define IDT_LINE 16 /* IDtrace's default cache line */

/*
 * A cache trace entry: a tag byte and a 4-byte address, little-endian
 * (the i486's own order: the instrumented program wrote its buffer out as
 * it held it; the report does not say). A data reference's tag is the
 * direction plus a size code: 1 byte, 2 word, 3 lword, 4 64 bits, 5 80
 * bits. CLTAG names the start of an instruction cache line.
 */
static int idtrace_line(const char *line, size_t len, unsigned flags,
			uint8_t *out, uint64_t *skipped, const char **why)
{
	static const uint8_t bytes[6] = { 0, 1, 2, 4, 8, 10 };
	const uint8_t *p = (const uint8_t *)line;
	unsigned tag, code;
	uint32_t addr;

	if (len != BACH_IDTRACE_SIZE)
		return bad(why, "IDtrace entry of %zu bytes, not 5", len);
	tag = p[0];
	addr = bach_get_le32(p + 1);
	code = tag & 0x0f;
	switch (tag & 0xf0) {
	case IDT_RDTAG:
	case IDT_WRTAG:
	case IDT_RRDTAG:
	case IDT_RWRTAG:
		if (code < 1 || code > 5)
			return bad(why, "bad size code in tag 0x%02x (1 to 5)",
				   tag);
		return split(out, addr, bytes[code],
			     (tag & 0xf0) == IDT_RDTAG ||
					     (tag & 0xf0) == IDT_RRDTAG
				     ? CTL_NC_D_READ
				     : CTL_D_WRITE,
			     flags, BACH_IMPORT_MAX_RECS, why);
	case IDT_RENDTAG:
		if (tag != IDT_RENDTAG || addr)
			return bad(
				why,
				"bad repeat-end entry (tag 0x%02x, address %08x; 0x50 and 0 expected)",
				tag, addr);
		(*skipped)++;
		return 0;
	case IDT_CLTAG:
		if (tag != IDT_CLTAG)
			break;
		return split(out, addr & ~(uint32_t)(IDT_LINE - 1), IDT_LINE,
			     CTL_NC_I_FETCH, flags, BACH_IMPORT_MAX_RECS, why);
	}
	return bad(why, "tag 0x%02x is not a cache trace entry", tag);
}

/* IDtrace's size codes (CSE-TR-203-94, A.1): 1 byte, 2 word, 3 lword,
 * 4 64 bits; a span without its own code takes the next wider one. */
static const uint8_t idt_code[9] = { 0, 1, 2, 3, 3, 4, 4, 4, 4 };

/*
 * Tag + LE32: a data reference, or the 16-byte instruction cache line a
 * fetch falls in; with a carry, a fetch in the line of the entry just
 * written adds none (docs/formats.md section 7.6).
 */
static size_t idtrace_write(char *dst, const uint8_t *recs, size_t n,
			    uint64_t index, const uint64_t *time,
			    uint64_t *skipped, struct bach_export_carry *carry)
{
	uint8_t *b = (uint8_t *)dst;
	uint64_t skip = 0, line = carry ? carry->line : 0, folded = 0;

	(void)index;
	(void)time;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *rec = recs + i * BACH_REC_SIZE;
		char c = direction[rec[5] >> 4];
		unsigned size;
		uint64_t addr;

		if (!c) {
			skip++;
			continue;
		}
		addr = span(rec, &size);
		if (c == 'i') {
			uint64_t l = (addr & ~15u) + 1;

			if (carry && l == line) {
				folded++;
				continue;
			}
			line = l;
			b[0] = 0x60;
			bach_put_le32(b + 1, (uint32_t)addr & ~15u);
		} else {
			line = 0;
			b[0] = (uint8_t)((c == 'r' ? 0x10 : 0x20) +
					 idt_code[size]);
			bach_put_le32(b + 1, (uint32_t)addr);
		}
		b += BACH_IDTRACE_SIZE;
	}
	*skipped += skip;
	if (carry) {
		carry->line = line;
		carry->folded += folded;
	}
	return (size_t)((char *)b - dst);
}

static const struct bach_format fmt_idtrace = {
	.name = "idtrace",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "IDtrace cache trace (tag + address, 5 bytes)",
	.line = idtrace_line,
	.write = idtrace_write,
	.unit = BACH_IDTRACE_SIZE,
};

/* ---- csv --------------------------------------------------------------- */

/* bach_fmt_csv() (lib/io/text.c), every record, after BACH_CSV_HEADER */
static size_t csv_write(char *dst, const uint8_t *recs, size_t n,
			uint64_t index, const uint64_t *time, uint64_t *skipped,
			struct bach_export_carry *carry)
{
	char *d = dst;

	(void)time;
	(void)skipped;
	(void)carry;
	for (size_t i = 0; i < n; i++)
		d += bach_fmt_csv(d, recs + i * BACH_REC_SIZE, index + i);
	return (size_t)(d - dst);
}

static const struct bach_format fmt_csv = {
	.name = "csv",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "index,address,be,control,type",
	.ext = ".csv",
	.write = csv_write,
	.header = BACH_CSV_HEADER,
};

/* ---- BYU, and the list ------------------------------------------------- */

/* The records themselves: the trace reader and writer take them as is. */
static const struct bach_format fmt_byu = {
	.name = "byu",
	.kind = BACH_FORMAT_BYU,
	.help = "BYU records, 6 bytes each (in: a capture directory too)",
	.ext = ".byu",
	.unit = BACH_REC_SIZE,
};

static const struct bach_format fmt_byu_gz = {
	.name = "byu.gz",
	.kind = BACH_FORMAT_BYU_GZ,
	.help = "byu in blocked gzip (in: any gzip)",
	.ext = ".byu.gz",
	.unit = BACH_REC_SIZE,
};

/*
 * Every format, in the order `bach help convert` and the messages list
 * them; a new format is one row here. The importers' order is also the
 * fuzz targets' (byte 0 picks one): append, or renumber the fuzz seeds.
 */
const struct bach_format *const bach_formats[] = {
	&fmt_byu,
	&fmt_byu_gz,
	&fmt_lackey,
	&fmt_din,
	&fmt_dinx,
	&fmt_cis501,
	&fmt_p2,
	&fmt_laplace,
	&fmt_laplace_bin,
	&fmt_tracematcher,
	&fmt_idtrace,
	&fmt_csv,
	NULL,
};

bool bach_format_can(const struct bach_format *f, enum bach_format_dir dir)
{
	if (f->kind != BACH_FORMAT_FOREIGN)
		return true;
	return dir == BACH_FORMAT_IN ? f->line != NULL : f->write != NULL;
}

const struct bach_format *bach_format_find(const char *name,
					   enum bach_format_dir dir)
{
	for (size_t i = 0; bach_formats[i]; i++) {
		const struct bach_format *f = bach_formats[i];

		if ((!strcmp(f->name, name) ||
		     (f->alias && !strcmp(f->alias, name))) &&
		    bach_format_can(f, dir))
			return f;
	}
	return NULL;
}
