// SPDX-License-Identifier: MIT
/*
 * bachd: the capture daemon. main() is the ordered list of what it sets
 * up, undone in reverse by one cleanup path: arguments and configuration,
 * logging, signals, the metrics file, the control socket, the capture
 * (output directory, device, first segment), READY, the main loop,
 * STOPPING, cleanup.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "config.h"
#include "ctl.h"
#include "lib/complete.h"
#include "lib/options.h"
#include "log.h"
#include "metrics.h"
#include "session.h"

#define TICK_MS 250

struct bachd {
	struct bachd_config cfg;
	struct capture *cap;
	struct capture_status last;
	int status; /* exit status of the last capture */
	int sfd;
	struct ctl ctl;
	char sock[108];	   /* the control socket's path, "" for none */
	bool sock_default; /* ... not configured: ctl_default_path() */
	bool quit;
	uint64_t wd_usec;
	uint64_t wd_progress; /* writer progress at the last ping */
	bool stopping;	      /* a `stop` request is draining the capture */
	uint64_t st_written, st_bytes; /* at the last STATUS line */
	double st_time;
	struct metrics metrics;
	bool had_capture; /* d->last holds a capture's final figures */
	double t0;	  /* when bachd started, monotonic */
	time_t t0_wall;	  /* ... and on the wall clock */
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The metrics file now: the running capture's figures, or the last one's.
 * update: log a failure and go on (else just return it).
 */
static int metrics_now(struct bachd *d, bool update)
{
	struct capture_status st;
	struct metrics_state ms = { .output = d->cfg.cap.output };

	if (d->cap) {
		capture_status(d->cap, &st);
		ms.st = &st;
		ms.up = true;
	} else if (d->had_capture) {
		ms.st = &d->last;
	}
	return update ? metrics_update(&d->metrics, &ms)
		      : metrics_write(&d->metrics, &ms);
}

/*
 * Which control socket: the configured one, whose every failure is fatal;
 * none ("none"); or ctl_default_path(), the one bach ctl looks for, whose
 * failures are a warning (a second bachd run by hand, say, finds the first
 * there) and leave bachd without one. Its directory is made when missing.
 */
static int socket_choose(struct bachd *d)
{
	int err;

	d->sock[0] = 0;
	d->sock_default = false;
	if (!strcmp(d->cfg.control_socket, "none"))
		return 0;
	if (d->cfg.control_socket[0]) {
		snprintf(d->sock, sizeof(d->sock), "%s", d->cfg.control_socket);
		/* another bachd answering there, or not a socket: refuse */
		err = ctl_check(d->sock);
		if (err)
			log_err("control socket %s: %s", d->sock,
				ctl_strerror(err));
		return err;
	}
	d->sock_default = true;
	err = ctl_default_path(d->sock, sizeof(d->sock));
	if (!err)
		err = ctl_make_dir(d->sock);
	if (!err)
		err = ctl_check(d->sock);
	if (err) {
		log_warn(
			"control socket %s: %s: running without one (control_socket names another)",
			d->sock, ctl_strerror(err));
		d->sock[0] = 0;
	}
	return 0;
}

static int start_capture(struct bachd *d)
{
	struct capture_config cc = d->cfg.cap;
	int err;

	/* the capture owns copies of the driver options */
	for (size_t i = 0; i < cc.nopts; i++) {
		cc.opts[i].key = strdup(cc.opts[i].key);
		cc.opts[i].value = strdup(cc.opts[i].value);
	}
	err = capture_open(&d->cap, &cc);
	if (!err)
		err = capture_start(d->cap);
	if (err) {
		capture_close(d->cap, NULL);
		d->cap = NULL;
	}
	d->st_written = d->st_bytes = 0;
	d->st_time = mono();
	return err;
}

/* `start` from idle: a new capture, and the reply that says how it went */
static void start_reply(struct bachd *d, char *reply, size_t cap)
{
	snprintf(
		reply, cap, "%s",
		start_capture(d)
			? "{\"ok\":false,\"error\":\"cannot start: see the log\"}"
			: "{\"ok\":true}");
}

static int finish_capture(struct bachd *d)
{
	struct capture_status st;

	if (!d->cap)
		return d->status;
	d->status = capture_close(d->cap, &st);
	d->cap = NULL;
	d->last = st;
	d->had_capture = true;
	metrics_now(d, true);
	log_notice(
		"capture ended: %llu records produced, %llu written, %llu lost, %llu segment%s, exit status %d",
		(unsigned long long)st.produced, (unsigned long long)st.written,
		(unsigned long long)st.lost, (unsigned long long)st.segments,
		bach_s(st.segments), d->status);
	return d->status;
}

