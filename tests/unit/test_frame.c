// SPDX-License-Identifier: MIT
/* Board frames: builders, the stream parser, the worked examples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/bus/frame.h"

/* ---- the callbacks keep a log of events -------------------------------- */

struct ev {
	char kind; /* R records, G gap, S status, I identity, A ack */
	uint64_t a, b, c;
};

struct log {
	struct ev ev[512];
	size_t n;
	struct bach_board_status st;
	struct bach_board_identity id;
};

/* Record i of a test stream: a function of its index alone. */
static void make_rec(uint8_t *r, uint64_t i)
{
	bach_put_be32(r, (uint32_t)(i << 3));
	r[4] = (uint8_t)(i >> 29);
	r[5] = 0xc0;
}

static uint64_t rec_index(const uint8_t *r)
{
	return (uint64_t)r[4] << 29 | bach_get_be32(r) >> 3;
}

static void push(struct log *l, char kind, uint64_t a, uint64_t b, uint64_t c)
{
	assert_true(l->n < sizeof(l->ev) / sizeof(*l->ev));
	l->ev[l->n++] = (struct ev){ kind, a, b, c };
}

static void on_records(void *ctx, const uint8_t *recs, size_t n, uint64_t ts)
{
	uint64_t first = rec_index(recs);

	for (size_t i = 0; i < n; i++)
		assert_int_equal(rec_index(recs + i * BACH_REC_SIZE),
				 first + i);
	push(ctx, 'R', first, n, ts);
}

static void on_gap(void *ctx, uint64_t lost, enum bach_gap_cause cause)
{
	push(ctx, 'G', lost, cause, 0);
}

static void on_status(void *ctx, const struct bach_board_status *st)
{
	struct log *l = ctx;

	l->st = *st;
	push(l, 'S', st->records, 0, 0);
}

static void on_identity(void *ctx, const struct bach_board_identity *id)
{
	struct log *l = ctx;

	l->id = *id;
	push(l, 'I', id->gw_major, id->gw_minor, 0);
}

static void on_ack(void *ctx, uint32_t command, uint32_t result)
{
	push(ctx, 'A', command, result, 0);
}

static const struct bach_parser_ops ops = {
	.records = on_records,
	.gap = on_gap,
	.status = on_status,
	.identity = on_identity,
	.ack = on_ack,
};

/* ---- streams of frames ------------------------------------------------- */

struct stream {
	uint8_t buf[1 << 20];
	size_t len;
};

static struct stream s;

/* Append a data frame of records index..index+n-1; returns its offset. */
static size_t add_data(uint32_t seq, uint64_t index, size_t n, uint8_t flags,
		       uint32_t lost, bool timing)
{
	static uint8_t recs[BACH_FRAME_MAX_RECORDS * BACH_REC_SIZE];
	static uint16_t deltas[BACH_FRAME_MAX_RECORDS];
	size_t off = s.len;

	for (size_t i = 0; i < n; i++) {
		make_rec(recs + i * BACH_REC_SIZE, index + i);
		deltas[i] = (uint16_t)(i ? 0xd000 + i : 0);
	}
	assert_true(s.len + bach_frame_data_size(n, timing) <= sizeof(s.buf));
	s.len += bach_frame_build_data(s.buf + s.len, seq, index, 1000 + index,
				       flags, lost, recs, n,
				       timing ? deltas : NULL);
	return off;
}

static void add_bytes(const void *b, size_t n)
{
	assert_true(s.len + n <= sizeof(s.buf));
	memcpy(s.buf + s.len, b, n);
	s.len += n;
}

/* Rewrite the CRC after a test changed a frame at off of plen payload. */
static void reseal(uint8_t *f, size_t plen)
{
	bach_put_le32(f + 12, (uint32_t)plen);
	bach_put_le32(f + BACH_FRAME_HDR + plen,
		      (uint32_t)crc32(0, f, (uInt)(BACH_FRAME_HDR + plen)));
}

static uint64_t rng = 88172645463325252ull;

static size_t rnd(size_t max)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (size_t)(rng % max);
}

