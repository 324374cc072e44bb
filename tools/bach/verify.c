// SPDX-License-Identifier: MIT
/* bach verify: is every record valid and every file whole? */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libdeflate.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bach/index.h"
#include "bach/record.h"
#include "cmd.h"
#include "lib/io/found.h"
#include "lib/io/manifest.h"
#include "lib/io/outfile.h"
#include "lib/io/resync.h"
#include "lib/options.h"

#define MAX_LISTED 20 /* problems listed per file before summarising */

struct vstate {
	uint64_t files, records, problems, gaps, lost, stale, unknown;
	bool quiet;
};

/*
 * A whole blocked file's index, FILE.gzi, if it has one: the one
 * bach_index_build() makes from the file, entry for entry? One that is
 * not is stale: a warning (readers ignore it and find the members from the
 * file), not damage, since the trace itself is whole.
 */
static void check_index(struct vstate *v, const char *path)
{
	struct bach_index have, want;
	char msg[512];
	int err = bach_index_load(path, &have, msg, sizeof(msg));

	if (err == -ENOENT)
		return; /* none: readers build it, bach index writes it */
	if (!err) {
		if (bach_index_build(path, &want, msg, sizeof(msg)) < 0) {
			bach_index_free(&have);
			return; /* the file's own damage is reported already */
		}
		if (have.n != want.n) {
			snprintf(msg, sizeof(msg),
				 "%s%s: %llu entries for %llu members", path,
				 BACH_INDEX_SUFFIX, (unsigned long long)have.n,
				 (unsigned long long)want.n);
			err = -ESTALE;
		}
		for (uint64_t i = 0; i <= want.n && !err; i++)
			if (have.coff[i] != want.coff[i] ||
			    have.uoff[i] != want.uoff[i]) {
				snprintf(
					msg, sizeof(msg),
					"%s%s: member %llu at byte offset %llu, record byte %llu; the file has it at %llu, %llu",
					path, BACH_INDEX_SUFFIX,
					(unsigned long long)i,
					(unsigned long long)have.coff[i],
					(unsigned long long)have.uoff[i],
					(unsigned long long)want.coff[i],
					(unsigned long long)want.uoff[i]);
				err = -ESTALE;
			}
		bach_index_free(&have);
		bach_index_free(&want);
		if (!err)
			return;
	}
	v->stale++;
	if (err != -ESTALE) /* not read: a FIFO of that name, say */
		printf("warning: %s (ignored: readers find the members from the file)\n",
		       msg);
	else
		printf("warning: %s (a stale index: ignored, readers find the members from the file; `bach index %s` rewrites it)\n",
		       msg, path);
}

/* What reading on past damaged gzip members found in one file. */
struct damage {
	uint64_t n;	  /* damaged stretches */
	uint64_t before;  /* records read before the first */
	uint64_t skipped; /* bytes passed over */
	uint64_t on_off;  /* byte offset reading went on from, last */
	uint64_t on_recs; /* records read before it */
};

/*
 * Where record idx of a file is: its index (with its byte offset when
 * bytes), or after damage (its index is not known then) its place after
 * the member reading went on from.
 */
static const char *rec_at(char *buf, size_t cap, uint64_t idx, bool bytes,
			  const struct damage *d)
{
	if (!d->n && !bytes)
		snprintf(buf, cap, "record %llu", (unsigned long long)idx);
	else if (!d->n)
		snprintf(buf, cap, "record %llu (byte offset %llu)",
			 (unsigned long long)idx,
			 (unsigned long long)idx * BACH_REC_SIZE);
	else
		snprintf(buf, cap, "record %llu after byte offset %llu",
			 (unsigned long long)(idx - d->on_recs),
			 (unsigned long long)d->on_off);
	return buf;
}

/*
 * A damaged gzip member or zstd frame: named (msg), and reading goes on
 * at the next member, frame or seek table (resync.h). False when it
 * cannot (the damage is not in a member or frame): the read's error
 * stands.
 */
static bool read_on(struct vstate *v, struct bach_reader *r, const char *path,
		    struct damage *d)
{
	uint64_t base = bach_reader_file_records(r), from, to;
	struct bach_file_info fi;
	const char *what;
	char msg[600];
	int rs;

