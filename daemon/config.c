// SPDX-License-Identifier: MIT
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"

void bachd_config_defaults(struct bachd_config *c)
{
	memset(c, 0, sizeof(*c));
	capture_config_defaults(&c->cap);
	c->log_level = LOG_P_INFO;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") ||
	    !strcmp(v, "1") || !strcasecmp(v, "on"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") ||
		 !strcmp(v, "0") || !strcasecmp(v, "off"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int parse_num(const char *v, unsigned long long max,
		     unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || *out > max)
		return -EINVAL;
	return 0;
}

#define COPY(dst, v) snprintf(dst, sizeof(dst), "%s", v) >= (int)sizeof(dst)

int bachd_config_set(struct bachd_config *c, const char *key,
		     const char *v, char *msg, size_t msglen)
{
	unsigned long long n;

	if (!strcmp(key, "output")) {
		if (COPY(c->cap.output, v))
			goto too_long;
	} else if (!strcmp(key, "driver")) {
		if (COPY(c->cap.driver, v))
			goto too_long;
	} else if (!strcmp(key, "policy")) {
		if (!strcmp(v, "stall"))
			c->cap.policy = BACH_POLICY_STALL;
		else if (!strcmp(v, "drop"))
			c->cap.policy = BACH_POLICY_DROP;
		else
			goto bad;
	} else if (!strcmp(key, "gap_markers")) {
		if (parse_bool(v, &c->cap.gap_markers))
			goto bad;
	} else if (!strcmp(key, "compress")) {
		if (parse_bool(v, &c->cap.compress))
			goto bad;
	} else if (!strcmp(key, "raw_dump")) {
		if (parse_bool(v, &c->cap.raw_dump))
			goto bad;
	} else if (!strcmp(key, "io_uring")) {
		if (parse_bool(v, &c->cap.io_uring))
			goto bad;
	} else if (!strcmp(key, "level")) {
		if (parse_num(v, 12, &n) || n < 1)
			goto bad;
		c->cap.level = (int)n;
	} else if (!strcmp(key, "threads")) {
		if (parse_num(v, 64, &n))
			goto bad;
		c->cap.threads = (int)n;
	} else if (!strcmp(key, "ring_mb")) {
		if (parse_num(v, 1u << 20, &n) || n < 1)
			goto bad;
		c->cap.ring_bytes = n << 20;
	} else if (!strcmp(key, "rotate_mb")) {
		if (parse_num(v, 1u << 30, &n))
			goto bad;
		c->cap.rotate_bytes = n << 20;
	} else if (!strcmp(key, "rotate_seconds")) {
		if (parse_num(v, 1u << 30, &n))
			goto bad;
		c->cap.rotate_seconds = n;
	} else if (!strcmp(key, "flush_ms")) {
		if (parse_num(v, 3600000, &n) || n < 1)
			goto bad;
		c->cap.flush_ms = n;
	} else if (!strcmp(key, "queue_depth")) {
		if (parse_num(v, 256, &n) || n < 2)
			goto bad;
		c->cap.queue_depth = (unsigned)n;
	} else if (!strcmp(key, "test_writer_delay_ms")) {
		if (parse_num(v, 600000, &n))
			goto bad;
		c->cap.test_writer_delay_ms = (int)n;
	} else if (!strcmp(key, "control_socket")) {
		if (COPY(c->control_socket, v))
			goto too_long;
	} else if (!strcmp(key, "control_group")) {
		if (COPY(c->control_group, v))
			goto too_long;
	} else if (!strcmp(key, "log_level")) {
		if (!strcmp(v, "debug"))
			c->log_level = LOG_P_DEBUG;
		else if (!strcmp(v, "info"))
			c->log_level = LOG_P_INFO;
		else if (!strcmp(v, "notice"))
			c->log_level = LOG_P_NOTICE;
		else if (!strcmp(v, "warning"))
			c->log_level = LOG_P_WARNING;
		else
			goto bad;
	} else {
		snprintf(msg, msglen, "unknown setting '%s'", key);
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(msg, msglen, "%s: bad value '%s'", key, v);
	return -EINVAL;
too_long:
	snprintf(msg, msglen, "%s: value too long", key);
	return -EINVAL;
}

struct load_ctx {
	struct bachd_config *c;
	const char *file;
	FILE *f;
	unsigned line;		/* the line inih is looking at */
	char why[512];
	bool failed;
};

/* inih's reader: fgets, counting lines for the messages. */
static char *read_line(char *str, int num, void *stream)
{
	struct load_ctx *x = stream;
	char *s = fgets(str, num, x->f);

	if (s)
		x->line++;
	return s;
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct load_ctx *x = user;
	char why[512] = "";
	int err;

	if (!name) /* a section line on its own */
		return 1;
	if (!strcmp(section, "bachd")) {
		err = bachd_config_set(x->c, name, value, why, sizeof(why));
	} else if (!strcmp(section, "driver")) {
		/* checked against the driver's table once it is known */
		err = capture_config_option(&x->c->cap, name, value, x->file,
					    x->line);
		if (err)
			snprintf(why, sizeof(why), "%s",
				 err == -E2BIG ? "too many driver options" :
						 strerror(-err));
	} else {
		snprintf(why, sizeof(why),
			 "unknown section [%s] (bachd, driver)", section);
		err = -EINVAL;
	}
	if (!err)
		return 1;
	/* inih reports the line of the first error: keep its reason */
	if (!x->failed) {
		x->failed = true;
		snprintf(x->why, sizeof(x->why), "%s", why);
	}
	return 0;
}

int bachd_config_load(struct bachd_config *c, const char *file, char *msg,
		      size_t msglen)
{
	struct load_ctx x = { .c = c, .file = file };
	int line;

	x.f = fopen(file, "r");
	if (!x.f) {
		int err = -errno;

		snprintf(msg, msglen, "%s: %s", file, strerror(errno));
		return err;
	}
	line = ini_parse_stream(read_line, &x, handler, &x);
	fclose(x.f);
	snprintf(c->cap.config_path, sizeof(c->cap.config_path), "%s", file);
	if (line == 0)
		return 0;
	if (!x.failed)
		snprintf(x.why, sizeof(x.why), "syntax error");
	snprintf(msg, msglen, "%s:%d: %s", file, line, x.why);
	return -EINVAL;
}
