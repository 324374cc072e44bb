// SPDX-License-Identifier: MIT
/*
 * Synthetic Pentium bus workload. Each event (a code run, a stack burst, an
 * array walk, heap traffic, line writebacks, I/O, an interrupt-acknowledge
 * pair, a special cycle) writes up to BACH_GEN_MAX_EVENT records; events are
 * drawn from xoshiro256** seeded by splitmix64, so the stream depends on the
 * seed alone. Memory map of the imaginary machine:
 *
 *   0x000f0000  BIOS ROM (noncacheable fetches)
 *   0x00100000  kernel and program code, 2 MiB
 *   0x00400000  heap and arrays, 8 MiB
 *   0x00ff0000  stack top, growing down
 *
 * Events are long (about 15 records on average) and their loops are
 * simple, because what a generator pays for is the choice of each event
 * (an unpredictable branch) and the instructions of each record. Random
 * numbers are drawn ahead into g->rnd, in order, so that an event's choice
 * does not wait for the generator's dependency chain; events run in one
 * loop with the state in locals. A record is built as a 64-bit word, the
 * record in its low six bytes, and stored eight bytes at a time: each
 * store spills two bytes past its record, which the next record (or the
 * next event) overwrites.
 */
#include <stddef.h>
#include <string.h>

#include "bach/record.h"
#include "lib/bus/gen.h"

#define CODE_BASE 0x00100000u
#define CODE_SIZE 0x00200000u
#define ROM_BASE  0x000f0000u
#define ROM_SIZE  0x00010000u
#define HEAP_BASE 0x00400000u
#define HEAP_SIZE 0x00800000u
#define STACK_TOP 0x00ff0000u

#define C_I_FETCH    (BACH_T_I_FETCH << 4)
#define C_NC_I_FETCH (BACH_T_NC_I_FETCH << 4)
#define C_D_READ     (BACH_T_D_READ << 4)
#define C_NC_D_READ  (BACH_T_NC_D_READ << 4)
#define C_WRITE_BACK (BACH_T_WRITE_BACK << 4)
#define C_D_WRITE    (BACH_T_D_WRITE << 4)
#define C_IO_READ    (BACH_T_IO_READ << 4)
#define C_IO_WRITE   (BACH_T_IO_WRITE << 4)
#define C_INT_ACK    (BACH_T_INT_ACK << 4)
#define C_SPECIAL    (BACH_T_SPECIAL << 4)

/* records of the longest event of each kind */
#define CODE_MAX  33
#define STACK_MAX 31
#define ARRAY_MAX 47
#define HEAP_MAX  16
#define WB_MAX	  8
#define IO_MAX	  16
/* bytes an event may store: its records and one spill */
#define EVENT_BYTES (ARRAY_MAX * BACH_REC_SIZE + 2)
#define DRAWS_MAX   5 /* random numbers one event may take */

#if BACH_GEN_MAX_EVENT < ARRAY_MAX || BACH_GEN_RND < 2 * DRAWS_MAX
#error "struct bach_gen is too small for the events"
#endif

static inline uint64_t rotl(uint64_t x, int k)
{
	return x << k | x >> (64 - k);
}

static inline uint64_t next(uint64_t *s)
{
	uint64_t r = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

void bach_gen_init(struct bach_gen *g, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		g->s[i] = z ^ (z >> 31);
	}
	g->pc = CODE_BASE;
	g->sp = STACK_TOP;
	g->arr = HEAP_BASE;
	g->stride = 8;
	for (unsigned i = 0; i < BACH_GEN_HOT; i++)
		g->hot[i] = HEAP_BASE + ((uint32_t)(next(g->s) >> 20) &
					 (HEAP_SIZE - 1) & ~31u);
	g->rnd_pos = g->rnd_len = 0;
}

/* The record word: address (its low three bits dropped), BE#, control. */
#define REC(ctl, be) ((uint64_t)(ctl) << 40 | (uint64_t)(be) << 32)

static inline uint64_t rec(uint32_t addr, uint64_t ctl_be)
{
	return __builtin_bswap32(addr & ~7u) | ctl_be;
}