	snprintf(msg, sizeof(msg), "%s", bach_reader_strerror(r));
	bach_reader_info(r, &fi);
	what = fi.kind == BACH_FILE_ZSTD ? "zstd frame" : "gzip member";
	rs = reader_resync(r, &from, &to);
	if (rs < 0)
		return false;
	printf("%s\n", msg);
	v->problems++;
	if (!d->n++)
		d->before = base;
	d->skipped += to - from;
	d->on_off = to;
	d->on_recs = base;
	if (rs)
		printf("%s: reading on at byte offset %llu, the %s%s (%llu bytes skipped)\n",
		       path, (unsigned long long)to, rs == 2 ? "" : "next ",
		       rs == 2 ? "seek table" : what,
		       (unsigned long long)(to - from));
	else
		printf("%s: no %s after it (%llu bytes to the end skipped)\n",
		       path, what, (unsigned long long)(to - from));
	return true;
}

/*
 * Read and check one file; *recs: the records it holds (read whole).
 * found: a segment of a capture directory (a regular file only).
 */
static void verify_file(struct vstate *v, const char *path, bool found,
			uint64_t *recs)
{
	struct bach_reader *r = bach_reader_new();
	struct bach_file_info fi;
	struct damage dmg = { 0 };
	uint64_t bad = 0, gaps = 0, lost = 0;
	char at[80], line[160];
	int err;
	ssize_t n;

	if (!r) {
		errmsg("out of memory");
		v->problems++;
		return;
	}
	v->files++;
	if (recs)
		*recs = UINT64_MAX; /* unknown until read whole */
	err = found ? bach_capture_file_add(r, path) : bach_reader_add(r, path);
	if (err) {
		printf("%s: %s\n", path, bach_reader_strerror(r));
		v->problems++;
		bach_reader_free(r);
		return;
	}
	for (;;) {
		const uint8_t *p;
		uint64_t base = bach_reader_file_records(r);

		n = bach_reader_read(r, &p);
		if (n == -BACH_EDATA && read_on(v, r, path, &dmg))
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++, p += BACH_REC_SIZE) {
			unsigned f = bach_rec_check(p);
			uint64_t idx;

			if (__builtin_expect(!f, 1))
				continue;
			idx = base + (uint64_t)i;
			if (bach_rec_is_gap(p)) {
				gaps++;
				lost += bach_get_be32(p);
				if (!v->quiet)
					printf("%s: %s: gap marker: %u record%s lost\n",
					       path,
					       rec_at(at, sizeof(at), idx,
						      false, &dmg),
					       bach_get_be32(p),
					       bach_s(bach_get_be32(p)));
				continue;
			}
			if (++bad <= MAX_LISTED)
				printf("%s: %s: %s (%08x %02x control 0x%02x)\n",
				       path,
				       rec_at(at, sizeof(at), idx, true, &dmg),
				       bach_fault_name(f), bach_get_be32(p),
				       p[4], p[5]);
		}
	}
	if (bad > MAX_LISTED)
		printf("%s: ... and %llu more bad records\n", path,
		       (unsigned long long)(bad - MAX_LISTED));
	v->problems += bad;
	v->gaps += gaps;
	v->lost += lost;
	v->records += bach_reader_file_records(r);
	if (recs && !dmg.n)
		*recs = bach_reader_file_records(r);
	bach_reader_info(r, &fi);
	fmt_records(line, sizeof(line), bach_reader_file_records(r), gaps,
		    lost);
	if (n >= 0 && !dmg.n && fi.kind == BACH_FILE_GZIP && fi.blocked &&
	    strcmp(path, "-"))
		check_index(v, path);
	if (n < 0) {
		printf("%s\n", bach_reader_strerror(r));
		v->problems++;
		if (recs)
			*recs = UINT64_MAX;
	}
	if (dmg.n) {
		/* what is left: the records read, and those after the damage */
		printf("%s: damaged: %s read, %llu of them after the damage (%llu byte%s skipped)\n",
		       path, line,
		       (unsigned long long)(bach_reader_file_records(r) -
					    dmg.before),
		       (unsigned long long)dmg.skipped, bach_s(dmg.skipped));
	} else if (n >= 0 && !bad && !v->quiet) {
		printf("%s: OK, %s", path, line);
		if (fi.kind == BACH_FILE_GZIP)
			printf(", %s gzip, %llu member%s",
			       fi.blocked ? "blocked" : "plain",
			       (unsigned long long)fi.members,
			       bach_s(fi.members));
		if (fi.kind == BACH_FILE_ZSTD)
			printf(", zstd, %llu frame%s and the seek table",
			       (unsigned long long)(fi.members - 1),
			       bach_s(fi.members - 1));
		printf("\n");
	}
	bach_reader_free(r);
}

