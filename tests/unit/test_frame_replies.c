// SPDX-License-Identifier: MIT
/*
 * What the usb driver relies on in the frame parser (docs/usb.md section
 * 2): it sees the board's replies only through the parser's frame
 * callback, so every good frame must come exactly once, in stream order,
 * however the stream is cut into pieces, with the place it ends in the
 * piece (where a capture's bytes begin after START's ACK); garbage and
 * damaged frames must not hide the replies behind them; and after an
 * unplug the parser must say which data frame was cut off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/bus/frame.h"

/* ---- a stream of frames, and what a parser must find in it -------------- */

#define STREAM_CAP (4u << 20)
#define TAIL	   BACH_FRAME_MAX /* zeros: the parser finishes any frame */
#define MAX_GOOD   8192

struct sent {
	uint8_t type, flags;
	uint32_t seq; /* unique: the frame's number in the stream */
	uint64_t a;
	uint32_t c, d;
	size_t end; /* stream offset just past it */
};

static struct {
	uint8_t *buf;
	size_t len;
	struct sent good[MAX_GOOD];
	size_t ngood;
} s;

/* 0 .. max - 1, the same every run */
static size_t rnd(size_t max)
{
	return (size_t)rand() % max;
}

static int setup(void **state)
{
	(void)state;
	srand(13);
	s.buf = malloc(STREAM_CAP + BACH_FRAME_MAX + TAIL);
	return s.buf ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(s.buf);
	return 0;
}

static void reset(void)
{
	s.len = 0;
	s.ngood = 0;
}

/* The frame just built at s.buf + s.len, of size n, is sent intact. */
static void keep(size_t n)
{
	const uint8_t *f = s.buf + s.len;
	struct sent *g = &s.good[s.ngood++];

	assert_true(s.ngood <= MAX_GOOD);
	g->type = f[5];
	g->flags = f[6];
	g->seq = bach_get_le32(f + 8);
	g->a = bach_get_le64(f + 16);
	g->c = bach_get_le32(f + 32);
	g->d = bach_get_le32(f + 36);
	s.len += n;
	g->end = s.len;
}

static uint32_t seq;

/* Data frames' records hold the magic here and there. */
static uint8_t recs[BACH_FRAME_MAX_RECORDS * BACH_REC_SIZE];
static uint16_t deltas[BACH_FRAME_MAX_RECORDS];

static void salt(void)
{
	for (size_t i = 0; i < sizeof(recs); i++)
		recs[i] = (uint8_t)rnd(256);
	for (int i = 0; i < 400; i++)
		memcpy(recs + rnd(sizeof(recs) - 4), BACH_FRAME_MAGIC, 4);
}

static void add_reply(int k)
{
	uint8_t *f = s.buf + s.len;
	struct bach_board_status st = { .records = seq * 7ull,
					.fifo_size = 1024 };
	struct bach_board_identity id = { .gw_major = 1,
					  .gw_minor = 3,
					  .fifo_records = seq };

	if (k == 0) {
		keep(bach_frame_build_status(f, seq++, &st));
	} else if (k == 1) {
		keep(bach_frame_build_identity(f, seq++, &id));
	} else {
		keep(bach_frame_build_ack(f, seq++, (uint32_t)rnd(7),
					  (uint32_t)rnd(5)));
	}
}

/*
 * A random stream: data frames (with and without deltas, some of the
 * largest), replies, garbage rich in 'B' and the magic, and frames
 * damaged in their header or payload. Ends with TAIL zeros.
 */
