// SPDX-License-Identifier: MIT
/* Options as data: numbers, option tables, their help (lib/options.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/options.h"

/* ---- numbers ------------------------------------------------------------ */

static int digit(char c, unsigned base)
{
	int d = c >= '0' && c <= '9'   ? c - '0'
		: c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10
				       : 99;

	return d < (int)base ? d : -1;
}

/* The digits of s[0..len), decimal or 0x hex, into *v. */
static int parse_digits(const char *s, size_t len, uint64_t *v)
{
	unsigned base = 10;
	bool over = false;
	uint64_t x = 0;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len > 1 && s[0] == '0') {
		return -EINVAL; /* octal to strtoull, decimal to a person */
	}
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		int d = digit(s[i], base);

		if (d < 0)
			return -EINVAL;
		if (x > (UINT64_MAX - (unsigned)d) / base)
			over = true;
		x = x * base + (unsigned)d;
	}
	if (over)
		return -ERANGE;
	*v = x;
	return 0;
}

int bach_parse_u64(const char *s, uint64_t *v)
{
	return parse_digits(s, strlen(s), v);
}

int bach_parse_size(const char *s, const char *unit, uint64_t *v)
{
	static const char sfx[] = "kmgt";
	const char *p = s, *dot = NULL, *q;
	uint64_t x, f = 0, mult = 1, div = 1, t;
	int err;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return bach_parse_u64(s, v);
	while (*p >= '0' && *p <= '9')
		p++;
	err = parse_digits(s, (size_t)(p - s), &x);
	if (err)
		return err;
	if (*p == '.') {
		dot = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == dot || p - dot > 12)
			return -EINVAL;
		for (q = dot; q < p; q++) {
			f = f * 10 + (uint64_t)(*q - '0');
			div *= 10;
		}
	}
	for (q = p; *q == ' '; q++)
		;
	if (*q)
		p = q; /* spaces only before a suffix or unit */
	if (*p && (q = strchr(sfx, *p | 0x20))) {
		for (long i = 0; i <= q - sfx; i++)
			mult *= 1000;
		p++;
	}
	if (*p && (!unit || strcasecmp(p, unit)))
		return -EINVAL;
	if (__builtin_mul_overflow(f, mult, &t) || t % div)
		return -EINVAL; /* not a whole number */
	if (__builtin_mul_overflow(x, mult, &x) ||
	    __builtin_add_overflow(x, t / div, &x))
		return -ERANGE;
	*v = x;
	return 0;
}

int bach_parse_bool(const char *s, bool *v)
{
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true") ||
	    !strcmp(s, "1") || !strcasecmp(s, "on"))
		*v = true;
	else if (!strcasecmp(s, "no") || !strcasecmp(s, "false") ||
		 !strcmp(s, "0") || !strcasecmp(s, "off"))
		*v = false;
	else
		return -EINVAL;
	return 0;
}

size_t bach_utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	cp = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

char *bach_escape_ctl(char *dst, size_t cap, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = 0;

	if (!cap)
		return dst;
	while (*s) {
		unsigned char c = *s;
		const char *named = c == '\n'	? "\\n"
				    : c == '\r' ? "\\r"
				    : c == '\t' ? "\\t"
						: NULL;
		size_t len = bach_utf8_len((const char *)s), k = len;
		char e[9];

		if (named)
			k = (size_t)snprintf(e, sizeof(e), "%s", named);
		else if (c < 0x20 || c == 0x7f || !len)
			/* C0, DEL, a byte that is no UTF-8 (a terminal in
			 * another charset may take it for a C1 control) */
			k = (size_t)snprintf(e, sizeof(e), "\\x%02x", c);
		else if (c == 0xc2 && s[1] < 0xa0)
			/* C1 controls, U+0080 to U+009F: CSI, OSC, ... */
			k = (size_t)snprintf(e, sizeof(e), "\\xc2\\x%02x",
					     s[1]);
		else
			memcpy(e, s, len);
		if (n + k >= cap)
			break;
		memcpy(dst + n, e, k);
		n += k;
		s += len ? len : 1;
	}
	dst[n] = 0;
	return dst;
}

/* ---- tables ------------------------------------------------------------- */

#define NOLIMIT(m) ((m) ? (m) : UINT64_MAX)

