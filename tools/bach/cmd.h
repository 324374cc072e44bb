/* SPDX-License-Identifier: MIT */
/*
 * The `bach` tool: one file per subcommand, and what they share (each
 * declaration below names its file). main.c holds the table of commands
 * and the dispatch.
 *
 * Adding a command NAME:
 * - tools/bach/NAME.c defines `const struct bach_cmd cmd_NAME` (name,
 *   run, a one-line summary for `bach help`, and help: the text
 *   `bach help NAME` and `bach NAME --help` print, starting with
 *   "usage: bach NAME ...", each option on a line of its own that starts
 *   with spaces and the option, its description two spaces after; no
 *   printf escapes such as %%, for it is printed as it is).
 * - cmd_NAME in the extern list below, and a row in cmds[] in main.c
 *   (the order of `bach help`).
 * - The binary it goes in is decided by the libraries it needs: `bach`
 *   itself loads only zlib, libdeflate and jansson (tests/cli/build.sh
 *   checks that it links no driver's library, nor cairo). A command that
 *   runs the drivers, libusb or libsigrok goes in bach-acquire: its
 *   object in the Makefile's ACQ_CMD_OBJ, and a stub of the same name in
 *   exec_acquire.c (help NULL) that runs it there. One that draws with
 *   cairo goes in bach-draw: DRAW_CMD_OBJ and exec_draw.c. Any other is
 *   built into all three binaries by the Makefile's wildcard, with
 *   nothing to add.
 * - docs/man/bach.1.scd: an entry *NAME* under COMMANDS, and every
 *   --option its help lists named in the page (tests/cli/man.sh checks
 *   both against `bach help`).
 * - tools/completion/bach.bash needs nothing for the command and its
 *   options (`bach __complete` reads the command table and the getopt
 *   table run() parses with; tests/cli/completion.sh); only values of an
 *   option or words other than file names want a row in .values, as
 *   ctl's verbs have.
 * - Tests: tests/cli/NAME.sh (tests/README.md) for what it does;
 *   tests/cli/usage.sh, man.sh and completion.sh then cover its help.
 * - README.md (the commands under "Status", and a section when users
 *   need one) and docs/design.md (the list of subcommands).
 */
#ifndef BACH_TOOL_H
#define BACH_TOOL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bach/trace.h"
#include "lib/analysis/partial.h"
#include "lib/complete.h"
#include "lib/exit.h"
#include "lib/io/timing.h"

struct rec_filter; /* --type, --addr, --port: below */

struct bach_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const char *help; /* usage and options, printed by `bach help NAME`;
			     NULL: run says (exec_helper.c) */
	/*
	 * The shell completion (complete.c) takes the options from the
	 * getopt table run() parses with, and these: what an option's
	 * value or an operand completes to (NULL: file names; --from, --to
	 * and --as complete formats anyway), and for a command whose
	 * options another table holds (capture: bachd's), that table.
	 */
	const struct complete_values *values;
	const struct option *(*options)(const char **shortopts);
};

/*
 * Every command's getopt_long() is this one (complete.c): as getopt_long(),
 * except that `bach __complete` and `bach __options` catch the tables.
 */
int cmd_getopt_long(int argc, char *const *argv, const char *shortopts,
		    const struct option *longopts, int *longindex);
#define getopt_long cmd_getopt_long
/* `bach __complete WORD...` and `bach __options CMD` (complete.c) */
int complete_main(const struct bach_cmd *const *cmds, int argc, char **argv);
int options_main(const struct bach_cmd *c);
/* the command named NAME (main.c), NULL when none */
const struct bach_cmd *cmd_find(const char *name);
/* c's getopt tables, as `bach __options` reads them (complete.c) */
void cmd_options(const struct bach_cmd *c, const char **shortopts,
		 const struct option **longopts);
/* c takes --range and --partial: bach plan --slurm can split its runs */
bool cmd_splits(const struct bach_cmd *c);

extern const struct bach_cmd cmd_dump, cmd_stat, cmd_verify, cmd_convert,
	cmd_gen, cmd_capture, cmd_ctl, cmd_decode, cmd_recover, cmd_sim,
	cmd_mrc, cmd_plot, cmd_report, cmd_diff, cmd_index, cmd_ls, cmd_marks,
	cmd_plan, cmd_merge;

