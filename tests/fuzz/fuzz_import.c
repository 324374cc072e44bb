// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the imports' line(), the pure parser behind every
 * importer. Byte 0 picks the format: bits 2..0, then 7..5 above them, are
 * k, and the k-th import of bach_formats[] (counted around) is taken,
 * so 0 to 8 are lackey, din, cis501, p2, laplace, laplace-bin,
 * tracematcher, idtrace, dinx, as the seeds were made; bit 3 sets
 * BACH_IMPORT_MASK_ADDRESS; the rest is one line (one binary record for
 * the binary formats, though any length is tried).
 *
 * Checks: at most BACH_IMPORT_MAX_RECS records, written into a buffer of
 * exactly that size; every record valid (bach_rec_check() == 0) and, unless
 * a special cycle, requesting one contiguous, non-empty run of bytes; an
 * error is -EBADMSG with a reason; a lackey line that makes records starts
 * with one of its four operations. From the format documents
 * (shared/references): a cis501 line that is taken has a micro-op number
 * other than 0, flags R, W or -, branch T, N or -, load/store L, S or -;
 * a Laplace reference (text or 18 bytes) of type r, w or i makes the
 * quadwords of its length at its address, a load NC_D_READ, a store
 * D_WRITE, a fetch NC_I_FETCH; a Trace Matcher line makes records only
 * from MR (reads) or MW (writes); an IDtrace entry only from a read tag
 * (0x1N, 0x3N), a write tag (0x2N, 0x4N), N 1..5, or CLTAG 0x60 (a
 * 16-byte line: two fetch records).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/formats/formats.h"

#include "fuzz_check.h"

/* every record of out[0..n) has control ctl */
static void check_ctl(const uint8_t *out, int n, unsigned ctl, const char *fmt)
{
	for (int i = 0; i < n; i++)
		CHECK(out[i * BACH_REC_SIZE + 5] == ctl,
		      "%s: record %d control %02x, want %02x", fmt, i,
		      out[i * BACH_REC_SIZE + 5], ctl);
}

/* Laplace type letter to control byte, 0 for none */
static unsigned laplace_ctl(char t)
{
	return t == 'r' ? 0xd0 : t == 'w' ? 0xf0 : t == 'i' ? 0x90 : 0;
}

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
	const struct bach_format *f;
	const char *line, *why = NULL, *fmt;
	unsigned flags;
	uint64_t skipped = 0;
	size_t len;
	int n;

	if (size < 1)
		return 0;
	if (!out)
		out = malloc(BACH_IMPORT_MAX_RECS * BACH_REC_SIZE);
	CHECK(out, "out of memory");
	f = fuzz_format(BACH_FORMAT_IN,
			(data[0] & 7u) | (unsigned)(data[0] >> 5) << 3);
	fmt = f->name;
	flags = data[0] & 8 ? BACH_IMPORT_MASK_ADDRESS : 0;
	line = (const char *)data + 1;
	len = size - 1;

	n = f->line(line, len, flags, out, &skipped, &why);
	if (n < 0) {
		CHECK(n == -EBADMSG, "%s: returned %d", fmt, n);
		CHECK(why && *why, "%s: no reason given", fmt);
		CHECK(strlen(why) < 200, "%s: reason too long", fmt);
		return 0;
	}
	CHECK(n <= BACH_IMPORT_MAX_RECS, "%s: %d records", fmt, n);
	CHECK(skipped <= 1, "%s: skipped %llu", fmt,
	      (unsigned long long)skipped);
	CHECK(!(n && skipped), "%s: %d records from a skipped line", fmt, n);
	check_records(out, n);
	if (!strcmp(fmt, "lackey") && n > 0) {
		size_t flen;
		const char *op = field(line, len, 0, &flen);

		CHECK(op && flen == 1 && memchr("ILSM", *op, 4),
		      "lackey: %d records from operation 0x%02x", n,
		      op ? (unsigned char)*op : 0);
	}
	if (!strcmp(fmt, "cis501") && n > 0) {
		size_t flen;
		const char *ldst = field(line, len, 7, &flen);

		CHECK(ldst && flen == 1 && memchr("LS-", *ldst, 3),
		      "cis501: %d records with load/store field 0x%02x", n,
		      ldst ? (unsigned char)*ldst : 0);
	}
	if (!strcmp(fmt, "cis501") && n >= 0) {
		size_t fu, ff, fb;
		const char *uop = field(line, len, 0, &fu);
		const char *fl = field(line, len, 5, &ff);
		const char *br = field(line, len, 6, &fb);

		if (uop) {
			CHECK(!(fu == 1 && *uop == '0'),
			      "cis501: micro-op 0 taken");
			CHECK(fl && ff == 1 && memchr("RW-", *fl, 3),
			      "cis501: flags field not R, W or -");
			CHECK(br && fb == 1 && memchr("TN-", *br, 3),
			      "cis501: branch field not T, N or -");
		}
	}
	if (!strcmp(fmt, "laplace") && n > 0) {
		size_t ft;
		const char *t = field(line, len, 0, &ft);

		CHECK(t && ft == 1 && laplace_ctl(*t),
		      "laplace: records from type field");
		CHECK(!field(line, len, 5, &ft), "laplace: more than 5 fields");
		check_ctl(out, n, laplace_ctl(*t), "laplace");
	}
	if (!strcmp(fmt, "laplace-bin") && n > 0) {
		const uint8_t *p = (const uint8_t *)line;
		uint32_t addr;
		unsigned want;

		CHECK(len == 18, "laplace-bin: records from %zu bytes", len);
		addr = bach_get_le32(p + 14);
		want = ((addr & 7) + p[9] + 7) / 8;
		CHECK(laplace_ctl((char)p[0]), "laplace-bin: type 0x%02x",
		      p[0]);
		check_ctl(out, n, laplace_ctl((char)p[0]), "laplace-bin");
		CHECK((unsigned)n == want, "laplace-bin: %d records, want %u",
		      n, want);
		CHECK(bach_get_be32(out) == (addr & ~7u),
		      "laplace-bin: first record at %08x for address %08x",
		      bach_get_be32(out), addr);
	}
	if (!strcmp(fmt, "tracematcher") && n > 0) {
		size_t fk;
		const char *k = field(line, len, 2, &fk);

		CHECK(k && fk >= 3 && k[0] == 'M' &&
			      (k[1] == 'R' || k[1] == 'W'),
		      "tracematcher: records from a line not MR/MW");
		check_ctl(out, n, k[1] == 'R' ? 0xd0 : 0xf0, "tracematcher");
	}
	if (!strcmp(fmt, "idtrace") && n > 0) {
		unsigned tag = (uint8_t)line[0], hi = tag >> 4, lo = tag & 15;

		CHECK(len == 5, "idtrace: records from %zu bytes", len);
		if (tag == 0x60) {
			CHECK(n == 2, "idtrace: a line is %d records", n);
			check_ctl(out, n, 0x90, "idtrace");
		} else {
			CHECK(hi >= 1 && hi <= 4 && lo >= 1 && lo <= 5,
			      "idtrace: records from tag 0x%02x", tag);
			check_ctl(out, n, hi == 1 || hi == 3 ? 0xd0 : 0xf0,
				  "idtrace");
		}
	}
	if (!strcmp(fmt, "p2"))
		CHECK(len == 12 || n == 0, "p2: %d records from %zu bytes", n,
		      len);
	return 0;
}
