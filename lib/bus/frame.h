/* SPDX-License-Identifier: MIT */
/*
 * The capture board's USB protocol (docs/board-protocol.md): frames built
 * by the board (and by the fake driver and the gateware simulation) and
 * read by one parser on the host.
 *
 * Every frame, either direction:
 *
 *   off  size  field
 *     0     4  magic "BACH"
 *     4     1  protocol version (BACH_PROTO_VERSION)
 *     5     1  type (enum bach_frame_type)
 *     6     1  flags (BACH_FF_*)
 *     7     1  header length (BACH_FRAME_HDR)
 *     8     4  sequence number of this frame type, little-endian
 *    12     4  payload length in bytes, little-endian
 *    16     8  type-specific u64 (data: index of the first record)
 *    24     8  type-specific u64 (data: board timestamp of the first record)
 *    32     4  type-specific u32 (data: record count)
 *    36     4  type-specific u32 (data: records lost before this frame)
 *    40     n  payload
 *  40+n     4  CRC-32 (IEEE 802.3, zlib's crc32) of bytes 0 .. 40+n-1
 *
 * Integers are little-endian; records in a data payload are BYU records
 * (big-endian address) exactly as on disk. Values are stored on the board
 * and on disk: never renumber, only append.
 */
#ifndef BACH_FRAME_H
#define BACH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BACH_FRAME_MAGIC       "BACH"
#define BACH_PROTO_VERSION     1
#define BACH_FRAME_HDR	       40
#define BACH_FRAME_CRC	       4
#define BACH_FRAME_MAX_RECORDS 65535
/* Largest payload a parser accepts: full records with 16-bit deltas. */
#define BACH_FRAME_MAX_PAYLOAD (BACH_FRAME_MAX_RECORDS * 8)
/* Largest frame: header, largest payload, CRC. */
#define BACH_FRAME_MAX                                                         \
	(BACH_FRAME_HDR + BACH_FRAME_MAX_PAYLOAD + BACH_FRAME_CRC)

/* Payload sizes in protocol 1 (later minor versions only append). */
#define BACH_CONFIG_SIZE   16
#define BACH_STATUS_SIZE   56 /* 48 before gateware 1.1 */
#define BACH_IDENTITY_SIZE 64

enum bach_frame_type {
	BACH_FT_DATA = 1,     /* board -> host: records */
	BACH_FT_STATUS = 2,   /* board -> host: counters */
	BACH_FT_IDENTITY = 3, /* board -> host: reply to IDENTIFY */
	BACH_FT_ACK = 4,      /* board -> host: reply to any other command */
	BACH_FT_COMMAND = 16, /* host -> board */
};

/* Data frame flags. */
#define BACH_FF_FIRST	 0x01 /* first frame after START */
#define BACH_FF_LAST	 0x02 /* last frame before the board stopped */
#define BACH_FF_OVERFLOW 0x04 /* the board lost records before this frame */
#define BACH_FF_TIMING	 0x08 /* payload starts with one u16 delta a record */

/* Commands: in the first u32 type-specific field (offset 32) of a COMMAND. */
enum bach_command {
	BACH_CMD_IDENTIFY = 1,
	BACH_CMD_START = 2,
	BACH_CMD_STOP = 3,
	BACH_CMD_CONFIGURE =
		4, /* payload: struct bach_board_config, 16 bytes */
	BACH_CMD_STATUS = 5,
	BACH_CMD_RESET_COUNTERS = 6,
};

/* ACK result: in the second u32 type-specific field (offset 36). */
enum bach_ack_result {
	BACH_ACK_OK = 0,
	BACH_ACK_UNKNOWN = 1,	  /* command not known to this gateware */
	BACH_ACK_INVALID = 2,	  /* bad payload or out-of-range value */
	BACH_ACK_BUSY = 3,	  /* not allowed while capturing */
	BACH_ACK_UNSUPPORTED = 4, /* needs a capability the board lacks */
};

enum bach_loss_policy {
	BACH_POLICY_STALL = 0,
	BACH_POLICY_DROP = 1,
};

/* CONFIGURE payload (16 bytes, little-endian). */
struct bach_board_config {
	uint8_t policy;	      /* enum bach_loss_policy */
	uint8_t timing;	      /* 1: data frames carry per-record deltas */
	uint8_t test_pattern; /* 0 bus, 1 counter, 2 LFSR */
	uint8_t reserved;
	uint16_t type_filter; /* bit t set: record cycles of type t; 0 = all */
	uint16_t high_water;  /* stall: FIFO fill (1/65536ths) to hold */
	uint16_t low_water;   /* stall: FIFO fill to release */
	uint16_t reserved2[3];
};