static void make_stream(size_t target)
{
	static uint64_t index;

	reset();
	salt();
	while (s.len < target && s.ngood < MAX_GOOD - 1) {
		size_t k = rnd(20), n;
		uint8_t *f = s.buf + s.len;

		if (k < 7) {
			n = rnd(20) ? rnd(3000) : BACH_FRAME_MAX_RECORDS;
			keep(bach_frame_build_data(f, seq++, index, index * 3,
						   0, 0, recs, n,
						   rnd(2) ? deltas : NULL));
			index += n;
		} else if (k < 14) {
			add_reply((int)rnd(3));
		} else if (k < 16) {
			n = rnd(300);
			for (size_t i = 0; i < n; i++) {
				size_t r = rnd(8);

				f[i] = r < 3 ? "BAC"[r] : (uint8_t)rnd(256);
			}
			if (n >= 4 && rnd(2))
				memcpy(f + rnd(n - 3), BACH_FRAME_MAGIC, 4);
			s.len += n;
		} else if (k < 18) {
			/* a reply damaged in its header (its length too) */
			n = bach_frame_build_ack(f, seq++, 1, 0);
			f[4 + rnd(36)] ^= (uint8_t)(1 + rnd(255));
			s.len += n;
		} else {
			/* a data frame damaged after its header */
			n = bach_frame_build_data(f, seq++, index, 0, 0, 0,
						  recs, 1 + rnd(2000), NULL);
			f[BACH_FRAME_HDR + rnd(n - BACH_FRAME_HDR)] ^=
				(uint8_t)(1 + rnd(255));
			s.len += n;
		}
	}
	memset(s.buf + s.len, 0, TAIL);
	s.len += TAIL;
}

/* ---- what the parser found ---------------------------------------------- */

static struct {
	size_t n;     /* frames seen */
	size_t piece; /* stream offset of the piece being fed */
	size_t piece_len;
	bool wrong;
	char why[200];
} got;

static void wrong(const char *why, size_t i)
{
	if (!got.wrong)
		snprintf(got.why, sizeof(got.why), "frame %zu: %s", i, why);
	got.wrong = true;
}

static void on_frame(void *ctx, const struct bach_frame *f)
{
	const struct sent *g = &s.good[got.n];

	(void)ctx;
	if (got.n == s.ngood) {
		wrong("one more than was sent", got.n);
		return;
	}
	if (f->seq != g->seq)
		wrong("not the next one sent (lost, repeated or out of order)",
		      got.n);
	else if (f->type != g->type || f->flags != g->flags || f->a != g->a ||
		 f->c != g->c || f->d != g->d)
		wrong("its header changed", got.n);
	else if (g->end > got.piece ? f->end != g->end - got.piece ||
					      f->end > got.piece_len
				    : f->end != 0)
		wrong("it ends elsewhere in the piece", got.n);
	else if (f->type == BACH_FT_STATUS) {
		struct bach_board_status st;

		bach_frame_status(f, &st);
		if (st.records != f->seq * 7ull || st.fifo_size != 1024)
			wrong("its status is not the one sent", got.n);
	} else if (f->type == BACH_FT_IDENTITY) {
		struct bach_board_identity id;

		bach_frame_identity(f, &id);
		if (id.gw_major != 1 || id.gw_minor != 3 ||
		    id.fifo_records != f->seq)
			wrong("its identity is not the one sent", got.n);
	}
	got.n++;
}

static const struct bach_parser_ops frame_ops = { .frame = on_frame };

/* Feed the stream in pieces of 1 to max bytes; every good frame once. */
static void parse_in_pieces(struct bach_parser *p, size_t max)
{
	size_t off = 0;

	memset(&got, 0, sizeof(got));
	bach_parser_reset(p);
	while (off < s.len) {
		size_t k = 1 + rnd(max);

		if (k > s.len - off)
			k = s.len - off;
		got.piece = off;
		got.piece_len = k;
		bach_parser_feed(p, s.buf + off, k);
		off += k;
	}
	if (got.wrong)
		fail_msg("%s", got.why);
	assert_int_equal(got.n, s.ngood);
}

/* ---- tests ------------------------------------------------------------- */

/*
 * Random streams cut at random: pieces of a few bytes (short packets),
 * of a frame or so, and of many frames (whole transfers).
 */
static void every_frame_once(void **state)
{
	struct bach_parser *p = bach_parser_new(&frame_ops, NULL);
	const size_t max[] = { 3, 64, 600, 70000, 600000, 4u << 20 };

	(void)state;
	assert_non_null(p);
	for (int t = 0; t < 24; t++) {
		make_stream(t < 4 ? 200000 : 1u << 20);
		parse_in_pieces(p, max[(size_t)t % 6]);
	}
	bach_parser_free(p);
}

