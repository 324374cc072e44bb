// SPDX-License-Identifier: MIT
/*
 * The record-aware deflate encoder: every output read back by zlib's
 * inflate, at every level, for traces, edge cases and inputs made to push
 * the Huffman codes to their length limit; refusals instead of overflows;
 * blocks that do not depend on the blocks before them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "bach/bytes.h"
#include "bach/trace.h"
#include "lib/bus/gen.h"
#include "lib/io/recdeflate.h"

#define MAX_IN BACH_RECDEFLATE_MAX_INPUT
/* room for the largest output the tests accept */
#define OUT_CAP (MAX_IN + MAX_IN / 8 + 64)

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint8_t *gen(size_t n, uint64_t seed)
{
	uint8_t *p = malloc(n * 6 + 8);
	struct bach_gen g;

	assert_non_null(p);
	bach_gen_init(&g, seed);
	bach_gen_fill(&g, p, n);
	return p;
}

/* zlib inflates exactly len bytes equal to src from the raw stream. */
static void inflates_to(const uint8_t *z, size_t zlen, const uint8_t *src,
			size_t len)
{
	uint8_t *out = malloc(len + 1);
	z_stream zs = { 0 };

	assert_non_null(out);
	assert_int_equal(inflateInit2(&zs, -15), Z_OK);
	zs.next_in = (uint8_t *)z;
	zs.avail_in = (uInt)zlen;
	zs.next_out = out;
	zs.avail_out = (uInt)len + 1;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.avail_in, 0); /* nothing after the final block */
	assert_int_equal(zs.total_out, len);
	if (len)
		assert_memory_equal(out, src, len);
	inflateEnd(&zs);
	free(out);
}

/* Compress at level, check it through zlib, return the size. */
static size_t round_trip(int level, const uint8_t *src, size_t len)
{
	static uint8_t z[OUT_CAP];
	struct bach_recdeflate *c = bach_recdeflate_new(level);
	size_t zlen;

	assert_non_null(c);
	zlen = bach_recdeflate(c, src, len, z, sizeof(z));
	assert_true(zlen > 0);
	inflates_to(z, zlen, src, len);
	bach_recdeflate_free(c);
	return zlen;
}

static void traces_all_levels(void **state)
{
	static const size_t sizes[] = {
		BACH_BGZF_MAX_INPUT, 60000, 6000, 600, 60, 12, 6
	};
	uint8_t *src = gen(MAX_IN / 6, 1);

	(void)state;
	for (int level = BACH_RECDEFLATE_MIN_LEVEL;
	     level <= BACH_RECDEFLATE_MAX_LEVEL; level++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
			round_trip(level, src, sizes[i]);
		/* a full block of a trace shrinks a lot */
		assert_true(round_trip(level, src, BACH_BGZF_MAX_INPUT) * 3 <
			    BACH_BGZF_MAX_INPUT);
	}
	free(src);
	for (uint64_t seed = 2; seed < 6; seed++) {
		src = gen(MAX_IN / 6, seed);
		for (int level = BACH_RECDEFLATE_MIN_LEVEL;
		     level <= BACH_RECDEFLATE_MAX_LEVEL; level++)
			round_trip(level, src, MAX_IN / 6 * 6);
		free(src);
	}
}

static void edge_inputs(void **state)
{
	static uint8_t src[MAX_IN];

	(void)state;
	for (int level = BACH_RECDEFLATE_MIN_LEVEL;
	     level <= BACH_RECDEFLATE_MAX_LEVEL; level++) {
		/* nothing, one byte, part of a record, records and a bit */
		round_trip(level, src, 0);
		src[0] = 0x42;
		round_trip(level, src, 1);
		round_trip(level, (const uint8_t *)"\x12\x34\x56\x78\x00", 5);
		memset(src, 0, sizeof(src));
		round_trip(level, src, 7);
		/* one value, the largest input: long matches only */
		memset(src, 0xa5, sizeof(src));
		assert_true(round_trip(level, src, MAX_IN) < 400);
		/* one record again and again, any length */
		for (size_t i = 0; i < MAX_IN; i++)
			src[i] = (uint8_t)(0x10 + i % 6);
		round_trip(level, src, MAX_IN);
		round_trip(level, src, 6001);
		/* every byte value, counting up */
		for (size_t i = 0; i < MAX_IN; i++)
			src[i] = (uint8_t)i;
		round_trip(level, src, MAX_IN);
		/* records that share all but one byte with the one before */
		for (size_t i = 0; i < MAX_IN / 6; i++) {
			bach_put_be32(src + 6 * i,
				      0x00400000u + (uint32_t)i * 32);
			src[6 * i + 4] = 0;
			src[6 * i + 5] = 0xc0;
		}
		round_trip(level, src, MAX_IN / 6 * 6);
	}
}

