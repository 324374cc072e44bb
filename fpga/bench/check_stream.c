// SPDX-License-Identifier: MIT
/*
 * check_stream: checks the byte stream the gateware wrote to the FT2232H
 * in a testbench run (DIR/stream.bin, what the host would read) with the
 * project's own frame parser, against what the scenario put on the bus.
 *
 *   check_stream DIR [options]      (the options are in DIR/check.args)
 *
 *   --policy stall|drop   the loss policy: stall loses nothing
 *   --timing              data frames carry deltas
 *   --pattern counter|lfsr  records are the test pattern, not expect.byu
 *   --need-loss           records must have been lost (drop)
 *   --need-stall          the board must have held the CPU
 *   --need-frames N       at least N data frames
 *   --filtered N          the filter kept N records of the cycles
 *   --counters-reset      RESET_COUNTERS ran during the capture
 *   --no-bus-clock        the bus clock was off: STATUS says 0 Hz
 *
 * A scenario may run a capture of the other source first (bus before a
 * pattern, pattern before the bus); summary.txt's mark_byte says where
 * the capture checked in full begins. Before it, the frames are checked
 * as frames, and their replies as replies.
 *
 * It checks, and says which check failed (exit 1):
 *   - every byte is in a good frame (no resync, no bad CRC or header);
 *   - the replies (IDENTITY, STATUS, ACK) are replies.txt, in order, with
 *     per-type sequence numbers from 0, and the identity is the board's;
 *   - data frames: sequence numbers from 0, FIRST on the first only, LAST
 *     on the last only and before the final STATUS and ACK of STOP,
 *     OVERFLOW exactly when `lost` is not 0, TIMING as configured;
 *   - every record delivered is the expected one at its index (the bus
 *     model's list, or the pattern), gaps only for overflow, and delivered
 *     plus lost is everything the bus carried;
 *   - timestamps and deltas agree with the bus model's clock (ts.txt);
 *   - the final STATUS: records, lost, stall episodes and stalled clocks
 *     as the parser and the testbench counted them, the ADS#s seen with
 *     the CPU off the bus as the bus model counted them, an empty FIFO of
 *     1024 records, the bus clock at 66.67 MHz (or 0 Hz when it was off).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "lib/bus/frame.h"
#include "lib/exit.h"

#define FIFO_RECORDS  1024
#define FRAME_RECORDS 512
#define BUS_HZ	      66666667.0

static const char *dir;
static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (failures++ > 20)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "check_stream: %s: ", dir);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "check_stream: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_USAGE);
}

static uint8_t *slurp(const char *name, size_t *len, int must)
{
	char path[4096];
	FILE *f;
	uint8_t *b = NULL;
	size_t cap = 0, n = 0, k;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f) {
		if (must)
			die("%s: %s", path, strerror(errno));
		*len = 0;
		return NULL;
	}
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			b = realloc(b, cap + 1);
			if (!b)
				die("out of memory");
		}
		k = fread(b + n, 1, cap - n, f);
		n += k;
	} while (k);
	fclose(f);
	b[n] = 0;
	*len = n;
	return b;
}

/* lines of numbers */
static uint64_t *numbers(const char *name, size_t *count)
{
	size_t len, n = 0;
	char *text = (char *)slurp(name, &len, 1), *p = text, *end;
	uint64_t *v = malloc((len / 2 + 1) * sizeof(*v));

	if (!v)
		die("out of memory");
	for (;;) {
		uint64_t x = strtoull(p, &end, 10);

		if (end == p)
			break;
		v[n++] = x;
		p = end;
	}
	free(text);
	*count = n;
	return v;
}

/* ---- what the parser delivers ------------------------------------------ */

struct got {
	uint8_t *recs;	 /* delivered records, in order */
	uint64_t *index; /* the index of each */
	size_t n, cap;
	uint64_t pos; /* index of the next record */
	uint64_t lost;
	char replies[64][32];
	size_t nreplies;
	struct bach_board_status status; /* the last one */
	size_t nstatus;
	struct bach_board_identity ident;
	size_t nident;
};

static void on_records(void *ctx, const uint8_t *recs, size_t n,
		       uint64_t timestamp)
{
	struct got *g = ctx;

	(void)timestamp;
	if (g->n + n > g->cap) {
		g->cap = 2 * (g->n + n);
		g->recs = realloc(g->recs, g->cap * BACH_REC_SIZE);
		g->index = realloc(g->index, g->cap * sizeof(*g->index));
		if (!g->recs || !g->index)
			die("out of memory");
	}
	memcpy(g->recs + g->n * BACH_REC_SIZE, recs, n * BACH_REC_SIZE);
	for (size_t i = 0; i < n; i++)
		g->index[g->n + i] = g->pos + i;
	g->n += n;
	g->pos += n;
}

