// SPDX-License-Identifier: MIT
/* The imports' line(): lackey, din, CIS 501 and p2AddrTr parsers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/formats/formats.h"

#define MASK BACH_IMPORT_MASK_ADDRESS

static uint8_t out[BACH_IMPORT_MAX_RECS * BACH_REC_SIZE];
static uint64_t skipped;
static const char *why;

/* line[0..len) through the line() of the import called name */
static int impn(const char *name, const char *line, size_t len, unsigned flags)
{
	const struct bach_format *f = bach_format_find(name, BACH_FORMAT_IN);

	assert_non_null(f);
	assert_non_null(f->line);
	memset(out, 0xaa, sizeof(out));
	why = NULL;
	return f->line(line, len, flags, out, &skipped, &why);
}

static int imp(const char *name, const char *line, unsigned flags)
{
	return impn(name, line, strlen(line), flags);
}

/* record i of out is (addr, be, ctl) */
static void rec_is(int i, uint32_t addr, uint8_t be, uint8_t ctl)
{
	const uint8_t *p = out + i * BACH_REC_SIZE;

	assert_int_equal(bach_get_be32(p), addr);
	assert_int_equal(p[4], be);
	assert_int_equal(p[5], ctl);
}

/* the line is an error whose reason contains text */
static void bad(const char *fmt, const char *line, unsigned flags,
		const char *text)
{
	uint64_t before = skipped;

	assert_int_equal(imp(fmt, line, flags), -EBADMSG);
	assert_non_null(why);
	if (!strstr(why, text))
		fail_msg("'%s': reason '%s' lacks '%s'", line, why, text);
	assert_int_equal(skipped, before);
}

/* ---- lackey ------------------------------------------------------------ */

static void lackey_ops(void **state)
{
	(void)state;
	skipped = 0;
	assert_int_equal(imp("lackey", "I  04016a08,4", 0), 1);
	rec_is(0, 0x04016a08, 0xf0, 0x90);
	assert_int_equal(imp("lackey", " L 04222ca8,8", 0), 1);
	rec_is(0, 0x04222ca8, 0x00, 0xd0);
	assert_int_equal(imp("lackey", " S 04222cac,4", 0), 1);
	rec_is(0, 0x04222ca8, 0x0f, 0xf0);
	assert_int_equal(imp("lackey", " S 00000003,1", 0), 1);
	rec_is(0, 0x00000000, 0xf7, 0xf0);
	/* tabs and trailing blanks, a CR left over */
	assert_int_equal(imp("lackey", "\tL\t10,2 \r", 0), 1);
	rec_is(0, 0x10, 0xfc, 0xd0);
	assert_int_equal(skipped, 0);
}

static void lackey_split(void **state)
{
	(void)state;
	/* 8 bytes at 0x1004: two quadwords */
	assert_int_equal(imp("lackey", " L 00001004,8", 0), 2);
	rec_is(0, 0x1000, 0x0f, 0xd0);
	rec_is(1, 0x1008, 0xf0, 0xd0);
	/* 3 bytes from byte 6: bytes 6,7 then byte 0 */
	assert_int_equal(imp("lackey", "I  04016a0e,3", 0), 2);
	rec_is(0, 0x04016a08, 0x3f, 0x90);
	rec_is(1, 0x04016a10, 0xfe, 0x90);
	/* 16 bytes from byte 1: three quadwords */
	assert_int_equal(imp("lackey", " S 00002001,16", 0), 3);
	rec_is(0, 0x2000, 0x01, 0xf0);
	rec_is(1, 0x2008, 0x00, 0xf0);
	rec_is(2, 0x2010, 0xfe, 0xf0);
	/* the widest: 512 aligned bytes are 64 records */
	assert_int_equal(imp("lackey", " S 00003000,512", 0), 64);
	rec_is(0, 0x3000, 0x00, 0xf0);
	rec_is(63, 0x31f8, 0x00, 0xf0);
	bad("lackey", " S 00003004,512", 0, "512 bytes");
	bad("lackey", " S 00003000,513", 0, "513");
	bad("lackey", " S 00003000,0", 0, "size 0");
	bad("lackey", " S 00003000,99999999999999999999", 0, "bad size");
}

