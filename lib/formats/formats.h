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

#define BACH_IMPORT_MASK_ADDRESS                                               \
	0x1 /* keep the low 32 bits of wide addresses */

/* Most records one input line or binary record can produce. */
#define BACH_IMPORT_MAX_RECS 64

/* ---- exports ----------------------------------------------------------- */

/* Laplace's binary record, and IDtrace's cache trace entry, in bytes. */
#define BACH_LAPLACE_BIN_SIZE 18
#define BACH_IDTRACE_SIZE     5

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

/* ---- the formats, one descriptor each ----------------------------------- */

/*
 * Every format `bach convert` reads or writes is one descriptor, and
 * bach_formats[] (lib/formats/formats.c) lists them all, as libsigrok lists its
 * input and output modules. The tools take everything from that list: the
 * names --from and --to accept and their messages, the endings that imply
 * a format, the bash completion's (tools/bach/complete.c), and the list
 * in `bach help convert`, which tests/cli/formats_docs.sh holds the
 * documents to. Adding a format is its line() and/or write(), its
 * descriptor and one row in bach_formats[] (docs/design.md section 7).
 * The list is libbach.a's, for the tools: it is not part of libbach.so
 * (lib/libbach.map).
 */
enum bach_format_kind {
	BACH_FORMAT_BYU,     /* .byu: the trace reader and writer, as is */
	BACH_FORMAT_BYU_GZ,  /* .byu.gz: the same, blocked gzip */
	BACH_FORMAT_BYU_ZST, /* .byu.zst: the same, zstd frames */
	BACH_FORMAT_FOREIGN, /* any other: line() imports, write() exports */
};

/* The way a format goes: --from reads it, --to writes it; diff --as both. */
enum bach_format_dir {
	BACH_FORMAT_IN = 1,
	BACH_FORMAT_OUT = 2,
	BACH_FORMAT_BOTH = 3,
};

struct bach_format {
	const char *name; /* as --from and --to take it */
	enum bach_format_kind kind;
	/*
	 * Import (NULL: none): one input line without its newline, or one
	 * binary record of unit bytes, into at most BACH_IMPORT_MAX_RECS
	 * records at out (flags: BACH_IMPORT_*). Returns how many, 0 for a
	 * line that makes none (one with no BYU equivalent is added to
	 * *skipped), or -EBADMSG with the reason in *why. Pure: nothing is
	 * kept from one line to the next, so tests and fuzzers call it alone;
	 * bach_importer_read() calls it on whole blocks of input.
	 */
	int (*line)(const char *line, size_t len, unsigned flags, uint8_t *out,
		    uint64_t *skipped, const char **why);
	/*
	 * Export (NULL: none): records[0..n) into dst, which has room for
	 * n * BACH_TEXT_MAX bytes; index is the trace position of records[0].
	 * A timed format writes time[i] (when time is not NULL) as the time
	 * field of records[i] in place of its position: the clocks of a
	 * timing sidecar (docs/formats.md sections 3.2, 7.3). carry (NULL:
	 * none) is what goes from one block to the next (idtrace's folding).
	 * Records the format cannot express are skipped and added to
	 * *skipped. Returns the bytes written. Called on whole blocks, once
	 * per block: a format's loop is its own, with no call per record.
	 */
	size_t (*write)(char *dst, const uint8_t *recs, size_t n,
			uint64_t index, const uint64_t *time, uint64_t *skipped,
			struct bach_export_carry *carry);
	const char *help;   /* one line: what it is (`bach help convert`) */
	const char *alias;  /* another name --from or --to takes, or NULL */
	const char *ext;    /* a file name ending that implies it, or NULL */
	size_t unit;	    /* a binary format's record in bytes; 0: lines */
	const char *units;  /* convert's summary's name for the input's
			       units; NULL: "lines", or "records" with a unit */
	const char *header; /* written before an export's records, or NULL */
	bool timed;	    /* write() takes time[] (see write) */
};

/* Every format, NULL-terminated, in the order help and messages list them. */
extern const struct bach_format *const bach_formats[];

/* Whether f goes dir: the byu kinds both ways, the others by line, write
 * (BACH_FORMAT_BOTH: by both). */
bool bach_format_can(const struct bach_format *f, enum bach_format_dir dir);
/* The format called name (or by its alias) that goes dir, or NULL. */
const struct bach_format *bach_format_find(const char *name,
					   enum bach_format_dir dir);

/* ---- projections (bach diff --as) -------------------------------------- */

/*
 * What f (one that goes BACH_FORMAT_BOTH) keeps of records[0..n): they go out
 * through f->write() into text (room for n * BACH_TEXT_MAX bytes) and back in
 * through f->line() into out (room for n * BACH_IMPORT_MAX_RECS records). index
 * is the trace position of records[0]; carry as for write() (zeroed before the
 * first block). Returns the records in out (fewer where f has no place for a
 * record, more where its import splits one), or -EBADMSG when an export
 * does not read back, with the byte offset in text in *bad_at and the
 * reason in *why (a bug of f, never of the trace).
 */
ssize_t bach_format_project(const struct bach_format *f, const uint8_t *recs,
			    size_t n, uint64_t index, char *text, uint8_t *out,
			    struct bach_export_carry *carry, uint64_t *bad_at,
			    const char **why);

/* ---- the importer ------------------------------------------------------ */

struct bach_import_stats {
	uint64_t lines;	  /* lines (or binary records) read */
	uint64_t records; /* records produced */
	uint64_t skipped; /* inputs with no BYU equivalent, skipped */
};

struct bach_importer;

/*
 * Open PATH ("-" for standard input) as format f (one with a line());
 * input that starts with the gzip magic is inflated as it is read.
 * Returns 0 or -errno with a message in bach_importer_strerror().
 */
int bach_importer_open(struct bach_importer **ip, const struct bach_format *f,
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

#endif