/* A STRING's longest: max, or what its member holds. */
static uint64_t str_max(const struct bach_optdesc *o)
{
	return o->max ? o->max : o->size ? o->size - 1 : 0;
}

int bach_opt_find(const struct bach_optdesc *d, const char *key)
{
	for (int i = 0; d && d[i].key; i++)
		if (!strcmp(d[i].key, key))
			return i;
	return -1;
}

size_t bach_opt_count(const struct bach_optdesc *d)
{
	size_t n = 0;

	while (d && d[n].key)
		n++;
	return n;
}

static void range_help(const struct bach_optdesc *o, char *buf, size_t cap);

/* "want a number from 1 to 9" and the like, at *buf */
static void range_text(char *buf, size_t cap, const char *what, uint64_t min,
		       uint64_t max)
{
	if (!min && max == UINT64_MAX)
		snprintf(buf, cap, "want %s", what);
	else if (max == UINT64_MAX)
		snprintf(buf, cap, "want %s of at least %llu", what,
			 (unsigned long long)min);
	else
		snprintf(buf, cap, "want %s from %llu to %llu", what,
			 (unsigned long long)min, (unsigned long long)max);
}

/* "a, b or c" */
static void names_text(char *buf, size_t cap, const char *const *names)
{
	size_t n = 0, len = 0;

	while (names[n])
		n++;
	buf[0] = 0;
	if (n == 1) {
		snprintf(buf, cap, "only %s", names[0]);
		return;
	}
	for (size_t i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s",
					!i	     ? ""
					: i == n - 1 ? " or "
						     : ", ",
					names[i]);
}

static int parse_pair(const struct bach_optdesc *o, const char *text,
		      struct bach_optval *v, char *want, size_t cap)
{
	const char *colon = strchr(text, ':');
	char range[160];

	range_help(o, range, sizeof(range));
	snprintf(want, cap, "want %s%s%s", o->arg ? o->arg : "N:M",
		 range[0] ? ", " : "", range);
	if (!colon || parse_digits(text, (size_t)(colon - text), &v->u) ||
	    bach_parse_u64(colon + 1, &v->u2))
		return -EINVAL;
	if (v->u < o->min || v->u > NOLIMIT(o->max) || v->u2 < o->min2 ||
	    v->u2 > NOLIMIT(o->max2))
		return -EINVAL;
	return 0;
}

int bach_opt_parse(const struct bach_optdesc *o, const char *text,
		   struct bach_optval *v, char *msg, size_t cap)
{
	char want[256] = "", esc[256];
	size_t len = strlen(text);
	bool b = false;
	int err = 0;

	switch (o->type) {
	case BACH_OPT_BOOL:
		snprintf(want, sizeof(want),
			 "want 0 or 1 (or yes/no, true/false, on/off)");
		err = bach_parse_bool(text, &b);
		v->u = b;
		break;
	case BACH_OPT_UINT:
	case BACH_OPT_SIZE:
		range_text(want, sizeof(want),
			   o->type == BACH_OPT_SIZE
				   ? "a number (k, M, G suffixes)"
				   : "a number",
			   o->min, NOLIMIT(o->max));
		err = o->type == BACH_OPT_SIZE
			      ? bach_parse_size(text, o->unit, &v->u)
			      : bach_parse_u64(text, &v->u);
		if (err == -EINVAL && o->type == BACH_OPT_UINT) {
			size_t l = strlen(want);

			snprintf(
				want + l, sizeof(want) - l,
				" (decimal, or hex after 0x; no leading zeros)");
		}
		if (!err && (v->u < o->min || v->u > NOLIMIT(o->max)))
			err = -ERANGE;
		break;
	case BACH_OPT_STRING:
	case BACH_OPT_LIST:
		if (o->type == BACH_OPT_STRING && (o->min || str_max(o))) {
			range_text(want, sizeof(want), "a length", o->min,
				   NOLIMIT(str_max(o)));
			if (len < o->min || (str_max(o) && len > str_max(o)))
				err = -EINVAL;
		}
		break;
	case BACH_OPT_ENUM:
		names_text(want, sizeof(want), o->names);
		err = -EINVAL;
		for (size_t i = 0; o->names[i]; i++)
			if (!strcmp(o->names[i], text)) {
				v->u = i;
				err = 0;
			}
		break;
	case BACH_OPT_PAIR:
		err = parse_pair(o, text, v, want, sizeof(want));
		break;
	case BACH_OPT_CUSTOM:
		break;
	}
	if (!err && o->parse)
		err = o->parse(text, v, want, sizeof(want));
	if (err) {
		snprintf(msg, cap, "%s: %s, not '%s'%s%s%s", o->key, want,
			 bach_escape_ctl(esc, sizeof(esc), text),
			 o->hint ? " (" : "", o->hint ? o->hint : "",
			 o->hint ? ")" : "");
		return -EINVAL;
	}
	v->set = v->given = true;
	v->s = text;
	return 0;
}

