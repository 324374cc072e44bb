// SPDX-License-Identifier: MIT
/* bach index: write FILE.gzi for blocked .byu.gz files (bach/index.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/index.h"
#include "bach/record.h"
#include "cmd.h"
#include "lib/io/found.h"
#include "lib/io/zst.h"
#include "lib/options.h"

/*
 * A .byu.zst needs no .gzi: the seek table at its end is its index
 * (docs/formats.md section 10). Checked here, as bach index builds a
 * .gzi from the members: it must be there, and match the frames.
 */
static int check_zst(const char *path, int fd, bool in_capture)
{
	struct bach_index ix = { 0 };
	struct stat st;
	char msg[512];
	int err;

	err = fstat(fd, &st) < 0 ? -errno
				 : zst_table_load(fd, (uint64_t)st.st_size, &ix,
						  msg, sizeof(msg));
	if (err == -ENOENT) {
		snprintf(
			msg, sizeof(msg),
			"missing seek table: zstd file ends at byte offset %llu without it (bach convert writes one again)",
			(unsigned long long)st.st_size);
		err = -BACH_EDATA;
	} else if (!err) {
		err = zst_table_check(fd, &ix, msg, sizeof(msg));
	} else if (err != -BACH_EDATA) {
		snprintf(msg, sizeof(msg), "%s", strerror(-err));
	}
	close(fd);
	if (!err && !in_capture)
		printf("%s: zstd, %llu frame%s, %llu record%s: its seek table matches its frames (it is the index; no .gzi)\n",
		       path, (unsigned long long)ix.n, bach_s(ix.n),
		       (unsigned long long)(ix.uoff[ix.n] / BACH_REC_SIZE),
		       bach_s(ix.uoff[ix.n] / BACH_REC_SIZE));
	bach_index_free(&ix);
	if (err) {
		errmsg("%s: %s", path, msg);
		return bach_exit_status(err);
	}
	return EXIT_OK;
}

/*
 * in_capture: a segment of a capture directory, never read through a
 * symbolic link, and not named when it needs no index
 */
static int index_file(const char *path, bool in_capture)
{
	struct bach_index ix;
	char msg[4400];
	int err;

	/* only a regular file has an index (a FIFO would block) */
	err = bach_open_found(AT_FDCWD, path, NULL, in_capture, NULL, msg,
			      sizeof(msg));
	if (err < 0) {
		errmsg("%s", msg);
		return bach_exit_status(err);
	}
	if (ends_with(path, ".zst"))
		return check_zst(path, err, in_capture);
	close(err);
	if (ends_with(path, ".zst.part")) {
		if (!in_capture)
			printf("%s: unfinished zstd segment, no index (bach recover closes it)\n",
			       path);
		return EXIT_OK;
	}
	if (!ends_with(path, ".gz")) {
		if (!in_capture)
			printf("%s: raw records, no index needed (record N is at byte 6N)\n",
			       path);
		return EXIT_OK;
	}
	err = bach_index_build(path, &ix, msg, sizeof(msg));
	if (!err) {
		err = bach_index_write(path, &ix, msg, sizeof(msg));
		if (!err)
			printf("%s%s: %llu member%s, %llu record%s\n", path,
			       BACH_INDEX_SUFFIX, (unsigned long long)ix.n,
			       bach_s(ix.n),
			       (unsigned long long)(ix.uoff[ix.n] /
						    BACH_REC_SIZE),
			       bach_s(ix.uoff[ix.n] / BACH_REC_SIZE));
		bach_index_free(&ix);
	}
	if (err) {
		errmsg("%s", msg);
		return bach_exit_status(err);
	}
	return EXIT_OK;
}

static int run(int argc, char **argv)
{
	int c, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "", NULL, NULL)) != -1)
		return usage_error("bad option");
	if (optind == argc)
		return usage_error("no FILE or DIR given");
	for (int i = optind; i < argc; i++) {
		const char *path = argv[i];
		struct stat st;
		char **segs, msg[512];
		ssize_t n;
		int s;

		if (!strcmp(path, "-"))
			return usage_error("-: standard input has no index");
		if (stat(path, &st) < 0) {
			errmsg("%s: %s", path, strerror(errno));
			status = EXIT_USAGE;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			s = index_file(path, false);
			if (s > status)
				status = s;
			continue;
		}
		n = bach_capture_open(path, &segs, NULL, msg, sizeof(msg));
		if (n < 0) {
			errmsg("%s", msg);
			s = bach_exit_status((int)n);
			if (s > status)
				status = s;
			continue;
		}
		for (ssize_t j = 0; j < n; j++) {
			s = index_file(segs[j], true);
			if (s > status)
				status = s;
			free(segs[j]);
		}
		free(segs);
	}
	return status;
}

const struct bach_cmd cmd_index = {
	.name = "index",
	.run = run,
	.summary = "write the random-access index of blocked .byu.gz files",
	.help = "usage: bach index FILE|DIR...\n"
		"\n"
		"Writes FILE.gzi beside each blocked .byu.gz FILE (for a capture\n"
		"directory: beside each closed .byu.gz segment): where each gzip\n"
		"member starts, in the file and in the records, in htslib's .gzi\n"
		"layout (so bgzip -b OFFSET -s N FILE reads through it too).\n"
		"bachd writes it as it closes each segment, and convert, gen and\n"
		"decode beside each .byu.gz they write; --range, seeks in the\n"
		"library and the Python module use it, and rebuild it in memory\n"
		"when it is missing or does not fit the file. Raw .byu files need\n"
		"none. Only the members' headers and trailers are read.\n"
		"\n"
		"Exit 1 when a file is damaged (truncated, no EOF block), 2 when it\n"
		"is not a blocked gzip file (one without BC fields has no index).\n"
		"\n"
		"example: bach index capture/20261121T223000Z\n",
};