/*
 * The record word as a number whose byte swap is the word: address in the
 * top 32 bits, then BE#, then control; adding (d << 32) moves it by d.
 */
#define SREC(addr, ctl, be)                                                    \
	((uint64_t)(addr) << 32 | (uint64_t)(be) << 24 | (uint64_t)(ctl) << 16)

static inline void store(uint8_t *o, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(o, &v, 8);
}

/* A REC() word's control and BE# as a SREC() word's. */
static inline uint64_t to_srec(uint64_t rec_word)
{
	return __builtin_bswap64(rec_word);
}

/* Store a swapped record word (see SREC). */
static inline void store_s(uint8_t *o, uint64_t v)
{
#if __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(o, &v, 8);
}

/* BE# for size bytes at addr within its quadword (size 1, 2, 4 or 8). */
static inline uint64_t be_for(uint32_t addr, unsigned size)
{
	unsigned lo = addr & 7;
	unsigned mask = ((1u << size) - 1) << lo;

	return (uint64_t)(uint8_t)~mask << 32;
}

/* c ? a : b without a branch (a compiler turns ?: into one too often) */
static inline uint32_t sel(bool c, uint32_t a, uint32_t b)
{
	return b ^ ((a ^ b) & -(uint32_t)c);
}

static inline uint64_t sel64(bool c, uint64_t a, uint64_t b)
{
	return b ^ ((a ^ b) & -(uint64_t)c);
}

/* The generator's state while events run: locals, kept in registers. */
struct regs {
	uint32_t pc, sp, arr, stride, arr_left, loop_start, loop_left;
	uint32_t hot_next;
	uint32_t *hot;
	const uint64_t *rnd;
	unsigned pos;
};

/* A run of straight-line code, then a loop back, a call or a jump. */
static inline uint8_t *code_run(struct regs *t, uint8_t *o, uint64_t r)
{
	unsigned lines = 2 + (r & 31);
	uint32_t pc = t->pc, a, step, k, q, npc;
	bool rom = pc - ROM_BASE < ROM_SIZE, loop, has;
	uint64_t v, d;

	/* the BIOS is not cached: quadword fetches; else 32-byte lines */
	a = sel(rom, pc & ~7u, pc & ~31u);
	step = sel(rom, 8, 32);
	pc = sel(rom, pc, a) + lines * step;
	v = SREC(a, sel(rom, C_NC_I_FETCH, C_I_FETCH), 0);
	d = (uint64_t)step << 32;
	/* two at a time: an odd run stores one more, overwritten as a spill */
	for (unsigned i = 0; i < lines; i += 2, v += 2 * d) {
		store_s(o + 6 * i, v);
		store_s(o + 6 * i + 6, v + d);
	}
	o += 6 * lines;

	r >>= 5;
	k = r & 7;
	q = (uint32_t)(r >> 3);
	/* 0-2: loop back, 3-4: call or jump, 5: now and then the BIOS */
	loop = k < 3;
	has = t->loop_left != 0;
	npc = pc;
	npc = sel((k == 5) & ((q & 15) == 0),
		  ROM_BASE + ((uint32_t)(r >> 7) & (ROM_SIZE - 1)), npc);
	npc = sel((k == 3) | (k == 4), CODE_BASE + (q & (CODE_SIZE - 1)), npc);
	npc = sel(loop & has, t->loop_start, npc);
	t->loop_start = sel(loop & !has, pc, t->loop_start);
	t->loop_left =
		sel(loop, sel(has, t->loop_left - 1, q & 15), t->loop_left);
	t->pc = sel(npc >= CODE_BASE + CODE_SIZE, CODE_BASE, npc);
	return o;
}