/*
 * Feed b[0..n) in pieces: chunk 0 at once, 1 byte by byte, else random
 * sizes up to chunk. Returns the counters; the events are in l.
 */
static struct bach_parser_counters parse(const uint8_t *b, size_t n,
					 size_t chunk, struct log *l)
{
	struct bach_parser *p = bach_parser_new(&ops, l);
	struct bach_parser_counters c;
	size_t off = 0;

	assert_non_null(p);
	memset(l, 0, sizeof(*l));
	while (off < n) {
		size_t k = n - off;

		if (chunk == 1)
			k = 1;
		else if (chunk && k > 1)
			k = 1 + rnd(k < chunk ? k : chunk);
		bach_parser_feed(p, b + off, k);
		off += k;
	}
	bach_parser_counters(p, &c);
	push(l, 'X', bach_parser_next_index(p), 0, 0);
	bach_parser_free(p);
	return c;
}

static void same_log(const struct log *a, const struct log *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->ev[i].kind, b->ev[i].kind);
		assert_int_equal(a->ev[i].a, b->ev[i].a);
		assert_int_equal(a->ev[i].b, b->ev[i].b);
		assert_int_equal(a->ev[i].c, b->ev[i].c);
	}
}

/*
 * Parse the stream whole, byte by byte and in random pieces: the same
 * events and counters every time. Returns the counters; events in l.
 */
static struct bach_parser_counters parse_all_ways(struct log *l)
{
	static struct log other;
	struct bach_parser_counters c = parse(s.buf, s.len, 0, l), c2;
	const size_t chunks[] = { 1, 2, 7, 45, 100, 4096, 70000 };

	for (size_t i = 0; i < sizeof(chunks) / sizeof(*chunks); i++) {
		for (int rep = 0; rep < (chunks[i] == 1 ? 1 : 4); rep++) {
			c2 = parse(s.buf, s.len, chunks[i], &other);
			same_log(l, &other);
			assert_memory_equal(&c, &c2, sizeof(c));
		}
	}
	return c;
}

/* Check the log against a list of events, "X" (the end) included. */
static void expect(const struct log *l, const struct ev *want, size_t n)
{
	for (size_t i = 0; i < n && i < l->n; i++) {
		if (l->ev[i].kind != want[i].kind || l->ev[i].a != want[i].a ||
		    l->ev[i].b != want[i].b ||
		    (want[i].kind == 'R' && l->ev[i].c != want[i].c)) {
			fail_msg(
				"event %zu: got %c %llu %llu, want %c %llu %llu",
				i, l->ev[i].kind,
				(unsigned long long)l->ev[i].a,
				(unsigned long long)l->ev[i].b, want[i].kind,
				(unsigned long long)want[i].a,
				(unsigned long long)want[i].b);
		}
	}
	assert_int_equal(l->n, n);
}

#define EXPECT(l, ...)                                                         \
	do {                                                                   \
		const struct ev w_[] = { __VA_ARGS__ };                        \
		expect(l, w_, sizeof(w_) / sizeof(*w_));                       \
	} while (0)
#define R(i, n)                                                                \
	{                                                                      \
		'R', i, n, 1000 + (i)                                          \
	}
#define G(n, cause)                                                            \
	{                                                                      \
		'G', n, cause, 0                                               \
	}
#define END(next)                                                              \
	{                                                                      \
		'X', next, 0, 0                                                \
	}

static struct log lg;

static int reset(void **state)
{
	(void)state;
	s.len = 0;
	return 0;
}

/* ---- tests -------------------------------------------------------------- */

static void clean_stream(void **state)
{
	struct bach_parser_counters c;

	(void)state;
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	add_data(1, 10, 1000, 0, 0, false);
	add_data(2, 1010, 1, 0, 0, false);
	add_data(3, 1011, 0, 0, 0, false);
	add_data(4, 1011, 5000, 0, 0, false);
	add_data(5, 6011, 3, BACH_FF_LAST, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 10), R(10, 1000), R(1010, 1), R(1011, 5000),
	       R(6011, 3), END(6014));
	assert_int_equal(c.frames, 6);
	assert_int_equal(c.data_frames, 6);
	assert_int_equal(c.records, 6014);
	assert_int_equal(c.resync_bytes, 0);
	assert_int_equal(c.bad_crc + c.bad_header + c.duplicates, 0);
	assert_int_equal(c.lost_overflow + c.lost_frames + c.lost_corrupt, 0);
}

