// SPDX-License-Identifier: MIT
/*
 * A capture session (session.h): its configuration, the capture directory
 * and its lock, the threads, status and the final accounting.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bach/record.h"
#include "bach/trace.h"
#include "capture_priv.h"
#include "lib/bus/frame.h"
#include "lib/cpus.h"
#include "lib/io/manifest.h"
#include "lib/io/zpool.h"
#define LOG_PREFIX NULL
#include "log.h"
#include "recover.h"

int capture_config_option(struct capture_config *c, const char *key,
			  const char *value, const char *file, unsigned line)
{
	char *k, *v;

	if (c->nopts == CAPTURE_MAX_OPTIONS)
		return -E2BIG;
	k = strdup(key);
	v = strdup(value);
	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	c->opts[c->nopts++] = (struct bach_option){
		.key = k, .value = v, .file = file, .line = line
	};
	return 0;
}

int capture_config_label(struct capture_config *c, const char *key,
			 const char *value)
{
	size_t i, n = strlen(key);

	if (!n || n >= CAPTURE_LABEL_KEY ||
	    strspn(key,
		   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
		    n ||
	    (key[0] >= '0' && key[0] <= '9') || key[0] == '.' ||
	    key[0] == '-' || strlen(value) >= CAPTURE_LABEL_VALUE)
		return -EINVAL;
	for (i = 0; i < c->nlabels && strcmp(c->labels[i].key, key); i++)
		;
	if (i == CAPTURE_MAX_LABELS)
		return -E2BIG;
	snprintf(c->labels[i].key, sizeof(c->labels[i].key), "%s", key);
	snprintf(c->labels[i].value, sizeof(c->labels[i].value), "%s", value);
	if (i == c->nlabels)
		c->nlabels++;
	return 0;
}

/*
 * Keep the options that count, for the manifest: of a key given more than
 * once only the last (a repeatable one keeps them all).
 */
static void drop_replaced(struct capture *c)
{
	const struct bach_optdesc *d = c->drv->options;
	size_t n = 0;

	for (size_t i = 0; i < c->cfg.nopts; i++) {
		struct bach_option *o = &c->cfg.opts[i];
		int k = bach_opt_find(d, o->key);
		bool later = false;

		for (size_t j = i + 1; j < c->cfg.nopts && !later; j++)
			later = !strcmp(c->cfg.opts[j].key, o->key);
		if (later && k >= 0 && d[k].type != BACH_OPT_LIST) {
			free((char *)o->key);
			free((char *)o->value);
			continue;
		}
		c->cfg.opts[n++] = *o;
	}
	c->cfg.nopts = n;
}

/* The options through the driver's table, then open it with the values. */
static int open_driver(struct capture *c)
{
	size_t n = bach_opt_count(c->drv->options);
	struct bach_optval *v = calloc(n ? n : 1, sizeof(*v));
	char msg[1024];
	int err;

	if (!v)
		return -ENOMEM;
	err = bach_driver_options(c->drv, c->cfg.opts, c->cfg.nopts, v, msg,
				  sizeof(msg));
	if (err) {
		log_err("%s: %s", c->drv->name, msg);
	} else {
		drop_replaced(c);
		err = c->drv->open(&c->src, c->priv, v);
	}
	bach_opts_free(c->drv->options, v);
	free(v);
	return err;
}

/* ---- session ----------------------------------------------------------- */

static int make_capture_dir(struct capture *c)
{
	char id[64];
	time_t t = time(NULL);
	struct tm tm;
	int err;

	gmtime_r(&t, &tm);
	strftime(id, sizeof(id), "%Y%m%dT%H%M%SZ", &tm);
	for (int i = 1; i < 100; i++) {
		char name[80];

		if (i == 1)
			snprintf(name, sizeof(name), "%s", id);
		else
			snprintf(name, sizeof(name), "%s-%d", id, i);
		if (mkdirat(c->out_fd, name, 0755) == 0) {
			snprintf(c->capname, sizeof(c->capname), "%s", name);
			snprintf(c->capdir, sizeof(c->capdir), "%s/%s",
				 c->cfg.output, name);
			c->dirfd = openat(c->out_fd, name,
					  O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						  O_CLOEXEC);
			err = c->dirfd < 0 ? -errno : 0;
			if (!err)
				fsync(c->out_fd);
			if (err)
				log_err("%s: %s", c->capdir, strerror(-err));
			return err;
		}
		if (errno != EEXIST) {
			err = -errno;
			log_err("cannot create a capture directory in %s: %s",
				c->cfg.output, strerror(errno));
			return err;
		}
	}
	log_err("%s: too many captures started in this second", c->cfg.output);
	return -EEXIST;
}

