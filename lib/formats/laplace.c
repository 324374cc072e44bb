// SPDX-License-Identifier: MIT
/*
 * laplace and laplace-bin: Kaplan's "Laplace: Raw Trace Formats"
 * (../shared/references: 004), as text and as the 18-byte binary record.
 */
#include "lib/formats/format_kit.h"

/* ---- Laplace ----------------------------------------------------------- */

/*
 * Kaplan's "Laplace: Raw Trace Formats": each load, store and instruction
 * fetch is a reference record (type, timestamp, length, address space,
 * address). The document shows the type 'r' only; bach reads and writes
 * 'r' load, 'w' store, 'i' instruction fetch. The timestamp and address
 * space have no place in a BYU record and are dropped. Each reference
 * goes through rwi_ref() (format_kit.h).
 *
 * "r 123456789abcdef0 4 9f8e7 9a8b7c6d": every number in hex, no 0x. */
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
	return rwi_ref(*t, v[1], v[3], flags, out, why);
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

const struct bach_format fmt_laplace = {
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
	return rwi_ref((char)p[0], p[9], bach_get_le32(p + 14), flags, out,
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

const struct bach_format fmt_laplace_bin = {
	.name = "laplace-bin",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "Laplace 18-byte raw reference records",
	.line = laplace_bin_line,
	.write = laplace_bin_write,
	.unit = BACH_LAPLACE_BIN_SIZE,
	.timed = true,
};
