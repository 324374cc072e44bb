// SPDX-License-Identifier: MIT
/* Board frames: builders and the stream parser (docs/board-protocol.md). */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/bus/frame.h"

/* Header field offsets. */
#define OFF_VERSION 4
#define OFF_TYPE    5
#define OFF_FLAGS   6
#define OFF_HDRLEN  7
#define OFF_SEQ	    8
#define OFF_PLEN    12
#define OFF_A	    16 /* data: index */
#define OFF_B	    24 /* data: timestamp */
#define OFF_C	    32 /* data: count; command, ack: command */
#define OFF_D	    36 /* data: lost; ack: result */

static const char *const cause_names[] = {
	[BACH_GAP_OVERFLOW] = "overflow", [BACH_GAP_FRAMES] = "frames",
	[BACH_GAP_CORRUPT] = "corrupt",	  [BACH_GAP_RING] = "ring",
	[BACH_GAP_DEVICE] = "device",	  [BACH_GAP_DISK] = "disk",
};
_Static_assert(sizeof(cause_names) / sizeof(*cause_names) == BACH_GAP_NCAUSES,
	       "every gap cause has a name");

const char *bach_gap_cause_name(enum bach_gap_cause c)
{
	if ((unsigned)c >= sizeof(cause_names) / sizeof(*cause_names))
		return "unknown";
	return cause_names[c];
}

/* ---- builders ---------------------------------------------------------- */

static void put_header(uint8_t *d, uint8_t type, uint8_t flags, uint32_t seq,
		       uint32_t plen, uint64_t a, uint64_t b, uint32_t c,
		       uint32_t dd)
{
	memcpy(d, BACH_FRAME_MAGIC, 4);
	d[OFF_VERSION] = BACH_PROTO_VERSION;
	d[OFF_TYPE] = type;
	d[OFF_FLAGS] = flags;
	d[OFF_HDRLEN] = BACH_FRAME_HDR;
	bach_put_le32(d + OFF_SEQ, seq);
	bach_put_le32(d + OFF_PLEN, plen);
	bach_put_le64(d + OFF_A, a);
	bach_put_le64(d + OFF_B, b);
	bach_put_le32(d + OFF_C, c);
	bach_put_le32(d + OFF_D, dd);
}

static size_t seal(uint8_t *d, size_t plen)
{
	size_t len = BACH_FRAME_HDR + plen;

	bach_put_le32(d + len, libdeflate_crc32(0, d, len));
	return len + BACH_FRAME_CRC;
}

size_t bach_frame_data_size(size_t n, bool timing)
{
	return BACH_FRAME_HDR + n * (timing ? 8 : BACH_REC_SIZE) +
	       BACH_FRAME_CRC;
}

size_t bach_frame_build_data(uint8_t *dst, uint32_t seq, uint64_t index,
			     uint64_t timestamp, uint8_t flags, uint32_t lost,
			     const uint8_t *recs, size_t n,
			     const uint16_t *deltas)
{
	size_t plen = n * BACH_REC_SIZE;
	uint8_t *pl = dst + BACH_FRAME_HDR;

	flags &= (uint8_t)~BACH_FF_TIMING;
	if (deltas) {
		flags |= BACH_FF_TIMING;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(pl, deltas, 2 * n); /* already little-endian */
#else
		for (size_t i = 0; i < n; i++)
			bach_put_le16(pl + 2 * i, deltas[i]);
#endif
		pl += 2 * n;
		plen += 2 * n;
	}
	if (lost)
		flags |= BACH_FF_OVERFLOW;
	put_header(dst, BACH_FT_DATA, flags, seq, (uint32_t)plen, index,
		   timestamp, (uint32_t)n, lost);
	if (n)
		memcpy(pl, recs, n * BACH_REC_SIZE);
	return seal(dst, plen);
}

size_t bach_frame_build_status(uint8_t *dst, uint32_t seq,
			       const struct bach_board_status *st)
{
	uint8_t *p = dst + BACH_FRAME_HDR;

	put_header(dst, BACH_FT_STATUS, 0, seq, BACH_STATUS_SIZE, 0, 0, 0, 0);
	bach_put_le32(p + 0, st->fifo_fill);
	bach_put_le32(p + 4, st->fifo_size);
	bach_put_le64(p + 8, st->records);
	bach_put_le64(p + 16, st->overflow);
	bach_put_le32(p + 24, st->stall_episodes);
	bach_put_le32(p + 28, st->clock_hz);
	bach_put_le64(p + 32, st->stalled_clocks);
	bach_put_le64(p + 40, st->reserved);
	bach_put_le64(p + 48, st->offbus);
	return seal(dst, BACH_STATUS_SIZE);
}

