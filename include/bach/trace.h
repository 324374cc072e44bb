/* SPDX-License-Identifier: MIT */
/*
 * Streaming trace reader and writer (docs/design.md section 4).
 *
 * Error convention: actions return 0 (or a count) on success and -errno on
 * failure. -EBADMSG means the data is damaged (exit status 1); anything else
 * is a usage or environment error (exit status 2). Every failing object keeps
 * a message naming the file and the byte offset or record index, for
 * bach_reader_strerror() / bach_writer_strerror().
 */
#ifndef BACH_TRACE_H
#define BACH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BACH_EDATA EBADMSG

/* Exit status for a result code, as in docs/design.md section 7. */
int bach_exit_status(int err);

/* ---- reader ------------------------------------------------------------ */

enum bach_file_kind {
	BACH_FILE_RAW,	/* .byu */
	BACH_FILE_GZIP, /* .byu.gz: gzip, one or more members */
	BACH_FILE_ZSTD, /* .byu.zst: zstd frames, then the seek table */
};

struct bach_reader;

struct bach_reader *bach_reader_new(void);
void bach_reader_free(struct bach_reader *r);

/*
 * Append a trace to the reader's list: a .byu, .byu.gz or .byu.zst file
 * ("-" is standard input, sniffed for the gzip and zstd magic), or a
 * capture directory, whose closed seg-*.byu[.gz|.zst] segments are
 * appended in name order. Paths ending in ".gz" are read as gzip, in
 * ".zst" as zstd (docs/formats.md section 10); anything else as raw
 * records. Fails with -errno and
 * a message when the path cannot be opened, or a directory is not a capture
 * that can be read (bach_capture_open()). A trace may hold no records. A
 * path given may be a FIFO (a stream); a capture's segments are read only
 * when they are regular files, never through a symbolic link (the read that
 * reaches one fails with -EINVAL or -ELOOP, naming it).
 */
int bach_reader_add(struct bach_reader *r, const char *path);
/* The same, read as the given kind whatever the name says (not for dirs). */
int bach_reader_add_as(struct bach_reader *r, const char *path,
		       enum bach_file_kind kind);

/*
 * Next block of whole records: *recs points at n * 6 bytes owned by the
 * reader, valid until the next call. Returns n > 0, 0 at the end of the last
 * file, or -errno. After an error, bach_reader_next_file() skips to the next
 * file; otherwise further reads return the same error.
 */
ssize_t bach_reader_read(struct bach_reader *r, const uint8_t **recs);
int bach_reader_next_file(struct bach_reader *r);

/*
 * Go to record rec of the whole list (its files one after the other, from
 * record 0): the next read starts there. A blocked .byu.gz is entered
 * through its index (FILE.gzi when it fits the file, else one built from
 * the file's member headers, kept for the reader's life; bach/index.h); a
 * raw file directly; a gzip file that is not blocked is read from its
 * start up to rec. Past the end, reads return 0. Standard input only goes
 * forward (-ESPIPE back). A file damaged before rec fails the read that
 * gets there, as reading through would. Clears a range's end.
 */
int bach_reader_seek(struct bach_reader *r, uint64_t rec);
/* Seek to start, and end the trace before record end (START:END). */
int bach_reader_range(struct bach_reader *r, uint64_t start, uint64_t end);

const char *bach_reader_strerror(const struct bach_reader *r);

/*
 * Does nothing, kept for the ABI: every file is read with read() into the
 * reader's buffer, never mapped (a mapped file cut short while it is read
 * would kill the reader with SIGBUS; read() finds its end, reported).
 */
void bach_reader_no_map(struct bach_reader *r);

/*
 * Where the reader is: file being read, records delivered from it and in
 * all (after a seek: the index of the next record, in the file and in
 * the whole list).
 */
const char *bach_reader_file(const struct bach_reader *r);
uint64_t bach_reader_file_records(const struct bach_reader *r);
uint64_t bach_reader_records(const struct bach_reader *r);
size_t bach_reader_nfiles(const struct bach_reader *r);

/*
 * Timing (docs/formats.md section 3.2): a trace file NAME.byu.gz (or
 * NAME.byu.zst, NAME.byu) may have a timing sidecar NAME.time.gz beside
 * it, one u64 per record: the bus clock of a capture, the sample index of
 * `bach decode`'s output; BACH_TIME_NONE where no time is known (a gap
 * marker's entry is the clock of the record before it).
 */
#define BACH_TIME_NONE UINT64_MAX

/* Whether PATH (a trace file, or any segment of a capture directory) has
 * a timing sidecar. */
bool bach_times_present(const char *path);