/*
 * CRC-32 of a file's size bytes (as the manifest's crc32), read with
 * read(), never mapped: a file cut short while it is read ends early
 * (the bytes read are returned, fewer than size) where a mapping would
 * die of SIGBUS. -errno on error.
 */
static int64_t file_crc(int fd, uint64_t size, uint32_t *crc)
{
	static uint8_t buf[1u << 18];
	uint64_t got = 0;

	*crc = 0;
	while (got < size) {
		ssize_t n = read(fd, buf,
				 size - got < sizeof(buf) ? (size_t)(size - got)
							  : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		*crc = libdeflate_crc32(*crc, buf, (size_t)n);
		got += (uint64_t)n;
	}
	return (int64_t)got;
}

__attribute__((format(printf, 3, 4))) static void
problem(struct vstate *v, const char *dir, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", dir);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	v->problems++;
}

/*
 * The entries of trace path's sidecar, recs of them, through the checks
 * every reader makes (docs/formats.md 3.2: whole members, one entry a
 * record, clocks that never go back, from the segment before too, bt
 * having read it): false after printing the problem, else its entries'
 * summary (their first and last clocks).
 */
static bool read_times(struct vstate *v, struct bach_times *bt,
		       const char *path, uint64_t recs,
		       struct bach_time_summary *sum)
{
	const uint64_t *e;
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	for (uint64_t at = 0; at < recs && !err; at += 65536) {
		size_t n = recs - at < 65536 ? (size_t)(recs - at) : 65536;

		err = bach_times_get(bt, path, at, n, &e);
		if (!err)
			bach_time_summary_add(sum, e, n);
	}
	if (!err)
		err = bach_times_end(bt);
	if (err) {
		printf("%s\n", bach_times_strerror(bt));
		v->problems++;
	}
	return !err;
}

/*
 * The timing sidecar beside trace path (docs/formats.md 3.2) of recs
 * records (UINT64_MAX: unknown, the trace is damaged), and with ms,
 * against its segment event (docs/bachd.md section 5): there when the
 * event names one and not otherwise, its size, CRC-32 and first and last
 * clocks the event's.
 */
static void check_times(struct vstate *v, struct bach_times *bt,
			const char *dir, int dfd, const char *path,
			const struct bach_manifest_seg *ms, uint64_t recs)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char tname[4200], shown[8400];
	unsigned long long line = ms ? (unsigned long long)ms->line : 0;
	struct bach_time_summary sum;
	struct stat st;
	uint32_t crc;
	int fd;

	/* a capture's segment by its name in dfd, a trace file by its path */
	if (bach_time_name(tname, sizeof(tname),
			   dfd == AT_FDCWD ? path : name) ||
	    fstatat(dfd, tname, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (ms && ms->timing[0])
			problem(v, dir, "%s is missing (%s line %llu names it)",
				ms->timing, BACH_MANIFEST_NAME, line);
		return;
	}
	if (ms && strcmp(ms->timing, tname)) {
		problem(v, dir,
			"%s: %s line %llu names no timing sidecar for %s: not its sidecar",
			tname, BACH_MANIFEST_NAME, line, name);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		problem(v, dir, "%s: %s, not a timing sidecar", tname,
			bach_file_type(st.st_mode));
		return;
	}
	if (ms && ms->has_timing_crc) {
		char why[4400];
		int64_t got = 0;

		/* a FIFO put there since the look above would hang the read */
		fd = bach_open_found(dfd, tname, tname, true, &st, why,
				     sizeof(why));
		if (fd >= 0 && (uint64_t)st.st_size == ms->timing_bytes)
			got = file_crc(fd, (uint64_t)st.st_size, &crc);
		if (fd < 0)
			problem(v, dir, "%s", why);
		else if ((uint64_t)st.st_size != ms->timing_bytes)
			problem(v, dir,
				"%s has %llu bytes, %s line %llu says %llu",
				tname, (unsigned long long)st.st_size,
				BACH_MANIFEST_NAME, line,
				(unsigned long long)ms->timing_bytes);
		else if (got < 0)
			problem(v, dir, "%s: %s", tname, strerror((int)-got));
		else if ((uint64_t)got < (uint64_t)st.st_size)
			problem(v, dir,
				"%s: truncated while being read: %llu bytes when opened; reading stopped at byte offset %llu",
				tname, (unsigned long long)st.st_size,
				(unsigned long long)got);
		else if (crc != ms->timing_crc)
			problem(v, dir,
				"%s: CRC-32 %08x, %s line %llu says %08x: not the timing sidecar written",
				tname, crc, BACH_MANIFEST_NAME, line,
				ms->timing_crc);
		if (fd >= 0)
			close(fd);
	}
	if (recs == UINT64_MAX || !read_times(v, bt, path, recs, &sum))
		return;
	/* a clock past 2^63 - 1 leaves the event without its clocks */
	if (ms && ms->has_timing_crc &&
	    (bach_time_summary_json(&sum) != ms->has_clocks ||
	     (ms->has_clocks && (sum.first_clock != ms->first_clock ||
				 sum.last_clock != ms->last_clock)))) {
		char want[64] = "none", got[64] = "none";

		if (ms->has_clocks)
			snprintf(want, sizeof(want), "%llu to %llu",
				 (unsigned long long)ms->first_clock,
				 (unsigned long long)ms->last_clock);
		if (sum.has_clocks)
			snprintf(got, sizeof(got), "%llu to %llu",
				 (unsigned long long)sum.first_clock,
				 (unsigned long long)sum.last_clock);
		problem(v, dir, "%s: clocks %s, %s line %llu says %s", tname,
			got, BACH_MANIFEST_NAME, line, want);
	} else if (!v->quiet) {
		snprintf(shown, sizeof(shown), "%s%s%s",
			 dfd == AT_FDCWD ? "" : dir, dfd == AT_FDCWD ? "" : "/",
			 tname);
		printf("%s: OK, %llu entr%s", shown, (unsigned long long)recs,
		       bach_plural(recs, "y", "ies"));
		if (sum.has_clocks)
			printf(", clocks %llu to %llu",
			       (unsigned long long)sum.first_clock,
			       (unsigned long long)sum.last_clock);
		printf("\n");
	}
}

/* One closed segment against its manifest line. */
static void check_segment(struct vstate *v, const char *dir, int dfd,
			  const char *path, const struct bach_manifest *man,
			  bool *seen, struct bach_times *bt)
{
	const char *name = strrchr(path, '/') + 1;
	const struct bach_manifest_seg *ms = bach_manifest_find_seg(man, name);
	uint64_t recs = UINT64_MAX;
	char why[4400];
	struct stat st;
	uint32_t crc;
	int64_t got;
	int fd;

	/* a FIFO there would hang the reading, a link lead out of it */
	fd = bach_open_found(dfd, name, path, true, &st, why, sizeof(why));
	if (fd < 0) {
		v->files++;
		printf("%s\n", why);
		v->problems++;
	} else {
		verify_file(v, path, true, &recs);
	}
	if (!ms) {
		problem(v, dir,
			"%s is not named in %s: not a segment of this capture",
			name, BACH_MANIFEST_NAME);
		if (fd >= 0)
			close(fd);
		return;
	}
	seen[ms - man->segs] = true;
	if (ms->removed) {
		problem(v, dir,
			"%s: %s line %llu says it was removed, but it is there",
			name, BACH_MANIFEST_NAME, (unsigned long long)ms->line);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd < 0)
		return; /* named above */
	if (recs != UINT64_MAX && recs != ms->records)
		problem(v, dir, "%s holds %llu records, %s line %llu says %llu",
			name, (unsigned long long)recs, BACH_MANIFEST_NAME,
			(unsigned long long)ms->line,
			(unsigned long long)ms->records);
	if ((uint64_t)st.st_size != ms->bytes) {
		problem(v, dir, "%s has %llu bytes, %s line %llu says %llu",
			name, (unsigned long long)st.st_size,
			BACH_MANIFEST_NAME, (unsigned long long)ms->line,
			(unsigned long long)ms->bytes);
	} else if ((got = file_crc(fd, (uint64_t)st.st_size, &crc)) < 0) {
		problem(v, dir, "%s: %s", name, strerror((int)-got));
	} else if ((uint64_t)got < (uint64_t)st.st_size) {
		problem(v, dir,
			"%s: truncated while being read: %llu bytes when opened; reading stopped at byte offset %llu",
			name, (unsigned long long)st.st_size,
			(unsigned long long)got);
	} else if (crc != ms->crc) {
		problem(v, dir,
			"%s: CRC-32 %08x, %s line %llu says %08x: not the segment written",
			name, crc, BACH_MANIFEST_NAME,
			(unsigned long long)ms->line, ms->crc);
	}
	close(fd);
	check_times(v, bt, dir, dfd, path, ms, recs);
}

/*
 * An unfinished segment (*.part), read only: what a crash left, or the
 * segment being written. Its unfinished last block is no damage.
 */
static void check_part(struct vstate *v, const char *path)
{
	struct bach_reader *r = bach_reader_new();
	const uint8_t *p;
	ssize_t n;

	/* of the kind its name says; a regular file only */
	if (!r || bach_capture_file_add(r, path)) {
		printf("%s: out of memory\n", path);
		v->problems++;
		bach_reader_free(r);
		return;
	}
	while ((n = bach_reader_read(r, &p)) > 0)
		for (ssize_t i = 0; i < n; i++, p += BACH_REC_SIZE)
			if (__builtin_expect(bach_rec_is_gap(p), 0)) {
				v->gaps++;
				v->lost += bach_get_be32(p);
			}
	if (n < 0 && n != -BACH_EDATA) {
		/* not opened: a FIFO, a link, ... (damage is not one) */
		printf("%s\n", bach_reader_strerror(r));
		v->problems++;
		bach_reader_free(r);
		return;
	}
	printf("%s: unfinished segment: %llu whole records%s%s\n", path,
	       (unsigned long long)bach_reader_file_records(r),
	       n < 0 ? " before its unfinished end: " : "",
	       n < 0 ? bach_reader_strerror(r) : "");
	v->records += bach_reader_file_records(r);
	bach_reader_free(r);
}

/*
 * Events this bach does not know: read past, as every reader does, so
 * that a newer bach's captures read (docs/formats.md section 4); named in
 * a warning, since a hand-edited line is one too. Not damage.
 */
static void unknown_events(struct vstate *v, const char *dir,
			   const struct bach_manifest *m)
{
	char esc[128];

	for (size_t i = 0; i < m->nevents; i++) {
		const struct bach_manifest_event *e = &m->events[i];

		if (e->kind != BACH_EV_OTHER)
			continue;
		v->unknown++;
		printf("warning: %s/%s line %llu: unknown event \"%s%s\" (read past, not checked: from a newer bach, or written by hand)\n",
		       dir, BACH_MANIFEST_NAME, (unsigned long long)e->line,
		       bach_escape_ctl(esc, sizeof(esc), e->name),
		       e->name_cut ? "..." : "");
	}
}

/*
 * A capture directory: every segment read, and checked against the
 * manifest (name, records, size, CRC-32), every segment the manifest
 * names present, and the manifest's own totals adding up.
 */
static void verify_capture(struct vstate *v, const char *dir)
{
	struct bach_manifest man;
	char why[512], **segs = NULL;
	uint64_t written = 0, nseg = 0;
	struct bach_times *bt = NULL;
	bool *seen = NULL;
	size_t parts = 0;
	ssize_t n;
	int dfd, err;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		problem(v, dir, "%s", strerror(errno));
		return;
	}
	/* bachd's retention removes nothing from a capture being read */
	flock(dfd, LOCK_SH);
	err = bach_manifest_load(dfd, dir, &man, why, sizeof(why));
	n = bach_capture_segments(dir, &segs, &parts);
	if (err == -ENOENT) {
		problem(v, dir,
			n > 0 || parts
				? "no %s: the segments cannot be checked against it"
				: "no segments and no %s: not a capture directory",
			BACH_MANIFEST_NAME);
	} else if (err) {
		printf("%s\n", why);
		v->problems++;
	} else {
		unknown_events(v, dir, &man);
	}
	if (n < 0) {
		problem(v, dir, "cannot list capture directory: %s",
			strerror((int)-n));
		goto out;
	}
	seen = calloc(man.nsegs + 1, sizeof(*seen));
	bt = bach_times_new();
	if (!seen || !bt) {
		problem(v, dir, "out of memory");
		goto out;
	}
	if (n == 0 && !parts && !man.nsegs && !err)
		printf("%s: no segments: the capture holds no records\n", dir);
	for (ssize_t i = 0; i < n; i++) {
		if (err)
			verify_file(v, segs[i], true, NULL);
		else
			check_segment(v, dir, dfd, segs[i], &man, seen, bt);
	}
	for (size_t i = 0; !err && i < man.nsegs; i++) {
		const struct bach_manifest_seg *ms = &man.segs[i];
		char esc[300]; /* the manifest's name, as text */

		bach_escape_ctl(esc, sizeof(esc), ms->name);
		if (ms != bach_manifest_find_seg(&man, ms->name))
			problem(v, dir, "%s line %llu names %s a second time",
				BACH_MANIFEST_NAME,
				(unsigned long long)ms->line, esc);
		else if (!ms->removed && !seen[i] && !ms->retained)
			problem(v, dir, "%s is missing (%s line %llu names it)",
				esc, BACH_MANIFEST_NAME,
				(unsigned long long)ms->line);
		if (!ms->removed) {
			written += ms->records - ms->gap_markers;
			nseg++;
		}
	}
	if (parts) {
		DIR *d = fdopendir(dup(dfd));
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char p[4400];
			size_t len = strlen(de->d_name);

			if (strncmp(de->d_name, "seg-", 4) || len < 5 ||
			    strcmp(de->d_name + len - 5, ".part"))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			if (len > 13 && !strcmp(de->d_name + len - 13,
						BACH_TIME_SUFFIX ".part"))
				printf("%s: unfinished timing sidecar (being written, or nothing whole in it after a crash: its segment reads untimed)\n",
				       p);
			else
				check_part(v, p);
		}
		if (d)
			closedir(d);
	}
	if (err)
		goto out;
	if (man.retained)
		printf("%s: %llu segment%s (%llu records) removed by retention, as the manifest says: not damage\n",
		       dir, (unsigned long long)man.retained,
		       bach_s(man.retained),
		       (unsigned long long)man.retained_records);
	if (!man.ended) {
		printf("%s: no ended event: the capture is running, or a crash cut it off (the next bachd start or bach recover closes it)\n",
		       dir);
	} else if (man.has_totals) {
		if (man.lost != man.gap_lost)
			problem(v, dir,
				"the gap events sum to %llu lost, the ended event says %llu",
				(unsigned long long)man.gap_lost,
				(unsigned long long)man.lost);
		if (man.written != written)
			problem(v, dir,
				"the segment events hold %llu records, the ended event says %llu written",
				(unsigned long long)written,
				(unsigned long long)man.written);
		if (man.segments != nseg)
			problem(v, dir,
				"the manifest names %llu segment%s, the ended event says %llu",
				(unsigned long long)nseg, bach_s(nseg),
				(unsigned long long)man.segments);
	}
