// SPDX-License-Identifier: MIT
/*
 * Messages of every command: "bach CMD: ..." on standard error (prog_cmd,
 * which main() sets to the command being run), and usage errors, which
 * point to the command's help; and JSON out (put_json).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"

const char *prog_cmd = "bach";

/* "bach CMD: " and the message, without its end */
__attribute__((format(printf, 1, 0))) static void vmsg(const char *fmt,
						       va_list ap)
{
	fprintf(stderr, "%s: ", prog_cmd);
	vfprintf(stderr, fmt, ap);
}

void errmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog_cmd);
	return EXIT_USAGE;
}

int put_json(json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII |
					JSON_REAL_PRECISION(15));

	json_decref(v);
	if (!s) {
		errmsg("out of memory");
		return EXIT_USAGE;
	}
	puts(s);
	free(s);
	return EXIT_OK;
}