/* Noise does not fit; what the encoder refuses it leaves alone. */
static void refuses_what_does_not_fit(void **state)
{
	static uint8_t src[MAX_IN], z[OUT_CAP];
	uint8_t *t = gen(MAX_IN / 6, 3);
	struct bach_recdeflate *c = bach_recdeflate_new(2);
	size_t zlen;

	(void)state;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)next();
	memset(z, 0xee, sizeof(z));
	assert_int_equal(bach_recdeflate(c, src, sizeof(src), z, sizeof(src)),
			 0);
	for (size_t i = 0; i < sizeof(z); i++)
		assert_int_equal(z[i], 0xee);
	/* with room it is coded, a little larger than the input */
	zlen = bach_recdeflate(c, src, sizeof(src), z, sizeof(z));
	assert_true(zlen > sizeof(src));
	inflates_to(z, zlen, src, sizeof(src));

	/* a trace block: refused with one byte too few, taken with enough */
	zlen = bach_recdeflate(c, t, BACH_BGZF_MAX_INPUT, z, sizeof(z));
	assert_true(zlen > 0);
	memset(z, 0xee, sizeof(z));
	assert_int_equal(
		bach_recdeflate(c, t, BACH_BGZF_MAX_INPUT, z, zlen + 7), 0);
	for (size_t i = 0; i < sizeof(z); i++)
		assert_int_equal(z[i], 0xee);
	assert_int_equal(
		bach_recdeflate(c, t, BACH_BGZF_MAX_INPUT, z, zlen + 8), zlen);
	inflates_to(z, zlen, t, BACH_BGZF_MAX_INPUT);
	/* too large an input is refused */
	assert_int_equal(bach_recdeflate(c, src, MAX_IN + 1, z, sizeof(z)), 0);
	bach_recdeflate_free(c);
	free(t);
}

static bool window_repeats(const uint8_t *s, size_t p, size_t d)
{
	return p >= d + 2 && s[p] == s[p - d] && s[p - 1] == s[p - 1 - d] &&
	       s[p - 2] == s[p - 2 - d];
}

/*
 * Literal counts of 1, 2, 3, 5, ... 6765 (with the end-of-block code's 1,
 * a Fibonacci sequence) beside 16 bytes of 1000 each: an optimal code for
 * them is 19 bits deep, deeper than deflate's 15, so the lengths must be
 * limited. The bytes are drawn so that (nearly) nothing matches: no 3
 * bytes as 6 or 12 bytes before, no record twice.
 */
static void skewed_counts_limit_code_lengths(void **state)
{
	enum { FIB = 19, SYMS = FIB + 16 };
	static uint8_t src[MAX_IN];
	static uint64_t seen[1 << 14];
	uint32_t left[SYMS], total = 0;
	size_t n = 0;

	(void)state;
	left[0] = 1;
	left[1] = 2;
	for (int i = 2; i < FIB; i++)
		left[i] = left[i - 1] + left[i - 2];
	for (int i = FIB; i < SYMS; i++)
		left[i] = 1000;
	for (int i = 0; i < SYMS; i++)
		total += left[i];
	assert_true(total <= sizeof(src));
	memset(seen, 0, sizeof(seen));
	while (n < total) {
		uint32_t r = (uint32_t)(next() % (total - n));
		unsigned start = 0, s = 0, k;

		/* drawn by what is left of each, else the next that fits */
		while (r >= left[start])
			r -= left[start++];
		for (k = 0; k < SYMS; k++) {
			bool fits;

			s = (start + k) % SYMS;
			if (!left[s])
				continue;
			src[n] = (uint8_t)(s * 7 + 1);
			fits = !window_repeats(src, n, 6) &&
			       !window_repeats(src, n, 12);
			if (fits && n % 6 == 5) {
				uint64_t v = bach_get_be32(src + n - 5) |
					     (uint64_t)src[n - 1] << 32 |
					     (uint64_t)src[n] << 40;
				size_t h =
					(size_t)((v * 0x9e3779b97f4a7c15ull) >>
						 50);

				while (seen[h] && seen[h] != v + 1)
					h = (h + 1) % (1 << 14);
				fits = !seen[h];
				if (fits)
					seen[h] = v + 1;
			}
			if (fits)
				break;
		}
		if (k == SYMS) /* stuck: any byte left */
			for (s = 0; !left[s]; s++)
				;
		src[n++] = (uint8_t)(s * 7 + 1);
		left[s]--;
	}
	for (int level = BACH_RECDEFLATE_MIN_LEVEL;
	     level <= BACH_RECDEFLATE_MAX_LEVEL; level++)
		round_trip(level, src, n);
}