__attribute__((format(printf, 4, 5))) static int
fail(char *msg, size_t cap, const struct bach_option *at, const char *fmt, ...)
{
	size_t n = 0;
	va_list ap;

	if (at && at->file)
		n = (size_t)snprintf(msg, cap, "%s:%u: ", at->file, at->line);
	if (n < cap) {
		va_start(ap, fmt);
		vsnprintf(msg + n, cap - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static const char *arg_of(const struct bach_optdesc *o, char *buf, size_t cap)
{
	if (o->arg)
		return o->arg;
	if (o->type == BACH_OPT_BOOL)
		return "0|1";
	if (o->type == BACH_OPT_ENUM) {
		size_t len = 0;

		buf[0] = 0;
		for (size_t i = 0; o->names[i] && len < cap; i++)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s",
						i ? "|" : "", o->names[i]);
		return buf;
	}
	return "VALUE";
}

/* opts[i]'s key is given again later */
static bool replaced(const struct bach_option *opts, size_t n, size_t i)
{
	for (size_t j = i + 1; j < n; j++)
		if (!strcmp(opts[j].key, opts[i].key))
			return true;
	return false;
}

int bach_opts_parse(const struct bach_optdesc *d, const char *owner,
		    const struct bach_option *opts, size_t n,
		    struct bach_optval *vals, char *msg, size_t cap)
{
	size_t nd = bach_opt_count(d);
	char why[512], keys[512], esc[128];

	memset(vals, 0, nd * sizeof(*vals));
	for (size_t i = 0; i < n; i++) {
		int k = bach_opt_find(d, opts[i].key);
		struct bach_optval v = { 0 };

		if (k < 0) {
			bach_opts_keys(d, keys, sizeof(keys));
			return fail(
				msg, cap, &opts[i],
				"unknown option '%s' for %s (%s)",
				bach_escape_ctl(esc, sizeof(esc), opts[i].key),
				owner, keys[0] ? keys : "it takes none");
		}
		if (d[k].type != BACH_OPT_LIST && replaced(opts, n, i))
			continue; /* only the last one counts */
		if (bach_opt_parse(&d[k], opts[i].value, &v, why, sizeof(why)))
			return fail(msg, cap, &opts[i], "option %s", why);
		if (d[k].type == BACH_OPT_LIST) {
			const char **l;

			if (d[k].max && vals[k].n == d[k].max)
				return fail(msg, cap, &opts[i],
					    "option %s: at most %llu values",
					    d[k].key,
					    (unsigned long long)d[k].max);
			l = realloc(vals[k].list, (vals[k].n + 1) * sizeof(*l));
			if (!l) {
				snprintf(msg, cap, "%s", strerror(ENOMEM));
				return -ENOMEM;
			}
			l[vals[k].n++] = v.s;
			vals[k].list = l;
			v.list = l;
			v.n = vals[k].n;
		}
		vals[k] = v;
	}
	for (size_t k = 0; k < nd; k++) {
		char arg[256];

		if (vals[k].set)
			continue;
		if (d[k].required)
			return fail(msg, cap, NULL,
				    "option %s=%s is required for %s%s%s%s",
				    d[k].key, arg_of(&d[k], arg, sizeof(arg)),
				    owner, d[k].hint ? " (" : "",
				    d[k].hint ? d[k].hint : "",
				    d[k].hint ? ")" : "");
		if (!d[k].def || d[k].type == BACH_OPT_LIST)
			continue;
		if (bach_opt_parse(&d[k], d[k].def, &vals[k], why, sizeof(why)))
			return fail(msg, cap, NULL, "%s: the default of %s",
				    owner, why);
		vals[k].given = false;
	}
	return 0;
}

void bach_opts_free(const struct bach_optdesc *d, struct bach_optval *vals)
{
	for (size_t k = 0; d && d[k].key; k++) {
		free(vals[k].list);
		vals[k].list = NULL;
		vals[k].n = 0;
	}
}

void bach_opts_keys(const struct bach_optdesc *d, char *buf, size_t cap)
{
	size_t len = 0;

	if (!cap)
		return;
	buf[0] = 0;
	for (size_t i = 0; d && d[i].key && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s",
					i ? ", " : "", d[i].key);
}

/* ---- where values go ---------------------------------------------------- */

/* The largest number a member of size bytes holds. */
static uint64_t size_max(size_t size)
{
	return size >= 8 ? UINT64_MAX : (1ull << (8 * size)) - 1;
}

static void put_uint(void *p, size_t size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(p, &u8, 1);
		break;
	case 2:
		memcpy(p, &u16, 2);
		break;
	case 4:
		memcpy(p, &u32, 4);
		break;
	case 8:
		memcpy(p, &v, 8);
		break;
	}
}

static uint64_t get_uint(const void *p, size_t size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	case 8:
		memcpy(&u64, p, 8);
		return u64;
	}
	return 0;
}

