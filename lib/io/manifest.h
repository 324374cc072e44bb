/* SPDX-License-Identifier: MIT */
/*
 * Reading a capture directory's manifest.jsonl (docs/bachd.md section 5
 * lists its events): what bach verify checks the segments against, and
 * what recovery needs to close a capture a crash cut off. The writer is
 * core/manifest_write.c.
 *
 * The manifest is read whole into memory (it holds one line per segment,
 * gap, stall, mark and device event: megabytes for a week's capture).
 * Unknown events and members are skipped, so older readers keep reading
 * newer manifests. A last line without its newline is what a crash can
 * leave behind: it is not an error, and whole_bytes says where the whole
 * lines end.
 */
#ifndef BACH_MANIFEST_H
#define BACH_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bach/trace.h"

#define BACH_MANIFEST_NAME "manifest.jsonl"

/* A "segment" event. */
struct bach_manifest_seg {
	char name[64];
	uint64_t records; /* gap markers included */
	uint64_t gap_markers;
	uint64_t bytes;
	uint32_t crc;
	bool has_crc;	/* a removed segment has none */
	bool recovered; /* closed by a later start */
	bool orphan;	/* found closed but never named, by recovery */
	bool removed;	/* nothing whole was left: no file */
	bool error;	/* cut after a failed write */
	bool retained;	/* removed later by retention (a "retention"
			 * event names it): no file, and no damage */
	uint64_t line;	/* line number in the manifest, from 1 */
	/* its timing sidecar ("timing"; empty: none), and what the event
	 * says of it: the file's size and CRC-32 (has_timing_crc), its
	 * first and last clocks (has_clocks) */
	char timing[64];
	bool has_timing_crc, has_clocks;
	uint64_t timing_bytes;
	uint32_t timing_crc;
	uint64_t first_clock, last_clock;
};

/*
 * The events bach writes, by kind: one table of their names
 * (lib/io/manifest_events.c) is what the writer (core/manifest_write.c) writes
 * and what the reader knows; docs/bachd.md section 5 lists them (docs/design.md
 * section 4 says how to add one). In memory only: renumbering is harmless.
 */
enum bach_manifest_ev {
	BACH_EV_STARTED,
	BACH_EV_SEGMENT,
	BACH_EV_GAP,
	BACH_EV_STALL,
	BACH_EV_MARK,
	BACH_EV_DEVICE_LOST,
	BACH_EV_DEVICE_BACK,
	BACH_EV_ENDED,
	BACH_EV_RETENTION,
	BACH_EV_OTHER, /* an event this bach does not know (a newer one's) */
};

/* The "event" member of each kind but BACH_EV_OTHER, indexed by kind. */
extern const char *const bach_manifest_ev_names[BACH_EV_OTHER];

/* kind's name; NULL for BACH_EV_OTHER (or anything out of range). */
const char *bach_manifest_ev_name(enum bach_manifest_ev kind);

/* The kind an "event" member names: BACH_EV_OTHER when none does. */
enum bach_manifest_ev bach_manifest_ev_kind(const char *name);

/*
 * Every event, in order, for a timeline (bach report, bach plot): its
 * time as written, its position and the member that says most about it.
 */
struct bach_manifest_event {
	enum bach_manifest_ev kind;
	char name[24]; /* the "event" member */
	bool name_cut; /* ... cut to fit */
	char time[32]; /* the "time" member, or empty */
	bool has_at;
	uint64_t at;	/* "at": a record index in the trace */
	uint64_t count; /* gap: lost; segment: records; stall: count
			 * or episodes */
	/* gap: cause; stall: source; segment: name; started: driver;
	 * ended: state; mark: its text (cut to fit) */
	char detail[160];
	char segment[64]; /* the "segment" member (the segment open then) */
	uint64_t line;	  /* in the manifest, from 1 */
};

/* A "mark" event: a user's mark or an in-band marker's match. */
struct bach_manifest_mark {
	uint64_t at;	 /* trace position */
	uint64_t record; /* source index (0 when the event has none) */
	char *text;	 /* a user's mark: its text; a marker: NULL */
	bool marker;	 /* source "marker": address and be hold */
	char source[16]; /* "source": ctl, signal, marker; "" when none */
	uint32_t address;
	uint8_t be;
	uint64_t count; /* matches the event stands for (1 unmerged) */
	uint64_t line;	/* line number in the manifest */
};

#define BACH_MANIFEST_MAX_LABELS 16

/* The sums of the events, and the "ended" event's own totals. */
struct bach_manifest {
	bool started;
	struct bach_manifest_seg *segs;
	size_t nsegs;
	uint64_t gaps;		   /* gap events */
	struct bach_gap *gap_list; /* each of them (bach_capture_gaps()) */
	uint64_t gap_lost;	   /* their "lost", summed */
	uint64_t retained;	   /* segments retention removed */
	uint64_t retained_records; /* ... the records they held */
	bool ended;		   /* an "ended" event was read */
	char state[24];		   /* its state: clean, error, recovered, ... */
	bool has_totals;	   /* it carries produced/written/lost */
	uint64_t produced, written, lost, segments;
	struct bach_manifest_mark *marks; /* in manifest order */
	size_t nmarks;
	/* the started event's provenance, the ended event's time */
	char start_time[32]; /* "time" of started: 2026-11-21T22:30:00.123Z */
	char end_time[32];   /* "time" of the last ended event, or "" */
	char host[256];
	struct {
		char key[48];
		char value[128];
	} labels[BACH_MANIFEST_MAX_LABELS]; /* in the manifest's order */
	size_t nlabels;
	uint64_t lines;	      /* whole lines read */
	uint64_t whole_bytes; /* bytes of whole lines */
	bool partial_tail;    /* a last line without its newline */
	struct bach_manifest_event *events;
	size_t nevents;
	char version[16]; /* the started event's "version", as text */
};

/*
 * Read dirfd's manifest.jsonl (never through a symbolic link; it must be
 * a regular file). dir names the directory in messages. Returns 0,
 * -ENOENT when there is none, -BACH_EDATA for a line that is not a JSON
 * object or a known event with a member of the wrong type (err then says
 * "DIR/manifest.jsonl: line N: ..."), or -errno. On an error *m is
 * left empty, nothing allocated: bach_manifest_free() is not needed
 * (and harmless).
 */
int bach_manifest_load(int dirfd, const char *dir, struct bach_manifest *m,
		       char *err, size_t errlen);
void bach_manifest_free(struct bach_manifest *m);

/* Seconds since the epoch of a manifest "time" (UTC), or -1 when malformed. */
double bach_manifest_time(const char *iso);

/* The segment event named name, or NULL. */
const struct bach_manifest_seg *
bach_manifest_find_seg(const struct bach_manifest *m, const char *name);

#endif