/* Pushes, then pops; 4-byte slots alternate between a quadword's halves. */
static inline uint8_t *stack(struct regs *t, uint8_t *o, uint64_t r)
{
	unsigned pushes = 1 + (r & 15), pops = (r >> 4) & 15, room;
	uint64_t hi = REC(C_D_WRITE, 0xf0), lo = REC(C_D_WRITE, 0x0f);
	uint32_t sp = t->sp;

	for (unsigned i = 0; i < pushes; i++) {
		sp -= 4;
		store(o + 6 * i, rec(sp, sel64(sp & 4, lo, hi)));
	}
	o += 6 * pushes;
	room = (STACK_TOP - sp) / 4;
	pops = pops < room ? pops : room;
	hi = REC(C_NC_D_READ, 0xf0);
	lo = REC(C_NC_D_READ, 0x0f);
	for (unsigned i = 0; i < pops; i++, sp += 4)
		store(o + 6 * i, rec(sp, sel64(sp & 4, lo, hi)));
	o += 6 * pops;
	t->sp = sel(sp < STACK_TOP - 0x10000, STACK_TOP - 0x100, sp);
	return o;
}

/* A strided walk over an array, read or written, in pieces. */
static inline uint8_t *array_walk(struct regs *t, uint8_t *o, uint64_t r)
{
	static const uint32_t strides[8] = { 4, 8, 8, 16, 32, 64, 128, 4096 };
	unsigned n = 16 + (r & 31);
	bool write = (r >> 5 & 3) == 0;
	uint32_t arr, stride;
	uint64_t ctl, fill;

	if (!t->arr_left) {
		t->stride = strides[(r >> 7) & 7];
		t->arr = HEAP_BASE +
			 ((uint32_t)(r >> 10) & (HEAP_SIZE - 1) & ~7u);
		t->arr_left = 128 + ((unsigned)(r >> 40) & 511);
	}
	n = n < t->arr_left ? n : t->arr_left;
	t->arr_left -= n;
	arr = (t->arr - HEAP_BASE) & (HEAP_SIZE - 1);
	stride = t->stride;
	/* dwords, or quadwords whose reads at a line's start are line fills */
	ctl = sel64(write, REC(C_D_WRITE, 0), REC(C_NC_D_READ, 0));
	fill = sel64(write, ctl, REC(C_D_READ, 0));
	if (stride == 4) {
		uint64_t h = ctl | REC(0, 0xf0), l = ctl | REC(0, 0x0f);

		for (unsigned i = 0; i < n; i++, arr += 4)
			store(o + 6 * i,
			      rec(HEAP_BASE + (arr & (HEAP_SIZE - 1)),
				  sel64(arr & 4, l, h)));
	} else if (arr + n * stride <= HEAP_SIZE) {
		/* the walk does not wrap: count in record words */
		uint64_t v = SREC(HEAP_BASE + arr, 0, 0);
		uint64_t d = (uint64_t)stride << 32, line = 31ull << 32;
		uint64_t sc = to_srec(ctl), sf = to_srec(fill);

		for (unsigned i = 0; i < n; i++, v += d)
			store_s(o + 6 * i, v | sel64(v & line, sc, sf));
		arr += n * stride;
	} else {
		for (unsigned i = 0; i < n; i++, arr += stride)
			store(o + 6 * i,
			      rec(HEAP_BASE + (arr & (HEAP_SIZE - 1)),
				  sel64(arr & 31, ctl, fill)));
	}
	t->arr = HEAP_BASE + arr;
	return o + 6 * n;
}

/*
 * A heap access takes 16 random bits: size (bits 0-1), a new line or one
 * of the working set (2-4), which line (5-10), the offset in the line
 * (11-15, aligned to the size) and what it is (13-14: a line fill, a read
 * or a write of its size). BE# and control depend on bits 0-1 and 11-14
 * alone, hence this table.
 */
#define HSIZE(j) (1u << ((j)&3))
#define HLO(j)	 (((j) >> 2 & 7) & ~(HSIZE(j) - 1))
#define HK(j)	 ((j) >> 4 & 3)
#define HBE(j)	 (HK(j) == 0 ? 0 : (uint8_t) ~(((1u << HSIZE(j)) - 1) << HLO(j)))
#define HCTL(j)	 (HK(j) == 0 ? C_D_READ : HK(j) == 3 ? C_D_WRITE : C_NC_D_READ)
#define H1(j)	 SREC(0, HCTL(j), HBE(j))
#define H4(j)	 H1(j), H1(j + 1), H1(j + 2), H1(j + 3)
#define H16(j)	 H4(j), H4(j + 4), H4(j + 8), H4(j + 12)
static const uint64_t heap_ctl[64] = { H16(0), H16(16), H16(32), H16(48) };