/* What an ENUM member holds for names[i]. */
static uint64_t enum_value(const struct bach_optdesc *o, size_t i)
{
	return o->values ? (uint64_t)o->values[i] & size_max(o->size) : i;
}

int bach_opt_apply(const struct bach_optdesc *o, void *obj,
		   const struct bach_optval *v, char *msg, size_t cap)
{
	char *p = (char *)obj + o->off, why[256] = "";
	int err;

	if (o->set) {
		err = o->set(obj, v, why, sizeof(why));
		if (err)
			snprintf(msg, cap, "%s: %s", o->key, why);
		return err;
	}
	if (!o->size)
		return 0;
	switch (o->type) {
	case BACH_OPT_STRING:
		snprintf(p, o->size, "%s", v->s);
		break;
	case BACH_OPT_ENUM:
		put_uint(p, o->size, enum_value(o, v->u));
		break;
	case BACH_OPT_PAIR:
		put_uint((char *)obj + o->off2, o->size2, v->u2);
		/* fall through */
	default:
		put_uint(p, o->size, v->u * (o->scale ? o->scale : 1));
	}
	return 0;
}

void bach_opts_apply(const struct bach_optdesc *d, void *obj,
		     const struct bach_optval *vals)
{
	char msg[256];

	for (size_t i = 0; d && d[i].key; i++)
		if (vals[i].set)
			bach_opt_apply(&d[i], obj, &vals[i], msg, sizeof(msg));
}

int bach_opt_set(const struct bach_optdesc *d, void *obj, const char *key,
		 const char *text, char *msg, size_t cap)
{
	int i = bach_opt_find(d, key);
	struct bach_optval v = { 0 };

	if (i < 0)
		return -ENOENT;
	if (bach_opt_parse(&d[i], text, &v, msg, cap))
		return -EINVAL;
	return bach_opt_apply(&d[i], obj, &v, msg, cap);
}

void bach_opts_defaults(const struct bach_optdesc *d, void *obj)
{
	char msg[512];

	/* cannot fail: bach_opts_verify() checks every default (and
	 * tests/cli/options.sh runs it on every table) */
	for (size_t i = 0; d && d[i].key; i++) {
		struct bach_optval v = { 0 };

		if (d[i].def && d[i].type != BACH_OPT_LIST &&
		    !bach_opt_parse(&d[i], d[i].def, &v, msg, sizeof(msg)))
			bach_opt_apply(&d[i], obj, &v, msg, sizeof(msg));
	}
}

