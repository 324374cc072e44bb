// SPDX-License-Identifier: MIT
/* Option tables and the one number parser (lib/options.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/options.h"

static void numbers(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(bach_parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(bach_parse_u64("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(bach_parse_u64("0xffFF", &v), 0);
	assert_int_equal(v, 0xffff);
	assert_int_equal(bach_parse_u64("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(bach_parse_u64("0xffffffffffffffff", &v), 0);
	assert_true(v == UINT64_MAX);
	/* overflow is an error, never a wrap */
	assert_int_equal(bach_parse_u64("18446744073709551616", &v), -ERANGE);
	assert_int_equal(bach_parse_u64("0x10000000000000000", &v), -ERANGE);
	assert_int_equal(bach_parse_u64("99999999999999999999999", &v),
			 -ERANGE);
	/* neither octal nor anything loose */
	static const char *const bad[] = {
		"",	"-1",  "+1",  " 1", "1 ", "010", "00", "0x",
		"0x-1", "1e3", "12a", "x",  "1k", "0b1", "１",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(bach_parse_u64(bad[i], &v), -EINVAL);
}

static void sizes(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0", 0 },
		{ "1000", 1000 },
		{ "1k", 1000 },
		{ "24M", 24000000 },
		{ "24m", 24000000 },
		{ "1G", 1000000000 },
		{ "2T", 2000000000000ull },
		{ "1.5M", 1500000 },
		{ "0.5k", 500 },
		{ "24MHz", 24000000 },
		{ "24 MHz", 24000000 },
		{ "100hz", 100 },
		{ "0x10", 16 },
		{ "18446744073709551615", UINT64_MAX },
	};
	static const char *const bad[] = {
		"",   "k",     "1.k", ".5k", "1.5", "1.0001k", "1kk",
		"1x", "1MHzz", "-1k", "01k", "1 ",  "1.5Hz",
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		assert_int_equal(bach_parse_size(ok[i].s, "Hz", &v), 0);
		assert_true(v == ok[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(bach_parse_size(bad[i], "Hz", &v), -EINVAL);
	assert_int_equal(bach_parse_size("24MHz", NULL, &v), -EINVAL);
	assert_int_equal(bach_parse_size("18446744073709552k", NULL, &v),
			 -ERANGE);
	assert_int_equal(bach_parse_size("18446744073709551616", NULL, &v),
			 -ERANGE);
}

static void bools_and_escapes(void **state)
{
	char buf[64];
	bool b;

	(void)state;
	assert_int_equal(bach_parse_bool("YES", &b), 0);
	assert_true(b);
	assert_int_equal(bach_parse_bool("off", &b), 0);
	assert_false(b);
	assert_int_equal(bach_parse_bool("0", &b), 0);
	assert_false(b);
	assert_int_equal(bach_parse_bool("2", &b), -EINVAL);
	assert_int_equal(bach_parse_bool("", &b), -EINVAL);
	assert_string_equal(
		bach_escape_ctl(buf, sizeof(buf), "a\nb\tc\x01\x7f"),
		"a\\nb\\tc\\x01\\x7f");
	/* cut to fit, never half an escape */
	assert_string_equal(bach_escape_ctl(buf, 4, "ab\ncd"), "ab");
	assert_string_equal(bach_escape_ctl(buf, 5, "ab\ncd"), "ab\\n");
	/* C1 controls (CSI, NEL, OSC) as their UTF-8 bytes; other UTF-8 as
	 * it is; bytes that are no UTF-8 escaped one by one */
	assert_string_equal(bach_escape_ctl(buf, sizeof(buf),
					    "a\xc2\x9b"
					    "31m\xc2\x85\xc2\x9d"),
			    "a\\xc2\\x9b31m\\xc2\\x85\\xc2\\x9d");
	assert_string_equal(
		bach_escape_ctl(buf, sizeof(buf),
				"\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
		"\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	assert_string_equal(bach_escape_ctl(buf, sizeof(buf),
					    "\x9b\xc0\xaf\xed\xa0\x80\xe2\x82"),
			    "\\x9b\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82");
	/* cut to fit: never half a character */
	assert_string_equal(bach_escape_ctl(buf, 5, "ab\xc3\xa9"),
			    "ab\xc3\xa9");
	assert_string_equal(bach_escape_ctl(buf, 5, "abc\xc3\xa9"), "abc");
}

static int hex_pair(const char *text, struct bach_optval *v, char *msg,
		    size_t cap)
{
	unsigned a, b;
	int n = 0;

	if (sscanf(text, "%4x:%4x%n", &a, &b, &n) != 2 || text[n]) {
		snprintf(msg, cap, "want VVVV:PPPP");
		return -EINVAL;
	}
	v->u = a;
	v->u2 = b;
	return 0;
}

static const char *const colours[] = { "red", "green", "blue", NULL };

enum {
	O_RECORDS,
	O_FRAME,
	O_FLAG,
	O_COLOUR,
	O_OVER,
	O_PATH,
	O_IN,
	O_ID,
	O_RATE,
	O_N
};
static const struct bach_optdesc table[] = {
	[O_RECORDS] = { .key = "records",
			.type = BACH_OPT_UINT,
			.arg = "N",
			.help = "stop after N",
			.min = 1,
			.def_help = "run until stopped",
			.hint = "leave it out to run until stopped" },
	[O_FRAME] = { .key = "frame",
		      .type = BACH_OPT_UINT,
		      .arg = "K",
		      .help = "records per frame",
		      .min = 1,
		      .max = 65535,
		      .def = "4096" },
	[O_FLAG] = { .key = "timing",
		     .type = BACH_OPT_BOOL,
		     .help = "timing",
		     .def = "0" },
	[O_COLOUR] = { .key = "colour",
		       .type = BACH_OPT_ENUM,
		       .names = colours,
		       .help = "a colour",
		       .def = "green" },
	[O_OVER] = { .key = "overflow_every",
		     .type = BACH_OPT_PAIR,
		     .arg = "N:C",
		     .help = "overflows",
		     .max2 = UINT32_MAX },
	[O_PATH] = { .key = "path",
		     .type = BACH_OPT_STRING,
		     .arg = "FILE",
		     .help = "the file",
		     .required = true,
		     .hint = "for example x.byu" },
	[O_IN] = { .key = "input",
		   .type = BACH_OPT_LIST,
		   .arg = "K=V",
		   .help = "an input option",
		   .max = 3 },
	[O_ID] = { .key = "id",
		   .type = BACH_OPT_CUSTOM,
		   .arg = "VVVV:PPPP",
		   .help = "ids",
		   .parse = hex_pair,
		   .def = "1209:4243" },
	[O_RATE] = { .key = "rate",
		     .type = BACH_OPT_SIZE,
		     .arg = "HZ",
		     .unit = "Hz",
		     .help = "sample rate",
		     .min = 1 },
	{ 0 },
};

#define OPT(k, v)                                                              \
	{                                                                      \
		.key = k, .value = v                                           \
	}

static int parse(const struct bach_option *o, size_t n, struct bach_optval *v,
		 char *msg)
{
	return bach_opts_parse(table, "test", o, n, v, msg, 512);
}

static void tables(void **state)
{
	struct bach_optval v[O_N];
	char msg[512];

	(void)state;
	assert_int_equal(bach_opt_count(table), O_N);
	assert_int_equal(bach_opts_verify(table, msg, sizeof(msg)), 0);
	assert_int_equal(bach_opt_find(table, "input"), O_IN);
	assert_int_equal(bach_opt_find(table, "inpu"), -1);

	/* defaults fill what is absent; a later value wins; lists collect */
	struct bach_option a[] = {
		OPT("path", "p1"),
		OPT("frame", "0"),
		OPT("frame", "100"),
		OPT("input", "a=1"),
		OPT("path", "p2"),
		OPT("input", "b=2"),
		OPT("overflow_every", "0x10:4294967295"),
		OPT("rate", "1.5MHz"),
	};
	assert_int_equal(parse(a, 8, v, msg), 0);
	assert_false(v[O_RECORDS].set);
	assert_true(v[O_FRAME].given);
	assert_int_equal(v[O_FRAME].u, 100);
	assert_true(v[O_FLAG].set);
	assert_false(v[O_FLAG].given);
	assert_int_equal(v[O_FLAG].u, 0);
	assert_int_equal(v[O_COLOUR].u, 1);
	assert_string_equal(v[O_PATH].s, "p2");
	assert_int_equal(v[O_IN].n, 2);
	assert_string_equal(v[O_IN].list[0], "a=1");
	assert_string_equal(v[O_IN].list[1], "b=2");
	assert_int_equal(v[O_OVER].u, 16);
	assert_int_equal(v[O_OVER].u2, 4294967295u);
	assert_int_equal(v[O_ID].u, 0x1209);
	assert_int_equal(v[O_ID].u2, 0x4243);
	assert_int_equal(v[O_RATE].u, 1500000);
	bach_opts_free(table, v);
}

/* Each bad list: its message contains want. */
static void expect(const struct bach_option *o, size_t n, const char *want)
{
	struct bach_optval v[O_N];
	char msg[512];
	int err = parse(o, n, v, msg);

	bach_opts_free(table, v);
	if (err != -EINVAL || !strstr(msg, want))
		fail_msg("got %d '%s', wanted '%s'", err, msg, want);
}

static void errors(void **state)
{
	struct bach_option unknown[] = { OPT("path", "x"),
					 OPT("recrods", "1") };
	struct bach_option in_file[] = {
		{ .key = "frame", .value = "0", .file = "b.conf", .line = 7 },
		OPT("path", "x"),
	};
	struct bach_option wrap[] = { OPT("path", "x"),
				      OPT("overflow_every", "1:4294967296") };
	struct bach_option zero[] = { OPT("path", "x"), OPT("records", "0") };
	struct bach_option big[] = { OPT("path", "x"),
				     OPT("records", "18446744073709551616") };
	struct bach_option octal[] = { OPT("path", "x"), OPT("frame", "010") };
	struct bach_option colour[] = { OPT("path", "x"),
					OPT("colour", "mauve") };
	struct bach_option flag[] = { OPT("path", "x"), OPT("timing", "2") };
	struct bach_option list[] = { OPT("path", "x"), OPT("input", "1"),
				      OPT("input", "2"), OPT("input", "3"),
				      OPT("input", "4") };
	struct bach_option custom[] = { OPT("path", "x"), OPT("id", "12:zz") };
	struct bach_option nl[] = { OPT("path", "x"), OPT("frame", "1\n2") };

	(void)state;
	expect(unknown, 2,
	       "unknown option 'recrods' for test (records, frame, timing, colour, overflow_every, path, input, id, rate)");
	expect(in_file, 2,
	       "b.conf:7: option frame: want a number from 1 to 65535, not '0'");
	expect(wrap, 2,
	       "option overflow_every: want N:C, C 0 to 4294967295, not '1:4294967296'");
	expect(zero, 2,
	       "option records: want a number of at least 1, not '0' (leave it out to run until stopped)");
	expect(big, 2, "option records: want a number of at least 1");
	expect(octal, 2, "no leading zeros), not '010'");
	expect(colour, 2, "option colour: red, green or blue, not 'mauve'");
	expect(flag, 2, "option timing: want 0 or 1");
	expect(list, 5, "option input: at most 3 values");
	expect(custom, 2, "option id: want VVVV:PPPP, not '12:zz'");
	expect(nl, 2, "not '1\\n2'");
	expect(NULL, 0,
	       "option path=FILE is required for test (for example x.byu)");
}

static void help(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	bach_opts_print(f, table);
	fclose(f);
	assert_non_null(strstr(
		buf,
		"  records=N           stop after N (at least 1, default: run until stopped)\n"));
	assert_non_null(strstr(
		buf,
		"  frame=K             records per frame (1 to 65535, default 4096)\n"));
	assert_non_null(strstr(buf, "  timing=0|1"));
	assert_non_null(strstr(buf, "  colour=red|green|blue"));
	assert_non_null(
		strstr(buf, "  path=FILE           the file (required)"));
	assert_non_null(strstr(buf, "overflows (C 0 to 4294967295)\n"));
	assert_non_null(strstr(buf, "(repeatable, up to 3 times)\n"));
	for (char *l = buf; *l; l = strchr(l, '\n') + 1)
		assert_true(strchr(l, '\n') - l <= 79);
	free(buf);
}

/* A struct a table describes: each row names its member. */
struct thing {
	bool flag;
	uint8_t small;
	int level;
	unsigned ring_bytes;
	uint64_t big;
	int colour; /* colour_values[] */
	char name[8];
	uint64_t every;
	uint32_t count;
	uint64_t lo, hi; /* the "range" row's set and show */
};

static const int colour_values[] = { 10, 20, 30 };

/* "LO-HI" into lo and hi: the odd key, two members from one value */
static int parse_range(const char *text, struct bach_optval *v, char *msg,
		       size_t cap)
{
	unsigned long long a, b;
	int n = 0;

	snprintf(msg, cap, "want LO-HI");
	if (sscanf(text, "%llu-%llu%n", &a, &b, &n) != 2 || text[n] || a > b)
		return -EINVAL;
	v->u = a;
	v->u2 = b;
	return 0;
}

static int set_range(void *obj, const struct bach_optval *v, char *msg,
		     size_t cap)
{
	struct thing *t = obj;

	if (v->u2 == 666) {
		snprintf(msg, cap, "not 666");
		return -EINVAL;
	}
	t->lo = v->u;
	t->hi = v->u2;
	return 0;
}

static int show_range(const void *obj, char *buf, size_t cap)
{
	const struct thing *t = obj;
	int n = snprintf(buf, cap, "%llu-%llu", (unsigned long long)t->lo,
			 (unsigned long long)t->hi);

	return n < 0 || (size_t)n >= cap ? -ENOSPC : BACH_JSON_STRING;
}

static const struct bach_optdesc stored[] = {
	{ .key = "flag",
	  .type = BACH_OPT_BOOL,
	  .help = "a flag",
	  .def = "yes",
	  BACH_OPT_AT(struct thing, flag) },
	{ .key = "small",
	  .type = BACH_OPT_UINT,
	  .help = "a byte",
	  .max = 255,
	  .def = "7",
	  BACH_OPT_AT(struct thing, small) },
	{ .key = "level",
	  .type = BACH_OPT_UINT,
	  .help = "an int",
	  .min = 1,
	  .max = 12,
	  .def = "3",
	  BACH_OPT_AT(struct thing, level) },
	{ .key = "ring_mb",
	  .type = BACH_OPT_UINT,
	  .help = "MiB, stored in bytes",
	  .max = 4095,
	  .def = "256",
	  .scale = 1u << 20,
	  BACH_OPT_AT(struct thing, ring_bytes) },
	{ .key = "big",
	  .type = BACH_OPT_SIZE,
	  .help = "a size",
	  .unit = "B",
	  .def = "0",
	  BACH_OPT_AT(struct thing, big) },
	{ .key = "colour",
	  .type = BACH_OPT_ENUM,
	  .names = colours,
	  .values = colour_values,
	  .help = "a colour",
	  .def = "green",
	  BACH_OPT_AT(struct thing, colour) },
	{ .key = "name",
	  .type = BACH_OPT_STRING,
	  .help = "at most 7 bytes: the member says so",
	  BACH_OPT_AT(struct thing, name) },
	{ .key = "every",
	  .type = BACH_OPT_PAIR,
	  .arg = "N:C",
	  .help = "two numbers",
	  .max2 = UINT32_MAX,
	  BACH_OPT_AT(struct thing, every),
	  BACH_OPT_AT2(struct thing, count) },
	{ .key = "range",
	  .type = BACH_OPT_CUSTOM,
	  .arg = "LO-HI",
	  .help = "two members",
	  .parse = parse_range,
	  .set = set_range,
	  .show = show_range,
	  .def = "1-2" },
	{ .key = "input",
	  .type = BACH_OPT_LIST,
	  .help = "stored nowhere: the caller reads the values" },
	{ 0 },
};

static int show(const char *key, const struct thing *t, char *buf)
{
	return bach_opt_show(&stored[bach_opt_find(stored, key)], t, buf, 64);
}

/* Each row says where its value goes: defaults, set and show use it. */
static void members(void **state)
{
	struct thing t, u;
	char msg[256], buf[64];

	(void)state;
	assert_int_equal(bach_opts_verify(stored, msg, sizeof(msg)), 0);
	memset(&t, 0xa5, sizeof(t));
	t.name[0] = 0;
	bach_opts_defaults(stored, &t);
	assert_true(t.flag);
	assert_int_equal(t.small, 7);
	assert_int_equal(t.level, 3);
	assert_int_equal(t.ring_bytes, 256u << 20);
	assert_int_equal(t.big, 0);
	assert_int_equal(t.colour, 20);
	assert_int_equal(t.lo, 1);
	assert_int_equal(t.hi, 2);
	/* no default: the member keeps what it held */
	assert_int_equal(t.every, 0xa5a5a5a5a5a5a5a5ull);

	assert_int_equal(
		bach_opt_set(stored, &t, "ring_mb", "0x10", msg, sizeof(msg)),
		0);
	assert_int_equal(t.ring_bytes, 16u << 20);
	assert_int_equal(
		bach_opt_set(stored, &t, "colour", "blue", msg, sizeof(msg)),
		0);
	assert_int_equal(t.colour, 30);
	assert_int_equal(
		bach_opt_set(stored, &t, "flag", "off", msg, sizeof(msg)), 0);
	assert_false(t.flag);
	assert_int_equal(
		bach_opt_set(stored, &t, "big", "1.5kB", msg, sizeof(msg)), 0);
	assert_int_equal(t.big, 1500);
	assert_int_equal(bach_opt_set(stored, &t, "every", "9:4294967295", msg,
				      sizeof(msg)),
			 0);
	assert_int_equal(t.every, 9);
	assert_int_equal(t.count, UINT32_MAX);
	assert_int_equal(
		bach_opt_set(stored, &t, "range", "5-9", msg, sizeof(msg)), 0);
	assert_int_equal(t.hi, 9);
	/* a string is bounded by its member when max is not given */
	assert_int_equal(
		bach_opt_set(stored, &t, "name", "1234567", msg, sizeof(msg)),
		0);
	assert_string_equal(t.name, "1234567");
	assert_int_equal(
		bach_opt_set(stored, &t, "name", "12345678", msg, sizeof(msg)),
		-EINVAL);
	assert_non_null(strstr(msg, "name: want a length from 0 to 7"));
	assert_string_equal(t.name, "1234567");
	/* errors: unknown key, bad value, and the set hook's own */
	assert_int_equal(
		bach_opt_set(stored, &t, "nope", "1", msg, sizeof(msg)),
		-ENOENT);
	assert_int_equal(
		bach_opt_set(stored, &t, "small", "256", msg, sizeof(msg)),
		-EINVAL);
	assert_int_equal(t.small, 7);
	assert_int_equal(
		bach_opt_set(stored, &t, "range", "1-666", msg, sizeof(msg)),
		-EINVAL);
	assert_string_equal(msg, "range: not 666");

	/* show writes what set takes back, in the option's own unit */
	assert_int_equal(show("flag", &t, buf), BACH_JSON_BOOL);
	assert_string_equal(buf, "false");
	assert_int_equal(show("ring_mb", &t, buf), BACH_JSON_NUMBER);
	assert_string_equal(buf, "16");
	assert_int_equal(show("big", &t, buf), BACH_JSON_NUMBER);
	assert_string_equal(buf, "1500");
	assert_int_equal(show("colour", &t, buf), BACH_JSON_STRING);
	assert_string_equal(buf, "blue");
	assert_int_equal(show("name", &t, buf), BACH_JSON_STRING);
	assert_string_equal(buf, "1234567");
	assert_int_equal(show("every", &t, buf), BACH_JSON_STRING);
	assert_string_equal(buf, "9:4294967295");
	assert_int_equal(show("range", &t, buf), BACH_JSON_STRING);
	assert_string_equal(buf, "5-9");
	assert_int_equal(show("input", &t, buf), -ENOENT);
	u = t;
	u.colour = 11;
	assert_int_equal(show("colour", &u, buf), -ERANGE);
	u.ring_bytes = 1;
	assert_int_equal(show("ring_mb", &u, buf), -ERANGE);
	assert_int_equal(bach_opt_show(&stored[0], &t, buf, 5), -ENOSPC);

	/* every row's shown value, set again, leaves the struct as it is */
	memset(&u, 0, sizeof(u));
	for (size_t i = 0; stored[i].key; i++) {
		if (show(stored[i].key, &t, buf) < 0)
			continue;
		assert_int_equal(bach_opt_set(stored, &u, stored[i].key, buf,
					      msg, sizeof(msg)),
				 0);
	}
	/* the members one by one: padding is not compared */
	assert_true(u.flag == t.flag && u.small == t.small &&
		    u.level == t.level && u.ring_bytes == t.ring_bytes &&
		    u.big == t.big && u.colour == t.colour &&
		    !strcmp(u.name, t.name) && u.every == t.every &&
		    u.count == t.count && u.lo == t.lo && u.hi == t.hi);
}

static void bad_tables(void **state)
{
	static const struct bach_optdesc twice[] = {
		{ .key = "a", .type = BACH_OPT_BOOL, .help = "x" },
		{ .key = "a", .type = BACH_OPT_BOOL, .help = "y" },
		{ 0 },
	};
	static const struct bach_optdesc bad_def[] = {
		{ .key = "a",
		  .type = BACH_OPT_UINT,
		  .help = "x",
		  .max = 9,
		  .def = "10" },
		{ 0 },
	};
	/* members that cannot hold what the row takes */
	static const struct bach_optdesc narrow[] = {
		{ .key = "small",
		  .type = BACH_OPT_UINT,
		  .help = "x",
		  .max = 256,
		  BACH_OPT_AT(struct thing, small) },
		{ 0 },
	};
	static const struct bach_optdesc scaled[] = {
		{ .key = "ring_mb",
		  .type = BACH_OPT_UINT,
		  .help = "x",
		  .max = 4096,
		  .scale = 1u << 20,
		  BACH_OPT_AT(struct thing, ring_bytes) },
		{ 0 },
	};
	static const struct bach_optdesc unbounded[] = {
		{ .key = "level",
		  .type = BACH_OPT_UINT,
		  .help = "x",
		  BACH_OPT_AT(struct thing, level) },
		{ 0 },
	};
	static const struct bach_optdesc long_name[] = {
		{ .key = "name",
		  .type = BACH_OPT_STRING,
		  .help = "x",
		  .max = 8,
		  BACH_OPT_AT(struct thing, name) },
		{ 0 },
	};
	static const struct bach_optdesc not_bool[] = {
		{ .key = "flag",
		  .type = BACH_OPT_BOOL,
		  .help = "x",
		  BACH_OPT_AT(struct thing, level) },
		{ 0 },
	};
	static const struct bach_optdesc no_show[] = {
		{ .key = "range",
		  .type = BACH_OPT_CUSTOM,
		  .arg = "LO-HI",
		  .help = "x",
		  .parse = parse_range,
		  .set = set_range },
		{ 0 },
	};
	static const int wide_values[] = { 1, 2, 300 };
	static const struct bach_optdesc wide_enum[] = {
		{ .key = "colour",
		  .type = BACH_OPT_ENUM,
		  .names = colours,
		  .values = wide_values,
		  .help = "x",
		  BACH_OPT_AT(struct thing, small) },
		{ 0 },
	};
	static const struct {
		const struct bach_optdesc *d;
		const char *why;
	} faults[] = {
		{ narrow, "option small: its largest value does not fit" },
		{ scaled, "option ring_mb: its largest value does not fit" },
		{ unbounded, "option level: its largest value does not fit" },
		{ long_name, "option name: max does not fit its member" },
		{ not_bool, "option flag: not a bool member" },
		{ no_show, "option range: set and show go together" },
		{ wide_enum, "option colour: a value does not fit its member" },
	};
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(faults) / sizeof(*faults); i++) {
		assert_int_equal(
			bach_opts_verify(faults[i].d, msg, sizeof(msg)),
			-EINVAL);
		if (!strstr(msg, faults[i].why))
			fail_msg("got '%s', wanted '%s'", msg, faults[i].why);
	}
	assert_int_equal(bach_opts_verify(twice, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "option a: twice"));
	assert_int_equal(bach_opts_verify(bad_def, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "the default of a"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers),
		cmocka_unit_test(sizes),
		cmocka_unit_test(bools_and_escapes),
		cmocka_unit_test(tables),
		cmocka_unit_test(errors),
		cmocka_unit_test(help),
		cmocka_unit_test(members),
		cmocka_unit_test(bad_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