static int write_started(struct capture *c)
{
	char host[256] = "", gw[32];
	int err;

	gethostname(host, sizeof(host) - 1);
	pthread_mutex_lock(&c->sh.mu); /* the identity */
	capture_identity_gateware(c->sh.identity, gw, sizeof(gw));
	err = manifest_started(
		&c->wr.man,
		&(struct manifest_started){
			.host = host,
			.version = BACH_VERSION,
			.gateware = gw,
			.config_abs = c->cfg.config_abs,
			.capture = c->capname,
			.source = c->origin,
			.labels = c->cfg.labels,
			.nlabels = c->cfg.nlabels,
			.driver = c->cfg.driver,
			.opts = c->cfg.opts,
			.nopts = c->cfg.nopts,
			.device = c->sh.identity,
			.config_file = c->cfg.config_path,
			.io = c->wr.io.uring ? "io_uring" : "pwrite",
			.settings = c->cfg.settings,
			.settings_of = c->cfg.settings_of });
	pthread_mutex_unlock(&c->sh.mu);
	return err ? err : manifest_sync(&c->wr.man);
}

/*
 * A capture whose start failed half-way holds nothing: its directory goes
 * (only the names this session made in it, never anything else).
 */
static void discard_capture_dir(struct capture *c)
{
	static const char *const made[] = { BACH_MANIFEST_NAME,
					    "board-stream.bin" };
	char part[80];

	if (c->wr.segfd >= 0) {
		close(c->wr.segfd);
		c->wr.segfd = -1;
		snprintf(part, sizeof(part), "%s.part", c->wr.segname);
		unlinkat(c->dirfd, part, 0);
	}
	for (size_t i = 0; i < sizeof(made) / sizeof(*made); i++)
		unlinkat(c->dirfd, made[i], 0);
	if (unlinkat(c->out_fd, c->capname, AT_REMOVEDIR) == 0)
		fsync(c->out_fd);
	else
		log_warn("%s: cannot remove after the failed start: %s",
			 c->capdir, strerror(errno));
}

