// SPDX-License-Identifier: MIT
/*
 * Exports for `bach convert --to din|dinx|laplace|laplace-bin|tracematcher|
 * idtrace|csv`. These run once per record over whole traces, so digits are
 * written by hand, never printf. docs/formats.md says what each format
 * keeps and loses.
 */
#include <string.h>

#include "bach/bytes.h"
#include "bach/convert.h"
#include "bach/record.h"

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
static const char dir[BACH_NTYPES] = {
	[BACH_T_I_FETCH] = 'i',	   [BACH_T_NC_I_FETCH] = 'i',
	[BACH_T_D_READ] = 'r',	   [BACH_T_NC_D_READ] = 'r',
	[BACH_T_WRITE_BACK] = 'w', [BACH_T_D_WRITE] = 'w',
};

/*
 * The requested bytes of a record: address of the lowest and the count
 * from lowest to highest (BE# gaps included). BE# 0xff requests nothing;
 * it is taken as the whole quadword.
 */
static inline uint64_t span(const uint8_t *rec, unsigned *size)
{
	unsigned want = (uint8_t)~rec[4];
	unsigned lo, hi;

	if (!want) {
		*size = 8;
		return bach_get_be32(rec);
	}
	lo = (unsigned)__builtin_ctz(want);
	hi = 31 - (unsigned)__builtin_clz(want);
	*size = hi - lo + 1;
	return (uint64_t)bach_get_be32(rec) + lo;
}

/* IDtrace's size codes (CSE-TR-203-94, A.1): 1 byte, 2 word, 3 lword,
 * 4 64 bits; a span without its own code takes the next wider one. */
static const uint8_t idt_code[9] = { 0, 1, 2, 3, 3, 4, 4, 4, 4 };

static size_t export_csv(char *dst, const uint8_t *recs, size_t n,
			 uint64_t index)
{
	char *d = dst;

	for (size_t i = 0; i < n; i++)
		d += bach_fmt_csv(d, recs + i * BACH_REC_SIZE, index + i);
	return (size_t)(d - dst);
}

size_t bach_export_block(enum bach_export_format fmt, char *dst,
			 const uint8_t *recs, size_t n, uint64_t index,
			 uint64_t *skipped)
{
	return bach_export_block_timed(fmt, dst, recs, n, index, NULL, skipped,
				       NULL);
}

size_t bach_export_block_timed(enum bach_export_format fmt, char *dst,
			       const uint8_t *recs, size_t n, uint64_t index,
			       const uint64_t *time, uint64_t *skipped,
			       struct bach_export_carry *carry)
{
	char *d = dst;
	uint64_t skip = 0, line = carry ? carry->line : 0, folded = 0;

	if (fmt == BACH_EXPORT_CSV)
		return export_csv(dst, recs, n, index);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *rec = recs + i * BACH_REC_SIZE;
		char c = dir[rec[5] >> 4];
		unsigned size;
		uint64_t addr;

		if (!c) {
			skip++;
			continue;
		}
		addr = span(rec, &size);
		switch (fmt) {
		case BACH_EXPORT_DIN:
			/* 0 read, 1 write, 2 fetch */
			*d++ = c == 'r' ? '0' : c == 'w' ? '1' : '2';
			*d++ = ' ';
			d = put_hex(d, addr);
			break;
		case BACH_EXPORT_DINX:
			*d++ = c;
			*d++ = ' ';
			d = put_hex(d, addr);
			*d++ = ' ';
			*d++ = (char)('0' + size);
			break;
		case BACH_EXPORT_LAPLACE:
			/* type timestamp length asid address */
			*d++ = c;
			*d++ = ' ';
			d = put_hex(d, time ? time[i] : index + i);
			*d++ = ' ';
			*d++ = (char)('0' + size);
			memcpy(d, " 0 ", 3);
			d += 3;
			d = put_hex(d, addr);
			break;
		case BACH_EXPORT_LAPLACE_BIN: {
			/* the same fields, 18 bytes, little-endian */
			uint8_t *b = (uint8_t *)d;

			b[0] = (uint8_t)c;
			bach_put_le64(b + 1, time ? time[i] : index + i);
			b[9] = (uint8_t)size;
			bach_put_le32(b + 10, 0);
			bach_put_le32(b + 14, (uint32_t)addr);
			d += BACH_LAPLACE_BIN_SIZE;
			continue;
		}
		case BACH_EXPORT_TRACEMATCHER:
			/* "<time> clk M<R|W><size> <addr> <data>": data reads
			 * and writes only; the data is not on record: zeros */
			if (c == 'i') {
				skip++;
				continue;
			}
			d = bach_put_dec(d, time ? time[i] : index + i);
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
			break;
		case BACH_EXPORT_IDTRACE: {
			/* tag + LE32: a data reference, or the 16-byte
			 * instruction cache line a fetch falls in */
			uint8_t *b = (uint8_t *)d;

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
			d += BACH_IDTRACE_SIZE;
			continue;
		}
		default:
			skip++;
			continue;
		}
		*d++ = '\n';
	}
	*skipped += skip;
	if (carry) {
		carry->line = line;
		carry->folded += folded;
	}
	return (size_t)(d - dst);
}
