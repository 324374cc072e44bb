// SPDX-License-Identifier: MIT
/*
 * What the formats of `bach convert` share (private to lib/formats/):
 * each format's file (lackey.c, dinero.c, cis501.c, p2.c, laplace.c,
 * tracematcher.c, idtrace.c, csv.c) has its parser (line(): one input
 * line or one binary record in, up to BACH_IMPORT_MAX_RECS records out),
 * its exporter (write(): a block of records out) and its descriptor;
 * formats.c lists them in bach_formats[]. docs/formats.md describes every
 * field and what is lost.
 *
 * Imports describe a trace taken with the L1 caches off: a fetch is
 * NC_I_FETCH, a load NC_D_READ, a store D_WRITE, and an access of size
 * bytes becomes one record per quadword it touches, in address order.
 * Exports run once per record over whole traces, so digits are written by
 * hand, never printf; the helpers of the loops are static inline here so
 * that they inline into each format's loop.
 */
#ifndef BACH_LIB_FORMATS_FORMAT_KIT_H
#define BACH_LIB_FORMATS_FORMAT_KIT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/formats/formats.h"

/* Private to libbach: kept out of the shared library's symbols. */
#define BACH_KIT __attribute__((visibility("hidden")))

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

/* Set *why to a reason (formatted: one buffer per thread); -EBADMSG. */
BACH_KIT __attribute__((format(printf, 2, 3))) int bad(const char **why,
						       const char *fmt, ...);
BACH_KIT int bad_str(const char **why, const char *reason);

/* ---- scanning ---------------------------------------------------------- */

struct scan {
	const char *p, *end;
};

static inline bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline void skip_ws(struct scan *s)
{
	while (s->p < s->end && is_space(*s->p))
		s->p++;
}

static inline bool at_end(const struct scan *s)
{
	return s->p == s->end;
}

/* The next run of non-blank characters; false when there is none. */
static inline bool token(struct scan *s, const char **tok, size_t *len)
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
static inline bool get_hex(struct scan *s, bool allow_0x, uint64_t *v)
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
static inline bool get_dec(struct scan *s, uint64_t *v)
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
static inline bool tok_hex(const char *t, size_t len, uint64_t *v)
{
	struct scan s = { t, t + len };

	return get_hex(&s, true, v) && at_end(&s);
}

static inline bool tok_int(const char *t, size_t len, int64_t *v)
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
static inline int split(uint8_t *out, uint64_t addr, uint64_t size, uint8_t ctl,
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

/*
 * A reference of type 'r' load, 'w' store or 'i' instruction fetch, of
 * length bytes at addr (laplace, laplace-bin, dinx): split() with the
 * import's cycle type.
 */
static inline int rwi_ref(char type, uint64_t length, uint64_t addr,
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

/* ---- exports: the reference in a record --------------------------------- */

/* Hex digits (unused where a format only imports). */
static const char hex[] __attribute__((unused)) = "0123456789abcdef";

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
static const char direction[BACH_NTYPES] __attribute__((unused)) = {
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

/* The formats' descriptors, in their files; formats.c lists them. */
BACH_KIT extern const struct bach_format fmt_lackey;
BACH_KIT extern const struct bach_format fmt_din;
BACH_KIT extern const struct bach_format fmt_dinx;
BACH_KIT extern const struct bach_format fmt_cis501;
BACH_KIT extern const struct bach_format fmt_p2;
BACH_KIT extern const struct bach_format fmt_laplace;
BACH_KIT extern const struct bach_format fmt_laplace_bin;
BACH_KIT extern const struct bach_format fmt_tracematcher;
BACH_KIT extern const struct bach_format fmt_idtrace;
BACH_KIT extern const struct bach_format fmt_csv;

#endif