/*
 * Heap traffic with locality: most accesses go to a small set of lines
 * touched recently, the rest to new lines anywhere in the heap, which
 * then join the set (as a program's working set moves). Up to 16 accesses
 * of 1, 2, 4 or 8 bytes.
 */
static inline uint8_t *heap(struct regs *t, uint8_t *o, uint64_t r)
{
	unsigned n = 1 + (r & 15);
	const uint64_t *xs = t->rnd + t->pos;
	uint32_t upper = (uint32_t)(r >> 8 & 0xff) << 5;

	t->pos += (n + 3) / 4;
	for (unsigned i = 0; i < n; i++) {
		uint32_t x = (uint32_t)(xs[i / 4] >> (16 * (i & 3)));
		uint32_t line = t->hot[(x >> 5) % BACH_GEN_HOT], a;

		if ((x >> 2 & 7) == 0) {
			line = (HEAP_BASE +
				((x >> 5) << 13 & (HEAP_SIZE - 1))) |
			       upper;
			t->hot[t->hot_next++ % BACH_GEN_HOT] = line;
		}
		/* a line fill takes the line's address, the rest a quadword's
		 */
		a = (line | (x >> 11 & 31)) &
		    sel((x >> 13 & 3) == 0, ~31u, ~7u);
		store_s(o + 6 * i, (uint64_t)a << 32 |
					   heap_ctl[(x & 3) | (x >> 9 & 0x3c)]);
	}
	return o + 6 * n;
}

/* Dirty lines of the working set going back to memory. */
static inline uint8_t *writeback(struct regs *t, uint8_t *o, uint64_t r)
{
	unsigned n = 1 + (r & 7);

	r >>= 3;
	for (unsigned i = 0; i < n; i++, r >>= 6)
		store(o + 6 * i, rec(t->hot[r % BACH_GEN_HOT] & ~31u,
				     REC(C_WRITE_BACK, 0)));
	return o + 6 * n;
}

/* Port I/O, bytes; now and then a PCI configuration access (two dwords). */
static inline uint8_t *io(uint8_t *o, uint64_t r)
{
	static const uint16_t ports[8] = { 0x20,  0x21,	 0x60,	0x64,
					   0x3f8, 0x3fd, 0x1f0, 0x80 };
	unsigned n = 1 + (r & 7);

	r >>= 3;
	for (unsigned i = 0; i < n; i++, r >>= 5) {
		uint64_t wr = REC(C_IO_WRITE, 0);
		uint64_t dir = sel64(r & 1, wr, REC(C_IO_READ, 0));
		bool pci = (r >> 1 & 15) == 15;
		uint32_t p = ports[(r >> 1) & 7];

		/* a port's byte, or PCI: address (0xcf8), then data (0xcfc) */
		store(o, sel64(pci, rec(0xcf8, wr | be_for(0xcf8, 4)),
			       rec(p, dir | be_for(p, 1))));
		store(o + 6, rec(0xcfc, dir | be_for(0xcfc, 4)));
		o += 6 * (1 + pci);
	}
	return o;
}

static inline uint8_t *inta(struct regs *t, uint8_t *o, uint64_t r)
{
	/* two locked cycles: A4-side byte first, then byte 0 */
	store(o, rec(0, REC(C_INT_ACK, 0xef)));
	store(o + 6, rec(0, REC(C_INT_ACK, 0xfe)));
	t->pc = CODE_BASE + 0x8000 + ((uint32_t)(r & 0xff) << 6);
	return o + 12;
}

