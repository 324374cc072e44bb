// SPDX-License-Identifier: MIT
/*
 * Commands that run in another binary of the tool, so that `bach dump`
 * and the rest load none of their libraries (docs/design.md section 7):
 * capture and decode in bach-acquire (the drivers, libsigrok, libusb,
 * glib), plot and report in bach-draw (cairo). Each of those binaries is
 * the whole tool with its own commands built in and the others' stubs
 * (exec_acquire.c, exec_draw.c). The binary is looked for beside this one,
 * as installed (BINDIR/../lib/bach) and in the build tree, then in
 * LIBEXECDIR.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

#ifndef BACH_LIBEXECDIR
#define BACH_LIBEXECDIR "/usr/local/lib/bach"
#endif
int exec_helper(const char *binary, int argc, char **argv)
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
		snprintf(near, sizeof(near), "%s/../lib/bach/%s", dirname(self),
			 binary);
	}
	snprintf(far, sizeof(far), "%s/%s", BACH_LIBEXECDIR, binary);
	fflush(stdout);
	av[1] = argv[0]; /* the command's name */
	for (int i = 1; i < argc; i++)
		av[i + 1] = argv[i];
	if (near[0]) {
		av[0] = near;
		execv(near, av);
	}
	av[0] = far;
	execv(far, av);
	errmsg("cannot run %s (looked for %s and %s): %s; this bach was installed without it",
	       binary, near[0] ? near : "(no /proc/self/exe)", far,
	       strerror(errno));
	free(av);
	return EXIT_USAGE;
}