static void largest_frames(void **state)
{
	struct bach_parser_counters c;

	(void)state;
	add_data(0, 0, BACH_FRAME_MAX_RECORDS, BACH_FF_FIRST, 0, true);
	add_data(1, 65535, BACH_FRAME_MAX_RECORDS, 0, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 65535), R(65535, 65535), END(131070));
	assert_int_equal(c.records, 131070);
}

static void garbage(void **state)
{
	static const char junk1[] = "xyzB", junk2[] = "BABACBAC\0BACBACBAC";
	uint8_t bad[BACH_FRAME_HDR];
	struct bach_parser_counters c;
	size_t junk = 0;

	(void)state;
	add_bytes(junk1, 4);
	junk += 4;
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	add_bytes(junk2, sizeof(junk2));
	junk += sizeof(junk2);
	/* a magic with an impossible header: version 2 */
	memcpy(bad, s.buf + 4, sizeof(bad));
	bad[4] = 2;
	add_bytes(bad, sizeof(bad));
	junk += sizeof(bad);
	add_data(1, 10, 20, 0, 0, false);
	add_bytes("BAC", 3); /* a magic prefix at the very end */
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 10), R(10, 20), END(30));
	assert_int_equal(c.bad_header, 1);
	assert_int_equal(c.resync_bytes, junk);
	assert_int_equal(c.records, 30);
	assert_int_equal(c.lost_frames + c.lost_corrupt, 0);
}

static void bad_crc(void **state)
{
	struct bach_parser_counters c;
	size_t off;

	(void)state;
	add_data(0, 0, 100, BACH_FF_FIRST, 0, false);
	add_data(1, 100, 200, 0, 0, true);
	off = add_data(2, 300, 37, 0, 0, false);
	s.buf[off + BACH_FRAME_HDR + 11] ^= 0x20;
	add_data(3, 337, 50, 0, 0, false);
	add_data(4, 387, 1, 0, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 100), R(100, 200), G(37, BACH_GAP_CORRUPT), R(337, 50),
	       R(387, 1), END(388));
	assert_int_equal(c.bad_crc, 1);
	assert_int_equal(c.lost_corrupt, 37);
	assert_int_equal(c.records, 388 - 37);
	assert_int_equal(c.resync_bytes, bach_frame_data_size(37, false));
}

static void bad_magic(void **state)
{
	struct bach_parser_counters c;
	size_t off;

	(void)state;
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	off = add_data(1, 10, 20, 0, 0, false);
	s.buf[off + 1] = 'X';
	add_data(2, 30, 5, 0, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 10), G(20, BACH_GAP_CORRUPT), R(30, 5), END(35));
	assert_int_equal(c.lost_corrupt, 20);
}

static void dropped_frame(void **state)
{
	struct bach_parser_counters c;

	(void)state;
	add_data(0, 0, 100, BACH_FF_FIRST, 0, false);
	add_data(1, 100, 100, 0, 0, false);
	/* seq 2, index 200, 123 records: lost on the link */
	add_data(3, 323, 100, 0, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 100), R(100, 100), G(123, BACH_GAP_FRAMES),
	       R(323, 100), END(423));
	assert_int_equal(c.lost_frames, 123);
	assert_int_equal(c.lost_corrupt + c.lost_overflow, 0);
}

static void overflow(void **state)
{
	struct bach_parser_counters c;
	size_t off;

	(void)state;
	add_data(0, 0, 100, BACH_FF_FIRST, 0, false);
	off = add_data(1, 100 + 77, 100, 0, 77, false);
	assert_int_equal(s.buf[off + 6], BACH_FF_OVERFLOW);
	add_data(2, 277, 100, 0, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 100), G(77, BACH_GAP_OVERFLOW), R(177, 100),
	       R(277, 100), END(377));
	assert_int_equal(c.lost_overflow, 77);
	assert_int_equal(c.lost_frames + c.lost_corrupt, 0);
}

