/* SPDX-License-Identifier: MIT */
/*
 * Options as data (after libsigrok's devopts and std_* helpers): a driver,
 * or the [bachd] section of the configuration, describes each option once
 * in a table of struct bach_optdesc; the functions here parse and
 * range-check values against it, reject unknown keys naming the known
 * ones, fill in defaults, store each value in the member its row names
 * (BACH_OPT_AT) and show it back, and print the help. Nobody else parses
 * a number from an option: bach_parse_u64() and bach_parse_size() are
 * the project's number readers.
 *
 * Numbers are decimal, or hexadecimal after 0x. A leading zero is refused
 * rather than read as octal ("010" would be 8 to strtoull and 10 to a
 * person). No sign, no spaces, no overflow: 2^64 is an error, never 0.
 */
#ifndef BACH_OPTIONS_H
#define BACH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* 0, -EINVAL (not a number, or a leading zero) or -ERANGE (over 2^64-1). */
int bach_parse_u64(const char *s, uint64_t *v);

/*
 * A number with an optional decimal suffix k, M, G or T (10^3 to 10^12,
 * either case, as libsigrok reads sample rates), a fraction before it
 * ("1.5M") when the result is whole, and then optionally unit (compared
 * without case; NULL: none), e.g. "24MHz" with unit "Hz". 0, -EINVAL or
 * -ERANGE.
 */
int bach_parse_size(const char *s, const char *unit, uint64_t *v);

/* yes/no, true/false, on/off, 1/0 (any case): 0 or -EINVAL. */
int bach_parse_bool(const char *s, bool *v);

/*
 * Copy s to dst (cap bytes, always terminated, cut to fit, never in an
 * escape or a character) with control characters written as \n, \r, \t
 * or \xNN: C0 and DEL, C1 (U+0080 to U+009F, as \xc2\xNN) and every byte
 * that is not part of well-formed UTF-8, so that a value, a path or a
 * manifest's string never splits a log line or reaches the terminal as
 * a control sequence. Returns dst.
 */
char *bach_escape_ctl(char *dst, size_t cap, const char *s);
/*
 * A count's noun in a message, singular for 1: "%llu segment%s", n,
 * bach_s(n); "%llu entr%s", n, bach_plural(n, "y", "ies").
 */
static inline const char *bach_plural(unsigned long long n, const char *one,
				      const char *many)
{
	return n == 1 ? one : many;
}
static inline const char *bach_s(unsigned long long n)
{
	return bach_plural(n, "", "s");
}
/*
 * Bytes of the well-formed UTF-8 character s starts with (1 to 4; 1 for
 * ASCII, NUL included), or 0 for a byte that starts none: a stray
 * continuation byte, an overlong form, a surrogate, beyond U+10FFFF, or
 * cut short (by the NUL too).
 */
size_t bach_utf8_len(const char *s);

/* ---- option tables ----------------------------------------------------- */

enum bach_opt_type {
	BACH_OPT_BOOL,	 /* bach_parse_bool(); u is 0 or 1 */
	BACH_OPT_UINT,	 /* bach_parse_u64() in [min, max]: u */
	BACH_OPT_SIZE,	 /* bach_parse_size() with unit, in [min, max]: u */
	BACH_OPT_STRING, /* min to max bytes: s */
	BACH_OPT_ENUM,	 /* one of names[]: u is its index */
	BACH_OPT_PAIR,	 /* N:M, u in [min, max], u2 in [min2, max2] */
	BACH_OPT_LIST,	 /* text, repeatable, at most max times: list */
	BACH_OPT_CUSTOM, /* parse() alone reads it */
};

struct bach_optval;

/*
 * One option. A table is an array of these ended by one with key NULL.
 * Members left zero mean: no upper limit (max, max2), no default, not
 * required.
 */
struct bach_optdesc {
	const char *key;
	enum bach_opt_type type;
	/* the value's name in the help, key=ARG ("N", "FILE"); BOOL and
	 * ENUM make their own ("0|1", "stall|drop") when it is NULL */
	const char *arg;
	const char *help; /* what it does, one sentence, no default */
	/*
	 * The default, as a user would write it: parsed like a given value
	 * when the key is absent. NULL: the option is unset when absent.
	 */
	const char *def;
	/* what absence means, for the help, when "default DEF" does not say
	 * it ("run until stopped"); also used with def NULL */
	const char *def_help;
	uint64_t min, max;	  /* UINT, SIZE, PAIR's N; STRING: length;
				   * LIST: values (max only) */
	uint64_t min2, max2;	  /* PAIR's M */
	const char *const *names; /* ENUM: NULL-terminated */
	const char *unit;	  /* SIZE: accepted after the number ("Hz") */
	/* added to a range or a "required" message: how to do without */
	const char *hint;
	bool required;
	/*
	 * Optional: after the type's own checks (CUSTOM: instead of them),
	 * read or check text further and fill v. Returns 0, or -EINVAL with
	 * what it wants in msg ("want VVVV:PPPP in hex"): the caller adds
	 * the key and the value.
	 */
	int (*parse)(const char *text, struct bach_optval *v, char *msg,
		     size_t cap);