/* STATUS payload (56 bytes, little-endian; a shorter one reads as zeros). */
struct bach_board_status {
	uint32_t fifo_fill;	 /* records in the FIFO now */
	uint32_t fifo_size;	 /* its capacity, records */
	uint64_t records;	 /* records sampled since reset */
	uint64_t overflow;	 /* records lost to a full FIFO (drop) */
	uint32_t stall_episodes; /* holds asserted (stall) */
	uint32_t clock_hz;	 /* bus clock, Hz */
	uint64_t stalled_clocks; /* clocks spent holding the CPU */
	uint64_t reserved;
	uint64_t offbus; /* ADS#s while the CPU was off the bus (HLDA,
			    BOFF#): no records (1.1; 0 from a 1.0 board) */
};

/* IDENTITY payload (64 bytes). */
struct bach_board_identity {
	uint16_t vendor, product;
	uint8_t gw_major, gw_minor;
	uint16_t capabilities; /* BACH_CAP_* */
	uint32_t clock_hz;
	uint32_t fifo_records;
	char serial[16]; /* NUL-padded */
	char name[32];	 /* NUL-padded */
};

#define BACH_CAP_TIMING	      0x1
#define BACH_CAP_STALL	      0x2
#define BACH_CAP_TEST_PATTERN 0x4
#define BACH_CAP_FILTER	      0x8

/* ---- building frames --------------------------------------------------- */

/*
 * Builders write one whole frame, CRC included, at dst and return its size.
 * They cannot fail; dst must have room (BACH_FRAME_MAX always suffices).
 */

/* Bytes a data frame of n records takes (with deltas when timing). */
size_t bach_frame_data_size(size_t n, bool timing);

/*
 * Build a data frame at dst (room for bach_frame_data_size()) of n <=
 * BACH_FRAME_MAX_RECORDS records. flags: FIRST and/or LAST; TIMING is set
 * when deltas is non-NULL (n of them) and cleared otherwise. lost: records
 * the board lost before this frame (sets OVERFLOW when non-zero). Returns
 * the frame's size.
 */
size_t bach_frame_build_data(uint8_t *dst, uint32_t seq, uint64_t index,
			     uint64_t timestamp, uint8_t flags, uint32_t lost,
			     const uint8_t *recs, size_t n,
			     const uint16_t *deltas);

size_t bach_frame_build_status(uint8_t *dst, uint32_t seq,
			       const struct bach_board_status *st);
size_t bach_frame_build_identity(uint8_t *dst, uint32_t seq,
				 const struct bach_board_identity *id);
/* A STATUS, IDENTITY or ACK frame answers the last command received. */
size_t bach_frame_build_ack(uint8_t *dst, uint32_t seq, uint32_t command,
			    uint32_t result);
/* cfg: the CONFIGURE payload; ignored (may be NULL) for other commands. */
size_t bach_frame_build_command(uint8_t *dst, uint32_t seq,
				enum bach_command cmd,
				const struct bach_board_config *cfg);

/* ---- parsing frames ---------------------------------------------------- */

enum bach_gap_cause {
	BACH_GAP_OVERFLOW, /* the board's FIFO overflowed (drop policy) */
	BACH_GAP_FRAMES,   /* frames missing on the link */
	BACH_GAP_CORRUPT,  /* frames rejected for a bad CRC or header */
	BACH_GAP_RING,	   /* the host's ring was full (drop policy) */
	BACH_GAP_DEVICE,   /* the device went away mid-capture */
	BACH_GAP_DISK,	   /* the disk refused them (a failed write, full) */
	/* append new causes above this line; names in lib/bus/frame.c */
	BACH_GAP_NCAUSES
};

const char *bach_gap_cause_name(enum bach_gap_cause c);

/*
 * A good frame as the parser found it (CRC checked): its header decoded,
 * its payload in place. Pointers are valid during the callback only.
 */
struct bach_frame {
	uint8_t type;  /* enum bach_frame_type, or a later one */
	uint8_t flags; /* BACH_FF_* (data frames) */
	uint32_t seq;
	uint32_t plen; /* payload bytes */
	uint64_t a, b; /* data: index, timestamp */
	uint32_t c, d; /* data: count, lost; ACK: command, result */
	const uint8_t *payload;
	/*
	 * Where the frame ends in the piece given to the bach_parser_feed()
	 * under way: bytes from there on come after it in the stream. 0 when
	 * it ended in an earlier piece (a frame found only once a frame
	 * before it, holding it inside its damaged length, failed its CRC).
	 */
	size_t end;
};