static void overflow_and_lost_frame(void **state)
{
	size_t off;

	(void)state;
	add_data(0, 0, 100, BACH_FF_FIRST, 0, false);
	/* frame 1 (index 100, 50 records) lost, then 9 records overflowed */
	add_data(2, 159, 10, 0, 9, false);
	parse_all_ways(&lg);
	EXPECT(&lg, R(0, 100), G(50, BACH_GAP_FRAMES), G(9, BACH_GAP_OVERFLOW),
	       R(159, 10), END(169));

	/* the same with frame 1 damaged instead of missing */
	s.len = 0;
	add_data(0, 0, 100, BACH_FF_FIRST, 0, false);
	off = add_data(1, 100, 50, 0, 0, false);
	s.buf[s.len - 1] ^= 1;
	add_data(2, 159, 10, 0, 9, false);
	assert_true(off > 0);
	parse_all_ways(&lg);
	EXPECT(&lg, R(0, 100), G(50, BACH_GAP_CORRUPT), G(9, BACH_GAP_OVERFLOW),
	       R(159, 10), END(169));

	/* OVERFLOW claiming more than the jump: all of it overflow */
	s.len = 0;
	add_data(0, 0, 100, BACH_FF_FIRST, 0, false);
	add_data(1, 103, 10, 0, 9, false);
	parse_all_ways(&lg);
	EXPECT(&lg, R(0, 100), G(3, BACH_GAP_OVERFLOW), R(103, 10), END(113));
}

static void duplicates(void **state)
{
	struct bach_parser_counters c;
	size_t off, size;

	(void)state;
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	off = add_data(1, 10, 10, 0, 0, false);
	size = s.len - off;
	add_bytes(s.buf + off, size); /* the same frame again */
	add_data(2, 20, 10, 0, 0, false);
	add_data(9, 5, 10, 0, 0, false); /* older, overlapping */
	add_data(3, 30, 10, 0, 0, false);
	add_data(9, 39, 10, 0, 0, false); /* overlaps by one */
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 10), R(10, 10), R(20, 10), R(30, 10), END(40));
	assert_int_equal(c.duplicates, 3);
	assert_int_equal(c.data_frames, 7);
	assert_int_equal(c.records, 40);
	assert_int_equal(c.lost_frames + c.lost_corrupt + c.lost_overflow, 0);
}

static void first_resets(void **state)
{
	struct bach_parser_counters c;

	(void)state;
	/* joined part-way: the first frame seen sets the index */
	add_data(17, 5000, 10, 0, 3, false);
	add_data(18, 5010, 10, BACH_FF_LAST, 0, false);
	/* a new START */
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	add_data(1, 10, 10, 0, 0, false);
	/* and another, whose FIFO overflowed before the first frame */
	add_data(0, 4, 10, BACH_FF_FIRST, 4, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(5000, 10), R(5010, 10), R(0, 10), R(10, 10),
	       G(4, BACH_GAP_OVERFLOW), R(4, 10), END(14));
	assert_int_equal(c.duplicates, 0);
	assert_int_equal(c.lost_overflow, 4);
}

static void timing(void **state)
{
	struct bach_parser_counters c;
	size_t off;

	(void)state;
	off = add_data(0, 0, 300, BACH_FF_FIRST, 0, true);
	assert_int_equal(s.buf[off + 6], BACH_FF_FIRST | BACH_FF_TIMING);
	assert_int_equal(bach_get_le32(s.buf + off + 12), 300 * 8);
	assert_int_equal(bach_get_le16(s.buf + off + BACH_FRAME_HDR + 2),
			 0xd001);
	add_data(1, 300, 20, 0, 0, false);
	add_data(2, 320, 1, 0, 0, true);
	c = parse_all_ways(&lg);
	/* on_records checks every record, so no delta went through */
	EXPECT(&lg, R(0, 300), R(300, 20), R(320, 1), END(321));
	assert_int_equal(c.records, 321);
	assert_int_equal(s.len, bach_frame_data_size(300, true) +
					bach_frame_data_size(20, false) +
					bach_frame_data_size(1, true));
}

