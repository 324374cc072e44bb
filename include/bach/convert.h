/* SPDX-License-Identifier: MIT */
/*
 * Text forms of records, and the foreign trace formats `bach convert`
 * imports and exports (docs/formats.md says what each direction loses).
 *
 * Imports describe a complete trace taken with the L1 caches off: an
 * instruction fetch becomes NC_I_FETCH (0x90), a load NC_D_READ (0xD0), a
 * store D_WRITE (0xF0); an access of size bytes at addr becomes one record
 * per 8-byte-aligned quadword it touches, in address order, with BE#
 * clearing exactly the bytes touched in that quadword.
 */
#ifndef BACH_CONVERT_H
#define BACH_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- text forms (bach dump, bach convert --to csv) --------------------- */

/* Longest line any formatter below writes, newline included. */
#define BACH_TEXT_MAX 160

/* "%08x %02x %s\n", the reference form; returns the length written. */
size_t bach_fmt_text(char *dst, const uint8_t *rec);
/* the CSV header line; then one line per record */
#define BACH_CSV_HEADER "index,address,be,control,type\n"
size_t bach_fmt_csv(char *dst, const uint8_t *rec, uint64_t index);
/* {"index":N,"address":"0x...","be":"0x..","control":"0x..","type":"..."} */
size_t bach_fmt_jsonl(char *dst, const uint8_t *rec, uint64_t index);
/* v in decimal at d, as few digits as it takes; returns the end. */
char *bach_put_dec(char *d, uint64_t v);

/* ---- imports ----------------------------------------------------------- */

enum bach_import_format {
	BACH_IMPORT_LACKEY,	 /* valgrind --tool=lackey --trace-mem=yes */
	BACH_IMPORT_DIN,	 /* Dinero III/IV "label address" */
	BACH_IMPORT_CIS501,	 /* Penn CIS 501 micro-op traces */
	BACH_IMPORT_P2,		 /* BYU 12-byte Pentium II p2AddrTr records */
	BACH_IMPORT_LAPLACE,	 /* Laplace text "type time length asid addr" */
	BACH_IMPORT_LAPLACE_BIN, /* Laplace 18-byte raw reference records */
	BACH_IMPORT_TRACEMATCHER, /* ISP RAS Trace Matcher MR/MW lines */
	BACH_IMPORT_IDTRACE,	  /* IDtrace 5-byte cache trace entries */
};
#define BACH_IMPORT_NFORMATS 8

/* Bytes of one record of a binary format; 0 for a line format. */
size_t bach_import_unit(enum bach_import_format fmt);

#define BACH_IMPORT_MASK_ADDRESS                                               \
	0x1 /* keep the low 32 bits of wide addresses */

/* Most records one input line or binary record can produce. */
#define BACH_IMPORT_MAX_RECS 64

struct bach_import_stats {
	uint64_t lines;	  /* lines (or binary records) read */
	uint64_t records; /* records produced */
	uint64_t skipped; /* inputs with no BYU equivalent, skipped */
};

struct bach_importer;

/*
 * Open PATH ("-" for standard input) in the given format; input that
 * starts with the gzip magic is inflated as it is read. Returns 0 or
 * -errno with a message in bach_importer_strerror().
 */
int bach_importer_open(struct bach_importer **ip, enum bach_import_format fmt,
		       const char *path, unsigned flags);
/*
 * Next block of records, as bach_reader_read(): n > 0, 0 at the end, or
 * -errno (-EBADMSG for malformed input, with the file and line number or
 * byte offset in the message).
 */
ssize_t bach_importer_read(struct bach_importer *im, const uint8_t **recs);
const char *bach_importer_strerror(const struct bach_importer *im);
void bach_importer_stats(const struct bach_importer *im,
			 struct bach_import_stats *st);
void bach_importer_free(struct bach_importer *im);

/*
 * The pure parsers behind the importers, for tests and fuzzing. Text
 * formats take one line without its newline; binary ones one record of
 * bach_import_unit() bytes.
 * Each writes up to BACH_IMPORT_MAX_RECS records to out and returns how
 * many, 0 for a line that is skipped (and counted in *skipped), or
 * -EBADMSG with a reason in *why.
 */
int bach_import_line(enum bach_import_format fmt, const char *line, size_t len,
		     unsigned flags, uint8_t *out, uint64_t *skipped,
		     const char **why);

/* ---- exports ----------------------------------------------------------- */

enum bach_export_format {
	BACH_EXPORT_DIN,	 /* "label address": 0 read, 1 write, 2 fetch */
	BACH_EXPORT_DINX,	 /* extended din: "r|w|i addr size" */
	BACH_EXPORT_LAPLACE,	 /* "r|w|i timestamp length asid address" */
	BACH_EXPORT_CSV,	 /* bach_fmt_csv with header */
	BACH_EXPORT_LAPLACE_BIN, /* Laplace 18-byte raw reference records */
	BACH_EXPORT_TRACEMATCHER, /* "time clk MR|MWsize addr data" */
	BACH_EXPORT_IDTRACE,	  /* IDtrace 5-byte cache trace entries */
};
#define BACH_EXPORT_NFORMATS 7

/* Laplace's binary record, and IDtrace's cache trace entry, in bytes. */
#define BACH_LAPLACE_BIN_SIZE 18
#define BACH_IDTRACE_SIZE     5

/*
 * Format records[0..n) into dst (room for n * BACH_TEXT_MAX bytes);
 * index is the trace position of records[0]. Records the format cannot
 * express are skipped and added to *skipped. Returns bytes written (the
 * binary formats write whole records of their size, no newline).
 */
size_t bach_export_block(enum bach_export_format fmt, char *dst,
			 const uint8_t *recs, size_t n, uint64_t index,
			 uint64_t *skipped);
/*
 * What an idtrace export carries from one block to the next (zeroed
 * before the first): IDtrace writes one line entry for a run of fetches
 * in one line (docs/formats.md section 7.6), so a fetch in the 16-byte
 * line of the entry just written adds none; folded counts those fetches.
 */
struct bach_export_carry {
	uint64_t line; /* the last entry's line + 1 when a fetch's, else 0 */
	uint64_t folded;
};

/*
 * The same, with time[i] (when not NULL) the time field of records[i]
 * (laplace, laplace-bin, tracematcher) in place of its position: the
 * clocks of a timing sidecar (docs/formats.md sections 3.2, 7.3); and
 * with carry (when not NULL) an idtrace export folds runs of fetches in
 * one line, across blocks (without, every fetch is an entry).
 */
size_t bach_export_block_timed(enum bach_export_format fmt, char *dst,
			       const uint8_t *recs, size_t n, uint64_t index,
			       const uint64_t *time, uint64_t *skipped,
			       struct bach_export_carry *carry);

#endif
