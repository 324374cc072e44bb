// SPDX-License-Identifier: MIT
/* bach capture: one capture in the foreground, with a progress line. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cmd.h"
#include "ctl.h"
#include "lib/options.h"
#include "log.h"
#include "metrics.h"
#include "session.h"

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(const struct capture_status *st, double secs,
		     uint64_t rate, bool tty)
{
	fprintf(stderr,
		"%s%llu records, %.2f M/s, ring %llu%%, %llu lost, %llu segment%s closed, %.1f MB%s",
		tty ? "\r" : "", (unsigned long long)st->written,
		(double)rate / 1e6,
		(unsigned long long)(st->ring_blocks ? st->ring_used * 100 /
							       st->ring_blocks
						     : 0),
		(unsigned long long)st->lost,
		/* closed ones: the open one may yet be dropped (empty), or
		 * be closed already at the last line; the summary's count */
		(unsigned long long)st->segments, bach_s(st->segments),
		(double)st->bytes / 1e6, tty ? "   " : "\n");
	(void)secs;
}

/*
 * A request on the control socket (docs/bachd.md section 6): the requests
 * of bachd that make sense for one capture in the foreground.
 */
static void handle_request(struct capture *c, struct ctl *ctl, int fd,
			   char *req, time_t since, double t0)
{
	char reply[8192], *arg = strchr(req, ' ');
	struct capture_status st;

	if (arg)
		*arg++ = 0;
	if (!strcmp(req, "status") && !arg) {
		capture_status(c, &st);
		ctl_status_reply(reply, sizeof(reply), "bach capture",
				 st.running, since, mono() - t0, &st);
	} else if (!strcmp(req, "mark") && arg && *arg) {
		snprintf(
			reply, sizeof(reply), "%s",
			capture_mark(c, arg, "ctl")
				? "{\"ok\":false,\"error\":\"too many marks waiting: try again\"}"
				: "{\"ok\":true}");
	} else if (!strcmp(req, "rotate") && !arg) {
		capture_rotate(c);
		snprintf(reply, sizeof(reply), "{\"ok\":true}");
	} else if (!strcmp(req, "stop") && (!arg || !strcmp(arg, "wait"))) {
		if (arg && !ctl_hold(ctl, fd, CTL_WAIT_STOP)) {
			ctl_reply(fd, CTL_REPLY_TOO_MANY);
			return;
		}
		capture_stop(c); /* then bach capture exits, as on Ctrl-C */
		if (arg)
			return; /* answered once the capture is closed */
		snprintf(reply, sizeof(reply),
			 "{\"ok\":true,\"state\":\"stopping\"}");
	} else {
		snprintf(
			reply, sizeof(reply),
			"{\"ok\":false,\"error\":\"unknown request (bach capture: status, stop, rotate, mark TEXT)\"}");
	}
	ctl_reply(fd, reply);
}

/*
 * The control socket: the one named (whose every failure is exit 2), none
 * ("none"), or by default ctl_capture_path(), where bach ctl finds it;
 * there a failure is a warning, and the capture runs without one.
 */
static int control_socket(const struct bachd_config *cfg, struct ctl *ctl)
{
	char path[sizeof(ctl->path)], esc[4 * sizeof(path)];
	int err;

	if (!strcmp(cfg->control_socket, "none"))
		return 0;
	if (cfg->control_socket[0]) {
		err = ctl_open(ctl, cfg->control_socket, cfg->control_group);
		if (err)
			errmsg("control_socket %s: %s",
			       bach_escape_ctl(esc, sizeof(esc),
					       cfg->control_socket),
			       ctl_strerror(err));
		return err;
	}
	err = ctl_capture_path(path, sizeof(path), (long)getpid());
	if (!err)
		err = ctl_make_dir(path);
	if (!err)
		err = ctl_open(ctl, path, cfg->control_group);
	if (err)
		log_warn(
			"control socket %s: %s: running without one (--control-socket names another)",
			path, ctl_strerror(err));
	return 0;
}

