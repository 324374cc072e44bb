/* SPDX-License-Identifier: MIT */
/*
 * The trace reader's state (library-internal), shared by its files:
 *
 *   lib/io/reader.c        the reader itself: made, given its files (a
 *                       capture directory's segments, locked), freed, and
 *                       what it tells of where it is
 *   lib/io/reader_read.c   the file being read: opened, its kind named or
 *                       sniffed, read or inflated into blocks of whole
 *                       records, its end checked (the hot path); the
 *                       message of what went wrong (reader_fail())
 *   lib/io/reader_seek.c   seeking and ranges: which file holds a record, and
 *                       where in it (a .gzi member index)
 *   lib/io/reader_times.c  the timing sidecars of the records handed out
 *   lib/io/reader_zst.c    a .byu.zst file's frames decompressed, its seek
 *                       table checked at its end
 *
 * The others call down into lib/io/reader_read.c, never the other way. The
 * public side is include/bach/trace.h; the gzip inflation is lib/io/gzin.c;
 * a capture directory's segments are listed by lib/io/capture_dir.c, which
 * needs none of this.
 */
#ifndef BACH_READER_STATE_H
#define BACH_READER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bach/index.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "lib/io/gzin.h"

/*
 * Record bytes per block handed out: a quarter of a MiB stays in the L2
 * cache between the copy or inflate that fills it and the scan that
 * reads it (1 MiB: bach mrc --sample 0.01 about 5% slower on 10 M
 * records, raw or gzip; perf stat, docs/analysis.md section 3.4).
 */
#define OUT_CAP (1u << 18)
#define IN_CAP	(1u << 20) /* compressed bytes read at a time */

#define KIND_AUTO (-1)

/*
 * The most records a seek passes over as bytes at once (r->skip): the
 * rest waits in r->skip_recs, so that no record number, up to 2^64 - 1,
 * is ever multiplied into a byte count that wraps.
 */
#define SKIP_SLICE ((UINT64_MAX / 2) / BACH_REC_SIZE)

/* What seeking knows of one file of the list, learnt when first needed. */
struct file_seek {
	bool looked;   /* index and count below are known */
	bool indexed;  /* ix holds the file's member index */
	bool no_index; /* none could be loaded or built */
	struct bach_index ix;
	uint64_t count; /* records, or UINT64_MAX when not known */
	bool found;	/* found in a capture: a regular file only */
};

struct bach_reader {
	char **paths;
	int *kinds;		/* enum bach_file_kind, or KIND_AUTO */
	struct file_seek *seek; /* per path */
	size_t npaths, cap;
	size_t cur; /* index of the file being read */
	bool open;  /* cur is open */
	int fd;
	bool own_fd;
	int err;      /* sticky error for the current file */
	int deferred; /* an error to report after the records before it */
	char msg[512];
	int *locks; /* capture directories read: shared flock */
	size_t nlocks;

	/* current file */
	enum bach_file_kind kind;
	uint64_t in_off;  /* bytes read from the file */
	uint64_t out_off; /* record bytes produced from it (incl. carry) */
	uint64_t file_recs;
	uint64_t total_recs;
	bool file_eof; /* read() returned 0 */
	/* a regular file's size when opened: less read at its end is damage */
	bool sized;
	uint64_t size;

	uint8_t *out; /* out_cap bytes: OUT_CAP, or a zstd frame's more */
	size_t out_cap;
	size_t carry; /* bytes of a partial record ... */
	size_t tail;  /* ... at out[tail], moved to out[0] next call */

	/* gzip state */
	uint8_t *in; /* in_cap bytes: IN_CAP, or a zstd frame's more */
	size_t in_cap;
	struct gzin gz;

