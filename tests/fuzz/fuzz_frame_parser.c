// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the board frame parser (bach_parser_feed()).
 *
 * Input: byte 0 bits 0..3 give k, then k bytes of piece sizes (b, or 64 *
 * (b - 127) when b > 127; 0 means 1). Byte 0 bit 7 picks what the rest is:
 *
 *   clear: the byte stream itself;
 *   set:   a recipe the target builds the stream from with the builders
 *          (frames pass the CRC, so the fuzzer reaches the frame logic).
 *          Each op byte o, o & 7:
 *            0, 1  a data frame: count = next byte (times 37 if o & 0x10),
 *                  timing if o & 0x08, FIRST if o & 0x20, LAST if o & 0x40,
 *                  lost = next byte if o & 0x80 (its index moves on by it)
 *            2     the same, built but not sent (lost on the link)
 *            3, 4  a STATUS / IDENTITY frame, fields from the next bytes
 *            5     an ACK, command and result from the next 2 bytes
 *            6     garbage: length = next byte, then that many bytes
 *            7     damage: xor byte (next 2 bytes, LE) % length so far
 *                  with (next byte | 1)
 *          The first data frame always gets FIRST.
 *
 * The stream is parsed twice, whole and in the pieces, cycling through the
 * sizes: events and counters must be identical. Callbacks check their
 * arguments; the counters must equal the sums of the callbacks. Every
 * good frame comes to the frame callback once, and where it says the
 * frame ends in the piece, a frame with that header and a good CRC ends. A
 * recipe without garbage, damage or a FIRST frame left out has an exact oracle:
 * every record, overflow and link gap as built.
 */
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/bus/frame.h"

#include "fuzz_check.h"

#define STREAM_MAX (2u << 20)

struct seen {
	uint64_t hash;
	uint64_t records, events;
	uint64_t lost[BACH_GAP_NCAUSES];
	uint64_t status, identity, ack, frames;
	struct bach_board_status st;
	struct bach_board_identity id;
	/* the piece being fed, and where it starts in the stream */
	const uint8_t *stream;
	size_t piece, piece_len, last_end;
};

static void mix(struct seen *s, uint64_t v)
{
	s->hash = (s->hash ^ v) * 0x100000001b3ull;
	s->events++;
}

static void on_records(void *ctx, const uint8_t *recs, size_t n, uint64_t ts)
{
	struct seen *s = ctx;
	uint64_t h = 0;

	CHECK(n >= 1 && n <= BACH_FRAME_MAX_RECORDS, "n %zu", n);
	for (size_t i = 0; i < n * BACH_REC_SIZE; i++)
		h = h * 31 + recs[i];
	s->records += n;
	mix(s, 'R');
	mix(s, n);
	mix(s, ts);
	mix(s, h);
}

static void on_gap(void *ctx, uint64_t lost, enum bach_gap_cause cause)
{
	struct seen *s = ctx;

	CHECK(lost > 0, "empty gap");
	CHECK(cause == BACH_GAP_OVERFLOW || cause == BACH_GAP_FRAMES ||
		      cause == BACH_GAP_CORRUPT,
	      "cause %d", cause);
	s->lost[cause] += lost;
	mix(s, 'G');
	mix(s, lost);
	mix(s, cause);
}

static void on_status(void *ctx, const struct bach_board_status *st)
{
	struct seen *s = ctx;

	s->st = *st;
	s->status++;
	mix(s, 'S');
	mix(s, st->records ^ st->overflow ^ st->fifo_fill ^ st->clock_hz);
}

static void on_identity(void *ctx, const struct bach_board_identity *id)
{
	struct seen *s = ctx;

	s->id = *id;
	s->identity++;
	mix(s, 'I');
	mix(s, (uint64_t)id->gw_major << 8 | id->gw_minor);
}

static void on_ack(void *ctx, uint32_t command, uint32_t result)
{
	struct seen *s = ctx;

	s->ack++;
	mix(s, 'A');
	mix(s, (uint64_t)command << 32 | result);
}

