// SPDX-License-Identifier: MIT
/*
 * bach_manifest_ev_names[], the one list of the manifest's events that
 * the writer (core/manifest_write.c) and the reader (lib/io/manifest_read.c)
 * share: whole, and the same set of names as the documents list, read from the
 * documents themselves: docs/bachd.md section 5's event table (its first
 * column), and the "Its events:" lists of docs/formats.md section 4 and
 * docs/design.md section 4. The documents are found under $TOP (the
 * runner sets it), else the current directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/io/manifest.h"

#define MAX_NAMES 64

struct names {
	char name[MAX_NAMES][32];
	size_t n;
};

static void add_name(struct names *s, const char *p, size_t len)
{
	char name[32];

	if (len == 0 || len >= sizeof(name))
		fail_msg("a name of %zu bytes: '%.*s'", len, (int)len, p);
	memcpy(name, p, len);
	name[len] = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return; /* the table names a kind twice: one name */
	if (s->n == MAX_NAMES)
		fail_msg("more than %d names", MAX_NAMES);
	memcpy(s->name[s->n++], name, len + 1);
}

static bool has(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return true;
	return false;
}

/* The text of section heading ("## 5.") of docs file doc, to the next "## " */
static char *section(const char *doc, const char *heading)
{
	const char *top = getenv("TOP");
	char path[4096], needle[64], *buf, *start, *end;
	FILE *f;
	long size;

	snprintf(path, sizeof(path), "%s/%s", top && *top ? top : ".", doc);
	f = fopen(path, "r");
	if (!f)
		fail_msg(
			"%s: cannot read it (run from the source tree, or set TOP to it)",
			path);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc((size_t)size + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
	buf[size] = 0;
	fclose(f);
	snprintf(needle, sizeof(needle), "\n%s", heading);
	start = strstr(buf, needle);
	if (!start)
		fail_msg("%s has no section '%s'", path, heading);
	start += strlen(needle);
	end = strstr(start, "\n## ");
	if (end)
		*end = 0;
	memmove(buf, start, strlen(start) + 1);
	return buf;
}

/* the table, as a set; every row whole */
static struct names table(void)
{
	struct names s = { .n = 0 };

	for (unsigned k = 0; k < BACH_EV_OTHER; k++)
		add_name(&s, bach_manifest_ev_names[k],
			 bach_manifest_ev_names[k]
				 ? strlen(bach_manifest_ev_names[k])
				 : 0);
	return s;
}

static void same_set(const struct names *doc, const char *where)
{
	struct names t = table();

	for (size_t i = 0; i < doc->n; i++)
		if (!has(&t, doc->name[i]))
			fail_msg(
				"%s lists the event '%s', which bach_manifest_ev_names[] lacks",
				where, doc->name[i]);
	for (size_t i = 0; i < t.n; i++)
		if (!has(doc, t.name[i]))
			fail_msg(
				"bach_manifest_ev_names[] has '%s', which %s does not list",
				t.name[i], where);
}

static void rows(void **state)
{
	struct names t = table();
	struct bach_manifest_event e;

	(void)state;
	/* a name for every kind, no name twice */
	assert_int_equal(t.n, BACH_EV_OTHER);
	for (unsigned k = 0; k < BACH_EV_OTHER; k++) {
		const char *name = bach_manifest_ev_names[k];

		assert_ptr_equal(bach_manifest_ev_name(k), name);
		assert_int_equal(bach_manifest_ev_kind(name), k);
		/* as docs/bachd.md spells them; whole in the timeline's event
		 */
		assert_int_equal(strspn(name, "abcdefghijklmnopqrstuvwxyz_"),
				 strlen(name));
		assert_true(strlen(name) < sizeof(e.name));
	}
	assert_null(bach_manifest_ev_name(BACH_EV_OTHER));
	assert_int_equal(bach_manifest_ev_kind(""), BACH_EV_OTHER);
	assert_int_equal(bach_manifest_ev_kind("Gap"), BACH_EV_OTHER);
	assert_int_equal(bach_manifest_ev_kind("gap "), BACH_EV_OTHER);
	assert_int_equal(bach_manifest_ev_kind("device"), BACH_EV_OTHER);
}

/* docs/bachd.md section 5: the first column of "| event | members | when |" */
static void bachd_table(void **state)
{
	static const char head[] = "\n| event | members | when |\n";
	char *text = section("docs/bachd.md", "## 5.");
	struct names doc = { .n = 0 };
	char *p = strstr(text, head);

	(void)state;
	if (!p)
		fail_msg("docs/bachd.md section 5 has no '%s' table",
			 "| event | members | when |");
	p += strlen(head);
	p = strchr(p, '\n') + 1; /* |---|---|---| */
	for (; *p == '|'; p = strchr(p, '\n') + 1) {
		char *a = strchr(p, '`'), *b = a ? strchr(a + 1, '`') : NULL;
		char *bar = strchr(p + 1, '|');

		/* a row's first cell: `name`, maybe a remark after it */
		if (!a || !b || !bar || b > bar || strncmp(p, "| `", 3))
			fail_msg(
				"docs/bachd.md: a row of the event table without an event: %.60s",
				p);
		add_name(&doc, a + 1, (size_t)(b - a - 1));
		if (!strchr(p, '\n'))
			break;
	}
	free(text);
	assert_true(doc.n > 0);
	same_set(&doc, "docs/bachd.md section 5");
}

/* "Its events: `a`, `b`, ... (" in section heading of doc */
static void events_list(const char *doc, const char *heading)
{
	char *text = section(doc, heading), where[64];
	struct names list = { .n = 0 };
	char *p = strstr(text, "Its events:"), *end;

	snprintf(where, sizeof(where), "%s section %.1s", doc, heading + 3);
	if (!p)
		fail_msg("%s has no list 'Its events: ...'", where);
	end = strchr(p, '(');
	if (!end)
		fail_msg("%s: 'Its events:' ends nowhere", where);
	for (p = strchr(p, '`'); p && p < end; p = strchr(p, '`')) {
		char *b = strchr(p + 1, '`');

		assert_non_null(b);
		add_name(&list, p + 1, (size_t)(b - p - 1));
		p = b + 1;
	}
	free(text);
	assert_true(list.n > 0);
	same_set(&list, where);
}

static void formats_list(void **state)
{
	(void)state;
	events_list("docs/formats.md", "## 4.");
}

static void design_list(void **state)
{
	(void)state;
	events_list("docs/design.md", "## 4.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows),
		cmocka_unit_test(bachd_table),
		cmocka_unit_test(formats_list),
		cmocka_unit_test(design_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
