// SPDX-License-Identifier: MIT
/*
 * libsigrok's log (la_shared.h): libsigrok reports problems through it,
 * so while a decode (la.c) or a live device (drivers/sigrok) runs, its
 * first error and warning are kept, and our messages can say what
 * libsigrok found wrong rather than only that something failed.
 *
 * libsigrok's log is process-wide and may be written from its own
 * threads: the first error or warning since la_log_begin() is kept under a
 * lock (and the first error apart), and la_log_said() and la_log_error()
 * hand out copies.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "la_shared.h"

static pthread_mutex_t sr_mu = PTHREAD_MUTEX_INITIALIZER;
static char sr_last[512], sr_error[sizeof sr_last];

__attribute__((format(printf, 3, 0))) static int
log_keep(void *cb_data, int level, const char *fmt, va_list args)
{
	va_list again;

	(void)cb_data;
	pthread_mutex_lock(&sr_mu);
	if (level <= SR_LOG_ERR && !sr_error[0]) {
		va_copy(again, args);
		vsnprintf(sr_error, sizeof sr_error, fmt, again);
		va_end(again);
	}
	if (level <= SR_LOG_WARN && !sr_last[0])
		vsnprintf(sr_last, sizeof sr_last, fmt, args);
	pthread_mutex_unlock(&sr_mu);
	return SR_OK;
}

void la_log_begin(void)
{
	pthread_mutex_lock(&sr_mu);
	sr_last[0] = '\0';
	sr_error[0] = '\0';
	pthread_mutex_unlock(&sr_mu);
	sr_log_loglevel_set(SR_LOG_WARN);
	sr_log_callback_set(log_keep, NULL);
}

/* A copy of a kept message for this thread, or NULL when there is none. */
static const char *log_copy(const char *kept, char *copy)
{
	pthread_mutex_lock(&sr_mu);
	memcpy(copy, kept, sizeof sr_last);
	pthread_mutex_unlock(&sr_mu);
	return copy[0] ? copy : NULL;
}

const char *la_log_said(void)
{
	static __thread char copy[sizeof sr_last];

	return log_copy(sr_last, copy);
}

const char *la_log_error(void)
{
	static __thread char copy[sizeof sr_error];

	return log_copy(sr_error, copy);
}