static void lackey_modify(void **state)
{
	(void)state;
	/* the read record(s), then the write record(s) */
	assert_int_equal(imp("lackey", " M 0421be08,4", 0), 2);
	rec_is(0, 0x0421be08, 0xf0, 0xd0);
	rec_is(1, 0x0421be08, 0xf0, 0xf0);
	assert_int_equal(imp("lackey", " M 00001006,4", 0), 4);
	rec_is(0, 0x1000, 0x3f, 0xd0);
	rec_is(1, 0x1008, 0xfc, 0xd0);
	rec_is(2, 0x1000, 0x3f, 0xf0);
	rec_is(3, 0x1008, 0xfc, 0xf0);
	/* a modify fits when both halves do */
	assert_int_equal(imp("lackey", " M 00001000,256", 0), 64);
	rec_is(31, 0x10f8, 0x00, 0xd0);
	rec_is(32, 0x1000, 0x00, 0xf0);
	bad("lackey", " M 00001001,256", 0, "256 bytes");
}

static void lackey_chatter(void **state)
{
	(void)state;
	skipped = 0;
	assert_int_equal(
		imp("lackey", "==12345== Lackey, an example Valgrind tool", 0),
		0);
	assert_int_equal(imp("lackey", "==12345==", 0), 0);
	assert_int_equal(imp("lackey", "", 0), 0);
	assert_int_equal(imp("lackey", "   \t", 0), 0);
	/* valgrind's chatter is not a skipped record */
	assert_int_equal(skipped, 0);
}

static void lackey_malformed(void **state)
{
	(void)state;
	skipped = 0;
	bad("lackey", " X 00001000,4", 0, "unknown operation 'X'");
	bad("lackey", "Load 00001000,4", 0, "unknown operation 'Load'");
	bad("lackey", " L", 0, "bad address");
	bad("lackey", " L zz,4", 0, "bad address");
	bad("lackey", " L 0000100g,4", 0, "bad address");
	bad("lackey", " L 00001000", 0, "missing ','");
	bad("lackey", " L 00001000 4", 0, "missing ','");
	bad("lackey", " L 00001000,", 0, "bad size");
	bad("lackey", " L 00001000,x", 0, "bad size");
	bad("lackey", " L 00001000,4 junk", 0, "after the size");
	bad("lackey", " L 11112222333344445,4", 0, "bad address");
	bad("lackey", "= not valgrind", 0, "unknown operation");
	/* a NUL is not an operation (found by fuzz_import) */
	assert_int_equal(impn("lackey", " \0\t0f,15", 9, 0), -EBADMSG);
	assert_non_null(strstr(why, "unknown operation"));
}

static void lackey_wide(void **state)
{
	(void)state;
	bad("lackey", " L 100000000,4", 0, "above 4 GiB");
	bad("lackey", " L 1ffefffd40,8", 0, "above 4 GiB");
	/* the last byte crosses the line */
	bad("lackey", " L fffffffe,4", 0, "above 4 GiB");
	assert_int_equal(imp("lackey", " L fffffff8,8", 0), 1);
	rec_is(0, 0xfffffff8, 0x00, 0xd0);

	/* masked: the low 32 bits */
	assert_int_equal(imp("lackey", " L 1ffefffd44,8", MASK), 2);
	rec_is(0, 0xfefffd40, 0x0f, 0xd0);
	rec_is(1, 0xfefffd48, 0xf0, 0xd0);
	/* a masked access across the 4 GiB line wraps to quadword 0 */
	assert_int_equal(imp("lackey", " S fffffffe,4", MASK), 2);
	rec_is(0, 0xfffffff8, 0x3f, 0xf0);
	rec_is(1, 0x00000000, 0xfc, 0xf0);
	assert_int_equal(imp("lackey", " S ffffffffffffffff,2", MASK), 2);
	rec_is(0, 0xfffffff8, 0x7f, 0xf0);
	rec_is(1, 0x00000000, 0xfe, 0xf0);
}

