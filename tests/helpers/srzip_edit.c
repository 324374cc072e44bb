// SPDX-License-Identifier: MIT
/*
 * srzip_edit: reshape the members of a sigrok session (.sr, a zip archive)
 * with libzip, for tests of damaged sessions.
 *
 *   srzip_edit FILE split MEMBER N    MEMBER's bytes into N members named
 *                                      PREFIX-1..PREFIX-N (PREFIX: MEMBER
 *                                      without its last "-K"), cut at whole
 *                                      multiples of UNIT bytes (argument 5,
 *                                      default 1)
 *   srzip_edit FILE delete MEMBER
 *   srzip_edit FILE empty MEMBER       MEMBER becomes 0 bytes
 *
 *   (cc srzip_edit.c $(pkg-config --cflags --libs libzip))
 * Exit 0 when done, 1 with the reason on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

static int die(const char *what, zip_t *z)
{
	fprintf(stderr, "srzip_edit: %s: %s\n", what,
		z ? zip_strerror(z) : "failed");
	if (z)
		zip_discard(z);
	return 1;
}

/* MEMBER's whole contents, malloc'd, its size in *len. */
static char *slurp(zip_t *z, const char *name, size_t *len)
{
	zip_stat_t st;
	zip_file_t *m;
	char *buf;

	if (zip_stat(z, name, 0, &st) || !(m = zip_fopen(z, name, 0)))
		return NULL;
	buf = malloc(st.size + 1);
	if (buf && zip_fread(m, buf, st.size) != (zip_int64_t)st.size) {
		free(buf);
		buf = NULL;
	}
	zip_fclose(m);
	*len = st.size;
	return buf;
}

static int put(zip_t *z, const char *name, const char *data, size_t len)
{
	zip_source_t *src = zip_source_buffer(z, data, len, 0);

	if (!src)
		return -1;
	if (zip_file_add(z, name, src, ZIP_FL_OVERWRITE) < 0) {
		zip_source_free(src);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	zip_t *z;
	zip_int64_t idx;
	char *data = NULL;
	size_t len = 0;
	int err;

	if (argc < 4)
		return fprintf(stderr,
			       "usage: srzip_edit FILE split|delete|empty MEMBER [N [UNIT]]\n"),
		       1;
	z = zip_open(argv[1], 0, &err);
	if (!z)
		return die(argv[1], NULL);
	idx = zip_name_locate(z, argv[3], 0);
	if (idx < 0)
		return die(argv[3], z);
	if (!strcmp(argv[2], "delete")) {
		if (zip_delete(z, (zip_uint64_t)idx))
			return die("delete", z);
	} else if (!strcmp(argv[2], "empty")) {
		if (put(z, argv[3], "", 0))
			return die("empty", z);
	} else if (!strcmp(argv[2], "split") && argc >= 5) {
		size_t n = strtoul(argv[4], NULL, 10);
		size_t unit = argc > 5 ? strtoul(argv[5], NULL, 10) : 1;
		char prefix[256], name[300];
		char *dash = strrchr(argv[3], '-');
		size_t off = 0;

		data = slurp(z, argv[3], &len);
		if (!data || !n || !unit || !dash)
			return die("split", z);
		snprintf(prefix, sizeof prefix, "%.*s", (int)(dash - argv[3]),
			 argv[3]);
		zip_delete(z, (zip_uint64_t)idx);
		for (size_t k = 1; k <= n; k++) {
			size_t end = k == n ? len : len / n / unit * unit * k;

			snprintf(name, sizeof name, "%s-%zu", prefix, k);
			if (put(z, name, data + off, end - off))
				return die(name, z);
			off = end;
		}
	} else {
		return fprintf(stderr, "srzip_edit: unknown edit '%s'\n",
			       argv[2]),
		       1;
	}
	if (zip_close(z))
		return die("close", z);
	free(data);
	return 0;
}