static void inconsistent_data_length(void **state)
{
	struct bach_parser_counters c;
	size_t off;

	(void)state;
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	off = add_data(1, 10, 10, 0, 0, false);
	s.buf[off + 6] |= BACH_FF_TIMING; /* 60 bytes can't be 10 x 8 */
	reseal(s.buf + off, 60);
	add_data(2, 20, 10, 0, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 10), G(10, BACH_GAP_CORRUPT), R(20, 10), END(30));
	assert_int_equal(c.bad_header, 1);
	assert_int_equal(c.bad_crc, 0);
}

static void absurd_length(void **state)
{
	struct bach_parser_counters c;
	uint8_t f[BACH_FRAME_MAX];
	size_t n;

	(void)state;
	/* a length no frame may have: skipped at once */
	n = bach_frame_build_ack(f, 0, BACH_CMD_START, 0);
	bach_put_le32(f + 12, 0xfffffff0);
	add_bytes(f, n);
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	c = parse(s.buf, s.len, 0, &lg);
	EXPECT(&lg, R(0, 10), END(10));
	assert_int_equal(c.bad_header, 1);

	/* a plausible length beyond the stream's end: the frames after it
	 * wait in the buffer until the CRC fails, then all come out */
	s.len = 0;
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	n = bach_frame_build_ack(f, 0, BACH_CMD_START, 0);
	bach_put_le32(f + 12, 3000);
	add_bytes(f, n);
	add_data(1, 10, 100, 0, 0, false);
	add_data(2, 110, 100, 0, 0, false);
	add_data(3, 210, 300, 0, 0, false);
	add_data(4, 510, 1, 0, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, R(0, 10), R(10, 100), R(110, 100), R(210, 300), R(510, 1),
	       END(511));
	assert_int_equal(c.bad_crc, 1);
	assert_int_equal(c.records, 511);
	assert_int_equal(c.resync_bytes, n);
}

static void status_identity_ack(void **state)
{
	const struct bach_board_status st = {
		.fifo_fill = 0x01020304,
		.fifo_size = 0x05060708,
		.records = 0x1112131415161718ull,
		.overflow = 0x2122232425262728ull,
		.stall_episodes = 0x31323334,
		.clock_hz = 66666666,
		.stalled_clocks = 0x4142434445464748ull,
		.reserved = 0,
		.offbus = 0x5152535455565758ull,
	};
	const struct bach_board_identity id = {
		.vendor = 0x1209,
		.product = 0xbac4,
		.gw_major = 1,
		.gw_minor = 7,
		.capabilities = BACH_CAP_TIMING | BACH_CAP_FILTER,
		.clock_hz = 66000000,
		.fifo_records = 1u << 20,
		.serial = "SN0042",
		.name = "bach board rev A",
	};
	struct bach_parser_counters c;
	uint8_t f[256];
	size_t n;

	(void)state;
	n = bach_frame_build_status(f, 5, &st);
	assert_int_equal(n, BACH_FRAME_HDR + BACH_STATUS_SIZE + 4);
	assert_int_equal(f[5], BACH_FT_STATUS);
	assert_int_equal(bach_get_le32(f + 8), 5);
	assert_int_equal(bach_get_le64(f + 40 + 8), st.records);
	add_bytes(f, n);
	n = bach_frame_build_identity(f, 6, &id);
	assert_int_equal(n, BACH_FRAME_HDR + BACH_IDENTITY_SIZE + 4);
	assert_int_equal(f[40 + 4], 1);
	assert_memory_equal(f + 40 + 32, "bach board rev A", 17);
	add_bytes(f, n);
	n = bach_frame_build_ack(f, 7, BACH_CMD_CONFIGURE, BACH_ACK_BUSY);
	assert_int_equal(n, BACH_FRAME_HDR + 4);
	add_bytes(f, n);
	c = parse_all_ways(&lg);
	EXPECT(&lg, { 'S', st.records, 0, 0 }, { 'I', 1, 7, 0 },
	       { 'A', BACH_CMD_CONFIGURE, BACH_ACK_BUSY, 0 }, END(0));
	assert_int_equal(c.frames, 3);
	assert_int_equal(c.data_frames, 0);
	assert_int_equal(lg.st.fifo_fill, st.fifo_fill);
	assert_int_equal(lg.st.fifo_size, st.fifo_size);
	assert_int_equal(lg.st.records, st.records);
	assert_int_equal(lg.st.overflow, st.overflow);
	assert_int_equal(lg.st.stall_episodes, st.stall_episodes);
	assert_int_equal(lg.st.clock_hz, st.clock_hz);
	assert_int_equal(lg.st.stalled_clocks, st.stalled_clocks);
	assert_int_equal(lg.st.reserved, 0);
	assert_int_equal(lg.st.offbus, st.offbus);
	assert_int_equal(lg.id.vendor, 0x1209);
	assert_int_equal(lg.id.product, 0xbac4);
	assert_int_equal(lg.id.gw_major, 1);
	assert_int_equal(lg.id.gw_minor, 7);
	assert_int_equal(lg.id.capabilities, BACH_CAP_TIMING | BACH_CAP_FILTER);
	assert_int_equal(lg.id.clock_hz, 66000000);
	assert_int_equal(lg.id.fifo_records, 1u << 20);
	assert_memory_equal(lg.id.serial, id.serial, sizeof(id.serial));
	assert_memory_equal(lg.id.name, id.name, sizeof(id.name));
}

