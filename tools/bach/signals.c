// SPDX-License-Identifier: MIT
/*
 * The signals of commands that write files: SIGHUP, SIGINT and SIGTERM
 * remove the temporary outputs (lib/io/outfile.h) and then kill the process
 * as they would have, so that no half-written file is left under the
 * output's name and the shell sees the signal.
 */
#include <signal.h>

#include "cmd.h"
#include "lib/io/outfile.h"

static void die_by_signal(int sig)
{
	/* SA_RESETHAND made the action the default: the signal kills, once
	 * this handler returns */
	bach_outfile_remove_temps();
	raise(sig);
}

void catch_signals(void)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGTERM };
	struct sigaction sa = { .sa_handler = die_by_signal,
				.sa_flags = SA_RESETHAND };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++) {
		struct sigaction old;

		/* an ignored signal (nohup, a background job) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}
