// SPDX-License-Identifier: MIT
/*
 * The formats' helpers that need not inline (format_kit.h): the reasons
 * of a refused line.
 */
#include <stdarg.h>

#include "lib/formats/format_kit.h"

/* Reasons that name a value are formatted here; one per thread. */
static _Thread_local char why_buf[96];

int bad(const char **why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	*why = why_buf;
	return -EBADMSG;
}

int bad_str(const char **why, const char *reason)
{
	*why = reason;
	return -EBADMSG;
}
