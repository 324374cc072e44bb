// SPDX-License-Identifier: MIT
/*
 * bach ls: the captures under a directory, from their manifests (the one
 * reader, lib/io/manifest_read.c): start, duration, records, lost, size,
 * labels, state.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "lib/io/manifest.h"
#include "lib/options.h"

struct cap {
	char name[256];
	struct bach_manifest m;
	bool ok;			 /* the manifest was read */
	char why[600];			 /* else why not */
	uint64_t bytes;			 /* its files */
	uint64_t records, markers, lost; /* records: gap markers included */
	double start, end; /* seconds since the epoch, -1 unknown */
	const char *state;
};

/*
 * Is an exclusive flock held on the directory fd names (a bachd or bach
 * capture writing there, core/recover.c outdir_lock)? Read from
 * /proc/locks, so that looking never takes the lock a starting bachd needs.
 */
static bool writer_active(int fd)
{
	struct stat st;
	char line[256], dev[64];
	FILE *f;
	bool held = false;

	if (fstat(fd, &st) < 0)
		return false;
	snprintf(dev, sizeof(dev), " %02x:%02x:%llu ", major(st.st_dev),
		 minor(st.st_dev), (unsigned long long)st.st_ino);
	f = fopen("/proc/locks", "re");
	if (!f) {
		/* no /proc: ask flock itself, briefly */
		if (flock(fd, LOCK_SH | LOCK_NB) < 0)
			return errno == EWOULDBLOCK;
		flock(fd, LOCK_UN);
		return false;
	}
	while (!held && fgets(line, sizeof(line), f))
		held = strstr(line, "FLOCK") && strstr(line, "WRITE") &&
		       strstr(line, dev);
	fclose(f);
	return held;
}

/*
 * A capture's files: their bytes (regular files only), and whether one is
 * a segment. False when the directory cannot be read.
 */
static bool dir_files(int dfd, uint64_t *bytes, bool *segs)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;

	*bytes = 0;
	*segs = false;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, "seg-", 4))
			*segs = true;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			*bytes += (uint64_t)st.st_size;
	}
	closedir(d);
	return true;
}

/* One capture directory; false when it is not one. */
static bool load(struct cap *c, int parent, const char *name)
{
	int dfd = openat(parent, name,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct bach_manifest *m = &c->m;
	bool segs;
	int rc;

	memset(c, 0, sizeof(*c));
	if (dfd < 0)
		return false;
	snprintf(c->name, sizeof(c->name), "%s", name);
	rc = bach_manifest_load(dfd, name, m, c->why, sizeof(c->why));
	if (!dir_files(dfd, &c->bytes, &segs) || (rc == -ENOENT && !segs)) {
		close(dfd);
		return false;
	}
	close(dfd);
	c->ok = rc == 0;
	c->start = c->end = -1;
	if (!c->ok)
		return true;
	c->start = bach_manifest_time(m->start_time);
	if (m->ended)
		c->end = bach_manifest_time(m->end_time);
	/* records counted as verify and stat count them: markers included */
	for (size_t i = 0; i < m->nsegs; i++) {
		c->records += m->segs[i].records;
		c->markers += m->segs[i].gap_markers;
	}
	c->lost = m->gap_lost;
	if (m->ended && m->has_totals) {
		c->records = m->written + c->markers;
		c->lost = m->lost;
	}
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cap *)a)->name,
		      ((const struct cap *)b)->name);
}

static void fmt_secs(char *buf, size_t cap, double s)
{
	unsigned long long t = (unsigned long long)(s + 0.5);

	if (s < 0)
		snprintf(buf, cap, "-");
	else if (t >= 86400)
		snprintf(buf, cap, "%llud%02lluh%02llum", t / 86400,
			 t / 3600 % 24, t / 60 % 60);
	else if (t >= 3600)
		snprintf(buf, cap, "%lluh%02llum%02llus", t / 3600, t / 60 % 60,
			 t % 60);
	else if (t >= 60)
		snprintf(buf, cap, "%llum%02llus", t / 60, t % 60);
	else
		snprintf(buf, cap, "%.1fs", s);
}

static void fmt_bytes(char *buf, size_t cap, uint64_t b)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1000 && u < 4)
		v /= 1000, u++;
	snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void print_text(const struct cap *c, size_t n, double now)
{
	char start[32], dur[32], size[32], labels[2200], esc[2400], en[600],
		state[100];

	printf("%-18s %-20s %10s %14s %11s %12s %10s %-10s %s\n", "CAPTURE",
	       "START", "DURATION", "RECORDS", "GAP-MARKERS", "LOST", "SIZE",
	       "STATE", "LABELS");
	for (size_t i = 0; i < n; i++, c++) {
		size_t l = 0;
		time_t t = (time_t)c->start;
		struct tm tm;

		start[0] = 0;
		if (c->start >= 0 && gmtime_r(&t, &tm))
			strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ",
				 &tm);
		fmt_secs(dur, sizeof(dur),
			 c->start < 0			? -1
			 : c->end >= 0			? c->end - c->start
			 : !strcmp(c->state, "running") ? now - c->start
							: -1);
		fmt_bytes(size, sizeof(size), c->bytes);
		labels[0] = 0;
		for (size_t k = 0; k < c->m.nlabels && l < sizeof(labels); k++)
			l += (size_t)snprintf(labels + l, sizeof(labels) - l,
					      "%s%s=%s", k ? "," : "",
					      c->m.labels[k].key,
					      c->m.labels[k].value);
		printf("%-18s %-20s %10s %14llu %11llu %12llu %10s %-10s %s\n",
		       bach_escape_ctl(en, sizeof(en), c->name),
		       start[0] ? start : "-", dur,
		       (unsigned long long)c->records,
		       (unsigned long long)c->markers,
		       (unsigned long long)c->lost, size,
		       bach_escape_ctl(state, sizeof(state), c->state),
		       bach_escape_ctl(esc, sizeof(esc), labels));
	}
}

