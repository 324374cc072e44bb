// SPDX-License-Identifier: MIT
/*
 * tbgen: the inputs of one testbench scenario (fpga/bench/tb_bach.v).
 *
 *   tbgen SCENARIO GEN.byu DIR
 *
 * writes into DIR:
 *   cycles.hex   the bus cycles the Pentium bus model plays, one a line
 *                (the layout is at struct cycle below and in
 *                pentium_bus.v);
 *   expect.byu   the records the board must deliver for them, in order;
 *   expect.idx   for each of those, the number of its cycle (the filter
 *                leaves some cycles without a record);
 *   script.txt   what the testbench does: command frames to send (built
 *                with the project's frame builder) and what to wait for,
 *                when to play the bus, when the host stops reading;
 *   replies.txt  the replies the board must send, in order;
 *   check.args   the options of check_stream for this scenario.
 *
 * Scenarios whose name starts with "no" run with the bus clock stopped;
 * in "deaf" the CPU ignores the hold output.
 *
 * Bus cycles come from the `bach gen` workload in GEN.byu, with waits,
 * NA# pipelining, BOFF# restarts and KEN# decisions drawn from a fixed
 * seed, after a list of hand-written corner cases. Where a scenario asks,
 * another bus master runs cycles under HOLD/HLDA before some of them, and
 * ADS# floats low after BOFF#: ADS#s that are no records (pentium_bus.v
 * counts them; the board's STATUS must say as many).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "bach/record.h"
#include "lib/bus/frame.h"
#include "lib/exit.h"

#define MAX_CYCLES 16384

/* One bus cycle as the model plays it, and the record it must give. */
struct cycle {
	uint32_t addr;
	uint8_t be;
	uint8_t pins;	  /* M/IO# D/C# W/R# CACHE# in bits 3..0 */
	uint8_t ken_n;	  /* KEN# where the board must take it */
	uint8_t lock;	  /* LOCK# low through it (INTA pairs) */
	uint8_t junk;	  /* random levels on A, BE#, M/IO#... when idle */
	uint8_t master;	  /* cycles of another master before it (0-7) */
	uint8_t floats;	  /* its BOFF# episode: ADS# floats low */
	uint8_t snoop;	  /* a snoop writeback: the address from AHOLD */
	uint8_t hboff;	  /* BOFF# in the last clock of HLDA before it */
	uint8_t inq2;	  /* snoop: a second inquire while HITM# is low */
	uint8_t hahold;	  /* AHOLD, EADS# in the last clock of HLDA */
	uint8_t scyc;	  /* the first of a split locked sequence: SCYC */
	uint32_t gap;	  /* clocks from the previous ADS# at least */
	uint8_t w0;	  /* wait states before the first BRDY# */
	uint8_t wb;	  /* wait states between burst transfers */
	uint8_t na_at;	  /* NA# this many clocks after ADS# (0: none) */
	uint8_t boff_at;  /* BOFF# instead of BRDY# number k (0: none;
			     15: in the clock of ADS# itself) */
	uint8_t boff_len; /* clocks of BOFF# */
	uint8_t rec[BACH_REC_SIZE]; /* its record */
	uint8_t filtered;	    /* the filter drops the record */
};

static struct cycle cyc[MAX_CYCLES];
static size_t ncyc;
static FILE *script, *replies;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "tbgen: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_USAGE);
}

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)((rng >> 11) % n);
}

static FILE *create(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	return f;
}

/* A cycle that must give the record (addr, be, ctl); timing plain. */
static struct cycle *add(uint32_t addr, uint8_t be, uint8_t ctl)
{
	struct cycle *c;
	unsigned mio = ctl >> 7 & 1, wr = ctl >> 5 & 1, cbit = ctl >> 4 & 1;

	if (ncyc == MAX_CYCLES)
		die("more than %d cycles", MAX_CYCLES);
	c = &cyc[ncyc++];
	memset(c, 0, sizeof(*c));
	c->addr = addr & ~7u;
	c->be = be;
	c->pins = ctl >> 4;
	c->ken_n = cbit; /* cacheable reads: KEN# low, a line fill */
	if (mio && !wr && cbit && rnd(2)) {
		/* non-cacheable read: CACHE# low, and KEN# high says no */
		c->pins &= ~1u;
		c->ken_n = 1;
	}
	bach_rec_put(c->rec, addr & ~7u, be, ctl);
	return c;
}

