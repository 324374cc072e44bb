// SPDX-License-Identifier: MIT
/* bach recover: close what a crash left unfinished, offline. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/io/manifest.h"
#include "lib/options.h"
#include "log.h"
#include "recover.h"

static int run(int argc, char **argv)
{
	char path[4096], dir[4096], base[4096], man[4200];
	int fd, n, status = EXIT_OK;
	unsigned failed = 0;
	bool capture;

	if (argc != 2 || argv[1][0] == '-')
		return usage_error(argc < 2 ? "no DIR given"
					    : "one DIR, no options");
	if (!realpath(argv[1], path)) {
		errmsg("%s: %s", argv[1], strerror(errno));
		return EXIT_USAGE;
	}
	log_init(prog_cmd, false, LOG_P_INFO);
	snprintf(man, sizeof(man), "%s/%s", path, BACH_MANIFEST_NAME);
	capture = access(man, F_OK) == 0 || errno != ENOENT;
	/* the lock is the output directory's: a capture's parent */
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	fd = outdir_lock(capture ? dirname(dir) : path);
	if (fd < 0)
		return EXIT_USAGE;
	if (capture) {
		n = recover_capture(fd, dir, basename(base), &failed);
		if (n < 0)
			status = EXIT_DATA;
		else if (failed)
			printf("%s: partly recovered\n", path);
		else if (n == 0)
			printf("%s: nothing to recover\n", path);
		else
			printf("%s: recovered\n", path);
	} else {
		n = recover_outdir(fd, path, &failed);
		if (n < 0) {
			errmsg("%s: %s", path, strerror(-n));
			status = EXIT_USAGE;
		} else {
			printf("%s: %d capture%s recovered\n", path, n,
			       bach_s(n));
		}
	}
	if (failed) {
		errmsg("%s: %u file%s could not be recovered (the log above says why)",
		       path, failed, bach_s(failed));
		if (status == EXIT_OK)
			status = EXIT_DATA;
	}
	close(fd);
	return status;
}

const struct bach_cmd cmd_recover = {
	.name = "recover",
	.run = run,
	.summary = "close captures a crash left unfinished",
	.help = "usage: bach recover DIR\n"
		"\n"
		"DIR is a capture directory, or an output directory whose captures\n"
		"are all looked at. What bachd does at every start, without starting\n"
		"a capture: each unfinished segment (*.part) is cut to its last whole\n"
		"block and closed, a closed segment the manifest never named is named,\n"
		"a manifest line a crash cut is cut off, and a capture with no ended\n"
		"event gets one (state recovered). Nothing is followed through a\n"
		"symbolic link. Refused while a bachd or bach capture writes there.\n"
		"\n"
		"Exit status: 0 done (or nothing to do), 1 a capture could not be\n"
		"recovered, or only partly (its manifest is damaged or not a regular\n"
		"file, an unfinished segment is not a regular file: the log says\n"
		"why), 2 usage error, or the directory is in use.\n"
		"\n"
		"example: bach recover /var/lib/bach/captures\n",
};