static int print_json(const struct cap *c, size_t n, const char *dir,
		      double now)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++, c++) {
		json_t *o = json_object(), *labels = json_object();
		char path[4400];
		double dur = c->start < 0		    ? -1
			     : c->end >= 0		    ? c->end - c->start
			     : !strcmp(c->state, "running") ? now - c->start
							    : -1;

		snprintf(path, sizeof(path), "%s/%s", dir, c->name);
		for (size_t k = 0; k < c->m.nlabels; k++)
			json_object_set_new(labels, c->m.labels[k].key,
					    json_string(c->m.labels[k].value));
		json_object_set_new(o, "capture", json_string(c->name));
		json_object_set_new(o, "path", json_string(path));
		json_object_set_new(o, "state", json_string(c->state));
		json_object_set_new(o, "start",
				    c->ok && c->m.start_time[0]
					    ? json_string(c->m.start_time)
					    : json_null());
		json_object_set_new(o, "end",
				    c->ok && c->m.end_time[0]
					    ? json_string(c->m.end_time)
					    : json_null());
		json_object_set_new(
			o, "duration_seconds",
			dur >= 0 ? json_real((double)(long long)(dur * 1000 +
								 0.5) /
					     1000)
				 : json_null());
		json_object_set_new(o, "records",
				    json_integer((json_int_t)c->records));
		json_object_set_new(
			o, "data",
			json_integer((json_int_t)(c->records - c->markers)));
		json_object_set_new(o, "gap_markers",
				    json_integer((json_int_t)c->markers));
		json_object_set_new(o, "lost",
				    json_integer((json_int_t)c->lost));
		json_object_set_new(o, "bytes",
				    json_integer((json_int_t)c->bytes));
		json_object_set_new(o, "host", json_string(c->m.host));
		json_object_set_new(o, "labels", labels);
		json_object_set_new(o, "marks",
				    json_integer((json_int_t)c->m.nmarks));
		if (!c->ok)
			json_object_set_new(o, "error", json_string(c->why));
		json_array_append_new(arr, o);
	}
	/*
	 * duration_seconds is rounded to the millisecond (the manifest's
	 * times are): 15 significant digits print it as that decimal,
	 * 19.045 rather than 19.045000000000002, up to 10^12 s
	 */
	return put_json(arr);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct cap *caps = NULL;
	size_t n = 0, cap = 0;
	bool json = false, active;
	const char *dir;
	char esc[4200];
	DIR *d;
	struct dirent *e;
	int c, fd, status = EXIT_OK;
	double now = (double)time(NULL);

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'j')
			return usage_error("bad option");
		json = true;
	}
	if (argc - optind != 1)
		return usage_error("need one DIR");
	dir = argv[optind];
	bach_escape_ctl(esc, sizeof(esc), dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errmsg("%s: %s", esc, strerror(errno));
		return EXIT_USAGE;
	}
	active = writer_active(fd);
	d = fdopendir(dup(fd));
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			struct cap *p =
				realloc(caps, (cap = cap * 2 + 8) * sizeof(*p));

			if (!p) {
				errmsg("out of memory");
				status = EXIT_USAGE;
				break;
			}
			caps = p;
		}
		if (load(&caps[n], fd, e->d_name))
			n++;
	}
	if (d)
		closedir(d);
	close(fd);
	qsort(caps, n, sizeof(*caps), by_name);
	for (size_t i = n; i-- > 0;) {
		struct cap *k = &caps[i];

		if (!k->ok) {
			errmsg("%s", bach_escape_ctl(esc, sizeof(esc), k->why));
			k->state = "unreadable";
			status = status ? status : EXIT_DATA;
		} else if (k->m.ended) {
			k->state = k->m.state[0] ? k->m.state : "ended";
		} else if (active) {
			/* the writer's capture is the newest; recovery closes
			 * the rest */
			k->state = "running";
			active = false;
		} else {
			k->state = "unfinished";
		}
	}
	if (status != EXIT_USAGE) {
		if (json)
			c = print_json(caps, n, dir, now);
		else
			print_text(caps, n, now), c = EXIT_OK;
		if (c)
			status = c;
	}
	for (size_t i = 0; i < n; i++)
		bach_manifest_free(&caps[i].m);
	free(caps);
	return status;
}

const struct bach_cmd cmd_ls = {
	.name = "ls",
	.run = run,
	.summary = "list the captures under a directory",
	.help = "usage: bach ls [--json] DIR\n"
		"\n"
		"One line per capture directory in DIR (an output directory), by\n"
		"name (its UTC start): start, duration, records (gap markers\n"
		"included, as bach stat and bach verify count them), gap markers,\n"
		"records lost, size of its files, state and labels, from its manifest.\n"
		"States: the ended event's (clean, recovered, error, source_error);\n"
		"running: a bachd or bach capture holds DIR's lock and this is its\n"
		"newest capture without an ended event; unfinished: no ended event\n"
		"and nobody writing (bach recover closes it); unreadable: its manifest\n"
		"is damaged (named on standard error, exit 1).\n"
		"\n"
		"      --json   one JSON array of objects: capture, path, state, start,\n"
		"               end, duration_seconds (to the millisecond), records,\n"
		"               data (records that are not gap markers), gap_markers,\n"
		"               lost, bytes, host,\n"
		"               labels, marks\n"
		"\n"
		"example: bach ls /var/lib/bach/captures\n",
};