/* A cacheable read the CPU asks for with CACHE# low, refused by KEN# high:
   one transfer, the record's CACHE# bit set (NC_I_FETCH, NC_D_READ). */
static struct cycle *refused(uint32_t addr, uint8_t be, uint8_t ctl)
{
	struct cycle *c = add(addr, be, ctl);

	c->pins &= ~1u;
	c->ken_n = 1;
	return c;
}

static unsigned transfers(const struct cycle *c)
{
	unsigned mio = c->pins >> 3 & 1, wr = c->pins >> 1 & 1;
	unsigned cache_n = c->pins & 1;

	if (mio && !cache_n && (wr || !c->ken_n))
		return 4;
	return 1;
}

/* Random timing for a cycle of the workload. */
static void shake(struct cycle *c, int top_rate)
{
	unsigned r = rnd(100);

	if (top_rate) {
		c->gap = 0;
		c->w0 = 0;
		c->wb = 0;
		c->na_at = transfers(c) == 4 ? 1 : 0;
		return;
	}
	c->gap = r < 70 ? 0 : r < 90 ? 1 + rnd(3) : 4 + rnd(17);
	r = rnd(100);
	c->w0 = r < 60 ? 0 : r < 90 ? 1 : 2 + rnd(3);
	c->wb = rnd(100) < 20;
	if (rnd(100) < 25)
		c->na_at = 1 + rnd(2);
	if (rnd(100) < 2) {
		c->boff_at = 1 + rnd(transfers(c));
		c->boff_len = 1 + rnd(4);
	}
}

static void load_gen(const char *path, size_t max, int top_rate, int junk)
{
	FILE *f = fopen(path, "rb");
	uint8_t r[BACH_REC_SIZE];
	size_t n = 0;

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (n < max && fread(r, BACH_REC_SIZE, 1, f) == 1) {
		struct cycle *c = add(bach_get_be32(r), r[4], r[5]);

		shake(c, top_rate);
		c->junk = (uint8_t)junk;
		/* interrupt acknowledges come in locked pairs */
		c->lock = bach_type_of(r[5]) == BACH_T_INT_ACK;
		n++;
	}
	fclose(f);
	if (n < max)
		die("%s: %zu records, wanted %zu", path, n, max);
}

