// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the exports' write() and the one-record text forms.
 * Byte 0 picks what runs (modulo the exports + 3): the exports of
 * bach_formats[] in its order (din, laplace, laplace-bin,
 * tracematcher, idtrace, dinx, csv), then bach_fmt_text, bach_fmt_csv and
 * bach_fmt_jsonl record by record;
 * bytes 1..8 are the index of the first record (little-endian); the rest
 * is records (a partial last record is dropped).
 *
 * Checks: the output fits a buffer of exactly n * BACH_TEXT_MAX bytes (an
 * allocation of that size, so AddressSanitizer sees any write past it);
 * one line per record not skipped, each at most BACH_TEXT_MAX bytes with
 * its newline, printable ASCII; din and its relatives skip exactly the
 * records that are not memory cycles, csv skips none, tracematcher the
 * fetches too (it has MR/MW records only). The binary exports write
 * exactly one record of their size per record not skipped: Laplace's 18
 * bytes with a type r, w or i, the position as timestamp and a length 1
 * to 8; IDtrace's 5 bytes with a read (0x11..0x14), write (0x21..0x24) or
 * line (0x60, address a multiple of 16) tag (shared/references).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/formats/formats.h"

#include "fuzz_check.h"

/* the modes after the exports */
enum { FMT_TEXT, FMT_CSV_ONE, FMT_JSONL, NFMT_ONE };

static int is(const struct bach_format *f, const char *name)
{
	return f && !strcmp(f->name, name);
}

/* Lines in out[0..len): every one ends in '\n', fits, and is printable. */
static size_t count_lines(const char *out, size_t len, int mode)
{
	size_t lines = 0, start = 0;

	CHECK(len == 0 || out[len - 1] == '\n', "mode %d: no final newline",
	      mode);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];

		if (c == '\n') {
			CHECK(i + 1 - start <= BACH_TEXT_MAX,
			      "mode %d: line %zu is %zu bytes", mode, lines,
			      i + 1 - start);
			lines++;
			start = i + 1;
			continue;
		}
		CHECK(c >= 0x20 && c < 0x7f, "mode %d: byte 0x%02x in line %zu",
		      mode, c, lines);
	}
	return lines;
}

/* Binary exports: whole records of their size, fields as documented. */
static void check_binary(const char *out, size_t len, int mode,
			 const struct bach_format *f, size_t want,
			 uint64_t index)
{
	size_t unit = f->unit;
	uint64_t last = 0; /* position of the last one, from index */

	CHECK(len == want * unit, "mode %d: %zu bytes for %zu records", mode,
	      len, want);
	for (size_t i = 0; i < want; i++) {
		const uint8_t *b = (const uint8_t *)out + i * unit;

		if (is(f, "laplace-bin")) {
			/* the trace position, modulo 2^64 like index + i */
			uint64_t ts = bach_get_le64(b + 1) - index;

			CHECK(b[0] == 'r' || b[0] == 'w' || b[0] == 'i',
			      "laplace-bin: type 0x%02x", b[0]);
			CHECK(b[9] >= 1 && b[9] <= 8, "laplace-bin: length %u",
			      b[9]);
			CHECK(ts >= i && (i == 0 || ts > last),
			      "laplace-bin: timestamp index + %llu",
			      (unsigned long long)ts);
			last = ts;
		} else if (!is(f, "idtrace")) {
			CHECK(0, "%s: a binary export not checked", f->name);
		} else if (b[0] == 0x60) {
			CHECK(bach_get_le32(b + 1) % 16 == 0,
			      "idtrace: line at %08x", bach_get_le32(b + 1));
		} else {
			CHECK(((b[0] >> 4) == 1 || (b[0] >> 4) == 2) &&
				      (b[0] & 15) >= 1 && (b[0] & 15) <= 4,
			      "idtrace: tag 0x%02x", b[0]);
		}
	}
}

/*
 * idtrace with a carry (docs/formats.md 7.6): the entries without it, less
 * every line entry equal to the entry before it; the same whether the
 * records come in one block or two.
 */