/*
 * A block's output depends on that block alone: the same after any other
 * blocks, and after the hash positions' base has wrapped around.
 */
static void blocks_stand_alone(void **state)
{
	static uint8_t z1[OUT_CAP], z2[OUT_CAP], z3[OUT_CAP];
	uint8_t *a = gen(MAX_IN / 6, 7), *b = gen(MAX_IN / 6, 8);
	size_t n = BACH_BGZF_MAX_INPUT, l1, l2, l3;

	(void)state;
	for (int level = BACH_RECDEFLATE_MIN_LEVEL;
	     level <= BACH_RECDEFLATE_MAX_LEVEL; level++) {
		struct bach_recdeflate *fresh = bach_recdeflate_new(level);
		struct bach_recdeflate *used = bach_recdeflate_new(level);

		assert_non_null(fresh);
		assert_non_null(used);
		l1 = bach_recdeflate(fresh, b, n, z1, sizeof(z1));
		bach_recdeflate(used, a, n, z2, sizeof(z2));
		bach_recdeflate(used, b, 600, z2, sizeof(z2));
		l2 = bach_recdeflate(used, b, n, z2, sizeof(z2));
		assert_int_equal(l1, l2);
		assert_memory_equal(z1, z2, l1);
		/* 2^32 / (64 KiB + 32 KiB) calls move the base round */
		for (unsigned i = 0; i < 45000; i++)
			bach_recdeflate(used, a + (i % 1000) * 6, 12, z3,
					sizeof(z3));
		bach_recdeflate(used, a, n, z3, sizeof(z3));
		l3 = bach_recdeflate(used, b, n, z3, sizeof(z3));
		assert_int_equal(l1, l3);
		assert_memory_equal(z1, z3, l1);
		inflates_to(z3, l3, b, n);
		bach_recdeflate_free(fresh);
		bach_recdeflate_free(used);
	}
	free(a);
	free(b);
}

static void levels_out_of_range_are_clamped(void **state)
{
	uint8_t *src = gen(1000, 4);

	(void)state;
	round_trip(0, src, 6000);
	round_trip(-3, src, 6000);
	round_trip(99, src, 6000);
	free(src);
}

/* gunzip one whole member with zlib: header, CRC and length checked */
static void gunzips_to(const uint8_t *m, size_t mlen, const uint8_t *src,
		       size_t len)
{
	static uint8_t out[MAX_IN + 1];
	z_stream zs = { 0 };

	assert_int_equal(inflateInit2(&zs, 31), Z_OK);
	zs.next_in = (uint8_t *)m;
	zs.avail_in = (uInt)mlen;
	zs.next_out = out;
	zs.avail_out = sizeof(out);
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.avail_in, 0);
	assert_int_equal(zs.total_out, len);
	assert_memory_equal(out, src, len);
	inflateEnd(&zs);
}