/* Hand-written cases: each rule of docs/design.md section 5 at least once. */
static void corner_cases(int with_idle, int offbus)
{
	struct cycle *c;
	static const uint8_t special_be[] = {
		0xfe, 0xfd, 0xfb, 0xf7, 0xef, 0xdf
	};

	/* line fill, no waits; then with waits on every transfer */
	add(0x00100000, 0x00, 0x80);
	c = add(0x00100020, 0x00, 0xc0);
	c->w0 = 2;
	c->wb = 1;
	/* CACHE# low, KEN# high at the first BRDY#: one transfer, NC_ */
	refused(0x00100040, 0x00, 0x90);
	/* KEN# taken at NA# (two clocks before the first BRDY#) */
	c = refused(0x00400000, 0x0f, 0xd0);
	c->na_at = 1;
	c->w0 = 3;
	c = add(0x00400040, 0x00, 0xc0);
	c->na_at = 1;
	c->w0 = 3;
	/* writeback burst with waits, single write with waits */
	c = add(0x00400080, 0x00, 0xe0);
	c->wb = 2;
	c = add(0x00400100, 0xf0, 0xf0);
	c->w0 = 2;
	/* I/O, an interrupt acknowledge pair (BE# EF, then FE: the byte of
	   the first cycle is byte 4, of the second byte 0), the special
	   cycles */
	add(0x000003f8, 0xfe, 0x50);
	add(0x000003f8, 0xfe, 0x70);
	c = add(0x00000000, 0xef, 0x10);
	c->lock = 1;
	c = add(0x00000000, 0xfe, 0x10);
	c->lock = 1;
	for (unsigned i = 0; i < sizeof(special_be); i++)
		add(0, special_be[i], 0x30);
	add(0x00000010, 0xfb, 0x30); /* stop grant: halt with A4 */
	/* BOFF# in the middle of a line fill, and before any BRDY# */
	c = add(0x00400200, 0x00, 0xc0);
	c->boff_at = 3;
	c->boff_len = 3;
	c = add(0x00400220, 0x00, 0x80);
	c->boff_at = 1;
	c->boff_len = 1;
	/* BOFF# with two cycles open: both restart, in order */
	c = add(0x00400240, 0x00, 0xc0);
	c->na_at = 1;
	c->w0 = 1;
	c->boff_at = 2;
	c->boff_len = 2;
	add(0x00400260, 0xf0, 0xf0);
	/* line fills that start mid-line (the quadword wanted first: A4:A3
	   not zero); one record per ADS#, with the first transfer's address */
	c = add(0x00500418, 0x00, 0x80);
	c->wb = 1;
	add(0x00500428, 0x00, 0xc0);
	c = add(0x00500430, 0x00, 0xc0);
	c->na_at = 1;
	c->w0 = 1;
	/* NA# with two cycles open: KEN# of the newer one is sampled at its
	   own NA#, before its first BRDY# (KEN# is random there) */
	c = add(0x00500500, 0x00, 0x80);
	c->na_at = 1;
	c->w0 = 2;
	c->wb = 1;
	c = refused(0x00500540, 0x00, 0x90);
	c->na_at = 1;
	c->w0 = 6;
	c = add(0x00500580, 0x00, 0xc0);
	c->na_at = 1;
	c->w0 = 5;
	add(0x005005c0, 0xf0, 0xf0);
	/* a snoop writeback under AHOLD: A31..A3 float at its ADS#; the
	   record is the line of the inquire (EADS#), A4:A3 = 0 (K5 5.2.1,
	   5.2.5), whatever A4:A3 the chipset drove with it */
	c = add(0x00400118, 0x00, 0xe0);
	c->snoop = 1;
	c->gap = 3;
	bach_rec_put(c->rec, 0x00400100, 0x00, 0xe0);
	/* two inquires in one AHOLD episode: the second, of another line,
	   a clock after HITM# answered the first, is ignored (EADS# while
	   HITM# is asserted, Pentium 241428): the writeback is the first
	   inquire's line */
	c = add(0x00400210, 0x00, 0xe0);
	c->snoop = 1;
	c->inq2 = 1;
	c->gap = 3;
	bach_rec_put(c->rec, 0x00400200, 0x00, 0xe0);
	/* TD (Pentium 241428, bus states): a write with NA#, a read
	   pipelined into it; a dead clock after the write's BRDY#, the
	   read's NA# in it (na_at 14), KEN# high sampled there: one
	   transfer; a write pipelined after that read, TD again */
	c = add(0x00400600, 0x0f, 0xf0);
	c->na_at = 1;
	c->w0 = 2;
	c = refused(0x00400620, 0x00, 0x90);
	c->na_at = 14;
	add(0x00400640, 0xf0, 0xf0);
	/* a locked read-modify-write: LOCK# through both, not pipelined,
	   no HLDA inside (another master waits for the next cycle) */
	c = add(0x00400660, 0xf0, 0xd0);
	c->lock = 1;
	c = add(0x00400660, 0xf0, 0xf0);
	c->lock = 1;
	c = add(0x00400680, 0x00, 0x90);
	c->master = offbus ? 1 : 0;
	/* a split locked read-modify-write (K5 5.2.46 and Pentium 241428,
	   SCYC): a 4-byte operand at 0x4006a6, bytes 6-7 of a quadword and
	   0-1 of the next, read (noncacheable: CACHE# high) and written
	   under one LOCK#; SCYC from the first ADS# to its BRDY# */
	for (unsigned i = 0; i < 4; i++) {
		c = add(i & 1 ? 0x004006a8 : 0x004006a0, i & 1 ? 0xfc : 0x3f,
			i < 2 ? 0xd0 : 0xf0);
		c->lock = 1;
		c->scyc = i == 0;
		c->pins |= 1;
		c->ken_n = 1;
	}
	if (offbus) {
		/* a 1-clock BOFF# with ADS# floating low in the next clock,
		   the first with BOFF# high: no record, the restart is */
		c = add(0x00400300, 0x00, 0x80);
		c->boff_at = 1;
		c->boff_len = 1;
		c->floats = 1;
		/* BOFF# in the clock of an ADS#, ADS# floating low after */
		c = add(0x00400320, 0xf0, 0xf0);
		c->boff_at = 15;
		c->boff_len = 2;
		c->floats = 1;
		/* another master under HLDA, before a cycle and between
		   two pipelined ones */
		c = add(0x00400340, 0x00, 0xc0);
		c->master = 3;
		c->na_at = 1;
		add(0x00400360, 0x0f, 0xf0);
		c = add(0x00400380, 0x00, 0xc0);
		c->master = 1;
		/* BOFF# low in the last clock of HLDA, HLDA low and a read's
		   ADS# in the next; BOFF# is not effective while HLDA is
		   asserted (K5 5.2.10): the read is the CPU's, a record, and
		   no ADS# off the bus */
		c = refused(0x0000d000, 0x00, 0x90);
		c->master = 1;
		c->hboff = 1;
		/* AHOLD and an inquire of another line in the last clock of
		   HLDA, falling with it: sampled, not effective (K5 5.2.5);
		   the writeback whose ADS# comes as HLDA falls carries its
		   own address */
		c = add(0x0000e020, 0x00, 0xe0);
		c->master = 1;
		c->hahold = 1;
	}
	/* pipelined line fills */
	for (unsigned i = 0; i < 8; i++) {
		c = add(0x00500000 + 32 * i, 0x00, i & 1 ? 0xc0 : 0x80);
		c->na_at = 1;
		c->w0 = i & 1;
	}
	/* back to back at the top rate: one single write every two clocks */
	for (unsigned i = 0; i < 48; i++)
		add(0x00600000 + 8 * i, (uint8_t) ~(1u << (i & 7)), 0xf0);
	if (with_idle) {
		/* the longest delta, then one more clock: a boundary */
		c = add(0x00700000, 0xf0, 0xf0);
		c->gap = 65535;
		c = add(0x00700008, 0xf0, 0xf0);
		c->gap = 65536;
	}
}