/* ---- din --------------------------------------------------------------- */

static void din_labels(void **state)
{
	(void)state;
	skipped = 0;
	assert_int_equal(imp("din", "0 1000", 0), 1);
	rec_is(0, 0x1000, 0xf0, 0xd0);
	assert_int_equal(imp("din", "1 1004", 0), 1);
	rec_is(0, 0x1000, 0x0f, 0xf0);
	assert_int_equal(imp("din", "2 0x4016A0E", 0), 1);
	rec_is(0, 0x04016a08, 0x0f, 0x90);
	/* rounded down to 4: never splits */
	assert_int_equal(imp("din", "0 7", 0), 1);
	rec_is(0, 0x0, 0x0f, 0xd0);
	/* leading blanks, extra fields ignored as Dinero does */
	assert_int_equal(imp("din", "  2   0X20 0 extra stuff", 0), 1);
	rec_is(0, 0x20, 0xf0, 0x90);
	assert_int_equal(imp("din", "", 0), 0);
	assert_int_equal(skipped, 0);
}

static void din_skipped(void **state)
{
	(void)state;
	skipped = 0;
	assert_int_equal(imp("din", "3 1000", 0), 0);
	assert_int_equal(imp("din", "4 0", 0), 0);
	assert_int_equal(imp("din", "4", 0), 0);
	assert_int_equal(imp("din", "7 1000", 0), 0);
	/* labels are hex, as in Dinero IV */
	assert_int_equal(imp("din", "a 1000", 0), 0);
	assert_int_equal(imp("din", "10 1000", 0), 0);
	assert_int_equal(skipped, 6);
	assert_int_equal(imp("din", "0x1 1000", 0), 1);
	rec_is(0, 0x1000, 0xf0, 0xf0);
	assert_int_equal(imp("din", "02 1000", 0), 1);
	rec_is(0, 0x1000, 0xf0, 0x90);
	assert_int_equal(skipped, 6);
}

static void din_malformed(void **state)
{
	(void)state;
	skipped = 0;
	bad("din", "r 1000", 0, "bad label");
	bad("din", "-1 1000", 0, "bad label");
	bad("din", "g 1000", 0, "bad label");
	bad("din", "0:1000", 0, "bad label");
	bad("din", "11112222333344445 0", 0, "bad label");
	bad("din", "0", 0, "missing address");
	bad("din", "0 xyz", 0, "bad address");
	bad("din", "0 12g4", 0, "bad address");
	bad("din", "0 0x", 0, "bad address");
	bad("din", "0 100000000", 0, "above 4 GiB");
	assert_int_equal(imp("din", "0 100000004", MASK), 1);
	rec_is(0, 0x0, 0x0f, 0xd0);
}

/* ---- CIS 501 ----------------------------------------------------------- */

static void cis501_lines(void **state)
{
	(void)state;
	skipped = 0;
	/* micro-op 1: the macro-op's fetch, PC to fall-through */
	assert_int_equal(imp("cis501",
			     "1 48d1de -1 -1 13 - - - 0 0 48d1e2 0 SET ADD", 0),
			 2);
	rec_is(0, 0x48d1d8, 0x3f, 0x90);
	rec_is(1, 0x48d1e0, 0xfc, 0x90);
	/* a later micro-op without memory: nothing */
	assert_int_equal(imp("cis501",
			     "2 48d1de -1 -1 13 R - - 1 0 48d1e2 0 SET ADD_IMM",
			     0),
			 0);
	/* fetch then the load's quadword, BE# 0x00 */
	assert_int_equal(
		imp("cis501",
		    "1 48d1e2 -1 5 45 - - L -264 7fe7f04c 48d1e9 0 CMP LOAD",
		    0),
		3);
	rec_is(0, 0x48d1e0, 0x03, 0x90);
	rec_is(1, 0x48d1e8, 0xfe, 0x90);
	rec_is(2, 0x7fe7f048, 0x00, 0xd0);
	/* a store in a later micro-op: the write alone */
	assert_int_equal(
		imp("cis501",
		    "2 48d1f0 3 5 -1 - - S 0 bfff0010 48d1f3 0 PUSH STORE", 0),
		1);
	rec_is(0, 0xbfff0010, 0x00, 0xf0);
	/* a branch: fetch only; blanks of any width */
	assert_int_equal(
		imp("cis501",
		    "1\t48d1f9  -1 -1 -1 - T - 54 0 48d1fb 48d231 JMP JMP_IMM",
		    0),
		1);
	rec_is(0, 0x48d1f8, 0xf9, 0x90);
	assert_int_equal(imp("cis501", "", 0), 0);
	assert_int_equal(skipped, 0);
}

