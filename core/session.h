/* SPDX-License-Identifier: MIT */
/*
 * One capture session: a driver feeding the ring on the acquisition
 * thread, the writer thread turning ring blocks into segments of a capture
 * directory with its manifest (docs/design.md sections 3, 4 and 6). bachd and
 * `bach capture` both run exactly this.
 */
#ifndef BACH_CORE_SESSION_H
#define BACH_CORE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bach/trace.h"
#include "drivers/driver.h"
#include "lib/bus/frame.h"
#include "lib/exit.h"

#define CAPTURE_MAX_OPTIONS 64
#define CAPTURE_MAX_LABELS  16
#define CAPTURE_LABEL_KEY   48 /* bytes, the NUL included */
#define CAPTURE_LABEL_VALUE 128

#define CAPTURE_MAX_MARKERS 16

/* In-band marker rules (docs/bachd.md section 5): kinds, never renumbered. */
enum capture_marker_kind {
	CAPTURE_MARKER_IO,  /* IO_READ and IO_WRITE cycles */
	CAPTURE_MARKER_MEM, /* memory cycles: fetches, reads, writes */
};

struct capture_marker {
	enum capture_marker_kind kind;
	uint32_t lo, hi; /* byte addresses, inclusive */
	char text[48];	 /* the rule as the manifest spells it */
};

/*
 * One rule, "io:LO-HI", "io:PORT", "mem:BASE/SIZE", "mem:LO-HI" or
 * "mem:ADDR" (numbers decimal or 0x hex; io up to 0xffff). Returns 0 and
 * fills *m, or -EINVAL with why in err.
 */
int capture_marker_parse(struct capture_marker *m, const char *s, char *err,
			 size_t errlen);

/* Never renumbered: the names are config values (on_full). */
enum capture_on_full {
	CAPTURE_ON_FULL_WAIT, /* wait for space; the loss is one gap */
	CAPTURE_ON_FULL_STOP, /* end the capture cleanly */
};

/*
 * What a capture is asked to do. bachd's settings table (daemon/config.c)
 * names the member each setting goes to and holds every default: a
 * struct zeroed and then given the table's defaults (bachd_config_defaults)
 * is a capture with no settings.
 */
struct capture_config {
	char output[4096]; /* directory the capture directory goes in */
	char driver[64];
	struct bach_option opts[CAPTURE_MAX_OPTIONS]; /* as given, in order */
	size_t nopts;
	enum bach_loss_policy policy;
	bool gap_markers; /* drop: marker records in the trace */
	bool compress;	  /* .byu.gz segments (else .byu) */
	enum bach_deflate_backend compressor; /* libdeflate or record */
	int level;			      /* the compressor's level */
	unsigned zstd_frame_kb; /* zstd: records per frame, KiB (0: 1024) */
	int threads;		/* compressing threads, 0 = online CPUs */
	uint64_t ring_bytes;
	uint64_t rotate_bytes;	 /* record bytes per segment, 0 = no limit */
	uint64_t rotate_seconds; /* 0 = no limit */
	bool io_uring;
	bool raw_dump;		  /* keep board-stream.bin for replay */
	unsigned queue_depth;	  /* writes in flight */
	uint64_t flush_ms;	  /* a partial block waits at most this */
	int test_writer_delay_ms; /* test hook: slow every write */
	char config_path[4096];	  /* for the manifest; may be empty */
	char config_abs[4096];	  /* the same, absolute; may be empty */
	struct capture_label {	  /* label.KEY = VALUE, for the manifest */
		char key[CAPTURE_LABEL_KEY];
		char value[CAPTURE_LABEL_VALUE];
	} labels[CAPTURE_MAX_LABELS];
	size_t nlabels;

	/* the disk guard (docs/bachd.md section 5) */
	uint64_t min_free_bytes;      /* keep this much free, 0 = no limit */
	unsigned min_free_pct;	      /* ... or this % of the filesystem */
	enum capture_on_full on_full; /* what a disk at min_free does */
	uint64_t keep_bytes;	      /* retention: 0 = no limit */
	uint64_t keep_days;
	uint64_t keep_captures;
	char post_rotate[1024]; /* run on each closed segment, or "" */

	/* in-band markers: matching records become mark events */
	struct capture_marker markers[CAPTURE_MAX_MARKERS];
	size_t nmarkers;
	unsigned marker_rate; /* events a second per rule, then merged */

	/* autostop: 0 = no limit */
	uint64_t stop_seconds, stop_records, stop_segments;

	/* the daemon's metrics file ("": none), here for the manifest */
	char metrics_file[4096];