int bach_opt_show(const struct bach_optdesc *o, const void *obj, char *buf,
		  size_t cap)
{
	const char *p = (const char *)obj + o->off;
	uint64_t scale = o->scale ? o->scale : 1, u;
	int n, kind = BACH_JSON_NUMBER;
	size_t i;

	if (o->show)
		return o->show(obj, buf, cap);
	if (!o->size || o->set || o->type == BACH_OPT_LIST)
		return -ENOENT;
	u = get_uint(p, o->size);
	switch (o->type) {
	case BACH_OPT_BOOL:
		n = snprintf(buf, cap, "%s", u ? "true" : "false");
		kind = BACH_JSON_BOOL;
		break;
	case BACH_OPT_STRING:
		n = snprintf(buf, cap, "%.*s", (int)strnlen(p, o->size), p);
		kind = BACH_JSON_STRING;
		break;
	case BACH_OPT_ENUM:
		for (i = 0; o->names[i] && enum_value(o, i) != u; i++)
			;
		if (!o->names[i])
			return -ERANGE;
		n = snprintf(buf, cap, "%s", o->names[i]);
		kind = BACH_JSON_STRING;
		break;
	case BACH_OPT_PAIR:
		if (u % scale)
			return -ERANGE;
		n = snprintf(buf, cap, "%llu:%llu",
			     (unsigned long long)(u / scale),
			     (unsigned long long)get_uint(
				     (const char *)obj + o->off2, o->size2));
		kind = BACH_JSON_STRING;
		break;
	default: /* UINT, SIZE, CUSTOM */
		if (u % scale)
			return -ERANGE;
		n = snprintf(buf, cap, "%llu", (unsigned long long)(u / scale));
	}
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return kind;
}