static void on_frame(void *ctx, const struct bach_frame *f)
{
	struct seen *s = ctx;
	size_t size = BACH_FRAME_HDR + (size_t)f->plen + BACH_FRAME_CRC;

	CHECK(f->plen <= BACH_FRAME_MAX_PAYLOAD, "plen %u", f->plen);
	CHECK(f->end <= s->piece_len, "end %zu of a piece of %zu", f->end,
	      s->piece_len);
	if (f->end) {
		/* 0: found late, it ended in an earlier piece */
		size_t end = s->piece + f->end;
		const uint8_t *h;

		CHECK(end >= size && end > s->last_end,
		      "a frame ending at %zu, after one ending at %zu", end,
		      s->last_end);
		h = s->stream + end - size;
		CHECK(!memcmp(h, BACH_FRAME_MAGIC, 4) && h[5] == f->type &&
			      bach_get_le32(h + 16) == (uint32_t)f->a &&
			      libdeflate_crc32(0, h, size - BACH_FRAME_CRC) ==
				      bach_get_le32(h + size - BACH_FRAME_CRC),
		      "no such frame ends at %zu", end);
		CHECK(!memcmp(f->payload, h + BACH_FRAME_HDR, f->plen),
		      "payload");
		s->last_end = end;
	}
	s->frames++;
	mix(s, 'F');
	mix(s, (uint64_t)f->type << 40 ^ (uint64_t)f->flags << 32 ^ f->seq);
	mix(s, f->a ^ f->b ^ ((uint64_t)f->c << 32 | f->d));
}

static const struct bach_parser_ops ops = {
	.records = on_records,
	.gap = on_gap,
	.status = on_status,
	.identity = on_identity,
	.ack = on_ack,
	.frame = on_frame,
};

static void parse(const uint8_t *b, size_t n, const size_t *sizes,
		  size_t nsizes, struct seen *s, struct bach_parser_counters *c)
{
	struct bach_parser *p = bach_parser_new(&ops, s);
	size_t off = 0, i = 0;

	CHECK(p, "out of memory");
	memset(s, 0, sizeof(*s));
	s->stream = b;
	while (off < n) {
		size_t k = nsizes ? sizes[i++ % nsizes] : n - off;

		if (k > n - off)
			k = n - off;
		s->piece = off;
		s->piece_len = k;
		bach_parser_feed(p, b + off, k);
		off += k;
	}
	bach_parser_counters(p, c);
	mix(s, bach_parser_next_index(p));
	bach_parser_free(p);

	CHECK(c->records == s->records, "records %llu, callbacks %llu",
	      (unsigned long long)c->records, (unsigned long long)s->records);
	CHECK(c->lost_overflow == s->lost[BACH_GAP_OVERFLOW], "overflow");
	CHECK(c->lost_frames == s->lost[BACH_GAP_FRAMES], "frames");
	CHECK(c->lost_corrupt == s->lost[BACH_GAP_CORRUPT], "corrupt");
	CHECK(c->frames >= c->data_frames && c->data_frames >= c->duplicates,
	      "frame counts");
	CHECK(c->frames >= s->status + s->identity + s->ack, "frame counts");
	CHECK(c->frames == s->frames, "%llu frames, %llu to the callback",
	      (unsigned long long)c->frames, (unsigned long long)s->frames);
	CHECK(c->resync_bytes <= n, "resync %llu of %zu bytes",
	      (unsigned long long)c->resync_bytes, n);
}

/* ---- recipes ----------------------------------------------------------- */

struct recipe {
	const uint8_t *in;
	size_t left;
	uint8_t *out;
	size_t len;
	uint64_t next; /* index of the next record built */
	uint32_t seq;
	bool any_data, exact;
	/* what the parser must report when exact */
	uint64_t records, overflow, link, pending, frames, status, identity,
		ack;
	struct bach_board_status st;
	struct bach_board_identity id;
};

static unsigned next_byte(struct recipe *r)
{
	if (!r->left)
		return 0;
	r->left--;
	return *r->in++;
}

static void next_bytes(struct recipe *r, void *dst, size_t n)
{
	uint8_t *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = (uint8_t)next_byte(r);
}

static void data_op(struct recipe *r, unsigned o)
{
	static uint8_t recs[255 * 37 * BACH_REC_SIZE];
	static uint16_t deltas[255 * 37];
	size_t n = next_byte(r) * (o & 0x10 ? 37 : 1);
	uint8_t flags =
		(o & 0x20 ? BACH_FF_FIRST : 0) | (o & 0x40 ? BACH_FF_LAST : 0);
	uint32_t lost = o & 0x80 ? next_byte(r) : 0;
	bool send = (o & 7) != 2;
	uint64_t index;

	if (!r->any_data && send)
		flags |= BACH_FF_FIRST;
	if (flags & BACH_FF_FIRST) {
		r->next = 0;
		r->pending = 0;
		if (!send)
			r->exact = false;
	}
	index = r->next + lost;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = index + i;

		bach_put_be32(recs + i * BACH_REC_SIZE, (uint32_t)(x << 3));
		recs[i * BACH_REC_SIZE + 4] = (uint8_t)(x >> 29);
		recs[i * BACH_REC_SIZE + 5] = 0xc0;
		deltas[i] = (uint16_t)(i ? 1 + (x & 7) : 0);
	}
	r->next = index + n;
	if (!send) {
		r->pending += lost + n;
		return;
	}
	if (r->len + bach_frame_data_size(n, o & 8) > STREAM_MAX) {
		r->left = 0;
		return;
	}
	r->len += bach_frame_build_data(r->out + r->len, r->seq++, index,
					index * 3, flags, lost, recs, n,
					o & 8 ? deltas : NULL);
	r->any_data = true;
	r->records += n;
	r->overflow += lost;
	r->link += r->pending;
	r->pending = 0;
	r->frames++;
}

