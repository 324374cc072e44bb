/* SPDX-License-Identifier: MIT */
/*
 * The capture board in software (docs/board-protocol.md): what the fake
 * driver runs beside the host, and what the emulated USB board of the
 * tests (tests/helpers/usb_board.c) answers URBs with. One model, so a
 * capture through the real libusb path can be checked against the fake
 * board and against `bach gen` record for record.
 *
 * The board samples the `bach gen` workload as its bus (or one of the
 * test patterns), frames it exactly as the gateware does, and injects the
 * faults a real board or link produces, where it would produce them. It
 * obeys the protocol's commands (board_write()); the fake driver, which
 * has no command channel, calls board_start() directly.
 *
 * Not thread-safe, except stall_episodes and stalled_ns, which a host
 * thread may add to while the board thread runs (the fake board counts
 * the host's stalls as its own, as a real board holding the CPU would).
 */
#ifndef BACH_BOARD_MODEL_H
#define BACH_BOARD_MODEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/bus/frame.h"
#include "lib/bus/gen.h"
#include "lib/options.h"

/* a 66 MHz Pentium bus; a plain number, which help texts spell with
 * BOARD_CLOCK_TEXT */
#define BOARD_CLOCK_HZ	   66666666
#define BOARD_STR_(x)	   #x
#define BOARD_STR(x)	   BOARD_STR_(x)
#define BOARD_CLOCK_TEXT   BOARD_STR(BOARD_CLOCK_HZ)
#define BOARD_FIFO_RECORDS (1u << 16)

/* The board's behaviour: the fake driver's options (docs/bachd.md). */
struct board_opts {
	uint64_t records; /* stop after this many sampled (0: never) */
	uint64_t seed;
	uint64_t rate; /* records/s, 0: as fast as possible */
	unsigned frame_recs;
	bool timing;
	/* faults: every Nth frame (0: never) */
	uint64_t drop_every, corrupt_every, overflow_every;
	uint32_t overflow_count;
	uint64_t stall_every, stall_ms; /* the board holds the CPU */
	uint64_t disconnect_at;		/* sampled-record index (0: never) */
	unsigned disconnect_secs;
	uint64_t status_every; /* data frames between status frames */
	/* another master takes the bus (HOLD/HLDA) for foreign_cycles */
	uint64_t foreign_every;
	uint32_t foreign_cycles;
};

/* The fake driver's options: each row names its member of board_opts. */
extern const struct bach_optdesc board_options[];

/* The defaults of board_options[]. */
void board_opts_defaults(struct board_opts *o);

/* Take the parsed values of board_options[] (each one that is set). */
void board_opts_from(struct board_opts *o, const struct bach_optval *v);

/*
 * Take one option. Returns 0, -ENOENT for a key that is not a board option
 * (msg untouched), or -EINVAL with msg saying what is wrong with the value.
 */
int board_opts_set(struct board_opts *o, const char *key, const char *val,
		   char *msg, size_t cap);

struct board_model {
	struct board_opts o;
	struct bach_board_identity id; /* IDENTIFY's answer (caller fills) */
	struct bach_board_config cfg;  /* the last CONFIGURE */

	/* the capture session, reset by START */
	bool running;	/* sampling */
	bool last_sent; /* the LAST frame went out */
	struct bach_gen gen;
	uint32_t lfsr;	/* LFSR test pattern state */
	uint64_t index; /* records sampled, lost ones included */
	uint64_t lost;	/* lost to the FIFO (overflow faults) */
	uint64_t frames;
	uint64_t counted_from; /* index at START or RESET_COUNTERS */
	uint64_t lost_from;
	uint64_t t_start; /* ns, for rate pacing */
	uint32_t data_seq;

	/* counted from power-on */
	uint32_t status_seq, ident_seq, ack_seq;
	_Atomic uint64_t stall_episodes, stalled_ns;
	_Atomic uint64_t offbus; /* another master's ADS#s (foreign) */

	/* Hold the CPU for ns (a stall). The fake board sleeps. */
	void (*nap)(void *ctx, uint64_t ns);
	void *nap_ctx;

	uint8_t *recs; /* one frame's records */
	uint16_t *deltas;
	uint8_t *tmp; /* workload records the filter has not seen */
	size_t tmp_len, tmp_off;
	/* the host's commands, found by the one frame parser (lib/bus/frame.c)
	 */
	struct bach_parser *cmds;
	void (*emit)(void *ctx, const uint8_t *frames, size_t n);
	void *emit_ctx; /* board_write()'s, while it runs */
};

/* The largest command payload the board takes (the gateware's buffer). */
#define BOARD_CMD_MAX_PAYLOAD 256

/*
 * Set up a board (allocates; -ENOMEM). Its configuration starts as the
 * power-on default (all zero) with timing taken from the options, and
 * its identity zeroed but for the clock and FIFO size.
 */
int board_init(struct board_model *m, const struct board_opts *o);
void board_free(struct board_model *m);

/* Power cycle: the session, the configuration and the counters reset. */
void board_power_on(struct board_model *m);

/* START without the command: index, timestamp and counters from zero. */
void board_start(struct board_model *m);

/* The board still has records to sample (running and below `records`). */
bool board_sampling(const struct board_model *m);

/* Most bytes one board_step() appends. */
size_t board_step_room(const struct board_model *m);

/* board_step() events */
#define BOARD_EV_DISCONNECT 0x1 /* sampling passed disconnect_at (once) */

/*
 * One turn of the board while board_sampling(): a stall or a FIFO
 * overflow when one is due, the next data frame (dropped or corrupted on
 * the link when one is due) and a status frame when one is due, appended
 * at out. Returns the bytes appended; *ev gets BOARD_EV_* bits.
 */
size_t board_step(struct board_model *m, uint8_t *out, unsigned *ev);

/*
 * The board stops sampling: the LAST frame (an empty one) unless it went
 * already, then the final status, at out (BOARD_FINISH_ROOM). STOP does
 * this; so does a board that has sampled its `records`.
 */
#define BOARD_FINISH_ROOM                                                      \
	(2 * BACH_FRAME_HDR + 2 * BACH_FRAME_CRC + BACH_STATUS_SIZE)
size_t board_finish(struct board_model *m, uint8_t *out);

/*
 * When the next record is due at the configured rate (bach_now_ns()
 * clock), or 0 with no rate.
 */
uint64_t board_due_ns(const struct board_model *m);

/* A status frame with the counters now, at out (BACH_FRAME_MAX room). */
size_t board_status(struct board_model *m, uint8_t *out);

/*
 * The host's OUT stream: commands are read with the rules of the frame
 * parser (a damaged command is ignored) and executed; each reply, a few
 * frames, goes to emit() in order. STOP sends the LAST frame, when none
 * went yet, and the final status before its ACK.
 */
void board_write(struct board_model *m, const uint8_t *buf, size_t len,
		 void (*emit)(void *ctx, const uint8_t *frames, size_t n),
		 void *ctx);

#endif
