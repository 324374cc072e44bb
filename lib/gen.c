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
 */
#include <string.h>

#include "bach/gen.h"
#include "bach/record.h"

#define CODE_BASE 0x00100000u
#define CODE_SIZE 0x00200000u
#define ROM_BASE 0x000f0000u
#define ROM_SIZE 0x00010000u
#define HEAP_BASE 0x00400000u
#define HEAP_SIZE 0x00800000u
#define STACK_TOP 0x00ff0000u

#define C_I_FETCH (BACH_T_I_FETCH << 4)
#define C_NC_I_FETCH (BACH_T_NC_I_FETCH << 4)
#define C_D_READ (BACH_T_D_READ << 4)
#define C_NC_D_READ (BACH_T_NC_D_READ << 4)
#define C_WRITE_BACK (BACH_T_WRITE_BACK << 4)
#define C_D_WRITE (BACH_T_D_WRITE << 4)
#define C_IO_READ (BACH_T_IO_READ << 4)
#define C_IO_WRITE (BACH_T_IO_WRITE << 4)
#define C_INT_ACK (BACH_T_INT_ACK << 4)
#define C_SPECIAL (BACH_T_SPECIAL << 4)

static inline uint64_t rotl(uint64_t x, int k)
{
	return x << k | x >> (64 - k);
}

static uint64_t next(struct bach_gen *g)
{
	uint64_t *s = g->s;
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
		g->hot[i] = HEAP_BASE + ((uint32_t)(next(g) >> 20) & (HEAP_SIZE - 1) & ~31u);
}

/* BE# for size bytes at addr within its quadword (size 1, 2, 4 or 8). */
static inline uint8_t be_for(uint32_t addr, unsigned size)
{
	unsigned lo = addr & 7;
	unsigned mask = ((1u << size) - 1) << lo;

	return (uint8_t)~mask;
}

static inline uint8_t *put(uint8_t *o, uint32_t addr, uint8_t be, uint8_t ctl)
{
	bach_rec_put(o, addr & ~7u, be, ctl);
	return o + BACH_REC_SIZE;
}

static uint8_t *code_run(struct bach_gen *g, uint8_t *o, uint64_t r)
{
	unsigned lines = 2 + (r & 15);
	uint32_t pc = g->pc;

	if (pc >= ROM_BASE && pc < ROM_BASE + ROM_SIZE) {
		/* the BIOS is not cached: quadword fetches */
		for (unsigned i = 0; i < lines; i++, pc += 8)
			o = put(o, pc, 0x00, C_NC_I_FETCH);
	} else {
		/* cacheable line fills, one bus cycle a 32-byte line */
		pc &= ~31u;
		for (unsigned i = 0; i < lines; i++, pc += 32)
			o = put(o, pc, 0x00, C_I_FETCH);
	}
	g->pc = pc;
	r >>= 4;
	switch (r & 7) {
	case 0:
	case 1:
	case 2: /* loop back */
		if (g->loop_left) {
			g->loop_left--;
			g->pc = g->loop_start;
			break;
		}
		g->loop_start = g->pc;
		g->loop_left = (unsigned)(r >> 3) & 15;
		break;
	case 3:
	case 4: /* call or jump elsewhere */
		g->pc = CODE_BASE + ((uint32_t)(r >> 3) & (CODE_SIZE - 1));
		break;
	case 5: /* into the BIOS now and then */
		if (((r >> 3) & 15) == 0)
			g->pc = ROM_BASE + ((uint32_t)(r >> 7) & (ROM_SIZE - 1));
		break;
	default: /* fall through */
		break;
	}
	if (g->pc >= ROM_BASE + ROM_SIZE && g->pc < CODE_BASE)
		g->pc = CODE_BASE;
	if (g->pc >= CODE_BASE + CODE_SIZE)
		g->pc = CODE_BASE;
	return o;
}

static uint8_t *stack(struct bach_gen *g, uint8_t *o, uint64_t r)
{
	unsigned pushes = 1 + (r & 7), pops = (r >> 3) & 7;
	uint32_t sp = g->sp;

	for (unsigned i = 0; i < pushes; i++) {
		sp -= 4;
		o = put(o, sp, be_for(sp, 4), C_D_WRITE);
	}
	for (unsigned i = 0; i < pops && sp < STACK_TOP; i++, sp += 4)
		o = put(o, sp, be_for(sp, 4), C_NC_D_READ);
	if (sp < STACK_TOP - 0x10000)
		sp = STACK_TOP - 0x100;
	g->sp = sp;
	return o;
}

static uint8_t *array_walk(struct bach_gen *g, uint8_t *o, uint64_t r)
{
	static const uint32_t strides[8] = { 4, 8, 8, 16, 32, 64, 128, 4096 };
	unsigned n = 8 + (r & 15);
	bool write = (r >> 4 & 3) == 0;
	uint8_t ctl;
	unsigned size;

	if (!g->arr_left) {
		g->stride = strides[(r >> 6) & 7];
		g->arr = HEAP_BASE + ((uint32_t)(r >> 9) & (HEAP_SIZE - 1) & ~7u);
		g->arr_left = 64 + ((unsigned)(r >> 40) & 255);
	}
	if (n > g->arr_left)
		n = g->arr_left;
	g->arr_left -= n;
	size = g->stride == 4 ? 4 : 8;
	ctl = write ? C_D_WRITE : C_NC_D_READ;
	for (unsigned i = 0; i < n; i++) {
		uint32_t a = HEAP_BASE + ((g->arr - HEAP_BASE) & (HEAP_SIZE - 1));

		if (!write && size == 8 && (a & 31) == 0)
			o = put(o, a, 0x00, C_D_READ); /* line fill */
		else
			o = put(o, a, be_for(a, size), ctl);
		g->arr += g->stride;
	}
	return o;
}