/* Payloads of another minor version: shorter ones zero-filled, longer
 * ones read up to what is known; unknown types skipped whole. */
static void other_minor_versions(void **state)
{
	const struct bach_board_status st = {
		.fifo_fill = 9, .records = 77, .overflow = 5, .clock_hz = 3
	};
	struct bach_parser_counters c;
	uint8_t f[512] = { 0 };

	(void)state;
	bach_frame_build_status(f, 0, &st);
	reseal(f, 16); /* fill, size, records only */
	add_bytes(f, BACH_FRAME_HDR + 16 + 4);
	memset(f + BACH_FRAME_HDR + BACH_STATUS_SIZE, 0xee, 100);
	bach_frame_build_status(f, 1, &st);
	reseal(f, BACH_STATUS_SIZE + 100);
	add_bytes(f, BACH_FRAME_HDR + BACH_STATUS_SIZE + 100 + 4);
	bach_frame_build_ack(f, 0, 0, 0);
	f[5] = 99; /* a type of a later minor version */
	reseal(f, 200);
	add_bytes(f, BACH_FRAME_HDR + 200 + 4);
	add_data(0, 0, 3, BACH_FF_FIRST, 0, false);
	c = parse_all_ways(&lg);
	EXPECT(&lg, { 'S', 77, 0, 0 }, { 'S', 77, 0, 0 }, R(0, 3), END(3));
	assert_int_equal(lg.st.overflow, 5);
	assert_int_equal(lg.st.clock_hz, 3);
	assert_int_equal(c.frames, 4);
	assert_int_equal(c.resync_bytes, 0);

	/* the short one: fields it lacks read as zero */
	s.len = 0;
	bach_frame_build_status(f, 0, &st);
	reseal(f, 16);
	add_bytes(f, BACH_FRAME_HDR + 16 + 4);
	parse(s.buf, s.len, 0, &lg);
	assert_int_equal(lg.st.records, 77);
	assert_int_equal(lg.st.overflow, 0);
	assert_int_equal(lg.st.clock_hz, 0);
}

static void null_ops(void **state)
{
	const struct bach_parser_ops none = { 0 };
	struct bach_board_status st = { 0 };
	struct bach_parser_counters c;
	struct bach_parser *p;
	uint8_t f[256];

	(void)state;
	add_data(0, 0, 10, BACH_FF_FIRST, 0, false);
	add_data(1, 20, 10, 0, 0, false);
	add_bytes(f, bach_frame_build_status(f, 0, &st));
	add_bytes(f, bach_frame_build_ack(f, 0, 1, 0));
	for (int i = 0; i < 2; i++) {
		p = bach_parser_new(i ? &none : NULL, NULL);
		assert_non_null(p);
		bach_parser_feed(p, s.buf, s.len);
		bach_parser_counters(p, &c);
		assert_int_equal(c.frames, 4);
		assert_int_equal(c.records, 20);
		assert_int_equal(c.lost_frames, 10);
		assert_int_equal(bach_parser_next_index(p), 30);
		bach_parser_free(p);
	}
	bach_parser_free(NULL);
}