size_t bach_frame_build_identity(uint8_t *dst, uint32_t seq,
				 const struct bach_board_identity *id)
{
	uint8_t *p = dst + BACH_FRAME_HDR;

	put_header(dst, BACH_FT_IDENTITY, 0, seq, BACH_IDENTITY_SIZE, 0, 0,
		   BACH_CMD_IDENTIFY, BACH_ACK_OK);
	bach_put_le16(p + 0, id->vendor);
	bach_put_le16(p + 2, id->product);
	p[4] = id->gw_major;
	p[5] = id->gw_minor;
	bach_put_le16(p + 6, id->capabilities);
	bach_put_le32(p + 8, id->clock_hz);
	bach_put_le32(p + 12, id->fifo_records);
	memcpy(p + 16, id->serial, sizeof(id->serial));
	memcpy(p + 32, id->name, sizeof(id->name));
	return seal(dst, BACH_IDENTITY_SIZE);
}

size_t bach_frame_build_ack(uint8_t *dst, uint32_t seq, uint32_t command,
			    uint32_t result)
{
	put_header(dst, BACH_FT_ACK, 0, seq, 0, 0, 0, command, result);
	return seal(dst, 0);
}

size_t bach_frame_build_command(uint8_t *dst, uint32_t seq,
				enum bach_command cmd,
				const struct bach_board_config *cfg)
{
	uint32_t plen = cmd == BACH_CMD_CONFIGURE ? BACH_CONFIG_SIZE : 0;
	uint8_t *p = dst + BACH_FRAME_HDR;

	put_header(dst, BACH_FT_COMMAND, 0, seq, plen, 0, 0, cmd, 0);
	if (plen) {
		memset(p, 0, plen);
		if (cfg) {
			p[0] = cfg->policy;
			p[1] = cfg->timing;
			p[2] = cfg->test_pattern;
			p[3] = cfg->reserved;
			bach_put_le16(p + 4, cfg->type_filter);
			bach_put_le16(p + 6, cfg->high_water);
			bach_put_le16(p + 8, cfg->low_water);
			for (int i = 0; i < 3; i++)
				bach_put_le16(p + 10 + 2 * i,
					      cfg->reserved2[i]);
		}
	}
	return seal(dst, plen);
}

/* ---- parser ------------------------------------------------------------ */

struct bach_parser {
	struct bach_parser_ops ops;
	void *ctx;
	uint8_t *buf;	   /* a frame straddling feeds, from its magic */
	size_t have;	   /* bytes in buf */
	uint64_t expected; /* index the next data frame should carry */
	bool synced;	   /* expected is known */
	bool damaged;	   /* bytes rejected since the last data frame */
	size_t through;	   /* offset in the piece being fed just past
			      the bytes being scanned (bach_frame.end) */
	uint64_t fed;	   /* bytes fed before the piece being fed */
	uint64_t good_end; /* stream offset past the last good frame */
	uint64_t data_end; /* ... past the last good data frame */
	bool last;	   /* that data frame was flagged LAST */
	int last_type;	   /* type of the last good frame, or -1 */
	struct bach_parser_counters c;
};

struct bach_parser *bach_parser_new(const struct bach_parser_ops *ops,
				    void *ctx)
{
	struct bach_parser *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->buf = malloc(BACH_FRAME_MAX);
	if (!p->buf) {
		free(p);
		return NULL;
	}
	if (ops)
		p->ops = *ops;
	p->ctx = ctx;
	p->last_type = -1;
	return p;
}

void bach_parser_reset(struct bach_parser *p)
{
	p->have = 0;
	p->expected = 0;
	p->synced = p->damaged = p->last = false;
	p->fed = p->good_end = p->data_end = 0;
	p->last_type = -1;
	memset(&p->c, 0, sizeof(p->c));
}

void bach_parser_free(struct bach_parser *p)
{
	if (!p)
		return;
	free(p->buf);
	free(p);
}

uint64_t bach_parser_next_index(const struct bach_parser *p)
{
	return p->expected;
}

void bach_parser_counters(const struct bach_parser *p,
			  struct bach_parser_counters *c)
{
	*c = p->c;
}

/* Size of the frame whose valid header is at f, or 0 for a bad header. */
static size_t frame_size(const uint8_t *f)
{
	uint32_t plen = bach_get_le32(f + OFF_PLEN);

	if (f[OFF_VERSION] != BACH_PROTO_VERSION ||
	    f[OFF_HDRLEN] != BACH_FRAME_HDR || plen > BACH_FRAME_MAX_PAYLOAD)
		return 0;
	if (f[OFF_TYPE] == BACH_FT_DATA) {
		uint64_t n = bach_get_le32(f + OFF_C);
		unsigned each =
			f[OFF_FLAGS] & BACH_FF_TIMING ? 8 : BACH_REC_SIZE;

		if (n > BACH_FRAME_MAX_RECORDS || plen != n * each)
			return 0;
	}
	return BACH_FRAME_HDR + (size_t)plen + BACH_FRAME_CRC;
}