static inline uint8_t *special(uint8_t *o, uint64_t r)
{
	/* halt, stop grant, flush, writeback, flush ack, branch trace (x2) */
	static const uint64_t sp[16] = {
		REC(C_SPECIAL, 0xfb),
		REC(C_SPECIAL, 0xfb),
		REC(C_SPECIAL, 0xfb),
		REC(C_SPECIAL, 0xfb),
		REC(C_SPECIAL, 0xfb),
		REC(C_SPECIAL, 0xfb) | 0x10000000u, /* address 0x10 */
		REC(C_SPECIAL, 0xfd),
		REC(C_SPECIAL, 0xfd),
		REC(C_SPECIAL, 0xf7),
		REC(C_SPECIAL, 0xf7),
		REC(C_SPECIAL, 0xef),
		REC(C_SPECIAL, 0xef),
		REC(C_SPECIAL, 0xdf),
		REC(C_SPECIAL, 0xdf),
		REC(C_SPECIAL, 0xdf),
		REC(C_SPECIAL, 0xfb),
	};
	unsigned k = r & 15;
	uint64_t v = sp[k];

	if (k == 15 && (r >> 4 & 63) == 0)
		v = REC(C_SPECIAL, 0xfe); /* shutdown */
	store(o, v);
	store(o + 6, v);
	return o + 6 * (k >= 12 && k <= 14 ? 2 : 1);
}

/* One event into o (room for EVENT_BYTES); returns the end. */
static inline uint8_t *event(struct regs *t, uint8_t *o)
{
	uint64_t r = t->rnd[t->pos++];
	unsigned pick = r & 1023;

	r >>= 10;
	if (pick < 430)
		return code_run(t, o, r);
	if (pick < 570)
		return stack(t, o, r);
	if (pick < 700)
		return array_walk(t, o, r);
	if (pick < 870)
		return heap(t, o, r);
	if (pick < 950)
		return writeback(t, o, r);
	if (pick < 1000)
		return io(o, r);
	if (pick < 1012)
		return inta(t, o, r);
	return special(o, r);
}

/* Keep at least DRAWS_MAX numbers drawn ahead. */
static void draw(struct bach_gen *g)
{
	unsigned left = g->rnd_len - g->rnd_pos;

	memmove(g->rnd, g->rnd + g->rnd_pos, left * sizeof(*g->rnd));
	for (unsigned i = left; i < BACH_GEN_RND; i++)
		g->rnd[i] = next(g->s);
	g->rnd_pos = 0;
	g->rnd_len = BACH_GEN_RND;
}

/* Events into o while at least EVENT_BYTES of room are left before end. */
static uint8_t *events(struct bach_gen *g, uint8_t *o, const uint8_t *end)
{
	struct regs t = {
		.pc = g->pc,
		.sp = g->sp,
		.arr = g->arr,
		.stride = g->stride,
		.arr_left = g->arr_left,
		.loop_start = g->loop_start,
		.loop_left = g->loop_left,
		.hot_next = g->hot_next,
		.hot = g->hot,
		.rnd = g->rnd,
		.pos = g->rnd_pos,
	};

	while (end - o >= EVENT_BYTES) {
		if (g->rnd_len - t.pos < DRAWS_MAX) {
			g->rnd_pos = t.pos;
			draw(g);
			t.pos = 0;
		}
		o = event(&t, o);
	}
	g->pc = t.pc;
	g->sp = t.sp;
	g->arr = t.arr;
	g->stride = t.stride;
	g->arr_left = t.arr_left;
	g->loop_start = t.loop_start;
	g->loop_left = t.loop_left;
	g->hot_next = t.hot_next;
	g->rnd_pos = t.pos;
	return o;
}

void bach_gen_fill(struct bach_gen *g, uint8_t *out, size_t n)
{
	uint8_t *end = out + n * BACH_REC_SIZE;

	while (out < end) {
		if (g->carry_off < g->carry_len) {
			size_t k = g->carry_len - g->carry_off;

			if (k > (size_t)(end - out))
				k = (size_t)(end - out);
			memcpy(out, g->carry + g->carry_off, k);
			g->carry_off += k;
			out += k;
			continue;
		}
		if (end - out >= EVENT_BYTES) {
			out = events(g, out, end);
		} else {
			/* the last few records: one event, the rest kept */
			g->carry_len = (size_t)(events(g, g->carry,
						       g->carry + EVENT_BYTES) -
						g->carry);
			g->carry_off = 0;
		}
	}
}