static const uint8_t *zc_lo, *zc_hi;
static size_t zc_inside, zc_outside;

static void zc_records(void *ctx, const uint8_t *recs, size_t n, uint64_t ts)
{
	(void)ctx;
	(void)ts;
	if (recs >= zc_lo && recs + n * BACH_REC_SIZE <= zc_hi)
		zc_inside++;
	else
		zc_outside++;
}

/* Frames whole inside a fed piece are delivered from it, not copied. */
static void zero_copy(void **state)
{
	const struct bach_parser_ops zops = { .records = zc_records };
	struct bach_parser *p = bach_parser_new(&zops, NULL);
	size_t cut;

	(void)state;
	assert_non_null(p);
	for (int i = 0; i < 10; i++)
		add_data((uint32_t)i, (uint64_t)i * 1000, 1000,
			 i ? 0 : BACH_FF_FIRST, 0, false);
	/* pieces: frames 0..2 and half of 3, then the rest */
	cut = 3 * bach_frame_data_size(1000, false) + 3000;
	zc_lo = s.buf;
	zc_hi = s.buf + cut;
	bach_parser_feed(p, s.buf, cut);
	assert_int_equal(zc_inside, 3);
	zc_lo = s.buf + cut;
	zc_hi = s.buf + s.len;
	bach_parser_feed(p, s.buf + cut, s.len - cut);
	assert_int_equal(zc_inside, 3 + 6);
	assert_int_equal(zc_outside, 1);
	bach_parser_free(p);
}

static void cause_names(void **state)
{
	(void)state;
	assert_string_equal(bach_gap_cause_name(BACH_GAP_OVERFLOW), "overflow");
	assert_string_equal(bach_gap_cause_name(BACH_GAP_FRAMES), "frames");
	assert_string_equal(bach_gap_cause_name(BACH_GAP_CORRUPT), "corrupt");
	assert_string_equal(bach_gap_cause_name(BACH_GAP_RING), "ring");
	assert_string_equal(bach_gap_cause_name(BACH_GAP_DEVICE), "device");
}

/* ---- the worked examples of docs/board-protocol.md section 10 ----------- */

static const uint8_t doc_data[] = {
	0x42, 0x41, 0x43, 0x48, 0x01, 0x01, 0x0c, 0x28, 0x07, 0x00, 0x00, 0x00,
	0x10, 0x00, 0x00, 0x00, 0xed, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x15, 0xcd, 0x5b, 0x07, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x01, 0xf0, 0x00,
	0x00, 0x80, 0x00, 0x12, 0xa5, 0xc8, 0xf0, 0xf0, 0x66, 0xce, 0x9d, 0x9a,
};

static const uint8_t doc_configure[] = {
	0x42, 0x41, 0x43, 0x48, 0x01, 0x10, 0x00, 0x28, 0x02, 0x00, 0x00, 0x00,
	0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x13, 0xfc, 0x8b, 0x95,
};

static const uint8_t doc_ack[] = {
	0x42, 0x41, 0x43, 0x48, 0x01, 0x04, 0x00, 0x28, 0x02, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0xb1, 0xc8, 0x55,
};

static uint8_t doc_recs[12];
static size_t doc_n;
static uint64_t doc_ts;

static void doc_on_records(void *ctx, const uint8_t *recs, size_t n,
			   uint64_t ts)
{
	(void)ctx;
	assert_int_equal(n, 2);
	memcpy(doc_recs, recs, sizeof(doc_recs));
	doc_n += n;
	doc_ts = ts;
}