static void write_cycles(const char *dir)
{
	FILE *f = create(dir, "cycles.hex");
	FILE *e = create(dir, "expect.byu");
	FILE *x = create(dir, "expect.idx");

	for (size_t i = 0; i < ncyc; i++) {
		const struct cycle *c = &cyc[i];

		if (c->gap >= 1u << 24)
			die("gap too long");
		fprintf(f, "%01x%02x%01x%01x%01x%01x%06x%01x%01x%01x%02x%08x\n",
			c->scyc << 3 | c->hahold << 2 | c->inq2 << 1 | c->hboff,
			c->boff_len, c->boff_at, c->na_at, c->wb, c->w0, c->gap,
			c->snoop << 3 | c->junk << 2 | c->lock << 1 | c->ken_n,
			c->pins, c->floats << 3 | c->master, c->be, c->addr);
		if (!c->filtered) {
			fwrite(c->rec, BACH_REC_SIZE, 1, e);
			fprintf(x, "%zu\n", i);
		}
	}
	fclose(f);
	fclose(e);
	fclose(x);
}

/* ---- the script ---------------------------------------------------------- */

static uint32_t cmd_seq;

/* send a command frame; wait for a reply of the kind given */
static void cmd(enum bach_command code, const struct bach_board_config *cfg,
		char wait)
{
	uint8_t f[BACH_FRAME_HDR + BACH_CONFIG_SIZE + BACH_FRAME_CRC];
	size_t n = bach_frame_build_command(f, cmd_seq++, code, cfg);

	fprintf(script, "cmd %c %zu ", wait, n);
	for (size_t i = 0; i < n; i++)
		fprintf(script, "%02x", f[i]);
	fputc('\n', script);
}

static uint32_t crc(const uint8_t *b, size_t n)
{
	return (uint32_t)crc32(0, b, (uInt)n);
}

static void raw(const uint8_t *b, size_t n)
{
	fprintf(script, "raw N %zu ", n);
	for (size_t i = 0; i < n; i++)
		fprintf(script, "%02x", b[i]);
	fputc('\n', script);
}

static void reply(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(replies, fmt, ap);
	fputc('\n', replies);
	va_end(ap);
}

static void configure_water(uint8_t policy, uint8_t timing, uint8_t source,
			    uint16_t filter, uint16_t high, uint16_t low)
{
	struct bach_board_config c = {
		.policy = policy,
		.timing = timing,
		.test_pattern = source,
		.type_filter = filter,
		.high_water = high,
		.low_water = low,
	};

	cmd(BACH_CMD_CONFIGURE, &c, 'A');
	reply("ACK 4 0");
}

/* the default watermarks (0: 75 % and 25 %) */
static void configure(uint8_t policy, uint8_t timing, uint8_t source,
		      uint16_t filter)
{
	configure_water(policy, timing, source, filter, 0, 0);
}