/*
 * The sidecar entries of the records the last bach_reader_read() handed
 * out, one per record in the same order, in *clk (owned by the reader,
 * valid until the next call). Returns that count, or -ENOENT when the
 * block's file has no sidecar, -EBADMSG when it is damaged or does not
 * match the records (fewer entries, or more than a file read whole had
 * records), or its clocks go back (within a sidecar, or from one segment
 * of a capture directory to the next); bach_reader_strerror() names the
 * sidecar and the byte offset or entry. A segment without a sidecar in a
 * capture whose other segments' events name theirs, and whose own names
 * none, reads untimed (BACH_TIME_NONE entries); one whose event names a
 * sidecar that is not there is -EBADMSG. Call it after bach_reader_read()
 * returned 0 too: it returns 0, having checked that the last file's
 * sidecar holds no more entries (the check is skipped once the reader has
 * seeked). No work per record but a copy and a compare; sidecars are read
 * a member (8160 entries) at a time.
 */
ssize_t bach_reader_times(struct bach_reader *r, const uint64_t **clk);
/* The clock rate of the sidecar last read, in Hz (0: unknown, or none read
 * yet); entry / rate is seconds. */
uint64_t bach_reader_clock_hz(const struct bach_reader *r);

/* Facts about the file being read (or just finished). */
struct bach_file_info {
	enum bach_file_kind kind;
	bool blocked;	    /* gzip members carry the BC extra field */
	bool eof_block;	    /* the file ended with the 28-byte EOF block */
	uint64_t members;   /* gzip members, the EOF block included */
	uint64_t in_bytes;  /* bytes of the file consumed */
	uint64_t out_bytes; /* record bytes delivered */
};
void bach_reader_info(const struct bach_reader *r, struct bach_file_info *fi);

/*
 * Capture directories: the closed segments of DIR, sorted, as malloc'd
 * paths in *paths (free each and the array). Unfinished *.part segments are
 * counted in *nparts when nparts is not NULL. Returns the count or -errno.
 */
ssize_t bach_capture_segments(const char *dir, char ***paths, size_t *nparts);
/*
 * The same, for reading DIR as a trace, with one rule for every reader: a
 * directory holding neither manifest.jsonl nor any seg-* file (closed or
 * *.part) is not a capture directory: -EISDIR (exit status 2); a capture
 * with no closed segment but unfinished *.part ones cannot be read yet:
 * -EBADMSG (exit status 1); a capture with neither holds no records: 0, an
 * empty trace. On an error *paths is NULL and msg says what, naming DIR.
 */
ssize_t bach_capture_open(const char *dir, char ***paths, size_t *nparts,
			  char *msg, size_t len);

/*
 * A gap of a capture (design section 6): records the source produced that
 * are not in the trace, as the manifest's "gap" event places them.
 */
struct bach_gap {
	uint64_t at;	  /* record index in the capture where they are
			   * missing; with gap markers (the default) the
			   * marker record is the one at this index */
	uint64_t lost;	  /* how many */
	char cause[16];	  /* overflow, frames, corrupt, ring, device, disk */
	char segment[64]; /* the segment being written then */
};

/*
 * The gaps of capture directory dir, in the manifest's order, as a
 * malloc'd array in *gaps (free() it; NULL when there are none). Returns
 * the count, or -errno with msg naming the file (and line): -ENOENT when
 * dir has no manifest.jsonl, -EBADMSG when a line is not an event.
 */
ssize_t bach_capture_gaps(const char *dir, struct bach_gap **gaps, char *msg,
			  size_t len);

/* ---- blocked gzip (BGZF-style) ----------------------------------------- */

#define BACH_BGZF_HDR	    18
#define BACH_BGZF_TRAILER   8
#define BACH_BGZF_MAX_BLOCK 65536
/* Input per block: whole records, the largest multiple of 6 <= 0xff00. */
#define BACH_BGZF_MAX_INPUT 65280
#define BACH_BGZF_EOF_SIZE  28

extern const uint8_t bach_bgzf_eof[BACH_BGZF_EOF_SIZE];

/*
 * The header of a blocked gzip member at p, len bytes of it at hand: the
 * gzip magic, deflate, FEXTRA, and in the extra field (XLEN bytes of
 * subfields, each SI1 SI2 SLEN and SLEN bytes) a BC subfield of 2 bytes,
 * the block size less one. Returns the member's size as BC gives it, 1 to
 * 65536 (whether the bytes hold it is the caller's to check), or
 *   -EAGAIN  too few bytes to tell: 12, then 12 + XLEN are needed;
 *   -EILSEQ  not a gzip member compressed with deflate;
 *   -ENOENT  a gzip member with no BC subfield (or none that fits in
 *            the extra field): not a blocked one.
 */