out:
	for (ssize_t i = 0; i < n; i++)
		free(segs[i]);
	free(segs);
	free(seen);
	bach_times_free(bt);
	bach_manifest_free(&man);
	close(dfd);
}

static void verify_path(struct vstate *v, const char *path)
{
	struct bach_times *bt;
	struct stat st;
	uint64_t recs;

	if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		verify_capture(v, path);
		return;
	}
	verify_file(v, path, false, &recs);
	/* a trace file's own sidecar, if it has one */
	if (strcmp(path, "-") && (bt = bach_times_new())) {
		check_times(v, bt, path, AT_FDCWD, path, NULL, recs);
		bach_times_free(bt);
	}
}

/* A missing path or a directory that is no capture: usage, not damage. */
static int check_path(const char *path)
{
	struct stat st;
	char **segs, msg[PATH_MAX + 128];
	ssize_t n;

	if (!strcmp(path, "-"))
		return 0;
	if (stat(path, &st) < 0) {
		errmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	n = bach_capture_open(path, &segs, NULL, msg, sizeof(msg));
	for (ssize_t i = 0; i < n; i++)
		free(segs[i]);
	free(segs);
	if (n < 0 && n != -BACH_EDATA) {
		errmsg("%s", msg);
		return -1;
	}
	return 0;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct vstate v = { 0 };
	char recs[160];
	int c;

	while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
		if (c != 'q')
			return usage_error("bad option");
		v.quiet = true;
	}
	if (optind == argc)
		return usage_error("no TRACE given");
	if (stdin_once(argv + optind, argc - optind))
		return EXIT_USAGE;
	for (int i = optind; i < argc; i++)
		if (check_path(argv[i]))
			return EXIT_USAGE;
	for (int i = optind; i < argc; i++)
		verify_path(&v, argv[i]);
	fmt_records(recs, sizeof(recs), v.records, v.gaps, v.lost);
	printf("verify: %llu file%s, %s, %llu problem%s",
	       (unsigned long long)v.files, bach_s(v.files), recs,
	       (unsigned long long)v.problems, bach_s(v.problems));
	if (v.stale)
		printf(", %llu stale index%s (warning%s, not damage)",
		       (unsigned long long)v.stale,
		       bach_plural(v.stale, "", "es"), bach_s(v.stale));
	if (v.unknown)
		printf(", %llu unknown event%s (warning%s, not damage)",
		       (unsigned long long)v.unknown, bach_s(v.unknown),
		       bach_s(v.unknown));
	printf("\n");
	return v.problems ? EXIT_DATA : EXIT_OK;
}