static int run(int argc, char **argv)
{
	static struct bachd_config cfg;
	struct capture_status st;
	char dir[sizeof(st.capture_dir) * 2];
	struct bachd_args a;
	struct capture *c;
	struct metrics m;
	struct ctl ctl = { .fd = -1 };
	char sock[4 * sizeof(ctl.path)];
	time_t since = time(NULL);
	double started = mono();
	struct metrics_state ms = { .st = &st, .output = NULL };
	bool tty = isatty(2);
	double t0, last = 0;
	uint64_t prev = 0;
	unsigned nmarks = 0;
	sigset_t set;
	int sfd, err, status;

	bachd_config_defaults(&cfg);
	status = bachd_parse_args(&cfg, &a, argc, argv, prog_cmd);
	if (status)
		return status;
	if (a.help)
		return print_help(&cmd_capture);
	if (a.version) {
		printf("bach %s\n", BACH_VERSION);
		return EXIT_OK;
	}
	if (a.list_drivers)
		return EXIT_OK;
	if (a.check_config) {
		printf("%s: configuration OK\n", prog_cmd);
		return EXIT_OK;
	}
	log_init(prog_cmd, false,
		 cfg.log_level < LOG_P_NOTICE ? cfg.log_level : LOG_P_NOTICE);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	ms.output = cfg.cap.output;
	metrics_init(&m, &cfg);
	/* a metrics file that cannot be written is a configuration error */
	if (cfg.cap.metrics_file[0] &&
	    (err = metrics_write(&m, &(struct metrics_state){
					     .output = cfg.cap.output }))) {
		errmsg("metrics_file %s: %s", cfg.cap.metrics_file,
		       metrics_strerror(&m));
		close(sfd);
		return EXIT_USAGE;
	}
	if (control_socket(&cfg, &ctl)) {
		close(sfd);
		return EXIT_USAGE;
	}
	err = capture_open(&c, &cfg.cap);
	if (!err)
		err = capture_start(c);
	if (err) {
		capture_close(c, NULL);
		ctl_close(&ctl);
		close(sfd);
		return EXIT_USAGE;
	}
	capture_status(c, &st);
	/* a newline in the path must not split the line */
	bach_escape_ctl(dir, sizeof(dir), st.capture_dir);
	fprintf(stderr, "capturing from %s into %s (Ctrl-C stops%s%s)\n",
		cfg.cap.driver, dir, ctl.fd >= 0 ? "; control socket " : "",
		ctl.fd >= 0 ? bach_escape_ctl(sock, sizeof(sock), ctl.path)
			    : "");
	t0 = mono();
	/* the first line after one interval, its rate over that interval */
	last = t0;
	while (!capture_done(c)) {
		struct pollfd p[2] = { { sfd, POLLIN, 0 },
				       { ctl.fd, POLLIN, 0 } };
		struct signalfd_siginfo si;
		double now;

		poll(p, ctl.fd >= 0 ? 2 : 1, 100);
		if (ctl.fd >= 0 && p[1].revents & POLLIN) {
			char req[CTL_MAX_REQUEST + 1];
			int fd = ctl_accept(&ctl, req, CTL_MAX_REQUEST);

			if (fd >= 0)
				handle_request(c, &ctl, fd, req, since,
					       started);
		}
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				capture_rotate(c);
				continue;
			}
			if (si.ssi_signo == SIGUSR1) {
				/* a mark where the source is now: "SIGUSR1 #N"
				 */
				char text[32];

				snprintf(text, sizeof(text), "SIGUSR1 #%u",
					 ++nmarks);
				if (capture_mark(c, text, "signal"))
					fprintf(stderr,
						"%s%s: too many marks waiting: not marked\n",
						tty ? "\n" : "", text);
				continue;
			}
			capture_stop(c);
		}
		if (metrics_due(&m)) {
			capture_status(c, &st);
			ms.up = true;
			metrics_update(&m, &ms);
		}
		now = mono();
		if (now - last >= (tty ? 0.5 : 5.0)) {
			capture_status(c, &st);
			progress(&st, now - t0,
				 (uint64_t)((double)(st.written - prev) /
					    (now - last)),
				 tty);
			prev = st.written;
			last = now;
		}
	}
	status = capture_close(c, &st);
	if (ctl_holding(&ctl, CTL_WAIT_STOP)) {
		char reply[8192];

		ctl_stopped_reply(reply, sizeof(reply), status, &st);
		ctl_reply_waiting(&ctl, CTL_WAIT_STOP, reply);
	}
	ctl_close(&ctl);
	close(sfd);
	ms.up = false;
	metrics_update(&m, &ms);
	if (tty)
		fputc('\n', stderr);
	fprintf(stderr,
		"%s: %llu records produced, %llu written, %llu lost, %llu gap marker%s, %llu segment%s, %llu bytes, %.1f s%s\n",
		bach_escape_ctl(dir, sizeof(dir), st.capture_dir),
		(unsigned long long)st.produced, (unsigned long long)st.written,
		(unsigned long long)st.lost, (unsigned long long)st.markers,
		bach_s(st.markers), (unsigned long long)st.segments,
		bach_s(st.segments), (unsigned long long)st.bytes, mono() - t0,
		status ? " (see the errors above)" : "");
	return status;
}