	/*
	 * The started event's "config" shows every row of settings, each
	 * read from settings_of, the struct the table describes (bachd's
	 * configuration, of which this is a part): it must outlive the
	 * capture and not change while it runs. NULL: "config" has only
	 * file and io.
	 */
	const struct bach_optdesc *settings;
	const void *settings_of;
};

/*
 * A driver option as given, from file:line (file NULL: the command line;
 * it is not copied and must outlive c). Key and value are copied. Every
 * one is kept, in order: a later one of a key replaces an earlier one
 * when the driver's table is applied (a repeatable one adds to it).
 * Returns 0, -E2BIG past CAPTURE_MAX_OPTIONS, or -ENOMEM.
 */
int capture_config_option(struct capture_config *c, const char *key,
			  const char *value, const char *file, unsigned line);

/*
 * A user label KEY = VALUE (a later one of a key replaces it). Returns 0,
 * -EINVAL for a key that is not [A-Za-z_][A-Za-z0-9_.-]* of at most 47
 * bytes or a value of more than 127 bytes, -E2BIG past CAPTURE_MAX_LABELS.
 */
int capture_config_label(struct capture_config *c, const char *key,
			 const char *value);

/* Live figures; every member a total since the start. */
struct capture_status {
	uint64_t produced; /* records the source produced (incl. lost) */
	uint64_t written;  /* records in closed or open segments */
	uint64_t lost;	   /* records lost, all causes */
	uint64_t
		lost_by[BACH_GAP_NCAUSES]; /* [BACH_GAP_DISK]: a failed write */
	uint64_t markers;		   /* gap marker records written */
	uint64_t bytes;			   /* bytes written to segments */
	uint64_t segments;		   /* segments closed */
	uint64_t stalls;       /* times the ring was full under stall */
	uint64_t stall_ns;     /* time spent stalled */
	uint64_t board_stalls; /* times the board held the CPU (its status) */
	uint64_t ring_used, ring_blocks;
	uint64_t timing_bytes; /* clock buffers allocated (timing sidecars) */
	uint64_t corrupt_frames;
	/* retention's last run: the bytes over keep_bytes it could not
	 * remove; it kept the running capture's newest closed segment */
	uint64_t retention_over_bytes;
	bool retention_kept_newest;
	bool have_board;		 /* a board status frame has come */
	struct bach_board_status board;	 /* the board's last one */
	bool have_decode;		 /* a bus decoder's summary has come */
	struct bach_busdec_stats decode; /* its totals (bach_source_decoded) */
	bool running;			 /* the source is still producing */
	bool writer_blocked;		 /* a write has been pending for long */
	bool disk_waiting;	  /* below min_free: records are being lost */
	uint64_t writer_progress; /* ticks whenever the writer moves on */
	uint64_t start_unix_ns;	  /* wall clock when the capture started, 0: not
				     yet */
	uint64_t uptime_ns;	  /* since then (monotonic) */
	char capture_dir[4200];
	char segment[80]; /* open segment's name */
	char driver[64];
	char gateware[32]; /* the device's "gateware" version, or "" */
};

struct capture;

/*
 * Prepare a capture: recover *.part left in cfg->output by a crash, open
 * the driver, create the capture directory, its manifest and the first
 * segment. On failure returns -errno after logging why; the exit status
 * for that is 2.
 */
int capture_open(struct capture **cp, const struct capture_config *cfg);
/* Start the acquisition and writer threads. */
int capture_start(struct capture *c);
/* Ask the source to stop; the writer drains what the ring holds. */
void capture_stop(struct capture *c);
/* True once both threads are done. */
bool capture_done(struct capture *c);
void capture_rotate(struct capture *c);
/*
 * A user mark at the acquisition position: the index of the next record
 * the source delivers, read now (the writer places it in the trace when
 * that record reaches it). source names who asked ("ctl", "signal"): a
 * string constant, not copied. -ENOSPC when 64 are waiting.
 */
int capture_mark(struct capture *c, const char *text, const char *source);
void capture_status(struct capture *c, struct capture_status *st);
/*
 * Join the threads, close the last segment, write "ended" to the manifest,
 * free. Returns the exit status (lib/exit.h): 0 clean, 1 records were
 * lost to a failed write, 3 the disk was full (ENOSPC), 4 the source
 * failed, 5 the manifest could not be written. A capture whose open
 * failed leaves no capture directory behind.
 */
int capture_close(struct capture *c, struct capture_status *final);

/*
 * The "gateware" member of a driver's identity (JSON members, as given to
 * bach_source_identity) into buf, or "" when it has none.
 */
void capture_identity_gateware(const char *identity, char *buf, size_t cap);

/* Status as one JSON object (no newline); returns its length. */
size_t capture_status_json(const struct capture_status *st, char *buf,
			   size_t cap);

#endif