static void cis501_wide(void **state)
{
	(void)state;
	/* course traces carry 64-bit stack addresses */
	bad("cis501",
	    "1 48d1e2 -1 5 45 - - L -264 7fffe7ff048 48d1e9 0 CMP LOAD", 0,
	    "above 4 GiB");
	assert_int_equal(
		imp("cis501",
		    "1 48d1e2 -1 5 45 - - L -264 7fffe7ff048 48d1e9 0 CMP LOAD",
		    MASK),
		3);
	rec_is(2, 0xfe7ff048, 0x00, 0xd0);
}

static void cis501_malformed(void **state)
{
	(void)state;
	skipped = 0;
	bad("cis501", "1 48d1de -1 -1 13 - - - 0 0 48d1e2 0 SET", 0,
	    "13 fields, expected 14");
	bad("cis501", "1 48d1de -1 -1 13 - - - 0 0 48d1e2 0 SET ADD x", 0,
	    "more than 14 fields");
	bad("cis501", "x 48d1de -1 -1 13 - - - 0 0 48d1e2 0 SET ADD", 0,
	    "bad micro-op number");
	bad("cis501", "1 48d1dz -1 -1 13 - - - 0 0 48d1e2 0 SET ADD", 0,
	    "bad PC");
	bad("cis501", "1 48d1de r1 -1 13 - - - 0 0 48d1e2 0 SET ADD", 0,
	    "bad register");
	bad("cis501", "1 48d1de -1 -1 13 RW - - 0 0 48d1e2 0 SET ADD", 0,
	    "bad flags");
	bad("cis501", "1 48d1de -1 -1 13 - TN - 0 0 48d1e2 0 SET ADD", 0,
	    "bad branch");
	bad("cis501", "1 48d1de -1 -1 13 - - X 0 0 48d1e2 0 SET ADD", 0,
	    "bad load/store");
	{
		static const char nul[] =
			"1 48d1de -1 -1 13 - - \0 0 0 48d1e2 0 SET ADD";

		assert_int_equal(impn("cis501", nul, sizeof(nul) - 1, 0),
				 -EBADMSG);
		assert_string_equal(why, "bad load/store field");
	}
	bad("cis501", "1 48d1de -1 -1 13 - - - 1.5 0 48d1e2 0 SET ADD", 0,
	    "bad immediate");
	bad("cis501", "1 48d1de -1 -1 13 - - L 0 q 48d1e2 0 SET ADD", 0,
	    "bad memory address");
	bad("cis501", "1 48d1de -1 -1 13 - - - 0 0 - 0 SET ADD", 0,
	    "bad fall-through");
	bad("cis501", "1 48d1de -1 -1 13 - - - 0 0 48d1e2 t SET ADD", 0,
	    "bad target");
	bad("cis501", "1 48d1de -1 -1 13 - - - 0 0 48d1de 0 SET ADD", 0,
	    "not above PC");
	bad("cis501", "1 48d1de -1 -1 13 - - - 0 0 48d1f0 0 SET ADD", 0,
	    "18 bytes");
}

/* ---- p2AddrTr ---------------------------------------------------------- */

static int p2(uint32_t addr, uint8_t type, uint8_t size, uint8_t attr,
	      unsigned flags)
{
	uint8_t r[12];

	bach_put_le32(r, addr);
	r[4] = type;
	r[5] = size;
	r[6] = attr;
	r[7] = 0;
	bach_put_le32(r + 8, 1234);
	return impn("p2", (const char *)r, sizeof(r), flags);
}

