// SPDX-License-Identifier: MIT
/*
 * The disk guard, on the writer thread (docs/bachd.md section 5): below
 * min_free (looked at per 2 MiB of records or half a second, never per
 * record) the segment is closed cleanly, then the capture waits for space
 * (what is lost meanwhile is one exact disk gap) or stops. After every
 * close, and at least every 10 s, retention runs (retention.c), and a
 * closed segment gets its post_rotate command (post_rotate.c).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "bach/trace.h"
#include "capture_priv.h"
#define LOG_PREFIX NULL
#include "log.h"

/* Look at the free space after this many record bytes, or this long. */
#define DISK_CHECK_BYTES (2u << 20)
#define DISK_CHECK_NS	 500000000ull
/* retention runs after each close, and at least this often */
#define RETAIN_NS 10000000000ull

/* Free bytes on the output's filesystem and min_free's floor; false on error.
 */
static bool disk_space(struct capture *c, uint64_t *avail, uint64_t *floor)
{
	struct statvfs sv;

	if (fstatvfs(c->dirfd, &sv) < 0)
		return false;
	*avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	*floor = c->cfg.min_free_pct ? (uint64_t)sv.f_blocks * sv.f_frsize /
					       100 * c->cfg.min_free_pct
				     : c->cfg.min_free_bytes;
	return true;
}

int diskguard_close_segment(struct capture *c)
{
	uint64_t before = atomic_load(&c->sh.segments);
	char path[4400];
	int err = segment_close(c);

	if (err || c->wr.write_err)
		return err;
	/* a segment that got no record was removed, not closed */
	if (c->cfg.post_rotate[0] && atomic_load(&c->sh.segments) > before) {
		snprintf(path, sizeof(path), "%s/%s", c->capdir, c->wr.segname);
		post_rotate_run(c->cfg.post_rotate, path);
	}
	retention_run(c);
	c->wr.retain_ns = bach_now_ns();
	return 0;
}

void diskguard_retain(struct capture *c, uint64_t now)
{
	if (now - c->wr.retain_ns >= RETAIN_NS) {
		retention_run(c);
		c->wr.retain_ns = now;
	}
}

/*
 * Below min_free: close the segment cleanly, then wait for space (every
 * record meanwhile is lost, cause disk, one gap at the end of the wait) or
 * stop the capture: true.
 */
static bool disk_low(struct capture *c, uint64_t avail, uint64_t floor)
{
	log_warn(
		"%s: %llu bytes free, min_free is %llu: closing %s; %s",
		c->capdir, (unsigned long long)avail, (unsigned long long)floor,
		c->wr.segname,
		c->cfg.on_full == CAPTURE_ON_FULL_STOP
			? "stopping the capture (on_full = stop)"
			: "records are lost until space returns (on_full = wait)");
	if (diskguard_close_segment(c))
		return false; /* write_err is set: the writer stops */
	c->wr.disk_low = true;
	if (c->cfg.on_full == CAPTURE_ON_FULL_STOP)
		return true;
	atomic_store(&c->sh.disk_waiting, true);
	return false;
}

/* The loss of a wait (or of a stop), as one gap where the trace goes on. */
static void disk_gap(struct capture *c)
{
	struct capture_wr *w = &c->wr;

	if (!w->disk_lost)
		return;
	manifest_gap(&w->man, w->segname, w->trace_pos, w->disk_lost,
		     BACH_GAP_DISK);
	w->disk_gapped += w->disk_lost;
	w->disk_lost = 0;
}

void diskguard_retry(struct capture *c, uint64_t now)
{
	struct capture_wr *w = &c->wr;
	uint64_t avail, floor, lost = w->disk_lost;
	int err;

	if (now - w->disk_check_ns < 1000000000ull)
		return;
	w->disk_check_ns = now;
	retention_run(c);
	w->retain_ns = now;
	if (!disk_space(c, &avail, &floor) ||
	    avail < floor + floor / 10 + (4u << 20))
		return;
	err = segment_open(c);
	if (err) {
		w->write_err = w->write_err ? w->write_err : err;
		return;
	}
	disk_gap(c);
	w->disk_low = false;
	w->disk_since = 0;
	atomic_store(&c->sh.disk_waiting, false);
	log_notice(
		"%s: %llu bytes free again: %llu records were lost meanwhile; capturing into %s",
		c->capdir, (unsigned long long)avail, (unsigned long long)lost,
		w->segname);
}

bool diskguard_check(struct capture *c, uint64_t now)
{
	struct capture_wr *w = &c->wr;
	uint64_t avail, floor;

	if (!c->cfg.min_free_bytes && !c->cfg.min_free_pct)
		return false;
	if (w->disk_since < DISK_CHECK_BYTES &&
	    now - w->disk_check_ns < DISK_CHECK_NS)
		return false;
	w->disk_since = 0;
	w->disk_check_ns = now;
	return disk_space(c, &avail, &floor) && avail < floor &&
	       disk_low(c, avail, floor);
}

void diskguard_end(struct capture *c)
{
	struct capture_wr *w = &c->wr;
	uint64_t lost;

	/* what min_free took (a wait that never ended, or on_full = stop) */
	disk_gap(c);
	/* the manifest accounts for every record the disk took */
	lost = atomic_load(&c->sh.lost_by[BACH_GAP_DISK]);
	if (lost > w->disk_gapped)
		manifest_gap(&w->man, w->segname, w->trace_pos,
			     lost - w->disk_gapped, BACH_GAP_DISK);
}
