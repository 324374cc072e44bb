// SPDX-License-Identifier: MIT
/*
 * bachd's settings (daemon/config.c) as a table that says where each value
 * goes: a setting is one row and one field. Walked row by row, so that a
 * new row is checked with no change here: every row stores its value,
 * shows it back as a value it takes again, starts at its default, and is
 * a member of the started event's config, by its key, with that value
 * (core/manifest_write.c, read back with jansson).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "lib/io/manifest.h"
#include "log.h"
#include "manifest_write.h"

/* Values to try beyond a row's own (its default, names, range ends). */
static const struct {
	const char *key, *text;
} samples[] = {
	{ "min_free", "7%" },
	{ "min_free", "8M" },
	{ "min_free", "0" },
	{ "duration", "90m" },
	{ "duration", "2d" },
	{ "marker", "io:0x80" },
	{ "marker", "io:0xe0-0xef,mem:0xfff00000/4096" },
	{ "keep_bytes", "1.5G" },
	{ "min_free", "9223372036854775807" },
	{ "output", "/a \"b\"" },
	{ "metrics_labels", "room" },
	{ "metrics_labels", "room,_rack2" },
	{ "instance_name", "lab \"1\"" },
};

static struct bachd_config *defaults(void)
{
	static struct bachd_config c;

	bachd_config_defaults(&c);
	return &c;
}

static const struct bach_optdesc *row(const char *key)
{
	int i = bach_opt_find(bachd_settings, key);

	assert_true(i >= 0);
	return &bachd_settings[i];
}

/* KEY's value in c as it shows; fails when it does not show */
static int show(const struct bachd_config *c, const char *key, char *buf,
		size_t cap)
{
	int kind = bach_opt_show(row(key), c, buf, cap);

	if (kind < 0)
		fail_msg("setting %s does not show: %s", key, strerror(-kind));
	return kind;
}

/*
 * text given for key to a default configuration shows as a value that,
 * given again to another, shows the same (set and show are inverses).
 */
static void round_trip(const char *key, const char *text)
{
	static struct bachd_config a, b;
	char msg[512], t1[8192], t2[8192];

	bachd_config_defaults(&a);
	bachd_config_defaults(&b);
	if (bachd_config_set(&a, key, text, msg, sizeof(msg)))
		fail_msg("%s=%s: %s", key, text, msg);
	show(&a, key, t1, sizeof(t1));
	if (bachd_config_set(&b, key, t1, msg, sizeof(msg)))
		fail_msg("%s=%s shows as '%s', which it refuses: %s", key, text,
			 t1, msg);
	show(&b, key, t2, sizeof(t2));
	if (strcmp(t1, t2))
		fail_msg("%s=%s shows as '%s', given again as '%s'", key, text,
			 t1, t2);
}

static void rows_are_consistent(void **state)
{
	char msg[512];

	(void)state;
	assert_int_equal(bach_opts_verify(bachd_settings, msg, sizeof(msg)), 0);
}

/* A default configuration shows each row's default, or none. */
static void defaults_show(void **state)
{
	const struct bachd_config *c = defaults();
	char buf[8192], msg[512];

	(void)state;
	for (size_t i = 0; bachd_settings[i].key; i++) {
		const struct bach_optdesc *o = &bachd_settings[i];
		struct bach_optval want = { 0 }, got = { 0 };

		show(c, o->key, buf, sizeof(buf));
		if (!o->def) {
			if (buf[0])
				fail_msg("%s has no default, shows '%s'",
					 o->key, buf);
			continue;
		}
		assert_int_equal(
			bach_opt_parse(o, o->def, &want, msg, sizeof(msg)), 0);
		if (bach_opt_parse(o, buf, &got, msg, sizeof(msg)))
			fail_msg("%s shows '%s', which it refuses: %s", o->key,
				 buf, msg);
		if (got.u != want.u || got.u2 != want.u2 ||
		    (o->type == BACH_OPT_STRING && strcmp(got.s, want.s)))
			fail_msg(
				"%s's default is %s, a default configuration shows '%s'",
				o->key, o->def, buf);
	}
}

static void set_and_show_are_inverses(void **state)
{
	char text[64];

	(void)state;
	for (size_t i = 0; bachd_settings[i].key; i++) {
		const struct bach_optdesc *o = &bachd_settings[i];

		if (o->def)
			round_trip(o->key, o->def);
		switch (o->type) {
		case BACH_OPT_BOOL:
			round_trip(o->key, "yes");
			round_trip(o->key, "off");
			break;
		case BACH_OPT_ENUM:
			for (size_t k = 0; o->names[k]; k++)
				round_trip(o->key, o->names[k]);
			break;
		case BACH_OPT_UINT:
		case BACH_OPT_SIZE:
			snprintf(text, sizeof(text), "%llu",
				 (unsigned long long)o->min);
			round_trip(o->key, text);
			snprintf(text, sizeof(text), "%llu",
				 (unsigned long long)(o->max ? o->max
							     : UINT64_MAX));
			round_trip(o->key, text);
			break;
		case BACH_OPT_STRING:
			round_trip(o->key, "");
			/* one that reads its text further: samples[] */
			if (!o->parse)
				round_trip(o->key, "x y");
			break;
		default:
			break;
		}
	}
	for (size_t i = 0; i < sizeof(samples) / sizeof(*samples); i++)
		round_trip(samples[i].key, samples[i].text);
}

