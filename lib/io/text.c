// SPDX-License-Identifier: MIT
/*
 * Text forms of one record, written without printf: these run once per
 * record in `bach dump` and the exporters.
 */
#include <string.h>

#include "bach/record.h"
#include "lib/formats/formats.h"

static const char hex[] = "0123456789abcdef";

static inline char *put_hex(char *d, uint32_t v, int digits)
{
	for (int i = digits - 1; i >= 0; i--) {
		d[i] = hex[v & 15];
		v >>= 4;
	}
	return d + digits;
}

static inline char *put_str(char *d, const char *s)
{
	size_t n = strlen(s);

	memcpy(d, s, n);
	return d + n;
}

char *bach_put_dec(char *d, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*d++ = tmp[--n];
	return d;
}

/* names padded to 8 bytes with their lengths, for fixed-size copies */
static const struct {
	char s[12];
	unsigned char len;
} names[BACH_NTYPES] = {
	{ "INVALID", 7 },     { "INT_ACK", 7 },	  { "INVALID", 7 },
	{ "SPECIAL", 7 },     { "INVALID", 7 },	  { "IO_READ", 7 },
	{ "INVALID", 7 },     { "IO_WRITE", 8 },  { "I_FETCH", 7 },
	{ "NC_I_FETCH", 10 }, { "INVALID", 7 },	  { "INVALID", 7 },
	{ "D_READ", 6 },      { "NC_D_READ", 9 }, { "WRITE_BACK", 10 },
	{ "D_WRITE", 7 },
};

size_t bach_fmt_text(char *dst, const uint8_t *rec)
{
	char *d = dst;
	unsigned t = rec[5] >> 4;

	d = put_hex(d, bach_get_be32(rec), 8);
	*d++ = ' ';
	*d++ = hex[rec[4] >> 4];
	*d++ = hex[rec[4] & 15];
	*d++ = ' ';
	memcpy(d, names[t].s, 12);
	d += names[t].len;
	*d++ = '\n';
	return (size_t)(d - dst);
}

size_t bach_fmt_csv(char *dst, const uint8_t *rec, uint64_t index)
{
	char *d = bach_put_dec(dst, index);

	d = put_str(d, ",0x");
	d = put_hex(d, bach_get_be32(rec), 8);
	d = put_str(d, ",0x");
	d = put_hex(d, rec[4], 2);
	d = put_str(d, ",0x");
	d = put_hex(d, rec[5], 2);
	*d++ = ',';
	d = put_str(d, bach_type_name(rec[5] >> 4));
	*d++ = '\n';
	return (size_t)(d - dst);
}

size_t bach_fmt_jsonl(char *dst, const uint8_t *rec, uint64_t index)
{
	char *d = put_str(dst, "{\"index\":");
	unsigned t = rec[5] >> 4;

	d = bach_put_dec(d, index);
	d = put_str(d, ",\"address\":\"0x");
	d = put_hex(d, bach_get_be32(rec), 8);
	d = put_str(d, "\",\"be\":\"0x");
	d = put_hex(d, rec[4], 2);
	d = put_str(d, "\",\"control\":\"0x");
	d = put_hex(d, rec[5], 2);
	d = put_str(d, "\",\"type\":\"");
	d = put_str(d, bach_type_name(t));
	if (t == BACH_T_SPECIAL) {
		d = put_str(d, "\",\"special\":\"");
		d = put_str(d, bach_special_name(bach_special_kind(
				       bach_get_be32(rec), rec[4])));
	}
	d = put_str(d, "\"}\n");
	return (size_t)(d - dst);
}