	/*
	 * Where the value goes in the struct the table describes (the
	 * object of bach_opt_apply() and bach_opt_show()): the member at
	 * off, of size bytes, named by BACH_OPT_AT(). BOOL: a bool. UINT,
	 * SIZE, CUSTOM: an unsigned member (or an int never negative) of
	 * 1, 2, 4 or 8 bytes holding u * scale. ENUM: an int or enum
	 * member holding values[u], or u. PAIR: u there, u2 at off2
	 * (BACH_OPT_AT2()). STRING: a char array, which bounds the length
	 * when max is 0. size 0 and no set: the value is stored nowhere
	 * (LIST; the caller reads the bach_optval).
	 */
	size_t off, size, off2, size2;
	uint64_t scale;	   /* 0: 1 */
	const int *values; /* ENUM: what names[i] stores; NULL: i */
	/*
	 * For the odd key, instead of off: store v (text in v->s) into
	 * obj, returning 0 or -errno with what is wrong in msg; and show()
	 * writes it back as bach_opt_show() does.
	 */
	int (*set)(void *obj, const struct bach_optval *v, char *msg,
		   size_t cap);
	int (*show)(const void *obj, char *buf, size_t cap);
};

/* In a table row: the value goes to member of type (a struct). */
#define BACH_OPT_AT(type, member)                                              \
	.off = offsetof(type, member), .size = sizeof(((type *)0)->member)
/* ... and a PAIR's second number to member. */
#define BACH_OPT_AT2(type, member)                                             \
	.off2 = offsetof(type, member), .size2 = sizeof(((type *)0)->member)

/* A parsed value, one per table entry, in the table's order. */
struct bach_optval {
	bool set;	   /* given, or its default: the members hold it */
	bool given;	   /* given (set and not the default) */
	uint64_t u, u2;	   /* BOOL, UINT, SIZE, ENUM, PAIR, CUSTOM */
	const char *s;	   /* the text as given (or the default) */
	const char **list; /* LIST: every value given, in order */
	size_t n;	   /* LIST: how many */
};

/*
 * An option as the user gave it: KEY=VALUE, from file:line of a
 * configuration, or from the command line (file NULL). The strings
 * belong to whoever filled the array.
 */
struct bach_option {
	const char *key;
	const char *value;
	const char *file;
	unsigned line;
};

/* The index of key in d, or -1. */
int bach_opt_find(const struct bach_optdesc *d, const char *key);
size_t bach_opt_count(const struct bach_optdesc *d);

/*
 * Parse text as the value of option o into v (set, given and s too). On
 * an error returns -EINVAL with "KEY: what it wants, not 'TEXT'" in msg.
 * LIST values are not collected here (bach_opts_parse() does).
 */
int bach_opt_parse(const struct bach_optdesc *o, const char *text,
		   struct bach_optval *v, char *msg, size_t cap);

/*
 * Parse a list of options given for owner (a driver's name, for messages)
 * into vals (bach_opt_count(d) entries): a later value of a key replaces
 * an earlier one (which is not even checked), a LIST key collects every
 * value, defaults fill what is absent. On an error returns -EINVAL
 * (-ENOMEM) with the message in msg, beginning "FILE:LINE: " for a value
 * from a file: an unknown key names the known ones, a bad value says what
 * is wanted, a required option missing says so. Free vals with
 * bach_opts_free() either way.
 */
int bach_opts_parse(const struct bach_optdesc *d, const char *owner,
		    const struct bach_option *opts, size_t n,
		    struct bach_optval *vals, char *msg, size_t cap);
void bach_opts_free(const struct bach_optdesc *d, struct bach_optval *vals);

/*
 * Store v, parsed for option o, where o says (off, or set) in obj.
 * Returns 0, or -errno with "KEY: what is wrong" in msg (only set can
 * fail).
 */
int bach_opt_apply(const struct bach_optdesc *o, void *obj,
		   const struct bach_optval *v, char *msg, size_t cap);

/* Apply every value that is set (vals as bach_opts_parse() fills it). */
void bach_opts_apply(const struct bach_optdesc *d, void *obj,
		     const struct bach_optval *vals);

/*
 * Parse text for the option key of d and apply it to obj. Returns 0,
 * -ENOENT for a key d lacks (msg untouched), or -EINVAL (-errno from
 * set) with "KEY: what it wants, not 'TEXT'" in msg.
 */
int bach_opt_set(const struct bach_optdesc *d, void *obj, const char *key,
		 const char *text, char *msg, size_t cap);

/* Apply every default of d to obj (what it holds for the others stays). */
void bach_opts_defaults(const struct bach_optdesc *d, void *obj);

/* How a JSON writer types the text bach_opt_show() gives. */
enum bach_opt_json {
	BACH_JSON_NUMBER, /* decimal digits */
	BACH_JSON_BOOL,	  /* true or false */
	BACH_JSON_STRING,
	BACH_JSON_LIST, /* comma-separated strings, an array */
};

/*
 * Option o's value in obj as text it takes again (bach_opt_set() of the
 * text leaves obj as it is): a number in the option's own unit (a scaled
 * one divided back), true or false, an ENUM's name, a string as it is,
 * PAIR as N:M. Returns its enum bach_opt_json, or -ENOENT when o stores
 * its value nowhere, -ERANGE when the member holds what no text gives,
 * -ENOSPC when cap is too small.
 */
int bach_opt_show(const struct bach_optdesc *o, const void *obj, char *buf,
		  size_t cap);

/* "key, key, ..." (cut to fit). */
void bach_opts_keys(const struct bach_optdesc *d, char *buf, size_t cap);

/*
 * The help of every option, one per paragraph: "  key=ARG  help, range
 * (default ...)", wrapped to 79 columns.
 */
void bach_opts_print(FILE *f, const struct bach_optdesc *d);

/*
 * A table's own consistency (keys unique, defaults valid for their type
 * and range, names present, a member that holds the largest value and
 * a string's longest): 0, or -EINVAL with the first fault in msg.
 */
int bach_opts_verify(const struct bach_optdesc *d, char *msg, size_t cap);

#endif