static void start(void)
{
	cmd(BACH_CMD_START, NULL, 'A');
	reply("ACK 2 0");
}

static void stop(void)
{
	cmd(BACH_CMD_STOP, NULL, 'A');
	reply("STATUS");
	reply("ACK 3 0");
}

static void identify(void)
{
	cmd(BACH_CMD_IDENTIFY, NULL, 'I');
	reply("IDENTITY");
}

static void status(void)
{
	cmd(BACH_CMD_STATUS, NULL, 'S');
	reply("STATUS");
}

/* A CONFIGURE frame with its payload cut to n bytes, or longer. */
static void configure_sized(const struct bach_board_config *cfg, size_t n,
			    char wait)
{
	uint8_t f[BACH_FRAME_HDR + 32 + BACH_FRAME_CRC];
	size_t len;

	bach_frame_build_command(f, cmd_seq++, BACH_CMD_CONFIGURE, cfg);
	memset(f + BACH_FRAME_HDR + BACH_CONFIG_SIZE, 0, 16);
	bach_put_le32(f + 12, (uint32_t)n);
	len = BACH_FRAME_HDR + n;
	bach_put_le32(f + len, crc(f, len));
	len += BACH_FRAME_CRC;
	fprintf(script, "cmd %c %zu ", wait, len);
	for (size_t i = 0; i < len; i++)
		fprintf(script, "%02x", f[i]);
	fputc('\n', script);
}

/*
 * Before the capture a scenario checks in full, a capture of the other
 * source, so that nothing of one capture leaks into the next: a short
 * counter pattern before a capture of the bus, the first `n` cycles of
 * the bus (with stalls) before a pattern. The checker looks at it only as
 * frames and replies (`mark` separates them).
 */
static void prelude_pattern(void)
{
	configure(BACH_POLICY_DROP, 0, 1, 0);
	start();
	fprintf(script, "idle 6000\n");
	stop();
	fprintf(script, "mark\n");
}

static void prelude_bus(const char *gen, size_t n)
{
	struct bach_board_config c = { .policy = BACH_POLICY_STALL,
				       .high_water = 4096,
				       .low_water = 2048 };

	load_gen(gen, n, 1, 0);
	for (size_t i = 0; i < ncyc; i++)
		cyc[i].filtered = 1; /* not part of the capture checked */
	/* low watermarks (64 and 32 records): it holds the CPU, and the
	   pattern's STATUS after it must not report those stalls */
	cmd(BACH_CMD_CONFIGURE, &c, 'A');
	reply("ACK 4 0");
	start();
	fprintf(script,
		"pause 3000 1500\nbus %zu\nbuswait\npause 0 0\n"
		"idle 3000\n",
		ncyc);
	stop();
	fprintf(script, "mark\n");
}

