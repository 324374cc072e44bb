/* SPDX-License-Identifier: MIT */
/*
 * Timing sidecars (docs/formats.md section 3.2): beside a trace
 * TRACE.byu.gz (or TRACE.byu), TRACE.time.gz holds one entry per record,
 * gap markers included, record i <-> entry i: the record's bus clock,
 * BACH_TIME_NONE where no time is known (version 2: each member holds
 * the differences from entry to entry, as runs of equal ones (encoding
 * 2, what the writer makes) or one varint an entry (encoding 1, still
 * read); version 1, still read: u64s little-endian). Blocked gzip
 * as the traces are; every member but the last holds exactly
 * BACH_TIME_MEMBER_ENTRIES entries, so entry i is found by walking member
 * headers alone; each member's extra field carries, beside BC, a "BT"
 * subfield: the clock rate in Hz (u64 little-endian, 0 unknown).
 *
 * Internal to the tools and the capture engine (not exported by
 * libbach.so).
 */
#ifndef BACH_TIMING_H
#define BACH_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bach/trace.h" /* BACH_TIME_NONE, bach_times_present() */

#define BACH_TIME_ENTRY		 8
#define BACH_TIME_MEMBER_ENTRIES 8160 /* 65280 bytes, as a record member */
#define BACH_TIME_SUFFIX	 ".time.gz"
/*
 * How members are compressed (a pool given to bach_time_writer_pool()
 * is made with these): version 2's runs are a few bytes a member where
 * the clocks are regular, and libdeflate's fastest level shrinks the
 * rest well.
 */
#define BACH_TIME_BACKEND BACH_DEFLATE_LIBDEFLATE
#define BACH_TIME_LEVEL	  1

/*
 * The sidecar's name for a trace file: ".byu.gz", ".byu", ".gz" (in that
 * order) replaced by ".time.gz", else ".time.gz" appended. Returns
 * -ENAMETOOLONG when it does not fit in cap.
 */
int bach_time_name(char *dst, size_t cap, const char *trace);

/* ---- writing --------------------------------------------------------- */

struct bach_time_writer;

/*
 * Create NAME.part in dirfd (AT_FDCWD for a path); bach_time_writer_close()
 * finishes it (EOF block, fsync when sync) and renames it to NAME.
 */
int bach_time_writer_open(struct bach_time_writer **wp, int dirfd,
			  const char *name, uint64_t clock_hz);
struct bach_zpool;
/*
 * Compress the members in pool's threads (lib/io/zpool.h; before the first
 * entry, with nothing pending in it): off the caller's thread, in order.
 * The pool is the caller's and serves one writer at a time, until that
 * one is closed or freed. -ENOMEM, -EINVAL.
 */
int bach_time_writer_pool(struct bach_time_writer *w, struct bach_zpool *pool);
/* n entries; whole members are compressed and written as they fill. */
int bach_time_writer_put(struct bach_time_writer *w, const uint64_t *t,
			 size_t n);
/*
 * n entries as steps (the capture's ring keeps them so, core/ring.h):
 * entry i is the entry before it plus step[i] (mod 2^64; base before
 * entry 0), or, where step[i] is BACH_TIME_ESCAPE, the next value of esc.
 * A step (not an escape) never goes from BACH_TIME_NONE to a clock or
 * from a clock to BACH_TIME_NONE: the summary (below) looks at escapes
 * and the last entry only. Runs of equal steps cost one compare a step.
 */
#define BACH_TIME_ESCAPE 0xffff
int bach_time_writer_steps(struct bach_time_writer *w, uint64_t base,
			   const uint16_t *step, const uint64_t *esc, size_t n);
/* n entries of value v (BACH_TIME_NONE for records without a time). */
int bach_time_writer_fill(struct bach_time_writer *w, uint64_t v, uint64_t n);
uint64_t bach_time_writer_entries(const struct bach_time_writer *w);
/* The clock rate for the members written from now on. */
void bach_time_writer_clock(struct bach_time_writer *w, uint64_t clock_hz);
int bach_time_writer_close(struct bach_time_writer *w, bool sync);
/* Free; one not closed successfully removes its NAME.part. */
void bach_time_writer_free(struct bach_time_writer *w);