/*
 * First position >= from where the magic starts, or where the bytes up to
 * n are a prefix of it; n when there is none.
 */
static size_t find_magic(const uint8_t *b, size_t from, size_t n)
{
	while (from < n) {
		const uint8_t *m = memchr(b + from, 'B', n - from);
		size_t q, k;

		if (!m)
			return n;
		q = (size_t)(m - b);
		k = n - q < 4 ? n - q : 4;
		if (!memcmp(m, BACH_FRAME_MAGIC, k))
			return q;
		from = q + 1;
	}
	return n;
}

static void skip(struct bach_parser *p, size_t k)
{
	if (k) {
		p->c.resync_bytes += k;
		p->damaged = true;
	}
}

static void gap(struct bach_parser *p, uint64_t lost, enum bach_gap_cause c)
{
	if (c == BACH_GAP_OVERFLOW)
		p->c.lost_overflow += lost;
	else if (c == BACH_GAP_CORRUPT)
		p->c.lost_corrupt += lost;
	else
		p->c.lost_frames += lost;
	if (p->ops.gap)
		p->ops.gap(p->ctx, lost, c);
}

static void data_frame(struct bach_parser *p, const struct bach_frame *f)
{
	uint8_t flags = f->flags;
	uint64_t index = f->a;
	uint32_t n = f->c;
	uint64_t over = flags & BACH_FF_OVERFLOW ? f->d : 0;
	const uint8_t *recs = f->payload;

	p->c.data_frames++;
	if (flags & BACH_FF_FIRST) {
		p->expected = index - (over < index ? over : index);
		p->synced = true;
		p->damaged = false;
	} else if (!p->synced) {
		p->expected = index;
		p->synced = true;
	} else if (index < p->expected) {
		p->c.duplicates++;
		return;
	}
	if (index > p->expected) {
		uint64_t lost = index - p->expected;

		if (over > lost)
			over = lost;
		if (lost > over)
			gap(p, lost - over,
			    p->damaged ? BACH_GAP_CORRUPT : BACH_GAP_FRAMES);
		if (over)
			gap(p, over, BACH_GAP_OVERFLOW);
	}
	p->expected = index + n;
	p->damaged = false;
	if (!n)
		return;
	p->c.records += n;
	if (flags & BACH_FF_TIMING) {
		if (p->ops.deltas)
			p->ops.deltas(p->ctx, recs, n, f->b);
		recs += 2 * (size_t)n;
	}
	if (p->ops.records)
		p->ops.records(p->ctx, recs, n, f->b);
}

/* Copy a payload into a zeroed buffer of the size this version knows. */
static void payload(uint8_t *dst, size_t size, const struct bach_frame *f)
{
	memset(dst, 0, size);
	memcpy(dst, f->payload, f->plen < size ? f->plen : size);
}

void bach_frame_status(const struct bach_frame *f, struct bach_board_status *st)
{
	uint8_t b[BACH_STATUS_SIZE];

	payload(b, sizeof(b), f);
	st->fifo_fill = bach_get_le32(b + 0);
	st->fifo_size = bach_get_le32(b + 4);
	st->records = bach_get_le64(b + 8);
	st->overflow = bach_get_le64(b + 16);
	st->stall_episodes = bach_get_le32(b + 24);
	st->clock_hz = bach_get_le32(b + 28);
	st->stalled_clocks = bach_get_le64(b + 32);
	st->reserved = bach_get_le64(b + 40);
	st->offbus = bach_get_le64(b + 48);
}

void bach_frame_identity(const struct bach_frame *f,
			 struct bach_board_identity *id)
{
	uint8_t b[BACH_IDENTITY_SIZE];

	payload(b, sizeof(b), f);
	id->vendor = bach_get_le16(b + 0);
	id->product = bach_get_le16(b + 2);
	id->gw_major = b[4];
	id->gw_minor = b[5];
	id->capabilities = bach_get_le16(b + 6);
	id->clock_hz = bach_get_le32(b + 8);
	id->fifo_records = bach_get_le32(b + 12);
	memcpy(id->serial, b + 16, sizeof(id->serial));
	memcpy(id->name, b + 32, sizeof(id->name));
}