/* Messages to stderr as "bach CMD: ..." (msg.c). */
extern const char *prog_cmd;
__attribute__((format(printf, 1, 2))) void errmsg(const char *fmt, ...);
/* Usage error: message, a pointer to `bach help CMD`, returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int usage_error(const char *fmt, ...);
/*
 * v as one line of compact JSON, ASCII, reals to 15 significant digits,
 * on standard output; v is freed (msg.c). EXIT_OK, or EXIT_USAGE after
 * saying memory ran out.
 */
struct json_t;
int put_json(struct json_t *v);
/* Print the command's help to stdout; returns EXIT_OK (main.c). */
int print_help(const struct bach_cmd *c);

/*
 * Whole non-negative decimal (or 0x hex) number; false when malformed
 * (args.c).
 */
bool parse_u64(const char *s, uint64_t *v);

/* Buffered output to a file descriptor, flushed in large writes (obuf.c). */
struct obuf {
	int fd;
	char *buf;
	size_t len, cap;
	int err; /* sticky -errno */
};
int obuf_init(struct obuf *o, int fd, size_t cap);
int obuf_flush(struct obuf *o);
void obuf_free(struct obuf *o);
/* Room for at least n more bytes at o->buf + o->len (flushing if needed). */
static inline char *obuf_room(struct obuf *o, size_t n)
{
	if (o->cap - o->len < n)
		obuf_flush(o);
	return o->buf + o->len;
}

/* Output format from a file name: blocked gzip when it ends in .gz (gen.c) */
enum bach_out_format out_format_for(const char *path);

/* The index of w in the NULL-terminated words, or -1 (args.c). */
int word_find(const char *const *words, const char *w);

/* s ends with suffix (args.c). */
bool ends_with(const char *s, const char *suffix);

/*
 * For commands that write files (signals.c): SIGHUP, SIGINT and SIGTERM
 * remove the temporary output (lib/io/outfile.h) and then kill the process
 * as they would have, so the shell sees the signal. Ignored signals stay
 * ignored.
 */
void catch_signals(void);

/*
 * Refuse an output that would destroy an input (iocheck.c): OUT is the same
 * file as one of the nin inputs (device and inode, so through links too; "-"
 * is standard input or output), or OUT would be created inside an input that
 * is a capture directory. NULL inputs are passed over. Returns EXIT_OK, or
 * EXIT_USAGE after saying which.
 */
int check_output(const char *out, const char *const *in, size_t nin);

/*
 * Refuse "-" among the n inputs more than once (iocheck.c): standard input
 * can be read only once (a second reader would take the rest of the stream,
 * or nothing). Returns EXIT_OK, or EXIT_USAGE after saying so.
 */
int stdin_once(char *const *in, int n);

/*
 * Run the command in argv[0] from BINARY, another binary of the tool
 * (BINDIR/../lib/bach or LIBEXECDIR); returns only when that fails
 * (exec_helper.c).
 */
int exec_helper(const char *binary, int argc, char **argv);

/*
 * --time (timecol.c): the timing sidecars of the trace a reader reads.
 * whole: every file is read to its end (no range, no count), so each
 * sidecar must end with its file's records. Each returns EXIT_OK or the
 * status after a message naming the sidecar and the offset.
 */
/* The timing of a trace read with a bach_reader (bach_reader_times()). */
struct trace_times {
	struct bach_reader *r;
	bool whole;  /* read whole: a sidecar's extra entries are errors */
	uint64_t hz; /* the clock rate of the block's sidecar, 0 unknown */
};
int times_open(struct trace_times *tt, bool whole);
/* The clocks of the n records r just handed out, in *clk. */
int times_block(struct trace_times *tt, struct bach_reader *r, size_t n,
		const uint64_t **clk);
int times_finish(struct trace_times *tt);
void times_close(struct trace_times *tt);
/* "SEPclockSEPseconds" ("-" for what is not known); at most 48 bytes. */
size_t fmt_time(char *dst, uint64_t clk, uint64_t hz, char sep);

/*
 * --time of bach stat (stat.c), for bach report too: what the clocks say.
 * Cycles are the records with a clock and the records gap markers with a
 * clock say were lost (they were cycles on the bus too); the utilisation
 * is cycles after the first per bus clock from the first to the last
 * (docs/analysis.md).
 */
struct tstat {
	uint64_t timed, untimed, cycles;
	uint64_t first, last, hz;
	uint64_t sec, sec_cycles, best_sec, best_cycles;
};
void tstat_add(struct tstat *ts, const uint8_t *p, const uint64_t *clk,
	       size_t n, uint64_t hz);
