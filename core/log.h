/* SPDX-License-Identifier: MIT */
/*
 * Logging for bachd and bach capture: one line per message on stderr with
 * a syslog priority prefix ("<3>") that journald understands when stderr
 * is connected to the journal, or plain ("bachd: ...") otherwise. Nothing
 * else in the daemon prints. A message
 * is always one line: control characters in it (a newline in a path, a
 * value) are written as \n, \t or \xNN (bach_escape_ctl()).
 */
#ifndef BACHD_LOG_H
#define BACHD_LOG_H

#include <stdbool.h>

enum {
	LOG_P_ERR = 3,
	LOG_P_WARNING = 4,
	LOG_P_NOTICE = 5,
	LOG_P_INFO = 6,
	LOG_P_DEBUG = 7
};

/*
 * Whether stderr is journald's stream: JOURNAL_STREAM names its device and
 * inode (systemd.exec(5)), and stderr is still that file. A child whose
 * stderr was redirected inherits the variable but not the stream.
 */
bool log_stderr_is_journal(void);
void log_init(const char *ident, bool prefixes, int max_level);
__attribute__((format(printf, 3, 4))) void log_msg(int prio, const char *where,
						   const char *fmt, ...);

#ifndef LOG_PREFIX
#define LOG_PREFIX NULL
#endif
#define log_err(...)	log_msg(LOG_P_ERR, LOG_PREFIX, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_P_WARNING, LOG_PREFIX, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_P_NOTICE, LOG_PREFIX, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_P_INFO, LOG_PREFIX, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_P_DEBUG, LOG_PREFIX, __VA_ARGS__)

#endif
