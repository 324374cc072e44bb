// SPDX-License-Identifier: MIT
/*
 * usb_walk: the usb driver's frame walker (drivers/usb/protocol.c) finds
 * exactly the replies the frame parser (lib/frame.c) finds, whatever the
 * stream and however it is cut into pieces. The driver sees ACKs and
 * STATUS through the walker alone, so one it missed would be a command
 * timed out, and one it made up a capture stopped early.
 *
 *   usb_walk [TRIALS]     exit 0 when every trial agrees
 *
 * Each trial is a stream of data frames (with and without deltas, their
 * records salted with the magic), status and ACK frames, garbage, and
 * frames damaged in their header; it ends with enough zeros that the
 * parser finishes any frame it still waits for. Both read it in the same
 * random pieces, from 1 byte to more than the largest frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/frame.h"
#include "protocol.h"

/* the core's services the walker's file refers to, unused here */
void bach_source_frames(struct bach_source *src, const uint8_t *buf,
			size_t len)
{
	(void)src;
	(void)buf;
	(void)len;
}

void bach_source_flush(struct bach_source *src)
{
	(void)src;
}

int bach_source_error(struct bach_source *src, int err, const char *fmt, ...)
{
	(void)src;
	(void)fmt;
	return err;
}

void bach_source_warn(struct bach_source *src, const char *fmt, ...)
{
	(void)src;
	(void)fmt;
}

struct count {
	unsigned acks, statuses;
	uint64_t ack_sum;	/* commands and results, to compare contents */
};

static void parser_ack(void *ctx, uint32_t cmd, uint32_t result)
{
	struct count *c = ctx;

	c->acks++;
	c->ack_sum += cmd * 16 + result;
}

static void parser_status(void *ctx, const struct bach_board_status *st)
{
	struct count *c = ctx;

	(void)st;
	c->statuses++;
}

static void walker_frame(void *ctx, const struct usb_frame *f)
{
	struct count *c = ctx;

	if (f->type == BACH_FT_ACK) {
		c->acks++;
		c->ack_sum += f->c * 16 + f->d;
	} else if (f->type == BACH_FT_STATUS) {
		c->statuses++;
	}
}

#define STREAM (6u << 20)
#define TAIL (BACH_FRAME_MAX + 4096)

static size_t make_stream(uint8_t *b, uint8_t *recs, uint16_t *deltas)
{
	uint64_t index = 0;
	uint32_t seq = 0;
	size_t n = 0;

	for (size_t i = 0; i < BACH_FRAME_MAX_RECORDS * 6; i++)
		recs[i] = (uint8_t)rand();
	for (int i = 0; i < 300; i++)
		memcpy(recs + (size_t)rand() % (BACH_FRAME_MAX_RECORDS * 6 - 4),
		       BACH_FRAME_MAGIC, 4);
	while (n < STREAM) {
		int k = rand() % 10;

		if (k < 4) {
			size_t c = (size_t)(rand() % 4000);

			n += bach_frame_build_data(b + n, seq++, index, 0, 0, 0,
						   recs, c,
						   rand() & 1 ? deltas : NULL);
			index += c;
		} else if (k < 6) {
			struct bach_board_status st = { .records = index };

			n += bach_frame_build_status(b + n, seq, &st);
		} else if (k < 8) {
			n += bach_frame_build_ack(b + n, seq, (uint32_t)(rand() % 7),
						  (uint32_t)(rand() % 5));
		} else if (k < 9) {
			size_t g = (size_t)(rand() % 300);

			for (size_t i = 0; i < g; i++)
				b[n + i] = rand() % 3 ? (uint8_t)rand() : 'B';
			n += g;
		} else {
			/* a reply damaged in its header (its length too) */
			size_t m = bach_frame_build_ack(b + n, seq, 1, 0);

			b[n + 5 + (size_t)rand() % 35] ^= (uint8_t)(1 + rand() % 255);
			n += m;
		}
	}
	memset(b + n, 0, TAIL);
	return n + TAIL;
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 200;
	uint8_t *b = malloc(STREAM + BACH_FRAME_MAX + TAIL);
	uint8_t *recs = malloc(BACH_FRAME_MAX_RECORDS * 6);
	uint16_t *deltas = calloc(BACH_FRAME_MAX_RECORDS, sizeof(*deltas));
	struct bach_parser_ops ops = { .ack = parser_ack,
				       .status = parser_status };
	unsigned total = 0;

	if (!b || !recs || !deltas)
		return 2;
	for (int t = 0; t < trials; t++) {
		struct count pc = { 0 }, wc = { 0 };
		struct bach_parser *p = bach_parser_new(&ops, &pc);
		struct usb_walk w;
		size_t n, off = 0;

		if (!p)
			return 2;
		srand((unsigned)t + 1);
		n = make_stream(b, recs, deltas);
		usb_walk_reset(&w);
		while (off < n) {
			size_t k = 1 + (size_t)rand() % (rand() % 2 ? 64 : 600000);

			if (k > n - off)
				k = n - off;
			bach_parser_feed(p, b + off, k);
			usb_walk_feed(&w, b + off, k, walker_frame, &wc);
			off += k;
		}
		bach_parser_free(p);
		if (pc.acks != wc.acks || pc.statuses != wc.statuses ||
		    pc.ack_sum != wc.ack_sum) {
			printf("trial %d: the parser found %u ACKs and %u STATUS, the walker %u and %u\n",
			       t, pc.acks, pc.statuses, wc.acks, wc.statuses);
			return 1;
		}
		total += pc.acks + pc.statuses;
	}
	printf("usb_walk: %d streams, %u replies, the walker found every one the parser did\n",
	       trials, total);
	free(b);
	free(recs);
	free(deltas);
	return 0;
}