/* bach stat --time's lines */
void print_time_text(FILE *f, const struct tstat *ts);

/* bach stat's order of the valid types (stat.c), for bach report too */
#define STAT_NTYPES 10
extern const unsigned type_order[STAT_NTYPES];

/*
 * Open every TRACE argument into a reader; message and status on failure
 * (traces.c).
 */
int open_traces(struct bach_reader **rp, int argc, char **argv);

/*
 * Read the TRACE arguments as one trace (traces.c), handing add() whole
 * blocks of records in order, the ones filter f keeps (NULL: all).
 * Returns EXIT_OK, or the status after saying what was wrong (the file
 * and offset of damage). *records: how many were read, before filtering.
 */
int read_traces(int argc, char **argv, struct rec_filter *f,
		void (*add)(void *ctx, const uint8_t *recs, size_t n),
		void *ctx, uint64_t *records);
/*
 * The same over --range START:END, and the CRC-32 of the records read
 * (partial_crc(), before filtering) in *crc when crc is not NULL.
 */
int read_traces_range(int argc, char **argv, struct rec_filter *f,
		      uint64_t start, uint64_t end,
		      void (*add)(void *ctx, const uint8_t *recs, size_t n),
		      void *ctx, uint64_t *records, uint32_t *crc);

/*
 * --range START:END (range.c): records START to END-1; either may be
 * left out: from the first, to the last. Returns false when malformed or
 * END < START.
 */
bool parse_range(const char *s, uint64_t *start, uint64_t *end);
/* getopt's --range: parse_range(), or the usage error saying why. */
int range_arg(const char *s, uint64_t *start, uint64_t *end);
/* Seek r to the range; message and status on failure. */
int apply_range(struct bach_reader *r, uint64_t start, uint64_t end);
/*
 * The records a command reads: --between A B when ba is set (between.c;
 * *start becomes A's position), else --range *start:end; both at once
 * is a usage error.
 */
int select_records(struct bach_reader *r, int argc, char **argv, const char *ba,
		   const char *bb, uint64_t *start, uint64_t end);

/*
 * --type LIST, --addr LO-HI, --port LO-HI (filter.c): the records a
 * command keeps, whole blocks at a time. Each command's option table has
 * the three rows with these codes, and hands them to filter_arg().
 */
enum { FILTER_TYPE = 0x300, FILTER_ADDR, FILTER_PORT };
struct rec_filter {
	bool on, ready, by_type, by_addr, by_port;
	uint16_t types;	       /* --type: bit n keeps type n */
	uint64_t lo[2], hi[2]; /* --addr, --port: inclusive byte addresses */
	/* per control byte: the bytes that keep a record, or all (filter.c) */
	uint64_t tlo[256], thi[256];
	uint8_t keep[256];
	uint8_t *buf;  /* the kept records of the last block */
	uint64_t *clk; /* and their clocks */
	uint32_t *off; /* and their places in the block read */
	size_t cap;
};
/*
 * getopt's FILTER_*: parse arg into f; EXIT_OK or the usage error. Any
 * other c is the usage error "bad option": a command's default case.
 */
int filter_arg(struct rec_filter *f, int c, const char *arg);
/*
 * Keep the records of the block *p of n (and their clocks *clk, when clk
 * and *clk are not NULL) that f keeps: *p and *clk then point at them in
 * f's buffers, valid until the next call, and f->off[i] is the place of
 * the i-th kept one in the block. Returns how many, n unchanged when f is
 * NULL or off, or -ENOMEM. Gap markers are always kept.
 */
ssize_t filter_block(struct rec_filter *f, const uint8_t **p,
		     const uint64_t **clk, size_t n);
void filter_free(struct rec_filter *f);
/*
 * The filter as the canonical options of a partial (--partial): {"type":
 * MASK, "addr": [LO, HI], "port": [LO, HI]}, null for one not given.
 */
json_t *filter_json(const struct rec_filter *f);
#define FILTER_HELP                                                            \
	"      --type LIST   only these record types, as bach dump prints\n"   \
	"                    them, or groups: fetch, read, write, io,\n"       \
	"                    special, invalid (comma-separated)\n"             \
	"      --addr LO-HI  only memory cycles with a byte in LO..HI\n"       \
	"      --port LO-HI  only I/O cycles with a port in LO..HI (with\n"    \
	"                    --addr: either); gap markers are always kept\n"