int capture_open(struct capture **cp, const struct capture_config *cfg)
{
	struct capture *c = calloc(1, sizeof(*c));
	size_t nblocks;
	uint64_t avail;
	int err, uring_err, n;
	unsigned failed = 0;

	*cp = c;
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->dirfd = c->wr.segfd = c->acq.dump_fd = c->out_fd = -1;
	c->wr.man.fd = -1;
	pthread_mutex_init(&c->sh.mu, NULL);
	/* the manifest and the logs name the capture by its absolute path */
	if (!realpath(cfg->output, c->cfg.output)) {
		err = -errno;
		log_err("output directory %s: %s", cfg->output,
			strerror(errno));
		return err;
	}
	c->src.c = c;

	/*
	 * One writer per output directory: a second one would "recover" the
	 * first one's open segment from under it.
	 */
	c->out_fd = outdir_lock(c->cfg.output);
	if (c->out_fd < 0)
		return c->out_fd;
	c->drv = bach_driver_find(cfg->driver);
	if (!c->drv) {
		log_err("no driver '%s'", cfg->driver);
		return -ENOENT;
	}
	n = recover_outdir(c->out_fd, c->cfg.output, &failed);
	if (n < 0) {
		log_err("output directory %s: %s", c->cfg.output, strerror(-n));
		return n;
	}
	if (n > 0)
		log_notice(
			"%s: recovered %d capture%s left unfinished by an earlier run",
			c->cfg.output, n, n == 1 ? "" : "s");
	if (failed)
		log_warn(
			"%s: %u file%s of earlier captures could not be recovered (see above; bach recover tells again)",
			c->cfg.output, failed, failed == 1 ? "" : "s");
	nblocks = (size_t)(cfg->ring_bytes / (RING_BLOCK_RECS * BACH_REC_SIZE));
	/* refused now rather than killed by the OOM killer when it fills */
	avail = ring_memory_available();
	if (cfg->ring_bytes > avail) {
		log_err("cannot allocate the ring: %llu MiB, %llu MiB available (ring_mb)",
			(unsigned long long)(cfg->ring_bytes >> 20),
			(unsigned long long)(avail >> 20));
		return -ENOMEM;
	}
	err = ring_init(&c->ring, nblocks);
	if (err) {
		log_err("cannot allocate the ring: %llu MiB: %s (ring_mb)",
			(unsigned long long)(cfg->ring_bytes >> 20),
			strerror(-err));
		return err;
	}
	if (!c->ring.locked)
		log_info(
			"the ring (%llu MiB) is not locked in memory: RLIMIT_MEMLOCK is lower (LimitMEMLOCK= in the unit)",
			(unsigned long long)(cfg->ring_bytes >> 20));
	c->acq.parser = bach_parser_new(&capture_parser_ops, &c->src);
	if (!c->acq.parser)
		return -ENOMEM;
	err = segio_init(&c->wr.io, cfg->queue_depth, cfg->io_uring,
			 &uring_err);
	if (err)
		return err;
	c->wr.io.delay_ms = cfg->test_writer_delay_ms;
	if (cfg->io_uring && uring_err)
		log_warn("io_uring refused (%s): writing with pwrite instead",
			 strerror(-uring_err));
	if (cfg->compress) {
		int threads =
			cfg->threads > 0 ? cfg->threads : (int)bach_cpus(256);

		/*
		 * The ring holds the input of every block in flight: the pool
		 * never takes more than half of it, so the source always has
		 * room to go on.
		 */
		size_t fblocks =
			cfg->compressor == BACH_DEFLATE_ZSTD
				? bach_zstd_frame_blocks(cfg->zstd_frame_kb)
				: 1;
		/* zstd frames of several blocks: two a thread in flight */
		size_t depth =
			(size_t)threads * (fblocks * 2 > 4 ? fblocks * 2 : 4);

		if (depth > c->ring.nblocks / 2)
			depth = c->ring.nblocks / 2 ? c->ring.nblocks / 2 : 1;
		c->wr.pool = bach_zpool_new(threads, depth, cfg->compressor,
					    cfg->level);
		c->wr.pool_zstd = cfg->compressor == BACH_DEFLATE_ZSTD;
		if (!c->wr.pool)
			return -ENOMEM;
		bach_zpool_frame(c->wr.pool, fblocks);
	}
	c->priv = calloc(1, c->drv->priv_size ? c->drv->priv_size : 1);
	if (!c->priv)
		return -ENOMEM;
	err = open_driver(c);
	if (err) {
		/* close() releases whatever a failed open() got so far */
		if (c->drv->close)
			c->drv->close(c->priv);
		free(c->priv);
		c->priv = NULL;
		return err;
	}
	err = make_capture_dir(c);
	if (err)
		return err;
	err = manifest_open(&c->wr.man, c->dirfd, true);
	if (err) {
		log_err("%s/%s: %s", c->capdir, BACH_MANIFEST_NAME,
			strerror(-err));
		return err;
	}
	/*
	 * Room for the lines that say the disk filled up. Without it those
	 * lines could be lost: a disk too full for it refuses the start (a
	 * filesystem that cannot reserve at all is taken as it is).
	 */
	err = manifest_reserve(&c->wr.man, MANIFEST_RESERVE);
	if (err == -ENOSPC) {
		log_err("%s/%s: cannot reserve %d KiB for it: %s", c->capdir,
			BACH_MANIFEST_NAME, MANIFEST_RESERVE >> 10,
			strerror(-err));
		return err;
	}
	if (cfg->raw_dump) {
		c->acq.dump_fd =
			openat(c->dirfd, "board-stream.bin",
			       O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (c->acq.dump_fd < 0) {
			err = -errno;
			log_err("%s/board-stream.bin: %s", c->capdir,
				strerror(errno));
			return err;
		}
	}
	err = write_started(c);
	if (err) {
		log_err("%s/%s: cannot write: %s", c->capdir,
			BACH_MANIFEST_NAME, strerror(-err));
		return err;
	}
	err = segment_open(c);
	if (err)
		return err;
	c->opened = true;
	log_info("capturing from %s into %s", cfg->driver, c->capdir);
	return 0;
}

int capture_start(struct capture *c)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	c->t0_real_ns =
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	c->t0_ns = bach_now_ns();
	if (pthread_create(&c->wr_tid, NULL, capture_wr_main, c))
		return -EAGAIN;
	if (pthread_create(&c->acq_tid, NULL, capture_acq_main, c)) {
		ring_close(&c->ring);
		pthread_join(c->wr_tid, NULL);
		return -EAGAIN;
	}
	c->started = true;
	return 0;
}

