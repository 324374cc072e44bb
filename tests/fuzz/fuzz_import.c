// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bach_import_line(), the pure parser behind every
 * importer. Byte 0 picks the format (bits 1..0: lackey, din, cis501, p2)
 * and bit 2 sets BACH_IMPORT_MASK_ADDRESS; the rest is one line (one
 * 12-byte p2AddrTr record for p2, though any length is tried).
 *
 * Checks: at most BACH_IMPORT_MAX_RECS records, written into a buffer of
 * exactly that size; every record valid (bach_rec_check() == 0) and, unless
 * a special cycle, requesting one contiguous, non-empty run of bytes; an
 * error is -EBADMSG with a reason; a lackey line that makes records starts
 * with one of its four operations, and a cis501 line's load/store field
 * is L, S or -.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/convert.h"
#include "bach/record.h"

#include "fuzz_check.h"


static const char *const fmt_names[] = { "lackey", "din", "cis501", "p2" };

/* The blanks that separate fields in every text format. */
static int blank(char c)
{
	return c && strchr(" \t\r\v\f", c);
}

/* Start of the field'th blank-separated field of line, or NULL. */
static const char *field(const char *line, size_t len, unsigned field,
			 size_t *flen)
{
	size_t i = 0;

	for (unsigned f = 0;; f++) {
		size_t start;

		while (i < len && blank(line[i]))
			i++;
		if (i == len)
			return NULL;
		start = i;
		while (i < len && !blank(line[i]))
			i++;
		if (f == field) {
			*flen = i - start;
			return line + start;
		}
	}
}

static void check_records(const uint8_t *out, int n)
{
	for (int i = 0; i < n; i++) {
		const uint8_t *rec = out + i * BACH_REC_SIZE;
		unsigned want = (uint8_t)~rec[4];

		CHECK(bach_rec_check(rec) == 0, "record %d: %s", i,
		      bach_fault_name(bach_rec_check(rec)));
		if (bach_type_of(rec[5]) == BACH_T_SPECIAL)
			continue;
		CHECK(want != 0, "record %d requests no byte", i);
		want >>= __builtin_ctz(want);
		CHECK((want & (want + 1)) == 0,
		      "record %d: BE# %02x is not one run of bytes", i, rec[4]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *out;
	enum bach_import_format fmt;
	const char *line, *why = NULL;
	unsigned flags;
	uint64_t skipped = 0;
	size_t len;
	int n;

	if (size < 1)
		return 0;
	if (!out)
		out = malloc(BACH_IMPORT_MAX_RECS * BACH_REC_SIZE);
	CHECK(out, "out of memory");
	fmt = (enum bach_import_format)(data[0] & 3);
	flags = data[0] & 4 ? BACH_IMPORT_MASK_ADDRESS : 0;
	line = (const char *)data + 1;
	len = size - 1;

	n = bach_import_line(fmt, line, len, flags, out, &skipped, &why);
	if (n < 0) {
		CHECK(n == -EBADMSG, "%s: returned %d", fmt_names[fmt], n);
		CHECK(why && *why, "%s: no reason given", fmt_names[fmt]);
		CHECK(strlen(why) < 200, "%s: reason too long", fmt_names[fmt]);
		return 0;
	}
	CHECK(n <= BACH_IMPORT_MAX_RECS, "%s: %d records", fmt_names[fmt], n);
	CHECK(skipped <= 1, "%s: skipped %llu", fmt_names[fmt],
	      (unsigned long long)skipped);
	CHECK(!(n && skipped), "%s: %d records from a skipped line",
	      fmt_names[fmt], n);
	check_records(out, n);
	if (fmt == BACH_IMPORT_LACKEY && n > 0) {
		size_t flen;
		const char *op = field(line, len, 0, &flen);

		CHECK(op && flen == 1 && memchr("ILSM", *op, 4),
		      "lackey: %d records from operation 0x%02x", n,
		      op ? (unsigned char)*op : 0);
	}
	if (fmt == BACH_IMPORT_CIS501 && n > 0) {
		size_t flen;
		const char *ldst = field(line, len, 7, &flen);

		CHECK(ldst && flen == 1 && memchr("LS-", *ldst, 3),
		      "cis501: %d records with load/store field 0x%02x", n,
		      ldst ? (unsigned char)*ldst : 0);
	}
	if (fmt == BACH_IMPORT_P2)
		CHECK(len == 12 || n == 0, "p2: %d records from %zu bytes", n,
		      len);
	return 0;
}