/* The started event of a capture with configuration c, parsed. */
static json_t *started(const struct bachd_config *c)
{
	char dir[] = "/tmp/bach-config.XXXXXX", path[64], cmd[128];
	struct manifest m = { .fd = -1 };
	json_error_t je;
	json_t *line;
	int dfd;

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(manifest_open(&m, dfd, true), 0);
	assert_int_equal(
		manifest_started(&m,
				 &(struct manifest_started){
					 .driver = "fake",
					 .device = "",
					 .config_file = "",
					 .io = "pwrite",
					 .host = "h",
					 .version = "v",
					 .settings = c->cap.settings,
					 .settings_of = c->cap.settings_of,
				 }),
		0);
	manifest_close(&m);
	close(dfd);
	snprintf(path, sizeof(path), "%s/%s", dir, BACH_MANIFEST_NAME);
	line = json_load_file(path, JSON_DISABLE_EOF_CHECK, &je);
	if (!line)
		fail_msg("the started line is not JSON: %s", je.text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return line;
}

/* config's member for row o is the value c shows for it */
static void member_is_shown(const json_t *config, const struct bachd_config *c,
			    const struct bach_optdesc *o)
{
	json_t *v = json_object_get(config, o->key), *item;
	char buf[8192], *want;
	size_t k;
	int kind;

	if (!v)
		fail_msg("the started event's config lacks setting %s", o->key);
	kind = show(c, o->key, buf, sizeof(buf));
	switch (kind) {
	case BACH_JSON_NUMBER:
		if (!json_is_integer(v) ||
		    (unsigned long long)json_integer_value(v) !=
			    strtoull(buf, NULL, 10))
			fail_msg("config.%s is not the number %s", o->key, buf);
		break;
	case BACH_JSON_BOOL:
		if (!json_is_boolean(v) ||
		    json_is_true(v) != !strcmp(buf, "true"))
			fail_msg("config.%s is not %s", o->key, buf);
		break;
	case BACH_JSON_STRING:
		if (!json_is_string(v) || strcmp(json_string_value(v), buf))
			fail_msg("config.%s is not the string '%s'", o->key,
				 buf);
		break;
	case BACH_JSON_LIST:
		if (!json_is_array(v))
			fail_msg("config.%s is not an array", o->key);
		want = buf;
		json_array_foreach(v, k, item)
		{
			size_t len = strcspn(want, ",");

			if (!json_is_string(item) ||
			    strlen(json_string_value(item)) != len ||
			    strncmp(json_string_value(item), want, len))
				fail_msg("config.%s[%zu] is not in '%s'",
					 o->key, k, buf);
			want += len + (want[len] == ',');
		}
		if (*want)
			fail_msg("config.%s lacks some of '%s'", o->key, buf);
		break;
	default:
		fail_msg("config.%s: kind %d", o->key, kind);
	}
}

/* config holds every setting by its key, and only file and io besides */
static void config_members(const struct bachd_config *c)
{
	json_t *line = started(c), *config = json_object_get(line, "config");

	assert_true(json_is_object(config));
	assert_int_equal(json_integer_value(json_object_get(line, "version")),
			 2);
	assert_int_equal(json_object_size(config),
			 bach_opt_count(bachd_settings) + 2);
	assert_non_null(json_object_get(config, "file"));
	assert_string_equal(json_string_value(json_object_get(config, "io")),
			    "pwrite");
	for (size_t i = 0; bachd_settings[i].key; i++)
		member_is_shown(config, c, &bachd_settings[i]);
	json_decref(line);
}

static void manifest_config(void **state)
{
	static struct bachd_config c;
	char msg[512];

	(void)state;
	config_members(defaults());
	/* and with settings given, the odd keys' values among them */
	bachd_config_defaults(&c);
	for (size_t i = 0; i < sizeof(samples) / sizeof(*samples); i++)
		if (bachd_config_set(&c, samples[i].key, samples[i].text, msg,
				     sizeof(msg)))
			fail_msg("%s", msg);
	assert_int_equal(
		bachd_config_set(&c, "ring_mb", "0x10", msg, sizeof(msg)), 0);
	assert_int_equal(
		bachd_config_set(&c, "log_level", "warning", msg, sizeof(msg)),
		0);
	config_members(&c);
	/*
	 * every number at its largest: the line still reads (jansson takes
	 * no integer past 2^63 - 1, and lib/io/manifest_read.c reads with it)
	 */
	bachd_config_defaults(&c);
	for (size_t i = 0; bachd_settings[i].key; i++) {
		const struct bach_optdesc *o = &bachd_settings[i];
		char text[32];

		if (o->type != BACH_OPT_UINT && o->type != BACH_OPT_SIZE)
			continue;
		snprintf(text, sizeof(text), "%llu",
			 (unsigned long long)(o->max ? o->max : UINT64_MAX));
		if (bachd_config_set(&c, o->key, text, msg, sizeof(msg)))
			fail_msg("%s", msg);
	}
	config_members(&c);
	assert_int_equal(bachd_config_set(&c, "min_free", "9223372036854775808",
					  msg, sizeof(msg)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_are_consistent),
		cmocka_unit_test(defaults_show),
		cmocka_unit_test(set_and_show_are_inverses),
		cmocka_unit_test(manifest_config),
	};

	log_init("test", true, LOG_P_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
