// SPDX-License-Identifier: MIT
/* The capture board in software (board_model.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "board_model.h"
#include "drivers/driver.h"

/* ---- options ------------------------------------------------------------ */

const struct bach_optdesc board_options[] = {
	{ .key = "records",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .min = 1,
	  .help = "stop after N sampled records, lost ones included",
	  .def_help = "run until stopped",
	  .hint = "leave it out to run until stopped",
	  BACH_OPT_AT(struct board_opts, records) },
	{ .key = "seed",
	  .type = BACH_OPT_UINT,
	  .arg = "S",
	  .def = "1",
	  .help = "workload seed, as bach gen --seed",
	  BACH_OPT_AT(struct board_opts, seed) },
	{ .key = "rate",
	  .type = BACH_OPT_UINT,
	  .arg = "R",
	  .def = "0",
	  .help = "records per second, 0 for as fast as possible",
	  BACH_OPT_AT(struct board_opts, rate) },
	{ .key = "frame",
	  .type = BACH_OPT_UINT,
	  .arg = "K",
	  .min = 1,
	  .max = BACH_FRAME_MAX_RECORDS,
	  .def = "4096",
	  .help = "records per data frame",
	  BACH_OPT_AT(struct board_opts, frame_recs) },
	{ .key = "timing",
	  .type = BACH_OPT_BOOL,
	  .def = "0",
	  .help = "frames carry per-record clock deltas",
	  BACH_OPT_AT(struct board_opts, timing) },
	{ .key = "drop_every",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .def = "0",
	  .help = "lose every Nth frame on the link, 0 for never",
	  BACH_OPT_AT(struct board_opts, drop_every) },
	{ .key = "corrupt_every",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .def = "0",
	  .help = "corrupt the CRC of every Nth frame, 0 for never",
	  BACH_OPT_AT(struct board_opts, corrupt_every) },
	{ .key = "overflow_every",
	  .type = BACH_OPT_PAIR,
	  .arg = "N:C",
	  .max2 = UINT32_MAX,
	  .def_help = "never",
	  .help = "before every Nth frame the FIFO overflows, losing C records",
	  BACH_OPT_AT(struct board_opts, overflow_every),
	  BACH_OPT_AT2(struct board_opts, overflow_count) },
	{ .key = "stall_every",
	  .type = BACH_OPT_PAIR,
	  .arg = "N:MS",
	  .max2 = 86400000,
	  .def_help = "never",
	  .help = "before every Nth frame the board holds the CPU for MS ms",
	  BACH_OPT_AT(struct board_opts, stall_every),
	  BACH_OPT_AT2(struct board_opts, stall_ms) },
	{ .key = "disconnect",
	  .type = BACH_OPT_PAIR,
	  .arg = "R:T",
	  .max2 = 86400,
	  .def_help = "never",
	  .help = "unplug after R records for T seconds, then come back",
	  BACH_OPT_AT(struct board_opts, disconnect_at),
	  BACH_OPT_AT2(struct board_opts, disconnect_secs) },
	{ .key = "status_every",
	  .type = BACH_OPT_UINT,
	  .arg = "N",
	  .def = "256",
	  .help = "a status frame every N data frames, 0 for only the final one",
	  BACH_OPT_AT(struct board_opts, status_every) },
	{ .key = "foreign",
	  .type = BACH_OPT_PAIR,
	  .arg = "N:C",
	  .max2 = UINT32_MAX,
	  .def_help = "never",
	  .help = "before every Nth frame another master runs C cycles on the bus (HOLD/HLDA): counted off the bus, not recorded",
	  BACH_OPT_AT(struct board_opts, foreign_every),
	  BACH_OPT_AT2(struct board_opts, foreign_cycles) },
	{ 0 },
};

void board_opts_from(struct board_opts *o, const struct bach_optval *v)
{
	bach_opts_apply(board_options, o, v);
}

void board_opts_defaults(struct board_opts *o)
{
	memset(o, 0, sizeof(*o));
	bach_opts_defaults(board_options, o);
}

int board_opts_set(struct board_opts *o, const char *k, const char *val,
		   char *msg, size_t cap)
{
	char why[256];
	int err = bach_opt_set(board_options, o, k, val, why, sizeof(why));

	if (err == -EINVAL)
		snprintf(msg, cap, "option %s", why);
	return err;
}

/* ---- the board ---------------------------------------------------------- */