void capture_stop(struct capture *c)
{
	if (!atomic_exchange(&c->sh.stop_requested, true) && c->started)
		c->drv->stop(c->priv);
}

bool capture_done(struct capture *c)
{
	return atomic_load(&c->sh.acq_done) && atomic_load(&c->sh.wr_done);
}

void capture_rotate(struct capture *c)
{
	atomic_store(&c->sh.rotate_requested, true);
}

int capture_mark(struct capture *c, const char *text, const char *source)
{
	int err = -ENOSPC;
	char *t = strdup(text);

	if (!t)
		return -ENOMEM;
	pthread_mutex_lock(&c->sh.mu);
	if (c->sh.nmarks < sizeof(c->sh.marks) / sizeof(*c->sh.marks)) {
		/*
		 * Read under the lock the writer places marks under: a
		 * block it already wrote never ends past this index.
		 */
		c->sh.marks[c->sh.nmarks++] = (struct capture_mark){
			.text = t,
			.source = source,
			.record = atomic_load(&c->sh.produced)
		};
		t = NULL;
		err = 0;
	}
	pthread_mutex_unlock(&c->sh.mu);
	free(t);
	return err;
}

void capture_status(struct capture *c, struct capture_status *st)
{
	uint64_t ws = atomic_load(&c->sh.write_started_ns);

	memset(st, 0, sizeof(*st));
	/* written and lost first: then produced >= written + lost */
	st->written = atomic_load(&c->sh.written);
	st->lost = atomic_load(&c->sh.lost);
	st->produced = atomic_load(&c->sh.produced);
	for (int i = 0; i < BACH_GAP_NCAUSES; i++)
		st->lost_by[i] = atomic_load(&c->sh.lost_by[i]);
	st->markers = atomic_load(&c->sh.markers);
	st->bytes = atomic_load(&c->sh.bytes);
	st->segments = atomic_load(&c->sh.segments);
	st->stalls = atomic_load(&c->sh.stalls);
	st->board_stalls = atomic_load(&c->sh.board_stalls);
	st->stall_ns = atomic_load(&c->sh.stall_ns);
	st->ring_used = ring_fill(&c->ring);
	st->ring_blocks = c->ring.nblocks;
	st->timing_bytes = ring_times_bytes(&c->ring);
	st->running = c->started && !atomic_load(&c->sh.acq_done);
	st->writer_progress = atomic_load(&c->sh.progress);
	st->writer_blocked = ws && bach_now_ns() - ws > BLOCKED_AFTER_NS;
	st->disk_waiting = atomic_load(&c->sh.disk_waiting);
	st->retention_over_bytes = atomic_load(&c->sh.retention_over);
	st->retention_kept_newest = atomic_load(&c->sh.retention_kept);
	st->corrupt_frames = atomic_load(&c->sh.corrupt_frames);
	st->start_unix_ns = c->t0_real_ns;
	st->uptime_ns = c->started ? bach_now_ns() - c->t0_ns : 0;
	pthread_mutex_lock(&c->sh.mu);
	st->have_board = c->sh.have_board_status;
	st->board = c->sh.board;
	st->have_decode = c->sh.have_decode;
	st->decode = c->sh.decode;
	capture_identity_gateware(c->sh.identity, st->gateware,
				  sizeof(st->gateware));
	snprintf(st->segment, sizeof(st->segment), "%s", c->sh.open_seg);
	pthread_mutex_unlock(&c->sh.mu);
	snprintf(st->capture_dir, sizeof(st->capture_dir), "%s", c->capdir);
	snprintf(st->driver, sizeof(st->driver), "%s", c->cfg.driver);
}