/*
 * --between A B (between.c): limit r to the records of the one capture
 * directory argv[0] from the first mark matching A up to (not including)
 * the next mark matching B after it; *first is A's trace position.
 * EXIT_OK, or a message and EXIT_USAGE (a mark not found, named).
 */
int between_window(struct bach_reader *r, int argc, char **argv, const char *a,
		   const char *b, uint64_t *first);
/*
 * The marks of the capture directory dir (between.c): its manifest into
 * *m (bach_manifest_free() it after EXIT_OK), *order its marks' indexes
 * by trace position and then manifest line (free() it), *base the
 * records retention removed, before the trace a reader reads. EXIT_OK,
 * or the message, starting with what, and the status: EXIT_USAGE for a
 * directory without a manifest.
 */
struct bach_manifest;
int load_marks(const char *what, const char *dir, struct bach_manifest *m,
	       size_t **order, uint64_t *base);
/* getopt's --between A: B is the next argument. EXIT_USAGE without one. */
int between_arg(int argc, char **argv, const char **a, const char **b);
#define BETWEEN_HELP                                                           \
	"      --between A B  only the records from the first mark matching "  \
	"A up\n"                                                               \
	"                    to the next mark matching B after it (a "         \
	"capture\n"                                                            \
	"                    directory; A, B: a mark's text, or a marker's "   \
	"address)\n"

/*
 * Records as every command counts them (gaps.c; docs/formats.md section
 * 5): "N records", or with gap markers "N records (D data, G gap markers
 * standing for L lost)". Returns the length written to d.
 */
size_t fmt_records(char *d, size_t cap, uint64_t records, uint64_t markers,
		   uint64_t lost);

/*
 * The cause of a gap marker (gaps.c): the record does not carry it; the
 * manifest's gap event at its position does. One directory's manifest is
 * kept at a time; zero the struct before the first call.
 */
struct bach_manifest;
struct gap_causes {
	char dir[4096], seg[64];
	struct bach_manifest *m;
	bool loaded, seg_known;
	uint64_t seg_start;
	struct gap_span *spans;
	size_t nspans;
};
/*
 * The cause of the gap marker that is record idx of file path (a
 * capture's segment, as bach_reader_file() names it): overflow, frames,
 * corrupt, ring, device, disk, or "unknown" (no manifest beside it, or
 * no gap event there).
 */
const char *gap_cause(struct gap_causes *g, const char *path, uint64_t idx);
/*
 * The same for the gap marker at position pos of trace, one path as the
 * user gave it: a capture directory (pos counts the records of its
 * segments from the first), a file (pos is its record), or "-".
 */
const char *gap_cause_at(struct gap_causes *g, const char *trace, uint64_t pos);
void gap_causes_free(struct gap_causes *g);
/*
 * A gap marker's line (docs/formats.md section 5), dump's, convert
 * --to csv's and diff's: the type is GAP:lost=N:cause=C (jsonl: "GAP" and the
 * two as members), the other fields as any record's. index is its trace
 * position (csv, jsonl); under BACH_TEXT_MAX bytes into d.
 */
enum gap_form { GAP_TEXT, GAP_CSV, GAP_JSONL };
size_t fmt_gap(char *d, const uint8_t *p, uint64_t index, const char *cause,
	       enum gap_form form);

/*
 * --partial FILE (partial.c; docs/formats.md section 11): a command run
 * with --range A:B writes its state instead of printing, for bach merge.
 * trace_identity(): the TRACE arguments' identity, a JSON array (a
 * capture's id and its segments' CRCs, a file's size); NULL when memory
 * ran out. partial_write() writes the partial (steals options, trace and
 * data; its binary section the words of words, NULL for none, which it
 * frees) whole or not at all, "-" to standard output; partial_load() reads
 * one, with a message naming the file. Each returns EXIT_OK or the status.
 * partial_crc(): the CRC-32 of zlib's crc32() (libdeflate's, faster), for
 * the records of the range.
 */
struct bach_partial;
struct bach_partial_words;
json_t *trace_identity(int argc, char **argv);
int partial_write(const char *out, const char *cmd, json_t *options,
		  json_t *trace, uint64_t start, uint64_t end, uint64_t records,
		  uint32_t crc, json_t *data, struct bach_partial_words *words);