static void p2_memory(void **state)
{
	(void)state;
	skipped = 0;
	/* fetch: attr 00 uncacheable, anything else cacheable */
	assert_int_equal(p2(0x1000, 0x00, 8, 0, 0), 1);
	rec_is(0, 0x1000, 0x00, 0x90);
	assert_int_equal(p2(0x1000, 0x00, 8, 3, 0), 1);
	rec_is(0, 0x1000, 0x00, 0x80);
	/* read and read-invalidate */
	assert_int_equal(p2(0x1004, 0x01, 4, 0, 0), 1);
	rec_is(0, 0x1000, 0x0f, 0xd0);
	assert_int_equal(p2(0x1004, 0x01, 4, 1, 0), 1);
	rec_is(0, 0x1000, 0x0f, 0xc0);
	assert_int_equal(p2(0x1004, 0x02, 2, 2, 0), 1);
	rec_is(0, 0x1000, 0xcf, 0xc0);
	/* writes are D_WRITE cacheable or not */
	assert_int_equal(p2(0x1002, 0x03, 1, 0, 0), 1);
	rec_is(0, 0x1000, 0xfb, 0xf0);
	assert_int_equal(p2(0x1002, 0x03, 1, 3, 0), 1);
	rec_is(0, 0x1000, 0xfb, 0xf0);
	/* the quadword rule */
	assert_int_equal(p2(0x1004, 0x01, 8, 0, 0), 2);
	rec_is(0, 0x1000, 0x0f, 0xd0);
	rec_is(1, 0x1008, 0xf0, 0xd0);
	assert_int_equal(p2(0x1000, 0x01, 16, 0, 0), 2);
	rec_is(1, 0x1008, 0x00, 0xd0);
	/* a 32-byte line is one burst: one record, BE# 0x00 */
	assert_int_equal(p2(0x1018, 0x00, 32, 1, 0), 1);
	rec_is(0, 0x1018, 0x00, 0x80);
	assert_int_equal(p2(0x101c, 0x01, 32, 3, 0), 1);
	rec_is(0, 0x1018, 0x00, 0xc0);
	/* a whole-line write is the Pentium's writeback burst */
	assert_int_equal(p2(0x1000, 0x03, 32, 3, 0), 1);
	rec_is(0, 0x1000, 0x00, 0xe0);
	assert_int_equal(skipped, 0);
}

static void p2_other(void **state)
{
	(void)state;
	skipped = 0;
	assert_int_equal(p2(0x3f8, 0x10, 1, 0, 0), 1);
	rec_is(0, 0x3f8, 0xfe, 0x50);
	assert_int_equal(p2(0xcfc, 0x11, 4, 0, 0), 1);
	rec_is(0, 0xcf8, 0x0f, 0x70);
	assert_int_equal(p2(0x0, 0x21, 1, 0, 0), 1);
	rec_is(0, 0x0, 0xfe, 0x10);
	assert_int_equal(p2(0x4, 0x21, 0, 0, 0), 1);
	rec_is(0, 0x0, 0xef, 0x10);
	/* special cycles: the kind in BE#, A4 for stop grant */
	assert_int_equal(p2(0x1234, 0x31, 0, 0, 0), 1);
	rec_is(0, 0x0, 0xfe, 0x30);
	assert_int_equal(p2(0, 0x32, 0, 0, 0), 1);
	rec_is(0, 0x0, 0xfd, 0x30);
	assert_int_equal(p2(0, 0x33, 0, 0, 0), 1);
	rec_is(0, 0x0, 0xfb, 0x30);
	assert_int_equal(p2(0, 0x34, 0, 0, 0), 1);
	rec_is(0, 0x0, 0xf7, 0x30);
	assert_int_equal(p2(0, 0x35, 0, 0, 0), 1);
	rec_is(0, 0x0, 0xef, 0x30);
	assert_int_equal(p2(0, 0x36, 0, 0, 0), 1);
	rec_is(0, 0x10, 0xfb, 0x30);
	assert_int_equal(bach_special_kind(0x10, 0xfb), BACH_SP_STOP_GRANT);
	assert_int_equal(p2(0, 0x23, 0, 0, 0), 1);
	rec_is(0, 0x0, 0xdf, 0x30);
	assert_int_equal(skipped, 0);
	/* no Pentium equivalent: skipped and counted */
	assert_int_equal(p2(0, 0x20, 0, 0, 0), 0);
	assert_int_equal(p2(0, 0x22, 0, 0, 0), 0);
	assert_int_equal(p2(0, 0x37, 0, 0, 0), 0);
	assert_int_equal(skipped, 3);
}