const struct bach_cmd cmd_verify = {
	.name = "verify",
	.run = run,
	.summary = "check that every record is valid and every file whole",
	.help = "usage: bach verify [-q] TRACE...\n"
		"\n"
		"Reads every file to the end and lists each problem with its file and\n"
		"byte offset or record index: INVALID records (and records with\n"
		"address bits 2..0 or control bits 3..0 set), a truncated record, a\n"
		"bad or truncated gzip member, a bad CRC, a blocked gzip file without\n"
		"its EOF block. Gap markers written by bachd in drop mode are listed\n"
		"but are not damage. Records are counted gap markers included and\n"
		"named apart: N records (D data, G gap markers standing for L lost).\n"
		"\n"
		"A damaged gzip member does not end the reading of a file (but of\n"
		"standard input): verify names it, reads on at the next member that\n"
		"inflates whole (from the file's .gzi index, or the next gzip member\n"
		"header after it), and says how many records it still read after the\n"
		"damage and how many bytes it passed over; records after the damage\n"
		"are named by their place after the byte offset reading went on from.\n"
		"A damaged zstd frame of a .byu.zst is read past the same way: at the\n"
		"next frame that decompresses (from the file's seek table, or the next\n"
		"frame magic after it), or at the seek table.\n"
		"\n"
		"A capture directory is checked segment by segment, and against its\n"
		"manifest.jsonl: every segment must be named there with the records,\n"
		"size and CRC-32 it has, every segment named there (and not removed)\n"
		"must be present (unless a retention event says it was removed: not\n"
		"damage), and the gap events must add up to the ended event's\n"
		"lost, the segments to its written. A segment's timing sidecar\n"
		"(seg-NNNNNN.time.gz) must be there when its event names one, and\n"
		"not otherwise, with the size, CRC-32 and first and last clocks the\n"
		"event says, one entry a record, and clocks that never go back (a\n"
		"trace file's own sidecar is read too). An unfinished segment\n"
		"(*.part: being written, or left by a crash) is read to its last whole\n"
		"block and is not damage. A segment, *.part or manifest that is not a\n"
		"regular file (a FIFO, a directory, a symbolic link) is a problem,\n"
		"named, not read.\n"
		"\n"
		"An event the manifest holds that this bach does not know is named in a\n"
		"warning (a newer bach's, or a line written by hand): read past, as\n"
		"every reader does, not damage.\n"
		"\n"
		"A blocked file's .gzi index that does not fit it (older than the file,\n"
		"another file's, entries that do not name its members) is named in a\n"
		"warning: readers ignore it, bach index rewrites it; it is not damage.\n"
		"\n"
		"  -q, --quiet   list problems only\n"
		"\n"
		"Exit status: 0 all good (an empty trace too), 1 damage found, 2 usage\n"
		"error, a missing file or a directory that is not a capture.\n"
		"\n"
		"example: bach verify captures/20261121T223000Z\n",
};
