// SPDX-License-Identifier: MIT
/* bach verify: is every record valid and every file whole? */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach.h"
#include "bach/record.h"

#define MAX_LISTED 20 /* problems listed per file before summarising */

struct vstate {
	uint64_t files, records, problems, gaps, lost;
	bool quiet;
};

static void verify_file(struct vstate *v, const char *path)
{
	struct bach_reader *r = bach_reader_new();
	struct bach_file_info fi;
	uint64_t bad = 0, gaps = 0, lost = 0;
	int err;
	ssize_t n;

	if (!r) {
		errmsg("out of memory");
		v->problems++;
		return;
	}
	v->files++;
	err = bach_reader_add(r, path);
	if (err) {
		printf("%s: %s\n", path, bach_reader_strerror(r));
		v->problems++;
		bach_reader_free(r);
		return;
	}
	for (;;) {
		const uint8_t *p;
		uint64_t base = bach_reader_file_records(r);

		n = bach_reader_read(r, &p);
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++, p += BACH_REC_SIZE) {
			unsigned f = bach_rec_check(p);
			uint64_t idx;

			if (__builtin_expect(!f, 1))
				continue;
			idx = base + (uint64_t)i;
			if (bach_rec_is_gap(p)) {
				gaps++;
				lost += get_be32(p);
				if (!v->quiet)
					printf("%s: record %llu: gap marker: %u records lost\n",
					       path, (unsigned long long)idx,
					       get_be32(p));
				continue;
			}
			if (++bad <= MAX_LISTED)
				printf("%s: record %llu (byte offset %llu): %s "
				       "(%08x %02x control 0x%02x)\n",
				       path, (unsigned long long)idx,
				       (unsigned long long)idx * BACH_REC_SIZE,
				       bach_fault_name(f), get_be32(p), p[4],
				       p[5]);
		}
	}
	if (bad > MAX_LISTED)
		printf("%s: ... and %llu more bad records\n", path,
		       (unsigned long long)(bad - MAX_LISTED));
	v->problems += bad;
	v->gaps += gaps;
	v->lost += lost;
	v->records += bach_reader_file_records(r);
	bach_reader_info(r, &fi);
	if (n < 0) {
		printf("%s\n", bach_reader_strerror(r));
		v->problems++;
	} else if (!bad && !v->quiet) {
		printf("%s: OK, %llu records", path,
		       (unsigned long long)bach_reader_file_records(r));
		if (fi.kind == BACH_FILE_GZIP)
			printf(", %s gzip, %llu member%s", fi.blocked ? "blocked" : "plain",
			       (unsigned long long)fi.members,
			       fi.members == 1 ? "" : "s");
		if (gaps)
			printf(", %llu gap%s (%llu records lost)",
			       (unsigned long long)gaps, gaps == 1 ? "" : "s",
			       (unsigned long long)lost);
		printf("\n");
	}
	bach_reader_free(r);
}

static void verify_path(struct vstate *v, const char *path)
{
	struct stat st;
	char **segs, msg[PATH_MAX + 128];
	size_t parts = 0;
	ssize_t n;

	if (!strcmp(path, "-") || stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		verify_file(v, path);
		return;
	}
	n = bach_capture_open(path, &segs, &parts, msg, sizeof(msg));
	if (n < 0) {
		printf("%s\n", msg);
		v->problems++;
	}
	for (ssize_t i = 0; i < n; i++) {
		verify_file(v, segs[i]);
		free(segs[i]);
	}
	free(segs);
	if (parts)
		printf("%s: %zu unfinished segment%s (*.part): being written, or left by a crash and recovered at the next bachd start\n",
		       path, parts, parts == 1 ? "" : "s");
}

/* A missing path or a directory that is no capture: usage, not damage. */
static int check_path(const char *path)
{
	struct stat st;
	char **segs, msg[PATH_MAX + 128];
	ssize_t n;

	if (!strcmp(path, "-"))
		return 0;
	if (stat(path, &st) < 0) {
		errmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	n = bach_capture_open(path, &segs, NULL, msg, sizeof(msg));
	for (ssize_t i = 0; i < n; i++)
		free(segs[i]);
	free(segs);
	if (n < 0 && n != -BACH_EDATA) {
		errmsg("%s", msg);
		return -1;
	}
	return 0;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct vstate v = { 0 };
	int c;

	while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
		if (c != 'q')
			return usage_error("bad option");
		v.quiet = true;
	}
	if (optind == argc)
		return usage_error("no TRACE given");
	for (int i = optind; i < argc; i++)
		if (check_path(argv[i]))
			return EXIT_USAGE;
	for (int i = optind; i < argc; i++)
		verify_path(&v, argv[i]);
	printf("verify: %llu file%s, %llu records, %llu problem%s",
	       (unsigned long long)v.files, v.files == 1 ? "" : "s",
	       (unsigned long long)v.records, (unsigned long long)v.problems,
	       v.problems == 1 ? "" : "s");
	if (v.gaps)
		printf(", %llu gap%s (%llu records lost)",
		       (unsigned long long)v.gaps, v.gaps == 1 ? "" : "s",
		       (unsigned long long)v.lost);
	printf("\n");
	return v.problems ? EXIT_DATA : EXIT_OK;
}

const struct bach_cmd cmd_verify = {
	.name = "verify",
	.run = run,
	.summary = "check that every record is valid and every file whole",
	.help = "usage: bach verify [-q] TRACE...\n"
		"\n"
		"Reads every file to the end and lists each problem with its file and\n"
		"byte offset or record index: INVALID records (and records with\n"
		"address bits 2..0 or control bits 3..0 set), a truncated record, a\n"
		"bad or truncated gzip member, a bad CRC, a blocked gzip file without\n"
		"its EOF block. Gap markers written by bachd in drop mode are listed\n"
		"but are not damage. A capture directory is checked segment by segment.\n"
		"\n"
		"  -q, --quiet   list problems only\n"
		"\n"
		"Exit status: 0 all good, 1 damage found (an empty capture too), 2 usage\n"
		"error, a missing file or a directory that is not a capture.\n"
		"\n"
		"example: bach verify captures/20261121T223000Z\n",
};
