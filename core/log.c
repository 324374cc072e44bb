// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/options.h"
#include "log.h"

static const char *ident = "bachd";
static bool prefixes = true;
static int max_level = LOG_P_INFO;

bool log_stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	/* systemd.exec(5): "DEVICE:INODE" of the stream stderr was given */
	if (!e || sscanf(e, "%llu:%llu%n", &dev, &ino, &end) != 2 || e[end])
		return false;
	if (fstat(2, &st) < 0)
		return false;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void log_init(const char *id, bool pfx, int level)
{
	ident = id;
	prefixes = pfx;
	max_level = level;
}

void log_msg(int prio, const char *where, const char *fmt, ...)
{
	char line[1024], msg[1024];
	size_t n = 0;
	va_list ap;

	if (prio > max_level)
		return;
	if (prefixes)
		n = (size_t)snprintf(line, sizeof(line), "<%d>", prio);
	else
		n = (size_t)snprintf(line, sizeof(line), "%s: ", ident);
	if (where && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "%s: ", where);
	if (n < sizeof(line)) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		/* a path or a value with a newline must not split the line */
		bach_escape_ctl(line + n, sizeof(line) - n, msg);
		n += strlen(line + n);
	}
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write per line, so that threads do not interleave */
	if (write(2, line, n) < 0)
		return;
}