static void command_frame(void *ctx, const struct bach_frame *f);

int board_init(struct board_model *m, const struct board_opts *o)
{
	memset(m, 0, sizeof(*m));
	m->o = *o;
	m->recs = malloc((size_t)o->frame_recs * BACH_REC_SIZE);
	m->tmp = malloc((size_t)o->frame_recs * BACH_REC_SIZE);
	m->deltas = malloc((size_t)o->frame_recs * sizeof(*m->deltas));
	m->cmds = bach_parser_new(
		&(struct bach_parser_ops){ .frame = command_frame }, m);
	if (!m->recs || !m->tmp || !m->deltas || !m->cmds) {
		board_free(m);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < o->frame_recs; i++)
		m->deltas[i] = 2; /* a bus cycle every two clocks */
	m->id.clock_hz = BOARD_CLOCK_HZ;
	m->id.fifo_records = BOARD_FIFO_RECORDS;
	board_power_on(m);
	return 0;
}

void board_free(struct board_model *m)
{
	free(m->recs);
	free(m->tmp);
	free(m->deltas);
	bach_parser_free(m->cmds);
	m->recs = m->tmp = NULL;
	m->deltas = NULL;
	m->cmds = NULL;
}

void board_power_on(struct board_model *m)
{
	memset(&m->cfg, 0, sizeof(m->cfg));
	m->cfg.timing = m->o.timing;
	m->running = false;
	m->status_seq = m->ident_seq = m->ack_seq = 0;
	bach_parser_reset(m->cmds);
	atomic_store(&m->stall_episodes, 0);
	atomic_store(&m->stalled_ns, 0);
	atomic_store(&m->offbus, 0);
	board_start(m);
	m->running = false;
}

void board_start(struct board_model *m)
{
	bach_gen_init(&m->gen, m->o.seed);
	m->lfsr = 1;
	m->index = m->lost = m->frames = 0;
	m->counted_from = m->lost_from = 0;
	m->data_seq = 0;
	m->last_sent = false;
	m->t_start = bach_now_ns();
	m->running = true;
	atomic_store(&m->stall_episodes, 0);
	atomic_store(&m->stalled_ns, 0);
	atomic_store(&m->offbus, 0);
	m->tmp_len = m->tmp_off = 0;
}

bool board_sampling(const struct board_model *m)
{
	return m->running && (!m->o.records || m->index < m->o.records);
}

size_t board_step_room(const struct board_model *m)
{
	/* a status before and after the frame */
	return bach_frame_data_size(m->o.frame_recs, true) +
	       2 * (BACH_FRAME_HDR + BACH_STATUS_SIZE + BACH_FRAME_CRC);
}

uint64_t board_due_ns(const struct board_model *m)
{
	if (!m->o.rate)
		return 0;
	return m->t_start + m->index * 1000000000ull / m->o.rate;
}

/* The workload through the cycle-type filter, one record at a time. */
static void fill_filtered(struct board_model *m, uint8_t *out, size_t n)
{
	while (n) {
		const uint8_t *r;

		if (m->tmp_off == m->tmp_len) {
			bach_gen_fill(&m->gen, m->tmp, m->o.frame_recs);
			m->tmp_len = m->o.frame_recs;
			m->tmp_off = 0;
		}
		r = m->tmp + m->tmp_off++ * BACH_REC_SIZE;
		if (m->cfg.type_filter & (1u << (r[5] >> 4))) {
			memcpy(out, r, BACH_REC_SIZE);
			out += BACH_REC_SIZE;
			n--;
		}
	}
}

/* Sample n records, the first at index idx, into out. */
static void fill(struct board_model *m, uint8_t *out, size_t n, uint64_t idx)
{
	uint32_t s = m->lfsr;

	switch (m->cfg.test_pattern) {
	case 1: /* counter */
		for (size_t i = 0; i < n; i++, out += BACH_REC_SIZE) {
			bach_put_be32(out, (uint32_t)((idx + i) << 3));
			out[4] = 0x00;
			out[5] = 0xc0;
		}
		break;
	case 2: /* LFSR, x^32 + x^22 + x^2 + x + 1, Galois form */
		for (size_t i = 0; i < n; i++, out += BACH_REC_SIZE) {
			bach_put_be32(out, s & 0xfffffff8u);
			out[4] = (uint8_t)s;
			out[5] = 0xc0;
			s = (s >> 1) ^ (s & 1 ? 0x80200003u : 0);
		}
		m->lfsr = s;
		break;
	default:
		if (m->cfg.type_filter)
			fill_filtered(m, out, n);
		else
			bach_gen_fill(&m->gen, out, n);
	}
}