static void handle_request(struct bachd *d, int fd, char *req)
{
	char reply[8192], *arg = strchr(req, ' ');
	struct capture_status st;

	if (arg)
		*arg++ = 0;
	if (!strcmp(req, "status") && !arg) {
		if (d->cap)
			capture_status(d->cap, &st);
		else
			st = d->last, st.running = false;
		ctl_status_reply(reply, sizeof(reply), "bachd", d->cap,
				 d->t0_wall, mono() - d->t0, &st);
	} else if (!strcmp(req, "rotate") && !arg) {
		if (d->cap)
			capture_rotate(d->cap);
		snprintf(reply, sizeof(reply),
			 d->cap ? "{\"ok\":true}"
				: "{\"ok\":false,\"error\":\"not capturing\"}");
	} else if (!strcmp(req, "mark") && arg && *arg) {
		if (!d->cap)
			snprintf(reply, sizeof(reply),
				 "{\"ok\":false,\"error\":\"not capturing\"}");
		else if (capture_mark(d->cap, arg, "ctl"))
			snprintf(
				reply, sizeof(reply),
				"{\"ok\":false,\"error\":\"too many marks waiting: try again\"}");
		else
			snprintf(reply, sizeof(reply), "{\"ok\":true}");
	} else if (!strcmp(req, "stop") && (!arg || !strcmp(arg, "wait"))) {
		if (!d->cap) {
			snprintf(reply, sizeof(reply),
				 "{\"ok\":false,\"error\":\"not capturing\"}");
		} else if (arg && !ctl_hold(&d->ctl, fd, CTL_WAIT_STOP)) {
			snprintf(reply, sizeof(reply), CTL_REPLY_TOO_MANY);
		} else {
			/* the main loop closes it once drained; bachd stays */
			capture_stop(d->cap);
			d->stopping = true;
			if (arg)
				return; /* answered when it has ended */
			snprintf(reply, sizeof(reply),
				 "{\"ok\":true,\"state\":\"stopping\"}");
		}
	} else if (!strcmp(req, "start") && !arg) {
		if (!d->cap)
			start_reply(d, reply, sizeof(reply));
		else if (d->quit)
			snprintf(reply, sizeof(reply), CTL_REPLY_NO_START);
		else if (!d->stopping)
			snprintf(
				reply, sizeof(reply),
				"{\"ok\":false,\"error\":\"already capturing\"}");
		else if (ctl_hold(&d->ctl, fd, CTL_WAIT_START))
			return; /* answer_waiting() starts it after the stop */
		else
			snprintf(reply, sizeof(reply), CTL_REPLY_TOO_MANY);
	} else {
		log_warn("unknown request '%.64s'", req);
		snprintf(
			reply, sizeof(reply),
			"{\"ok\":false,\"error\":\"unknown request (status, start, stop, rotate, mark TEXT)\"}");
	}
	ctl_reply(fd, reply);
}

/*
 * The capture has ended: `stop wait` gets its end; a `start` that came
 * while it stopped starts the next (one for all of them), unless bachd
 * is on its way out.
 */
static void answer_waiting(struct bachd *d)
{
	char reply[8192];

	ctl_stopped_reply(reply, sizeof(reply), d->status, &d->last);
	ctl_reply_waiting(&d->ctl, CTL_WAIT_STOP, reply);
	if (!ctl_holding(&d->ctl, CTL_WAIT_START))
		return;
	if (d->quit)
		snprintf(reply, sizeof(reply), CTL_REPLY_NO_START);
	else
		start_reply(d, reply, sizeof(reply));
	ctl_reply_waiting(&d->ctl, CTL_WAIT_START, reply);
}

static void tick(struct bachd *d)
{
	struct capture_status st;
	bool healthy;

	if (metrics_due(&d->metrics))
		metrics_now(d, true);
	if (!d->cap) {
		sd_notify(0, "STATUS=idle: no capture (bach ctl start)");
		if (d->wd_usec)
			sd_notify(0, "WATCHDOG=1");
		return;
	}
	capture_status(d->cap, &st);
	/*
	 * The watchdog is fed only while data really reaches the disk: the
	 * writer moved on since the last ping, or it has nothing to write.
	 */
	healthy = !st.writer_blocked &&
		  (st.writer_progress != d->wd_progress || st.ring_used == 0);
	d->wd_progress = st.writer_progress;
	if (d->wd_usec && healthy)
		sd_notify(0, "WATCHDOG=1");
	if (mono() - d->st_time >= 1.0) {
		double dt = mono() - d->st_time;
		char line[256];

		snprintf(
			line, sizeof(line),
			"STATUS=%.0f records/s, %.1f MB/s, ring %llu%%, %llu written, %llu lost",
			(double)(st.written - d->st_written) / dt,
			(double)(st.bytes - d->st_bytes) / dt / 1e6,
			(unsigned long long)(st.ring_blocks
						     ? st.ring_used * 100 /
							       st.ring_blocks
						     : 0),
			(unsigned long long)st.written,
			(unsigned long long)st.lost);
		d->st_written = st.written;
		d->st_bytes = st.bytes;
		d->st_time = mono();
		sd_notify(0, line);
	}
}

