/* SPDX-License-Identifier: MIT */
/*
 * Inside the capture engine: the session's state, and who owns each part
 * of it. Three threads share it: the caller's (session.c: open, start,
 * status, marks, close), the acquisition thread (producer.c: the services
 * drivers call, drivers/driver.h) and the writer thread (writer.c's loop,
 * with segment.c, diskguard.c, marks.c and retention.c). struct capture
 * holds one part per owner; while the threads run, a thread touches no
 * other thread's part, and they meet in sh (atomics, or under sh.mu) and
 * in the ring (ring.h).
 */
#ifndef BACH_CORE_CAPTURE_PRIV_H
#define BACH_CORE_CAPTURE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bach/index.h"
#include "lib/bus/frame.h"
#include "lib/io/timing.h"
#include "lib/io/zpool.h"
#include "lib/io/zst.h"
#include "manifest_write.h"
#include "ring.h"
#include "segio.h"
#include "session.h"

#define NCAUSES BACH_GAP_NCAUSES
/* manifest room kept for the lines that say the disk is full */
#define MANIFEST_RESERVE (256 << 10)
/* ring stalls within this time make one manifest event */
#define STALL_MERGE_NS 1000000000ull
#define BLOCKED_AFTER_NS                                                       \
	2000000000ull /* a write this old: the writer is stuck */

struct bach_source {
	struct capture *c;
};

/*
 * The acquisition thread's, from capture_start() to its join: no other
 * thread reads or writes it meanwhile. capture_open() sets it up and
 * capture_close() reads run_err and frees it.
 */
struct capture_acq {
	struct bach_parser *parser; /* the board stream's (lib/bus/frame.c) */
	struct ring_block *blk;
	uint64_t blk_born;	   /* ns when blk got its first record */
	uint64_t pending[NCAUSES]; /* lost while no block could be had */
	struct ring_event pend_ev[RING_MAX_EVENTS]; /* events, likewise */
	unsigned npend_ev;
	bool stalled;
	struct { /* ring stalls not yet in an event */
		uint64_t first_ns, last_ns, held_ns, count;
	} stall;
	struct { /* the board's, likewise */
		uint64_t first_ns, episodes, clocks;
	} bstall;
	int run_err;
	int dump_fd; /* board-stream.bin, or -1 */
	/*
	 * Timing (docs/formats.md section 3.2): set once a source gives
	 * clocks; each block's are in its clock buffer (ring.h); fdeltas
	 * the deltas of the data frame being delivered (in its payload).
	 */
	bool timing;
	bool timing_nomem;   /* said once */
	uint64_t last_clock; /* of the last record, for gap markers */
	/* the clocks kept never go back: the source's plus clk_shift,
	 * clk_last the last of them (onward_clocks()) */
	uint64_t clk_shift, clk_last;
	const uint8_t *fdeltas;
	uint64_t fts;
	size_t nfdeltas;
};

/*
 * The writer thread's, from capture_start() to its join: no other thread
 * reads or writes it meanwhile. The caller's thread uses it before (the
 * first segment, the started event) and after (the ended event, the exit
 * status, freeing).
 */
struct capture_wr {
	struct bach_zpool *pool;  /* the segments' compression, or NULL */
	struct bach_zpool *tpool; /* timing sidecars', once needed */
	bool tpool_failed;
	struct segio io;
	struct manifest man;
	int segfd;
	unsigned segno;
	char segname[64]; /* final name, without .part */
	uint64_t seg_records, seg_markers, seg_started_ns, seg_record_bytes;
	/* the open segment's member index, for NAME.gzi at its close */
	struct bach_index segix;
	uint64_t segix_cap, segix_last; /* last: the last member's ISIZE */
	int segix_err;
	struct zst_table segzt;	     /* a .byu.zst segment's seek table */
	bool pool_zstd;		     /* the pool makes zstd frames */
	uint64_t frame_born_ns;	     /* the frame being gathered began */
	struct bach_time_writer *tw; /* the open segment's sidecar */
	bool tw_failed;		     /* given up for this segment */
	uint64_t trace_pos;	     /* records in segments, markers included */
	uint64_t bytes_closed;	     /* bytes of the closed segments */
	int write_err;
	int manifest_err; /* a manifest line failed: -errno */
	/* the disk guard (min_free) */
	bool disk_low;		 /* no open segment: below min_free */
	uint64_t disk_lost;	 /* lost meanwhile, not yet in a gap */
	uint64_t disk_gapped;	 /* lost_by[DISK] already in gap events */
	uint64_t disk_since;	 /* record bytes since the last look */
	uint64_t disk_check_ns;	 /* when we last looked */
	uint64_t retain_ns;	 /* when retention last ran */
	char retention_held[72]; /* kept against keep_days: said once */
	const char *stop_reason; /* what ended it early (manifest_ended) */
	uint64_t src_reached;	 /* source index the trace has reached */
	struct marker_state {	 /* per rule: the rate cap (marks.c) */
		uint64_t win_ns; /* this window's start */
		uint64_t n;	 /* events written in it */
		uint64_t count;	 /* matches merged, not yet written */
		uint64_t at, record, last_at;
		uint8_t rec[6]; /* the first merged record */
		char seg[64];	/* the segment open at the first */
	} mstate[CAPTURE_MAX_MARKERS];
};

/*
 * Where the threads meet: atomics any thread may read, each written by
 * the thread named, and what mu guards.
 */