#define USAGE                                                                  \
	"usage: bach capture --driver NAME [--option KEY=VALUE]... --output "  \
	"DIR\n"                                                                \
	"                    [--config FILE] [OPTION]...\n"                    \
	"\n"

#define USAGE_TAIL                                                             \
	"\n"                                                                   \
	"The options of bachd (bachd --help), run in the foreground: a\n"      \
	"progress line (records, rate, ring fill, records lost), and a "       \
	"summary\n"                                                            \
	"at the end. Ctrl-C drains and stops cleanly; SIGHUP starts a new\n"   \
	"segment; SIGUSR1 writes a mark \"SIGUSR1 #N\" (N counting from 1) "   \
	"at\n"                                                                 \
	"the record the source delivers next. The capture directory is made\n" \
	"inside DIR. bach ctl status, mark TEXT, rotate and stop reach it\n"   \
	"over its control socket, which the first line names (by default\n"    \
	"capture-PID.sock in the directory of bach ctl's default socket,\n"    \
	"removed at exit; bach ctl finds it there when no bachd answers).\n"   \
	"\n"                                                                   \
	"Exit status: 0 clean, 1 records lost to a failed write, 2 usage or\n" \
	"environment error, 3 the disk was full, 4 the source failed, 5 a\n"   \
	"manifest line could not be written.\n"                                \
	"\n"                                                                   \
	"example: bach capture --driver fake --option records=10000000 \\\n"   \
	"             --output captures\n"

/*
 * The help: the usage, every option (bachd's table, as bachd --help
 * prints it), and every driver's options, printed from their tables:
 * made once at start, as the help is a string.
 */
static char help[16384] = USAGE USAGE_TAIL;

__attribute__((constructor)) static void make_help(void)
{
	FILE *f = fmemopen(help, sizeof(help) - 1, "w");

	if (!f)
		return; /* the usage alone */
	fputs(USAGE, f);
	bachd_options_print(f, false);
	fputs(USAGE_TAIL
	      "\nDrivers and their options (--option KEY=VALUE, or KEY = VALUE in\n[driver]):\n\n",
	      f);
	bach_drivers_print(f);
	fclose(f);
}

const struct bach_cmd cmd_capture = {
	.name = "capture",
	.run = run,
	.summary = "run one capture in the foreground",
	.help = help,
	.values = bachd_complete_values, /* bachd's command line */
	.options = bachd_options,
};