/* The default backend makes the record encoder's members. */
static void bgzf_members(void **state)
{
	static uint8_t noise[BACH_BGZF_MAX_INPUT];
	uint8_t a[BACH_BGZF_MAX_BLOCK], b[BACH_BGZF_MAX_BLOCK];
	uint8_t *src = gen(BACH_BGZF_MAX_INPUT / 6, 5);
	struct bach_deflater *dauto = bach_deflater_new(BACH_DEFLATE_AUTO, 0);
	struct bach_deflater *drec = bach_deflater_new(
		BACH_DEFLATE_RECORD, BACH_RECDEFLATE_DEFAULT_LEVEL);
	size_t la, lb;

	(void)state;
	assert_non_null(dauto);
	assert_non_null(drec);
	la = bach_bgzf_block(dauto, a, src, BACH_BGZF_MAX_INPUT);
	lb = bach_bgzf_block(drec, b, src, BACH_BGZF_MAX_INPUT);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	assert_true(la * 3 < BACH_BGZF_MAX_INPUT);
	assert_int_equal(bach_get_le16(a + 16) + 1u, la);
	gunzips_to(a, la, src, BACH_BGZF_MAX_INPUT);
	/* a few records, one record, none */
	la = bach_bgzf_block(drec, a, src, 60);
	gunzips_to(a, la, src, 60);
	la = bach_bgzf_block(drec, a, src, 6);
	gunzips_to(a, la, src, 6);
	la = bach_bgzf_block(drec, a, src, 0);
	gunzips_to(a, la, src, 0);
	/* noise: a stored block, 5 bytes over the data */
	for (size_t i = 0; i < sizeof(noise); i++)
		noise[i] = (uint8_t)next();
	la = bach_bgzf_block(drec, a, noise, sizeof(noise));
	assert_int_equal(la,
			 BACH_BGZF_HDR + 5 + sizeof(noise) + BACH_BGZF_TRAILER);
	assert_int_equal(a[BACH_BGZF_HDR], 1); /* BFINAL, stored */
	gunzips_to(a, la, noise, sizeof(noise));
	bach_deflater_free(dauto);
	bach_deflater_free(drec);
	/* with a level, the default backend is libdeflate at that level */
	dauto = bach_deflater_new(BACH_DEFLATE_AUTO, 1);
	drec = bach_deflater_new(BACH_DEFLATE_LIBDEFLATE, 1);
	la = bach_bgzf_block(dauto, a, src, BACH_BGZF_MAX_INPUT);
	lb = bach_bgzf_block(drec, b, src, BACH_BGZF_MAX_INPUT);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	bach_deflater_free(dauto);
	bach_deflater_free(drec);
	free(src);
}

/*
 * A writer given no level or backend (what bach convert and bach gen
 * pass) makes the record encoder's members; a level makes libdeflate's.
 */
static void writer_default_is_the_record_encoder(void **state)
{
	static const int levels[] = { 0, 1 };
	char path[] = "/tmp/bach-test-recdeflate.XXXXXX";
	uint8_t *src = gen(BACH_BGZF_MAX_INPUT / 6, 6);
	uint8_t want[BACH_BGZF_MAX_BLOCK];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(levels) / sizeof(*levels); i++) {
		struct bach_writer_opts o = { .format = BACH_OUT_BYU_GZ,
					      .level = levels[i] };
		struct bach_deflater *d =
			bach_deflater_new(levels[i] ? BACH_DEFLATE_LIBDEFLATE
						    : BACH_DEFLATE_RECORD,
					  levels[i]);
		struct bach_writer *w;
		uint8_t got[BACH_BGZF_MAX_BLOCK + BACH_BGZF_EOF_SIZE + 1];
		size_t wlen =
			bach_bgzf_block(d, want, src, BACH_BGZF_MAX_INPUT);
		FILE *f;

		assert_int_equal(bach_writer_open(&w, path, &o), 0);
		assert_int_equal(
			bach_writer_write(w, src, BACH_BGZF_MAX_INPUT / 6), 0);
		assert_int_equal(bach_writer_close(w), 0);
		bach_writer_free(w);
		f = fopen(path, "rb");
		assert_non_null(f);
		assert_int_equal(fread(got, 1, sizeof(got), f),
				 wlen + BACH_BGZF_EOF_SIZE);
		fclose(f);
		assert_memory_equal(got, want, wlen);
		bach_deflater_free(d);
	}
	unlink(path);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(traces_all_levels),
		cmocka_unit_test(edge_inputs),
		cmocka_unit_test(refuses_what_does_not_fit),
		cmocka_unit_test(skewed_counts_limit_code_lengths),
		cmocka_unit_test(blocks_stand_alone),
		cmocka_unit_test(levels_out_of_range_are_clamped),
		cmocka_unit_test(bgzf_members),
		cmocka_unit_test(writer_default_is_the_record_encoder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