static void on_gap(void *ctx, uint64_t lost, enum bach_gap_cause cause)
{
	struct got *g = ctx;

	if (cause != BACH_GAP_OVERFLOW)
		fail("a gap of %" PRIu64 " records, cause %s", lost,
		     bach_gap_cause_name(cause));
	g->pos += lost;
	g->lost += lost;
}

static void reply(struct got *g, const char *fmt, ...)
{
	va_list ap;

	if (g->nreplies == 64) {
		fail("more than 64 replies");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(g->replies[g->nreplies++], 32, fmt, ap);
	va_end(ap);
}

static void on_status(void *ctx, const struct bach_board_status *st)
{
	struct got *g = ctx;

	g->status = *st;
	g->nstatus++;
	reply(g, "STATUS");
}

static void on_identity(void *ctx, const struct bach_board_identity *id)
{
	struct got *g = ctx;

	g->ident = *id;
	g->nident++;
	reply(g, "IDENTITY");
}

static void on_ack(void *ctx, uint32_t command, uint32_t result)
{
	reply(ctx, "ACK %" PRIu32 " %" PRIu32, command, result);
}

/* ---- the test patterns (docs/board-protocol.md section 6) ---------------- */

struct pattern {
	int lfsr;
	uint64_t at; /* index of s */
	uint32_t s;
};

static void pattern_rec(struct pattern *p, uint64_t i, uint8_t *r)
{
	if (!p->lfsr) {
		bach_rec_put(r, (uint32_t)(i << 3), 0x00, 0xc0);
		return;
	}
	if (i < p->at) {
		p->at = 0;
		p->s = 1;
	}
	for (; p->at < i; p->at++)
		p->s = p->s >> 1 ^ (p->s & 1 ? 0x80200003u : 0);
	bach_rec_put(r, p->s & 0xfffffff8u, (uint8_t)p->s, 0xc0);
}

/* ---- options ------------------------------------------------------------- */

struct opts {
	int drop, timing, pattern, lfsr, need_loss, need_stall, reset, noclk;
	long need_frames, filtered;
};

static void parse_args(struct opts *o, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(a, "--policy")) {
			o->drop = !strcmp(v, "drop");
			if (!o->drop && strcmp(v, "stall"))
				die("--policy stall|drop, not '%s'", v);
			i++;
		} else if (!strcmp(a, "--pattern")) {
			o->pattern = 1;
			o->lfsr = !strcmp(v, "lfsr");
			if (!o->lfsr && strcmp(v, "counter"))
				die("--pattern counter|lfsr, not '%s'", v);
			i++;
		} else if (!strcmp(a, "--need-frames")) {
			o->need_frames = atol(v);
			i++;
		} else if (!strcmp(a, "--filtered")) {
			o->filtered = atol(v);
			i++;
		} else if (!strcmp(a, "--timing")) {
			o->timing = 1;
		} else if (!strcmp(a, "--need-loss")) {
			o->need_loss = 1;
		} else if (!strcmp(a, "--need-stall")) {
			o->need_stall = 1;
		} else if (!strcmp(a, "--counters-reset")) {
			o->reset = 1;
		} else if (!strcmp(a, "--no-bus-clock")) {
			o->noclk = 1;
		} else {
			die("unknown option '%s'", a);
		}
	}
}

/* DIR/check.args as an argument vector */
static void file_args(struct opts *o)
{
	size_t len;
	char *text = (char *)slurp("check.args", &len, 0), *argv[32], *t;
	int argc = 0;

	if (!text)
		return;
	for (t = strtok(text, " \t\n"); t && argc < 32;
	     t = strtok(NULL, " \t\n"))
		argv[argc++] = t;
	parse_args(o, argc, argv);
	free(text);
}

static uint64_t summary_or(const char *key, int must, uint64_t dflt);

static uint64_t summary(const char *key)
{
	return summary_or(key, 1, 0);
}

static uint64_t summary_or(const char *key, int must, uint64_t dflt)
{
	size_t len, kl = strlen(key);
	char *text = (char *)slurp("summary.txt", &len, 1), *p = text;
	uint64_t v = 0;
	int found = 0;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			v = strtoull(p + kl + 1, NULL, 10);
			found = 1;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	free(text);
	if (!found && must)
		die("summary.txt: no '%s'", key);
	return found ? v : dflt;
}

