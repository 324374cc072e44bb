// SPDX-License-Identifier: MIT
/*
 * What a format keeps of a trace (bach diff --as): each record through the
 * format's own export and back through its own import, so what is kept is
 * by construction what the two directions of docs/formats.md sections 6
 * and 7 keep, and a trace and its export read back project alike.
 */
#include <string.h>

#include "lib/formats/format_kit.h"

ssize_t bach_format_project(const struct bach_format *f, const uint8_t *recs,
			    size_t n, uint64_t index, char *text, uint8_t *out,
			    struct bach_export_carry *carry, uint64_t *bad_at,
			    const char **why)
{
	uint64_t skipped = 0;
	size_t len, m = 0;
	const char *p, *end;

	if (f->kind != BACH_FORMAT_FOREIGN) {
		memcpy(out, recs, n * BACH_REC_SIZE);
		return (ssize_t)n;
	}
	len = f->write(text, recs, n, index, NULL, &skipped, carry);
	for (p = text, end = text + len; p < end;) {
		const char *e =
			f->unit ? p + f->unit : memchr(p, '\n', end - p);
		int k;

		if (!e)
			e = end;
		k = f->line(p, (size_t)(e - p), 0, out + m * BACH_REC_SIZE,
			    &skipped, why);
		if (k < 0) {
			*bad_at = (uint64_t)(p - text);
			return k;
		}
		m += (size_t)k;
		p = f->unit ? e : e + 1;
	}
	return (ssize_t)m;
}