int partial_load(const char *path, struct bach_partial *p);
uint32_t partial_crc(uint32_t crc, const uint8_t *p, size_t n);
/* partial_write() in two steps: the header (steals options and trace;
 * NULL when memory ran out), to which a command may add, then the file
 * (steals head and data). */
json_t *partial_head(const char *cmd, json_t *options, json_t *trace,
		     uint64_t start, uint64_t end, uint64_t records,
		     uint32_t crc);
int partial_write_head(const char *out, json_t *head, json_t *data);
int partial_write_words(const char *out, json_t *head, json_t *data,
			struct bach_partial_words *words);
/*
 * What bach merge hands a command's merge function (merge.c): the
 * partials, checked to share command, options, version and trace and to
 * follow one another, sorted by range; how to print (json, csv), or the
 * partial to write instead (out) with its header's range, records and
 * CRC already merged, and its options and trace.
 */
struct merge_job {
	struct bach_partial *p;
	const char **names; /* the partials' file names, in the same order */
	size_t n;
	bool json, csv;
	const char *out;
	uint64_t start, end, records;
	uint32_t crc;
};
/* partial_write() for a merged job: its range, options and trace. */
int merge_write(const struct merge_job *j, json_t *data,
		struct bach_partial_words *words);
int stat_merge(const struct merge_job *j); /* stat.c */
int mrc_merge(const struct merge_job *j);  /* mrc.c */

/*
 * bach sim (sim.c): one option of a cache configuration (the code of
 * --l1i, --l1d, --l1, --l2, --l3, --tlb: an enum bach_sim_cache; 's':
 * --seed) into cfg; 0, or -EINVAL with the message in why ("--l2 given
 * twice", "--l1d: SIZE ..."). sim_print(): the results of a finished
 * simulator, as bach sim prints them (JSON: one object, no newline).
 */
struct bach_sim;
struct bach_sim_config;
int sim_option(struct bach_sim_config *cfg, int c, const char *arg, char *why,
	       size_t len);
void sim_print(const struct bach_sim *s, const struct bach_sim_config *cfg,
	       bool json);
/*
 * bach sim --configs FILE (sim_configs.c): every configuration of FILE,
 * each the command line's cfg with the line's options added, simulated
 * in one pass over records start to end-1 of the TRACE arguments (0,
 * UINT64_MAX: all) on threads threads (0: as many as CPUs) and printed
 * in FILE's order, or with partial their partials written there in one
 * file (docs/formats.md section 11). Returns the exit status.
 */
int sim_configs(const char *file, const struct bach_sim_config *cfg, bool json,
		int threads, struct rec_filter *f, uint64_t start, uint64_t end,
		const char *partial, int argc, char **argv);
/* One configuration of a sweep: line of FILE, its words (one space
 * apart), its configuration and simulator. */
struct sim_line {
	struct bach_sim_config cfg;
	struct bach_sim *s;
	unsigned line;
	char *text;
};
/* The sweep's n finished simulators as bach sim --configs FILE prints
 * them (sim_configs.c); bach_sim_finish() is called on each. */
void sim_configs_print(const char *file, struct sim_line *c, size_t n,
		       bool json);
/*
 * bach sim over a range (sim_part.c, docs/analysis.md section 7): read
 * the records START to END-1 of the TRACE arguments through the filter
 * into s, each at its position in the trace (random replacement draws by
 * it); with partial, write s's counts and state there instead of leaving
 * them to print. sim_write_part(): the partial of a range of records
 * records (CRC crc) read into the n simulators of c: a sweep's when file
 * is its FILE, else bach sim's of c[0] alone. sim_merge(): bach merge's
 * for both, re-reading the start of each chunk from the trace its
 * partial names.
 */
int sim_read(struct bach_sim *s, const struct bach_sim_config *cfg,
	     struct rec_filter *f, int argc, char **argv, uint64_t start,
	     uint64_t end, const char *partial);
int sim_write_part(const char *out, const char *file, const struct sim_line *c,
		   size_t n, const struct rec_filter *f, int argc, char **argv,
		   uint64_t start, uint64_t end, uint64_t records,
		   uint32_t crc);
int sim_merge(const struct merge_job *j);
/* The filter filter_json() describes, into f (zeroed); false when o is
 * not one. */
bool filter_from_json(struct rec_filter *f, const json_t *o);

#endif