static void worked_examples(void **state)
{
	static const uint8_t recs[12] = { 0x00, 0x01, 0xf0, 0x00, 0x00, 0x80,
					  0x00, 0x12, 0xa5, 0xc8, 0xf0, 0xf0 };
	const uint16_t deltas[2] = { 0, 3 };
	const struct bach_board_config cfg = { .policy = BACH_POLICY_DROP,
					       .timing = 1 };
	const struct bach_parser_ops dops = { .records = doc_on_records,
					      .gap = on_gap,
					      .ack = on_ack };
	struct bach_parser_counters c;
	struct bach_parser *p;
	struct bach_rec r;
	uint8_t f[128], lead[64];
	size_t n;

	(void)state;
	n = bach_frame_build_data(f, 7, 1005, 123456789, 0, 5, recs, 2, deltas);
	assert_int_equal(n, sizeof(doc_data));
	assert_memory_equal(f, doc_data, n);
	n = bach_frame_build_command(f, 2, BACH_CMD_CONFIGURE, &cfg);
	assert_int_equal(n, sizeof(doc_configure));
	assert_memory_equal(f, doc_configure, n);
	n = bach_frame_build_ack(f, 2, BACH_CMD_CONFIGURE, BACH_ACK_OK);
	assert_int_equal(n, sizeof(doc_ack));
	assert_memory_equal(f, doc_ack, n);

	/* "a host that expected index 1000": a frame of 1000 records first */
	memset(&lg, 0, sizeof(lg));
	p = bach_parser_new(&dops, &lg);
	assert_non_null(p);
	n = bach_frame_build_data(lead, 6, 1000, 0, 0, 0, NULL, 0, NULL);
	bach_parser_feed(p, lead, n);
	assert_int_equal(bach_parser_next_index(p), 1000);
	bach_parser_feed(p, doc_data, sizeof(doc_data));
	bach_parser_feed(p, doc_ack, sizeof(doc_ack));
	EXPECT(&lg, G(5, BACH_GAP_OVERFLOW),
	       { 'A', BACH_CMD_CONFIGURE, BACH_ACK_OK, 0 });
	assert_int_equal(doc_n, 2);
	assert_int_equal(doc_ts, 123456789);
	assert_int_equal(bach_parser_next_index(p), 1007);
	bach_rec_unpack(doc_recs, &r);
	assert_int_equal(r.addr, 0x0001f000);
	assert_int_equal(r.be, 0x00);
	assert_string_equal(bach_type_name(r.ctl >> 4), "I_FETCH");
	bach_rec_unpack(doc_recs + 6, &r);
	assert_int_equal(r.addr, 0x0012a5c8);
	assert_int_equal(r.be, 0xf0);
	assert_string_equal(bach_type_name(r.ctl >> 4), "D_WRITE");
	bach_parser_counters(p, &c);
	assert_int_equal(c.frames, 3);
	assert_int_equal(c.lost_overflow, 5);
	bach_parser_free(p);

	/* a board's OUT-side parser sees the command as a good frame */
	p = bach_parser_new(NULL, NULL);
	assert_non_null(p);
	bach_parser_feed(p, doc_configure, sizeof(doc_configure));
	bach_parser_counters(p, &c);
	assert_int_equal(c.frames, 1);
	bach_parser_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(clean_stream, reset),
		cmocka_unit_test_setup(largest_frames, reset),
		cmocka_unit_test_setup(garbage, reset),
		cmocka_unit_test_setup(bad_crc, reset),
		cmocka_unit_test_setup(bad_magic, reset),
		cmocka_unit_test_setup(dropped_frame, reset),
		cmocka_unit_test_setup(overflow, reset),
		cmocka_unit_test_setup(overflow_and_lost_frame, reset),
		cmocka_unit_test_setup(duplicates, reset),
		cmocka_unit_test_setup(first_resets, reset),
		cmocka_unit_test_setup(timing, reset),
		cmocka_unit_test_setup(inconsistent_data_length, reset),
		cmocka_unit_test_setup(absurd_length, reset),
		cmocka_unit_test_setup(status_identity_ack, reset),
		cmocka_unit_test_setup(other_minor_versions, reset),
		cmocka_unit_test_setup(null_ops, reset),
		cmocka_unit_test_setup(zero_copy, reset),
		cmocka_unit_test(cause_names),
		cmocka_unit_test(worked_examples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