int main(int argc, char **argv)
{
	const char *sc, *gen, *dir;
	FILE *args;

	if (argc != 4)
		die("usage: tbgen SCENARIO GEN.byu DIR");
	sc = argv[1];
	gen = argv[2];
	dir = argv[3];
	script = create(dir, "script.txt");
	replies = create(dir, "replies.txt");
	args = create(dir, "check.args");

	if (!strcmp(sc, "bus")) {
		/*
		 * Every rule of the bus, then the workload, lossless
		 * (stall), with deltas; the host stops reading now and then,
		 * so that the board holds the CPU. The bus is written as a
		 * VCD for the logic-analyzer path.
		 */
		static const uint8_t junk[] = { 0x00, 'B', 'A', 'C', 0xff,
						'B',  'A', 'C', 'H', 0x01 };

		corner_cases(1, 1);
		load_gen(gen, 3000, 0, 0);
		raw(junk, sizeof(junk));
		identify();
		prelude_pattern();
		configure(BACH_POLICY_STALL, 1, 0, 0);
		start();
		fprintf(script, "pause 24000 9000\nbus %zu\nidle 40000\n",
			ncyc);
		status();
		fprintf(script, "buswait\npause 0 0\nidle 3000\n");
		stop();
		fprintf(args,
			"--policy stall --timing --need-stall --need-frames 6\n");
	} else if (!strcmp(sc, "drop")) {
		/*
		 * The top rate (pipelined line fills, back-to-back singles),
		 * garbage on the pins between ADS#s, BOFF# in the very clock
		 * of an ADS# with ADS# floating low after it, another master
		 * now and then, and a host that stops reading: records lost,
		 * counted exactly.
		 */
		struct cycle *c;

		corner_cases(0, 1);
		load_gen(gen, 4000, 1, 1);
		for (size_t i = 100; i < ncyc; i += 397) {
			c = &cyc[i];
			if (c->lock)
				continue;
			c->boff_at = 15;
			c->boff_len = 1 + (uint8_t)rnd(3);
			c->floats = 1;
		}
		for (size_t i = 250; i < ncyc; i += 601)
			if (!cyc[i].lock)
				cyc[i].master = 1 + (uint8_t)rnd(7);
		prelude_pattern();
		configure(BACH_POLICY_DROP, 0, 0, 0);
		start();
		fprintf(script,
			"pause 12000 6000\nbus %zu\nbuswait\n"
			"pause 0 0\nidle 3000\n",
			ncyc);
		stop();
		fprintf(args, "--policy drop --need-loss\n");
	} else if (!strcmp(sc, "gate")) {
		/*
		 * The bus scenario made short for the gate-level netlist
		 * (make fpga-gatesim, some 80 times slower): every corner
		 * case, the other master and floating ADS#s included, then
		 * 300 records of the workload; stall, TIMING, a host that
		 * stops reading, a STATUS mid-capture. Too few records to
		 * fill the FIFO to 75 %: the board holds the CPU at 64
		 * records (high water 4096/65536 of 1024) and lets go at 16.
		 */
		corner_cases(0, 1);
		load_gen(gen, 300, 0, 0);
		identify();
		prelude_pattern();
		configure_water(BACH_POLICY_STALL, 1, 0, 0, 4096, 1024);
		start();
		fprintf(script, "pause 6000 3000\nbus %zu\nidle 6000\n", ncyc);
		status();
		fprintf(script, "buswait\npause 0 0\nidle 3000\n");
		stop();
		fprintf(args, "--policy stall --timing --need-stall\n");
	} else if (!strcmp(sc, "offbus")) {
		/*
		 * The CPU off the bus: the board holds it (stall, the host
		 * stops reading) while another master takes the bus through
		 * the chipset's own HOLD before some cycles and runs cycles
		 * of its own under HLDA, and BOFF# episodes leave ADS#
		 * floating low. None of those ADS#s is a record; the STATUS
		 * counts them.
		 */
		struct cycle *c;

		corner_cases(0, 1);
		load_gen(gen, 2000, 0, 0);
		for (size_t i = 20; i < ncyc; i++) {
			c = &cyc[i];
			if (c->lock)
				continue;
			if (rnd(100) < 3)
				c->master = 1 + (uint8_t)rnd(7);
			if (c->boff_at)
				c->floats = (uint8_t)rnd(2);
			else if (rnd(100) < 2) {
				c->boff_at = 15;
				c->boff_len = 1 + (uint8_t)rnd(3);
				c->floats = 1;
			}
		}
		prelude_pattern();
		configure(BACH_POLICY_STALL, 1, 0, 0);
		start();
		fprintf(script,
			"pause 16000 6000\nbus %zu\nbuswait\n"
			"pause 0 0\nidle 3000\n",
			ncyc);
		stop();
		fprintf(args, "--policy stall --timing --need-stall\n");
	} else if (!strcmp(sc, "filter")) {
		/* the cycle-type filter: only instruction fetches and I/O */
		uint16_t keep = 1u << BACH_T_I_FETCH | 1u << BACH_T_NC_I_FETCH |
				1u << BACH_T_IO_READ | 1u << BACH_T_IO_WRITE;
		size_t k = 0;

		load_gen(gen, 1500, 0, 0);
		for (size_t i = 0; i < ncyc; i++) {
			cyc[i].filtered =
				!(keep >> bach_type_of(cyc[i].rec[5]) & 1);
			k += !cyc[i].filtered;
		}
		prelude_pattern();
		configure(BACH_POLICY_STALL, 1, 0, keep);
		start();
		fprintf(script, "bus %zu\nbuswait\nidle 3000\n", ncyc);
		stop();
		fprintf(args, "--policy stall --timing --filtered %zu\n", k);
	} else if (!strcmp(sc, "counter")) {
		prelude_bus(gen, 300);
		configure(BACH_POLICY_DROP, 0, 1, 0);
		start();
		fprintf(script, "pause 9000 3000\nidle 40000\npause 0 0\n");
		stop();
		fprintf(args, "--policy drop --pattern counter --need-loss\n");
	} else if (!strcmp(sc, "lfsr")) {
		prelude_bus(gen, 300);
		configure(BACH_POLICY_STALL, 1, 2, 0);
		start();
		fprintf(script, "pause 9000 3000\nidle 40000\npause 0 0\n");
		stop();
		fprintf(args, "--policy stall --timing --pattern lfsr\n");
	} else if (!strcmp(sc, "cmds")) {
		/* every reply of section 6, and damaged commands ignored */
		struct bach_board_config bad = { .policy = 2 };
		struct bach_board_config lw = { .high_water = 1000,
						.low_water = 1000 };
		struct bach_board_config ok = { .policy = BACH_POLICY_DROP,
						.test_pattern = 1 };
		uint8_t f[64];
		size_t n;

		prelude_bus(gen, 300);
		/* a bad CRC, a DATA frame, a bad version: no reply */
		n = bach_frame_build_command(f, cmd_seq++, BACH_CMD_IDENTIFY,
					     NULL);
		f[n - 1] ^= 0x40;
		raw(f, n);
		n = bach_frame_build_ack(f, 0, BACH_CMD_STOP, 0);
		f[5] = BACH_FT_DATA;
		bach_put_le32(f + n - 4, crc(f, n - 4));
		raw(f, n);
		n = bach_frame_build_command(f, cmd_seq++, BACH_CMD_IDENTIFY,
					     NULL);
		f[4] = 2;
		bach_put_le32(f + n - 4, crc(f, n - 4));
		raw(f, n);
		identify();
		configure_sized(&ok, 8, 'A');
		reply("ACK 4 2");
		cmd(BACH_CMD_CONFIGURE, &bad, 'A');
		reply("ACK 4 2");
		cmd(BACH_CMD_CONFIGURE, &lw, 'A');
		reply("ACK 4 2");
		cmd((enum bach_command)99, NULL, 'A');
		reply("ACK 99 1");
		cmd(BACH_CMD_STOP, NULL, 'A');
		reply("ACK 3 0");
		/* a longer payload (a later minor version): the first 16 */
		configure_sized(&ok, 24, 'A');
		reply("ACK 4 0");
		start();
		cmd(BACH_CMD_START, NULL, 'A');
		reply("ACK 2 3");
		cmd(BACH_CMD_CONFIGURE, &ok, 'A');
		reply("ACK 4 3");
		fprintf(script, "idle 5000\n");
		status();
		cmd(BACH_CMD_RESET_COUNTERS, NULL, 'A');
		reply("ACK 6 0");
		fprintf(script, "idle 5000\n");
		status();
		stop();
		identify();
		fprintf(args,
			"--policy drop --pattern counter --counters-reset\n");
	} else if (!strcmp(sc, "deaf")) {
		/*
		 * stall, but the CPU does not heed the hold output (not
		 * wired, or a chipset that ignores it): the FIFO overflows
		 * all the same, and the board says what it lost
		 */
		load_gen(gen, 3000, 1, 0);
		prelude_pattern();
		configure(BACH_POLICY_STALL, 0, 0, 0);
		start();
		fprintf(script,
			"pause 8000 6000\nbus %zu\nbuswait\n"
			"pause 0 0\nidle 3000\n",
			ncyc);
		stop();
		fprintf(args, "--policy drop --need-loss --need-stall\n");
	} else if (!strcmp(sc, "nocpu")) {
		/* no bus clock (no CPU): the link checked with the pattern */
		identify();
		prelude_pattern();
		configure(BACH_POLICY_DROP, 1, 2, 0);
		start();
		fprintf(script, "idle 20000\n");
		status();
		stop();
		fprintf(args,
			"--policy drop --timing --pattern lfsr --no-bus-clock\n");
	} else if (!strcmp(sc, "nobus")) {
		/* a capture of a bus whose clock is off: STOP still ends it */
		prelude_pattern();
		configure(BACH_POLICY_STALL, 0, 0, 0);
		start();
		fprintf(script, "idle 5000\n");
		status();
		stop();
		fprintf(args, "--policy stall --no-bus-clock\n");
	} else {
		die("unknown scenario '%s' (bus, drop, offbus, filter, counter, lfsr, cmds, deaf, nocpu, nobus, gate)",
		    sc);
	}
	write_cycles(dir);
	fprintf(script, "end\n");
	fclose(script);
	fclose(replies);
	fclose(args);
	return 0;
}
