// SPDX-License-Identifier: MIT
/*
 * post_rotate (tcpdump's -z): a command run on each closed segment, for
 * shipping it off the host. It runs as `/bin/sh -c 'CMD "$1"' post_rotate
 * PATH`, in its own process group (Ctrl-C at bach capture is not its), with
 * stdin from /dev/null, default signals and an empty signal mask (bachd's
 * threads block theirs). The writer thread spawns it and goes on; it reaps
 * its own children by pid (never waitpid(-1)), so a failure is logged as a
 * warning and never stops or delays the capture.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture_priv.h"
#include "drivers/driver.h"
#define LOG_PREFIX "post_rotate"
#include "log.h"

/* A command slower than rotation must not pile up processes without end. */
#define POST_ROTATE_MAX 16

extern char **environ;

/*
 * The commands still running, process-wide: only writer threads use it,
 * one at a time (a capture's writer is joined before the next starts).
 */
static struct {
	pid_t pid;
	char name[80];
} running[POST_ROTATE_MAX];
static unsigned nrunning;

static void reaped(unsigned i, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status))
		log_warn("%s: the command exited %d", running[i].name,
			 WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		log_warn("%s: the command was killed by signal %d",
			 running[i].name, WTERMSIG(status));
	else
		log_debug("%s: done", running[i].name);
	running[i] = running[--nrunning];
}

void post_rotate_reap(int wait_ms)
{
	static uint64_t last_ns;
	struct timespec tick = { 0, 20 * 1000000 };
	uint64_t now;

	/* the writer calls this per block: look at most every 100 ms */
	if (!nrunning)
		return;
	now = bach_now_ns();
	if (!wait_ms && now - last_ns < 100000000ull)
		return;
	last_ns = now;
	for (int waited = 0;; waited += 20) {
		for (unsigned i = 0; i < nrunning;) {
			int status;
			pid_t p = waitpid(running[i].pid, &status, WNOHANG);

			if (p == running[i].pid || (p < 0 && errno == ECHILD))
				reaped(i, p < 0 ? 0 : status);
			else
				i++;
		}
		if (!nrunning || waited >= wait_ms)
			break;
		nanosleep(&tick, NULL);
	}
	if (nrunning && wait_ms >= 1000)
		log_notice(
			"%u command%s still running after %d s, not waited for (the first on %s)",
			nrunning, nrunning == 1 ? "" : "s", wait_ms / 1000,
			running[0].name);
}

void post_rotate_run(const char *cmd, const char *path)
{
	char script[sizeof(((struct capture_config *)0)->post_rotate) + 8];
	char sh[] = "/bin/sh", dash_c[] = "-c", arg0[] = "post_rotate";
	char *argv[] = { sh, dash_c, script, arg0, (char *)path, NULL };
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	pid_t pid;
	int err;

	post_rotate_reap(0);
	if (nrunning == POST_ROTATE_MAX)
		post_rotate_reap(1); /* one more look, now */
	if (nrunning == POST_ROTATE_MAX) {
		log_warn("%s: not run: %d commands are still running", name,
			 POST_ROTATE_MAX);
		return;
	}
	snprintf(script, sizeof(script), "%s \"$1\"", cmd);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
					      POSIX_SPAWN_SETSIGDEF |
					      POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	err = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (err) {
		log_warn("%s: cannot run /bin/sh: %s", name, strerror(err));
		return;
	}
	running[nrunning].pid = pid;
	snprintf(running[nrunning].name, sizeof(running[nrunning].name), "%s",
		 name);
	nrunning++;
	log_debug("%s: started, pid %d", name, (int)pid);
}