/*
 * What a finished sidecar holds, for a capture's segment event (docs/
 * bachd.md section 5): its size and the CRC-32 of the whole file, its
 * entries, the rate of its first member, and its first and last entries
 * that are clocks (not BACH_TIME_NONE; has_clocks false when none is).
 */
struct bach_time_summary {
	uint64_t bytes, entries, clock_hz;
	uint64_t filled; /* bach_time_recover(): entries it added, NONE */
	uint32_t crc;
	bool has_clocks;
	uint64_t first_clock, last_clock;
};
/*
 * Whether s's first and last clocks are in its segment event: JSON readers
 * take integers up to 2^63 - 1 (docs/bachd.md section 5), so a sidecar
 * with a clock past that has none there, as one without clocks.
 */
static inline bool bach_time_summary_json(const struct bach_time_summary *s)
{
	return s->has_clocks && s->first_clock <= INT64_MAX &&
	       s->last_clock <= INT64_MAX;
}
/* Of a writer closed successfully. */
void bach_time_writer_summary(const struct bach_time_writer *w,
			      struct bach_time_summary *s);
/* n more entries e into s: its entries, its first and last clocks. */
void bach_time_summary_add(struct bach_time_summary *s, const uint64_t *e,
			   size_t n);

/*
 * Recovery (core/recover.c) of NAME.part in dirfd, the sidecar of a
 * segment a crash cut off, for the records whole records that segment
 * kept: its whole members are kept up to records entries (the member the
 * records end in written again, cut to them), entries it lacks are
 * BACH_TIME_NONE, then the EOF block; synced and renamed to NAME (the
 * directory is the caller's to sync). Returns 1 with *s, 0 when it holds
 * no whole member (it is left alone: its segment reads untimed), -errno.
 * A regular file only, never through a symbolic link.
 */
int bach_time_recover(int dirfd, const char *name, uint64_t records,
		      struct bach_time_summary *s);
/*
 * A finished sidecar NAME in dirfd, read whole: 0 with *s when every
 * member is whole, the last one followed by the EOF block; -EBADMSG when
 * not, -errno.
 */
int bach_time_measure(int dirfd, const char *name, struct bach_time_summary *s);

/* ---- reading --------------------------------------------------------- */

/*
 * The timing of a trace read through a bach_reader: for each block the
 * reader hands out, the entries of its records from the sidecar beside
 * the block's file. Errors (-ENOENT: a file has no sidecar; -EBADMSG: a
 * damaged or misaligned one, or clocks that go backwards) leave a message
 * naming the sidecar and the byte offset or entry in bach_times_strerror().
 *
 * The clocks it hands out never go backwards (docs/formats.md 3.2):
 * within a sidecar, and from one segment of a capture directory to the
 * next (seg-NNNNNN files of one directory, in order), but where the
 * capture's manifest has a device_back event in the later segment (the
 * board restarted its clock). BACH_TIME_NONE entries are no clocks. A
 * segment of a capture directory without a sidecar reads untimed (every
 * entry BACH_TIME_NONE) when its segment event names none and another
 * one does; when its event names one, it is damage (-EBADMSG).
 */
struct bach_times;

struct bach_times *bach_times_new(void);
void bach_times_free(struct bach_times *t);
/*
 * The n entries of records [rec, rec + n) of trace file FILE (as
 * bach_reader_file() names it), in *out (valid until the next call).
 * Forward only within a file; a new FILE opens its sidecar.
 */
int bach_times_get(struct bach_times *t, const char *file, uint64_t rec,
		   size_t n, const uint64_t **out);
/*
 * After the whole of the current file was asked for: its sidecar must
 * hold no more entries. -EBADMSG when it does.
 */
int bach_times_end(struct bach_times *t);
/* The clock rate of the last sidecar opened (0: unknown). */
uint64_t bach_times_clock_hz(const struct bach_times *t);
const char *bach_times_strerror(const struct bach_times *t);

#endif