void capture_identity_gateware(const char *identity, char *buf, size_t cap)
{
	static const char key[] = "\"gateware\":\"";
	const char *p = strstr(identity, key), *q;

	buf[0] = 0;
	if (!p)
		return;
	p += sizeof(key) - 1;
	q = strchr(p, '"');
	if (q && (size_t)(q - p) < cap)
		snprintf(buf, cap, "%.*s", (int)(q - p), p);
}

size_t capture_status_json(const struct capture_status *st, char *buf,
			   size_t cap)
{
	char dir[4400], gw[200], start[40] = "";
	time_t t = (time_t)(st->start_unix_ns / 1000000000u);
	struct tm tm;
	int n;

	json_escape(dir, sizeof(dir), st->capture_dir);
	json_escape(gw, sizeof(gw), st->gateware);
	if (st->start_unix_ns && gmtime_r(&t, &tm))
		strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(
		buf, cap,
		"{\"running\":%s,\"driver\":\"%s\",\"capture\":\"%s\",\"segment\":\"%s\",\"start_time\":\"%s\",\"start_unix\":%.3f,\"uptime_seconds\":%.3f,\"gateware\":\"%s\",\"produced\":%llu,\"written\":%llu,\"lost\":%llu,\"lost_by\":{\"overflow\":%llu,\"frames\":%llu,\"corrupt\":%llu,\"ring\":%llu,\"device\":%llu,\"disk\":%llu},\"in_flight\":%llu,\"gap_markers\":%llu,\"bytes\":%llu,\"segments\":%llu,\"stalls\":%llu,\"stall_ns\":%llu,\"board_stalls\":%llu,\"ring_used\":%llu,\"ring_blocks\":%llu,\"timing_bytes\":%llu,\"corrupt_frames\":%llu,\"writer_blocked\":%s,\"waiting_for_disk\":%s,\"retention_over_bytes\":%llu,\"retention_kept_newest\":%s}",
		st->running ? "true" : "false", st->driver, dir, st->segment,
		start, (double)st->start_unix_ns / 1e9,
		(double)st->uptime_ns / 1e9, gw,
		(unsigned long long)st->produced,
		(unsigned long long)st->written, (unsigned long long)st->lost,
		(unsigned long long)st->lost_by[BACH_GAP_OVERFLOW],
		(unsigned long long)st->lost_by[BACH_GAP_FRAMES],
		(unsigned long long)st->lost_by[BACH_GAP_CORRUPT],
		(unsigned long long)st->lost_by[BACH_GAP_RING],
		(unsigned long long)st->lost_by[BACH_GAP_DEVICE],
		(unsigned long long)st->lost_by[BACH_GAP_DISK],
		(unsigned long long)(st->produced > st->written + st->lost
					     ? st->produced - st->written -
						       st->lost
					     : 0),
		(unsigned long long)st->markers, (unsigned long long)st->bytes,
		(unsigned long long)st->segments,
		(unsigned long long)st->stalls,
		(unsigned long long)st->stall_ns,
		(unsigned long long)st->board_stalls,
		(unsigned long long)st->ring_used,
		(unsigned long long)st->ring_blocks,
		(unsigned long long)st->timing_bytes,
		(unsigned long long)st->corrupt_frames,
		st->writer_blocked ? "true" : "false",
		st->disk_waiting ? "true" : "false",
		(unsigned long long)st->retention_over_bytes,
		st->retention_kept_newest ? "true" : "false");
	if (n > 0 && (size_t)n < cap && st->have_board) {
		/* the board's last status frame, in place of the closing } */
		const struct bach_board_status *b = &st->board;
		int m = snprintf(
			buf + n - 1, cap - (size_t)n + 1,
			",\"board\":{\"fifo_fill\":%u,\"fifo_size\":%u,\"records\":%llu,\"overflow\":%llu,\"stall_episodes\":%u,\"stalled_clocks\":%llu,\"clock_hz\":%u,\"off_bus\":%llu}}",
			b->fifo_fill, b->fifo_size,
			(unsigned long long)b->records,
			(unsigned long long)b->overflow, b->stall_episodes,
			(unsigned long long)b->stalled_clocks, b->clock_hz,
			(unsigned long long)b->offbus);

		n = m < 0 ? n : n - 1 + m;
	}
	if (n > 0 && (size_t)n + 12 < cap && st->have_decode) {
		/* the decoder's summary, likewise */
		size_t at = (size_t)n - 1;

		memcpy(buf + at, ",\"decode\":", 10);
		at += 10;
		at += manifest_decode_json(buf + at, cap - at, &st->decode);
		if (at + 1 < cap) {
			buf[at++] = '}';
			buf[at] = 0;
			n = (int)at;
		} else {
			n = (int)cap;
		}
	}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

int capture_close(struct capture *c, struct capture_status *final)
{
	int status = 0;

	if (!c)
		return EXIT_USAGE;
	if (c->started) {
		pthread_join(c->acq_tid, NULL);
		pthread_join(c->wr_tid, NULL);
	} else if (c->wr.segfd >= 0) {
		segment_close(c);
	}
	if (final)
		capture_status(c, final);
	if (c->wr.man.fd >= 0 && final) {
		const char *state = c->wr.write_err  ? "error"
				    : c->acq.run_err ? "source_error"
						     : "clean";

		if (manifest_ended(&c->wr.man,
				   &(struct manifest_ended){
					   .state = state,
					   .produced = final->produced,
					   .written = final->written,
					   .lost = final->lost,
					   .gap_markers = final->markers,
					   .segments = final->segments,
					   .bytes = final->bytes,
					   .stalls = final->stalls,
					   .board_stalls = final->board_stalls,
					   .stopped_by = c->wr.stop_reason,
					   .have_board = final->have_board,
					   .board_off_bus = final->board.offbus,
					   .decode = final->have_decode
							     ? &final->decode
							     : NULL }) ||
		    manifest_sync(&c->wr.man)) {
			if (!c->wr.manifest_err)
				log_err("%s/%s: cannot write the ended event: %s",
					c->capdir, BACH_MANIFEST_NAME,
					strerror(-c->wr.man.err));
			c->wr.manifest_err = c->wr.man.err;
		}
	}
	if (c->wr.manifest_err)
		status = EXIT_MANIFEST;
	else if (c->wr.write_err)
		status = c->wr.write_err == -ENOSPC ? EXIT_ENOSPC : EXIT_DATA;
	else if (c->acq.run_err)
		status = EXIT_SOURCE;
	if (!c->opened && c->dirfd >= 0)
		discard_capture_dir(c);
	if (c->priv && c->drv->close)
		c->drv->close(c->priv);
	free(c->priv);
	bach_zpool_free(c->wr.pool);
	segio_free(&c->wr.io);
	bach_index_free(&c->wr.segix);
	zst_table_free(&c->wr.segzt);
	bach_time_writer_free(c->wr.tw);
	bach_zpool_free(c->wr.tpool);
	if (c->acq.parser)
		bach_parser_free(c->acq.parser);
	if (c->ring.blocks)
		ring_free(&c->ring);
	manifest_close(&c->wr.man);
	if (c->acq.dump_fd >= 0) {
		fdatasync(c->acq.dump_fd);
		close(c->acq.dump_fd);
	}
	if (c->dirfd >= 0)
		close(c->dirfd);
	if (c->out_fd >= 0)
		close(c->out_fd); /* and the lock with it */
	for (size_t i = 0; i < c->sh.nmarks; i++)
		free(c->sh.marks[i].text);
	for (size_t i = 0; i < c->cfg.nopts; i++) {
		free((char *)c->cfg.opts[i].key);
		free((char *)c->cfg.opts[i].value);
	}
	pthread_mutex_destroy(&c->sh.mu);
	free(c->origin);
	free(c);
	return status;
}