size_t board_status(struct board_model *m, uint8_t *out)
{
	uint64_t stalled_ns = atomic_load(&m->stalled_ns);
	struct bach_board_status st = {
		.fifo_fill = 0,
		.fifo_size = BOARD_FIFO_RECORDS,
		.records = m->index - m->counted_from,
		.overflow = m->lost - m->lost_from,
		.stall_episodes = (uint32_t)atomic_load(&m->stall_episodes),
		.clock_hz = BOARD_CLOCK_HZ,
		.stalled_clocks =
			stalled_ns * (BOARD_CLOCK_HZ / 1000000u) / 1000u,
		/* another master's ADS#s while the CPU held HLDA (foreign) */
		.offbus = atomic_load(&m->offbus),
	};

	return bach_frame_build_status(out, m->status_seq++, &st);
}

size_t board_step(struct board_model *m, uint8_t *out, unsigned *ev)
{
	const struct board_opts *o = &m->o;
	uint64_t n = o->frame_recs;
	uint32_t flost = 0;
	size_t len = 0, flen;
	uint8_t *frame;

	*ev = 0;
	/*
	 * A stall: the board holds the CPU (HOLD, docs/fpga.md section 5)
	 * for a while; its next status says so, and nothing is lost.
	 */
	if (o->stall_every && m->frames && m->frames % o->stall_every == 0) {
		if (m->nap)
			m->nap(m->nap_ctx, o->stall_ms * 1000000ull);
		atomic_fetch_add(&m->stall_episodes, 1);
		atomic_fetch_add(&m->stalled_ns, o->stall_ms * 1000000ull);
		len += board_status(m, out + len);
	}
	/*
	 * Another master on the bus: the CPU grants it (HOLD/HLDA), the
	 * board sees its ADS#s and counts them off the bus, records none
	 * (gateware 1.1's STATUS).
	 */
	if (o->foreign_every && m->frames && m->frames % o->foreign_every == 0)
		atomic_fetch_add(&m->offbus, o->foreign_cycles);
	/* a FIFO overflow: sampled records that never reach a frame */
	if (o->overflow_every && m->frames &&
	    m->frames % o->overflow_every == 0) {
		uint64_t k = o->overflow_count;

		if (o->records && k > o->records - m->index)
			k = o->records - m->index;
		for (uint64_t left = k; left;) {
			size_t c = left < o->frame_recs ? (size_t)left
							: o->frame_recs;

			fill(m, m->recs, c, m->index + (k - left));
			left -= c;
		}
		m->index += k;
		m->lost += k;
		flost = (uint32_t)k;
		if (o->records && m->index >= o->records)
			return len;
	}
	if (o->records && n > o->records - m->index)
		n = o->records - m->index;
	fill(m, m->recs, (size_t)n, m->index);
	frame = out + len;
	flen = bach_frame_build_data(
		frame, m->data_seq++, m->index,
		m->index * 2, /* a cycle every two clocks */
		(m->frames ? 0 : BACH_FF_FIRST) |
			(o->records && m->index + n >= o->records ? BACH_FF_LAST
								  : 0),
		flost, m->recs, (size_t)n, m->cfg.timing ? m->deltas : NULL);
	if (frame[6] & BACH_FF_LAST)
		m->last_sent = true;
	m->frames++;
	m->index += n;
	if (o->drop_every && m->frames % o->drop_every == 0) {
		/* lost on the link: never reaches the host */
	} else {
		if (o->corrupt_every && m->frames % o->corrupt_every == 0)
			frame[flen - 1] ^= 0x5a; /* bad CRC */
		len += flen;
	}
	if (o->status_every && m->frames % o->status_every == 0)
		len += board_status(m, out + len);
	if (o->disconnect_at && m->index >= o->disconnect_at) {
		m->o.disconnect_at = 0;
		*ev |= BOARD_EV_DISCONNECT;
	}
	return len;
}

size_t board_finish(struct board_model *m, uint8_t *out)
{
	size_t n = 0;

	m->running = false;
	if (!m->last_sent)
		n = bach_frame_build_data(out, m->data_seq++, m->index,
					  m->index * 2, BACH_FF_LAST, 0, NULL,
					  0, NULL);
	m->last_sent = true;
	return n + board_status(m, out + n);
}

