// SPDX-License-Identifier: MIT
/*
 * `bach capture` and `bach decode` in the `bach` binary: they run in
 * bach-acquire, the same tool linked with the drivers and libsigrok, so
 * that `bach dump` and the other commands load none of libusb, libsigrok
 * and glib (docs/design.md section 7). Looked for beside this binary, as
 * installed (BINDIR/../lib/bach) and in the build tree, then in LIBEXECDIR.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach.h"

#ifndef BACH_LIBEXECDIR
#define BACH_LIBEXECDIR "/usr/local/lib/bach"
#endif
#define ACQUIRE "bach-acquire"

static int exec_acquire(int argc, char **argv)
{
	char self[PATH_MAX], near[PATH_MAX + 64], far[PATH_MAX];
	char **av = calloc((size_t)argc + 2, sizeof(*av));
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (!av) {
		errmsg("%s", strerror(ENOMEM));
		return EXIT_USAGE;
	}
	near[0] = 0;
	if (n > 0) {
		self[n] = 0;
		snprintf(near, sizeof(near), "%s/../lib/bach/" ACQUIRE,
			 dirname(self));
	}
	snprintf(far, sizeof(far), "%s/" ACQUIRE, BACH_LIBEXECDIR);
	fflush(stdout);
	av[1] = argv[0];	/* the command's name */
	for (int i = 1; i < argc; i++)
		av[i + 1] = argv[i];
	if (near[0]) {
		av[0] = near;
		execv(near, av);
	}
	av[0] = far;
	execv(far, av);
	errmsg("cannot run %s (looked for %s and %s): %s; this bach was "
	       "installed without its capture and decode half",
	       ACQUIRE, near[0] ? near : "(no /proc/self/exe)", far,
	       strerror(errno));
	free(av);
	return EXIT_USAGE;
}

/* help NULL: `bach help NAME` asks bach-acquire (print_help()) */
const struct bach_cmd cmd_capture = {
	.name = "capture",
	.run = exec_acquire,
	.summary = "run one capture in the foreground",
};

const struct bach_cmd cmd_decode = {
	.name = "decode",
	.run = exec_acquire,
	.summary = "decode a logic-analyzer capture of the bus into a trace",
};