	/* zstd state (lib/io/reader_zst.c): its input is in[zpos, zlen) */
	struct zst_in {
		struct ZSTD_DCtx_s *dctx;
		size_t zpos, zlen;
		bool in_frame; /* a zstd frame begun, not ended */
		size_t whole;  /* its compressed size: it is all at hand */
		unsigned long long fcs; /* its content size, from its header */
		/* frames read ahead, decompressed on a second thread */
		struct zst_ring *ring;
		bool no_ring;  /* one CPU, or no memory for it */
		bool ring_off; /* it takes no more of this file's frames */
		int ring_err;  /* a read's error, after the frames before */
		uint64_t ahead, ahead_d; /* its frames' bytes, and records' */
		uint64_t ring_given;	 /* frames it handed out */
		uint64_t skip_left;   /* bytes of a skippable frame to pass */
		uint64_t frame_start; /* file offset of the frame being read */
		uint64_t frames;      /* frames read whole (skippable too) */
		uint64_t csum;	      /* their bytes: where the next starts */
		uint64_t dsum;	      /* their decompressed bytes */
		uint64_t base, dbase; /* where this file's frames began
				       * (after another's seek table) */
		uint8_t *tab;	      /* the seek table frame, collected */
		uint64_t tab_len, tab_at;
		bool tab_done; /* the seek table was read whole */
		bool seeked;   /* entered by a seek: frames not counted */
		bool bad;     /* failed in a frame: reader_resync() may go on */
		bool resumed; /* read on at resume_at after a damaged frame */
		uint64_t resume_at, resume_dsum; /* and dsum there */
		uint64_t first_bad, first_dsum;	 /* the first damaged frame */
	} zs;

	/* seeking: record bytes still to pass over, then where to stop */
	uint64_t skip;
	uint64_t skip_recs; /* whole records to pass over after skip */
	uint64_t skip_acc;  /* bytes passed over, not yet a whole record */
	uint64_t limit;	    /* stop before this record; UINT64_MAX: none */

	/* timing sidecars (bach_reader_times()) */
	struct bach_times *times; /* made by the first call */
	size_t last_n;		  /* records the last read returned */
	bool jumped;		  /* a seek: files are not read whole */
	char *tfile;		  /* the file of the last entries given */
};

/* Records a seek still has to pass over before the next one delivered. */
static inline uint64_t to_skip(const struct bach_reader *r)
{
	return (r->skip_acc + r->skip) / BACH_REC_SIZE + r->skip_recs;
}

/* Pass over recs records (less skip_acc bytes already passed) next. */
static inline void set_skip(struct bach_reader *r, uint64_t recs)
{
	uint64_t k = recs < SKIP_SLICE ? recs : SKIP_SLICE;

	r->skip = k * BACH_REC_SIZE - r->skip_acc;
	r->skip_recs = recs - k;
}

/* Say what went wrong in r->msg, make err sticky; returns err. */
__attribute__((format(printf, 3, 4))) int
reader_fail(struct bach_reader *r, int err, const char *fmt, ...);

/* Open file r->cur, its kind named or sniffed; 0 or r->err. */
int reader_open_file(struct bach_reader *r);
void reader_close_file(struct bach_reader *r);

/* The gzip input's read (gzin.h): more of the file being read. */
ssize_t reader_gz_read(void *ctx, uint8_t *buf, size_t len);

/* zstd (lib/io/reader_zst.c): the file's start, its records into
 * r->out after the carry (bytes, or r->err), its end checked. */
void reader_zst_restart(struct bach_reader *r);
void reader_zst_end(struct bach_reader *r);
/* The file closed: frames read ahead dropped, the helper thread joined. */
void reader_zst_close(struct bach_reader *r);
/* Go on at byte offset at of the file after the damaged frame at byte
 * offset from (resync.h). */
void reader_zst_resume(struct bach_reader *r, uint64_t from, uint64_t at);
ssize_t reader_zst_produce(struct bach_reader *r, size_t room);
bool reader_zst_done(const struct bach_reader *r);
int reader_zst_check_end(struct bach_reader *r);
bool reader_is_part(const char *path);
/* Why a file ends before its end mark: a .part's reason, or a cut. */
const char *reader_cut_why(const struct bach_reader *r);

#endif