/* The header at f (a valid one), decoded; the payload follows it. */
static void header(struct bach_frame *h, const uint8_t *f)
{
	h->type = f[OFF_TYPE];
	h->flags = f[OFF_FLAGS];
	h->seq = bach_get_le32(f + OFF_SEQ);
	h->plen = bach_get_le32(f + OFF_PLEN);
	h->a = bach_get_le64(f + OFF_A);
	h->b = bach_get_le64(f + OFF_B);
	h->c = bach_get_le32(f + OFF_C);
	h->d = bach_get_le32(f + OFF_D);
	h->payload = f + BACH_FRAME_HDR;
	h->end = 0;
}

size_t bach_parser_pending(const struct bach_parser *p, struct bach_frame *h)
{
	if (p->have < BACH_FRAME_HDR || !frame_size(p->buf))
		return 0;
	header(h, p->buf);
	h->payload = NULL;
	return p->have;
}

/* A good frame at f, ending at end in the piece being fed. */
static void dispatch(struct bach_parser *p, const uint8_t *f, size_t end)
{
	struct bach_frame h;

	p->c.frames++;
	header(&h, f);
	h.end = end;
	if (p->ops.frame)
		p->ops.frame(p->ctx, &h);
	switch (h.type) {
	case BACH_FT_DATA:
		data_frame(p, &h);
		break;
	case BACH_FT_STATUS:
		if (p->ops.status) {
			struct bach_board_status st;

			bach_frame_status(&h, &st);
			p->ops.status(p->ctx, &st);
		}
		break;
	case BACH_FT_IDENTITY:
		if (p->ops.identity) {
			struct bach_board_identity id;

			bach_frame_identity(&h, &id);
			p->ops.identity(p->ctx, &id);
		}
		break;
	case BACH_FT_ACK:
		if (p->ops.ack)
			p->ops.ack(p->ctx, h.c, h.d);
		break;
	default: /* commands echoed, types of a later minor */
		break;
	}
}

/*
 * Handle every whole frame in b[0..n) in place and skip garbage. b[n] is
 * at p->through in the piece being fed. Returns the bytes used; the rest
 * is the start of an incomplete frame (or of its magic), shorter than
 * that frame.
 */
static size_t scan(struct bach_parser *p, const uint8_t *b, size_t n)
{
	size_t pos = 0;

	while (pos < n) {
		const uint8_t *f = b + pos;
		size_t left = n - pos, size, body;

		if (left < 4 || memcmp(f, BACH_FRAME_MAGIC, 4)) {
			size_t q = find_magic(b, pos, n);

			skip(p, q - pos);
			pos = q;
			if (n - pos < 4)
				break;
			continue;
		}
		if (left < BACH_FRAME_HDR)
			break;
		size = frame_size(f);
		if (!size) {
			p->c.bad_header++;
			skip(p, 1);
			pos++;
			continue;
		}
		if (left < size)
			break;
		body = size - BACH_FRAME_CRC;
		if (libdeflate_crc32(0, f, body) != bach_get_le32(f + body)) {
			p->c.bad_crc++;
			skip(p, 4);
			pos += 4;
			continue;
		}
		pos += size;
		p->good_end = p->fed + p->through - (n - pos);
		p->last_type = f[OFF_TYPE];
		if (f[OFF_TYPE] == BACH_FT_DATA) {
			p->data_end = p->good_end;
			p->last = f[OFF_FLAGS] & BACH_FF_LAST;
		}
		/* 0: found late, behind a damaged length, it ended before */
		dispatch(p, f,
			 p->through > n - pos ? p->through - (n - pos) : 0);
	}
	return pos;
}

void bach_parser_feed(struct bach_parser *p, const uint8_t *buf, size_t len)
{
	size_t whole = len;

	while (len) {
		size_t need, take, used;

		if (!p->have) {
			p->through = whole;
			used = scan(p, buf, len);
			memcpy(p->buf, buf + used, len - used);
			p->have = len - used;
			p->fed += whole;
			return;
		}
		/* Complete the frame started in p->buf, no further. */
		need = BACH_FRAME_HDR;
		if (p->have >= BACH_FRAME_HDR)
			need = frame_size(p->buf);
		take = need - p->have < len ? need - p->have : len;
		memcpy(p->buf + p->have, buf, take);
		p->have += take;
		buf += take;
		len -= take;
		p->through = whole - len;
		used = scan(p, p->buf, p->have);
		if (used) {
			p->have -= used;
			memmove(p->buf, p->buf + used, p->have);
		}
	}
	p->fed += whole;
}

void bach_parser_tail(const struct bach_parser *p, struct bach_parser_tail *t)
{
	t->bytes = p->fed;
	t->records = p->c.records;
	t->good_end = p->good_end;
	t->data_end = p->data_end;
	t->damaged = p->damaged;
	t->last = p->last;
	t->last_type = p->last_type;
}