/* One byte at a time, the hardest cut there is. */
static void byte_by_byte(void **state)
{
	struct bach_parser *p = bach_parser_new(&frame_ops, NULL);

	(void)state;
	assert_non_null(p);
	make_stream(150000);
	parse_in_pieces(p, 1);
	bach_parser_free(p);
}

/*
 * Each byte of an ACK's header damaged in turn, each bit value: the
 * damaged ACK is never taken for a reply, and the ACK right after it
 * always is (a damaged length must not make the parser pass over it).
 */
static void damaged_headers_resync(void **state)
{
	struct bach_parser *p = bach_parser_new(&frame_ops, NULL);

	(void)state;
	assert_non_null(p);
	for (size_t byte = 0; byte < BACH_FRAME_HDR + BACH_FRAME_CRC; byte++) {
		for (unsigned x = 1; x < 256; x += 17) {
			uint8_t *f;

			reset();
			add_reply(2);
			f = s.buf + s.len;
			s.len += bach_frame_build_ack(f, seq++, 3, 0);
			f[byte] ^= (uint8_t)x;
			add_reply(2);
			add_reply(0);
			memset(s.buf + s.len, 0, TAIL);
			s.len += TAIL;
			parse_in_pieces(p, byte % 2 ? 7 : 100000);
		}
	}
	bach_parser_free(p);
}

/*
 * The stream cut inside a data frame (a board unplugged): once its header
 * is in, the parser names the frame and the bytes of it that came.
 */
static void cut_frame(void **state)
{
	struct bach_parser *p = bach_parser_new(NULL, NULL);
	struct bach_frame h;
	size_t lead, size;

	(void)state;
	assert_non_null(p);
	salt();
	for (int t = 0; t < 200; t++) {
		size_t cut;

		reset();
		keep(bach_frame_build_data(s.buf, 0, 0, 0, BACH_FF_FIRST, 0,
					   recs, 100, NULL));
		add_reply(2);
		lead = s.len;
		size = bach_frame_build_data(s.buf + s.len, 1, 100, 0, 0, 7,
					     recs, 1 + rnd(5000),
					     rnd(2) ? deltas : NULL);
		s.len += size;
		cut = rnd(size);
		bach_parser_reset(p);
		/* the lead whole or in two pieces, then the cut frame's start
		 */
		if (rnd(2)) {
			bach_parser_feed(p, s.buf, lead + cut);
		} else {
			size_t k = rnd(lead + cut + 1);

			bach_parser_feed(p, s.buf, k);
			bach_parser_feed(p, s.buf + k, lead + cut - k);
		}
		assert_int_equal(bach_parser_next_index(p), 100);
		if (cut < BACH_FRAME_HDR) {
			assert_int_equal(bach_parser_pending(p, &h), 0);
			continue;
		}
		assert_int_equal(bach_parser_pending(p, &h), cut);
		assert_int_equal(h.type, BACH_FT_DATA);
		assert_int_equal(h.a, 100);
		assert_int_equal(h.c, bach_get_le32(s.buf + lead + 32));
		assert_int_equal(h.d, 7);
		assert_null(h.payload);
		/* the rest comes: the frame is whole, nothing is pending */
		bach_parser_feed(p, s.buf + lead + cut, size - cut);
		assert_int_equal(bach_parser_pending(p, &h), 0);
		assert_int_equal(bach_parser_next_index(p),
				 100 + bach_get_le32(s.buf + lead + 32));
	}
	/* a reply cut off is pending too; the driver looks for data frames */
	reset();
	size = bach_frame_build_status(s.buf, 0,
				       &(struct bach_board_status){ 0 });
	bach_parser_reset(p);
	bach_parser_feed(p, s.buf, size - 1);
	assert_int_equal(bach_parser_pending(p, &h), size - 1);
	assert_int_equal(h.type, BACH_FT_STATUS);
	bach_parser_free(p);
}

