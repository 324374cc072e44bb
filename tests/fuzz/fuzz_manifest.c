// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bach_manifest_load(), the reader of a capture
 * directory's manifest.jsonl (docs/formats.md section 4, the events in
 * docs/bachd.md section 5), which bach verify, ls, report, plot, --between
 * and bachd's recovery all use.
 * The input is the whole manifest.jsonl of a scratch directory.
 *
 * Checks: the result is 0 or -BACH_EDATA; on success every whole line
 * (up to a '\n') is one event, in order, with its line number, lines and
 * whole_bytes count exactly the whole lines, partial_tail says whether
 * bytes follow the last one, each segment has a name without '/' and a
 * CRC unless removed (and a timing sidecar's name without '/', its
 * clocks only with it), a marker mark has no text, at most
 * BACH_MANIFEST_MAX_LABELS labels, and every gap counted is in gap_list;
 * on an error the message is "DIR/manifest.jsonl: line N: reason" for a
 * whole line N, and nothing is left allocated: the target does not call
 * bach_manifest_free() then, as bachd's recovery does not, so the leak
 * checker finds what a failed load keeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/io/manifest.h"

#include "fuzz_check.h"

static char path[64];

/* The scratch directory goes when the run ends (libFuzzer exits). */
static void remove_dir(void)
{
	char file[128];

	snprintf(file, sizeof(file), "%s/%s", path, BACH_MANIFEST_NAME);
	unlink(file);
	rmdir(path);
}

static int dirfd_once(char *dir, size_t len)
{
	static int fd = -1;

	if (fd < 0) {
		const char *tmp = getenv("TMPDIR");

		snprintf(path, sizeof(path), "%s/bach-fuzz-manifest-XXXXXX",
			 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
		CHECK(mkdtemp(path), "mkdtemp %s: %s", path, strerror(errno));
		atexit(remove_dir);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	}
	snprintf(dir, len, "%s", path);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bach_manifest m;
	char dir[64], err[512], prefix[160];
	int dfd = dirfd_once(dir, sizeof(dir)), fd, rc;
	uint64_t nl = 0, whole = 0;
	size_t off = 0;

	fd = openat(dfd, BACH_MANIFEST_NAME,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0, "%s/%s: %s", dir, BACH_MANIFEST_NAME, strerror(errno));
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		CHECK(n > 0, "write: %s", strerror(errno));
		off += (size_t)n;
	}
	close(fd);
	for (size_t i = 0; i < size; i++)
		if (data[i] == '\n') {
			nl++;
			whole = i + 1;
		}

	rc = bach_manifest_load(dfd, dir, &m, err, sizeof(err));
	if (rc) {
		unsigned long long line = 0;
		int n = snprintf(prefix, sizeof(prefix), "%s/%s: line ", dir,
				 BACH_MANIFEST_NAME);

		CHECK(rc == -BACH_EDATA, "result %d (%s)", rc, err);
		CHECK(!strncmp(err, prefix, (size_t)n) &&
			      sscanf(err + n, "%llu: ", &line) == 1 &&
			      strstr(err + n, ": ") && line >= 1 && line <= nl,
		      "message '%s' (%llu whole lines)", err,
		      (unsigned long long)nl);
		CHECK(!m.segs && !m.nsegs && !m.gap_list && !m.gaps &&
			      !m.events && !m.nevents && !m.marks && !m.nmarks,
		      "a failed load left its events");
		return 0;
	}
	CHECK(m.lines == nl && m.whole_bytes == whole,
	      "%llu lines, %llu bytes; the input has %llu, %llu",
	      (unsigned long long)m.lines, (unsigned long long)m.whole_bytes,
	      (unsigned long long)nl, (unsigned long long)whole);
	CHECK(m.partial_tail == (whole < size), "partial_tail %d",
	      m.partial_tail);
	CHECK(m.nevents == nl, "%zu events in %llu lines", m.nevents,
	      (unsigned long long)nl);
	for (size_t i = 0; i < m.nevents; i++) {
		const struct bach_manifest_event *e = &m.events[i];

		CHECK(e->line == i + 1, "event %zu on line %llu", i,
		      (unsigned long long)e->line);
		CHECK(e->kind <= BACH_EV_OTHER &&
			      memchr(e->name, 0, sizeof(e->name)) &&
			      memchr(e->detail, 0, sizeof(e->detail)),
		      "event %zu", i);
		/* known exactly when the table names it */
		CHECK(e->name_cut || e->kind == bach_manifest_ev_kind(e->name),
		      "event %zu \"%s\" is of kind %d", i, e->name,
		      (int)e->kind);
	}
	for (size_t i = 0; i < m.nsegs; i++) {
		const struct bach_manifest_seg *s = &m.segs[i];

		CHECK(s->name[0] && !strchr(s->name, '/') &&
			      (s->has_crc || s->removed) && s->line >= 1 &&
			      s->line <= nl,
		      "segment %zu '%s'", i, s->name);
		CHECK(bach_manifest_find_seg(&m, s->name), "'%s' not found",
		      s->name);
		CHECK(memchr(s->timing, 0, sizeof(s->timing)) &&
			      !strchr(s->timing, '/') &&
			      (s->timing[0] ||
			       (!s->has_clocks && !s->has_timing_crc)),
		      "segment %zu '%s': timing '%s'", i, s->name, s->timing);
	}
	for (size_t i = 0; i < m.nmarks; i++)
		CHECK(!m.marks[i].marker || !m.marks[i].text, "mark %zu", i);
	CHECK(m.nlabels <= BACH_MANIFEST_MAX_LABELS, "%zu labels", m.nlabels);
	for (uint64_t i = 0; i < m.gaps; i++)
		CHECK(m.gap_list[i].cause[sizeof(m.gap_list[i].cause) - 1] == 0,
		      "gap %llu", (unsigned long long)i);
	CHECK(m.retained <= m.nsegs, "%llu retained of %zu",
	      (unsigned long long)m.retained, m.nsegs);
	bach_manifest_time(m.start_time);
	bach_manifest_time(m.end_time);
	bach_manifest_free(&m);
	return 0;
}