static size_t build(struct recipe *r)
{
	while (r->left && r->len + BACH_FRAME_HDR + 512 <= STREAM_MAX) {
		unsigned o = next_byte(r), k;
		size_t at;

		switch (o & 7) {
		case 0:
		case 1:
		case 2:
			data_op(r, o);
			break;
		case 3:
			next_bytes(r, &r->st, sizeof(r->st));
			r->len += bach_frame_build_status(r->out + r->len, 0,
							  &r->st);
			r->status++;
			r->frames++;
			break;
		case 4:
			next_bytes(r, &r->id, sizeof(r->id));
			r->len += bach_frame_build_identity(r->out + r->len, 0,
							    &r->id);
			r->identity++;
			r->frames++;
			break;
		case 5:
			k = next_byte(r);
			r->len += bach_frame_build_ack(r->out + r->len, 0, k,
						       next_byte(r));
			r->ack++;
			r->frames++;
			break;
		case 6:
			k = next_byte(r);
			for (unsigned i = 0; i < k; i++)
				r->out[r->len++] = (uint8_t)next_byte(r);
			r->exact = false;
			break;
		case 7:
			at = next_byte(r);
			at |= (size_t)next_byte(r) << 8;
			k = next_byte(r) | 1;
			if (r->len)
				r->out[at % r->len] ^= (uint8_t)k;
			r->exact = false;
			break;
		}
	}
	return r->len;
}

static void check_exact(const struct recipe *r, const struct seen *s,
			const struct bach_parser_counters *c)
{
	CHECK(c->records == r->records, "records %llu, built %llu",
	      (unsigned long long)c->records, (unsigned long long)r->records);
	CHECK(c->lost_overflow == r->overflow, "overflow %llu, built %llu",
	      (unsigned long long)c->lost_overflow,
	      (unsigned long long)r->overflow);
	CHECK(c->lost_frames == r->link, "link %llu, built %llu",
	      (unsigned long long)c->lost_frames, (unsigned long long)r->link);
	CHECK(c->lost_corrupt == 0 && c->bad_crc == 0 && c->bad_header == 0 &&
		      c->resync_bytes == 0 && c->duplicates == 0,
	      "damage in a clean stream");
	CHECK(c->frames == r->frames, "frames %llu, built %llu",
	      (unsigned long long)c->frames, (unsigned long long)r->frames);
	CHECK(s->status == r->status && s->identity == r->identity &&
		      s->ack == r->ack,
	      "replies");
	if (r->status)
		CHECK(!memcmp(&s->st, &r->st, sizeof(s->st)), "status");
	if (r->identity)
		CHECK(!memcmp(&s->id, &r->id, sizeof(s->id)), "identity");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[STREAM_MAX];
	struct bach_parser_counters c1, c2;
	struct seen s1, s2;
	struct recipe r;
	size_t sizes[15], nsizes, i;
	const uint8_t *stream;
	size_t len;

	if (!size)
		return 0;
	nsizes = data[0] & 15;
	if (nsizes > size - 1)
		nsizes = size - 1;
	for (i = 0; i < nsizes; i++) {
		unsigned b = data[1 + i];

		sizes[i] = b > 127 ? 64 * (b - 127) : b ? b : 1;
	}
	stream = data + 1 + nsizes;
	len = size - 1 - nsizes;
	memset(&r, 0, sizeof(r));
	r.exact = true;
	if (data[0] & 0x80) {
		r.in = stream;
		r.left = len;
		r.out = out;
		len = build(&r);
		stream = out;
	}

	parse(stream, len, NULL, 0, &s1, &c1);
	parse(stream, len, sizes, nsizes, &s2, &c2);
	CHECK(s1.hash == s2.hash && s1.events == s2.events,
	      "events differ when fed in %zu pieces", nsizes);
	CHECK(!memcmp(&c1, &c2, sizeof(c1)), "counters differ in pieces");
	if (data[0] & 0x80 && r.exact)
		check_exact(&r, &s1, &c1);
	return 0;
}
