// SPDX-License-Identifier: MIT
/* Shell completion from getopt tables (complete.h). */
#include <stdio.h>
#include <string.h>

#include "lib/complete.h"

void complete_word(const char *w, const char *cur)
{
	if (!strncmp(w, cur, strlen(cur)))
		printf("%s\n", w);
}

/* The long option word names (--NAME or a unique prefix), or NULL. */
static const struct option *find_long(const struct option *o, const char *word)
{
	const struct option *hit = NULL;
	size_t len = strcspn(word, "=");
	int n = 0;

	for (; o && o->name; o++) {
		if (strlen(o->name) == len && !strncmp(o->name, word, len))
			return o;
		if (!strncmp(o->name, word, len)) {
			hit = o;
			n++;
		}
	}
	return n == 1 ? hit : NULL;
}

/* The long option of short option c, for its values' row. */
static const char *long_of(const struct option *o, int c)
{
	for (; o && o->name; o++)
		if (!o->flag && o->val == c)
			return o->name;
	return NULL;
}

static const struct complete_values *row(const struct complete_values *v,
					 const char *opt, int operand)
{
	for (; v && v->opt; v++)
		if (!strcmp(v->opt, opt) && (!v->first || operand == 0))
			return v;
	return NULL;
}

static void values(const struct complete_values *v, int n, char **words,
		   const char *cur)
{
	if (!v) {
		printf("@files\n");
		return;
	}
	if (v->nospace)
		printf("@nospace\n");
	if (v->dirs)
		printf("@dirs\n");
	for (size_t i = 0; v->words && v->words[i]; i++)
		complete_word(v->words[i], cur);
	if (v->list)
		v->list(n, words, cur);
}

void complete_getopt(const char *shortopts, const struct option *longopts,
		     const struct complete_values *vals, int n, char **words)
{
	const char *cur, *want = NULL;
	int k = 0;

	/* bash splits --opt=VALUE at the = (COMP_WORDBREAKS): --opt VALUE */
	for (int i = 0; i < n; i++)
		if (strcmp(words[i], "=") || !k ||
		    strncmp(words[k - 1], "--", 2))
			words[k++] = words[i];
		else if (i == n - 1)
			words[k++] = (char *)"";
	n = k;
	cur = n > 0 ? words[n - 1] : "";
	bool in_order = shortopts[0] == '+', options = true;
	int operands = 0;

	if (in_order)
		shortopts++;
	for (int i = 0; i < n - 1; i++) {
		const char *w = words[i];

		want = NULL;
		if (!options || w[0] != '-' || !w[1]) {
			operands++;
			if (in_order)
				options = false;
		} else if (!strcmp(w, "--")) {
			options = false;
		} else if (w[1] == '-') {
			const struct option *o = find_long(longopts, w + 2);

			if (o && o->has_arg == required_argument &&
			    !strchr(w, '='))
				want = o->name;
		} else {
			for (const char *p = w + 1; *p; p++) {
				const char *s = strchr(shortopts, *p);

				if (s && s[1] == ':') {
					if (!p[1]) {
						want = long_of(longopts, *p);
						if (!want)
							want = "";
					}
					break;
				}
			}
		}
		if (want) { /* the next word is its value */
			if (i + 1 < n - 1) {
				i++;
				want = NULL;
			}
		}
	}
	if (want) {
		values(*want ? row(vals, want, -1) : NULL, n, words, cur);
		return;
	}
	if (options && cur[0] == '-') {
		char buf[128];

		for (const struct option *o = longopts; o && o->name; o++) {
			snprintf(buf, sizeof(buf), "--%s", o->name);
			complete_word(buf, cur);
		}
		for (const char *p = shortopts; *p; p++)
			if (*p != ':') {
				snprintf(buf, sizeof(buf), "-%c", *p);
				complete_word(buf, cur);
			}
		return;
	}
	values(row(vals, "", operands), n, words, cur);
}