struct capture_shared {
	/* the acquisition thread's */
	_Atomic bool acq_done;
	_Atomic bool records_reached; /* autostop: the producer took them all */
	_Atomic uint32_t clock_hz;    /* the board's bus clock, once known */
	_Atomic uint64_t produced, markers, stalls, stall_ns, board_stalls;
	/* the parser's bad CRCs and headers: a copy, the parser is acq's */
	_Atomic uint64_t corrupt_frames;
	/* the writer thread's */
	_Atomic bool wr_done;
	_Atomic bool disk_waiting; /* on_full = wait, below min_free */
	_Atomic uint64_t written, bytes, segments, progress, write_started_ns;
	/* retention's last run: bytes over keep_bytes; the running
	 * capture's newest closed segment kept against a limit */
	_Atomic uint64_t retention_over;
	_Atomic bool retention_kept;
	/* both threads' */
	_Atomic uint64_t lost, lost_by[BACH_GAP_NCAUSES];
	/* requests, from any thread (the writer takes rotate_requested) */
	_Atomic bool stop_requested, rotate_requested;

	pthread_mutex_t mu;
	/* the caller's thread adds marks, the writer takes them */
	struct capture_mark { /* waiting for the writer */
		char *text;
		const char *source;
		uint64_t record; /* source index when it was asked for */
	} marks[64];
	size_t nmarks;
	char open_seg[80]; /* the writer's open .part */
	/*
	 * The source's (bach_source_identity() and the like: the driver's
	 * open() on the caller's thread, then the acquisition thread),
	 * written under mu; the thread that writes them reads them without.
	 */
	char identity[1024];
	struct bach_board_status board; /* the board's last status */
	bool have_board_status;
	struct bach_busdec_stats decode; /* bach_source_decoded()'s totals */
	bool have_decode;
};

struct capture {
	/*
	 * Set by capture_open() and capture_start() before the threads start,
	 * then left alone until capture_close() frees them; the ring is
	 * shared through its own atomics and lock (ring.h).
	 */
	struct capture_config cfg;
	const struct bach_driver *drv;
	void *priv; /* the driver's (drivers/driver.h says who calls what) */
	struct bach_source src;
	struct ring ring; /* the blocks between the two threads */
	int out_fd;	  /* the output directory, locked */
	int dirfd;	  /* the capture directory */
	char capdir[4200];
	char capname[80];    /* its name in the output directory */
	char *origin;	     /* a replay's "source" members, or NULL */
	uint64_t t0_ns;	     /* when the capture started */
	uint64_t t0_real_ns; /* the same, on the wall clock */

	/* the caller's thread's (session.c) */
	pthread_t acq_tid, wr_tid;
	bool started;
	bool opened; /* capture_open() went all the way */

	struct capture_acq acq;
	struct capture_wr wr;
	struct capture_shared sh;
};

/* producer.c */
extern const struct bach_parser_ops capture_parser_ops;
void *capture_acq_main(void *arg);

/* writer.c */
void *capture_wr_main(void *arg);
/* End the capture early and cleanly (autostop, min_free); writer thread. */
void capture_autostop(struct capture *c, const char *why);

/*
 * segment.c: the open segment, its member index and its timing sidecar;
 * writer thread (capture_open() and capture_close() before and after it).
 */
/* Open the next segment, seg-N.byu[.gz].part. */
int segment_open(struct capture *c);
/*
 * Block b's clocks (nrec of them) into the segment's timing sidecar,
 * opened at its first timed block (the records before that get
 * BACH_TIME_NONE); b's clock buffer goes back to the ring.
 */
void segment_times(struct capture *c, struct ring_block *b, uint32_t nrec);
/*
 * Block b's len bytes of records into the segment: into the pool (which
 * releases b once its member is written), or written raw and released.
 */
void segment_records(struct capture *c, struct ring_block *b, size_t len);
/* Append the pool's finished members; with wait, every pending one. */
void segment_drain(struct capture *c, bool wait);
/* Close the open segment: finish, sync, rename, sync the directory. */
int segment_close(struct capture *c);

/* marks.c: user marks and in-band markers; writer thread */
/*
 * Marks and markers of block b, before it is released: user marks whose
 * source index it reached, matching records (with at_end, the block never
 * reaches the trace: marks at the trace's end, no scan).
 */
void marks_block(struct capture *c, const struct ring_block *b, bool at_end);
/* Marks the trace already reached (a quiet source); with all, every one. */
void marks_idle(struct capture *c, bool all);
/* Merged marker events whose second is over; with all, every one. */
void markers_flush(struct capture *c, bool all);

/*
 * diskguard.c: min_free, and what follows every close (post_rotate,
 * retention); writer thread.
 */
/*
 * Close the open segment (segment_close()); once it closed well, its
 * post_rotate command, then retention.
 */
int diskguard_close_segment(struct capture *c);
/*
 * Before a block goes to the open segment: below min_free the segment is
 * closed and disk_low set. True when the capture is to stop (on_full =
 * stop).
 */
bool diskguard_check(struct capture *c, uint64_t now);
/* disk_low, on_full = wait: once space is back, a new segment. */
void diskguard_retry(struct capture *c, uint64_t now);
/* Retention, when it has not run for a while. */
void diskguard_retain(struct capture *c, uint64_t now);
/* At the writer's end: every record the disk took, in the manifest. */
void diskguard_end(struct capture *c);

/* retention.c: keep_bytes, keep_days, keep_captures; writer thread */
void retention_run(struct capture *c);

/* post_rotate.c: the post_rotate command on a closed segment */
void post_rotate_run(const char *cmd, const char *path);
/* Reap the commands that ended; with wait_ms, wait that long for all. */
void post_rotate_reap(int wait_ms);

#endif