static void p2_malformed(void **state)
{
	uint8_t r[12] = { 0 };

	(void)state;
	skipped = 0;
	assert_int_equal(p2(0x1000, 0x04, 4, 0, 0), -EBADMSG);
	assert_string_equal(why, "unknown request type 0x04");
	assert_int_equal(p2(0x1000, 0xff, 4, 0, 0), -EBADMSG);
	assert_string_equal(why, "unknown request type 0xff");
	assert_int_equal(p2(0x1000, 0x01, 0, 0, 0), -EBADMSG);
	assert_string_equal(why, "size 0");
	assert_int_equal(p2(0x1000, 0x01, 24, 0, 0), -EBADMSG);
	assert_non_null(strstr(why, "bad size 24"));
	assert_int_equal(p2(0x1000, 0x10, 0, 0, 0), -EBADMSG);
	/* across 4 GiB, and masked */
	assert_int_equal(p2(0xfffffffc, 0x01, 8, 0, 0), -EBADMSG);
	assert_non_null(strstr(why, "above 4 GiB"));
	assert_int_equal(p2(0xfffffffc, 0x01, 8, 0, MASK), 2);
	rec_is(0, 0xfffffff8, 0x0f, 0xd0);
	rec_is(1, 0x0, 0xf0, 0xd0);
	assert_int_equal(impn("p2", (const char *)r, 11, 0), -EBADMSG);
	assert_int_equal(skipped, 0);
}

/* Names: p2AddrTr is p2; an export only (csv) or an unknown name is no
 * import; dinx is both (docs/formats.md 6.9). */
static void names(void **state)
{
	(void)state;
	assert_ptr_equal(bach_format_find("p2AddrTr", BACH_FORMAT_IN),
			 bach_format_find("p2", BACH_FORMAT_IN));
	assert_null(bach_format_find("csv", BACH_FORMAT_IN));
	assert_non_null(bach_format_find("dinx", BACH_FORMAT_IN));
	assert_null(bach_format_find("nosuch", BACH_FORMAT_IN));
	assert_null(bach_format_find("p2AddrTr", BACH_FORMAT_OUT));
}

/* The importer refuses a format with no line(), naming it. */
static void import_an_export(void **state)
{
	struct bach_importer *im;

	(void)state;
	assert_int_equal(bach_importer_open(
				 &im, bach_format_find("csv", BACH_FORMAT_OUT),
				 "/dev/null", 0),
			 -EINVAL);
	assert_string_equal(bach_importer_strerror(im),
			    "/dev/null: csv is not a format bach imports");
	bach_importer_free(im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lackey_ops),
		cmocka_unit_test(lackey_split),
		cmocka_unit_test(lackey_modify),
		cmocka_unit_test(lackey_chatter),
		cmocka_unit_test(lackey_malformed),
		cmocka_unit_test(lackey_wide),
		cmocka_unit_test(din_labels),
		cmocka_unit_test(din_skipped),
		cmocka_unit_test(din_malformed),
		cmocka_unit_test(cis501_lines),
		cmocka_unit_test(cis501_wide),
		cmocka_unit_test(cis501_malformed),
		cmocka_unit_test(p2_memory),
		cmocka_unit_test(p2_other),
		cmocka_unit_test(p2_malformed),
		cmocka_unit_test(names),
		cmocka_unit_test(import_an_export),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