/* ---- the checks -------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct got g = { 0 };
	struct bach_parser_ops ops = {
		.records = on_records,
		.gap = on_gap,
		.status = on_status,
		.identity = on_identity,
		.ack = on_ack,
	};
	struct bach_parser *p, *pre;
	struct bach_parser_counters c;
	struct got g_pre = { 0 };
	size_t mark;
	uint8_t *s, *exp = NULL;
	size_t len, nexp = 0, nts = 0, nidx = 0, pos, ndata = 0;
	uint64_t *ts = NULL, *idx = NULL, total;
	uint32_t seq[5] = { 0 };
	int saw_last = 0, saw_start_ack = 0, after_last = 0;
	int64_t t0 = -1; /* first data frame: B minus the model's clock */
	struct pattern pat = { 0, 0, 1 };

	if (argc < 2)
		die("usage: check_stream DIR [options]");
	dir = argv[1];
	file_args(&o);
	parse_args(&o, argc - 2, argv + 2);
	pat.lfsr = o.lfsr;

	s = slurp("stream.bin", &len, 1);
	if (!o.pattern) {
		exp = slurp("expect.byu", &nexp, 1);
		nexp /= BACH_REC_SIZE;
		ts = numbers("ts.txt", &nts);
		idx = numbers("expect.idx", &nidx);
		if (nidx != nexp)
			die("expect.idx: %zu lines for %zu records", nidx,
			    nexp);
	}

	/* 1. the project's parser: the earlier capture, then this one */
	mark = (size_t)summary_or("mark_byte", 0, 0);
	if (mark > len)
		die("mark_byte %zu beyond the stream's %zu bytes", mark, len);
	pre = bach_parser_new(&ops, &g_pre);
	p = bach_parser_new(&ops, &g);
	if (!p || !pre)
		die("out of memory");
	bach_parser_feed(pre, s, mark);
	bach_parser_feed(p, s + mark, len - mark);
	for (int k = 0; k < 2; k++) {
		bach_parser_counters(k ? p : pre, &c);
		if (c.bad_crc || c.bad_header || c.resync_bytes || c.duplicates)
			fail("damaged stream%s: %" PRIu64 " bad CRCs, %" PRIu64
			     " bad headers, %" PRIu64 " bytes skipped, %" PRIu64
			     " duplicates",
			     k ? "" : " before the mark", c.bad_crc,
			     c.bad_header, c.resync_bytes, c.duplicates);
		if (c.lost_frames || c.lost_corrupt)
			fail("records lost on the link: %" PRIu64 " + %" PRIu64,
			     c.lost_frames, c.lost_corrupt);
	}
	/* the replies in stream order: those before the mark first */
	if (g_pre.nreplies + g.nreplies > 64)
		fail("more than 64 replies");
	else {
		memmove(g.replies[g_pre.nreplies], g.replies[0],
			g.nreplies * sizeof(g.replies[0]));
		memcpy(g.replies[0], g_pre.replies[0],
		       g_pre.nreplies * sizeof(g.replies[0]));
		g.nreplies += g_pre.nreplies;
	}
	if (!g.nident && g_pre.nident) {
		g.ident = g_pre.ident;
		g.nident = g_pre.nident;
	}

	/* 2. frame by frame: flags, sequence numbers, deltas, timestamps */
	for (pos = 0; pos + BACH_FRAME_HDR + BACH_FRAME_CRC <= len;) {
		const uint8_t *f = s + pos;
		uint8_t type = f[5], flags = f[6];
		uint32_t plen = bach_get_le32(f + 12),
			 n = bach_get_le32(f + 32);
		uint32_t lost = bach_get_le32(f + 36),
			 fseq = bach_get_le32(f + 8);
		uint64_t index = bach_get_le64(f + 16),
			 b = bach_get_le64(f + 24);
		size_t size = BACH_FRAME_HDR + plen + BACH_FRAME_CRC;

		if (memcmp(f, "BACH", 4) || pos + size > len) {
			fail("no frame at byte %zu", pos);
			break;
		}
		if (type < 1 || type > 4) {
			fail("frame type %u at byte %zu", type, pos);
		} else if (fseq != seq[type]) {
			fail("frame at byte %zu: type %u sequence %" PRIu32
			     ", expected %" PRIu32,
			     pos, type, fseq, seq[type]);
		}
		if (type >= 1 && type <= 4)
			seq[type] = fseq + 1;
		if (pos < mark) {
			/* the earlier capture: frames and replies only */
			if (type == BACH_FT_DATA && (flags & BACH_FF_LAST))
				seq[BACH_FT_DATA] = 0;
			pos += size;
			continue;
		}
		if (type == BACH_FT_ACK &&
		    bach_get_le32(f + 32) == BACH_CMD_START &&
		    bach_get_le32(f + 36) == BACH_ACK_OK)
			saw_start_ack = 1;
		if (type == BACH_FT_DATA) {
			const uint8_t *d = f + BACH_FRAME_HDR;
			int first = ndata == 0;

			if (!saw_start_ack)
				fail("data frame at byte %zu before the ACK of START",
				     pos);
			if (saw_last)
				fail("data frame at byte %zu after LAST", pos);
			if (!!(flags & BACH_FF_FIRST) != first)
				fail("data frame %zu: FIRST %s", ndata,
				     first ? "missing" : "set");
			if (!!(flags & BACH_FF_OVERFLOW) != (lost != 0))
				fail("data frame %zu: OVERFLOW flag 0x%02x with lost %" PRIu32,
				     ndata, flags, lost);
			if (!!(flags & BACH_FF_TIMING) != o.timing)
				fail("data frame %zu: TIMING flag", ndata);
			if (flags & 0xf0)
				fail("data frame %zu: flags 0x%02x", ndata,
				     flags);
			if (n > FRAME_RECORDS)
				fail("data frame %zu: %" PRIu32 " records",
				     ndata, n);
			if (lost && !o.drop)
				fail("data frame %zu: %" PRIu32
				     " lost with stall",
				     ndata, lost);
			saw_last = flags & BACH_FF_LAST;
			ndata++;
			for (uint32_t i = 0; n && i < n; i++) {
				uint64_t k = index + i;
				uint64_t want;

				if (!o.timing)
					break;
				if (o.pattern) {
					want = i ? 1 : 0;
				} else if (k < nexp && idx[k] < nts &&
					   (i == 0 || idx[k - 1] < nts)) {
					uint64_t dt =
						i ? ts[idx[k]] - ts[idx[k - 1]]
						  : 0;

					want = dt > 65535 ? 65535 : dt;
				} else {
					fail("data frame %zu: record index %" PRIu64
					     " beyond the bus model's",
					     ndata, k);
					break;
				}
				if (bach_get_le16(d + 2 * i) != want) {
					fail("data frame %zu: delta %u is %u, expected %" PRIu64,
					     ndata - 1, i,
					     bach_get_le16(d + 2 * i), want);
					break;
				}
			}
			if (n && !o.pattern && index < nexp &&
			    idx[index] < nts) {
				/* B counts the same clocks as the bus model */
				int64_t off =
					(int64_t)b - (int64_t)ts[idx[index]];

				if (t0 < 0)
					t0 = off;
				else if (off != t0)
					fail("data frame %zu: timestamp %" PRIu64
					     " is %" PRId64 " clocks off",
					     ndata - 1, b, off - t0);
			}
			if (n && o.pattern && o.drop && b != index)
				fail("data frame %zu: timestamp %" PRIu64
				     " for index %" PRIu64,
				     ndata - 1, b, index);
		} else if (saw_last) {
			after_last++;
		}
		pos += size;
	}
	if (pos != len)
		fail("%zu bytes after the last whole frame", len - pos);
	if (!saw_last)
		fail("no LAST frame");
	if (after_last < 2)
		fail("the final STATUS and the ACK of STOP did not follow LAST");
	if ((long)ndata < o.need_frames)
		fail("%zu data frames, expected at least %ld", ndata,
		     o.need_frames);

	/* 3. the replies */
	{
		size_t rl;
		char *want = (char *)slurp("replies.txt", &rl, 1), *t;
		size_t k = 0;

		for (t = strtok(want, "\n"); t; t = strtok(NULL, "\n"), k++)
			if (k >= g.nreplies || strcmp(t, g.replies[k]))
				fail("reply %zu is '%s', expected '%s'", k,
				     k < g.nreplies ? g.replies[k] : "(none)",
				     t);
		if (k != g.nreplies)
			fail("%zu replies, expected %zu", g.nreplies, k);
		free(want);
	}
	if (g.nident) {
		const struct bach_board_identity *id = &g.ident;

		if (id->vendor != 0x1209 || id->product != 0x4243 ||
		    id->gw_major != 1 || id->gw_minor != 1 ||
		    id->capabilities != 0x000f || id->clock_hz != 66666666 ||
		    id->fifo_records != FIFO_RECORDS ||
		    strncmp(id->serial, "SIM0", sizeof(id->serial)) ||
		    strncmp(id->name, "bach capture board (simulation)",
			    sizeof(id->name)))
			fail("identity: %04x:%04x %u.%u caps %x clock %u fifo %u serial '%.16s' name '%.32s'",
			     id->vendor, id->product, id->gw_major,
			     id->gw_minor, id->capabilities, id->clock_hz,
			     id->fifo_records, id->serial, id->name);
	}

	/* 4. the records */
	total = g.pos;
	for (size_t i = 0; i < g.n; i++) {
		const uint8_t *r = g.recs + i * BACH_REC_SIZE;
		uint8_t want[BACH_REC_SIZE];
		uint64_t k = g.index[i];

		if (o.pattern)
			pattern_rec(&pat, k, want);
		else if (k < nexp)
			memcpy(want, exp + k * BACH_REC_SIZE, BACH_REC_SIZE);
		else
			memset(want, 0xee, sizeof(want));
		if (memcmp(r, want, BACH_REC_SIZE)) {
			fail("record %" PRIu64
			     ": %08x %02x %02x, expected %08x %02x %02x",
			     k, bach_get_be32(r), r[4], r[5],
			     bach_get_be32(want), want[4], want[5]);
			break;
		}
	}
	if (!o.pattern && total != nexp)
		fail("%" PRIu64
		     " records delivered or lost, the bus carried %zu",
		     total, nexp);
	if (!o.pattern && !o.filtered && nts != nexp)
		fail("the bus model completed %zu cycles for %zu records", nts,
		     nexp);
	if (o.filtered && (size_t)o.filtered != nexp)
		fail("%zu records expected, --filtered %ld", nexp, o.filtered);
	if (o.need_loss && !g.lost)
		fail("no record lost");
	if (!o.drop && g.lost)
		fail("%" PRIu64 " records lost with stall", g.lost);

	/* 5. the final STATUS and what the testbench measured */
	if (!g.nstatus) {
		fail("no STATUS");
	} else {
		const struct bach_board_status *st = &g.status;
		double hz = st->clock_hz;

		if (!o.reset && st->records != total)
			fail("final STATUS: %" PRIu64
			     " records, the stream says %" PRIu64,
			     st->records, total);
		if (!o.reset && st->overflow != g.lost)
			fail("final STATUS: %" PRIu64
			     " lost, the stream says %" PRIu64,
			     st->overflow, g.lost);
		if (st->fifo_fill != 0 || st->fifo_size != FIFO_RECORDS)
			fail("final STATUS: FIFO %u of %u", st->fifo_fill,
			     st->fifo_size);
		if (o.noclk ? hz != 0
			    : hz < BUS_HZ * 0.999 || hz > BUS_HZ * 1.001)
			fail("final STATUS: bus clock %u Hz", st->clock_hz);
		if (st->stall_episodes != summary("hold_episodes") ||
		    st->stalled_clocks != summary("hold_clocks"))
			fail("final STATUS: %u stalls, %" PRIu64
			     " clocks; the CPU was held %" PRIu64
			     " times, %" PRIu64 " clocks",
			     st->stall_episodes, st->stalled_clocks,
			     summary("hold_episodes"), summary("hold_clocks"));
		if (o.need_stall && !st->stall_episodes)
			fail("the board never held the CPU");
		if (st->offbus != (o.pattern ? 0 : summary("offbus")))
			fail("final STATUS: %" PRIu64
			     " ADS#s off the bus, the bus model drove %" PRIu64,
			     st->offbus, o.pattern ? 0 : summary("offbus"));
	}
	if (summary("errors"))
		fail("the testbench saw %" PRIu64 " errors", summary("errors"));
	if (!summary("siwu"))
		fail("SIWU# never pulsed");

	printf("check_stream: %s: %zu data frames, %zu records, %" PRIu64
	       " lost; %zu replies; held %" PRIu64 " times: %s\n",
	       dir, ndata, g.n, g.lost, g.nreplies, summary("hold_episodes"),
	       failures ? "FAIL" : "ok");
	bach_parser_free(p);
	bach_parser_free(pre);
	return failures ? 1 : 0;
}