/* After reset a parser is as new: no frame held, no index, no counters. */
static void reset_forgets(void **state)
{
	struct bach_parser *p = bach_parser_new(&frame_ops, NULL);
	struct bach_parser_counters c;
	struct bach_frame h;
	size_t size;

	(void)state;
	assert_non_null(p);
	reset();
	salt();
	size = bach_frame_build_data(s.buf, 0, 5000, 0, 0, 0, recs, 100, NULL);
	bach_parser_feed(p, s.buf, size);
	bach_parser_feed(p, (const uint8_t *)"xyz", 3);
	bach_parser_feed(p, s.buf, size / 2);
	assert_int_not_equal(bach_parser_pending(p, &h), 0);
	bach_parser_reset(p);
	assert_int_equal(bach_parser_pending(p, &h), 0);
	assert_int_equal(bach_parser_next_index(p), 0);
	bach_parser_counters(p, &c);
	assert_int_equal(c.frames + c.data_frames + c.records + c.resync_bytes,
			 0);
	/* and a stream then parses as with a new one */
	make_stream(100000);
	parse_in_pieces(p, 5000);
	bach_parser_free(p);
}

/* The decoders: a short payload reads as zeros, a long one is cut. */
static void decoders(void **state)
{
	struct bach_board_identity id = { .vendor = 0x1209,
					  .product = 0x4243,
					  .gw_major = 1,
					  .gw_minor = 9,
					  .capabilities = 0xf,
					  .clock_hz = 66666666,
					  .fifo_records = 1024,
					  .serial = "0123456789abcdef",
					  .name = "board" },
				   back;
	uint8_t b[BACH_FRAME_MAX_PAYLOAD];
	struct bach_frame f = { .type = BACH_FT_IDENTITY, .payload = b };
	struct bach_board_status st;

	(void)state;
	bach_frame_build_identity(b, 0, &id);
	f.payload = b + BACH_FRAME_HDR;
	f.plen = BACH_IDENTITY_SIZE;
	bach_frame_identity(&f, &back);
	assert_memory_equal(&back, &id, sizeof(id));
	/* as sent: a full serial is not terminated */
	assert_memory_equal(back.serial, "0123456789abcdef", 16);
	f.plen = 6;
	bach_frame_identity(&f, &back);
	assert_int_equal(back.vendor, 0x1209);
	assert_int_equal(back.gw_minor, 9);
	assert_int_equal(back.capabilities, 0);
	assert_int_equal(back.fifo_records, 0);
	assert_int_equal(back.serial[0], 0);
	f.plen = 0;
	bach_frame_identity(&f, &back);
	assert_int_equal(back.vendor, 0);

	bach_frame_build_status(
		b, 0,
		&(struct bach_board_status){ .fifo_fill = 1,
					     .records = 2,
					     .stalled_clocks = 3,
					     .offbus = 4 });
	memset(b + BACH_FRAME_HDR + BACH_STATUS_SIZE, 0xff, 100);
	f.type = BACH_FT_STATUS;
	f.plen = BACH_STATUS_SIZE + 100;
	bach_frame_status(&f, &st);
	assert_int_equal(st.fifo_fill, 1);
	assert_int_equal(st.records, 2);
	assert_int_equal(st.stalled_clocks, 3);
	assert_int_equal(st.reserved, 0);
	assert_int_equal(st.offbus, 4);
	/* a gateware 1.0 board's 48 bytes: no off-bus count, read as 0 */
	f.plen = 48;
	bach_frame_status(&f, &st);
	assert_int_equal(st.stalled_clocks, 3);
	assert_int_equal(st.offbus, 0);
	f.plen = 16;
	bach_frame_status(&f, &st);
	assert_int_equal(st.records, 2);
	assert_int_equal(st.stalled_clocks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_frame_once),
		cmocka_unit_test(byte_by_byte),
		cmocka_unit_test(damaged_headers_resync),
		cmocka_unit_test(cut_frame),
		cmocka_unit_test(reset_forgets),
		cmocka_unit_test(decoders),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