/*
 * The payloads of STATUS and IDENTITY frames, decoded. A shorter payload
 * (an older minor version) reads as zeros where it ends, a longer one (a
 * later minor version) is cut to what this version knows. The identity's
 * strings are copied as sent: NUL-padded, not terminated when full.
 */
void bach_frame_status(const struct bach_frame *f,
		       struct bach_board_status *st);
void bach_frame_identity(const struct bach_frame *f,
			 struct bach_board_identity *id);

/*
 * Callbacks of a parser, called from bach_parser_feed() in stream order.
 * Any member may be NULL. A gap is reported before the records of the
 * frame that revealed it. Callbacks must not feed the same parser.
 */
struct bach_parser_ops {
	/* n whole records (pointer valid during the call only) */
	void (*records)(void *ctx, const uint8_t *recs, size_t n,
			uint64_t timestamp);
	/*
	 * A TIMING frame's n u16 deltas (little-endian, as sent), right
	 * before its records: record 0 is at timestamp, record i delta i
	 * clocks after record i - 1. The pointer stays valid until the
	 * records callback of the same frame returns.
	 */
	void (*deltas)(void *ctx, const uint8_t *deltas, size_t n,
		       uint64_t timestamp);
	/* records lost at the current position */
	void (*gap)(void *ctx, uint64_t lost, enum bach_gap_cause cause);
	void (*status)(void *ctx, const struct bach_board_status *st);
	void (*identity)(void *ctx, const struct bach_board_identity *id);
	void (*ack)(void *ctx, uint32_t command, uint32_t result);
	/*
	 * Every good frame, of any type (duplicate data frames, COMMAND
	 * frames and types of a later minor version too), before the
	 * callbacks above for it: its gap, records, status, identity or ack.
	 */
	void (*frame)(void *ctx, const struct bach_frame *f);
};

struct bach_parser_counters {
	uint64_t frames;      /* good frames of any type */
	uint64_t data_frames; /* good data frames, duplicates included */
	uint64_t records;     /* records delivered */
	uint64_t lost_overflow, lost_frames, lost_corrupt;
	uint64_t bad_crc;      /* frames rejected for their CRC */
	uint64_t bad_header;   /* magic found, header impossible */
	uint64_t resync_bytes; /* bytes skipped looking for the magic */
	uint64_t duplicates;   /* data frames with an index already seen */
};

struct bach_parser;

/*
 * A parser for one capture (one START): the first data frame it sees, or
 * any FIRST frame, sets the index it expects. ops is copied and may be
 * NULL. Returns NULL when out of memory (it allocates BACH_FRAME_MAX).
 */
struct bach_parser *bach_parser_new(const struct bach_parser_ops *ops,
				    void *ctx);
void bach_parser_free(struct bach_parser *p);

/* Forget the stream and the counters: as bach_parser_new() made it. */
void bach_parser_reset(struct bach_parser *p);

/*
 * Feed bytes as they arrive, in pieces of any size. Frames may straddle
 * calls. Garbage is skipped up to the next magic; a frame with a bad CRC is
 * dropped and counted, its records counted lost once the next good data
 * frame shows how many there were.
 */
void bach_parser_feed(struct bach_parser *p, const uint8_t *buf, size_t len);

/* Index the next data frame should start at (records seen + lost). */
uint64_t bach_parser_next_index(const struct bach_parser *p);

/*
 * The frame the bytes fed so far end inside of, once its header has come
 * whole (and is valid): *h gets that header (payload NULL, end 0), and
 * the bytes of the frame fed so far are returned. 0 while no frame is
 * begun, or fewer than BACH_FRAME_HDR bytes of it have come.
 */
size_t bach_parser_pending(const struct bach_parser *p, struct bach_frame *h);

void bach_parser_counters(const struct bach_parser *p,
			  struct bach_parser_counters *c);

/*
 * How the bytes fed so far end, for a stream that has ended (a file): it
 * is whole when good_end == bytes and !damaged. Bytes past good_end are a
 * frame cut short or bytes that are not frames; damaged says bytes were
 * rejected since the last good data frame, so the records they held are
 * not counted lost by the parser (a later data frame's index counts them,
 * and so does the capture from a later STATUS's records sampled).
 */
struct bach_parser_tail {
	uint64_t bytes;	   /* bytes fed in all */
	uint64_t records;  /* records delivered in all */
	uint64_t good_end; /* stream offset just past the last good frame */
	uint64_t data_end; /* ... just past the last good data frame */
	bool damaged;
	bool last;     /* the last good data frame was flagged LAST */
	int last_type; /* BACH_FT_* of the last good frame, or -1 */
};

void bach_parser_tail(const struct bach_parser *p, struct bach_parser_tail *t);

#endif