int bach_bgzf_member_size(const uint8_t *p, size_t len);

enum bach_deflate_backend {
	/* level 0: the record encoder at its default; 1..12: libdeflate */
	BACH_DEFLATE_AUTO,
	BACH_DEFLATE_LIBDEFLATE,
	BACH_DEFLATE_ZLIB,
	BACH_DEFLATE_RECORD, /* lib/io/recdeflate.h */
	/*
	 * not deflate: each block one zstd frame (content size, checksum;
	 * level 1..19, 0: 3) for .byu.zst (docs/formats.md section 3.3)
	 */
	BACH_DEFLATE_ZSTD,
};

struct bach_deflater;

/*
 * level 0..12 with libdeflate, 0..9 with zlib, 1..2 with the record encoder
 * (0: its default), as above with BACH_DEFLATE_AUTO; NULL when out of
 * memory.
 */
struct bach_deflater *bach_deflater_new(enum bach_deflate_backend backend,
					int level);
void bach_deflater_free(struct bach_deflater *d);

/*
 * Compress len <= BACH_BGZF_MAX_INPUT bytes into one complete gzip member
 * with the BC extra field, at dst (room for BACH_BGZF_MAX_BLOCK bytes).
 * Falls back to a stored block when deflate does not shrink the data.
 * Returns the member's size. A BACH_DEFLATE_ZSTD deflater makes one zstd
 * frame instead (raw blocks when zstd does not shrink the data, so it
 * fits the same room).
 */
size_t bach_bgzf_block(struct bach_deflater *d, uint8_t *dst,
		       const uint8_t *src, size_t len);

/* ---- writer ------------------------------------------------------------ */

enum bach_out_format {
	BACH_OUT_BYU,	  /* raw records */
	BACH_OUT_BYU_GZ,  /* blocked gzip with EOF block */
	BACH_OUT_BYU_ZST, /* zstd frames of whole records, seek table */
};

struct bach_writer_opts {
	enum bach_out_format format;
	int level;   /* compression level; 0 = default */
	int threads; /* compressing threads; 0 = online CPUs */
	enum bach_deflate_backend backend;
};

/*
 * The .byu.zst frame's default size, KiB: 128 blocks, and zstd's window
 * to match (2^23 bytes, whatever the level): no larger than zstd -3 of the
 * whole file on a real program's trace (docs/formats.md section 10).
 */
#define BACH_ZSTD_FRAME_KB   8192
#define BACH_ZSTD_WINDOW_LOG 23

/* Blocks per .byu.zst frame of kb KiB (0: the default). */
static inline size_t bach_zstd_frame_blocks(unsigned kb)
{
	size_t n = ((kb ? kb : BACH_ZSTD_FRAME_KB) + 63) / 64;

	return n < 1 ? 1 : n > 256 ? 256 : n;
}

/*
 * The level when a writer names libdeflate or zlib without one. With
 * BACH_DEFLATE_AUTO (zero), level 0 is the record encoder.
 */
#define BACH_DEFAULT_LEVEL 5

struct bach_writer;

/*
 * Create PATH ("-" is standard output). A named file is written under a
 * temporary name beside it and renamed into place by a successful
 * bach_writer_close(), so a failed write never leaves a whole-looking file.
 */
int bach_writer_open(struct bach_writer **wp, const char *path,
		     const struct bach_writer_opts *o);
/*
 * bach_writer_open() with the size of a .byu.zst's frames: records per
 * frame, KiB, in whole 64 KiB blocks (65280 bytes of records each) rounded
 * up, 64 to 16384; 0: BACH_ZSTD_FRAME_KB. Other formats ignore it. (A
 * function of its own, not a member of bach_writer_opts, whose size is
 * part of libbach.so.0's interface since BACH_0.)
 */
int bach_writer_open_framed(struct bach_writer **wp, const char *path,
			    const struct bach_writer_opts *o,
			    unsigned zstd_frame_kb);
/* n whole records. Errors are sticky: later calls return the same error. */
int bach_writer_write(struct bach_writer *w, const uint8_t *recs, size_t n);
/* Flush, finish (EOF block), sync, rename into place. Returns the first error.
 */
int bach_writer_close(struct bach_writer *w);
/*
 * Free; a writer not closed successfully removes its temporary file. A
 * stream ("-", a FIFO, a device) cannot be removed: one freed unclosed
 * gets the records it was given, in whole members, without the end mark.
 */
void bach_writer_free(struct bach_writer *w);
const char *bach_writer_strerror(const struct bach_writer *w);
uint64_t bach_writer_bytes(const struct bach_writer *w);

#endif