/* A member of a number's size. */
static bool sized(size_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/* Where the row stores its value can hold every value it takes. */
static int verify_member(const struct bach_optdesc *o, char *msg, size_t cap)
{
	const char *why = NULL;
	uint64_t top;

	if (!o->set != !o->show) {
		why = "set and show go together";
	} else if (o->set) {
		return 0;
	} else if (!o->size) {
		why = o->size2 ? "off2 without off" : NULL;
	} else if (o->type == BACH_OPT_LIST) {
		why = "a list has no member";
	} else if (o->type == BACH_OPT_STRING) {
		why = o->max >= o->size ? "max does not fit its member" : NULL;
	} else if (o->type == BACH_OPT_BOOL) {
		why = o->size != sizeof(bool) ? "not a bool member" : NULL;
	} else if (!sized(o->size)) {
		why = "a number's member has 1, 2, 4 or 8 bytes";
	} else if (o->type == BACH_OPT_ENUM) {
		for (size_t i = 0; o->values && o->names[i]; i++)
			if (o->values[i] < 0 ||
			    (uint64_t)o->values[i] > size_max(o->size))
				why = "a value does not fit its member";
	} else if (__builtin_mul_overflow(NOLIMIT(o->max),
					  o->scale ? o->scale : 1, &top) ||
		   top > size_max(o->size)) {
		why = "its largest value does not fit its member";
	} else if (o->type == BACH_OPT_PAIR &&
		   (!sized(o->size2) ||
		    NOLIMIT(o->max2) > size_max(o->size2))) {
		why = "its largest M does not fit its member";
	}
	return why ? fail(msg, cap, NULL, "option %s: %s", o->key, why) : 0;
}

/* ---- help -------------------------------------------------------------- */

#define HELP_COL   22
#define HELP_WIDTH 79

/* The range part of the help: "1 to 9", "at least 1", "C 0 to 9". */
static void range_help(const struct bach_optdesc *o, char *buf, size_t cap)
{
	uint64_t max = NOLIMIT(o->max);
	char a[64], *b;
	size_t l;

	buf[0] = 0;
	switch (o->type) {
	case BACH_OPT_UINT:
	case BACH_OPT_SIZE:
		if (max != UINT64_MAX)
			snprintf(buf, cap, "%llu to %llu",
				 (unsigned long long)o->min,
				 (unsigned long long)max);
		else if (o->min)
			snprintf(buf, cap, "at least %llu",
				 (unsigned long long)o->min);
		break;
	case BACH_OPT_PAIR:
		snprintf(a, sizeof(a), "%s", o->arg ? o->arg : "N:M");
		b = strchr(a, ':');
		if (b)
			*b++ = 0;
		if (o->min || o->max)
			snprintf(buf, cap, "%s %llu to %llu", a,
				 (unsigned long long)o->min,
				 (unsigned long long)max);
		l = strlen(buf);
		if (o->min2 || o->max2)
			snprintf(buf + l, cap - l, "%s%s %llu to %llu",
				 l ? ", " : "", b ? b : "M",
				 (unsigned long long)o->min2,
				 (unsigned long long)NOLIMIT(o->max2));
		break;
	case BACH_OPT_STRING:
		if (str_max(o) && o->min)
			snprintf(buf, cap, "%llu to %llu bytes",
				 (unsigned long long)o->min,
				 (unsigned long long)str_max(o));
		else if (str_max(o))
			snprintf(buf, cap, "at most %llu bytes",
				 (unsigned long long)str_max(o));
		break;
	case BACH_OPT_LIST:
		if (o->max)
			snprintf(buf, cap, "repeatable, up to %llu times",
				 (unsigned long long)o->max);
		else
			snprintf(buf, cap, "repeatable");
		break;
	default:
		break;
	}
}

/* Text from column col on, wrapped at HELP_WIDTH, continued at HELP_COL. */
static void wrap(FILE *f, const char *s, size_t col)
{
	while (*s) {
		size_t room = HELP_WIDTH - col, n = strlen(s);

		if (n > room) {
			n = room;
			while (n && s[n] != ' ')
				n--;
			if (!n) /* one long word */
				n = strcspn(s, " ");
		}
		fprintf(f, "%.*s\n", (int)n, s);
		s += n;
		while (*s == ' ')
			s++;
		if (*s)
			fprintf(f, "%*s", HELP_COL, "");
		col = HELP_COL;
	}
}

void bach_opts_print(FILE *f, const struct bach_optdesc *d)
{
	for (size_t i = 0; d && d[i].key; i++) {
		const struct bach_optdesc *o = &d[i];
		char left[128], text[1024], range[160], arg[128], dflt[160];
		int n;

		n = snprintf(left, sizeof(left), "  %s=%s", o->key,
			     arg_of(o, arg, sizeof(arg)));
		range_help(o, range, sizeof(range));
		if (o->required)
			snprintf(dflt, sizeof(dflt), "required");
		else if (o->def_help)
			snprintf(dflt, sizeof(dflt), "default: %s",
				 o->def_help);
		else if (o->def)
			snprintf(dflt, sizeof(dflt), "default %s", o->def);
		else
			dflt[0] = 0;
		snprintf(text, sizeof(text), "%s%s%s%s%s%s", o->help,
			 range[0] || dflt[0] ? " (" : "", range,
			 range[0] && dflt[0] ? ", " : "", dflt,
			 range[0] || dflt[0] ? ")" : "");
		if (n + 1 > HELP_COL)
			fprintf(f, "%s\n%*s", left, HELP_COL, "");
		else
			fprintf(f, "%-*s", HELP_COL, left);
		wrap(f, text, HELP_COL);
	}
}

int bach_opts_verify(const struct bach_optdesc *d, char *msg, size_t cap)
{
	char why[512];

	for (size_t i = 0; d && d[i].key; i++) {
		const struct bach_optdesc *o = &d[i];
		struct bach_optval v = { 0 };

		if (!o->key[0] || strchr(o->key, '=') || !o->help)
			return fail(msg, cap, NULL,
				    "option %zu: no key or help", i);
		if (bach_opt_find(d, o->key) != (int)i)
			return fail(msg, cap, NULL, "option %s: twice", o->key);
		if (o->type == BACH_OPT_ENUM && (!o->names || !o->names[0]))
			return fail(msg, cap, NULL, "option %s: no names",
				    o->key);
		if (o->type == BACH_OPT_CUSTOM && (!o->parse || !o->arg))
			return fail(msg, cap, NULL,
				    "option %s: custom without parse or arg",
				    o->key);
		if (o->min > NOLIMIT(o->max) || o->min2 > NOLIMIT(o->max2))
			return fail(msg, cap, NULL, "option %s: min > max",
				    o->key);
		if (o->required && o->def)
			return fail(msg, cap, NULL,
				    "option %s: required with a default",
				    o->key);
		if (o->def && bach_opt_parse(o, o->def, &v, why, sizeof(why)))
			return fail(msg, cap, NULL, "the default of %s", why);
		if (verify_member(o, msg, cap))
			return -EINVAL;
	}
	return 0;
}