static void check_folding(const struct bach_format *f, const char *plain,
			  size_t plen, const uint8_t *recs, size_t n,
			  uint64_t index, uint64_t skipped)
{
	char *want = malloc(plen + 1), *got = malloc(n * BACH_TEXT_MAX);
	struct bach_export_carry c1 = { 0 }, c2 = { 0 };
	size_t wlen = 0, glen, h = n / 2;
	uint64_t s1 = 0, s2 = 0, dropped = 0;

	CHECK(want && got, "out of memory");
	for (size_t off = 0; off < plen; off += BACH_IDTRACE_SIZE) {
		if (plain[off] == 0x60 && off &&
		    !memcmp(plain + off, plain + off - BACH_IDTRACE_SIZE,
			    BACH_IDTRACE_SIZE)) {
			dropped++;
			continue;
		}
		memcpy(want + wlen, plain + off, BACH_IDTRACE_SIZE);
		wlen += BACH_IDTRACE_SIZE;
	}
	glen = f->write(got, recs, n, index, NULL, &s1, &c1);
	CHECK(glen == wlen && !memcmp(got, want, wlen),
	      "idtrace folded: %zu bytes, want %zu", glen, wlen);
	CHECK(c1.folded == dropped && s1 == skipped,
	      "idtrace folded %llu (want %llu), skipped %llu (want %llu)",
	      (unsigned long long)c1.folded, (unsigned long long)dropped,
	      (unsigned long long)s1, (unsigned long long)skipped);
	glen = f->write(got, recs, h, index, NULL, &s2, &c2);
	glen += f->write(got + glen, recs + h * BACH_REC_SIZE, n - h, index + h,
			 NULL, &s2, &c2);
	CHECK(glen == wlen && !memcmp(got, want, wlen) &&
		      c2.folded == dropped && s2 == skipped,
	      "idtrace folded in two blocks differs from one");
	free(want);
	free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct bach_format *f = NULL;
	const uint8_t *recs;
	uint64_t index, skipped = 0, want_skip = 0;
	size_t n, len = 0;
	char *dst;
	int mode, nexp = (int)fuzz_nformats(BACH_FORMAT_OUT);

	if (size < 9)
		return 0;
	mode = data[0] % (nexp + NFMT_ONE);
	if (mode < nexp)
		f = fuzz_format(BACH_FORMAT_OUT, (unsigned)mode);
	index = bach_get_le64(data + 1);
	recs = data + 9;
	n = (size - 9) / BACH_REC_SIZE;
	/* exactly n * BACH_TEXT_MAX bytes (one byte when n is 0) */
	dst = malloc(n ? n * BACH_TEXT_MAX : 1);
	CHECK(dst, "out of memory");

	if (f) {
		len = f->write(dst, recs, n, index, NULL, &skipped, NULL);
		if (is(f, "idtrace") && n)
			check_folding(f, dst, len, recs, n, index, skipped);
		if (n) {
			/* times from a sidecar: any u64, the widest included */
			uint64_t *tm = malloc(n * sizeof(*tm)), tskip = 0;
			char *tdst = malloc(n * BACH_TEXT_MAX);

			CHECK(tm && tdst, "out of memory");
			for (size_t i = 0; i < n; i++)
				tm[i] = index * (i + 1) ^
					(UINT64_MAX >> (i % 64));
			f->write(tdst, recs, n, index, tm, &tskip, NULL);
			CHECK(tskip == skipped, "timed: %llu skipped, not %llu",
			      (unsigned long long)tskip,
			      (unsigned long long)skipped);
			free(tm);
			free(tdst);
		}
		for (size_t i = 0; i < n; i++) {
			unsigned t = bach_type_of(recs[i * BACH_REC_SIZE + 5]);

			if (!is(f, "csv") && !bach_type_is_memory(t))
				want_skip++;
			else if (is(f, "tracematcher") &&
				 (t == BACH_T_I_FETCH ||
				  t == BACH_T_NC_I_FETCH))
				want_skip++;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *rec = recs + i * BACH_REC_SIZE;
			size_t l;

			if (mode - nexp == FMT_TEXT)
				l = bach_fmt_text(dst + len, rec);
			else if (mode - nexp == FMT_CSV_ONE)
				l = bach_fmt_csv(dst + len, rec, index + i);
			else
				l = bach_fmt_jsonl(dst + len, rec, index + i);
			CHECK(l <= BACH_TEXT_MAX, "mode %d: %zu bytes", mode,
			      l);
			len += l;
		}
	}
	CHECK(len <= n * BACH_TEXT_MAX, "mode %d: %zu bytes for %zu records",
	      mode, len, n);
	CHECK(skipped == want_skip, "mode %d: skipped %llu of %zu, want %llu",
	      mode, (unsigned long long)skipped, n,
	      (unsigned long long)want_skip);
	if (f && f->unit) {
		check_binary(dst, len, mode, f, n - skipped, index);
		free(dst);
		return 0;
	}
	CHECK(count_lines(dst, len, mode) == n - skipped,
	      "mode %d: lines for %zu records, %llu skipped", mode, n,
	      (unsigned long long)skipped);
	free(dst);
	return 0;
}
