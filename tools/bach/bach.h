/* SPDX-License-Identifier: MIT */
/* The `bach` tool: one binary, one file per subcommand. */
#ifndef BACH_TOOL_H
#define BACH_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bach/exit.h"
#include "bach/timing.h"
#include "bach/trace.h"

struct bach_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	const char *help; /* usage and options, printed by `bach help NAME`;
			     NULL: run says (exec_helper.c) */
};

extern const struct bach_cmd cmd_dump, cmd_stat, cmd_verify, cmd_convert,
	cmd_gen, cmd_capture, cmd_ctl, cmd_decode, cmd_recover, cmd_sim,
	cmd_mrc, cmd_plot, cmd_report, cmd_diff, cmd_index, cmd_ls;

/* Messages to stderr as "bach CMD: ...". */
extern const char *prog_cmd;
__attribute__((format(printf, 1, 2))) void errmsg(const char *fmt, ...);
/* Usage error: message, a pointer to `bach help CMD`, returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int usage_error(const char *fmt, ...);
/* Print the command's help to stdout; returns EXIT_OK. */
int print_help(const struct bach_cmd *c);

/* Whole non-negative decimal (or 0x hex) number; false when malformed. */
bool parse_u64(const char *s, uint64_t *v);

/* Buffered output to a file descriptor, flushed in large writes. */
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

/* Output format from a file name: blocked gzip when it ends in .gz. */
enum bach_out_format out_format_for(const char *path);

bool ends_with(const char *s, const char *suffix);

/*
 * For commands that write files: SIGHUP, SIGINT and SIGTERM remove the
 * temporary output (bach/outfile.h) and then kill the process as they
 * would have, so the shell sees the signal. Ignored signals stay ignored.
 */
void catch_signals(void);

/*
 * Refuse an output that would destroy an input: OUT is the same file as
 * one of the nin inputs (device and inode, so through links too; "-" is
 * standard input or output), or OUT would be created inside an input that
 * is a capture directory. NULL inputs are passed over. Returns EXIT_OK, or
 * EXIT_USAGE after saying which.
 */
int check_output(const char *out, const char *const *in, size_t nin);

/*
 * Refuse "-" among the n inputs more than once: standard input can be read
 * only once (a second reader would take the rest of the stream, or
 * nothing). Returns EXIT_OK, or EXIT_USAGE after saying so.
 */
int stdin_once(char *const *in, int n);

/*
 * Run the command in argv[0] from BINARY, another binary of the tool
 * (BINDIR/../lib/bach or LIBEXECDIR); returns only when that fails.
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

/* Open every TRACE argument into a reader; message and status on failure. */
int open_traces(struct bach_reader **rp, int argc, char **argv);

/*
 * Read the TRACE arguments as one trace, handing add() whole blocks of
 * records in order. Returns EXIT_OK, or the status after saying what was
 * wrong (the file and offset of damage). *records: how many were read.
 */
int read_traces(int argc, char **argv,
		void (*add)(void *ctx, const uint8_t *recs, size_t n),
		void *ctx, uint64_t *records);

/*
 * --range START:END (records START to END-1; either may be left out: from
 * the first, to the last). Returns false when malformed or END < START.
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
 * --between A B (between.c): limit r to the records of the one capture
 * directory argv[0] from the first mark matching A up to (not including)
 * the next mark matching B after it; *first is A's trace position.
 * EXIT_OK, or a message and EXIT_USAGE (a mark not found, named).
 */
int between_window(struct bach_reader *r, int argc, char **argv, const char *a,
		   const char *b, uint64_t *first);
/* getopt's --between A: B is the next argument. EXIT_USAGE without one. */
int between_arg(int argc, char **argv, const char **a, const char **b);
#define BETWEEN_HELP                                                           \
	"      --between A B  only the records from the first mark matching "  \
	"A up\n"                                                               \
	"                    to the next mark matching B after it (a "         \
	"capture\n"                                                            \
	"                    directory; A, B: a mark's text, or a marker's "   \
	"address)\n"

#endif