/*
 * Heap traffic with locality: most accesses go to a small set of lines
 * touched recently, the rest to new lines anywhere in the heap, which
 * then join the set (as a program's working set moves).
 */
static uint8_t *heap(struct bach_gen *g, uint8_t *o, uint64_t r)
{
	unsigned n = 1 + (r & 7);
	uint64_t x = next(g);

	for (unsigned i = 0; i < n; i++, x >>= 16) {
		unsigned size = 1u << (x & 3);
		uint32_t line, a;

		if (i == 4)
			x = next(g);
		if ((x >> 2 & 7) == 0) {
			line = HEAP_BASE + ((uint32_t)(x >> 5) << 13 & (HEAP_SIZE - 1));
			line |= (uint32_t)(r >> 8 & 0xff) << 5;
			g->hot[g->hot_next++ % BACH_GEN_HOT] = line;
		} else {
			line = g->hot[(x >> 5) % BACH_GEN_HOT];
		}
		a = (line | ((uint32_t)(x >> 11) & 31)) & ~(size - 1);
		switch ((x >> 13) & 3) {
		case 0:
			o = put(o, a & ~31u, 0x00, C_D_READ);
			break;
		case 1:
		case 2:
			o = put(o, a, be_for(a, size), C_NC_D_READ);
			break;
		default:
			o = put(o, a, be_for(a, size), C_D_WRITE);
			break;
		}
	}
	return o;
}

/* Dirty lines of the working set going back to memory. */
static uint8_t *writeback(struct bach_gen *g, uint8_t *o, uint64_t r)
{
	unsigned n = 1 + (r & 3);

	r >>= 2;
	for (unsigned i = 0; i < n; i++, r >>= 6)
		o = put(o, g->hot[r % BACH_GEN_HOT] & ~31u, 0x00, C_WRITE_BACK);
	return o;
}

static uint8_t *io(struct bach_gen *g, uint8_t *o, uint64_t r)
{
	static const uint16_t ports[8] = { 0x20, 0x21, 0x60, 0x64,
					   0x3f8, 0x3fd, 0x1f0, 0x80 };
	unsigned n = 1 + (r & 3);

	(void)g;
	r >>= 2;
	for (unsigned i = 0; i < n; i++, r >>= 5) {
		bool write = r & 1;

		if ((r >> 1 & 15) == 15) { /* PCI configuration: dword */
			o = put(o, 0xcf8, be_for(0xcf8, 4), C_IO_WRITE);
			o = put(o, 0xcfc, be_for(0xcfc, 4),
				write ? C_IO_WRITE : C_IO_READ);
			continue;
		}
		uint16_t p = ports[(r >> 1) & 7];

		o = put(o, p, be_for(p, 1), write ? C_IO_WRITE : C_IO_READ);
	}
	return o;
}

static uint8_t *inta(struct bach_gen *g, uint8_t *o, uint64_t r)
{
	/* two locked cycles: A4-side byte first, then byte 0 */
	o = put(o, 0, 0xef, C_INT_ACK);
	o = put(o, 0, 0xfe, C_INT_ACK);
	g->pc = CODE_BASE + 0x8000 + ((uint32_t)(r & 0xff) << 6);
	return o;
}

static uint8_t *special(struct bach_gen *g, uint8_t *o, uint64_t r)
{
	(void)g;
	switch (r & 15) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4:
		return put(o, 0, 0xfb, C_SPECIAL);	/* halt */
	case 5:
		return put(o, 0x10, 0xfb, C_SPECIAL);	/* stop grant */
	case 6:
	case 7:
		return put(o, 0, 0xfd, C_SPECIAL);	/* flush */
	case 8:
	case 9:
		return put(o, 0, 0xf7, C_SPECIAL);	/* writeback */
	case 10:
	case 11:
		return put(o, 0, 0xef, C_SPECIAL);	/* flush ack */
	case 12:
	case 13:
	case 14:
		o = put(o, 0, 0xdf, C_SPECIAL);		/* branch trace */
		return put(o, 0, 0xdf, C_SPECIAL);
	default:
		if ((r >> 4 & 63) == 0)
			return put(o, 0, 0xfe, C_SPECIAL); /* shutdown */
		return put(o, 0, 0xfb, C_SPECIAL);
	}
}

/* One event into o (room for BACH_GEN_MAX_EVENT records); returns the end. */
static uint8_t *event(struct bach_gen *g, uint8_t *o)
{
	uint64_t r = next(g);
	unsigned pick = r & 1023;

	r >>= 10;
	if (pick < 430)
		return code_run(g, o, r);
	if (pick < 570)
		return stack(g, o, r);
	if (pick < 700)
		return array_walk(g, o, r);
	if (pick < 870)
		return heap(g, o, r);
	if (pick < 950)
		return writeback(g, o, r);
	if (pick < 1000)
		return io(g, o, r);
	if (pick < 1012)
		return inta(g, o, r);
	return special(g, o, r);
}

void bach_gen_fill(struct bach_gen *g, uint8_t *out, size_t n)
{
	size_t len = n * BACH_REC_SIZE;

	while (len) {
		if (g->carry_off < g->carry_len) {
			size_t k = g->carry_len - g->carry_off;

			if (k > len)
				k = len;
			memcpy(out, g->carry + g->carry_off, k);
			g->carry_off += k;
			out += k;
			len -= k;
			continue;
		}
		if (len >= sizeof(g->carry)) {
			uint8_t *end = event(g, out);

			len -= (size_t)(end - out);
			out = end;
		} else {
			g->carry_len = (size_t)(event(g, g->carry) - g->carry);
			g->carry_off = 0;
		}
	}
}