static int setup_signals(struct bachd *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	/* blocked before any thread starts, so only signalfd sees them */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -EINVAL;
	signal(SIGPIPE, SIG_IGN);
	d->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return d->sfd < 0 ? -errno : 0;
}

static void handle_signal(struct bachd *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_info("SIGHUP: starting a new segment");
			if (d->cap)
				capture_rotate(d->cap);
			continue;
		}
		log_notice("%s: draining and stopping",
			   si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
		d->quit = true;
		sd_notify(0, "STOPPING=1");
		if (d->cap)
			capture_stop(d->cap);
	}
}

static void main_loop(struct bachd *d)
{
	while (!d->quit || d->cap) {
		struct pollfd p[2] = { { d->sfd, POLLIN, 0 },
				       { d->ctl.fd, POLLIN, 0 } };

		poll(p, d->ctl.fd >= 0 ? 2 : 1, TICK_MS);
		if (p[0].revents)
			handle_signal(d);
		if (d->ctl.fd >= 0 && p[1].revents & POLLIN) {
			char req[CTL_MAX_REQUEST + 1];
			int fd = ctl_accept(&d->ctl, req, CTL_MAX_REQUEST);

			if (fd >= 0)
				handle_request(d, fd, req);
		}
		if (d->cap && capture_done(d->cap)) {
			bool asked = d->stopping;

			finish_capture(d);
			d->stopping = false;
			answer_waiting(d);
			/* the source ended (or a write failed): we are done */
			if (!asked && !d->quit) {
				d->quit = true;
				sd_notify(0, "STOPPING=1");
			}
		}
		if (d->cap || !d->quit)
			tick(d);
	}
}

int main(int argc, char **argv)
{
	static struct bachd d;
	struct bachd_args a;
	bool journal = log_stderr_is_journal();
	int ret;

	if (argc > 1 && !strcmp(argv[1], "__complete")) {
		const char *so;
		const struct option *lo = bachd_options(&so);

		/* the shell's completion (tools/completion/bach.bash) */
		complete_getopt(so, lo, bachd_complete_values, argc - 2,
				argv + 2);
		return fflush(stdout) ? EXIT_USAGE : EXIT_OK;
	}
	bachd_config_defaults(&d.cfg);
	d.t0 = mono();
	d.t0_wall = time(NULL);
	d.sfd = -1;
	d.ctl.fd = -1;
	ret = bachd_parse_args(&d.cfg, &a, argc, argv, "bachd");
	if (ret)
		return ret;
	if (a.help) {
		bachd_usage("bachd", true);
		return 0;
	}
	if (a.version) {
		printf("bachd %s\n", BACH_VERSION);
		return 0;
	}
	if (a.list_drivers)
		return 0;
	if (a.check_config) {
		printf("bachd: configuration OK (driver %s, output %s)\n",
		       d.cfg.cap.driver, d.cfg.cap.output);
		return 0;
	}
	log_init("bachd", journal, d.cfg.log_level);
	if (sd_watchdog_enabled(0, &d.wd_usec) <= 0)
		d.wd_usec = 0;
	ret = setup_signals(&d);
	if (ret) {
		log_err("signals: %s", strerror(-ret));
		return EXIT_USAGE;
	}
	/*
	 * Another bachd answering on the socket, or a file that is not a
	 * socket there: refuse before making anything.
	 */
	if (socket_choose(&d)) {
		close(d.sfd);
		return EXIT_USAGE;
	}
	/* a metrics file that cannot be written is a configuration error */
	metrics_init(&d.metrics, &d.cfg);
	if (d.cfg.cap.metrics_file[0] && (ret = metrics_now(&d, false))) {
		log_err("metrics_file %s: %s", d.cfg.cap.metrics_file,
			metrics_strerror(&d.metrics));
		close(d.sfd);
		return EXIT_USAGE;
	}
	/*
	 * The socket before the capture directory (as bach capture does): a
	 * configured one that cannot be made leaves nothing behind. A
	 * request that comes meanwhile waits for the main loop.
	 */
	if (d.sock[0]) {
		ret = ctl_open(&d.ctl, d.sock, d.cfg.control_group);
		if (ret && d.sock_default) {
			log_warn(
				"control socket %s: %s: running without one (control_socket names another)",
				d.sock, ctl_strerror(ret));
		} else if (ret) {
			log_err("control socket %s: %s", d.sock,
				ctl_strerror(ret));
			close(d.sfd);
			return EXIT_USAGE;
		} else {
			log_info("control socket %s%s", d.sock,
				 d.sock_default
					 ? " (the default: bach ctl finds it)"
					 : "");
		}
	}
	if (start_capture(&d)) {
		/* unwritable output, no device, bad option: no restart spin */
		ctl_close(&d.ctl);
		close(d.sfd);
		return EXIT_USAGE;
	}
	/* the source is open and the first segment exists */
	sd_notify(0, "READY=1\nSTATUS=capturing");
	metrics_now(&d, true);
	main_loop(&d);
	ctl_close(&d.ctl);
	close(d.sfd);
	return d.status;
}
