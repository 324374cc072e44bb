/* SPDX-License-Identifier: MIT */
/*
 * manifest.jsonl: one JSON object per line, appended, never rewritten
 * (docs/bachd.md section 5 lists the events and their members). Every
 * line starts {"time":"<UTC ISO 8601>","event":"<name>", the name its kind's
 * in bach_manifest_ev_names[] (lib/io/manifest.h); each event has its own
 * function below, the only place its members are spelled.
 * Every function returns 0 or -errno (a line that could not be written
 * whole is cut off again: a line is whole or absent).
 */
#ifndef BACH_CORE_MANIFEST_WRITE_H
#define BACH_CORE_MANIFEST_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "drivers/driver.h"
#include "lib/bus/frame.h"
#include "lib/io/timing.h"
#include "session.h"

/* A mark of 4 KiB escaped (6 bytes a byte at worst) still fits. */
#define MANIFEST_LINE_MAX 32768
#define JSON_ESCAPED_MAX  (6 * 4096 + 1)

struct manifest {
	int fd;
	int err;       /* the first failed write's -errno, sticky */
	off_t reserve; /* manifest_reserve()'s, kept up as lines are added */
	off_t since;   /* bytes appended since the reserve was last topped up */
};

/*
 * Open manifest.jsonl in the capture directory dirfd to append to it:
 * create a new one (create true), or open the one there, which must be a
 * regular file (never through a symbolic link).
 */
int manifest_open(struct manifest *m, int dirfd, bool create);
void manifest_close(struct manifest *m);
int manifest_sync(struct manifest *m);

/* The first line: what is captured, from what, and how. */
struct manifest_started {
	const char *driver;
	const struct bach_option *opts; /* the driver options as given */
	size_t nopts;
	const char *device;	 /* the driver's identity: JSON members */
	const char *config_file; /* as given, or "" */
	const char *io;		 /* "io_uring" or "pwrite" */
	const char *host;	 /* gethostname() */
	const char *version;	 /* bach's */
	const char *gateware;	 /* the device's, or "" */
	const char *config_abs;	 /* the config file's absolute path, or "" */
	const char *capture;	 /* the capture's id: its directory's name */
	/* a replay's "source" object: JSON members (bach_source_origin()),
	 * or NULL: none */
	const char *source;
	const struct capture_label *labels;
	size_t nlabels;
	/* "config": every row of settings, read from settings_of (or none) */
	const struct bach_optdesc *settings;
	const void *settings_of;
};
int manifest_started(struct manifest *m, const struct manifest_started *s);

/* A segment closed, cut after a write error, or recovered. */
struct manifest_segment {
	const char *name; /* final name, without .part */
	uint64_t records; /* in the file, gap markers included */
	uint64_t gap_markers;
	uint64_t bytes;	    /* file size */
	uint32_t crc;	    /* CRC-32 of the whole file */
	const char *error;  /* the write error that cut it, or NULL */
	bool recovered;	    /* closed by a later start */
	bool orphan;	    /* recovered: closed, never named */
	bool removed;	    /* nothing whole was left: no file */
	uint64_t cut_bytes; /* with error or recovered */
	const char *timing; /* its timing sidecar's name, or NULL */
	uint64_t clock_hz;  /* with timing: the clock rate (0 unknown) */
	/* with timing: the finished sidecar's size, CRC-32 and clocks */
	const struct bach_time_summary *tsum;
};
int manifest_segment(struct manifest *m, const struct manifest_segment *s);

/* Records lost at trace position at; seg is the segment open then. */
int manifest_gap(struct manifest *m, const char *seg, uint64_t at,
		 uint64_t lost, enum bach_gap_cause cause);

/*
 * The ring was full under stall, count times between start_ns and end_ns
 * (since the capture started), holding the source held_ns in all.
 */
int manifest_stall_ring(struct manifest *m, const char *seg, uint64_t at,
			uint64_t start_ns, uint64_t end_ns, uint64_t held_ns,
			uint64_t count, uint64_t cycles);
/* The board's status says it held the CPU since its last status. */
int manifest_stall_board(struct manifest *m, const char *seg, uint64_t at,
			 uint64_t episodes, uint64_t cycles);

/*
 * A user's mark at trace position at, asked for when the source had
 * delivered record records; source "ctl" or "signal" ("": no such
 * member); text is escaped here. replayed: carried from the capture a
 * replay reads (bach_source_mark()), "replayed":true.
 */
int manifest_mark(struct manifest *m, const char *seg, uint64_t at,
		  uint64_t record, const char *source, const char *text,
		  bool replayed);

/*
 * An in-band marker: the record rec (6 bytes) at trace position at and
 * source index record matched rule. count > 1: it stands for count
 * matches of the rule, the last at last_at (the rate cap merged them).
 * replayed as manifest_mark()'s.
 */
int manifest_marker(struct manifest *m, const char *seg, uint64_t at,
		    uint64_t record, const char *rule, const uint8_t *rec,
		    uint64_t count, uint64_t last_at, bool replayed);

/* "device_lost" (lost true) or "device_back". */
int manifest_device(struct manifest *m, bool lost, const char *seg,
		    uint64_t at);

/*
 * Retention removed a closed segment of this capture (written in the
 * capture that held it), or a whole capture (written in the running
 * one's). reason: "keep_bytes", "keep_days" or "keep_captures".
 */
int manifest_retention_segment(struct manifest *m, const char *name,
			       uint64_t bytes, const char *reason);
int manifest_retention_capture(struct manifest *m, const char *capture,
			       uint64_t segments, uint64_t bytes,
			       const char *reason);

/* The last line of a capture that ended normally. */
struct manifest_ended {
	const char *state; /* clean, error, source_error */
	uint64_t produced, written, lost, gap_markers, segments, bytes, stalls,
		board_stalls;
	/* what ended it before the source did: "duration", "records",
	 * "segments" (autostop), "min_free" (on_full = stop); or NULL */
	const char *stopped_by;
	bool have_board;	/* a board status came: board_off_bus */
	uint64_t board_off_bus; /* its ADS#s with the CPU off the bus */
	const struct bach_busdec_stats *decode; /* a decoder's, or NULL */
};
int manifest_ended(struct manifest *m, const struct manifest_ended *e);
/*
 * The last line of a capture a later start recovered. Its totals come
 * from the manifest's own events: records in flight at the crash were
 * never counted, so there is no "produced".
 */
struct manifest_recovered {
	unsigned segments_recovered;
	uint64_t written, lost, gap_markers, segments, bytes;
};
int manifest_ended_recovered(struct manifest *m,
			     const struct manifest_recovered *r);
/*
 * Reserve room on the disk past the manifest's end, so that a disk that
 * fills up still takes the lines that say so; it is topped up again after
 * every quarter of it that lines use. Advisory: -errno where the
 * filesystem cannot.
 */
int manifest_reserve(struct manifest *m, off_t bytes);

/*
 * The bus decoder's summary as a JSON object ({...}, every count named as
 * in struct bach_busdec_stats), for the ended event and the status.
 * Returns its length (cut to fit cap).
 */
size_t manifest_decode_json(char *buf, size_t cap,
			    const struct bach_busdec_stats *s);

/*
 * JSON string contents for s (quotes not included): quotes, backslashes and
 * control characters escaped, bytes that are not UTF-8 as U+FFFD, cut at a
 * whole character when it does not fit.
 */
void json_escape(char *dst, size_t cap, const char *s);

#endif