/* ---- commands ----------------------------------------------------------- */

static void ack(struct board_model *m, uint32_t cmd, uint32_t result,
		void (*emit)(void *, const uint8_t *, size_t), void *ctx)
{
	uint8_t f[BACH_FRAME_HDR + BACH_FRAME_CRC];

	emit(ctx, f, bach_frame_build_ack(f, m->ack_seq++, cmd, result));
}

/* CONFIGURE's payload against the protocol's ranges and our abilities. */
static uint32_t configure(struct board_model *m, const uint8_t *p,
			  uint32_t plen)
{
	struct bach_board_config c = { 0 };
	unsigned caps = m->id.capabilities;
	uint32_t hi, lo;

	if (m->running)
		return BACH_ACK_BUSY;
	if (plen < BACH_CONFIG_SIZE)
		return BACH_ACK_INVALID;
	c.policy = p[0];
	c.timing = p[1];
	c.test_pattern = p[2];
	c.type_filter = bach_get_le16(p + 4);
	c.high_water = bach_get_le16(p + 6);
	c.low_water = bach_get_le16(p + 8);
	hi = c.high_water ? c.high_water : 49152;
	lo = c.low_water ? c.low_water : 16384;
	if (c.policy > BACH_POLICY_DROP || c.timing > 1 || c.test_pattern > 2 ||
	    lo >= hi)
		return BACH_ACK_INVALID;
	if ((c.policy == BACH_POLICY_STALL && !(caps & BACH_CAP_STALL)) ||
	    (c.timing && !(caps & BACH_CAP_TIMING)) ||
	    (c.test_pattern && !(caps & BACH_CAP_TEST_PATTERN)) ||
	    (c.type_filter && !(caps & BACH_CAP_FILTER)))
		return BACH_ACK_UNSUPPORTED;
	m->cfg = c;
	return BACH_ACK_OK;
}

static void execute(struct board_model *m, const struct bach_frame *f,
		    void (*emit)(void *, const uint8_t *, size_t), void *ctx)
{
	uint8_t out[2 * (BACH_FRAME_HDR + BACH_IDENTITY_SIZE + BACH_FRAME_CRC)];
	uint32_t cmd = f->c, plen = f->plen;

	switch (cmd) {
	case BACH_CMD_IDENTIFY:
		emit(ctx, out,
		     bach_frame_build_identity(out, m->ident_seq++, &m->id));
		break;
	case BACH_CMD_START:
		if (m->running) {
			ack(m, cmd, BACH_ACK_BUSY, emit, ctx);
			break;
		}
		board_start(m);
		ack(m, cmd, BACH_ACK_OK, emit, ctx);
		break;
	case BACH_CMD_STOP:
		if (m->running)
			emit(ctx, out, board_finish(m, out));
		ack(m, cmd, BACH_ACK_OK, emit, ctx);
		break;
	case BACH_CMD_CONFIGURE:
		ack(m, cmd, configure(m, f->payload, plen), emit, ctx);
		break;
	case BACH_CMD_STATUS:
		emit(ctx, out, board_status(m, out));
		break;
	case BACH_CMD_RESET_COUNTERS:
		m->counted_from = m->index;
		m->lost_from = m->lost;
		atomic_store(&m->stall_episodes, 0);
		atomic_store(&m->stalled_ns, 0);
		atomic_store(&m->offbus, 0);
		ack(m, cmd, BACH_ACK_OK, emit, ctx);
		break;
	default:
		ack(m, cmd, BACH_ACK_UNKNOWN, emit, ctx);
	}
}

/*
 * A good frame from the host (the parser checked magic, header and CRC,
 * and skipped garbage: docs/board-protocol.md section 7). Only commands
 * the board's buffer holds are run; anything else is ignored, no reply.
 */
static void command_frame(void *ctx, const struct bach_frame *f)
{
	struct board_model *m = ctx;

	if (f->type == BACH_FT_COMMAND && f->plen <= BOARD_CMD_MAX_PAYLOAD)
		execute(m, f, m->emit, m->emit_ctx);
}

void board_write(struct board_model *m, const uint8_t *buf, size_t len,
		 void (*emit)(void *ctx, const uint8_t *frames, size_t n),
		 void *ctx)
{
	m->emit = emit;
	m->emit_ctx = ctx;
	bach_parser_feed(m->cmds, buf, len);
}
