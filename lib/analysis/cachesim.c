// SPDX-License-Identifier: MIT
/*
 * The cache simulator behind bach sim (lib/analysis/cachesim.h says what every
 * count means). Caches come in two layouts:
 *
 * - lanes, for sets of up to SMALL_ASSOC ways (most caches): a set's
 *   tags are contiguous, each line's dirty bit in its tag word, empty
 *   ways last. A reference looks at the first way, then searches the
 *   others without a branch (four at a time). Under LRU and FIFO a set
 *   keeps its lines in order, the newest first (LRU: the most recently
 *   used; FIFO: the last filled): a new or (LRU) used line goes first and
 *   the others move down by one way, which drops the last line on a
 *   miss, the victim. Under random replacement a line stays in the way
 *   it was filled into, stamped with when. A function per associativity
 *   (1, 2, 4, 8, 16 and any) lets the compiler unroll the search and the
 *   moves, and bach_sim_add_refs() takes an L1's search and hits in line.
 * - ways, for sets of more than SMALL_ASSOC ways (fully associative
 *   caches): a line stays in the way it was filled into and is found
 *   through one hash table per cache, chained through the slots; LRU and
 *   FIFO keep their order in a list per set, random replacement stamps
 *   a line with when it was filled. Such a cache remembers the line it
 *   served last: a reference to that line (the next quadwords of a line
 *   being fetched) is a hit that changes nothing but the counts and, for
 *   a write, the dirty bit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/cachesim.h"

#define SMALL_ASSOC 16
#define NONE	    UINT32_MAX /* an empty way, no line */
#define DIRTY                                                                  \
	(1u << 31) /* lanes: a dirty line's tag word (a line                   \
		      number is below 2^30: lines are >= 4 bytes) */

const char *const bach_sim_cache_names[BACH_SIM_NCACHES] = {
	"l1i", "l1d", "l1", "l2", "l3", "tlb",
};

/* ---- parsing ------------------------------------------------------------ */

int bach_parse_bytes(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	const char *p = s;
	unsigned shift = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		x = x * 10 + (uint64_t)(*p - '0');
		if (x > (1ull << 40))
			return -EINVAL;
	}
	switch (*p) {
	case 0:
		break;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (*p && p[1])
		return -EINVAL;
	if (x > (1ull << 40) >> shift)
		return -EINVAL;
	*v = x << shift;
	return 0;
}

int bach_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

#define MAX_FIELDS 8

/*
 * Split text at ':' into at most MAX_FIELDS fields of buf; the count, or
 * -1 when it is too long or has too many.
 */
static int split(const char *text, char *buf, size_t len, char **f)
{
	int n = 0;

	if (strlen(text) >= len)
		return -1;
	strcpy(buf, text);
	for (char *p = buf;; p++) {
		if (n == MAX_FIELDS)
			return -1;
		f[n++] = p;
		p = strchr(p, ':');
		if (!p)
			return n;
		*p = 0;
	}
}

static int check_geometry(struct bach_cache_spec *c, const char *assoc,
			  char *why, size_t len)
{
	uint64_t a, lines;

	if (c->line < BACH_SIM_MIN_LINE || c->line > BACH_SIM_MAX_LINE ||
	    (c->line & (c->line - 1)))
		return bach_why(
			why, len,
			"LINE %u is not a power of two from %u to %u bytes",
			c->line, BACH_SIM_MIN_LINE, BACH_SIM_MAX_LINE);
	if (c->size < c->line)
		return bach_why(why, len, "SIZE %llu is smaller than LINE %u",
				(unsigned long long)c->size, c->line);
	if (c->size % c->line)
		return bach_why(why, len,
				"SIZE %llu is not a multiple of LINE %u",
				(unsigned long long)c->size, c->line);
	lines = c->size / c->line;
	if (lines > BACH_SIM_MAX_LINES)
		return bach_why(why, len,
				"SIZE %llu holds %llu lines, more than %u",
				(unsigned long long)c->size,
				(unsigned long long)lines, BACH_SIM_MAX_LINES);
	if (!strcmp(assoc, "full")) {
		c->full = true;
		c->assoc = (uint32_t)lines;
		return 0;
	}
	if (bach_parse_bytes(assoc, &a) || !a || strpbrk(assoc, "kKmMgG"))
		return bach_why(why, len,
				"ASSOC '%s' is not a number of ways or 'full'",
				assoc);
	if (a > lines)
		return bach_why(why, len,
				"ASSOC %llu x LINE %u is larger than SIZE %llu",
				(unsigned long long)a, c->line,
				(unsigned long long)c->size);
	if (lines % a)
		return bach_why(
			why, len,
			"SIZE %llu is not a multiple of LINE x ASSOC (%llu)",
			(unsigned long long)c->size,
			(unsigned long long)(a * c->line));
	c->assoc = (uint32_t)a;
	return 0;
}

int bach_cache_spec_parse(const char *text, struct bach_cache_spec *c,
			  char *why, size_t whylen)
{
	bool repl = false, wb = false, wa = false;
	char buf[128], *f[MAX_FIELDS];
	int n = split(text, buf, sizeof(buf), f);
	uint64_t v;
	int err;

	memset(c, 0, sizeof(*c));
	if (n < 3)
		return bach_why(why, whylen,
				"'%s' is not SIZE:LINE:ASSOC[:POLICY]...",
				text);
	if (bach_parse_bytes(f[0], &c->size) || !c->size)
		return bach_why(why, whylen,
				"SIZE '%s' is not a size (16k, 1M, ...)", f[0]);
	if (bach_parse_bytes(f[1], &v) || v > BACH_SIM_MAX_LINE)
		return bach_why(why, whylen, "LINE '%s' is not a line size",
				f[1]);
	c->line = (uint32_t)v;
	err = check_geometry(c, f[2], why, whylen);
	if (err)
		return err;
	for (int i = 3; i < n; i++) {
		const char *w = f[i];

		if (!strcmp(w, "lru") || !strcmp(w, "fifo") ||
		    !strcmp(w, "random")) {
			if (repl)
				return bach_why(
					why, whylen,
					"two replacement policies ('%s')", w);
			repl = true;
			c->repl = w[0] == 'l'	? BACH_REPL_LRU
				  : w[0] == 'f' ? BACH_REPL_FIFO
						: BACH_REPL_RANDOM;
		} else if (!strcmp(w, "wb") || !strcmp(w, "wt")) {
			if (wb)
				return bach_why(why, whylen,
						"two write policies ('%s')", w);
			wb = true;
			c->write_through = w[1] == 't';
		} else if (!strcmp(w, "wa") || !strcmp(w, "nwa")) {
			if (wa)
				return bach_why(
					why, whylen,
					"two allocation policies ('%s')", w);
			wa = true;
			c->no_allocate = w[0] == 'n';
		} else {
			return bach_why(
				why, whylen,
				"unknown POLICY '%s' (lru|fifo|random, wb|wt, wa|nwa)",
				w);
		}
	}
	return 0;
}

int bach_tlb_spec_parse(const char *text, struct bach_cache_spec *c, char *why,
			size_t whylen)
{
	char buf[128], *f[MAX_FIELDS];
	int n = split(text, buf, sizeof(buf), f);
	uint64_t entries;

	memset(c, 0, sizeof(*c));
	if (n != 2)
		return bach_why(why, whylen, "'%s' is not ENTRIES:ASSOC", text);
	if (bach_parse_bytes(f[0], &entries) || !entries ||
	    entries > (1u << 20) || strpbrk(f[0], "kKmMgG"))
		return bach_why(why, whylen,
				"ENTRIES '%s' is not a number from 1 to %u",
				f[0], 1u << 20);
	c->line = BACH_TLB_PAGE;
	c->size = entries * BACH_TLB_PAGE;
	if (check_geometry(c, f[1], why, whylen)) {
		if (!strncmp(why, "ASSOC '", 7))
			return -EINVAL;
		return bach_why(why, whylen,
				"ENTRIES %llu is not a multiple of ASSOC %s",
				(unsigned long long)entries, f[1]);
	}
	return 0;
}

static void human_size(char *buf, size_t len, uint64_t v)
{
	if (v >= (1u << 30) && !(v & ((1u << 30) - 1)))
		snprintf(buf, len, "%llu GiB", (unsigned long long)(v >> 30));
	else if (v >= (1u << 20) && !(v & ((1u << 20) - 1)))
		snprintf(buf, len, "%llu MiB", (unsigned long long)(v >> 20));
	else if (v >= 1024 && !(v & 1023))
		snprintf(buf, len, "%llu KiB", (unsigned long long)(v >> 10));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)v);
}

void bach_cache_spec_describe(const struct bach_cache_spec *c, char *buf,
			      size_t len)
{
	static const char *const repl[] = { "LRU", "FIFO", "random" };
	char size[32], ways[32];

	human_size(size, sizeof(size), c->size);
	if (c->full)
		snprintf(ways, sizeof(ways), "fully associative");
	else if (c->assoc == 1)
		snprintf(ways, sizeof(ways), "direct-mapped");
	else
		snprintf(ways, sizeof(ways), "%u-way", c->assoc);
	snprintf(buf, len, "%s, %u-byte lines, %s, %s, %s, %s", size, c->line,
		 ways, repl[c->repl],
		 c->write_through ? "write-through" : "write-back",
		 c->no_allocate ? "no-write-allocate" : "write-allocate");
}

/* ---- the caches --------------------------------------------------------- */

struct cache;
/* One reference within one line of cache c (lanes or ways). */
typedef void access_fn(struct cache *c, uint32_t addr, uint32_t size,
		       unsigned kind);

struct cache {
	/* geometry and policy */
	unsigned lg_line;
	uint32_t line, nsets, assoc, ways, /* ways: nsets x assoc */
		set_mask; /* set_mask: nsets - 1 if a power of 2 */
	bool pow2, lanes, hashed, wt, nwa;
	enum bach_repl repl;
	access_fn *access;
	/* way w of set s is slot s * assoc + w: lanes under LRU and FIFO,
	 * the line w-th newest; else the line filled into that way */
	uint32_t *tag;	  /* line number (lanes: | DIRTY when dirty), or NONE */
	uint8_t *dirty;	  /* ways only */
	uint64_t *stamp;  /* random only: when filled */
	uint32_t *filled; /* ways and random only: per set, ways in use (they
			     fill in order) */
	uint64_t clock;
	uint64_t key;	     /* random: sm(seed * 8 + n) (bach_sim_draw) */
	const uint64_t *now; /* the position of the record simulated */
	uint64_t draw_at;    /* the record of the last draw, and its draws */
	uint64_t draws;
	uint64_t valid; /* ways in use in all */
	/* hashed sets: a slot of a line by a hash of it, then the slot's chain
	 * to the next of that hash; per set a list, most recent first */
	uint32_t *hash, *chain;
	unsigned hash_bits;
	uint32_t *prev, *next; /* list_end() */
	uint32_t *order;       /* a set's dirty slots, for copyback() */
	/* the line served last, and its slot */
	uint32_t memo, memo_slot;
	struct cache *down;	    /* the next level; NULL: memory */
	struct bach_sim_downs *rec; /* an L1's sends down recorded: or NULL */
	struct bach_cache_stats st;
};

struct bach_sim {
	struct cache c[BACH_SIM_NCACHES];
	bool have[BACH_SIM_NCACHES];
	struct cache *top[BACH_REF_NKINDS]; /* L1 for each kind */
	struct cache *data_top;		    /* where a copy-back starts */
	struct cache *tlb;
	uint32_t l1_lanes; /* the ways of L1's lanes (both halves), or 0 */
	struct bach_sim_totals t;
	uint64_t pos;  /* the position of the record simulated */
	uint64_t next; /* bach_sim_add()'s next position */
	bool finished;
};

/* splitmix64's output for the state x */
static inline uint64_t sm(uint64_t x)
{
	uint64_t z = x + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t bach_sim_draw(uint64_t seed, unsigned n, uint64_t pos, uint64_t k)
{
	return sm(sm(sm(seed * 8 + n) ^ pos) ^ k);
}

static inline uint32_t set_of(const struct cache *c, uint32_t block)
{
	return c->pow2 ? block & c->set_mask : block % c->nsets;
}

static inline uint32_t hash_of(const struct cache *c, uint32_t block)
{
	return (block * 0x9e3779b1u) >> (32 - c->hash_bits);
}

static uint32_t hash_find(const struct cache *c, uint32_t block)
{
	uint32_t slot = c->hash[hash_of(c, block)];

	while (slot != NONE && c->tag[slot] != block)
		slot = c->chain[slot];
	return slot;
}

static void hash_insert(struct cache *c, uint32_t slot)
{
	uint32_t *head = &c->hash[hash_of(c, c->tag[slot])];

	c->chain[slot] = *head;
	*head = slot;
}

static void hash_remove(struct cache *c, uint32_t block)
{
	uint32_t *p = &c->hash[hash_of(c, block)];

	while (c->tag[*p] != block)
		p = &c->chain[*p];
	*p = c->chain[*p];
}

/*
 * A set's list is a ring through prev and next that holds its lines and
 * the set's own entry, slot ways + set (the end): next of the end is the
 * most recent line, prev of it the oldest.
 */
static inline uint32_t list_end(const struct cache *c, uint32_t set)
{
	return c->ways + set;
}

static inline void list_unlink(struct cache *c, uint32_t slot)
{
	c->next[c->prev[slot]] = c->next[slot];
	c->prev[c->next[slot]] = c->prev[slot];
}

static inline void list_push(struct cache *c, uint32_t set, uint32_t slot)
{
	uint32_t end = list_end(c, set), first = c->next[end];

	c->next[slot] = first;
	c->prev[slot] = end;
	c->prev[first] = slot;
	c->next[end] = slot;
}

/* Every set's list empty. */
static void list_clear(struct cache *c)
{
	for (uint32_t set = 0; set < c->nsets; set++) {
		uint32_t end = list_end(c, set);

		c->next[end] = c->prev[end] = end;
	}
}

static void invalidate(struct cache *c)
{
	size_t ways = (size_t)c->nsets * c->assoc;

	c->memo = NONE;
	if (!c->valid)
		return;
	c->valid = 0;
	memset(c->tag, 0xff, ways * sizeof(*c->tag));
	if (c->dirty)
		memset(c->dirty, 0, ways);
	if (c->filled)
		memset(c->filled, 0, c->nsets * sizeof(*c->filled));
	if (c->hashed) {
		memset(c->hash, 0xff,
		       ((size_t)1 << c->hash_bits) * sizeof(*c->hash));
		list_clear(c);
	}
}

/*
 * The associativities a cache of lanes has a function of its own for, a
 * constant the compiler unrolls by: X(A) for each (power of two, at most
 * SMALL_ASSOC). Any other takes lanes_any.
 */
#define LANE_COUNTS(X)	 X(1) X(2) X(4) X(8) X(16)
#define DECLARE_LANES(A) static access_fn lanes_##A;
LANE_COUNTS(DECLARE_LANES)
static access_fn lanes_any, ways_access;

static int cache_init(struct cache *c, const struct bach_cache_spec *sp,
		      struct cache *down, uint64_t seed)
{
	size_t ways = sp->size / sp->line;

	memset(c, 0, sizeof(*c));
	c->lg_line = (unsigned)__builtin_ctz(sp->line);
	c->line = sp->line;
	c->assoc = sp->assoc;
	c->nsets = (uint32_t)(ways / sp->assoc);
	c->ways = (uint32_t)ways;
	c->pow2 = !(c->nsets & (c->nsets - 1));
	c->set_mask = c->nsets - 1;
	c->hashed = sp->assoc > SMALL_ASSOC;
	c->lanes = !c->hashed;
	c->wt = sp->write_through;
	c->nwa = sp->no_allocate;
	c->repl = sp->repl;
	c->key = sm(seed);
	c->draw_at = UINT64_MAX;
	c->down = down;
	c->memo = NONE;
	c->tag = malloc(ways * sizeof(*c->tag));
	c->order = malloc(c->assoc * sizeof(*c->order));
	if (!c->tag || !c->order)
		return -ENOMEM;
	memset(c->tag, 0xff, ways * sizeof(*c->tag));
	if (c->repl == BACH_REPL_RANDOM) {
		c->stamp = calloc(ways, sizeof(*c->stamp));
		c->filled = calloc(c->nsets, sizeof(*c->filled));
		if (!c->stamp || !c->filled)
			return -ENOMEM;
	}
	if (c->lanes) {
		c->access = lanes_any;
#define PICK_LANES(A)                                                          \
	if (c->assoc == (A))                                                   \
		c->access = lanes_##A;
		LANE_COUNTS(PICK_LANES)
		return 0;
	}
	c->access = ways_access;
	c->dirty = calloc(ways, 1);
	if (!c->filled)
		c->filled = calloc(c->nsets, sizeof(*c->filled));
	if (!c->dirty || !c->filled)
		return -ENOMEM;
	if (c->hashed) {
		c->hash_bits = 1;
		while (((size_t)1 << c->hash_bits) < 2 * ways)
			c->hash_bits++;
		c->hash =
			malloc(((size_t)1 << c->hash_bits) * sizeof(*c->hash));
		c->chain = malloc(ways * sizeof(*c->chain));
		c->prev = malloc((ways + c->nsets) * sizeof(*c->prev));
		c->next = malloc((ways + c->nsets) * sizeof(*c->next));
		if (!c->hash || !c->chain || !c->prev || !c->next)
			return -ENOMEM;
		memset(c->hash, 0xff,
		       ((size_t)1 << c->hash_bits) * sizeof(*c->hash));
		list_clear(c);
	}
	return 0;
}

static void cache_free(struct cache *c)
{
	free(c->tag);
	free(c->stamp);
	free(c->dirty);
	free(c->filled);
	free(c->order);
	free(c->hash);
	free(c->chain);
	free(c->prev);
	free(c->next);
}

/* A hit: LRU (hashed, then) moves the line to the front of its list. */
static inline void touch(struct cache *c, uint32_t set, uint32_t slot)
{
	if (c->repl == BACH_REPL_LRU && c->next[list_end(c, set)] != slot) {
		list_unlink(c, slot);
		list_push(c, set, slot);
	}
}

/* The slot a new line of set takes: an empty way first. */
/* The way random replacement draws (bach_sim_draw()) in a full set. */
static uint32_t draw(struct cache *c)
{
	uint64_t x;

	if (c->draw_at != *c->now) {
		c->draw_at = *c->now;
		c->draws = 0;
	}
	x = sm(sm(c->key ^ c->draw_at) ^ c->draws++);
	/* % ASSOC, without a division when it is a power of 2 */
	return (uint32_t)(c->assoc & (c->assoc - 1) ? x % c->assoc
						    : x & (c->assoc - 1));
}

static uint32_t victim(struct cache *c, uint32_t set, uint32_t base)
{
	if (c->filled[set] < c->assoc)
		return base + c->filled[set]++;
	if (c->repl != BACH_REPL_RANDOM)
		return c->prev[list_end(c, set)]; /* hashed: the oldest */
	return base + draw(c);
}

static void ref(struct cache *c, uint32_t addr, uint32_t size, unsigned kind);

/* What a cache sends to the level below it, counted as Dinero counts. */
static void record_down(struct bach_sim_downs *d, uint64_t pos, uint32_t addr,
			uint32_t size, unsigned kind)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 4096;
		struct bach_sim_down *v = realloc(d->v, cap * sizeof(*v));

		if (!v) {
			d->oom = true;
			return;
		}
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = (struct bach_sim_down){ pos, addr, size, kind };
}

/* A reference of c's line size or less to d (split at its lines). */
static inline void deliver(struct cache *d, uint32_t addr, uint32_t size,
			   unsigned kind)
{
	if ((addr & (d->line - 1)) + size <= d->line)
		d->access(d, addr, size, kind); /* within one line of d */
	else
		ref(d, addr, size, kind);
}

static inline void send_down(struct cache *c, uint32_t addr, uint32_t size,
			     unsigned kind)
{
	struct cache *d = c->down;

	if (kind == BACH_REF_WRITE)
		c->st.bytes_written += size;
	else
		c->st.bytes_read += size;
	if (!d)
		return;
	if (__builtin_expect(c->rec != NULL, 0))
		record_down(c->rec, *c->now, addr, size, kind);
	deliver(d, addr, size, kind);
}

/* A miss of one line: allocate it (or not), and send down what Dinero does. */
static __attribute__((noinline)) void miss(struct cache *c, uint32_t set,
					   uint32_t base, uint32_t addr,
					   uint32_t size, unsigned kind)
{
	uint32_t block = addr >> c->lg_line, slot, old = NONE;
	bool write = kind == BACH_REF_WRITE, old_dirty = false;

	c->st.miss[kind]++;
	if (write && c->nwa) {
		send_down(c, addr, size, BACH_REF_WRITE);
		return;
	}
	slot = victim(c, set, base);
	if (c->tag[slot] != NONE) {
		old = c->tag[slot];
		old_dirty = c->dirty[slot];
		if (c->hashed) {
			hash_remove(c, old);
			if (c->repl != BACH_REPL_RANDOM)
				list_unlink(c, slot);
		}
	} else {
		c->valid++;
	}
	c->tag[slot] = block;
	if (c->repl == BACH_REPL_RANDOM)
		c->stamp[slot] = ++c->clock;
	c->dirty[slot] = write && !c->wt;
	if (c->hashed) {
		hash_insert(c, slot);
		if (c->repl != BACH_REPL_RANDOM)
			list_push(c, set, slot);
	}
	c->memo = block;
	c->memo_slot = slot;
	/* Dinero's order: the line fetch, the write-through, the old line */
	if (!write || size != c->line)
		send_down(c, block << c->lg_line, c->line,
			  write ? BACH_REF_READ : kind);
	if (write && c->wt)
		send_down(c, addr, size, BACH_REF_WRITE);
	if (old_dirty)
		send_down(c, old << c->lg_line, c->line, BACH_REF_WRITE);
}

/* One reference within one line, of a cache of ways. */
static inline __attribute__((always_inline)) void
ways_ref(struct cache *c, uint32_t addr, uint32_t size, unsigned kind)
{
	uint32_t block = addr >> c->lg_line, slot = c->memo_slot;

	c->st.fetch[kind]++;
	if (block != c->memo) {
		uint32_t set = set_of(c, block), base = set * c->assoc;

		slot = hash_find(c, block);
		if (slot == NONE) {
			miss(c, set, base, addr, size, kind);
			return;
		}
		touch(c, set, slot);
		c->memo = block;
		c->memo_slot = slot;
	}
	if (kind == BACH_REF_WRITE) {
		if (c->wt)
			send_down(c, addr, size, BACH_REF_WRITE);
		else
			c->dirty[slot] = 1;
	}
}

static void ways_access(struct cache *c, uint32_t addr, uint32_t size,
			unsigned kind)
{
	ways_ref(c, addr, size, kind);
}

/*
 * One reference within one line, of a cache of lanes whose sets have A
 * ways (the file's comment at the top says how). Dinero's order for what
 * a miss sends down: the line fetch, the write-through, the old line.
 */
/*
 * A new line (its tag word) into the set of lanes e: LRU and FIFO move
 * every line down by one, the last one out; random replacement fills the
 * first empty way, else the way it draws, and stamps the line. The line
 * that was there, or NONE.
 */
static inline __attribute__((always_inline)) uint32_t
lanes_fill(struct cache *c, uint32_t *e, uint32_t line, const uint32_t A)
{
	uint32_t old = e[A - 1];

	if (c->repl == BACH_REPL_RANDOM) {
		uint32_t base = (uint32_t)(e - c->tag), set = base / A, w;

		w = c->filled[set] < A ? c->filled[set]++ : draw(c);
		old = e[w];
		e[w] = line;
		c->stamp[base + w] = ++c->clock;
	} else {
#pragma GCC unroll 16
		for (uint32_t w = A - 1; w > 0; w--)
			e[w] = e[w - 1];
		e[0] = line;
	}
	c->valid += old == NONE;
	return old;
}

static inline __attribute__((always_inline)) void
lanes_miss_to(struct cache *c, uint32_t *e, uint32_t addr, uint32_t size,
	      unsigned kind, const uint32_t A, const bool memory)
{
	uint32_t block = addr >> c->lg_line, old;
	bool write = kind == BACH_REF_WRITE;

	c->st.miss[kind]++;
	if (memory) { /* what send_down() counts, and no call */
		if (write && c->nwa) {
			c->st.bytes_written += size;
			return;
		}
		old = lanes_fill(c, e, block | (write && !c->wt ? DIRTY : 0),
				 A);
		if (!write || size != c->line)
			c->st.bytes_read += c->line;
		if (write && c->wt)
			c->st.bytes_written += size;
		if (old != NONE && (old & DIRTY))
			c->st.bytes_written += c->line;
		return;
	}
	if (write && c->nwa) {
		send_down(c, addr, size, BACH_REF_WRITE);
		return;
	}
	old = lanes_fill(c, e, block | (write && !c->wt ? DIRTY : 0), A);
	if (!write || size != c->line)
		send_down(c, block << c->lg_line, c->line,
			  write ? BACH_REF_READ : kind);
	if (write && c->wt)
		send_down(c, addr, size, BACH_REF_WRITE);
	if (old != NONE && (old & DIRTY))
		send_down(c, (old & ~DIRTY) << c->lg_line, c->line,
			  BACH_REF_WRITE);
}

/* A hit in the set of lanes e, way pos. */
static inline __attribute__((always_inline)) void
lanes_hit(struct cache *c, uint32_t *e, uint32_t pos, uint32_t addr,
	  uint32_t size, unsigned kind, const uint32_t A)
{
	if (c->repl == BACH_REPL_LRU && pos) { /* the line to the front */
		uint32_t v = e[pos];

		if (A <= 8) { /* unrolled, ways 1 to pos, without a branch */
#pragma GCC unroll 8
			for (uint32_t w = A - 1; w > 0; w--)
				e[w] ^= (e[w] ^ e[w - 1]) &
					-(uint32_t)(w <= pos);
		} else {
			for (uint32_t w = pos; w > 0; w--)
				e[w] = e[w - 1];
		}
		e[0] = v;
		pos = 0;
	}
	if (kind == BACH_REF_WRITE) {
		if (c->wt)
			send_down(c, addr, size, BACH_REF_WRITE);
		else
			e[pos] |= DIRTY;
	}
}

/* four ways at a time (GCC's and clang's vectors, on any target) */
typedef uint32_t lane4 __attribute__((vector_size(16)));

/*
 * The way of a set of lanes (A ways from e) that holds block, or A. The
 * first way first, as the line used last (LRU) is most often used next;
 * then the others without a branch: the ways that hold it (one at most)
 * give their number + 1, ORed, the others 0.
 */
static inline __attribute__((always_inline)) uint32_t
lanes_search(const uint32_t *e, uint32_t block, const uint32_t A)
{
	uint32_t key = block | DIRTY, r = 0;

	if ((e[0] | DIRTY) == key)
		return 0;

	if (A % 4 == 0) {
		lane4 acc = { 0, 0, 0, 0 };

#pragma GCC unroll 4
		for (uint32_t w = 0; w < A; w += 4) {
			lane4 x, one = { w + 1, w + 2, w + 3, w + 4 };

			memcpy(&x, e + w, sizeof(x));
			acc |= (lane4)((x | DIRTY) == key) & one;
		}
		r = acc[0] | acc[1] | acc[2] | acc[3];
	} else {
#pragma GCC unroll 16
		for (uint32_t w = 0; w < A; w++)
			r |= -(uint32_t)((e[w] | DIRTY) == key) & (w + 1);
	}
	return r ? r - 1 : A;
}

/*
 * For each A, lanes_A, the access_fn of a cache of lanes with A ways
 * (any: c->assoc), and lanes_miss_A, its miss kept out of line so that
 * bach_sim_add_refs() can take the hit in line: lanes_leaf_A with memory
 * below (it calls nothing, so saves no registers), else lanes_down_A.
 */
#define LANES(A, assoc)                                                        \
	static __attribute__((noinline)) void lanes_leaf_##A(                  \
		struct cache *c, uint32_t *e, uint32_t addr, uint32_t size,    \
		unsigned kind)                                                 \
	{                                                                      \
		lanes_miss_to(c, e, addr, size, kind, assoc, true);            \
	}                                                                      \
	static __attribute__((noinline)) void lanes_down_##A(                  \
		struct cache *c, uint32_t *e, uint32_t addr, uint32_t size,    \
		unsigned kind)                                                 \
	{                                                                      \
		lanes_miss_to(c, e, addr, size, kind, assoc, false);           \
	}                                                                      \
	static inline void lanes_miss_##A(struct cache *c, uint32_t *e,        \
					  uint32_t addr, uint32_t size,        \
					  unsigned kind)                       \
	{                                                                      \
		if (c->down)                                                   \
			lanes_down_##A(c, e, addr, size, kind);                \
		else                                                           \
			lanes_leaf_##A(c, e, addr, size, kind);                \
	}                                                                      \
	static void lanes_##A(struct cache *c, uint32_t addr, uint32_t size,   \
			      unsigned kind)                                   \
	{                                                                      \
		uint32_t block = addr >> c->lg_line, pos,                      \
			 *e = c->tag + (size_t)set_of(c, block) * (assoc);     \
                                                                               \
		c->st.fetch[kind]++;                                           \
		pos = lanes_search(e, block, assoc);                           \
		if (pos == (assoc))                                            \
			lanes_miss_##A(c, e, addr, size, kind);                \
		else                                                           \
			lanes_hit(c, e, pos, addr, size, kind, assoc);         \
	}
#define LANES_OF(A) LANES(A, A)
LANE_COUNTS(LANES_OF)
LANES(any, c->assoc)

/* A reference of any size: split at line boundaries (multi-block). */
static void ref(struct cache *c, uint32_t addr, uint32_t size, unsigned kind)
{
	while ((addr >> c->lg_line) != ((addr + size - 1) >> c->lg_line)) {
		uint32_t piece = c->line - (addr & (c->line - 1));

		c->st.multiblock++;
		c->access(c, addr, piece, kind);
		addr += piece;
		size -= piece;
	}
	c->access(c, addr, size, kind);
}

static int by_stamp(const void *a, const void *b, void *arg)
{
	const uint64_t *stamp = arg;
	uint64_t x = stamp[*(const uint32_t *)a],
		 y = stamp[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

/*
 * Copy back every dirty line, then the levels below. Dinero stacks the
 * write-backs set by set, each set most recent line first, and then
 * sends them from the top of that stack: the last set first, each set
 * from its least recent line.
 */
/* A line's number, whether it is dirty, and its cleaning, in any layout. */
static inline uint32_t line_tag(const struct cache *c, uint32_t slot)
{
	return c->lanes ? c->tag[slot] & ~DIRTY : c->tag[slot];
}

static inline uint32_t line_dirty(const struct cache *c, uint32_t slot)
{
	return c->lanes ? c->tag[slot] >> 31 : c->dirty[slot];
}

static inline void line_clean(struct cache *c, uint32_t slot)
{
	if (c->lanes)
		c->tag[slot] &= ~DIRTY;
	else
		c->dirty[slot] = 0;
}

static void copyback(struct cache *c)
{
	uint32_t *order = c->order;

	for (uint32_t set = c->nsets; c->valid && set-- > 0;) {
		uint32_t n = 0, base = set * c->assoc;

		if (c->lanes && c->repl != BACH_REPL_RANDOM) { /* oldest last */
			for (uint32_t *e = c->tag + base, w = c->assoc;
			     w-- > 0;)
				if (e[w] != NONE && (e[w] & DIRTY)) {
					e[w] &= ~DIRTY;
					send_down(c, e[w] << c->lg_line,
						  c->line, BACH_REF_WRITE);
				}
			continue;
		}
		if (c->repl != BACH_REPL_RANDOM) { /* hashed: its list */
			for (uint32_t slot = c->prev[list_end(c, set)];
			     slot != list_end(c, set); slot = c->prev[slot])
				if (c->dirty[slot]) {
					c->dirty[slot] = 0;
					send_down(c, c->tag[slot] << c->lg_line,
						  c->line, BACH_REF_WRITE);
				}
			continue;
		}
		for (uint32_t w = 0; w < c->filled[set]; w++)
			if (line_dirty(c, base + w))
				order[n++] = base + w;
		qsort_r(order, n, sizeof(*order), by_stamp, c->stamp);
		for (uint32_t i = 0; i < n; i++) {
			line_clean(c, order[i]);
			send_down(c, line_tag(c, order[i]) << c->lg_line,
				  c->line, BACH_REF_WRITE);
		}
	}
	if (c->down)
		copyback(c->down);
}

static void flush(struct bach_sim *s)
{
	copyback(s->data_top);
	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		if (s->have[i])
			invalidate(&s->c[i]);
	s->t.flushes++;
	if (s->data_top->rec) /* after what the L1's copy-back sent */
		record_down(s->data_top->rec, s->pos, 0, 0, BACH_SIM_GAP);
}

/* ---- the hierarchy ------------------------------------------------------ */

int bach_sim_new(struct bach_sim **sp, const struct bach_sim_config *cfg,
		 char *why, size_t whylen)
{
	const bool *have = cfg->have;
	struct bach_sim *s;
	struct cache *below = NULL;

	*sp = NULL;
	if (have[BACH_SIM_L1I] != have[BACH_SIM_L1D])
		return bach_why(why, whylen, "--l1i and --l1d go together");
	if (have[BACH_SIM_L1] && have[BACH_SIM_L1I])
		return bach_why(
			why, whylen,
			"--l1 is a unified L1: not with --l1i and --l1d");
	if (!have[BACH_SIM_L1] && !have[BACH_SIM_L1I])
		return bach_why(
			why, whylen,
			"no L1: give --l1 SPEC, or --l1i SPEC and --l1d SPEC");
	if (have[BACH_SIM_L3] && !have[BACH_SIM_L2])
		return bach_why(why, whylen, "--l3 needs --l2");
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s->have, have, sizeof(s->have));
	/* bottom up, so that each level knows the one below */
	for (int i = BACH_SIM_NCACHES; i-- > 0;) {
		struct cache *c = &s->c[i];

		if (!have[i])
			continue;
		if (cache_init(c, &cfg->spec[i],
			       i == BACH_SIM_TLB ? NULL : below,
			       cfg->seed * 8 + (uint64_t)i)) {
			bach_sim_free(s);
			return -ENOMEM;
		}
		c->now = &s->pos;
		if (i == BACH_SIM_L2 || i == BACH_SIM_L3)
			below = c;
	}
	if (have[BACH_SIM_L1]) {
		s->top[BACH_REF_IFETCH] = &s->c[BACH_SIM_L1];
		s->data_top = &s->c[BACH_SIM_L1];
	} else {
		s->top[BACH_REF_IFETCH] = &s->c[BACH_SIM_L1I];
		s->data_top = &s->c[BACH_SIM_L1D];
	}
	s->top[BACH_REF_READ] = s->top[BACH_REF_WRITE] = s->data_top;
	s->tlb = have[BACH_SIM_TLB] ? &s->c[BACH_SIM_TLB] : NULL;
	{
		const struct cache *i = s->top[BACH_REF_IFETCH],
				   *d = s->data_top;
		uint32_t a = i->assoc;

		if (i->lanes && d->lanes && a == d->assoc) {
#define L1_LANES(A)                                                            \
	if (a == (A))                                                          \
		s->l1_lanes = A;
			LANE_COUNTS(L1_LANES)
		}
	}
	*sp = s;
	return 0;
}

void bach_sim_free(struct bach_sim *s)
{
	if (!s)
		return;
	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		cache_free(&s->c[i]);
	free(s);
}

void bach_sim_refs(struct bach_sim_ref *r, const uint8_t *p, size_t n,
		   uint64_t base, const uint32_t *off)
{
	for (size_t i = 0; i < n; i++, p += BACH_REC_SIZE) {
		unsigned kind = bach_ref_kind(p[5]), size;

		r[i].pos = base + (off ? off[i] : i);
		r[i].addr = bach_ref_span(p, &size);
		r[i].size = (uint8_t)size;
		if (__builtin_expect(kind == BACH_REF_NONE, 0) &&
		    bach_rec_is_gap(p))
			kind = BACH_SIM_GAP;
		r[i].kind = (uint8_t)kind;
		r[i].more = 0;
	}
}

#define NO_RUN 256u /* no kind */

size_t bach_sim_collapse(struct bach_sim_ref *out, const struct bach_sim_ref *r,
			 size_t n, unsigned lg)
{
	size_t k = 0;
	uint32_t block = 0;
	unsigned fk = NO_RUN; /* the kind of the run's next ones */

	for (size_t i = 0; i < n; i++) {
		const struct bach_sim_ref *x = &r[i];
		uint32_t b = x->addr >> lg;

		if (x->kind == fk && b == block &&
		    (x->addr + x->size - 1) >> lg == b && i + 1 < n &&
		    out[k - 1].more < UINT16_MAX) {
			out[k - 1].more++;
			continue;
		}
		out[k++] = *x;
		block = b;
		fk = NO_RUN;
		if (x->kind < BACH_REF_NKINDS &&
		    (x->addr + x->size - 1) >> lg == b)
			fk = x->kind == BACH_REF_IFETCH ? BACH_REF_IFETCH
							: BACH_REF_READ;
	}
	return k;
}

int bach_sim_collapse_lg(const struct bach_sim *s)
{
	unsigned lg = 31;

	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		const struct cache *c = &s->c[i];

		if (!s->have[i])
			continue;
		if ((i <= BACH_SIM_L1 || i == BACH_SIM_TLB) && c->nwa)
			return -1; /* a write miss leaves the line out */
		if ((i <= BACH_SIM_L1 || i == BACH_SIM_TLB) && c->lg_line < lg)
			lg = c->lg_line; /* a TLB's lines are its pages */
	}
	return (int)lg;
}

/*
 * A reference to the TLB, which remembers the page it served last: most
 * references are to that page, a hit that changes nothing but the counts
 * and, for a write, the dirty bit (under LRU, that page is the first
 * line of its set when the TLB is of lanes; a TLB of ways remembers it
 * itself).
 */
static inline void tlb_access(struct cache *tlb, uint32_t addr, unsigned kind)
{
	uint32_t page = addr & ~(BACH_TLB_PAGE - 1),
		 block = page >> tlb->lg_line;

	if (block == tlb->memo) {
		tlb->st.fetch[kind]++;
		if (kind == BACH_REF_WRITE) {
			if (tlb->wt)
				send_down(tlb, page, 1, BACH_REF_WRITE);
			else if (tlb->lanes)
				tlb->tag[tlb->memo_slot] |= DIRTY;
			else
				tlb->dirty[tlb->memo_slot] = 1;
		}
		return;
	}
	tlb->access(tlb, page, 1, kind);
	if (tlb->lanes && tlb->repl == BACH_REPL_LRU &&
	    !(kind == BACH_REF_WRITE && tlb->nwa)) {
		tlb->memo = block;
		tlb->memo_slot = set_of(tlb, block) * tlb->assoc;
	}
}

/* The miss of a cache of lanes with A ways, for a constant A. */
static inline __attribute__((always_inline)) void
lanes_miss_of(struct cache *c, uint32_t *e, uint32_t addr, uint32_t size,
	      unsigned kind, const uint32_t A)
{
	switch (A) {
#define MISS_OF(N)                                                             \
	case N:                                                                \
		lanes_miss_##N(c, e, addr, size, kind);                        \
		break;
		LANE_COUNTS(MISS_OF)
	default:
		__builtin_unreachable(); /* A is one of LANE_COUNTS */
	}
}

/*
 * The references r[0..n) to s, whose L1 (unified, or both halves) is of
 * lanes with A ways, A 1, 2, 4, 8 or 16; A 0: any L1. A reference within
 * one line of that L1 takes its search and a hit in line.
 */
static inline __attribute__((always_inline)) void
add_refs(struct bach_sim *s, const struct bach_sim_ref *r, size_t n,
	 const uint32_t A, const bool runs)
{
	struct cache *tlb = s->tlb;
	uint64_t refs = 0, more = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned kind = r[i].kind, size = r[i].size;
		uint32_t addr = r[i].addr;
		struct cache *c;

		s->pos = r[i].pos;
		if (__builtin_expect(kind >= BACH_REF_NKINDS, 0)) {
			if (kind == BACH_SIM_GAP)
				flush(s);
			else
				s->t.skipped++;
			continue;
		}
		refs++;
		if (tlb)
			tlb_access(tlb, addr, kind);
		c = s->top[kind];
		if (runs) { /* a run's next ones (bach_sim_collapse()): hits */
			unsigned fk =
				kind == BACH_REF_WRITE ? BACH_REF_READ : kind;

			refs += r[i].more;
			more += r[i].more;
			c->st.fetch[fk] += r[i].more;
			if (tlb)
				tlb->st.fetch[fk] += r[i].more;
		}
		if (__builtin_expect((addr & (c->line - 1)) + size > c->line,
				     0)) {
			ref(c, addr, size, kind);
		} else if (A) {
			uint32_t block = addr >> c->lg_line, pos,
				 *e = c->tag + (size_t)set_of(c, block) * A;

			c->st.fetch[kind]++;
			pos = lanes_search(e, block, A);
			if (pos == A)
				lanes_miss_of(c, e, addr, size, kind, A);
			else
				lanes_hit(c, e, pos, addr, size, kind, A);
		} else {
			if (c->lanes)
				c->access(c, addr, size, kind);
			else /* an L1 of ways: in line */
				ways_ref(c, addr, size, kind);
		}
	}
	s->t.records += n + more;
	s->t.refs += refs;
}

/* add_refs() for s's L1, the entries runs or not */
static inline __attribute__((always_inline)) void
add_any(struct bach_sim *s, const struct bach_sim_ref *r, size_t n,
	const bool runs)
{
	switch (s->l1_lanes) {
#define ADD_REFS_OF(A)                                                         \
	case A:                                                                \
		add_refs(s, r, n, A, runs);                                    \
		break;
		LANE_COUNTS(ADD_REFS_OF)
	default:
		add_refs(s, r, n, 0, runs);
		break;
	}
}

void bach_sim_add_refs(struct bach_sim *s, const struct bach_sim_ref *r,
		       size_t n)
{
	add_any(s, r, n, false);
}

void bach_sim_add_runs(struct bach_sim *s, const struct bach_sim_ref *r,
		       size_t n)
{
	add_any(s, r, n, true);
}

void bach_sim_add_at(struct bach_sim *s, const uint8_t *p, size_t n,
		     uint64_t base, const uint32_t *off)
{
	struct bach_sim_ref r[1024];

	for (size_t i = 0; i < n;) {
		size_t k = n - i < 1024 ? n - i : 1024;

		bach_sim_refs(r, p, k, off ? base : base + i,
			      off ? off + i : NULL);
		bach_sim_add_refs(s, r, k);
		p += k * BACH_REC_SIZE;
		i += k;
	}
}

void bach_sim_add(struct bach_sim *s, const uint8_t *p, size_t n)
{
	bach_sim_add_at(s, p, n, s->next, NULL);
	s->next += n;
}

void bach_sim_finish(struct bach_sim *s)
{
	if (s->finished)
		return;
	s->finished = true;
	copyback(s->data_top);
}

const struct bach_cache_stats *bach_sim_stats(const struct bach_sim *s,
					      enum bach_sim_cache c)
{
	return (unsigned)c < BACH_SIM_NCACHES && s->have[c] ? &s->c[c].st
							    : NULL;
}

void bach_sim_get_totals(const struct bach_sim *s, struct bach_sim_totals *t)
{
	*t = s->t;
}

/* ---- state, for split runs ---------------------------------------------- */

void bach_sim_get_counts(const struct bach_sim *s, struct bach_sim_counts *c)
{
	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		c->st[i] = s->c[i].st;
	c->t = s->t;
}

void bach_sim_set_counts(struct bach_sim *s, const struct bach_sim_counts *c)
{
	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		s->c[i].st =
			s->have[i] ? c->st[i] : (struct bach_cache_stats){ 0 };
	s->t = c->t;
}

void bach_sim_counts_add(struct bach_sim_counts *a,
			 const struct bach_sim_counts *b,
			 const struct bach_sim_counts *c)
{
	_Static_assert(sizeof(*a) % sizeof(uint64_t) == 0,
		       "counts are 64-bit words");
	uint64_t *x = (uint64_t *)a;
	const uint64_t *y = (const uint64_t *)b, *z = (const uint64_t *)c;

	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		x[i] += y[i] - z[i];
}

uint64_t bach_sim_ways(const struct bach_sim *s)
{
	uint64_t n = 0;

	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		if (s->have[i])
			n += (uint64_t)s->c[i].nsets * s->c[i].assoc;
	return n;
}

static inline uint32_t flags_of(const struct cache *c, uint32_t slot,
				uint32_t rank)
{
	return rank << 1 | line_dirty(c, slot);
}

/* The lines set holds (they fill its ways in order, lanes too). */
static uint32_t set_filled(const struct cache *c, uint32_t set)
{
	const uint32_t *e = c->tag + (size_t)set * c->assoc;
	uint32_t n = 0;

	if (!c->lanes)
		return c->filled[set];
	while (n < c->assoc && e[n] != NONE)
		n++;
	return n;
}

/*
 * The pairs TAG, FLAGS of a set's lines into out (2 x filled words), in
 * the order bach_sim_state_get() says; uses c->order.
 */
static void set_words(struct cache *c, uint32_t set, uint32_t *out)
{
	uint32_t n = set_filled(c, set), base = set * c->assoc, *o = c->order;

	if (c->lanes && c->repl != BACH_REPL_RANDOM) { /* oldest last */
		for (uint32_t r = 0; r < n; r++) {
			uint32_t x = c->tag[base + n - 1 - r];

			out[2 * r] = x & ~DIRTY;
			out[2 * r + 1] = r << 1 | x >> 31;
		}
		return;
	}
	if (c->hashed && c->repl != BACH_REPL_RANDOM) {
		uint32_t r = 0;

		for (uint32_t slot = c->prev[list_end(c, set)];
		     slot != list_end(c, set); slot = c->prev[slot], r++) {
			out[2 * r] = c->tag[slot];
			out[2 * r + 1] = flags_of(c, slot, r);
		}
		return;
	}
	for (uint32_t w = 0; w < n; w++)
		o[w] = base + w;
	if (c->hashed) {
		qsort_r(o, n, sizeof(*o), by_stamp, c->stamp);
	} else { /* at most SMALL_ASSOC: by insertion */
		for (uint32_t i = 1; i < n; i++)
			for (uint32_t j = i;
			     j > 0 && c->stamp[o[j]] < c->stamp[o[j - 1]];
			     j--) {
				uint32_t t = o[j];

				o[j] = o[j - 1];
				o[j - 1] = t;
			}
	}
	/* o: the slots oldest first */
	for (uint32_t r = 0; r < n; r++) {
		uint32_t at = c->repl == BACH_REPL_RANDOM ? o[r] - base : r;

		out[2 * at] = line_tag(c, o[r]);
		out[2 * at + 1] = flags_of(c, o[r], r);
	}
}

int bach_sim_state_get(const struct bach_sim *s, enum bach_sim_cache ci,
		       uint32_t **wp, size_t *np)
{
	struct cache *c = (struct cache *)&s->c[ci];
	size_t n = 0, cap = 0;
	uint32_t *w = NULL;

	*wp = NULL;
	*np = 0;
	if ((unsigned)ci >= BACH_SIM_NCACHES || !s->have[ci] || !c->valid)
		return 0;
	/* SET and N for each set holding lines, at most valid of them */
	cap = 2 * (size_t)c->valid +
	      2 * (c->nsets < c->valid ? (size_t)c->nsets : (size_t)c->valid);
	w = malloc(cap * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (uint32_t set = 0; set < c->nsets; set++) {
		uint32_t k = set_filled(c, set);

		if (!k)
			continue;
		w[n] = set;
		w[n + 1] = k;
		set_words(c, set, w + n + 2);
		n += 2 + 2 * (size_t)k;
	}
	*wp = w;
	*np = n;
	return 0;
}

/* Whether the set of lanes from slot base holds block. */
static bool lanes_find(const struct cache *c, uint32_t base, uint32_t block)
{
	for (uint32_t w = 0; w < c->assoc; w++)
		if ((c->tag[base + w] | DIRTY) == (block | DIRTY))
			return true;
	return false;
}

static int bad_word(char *why, size_t len, size_t at, const char *what)
{
	snprintf(why, len, "word %zu: %s", at, what);
	return -EBADMSG;
}

int bach_sim_state_set(struct bach_sim *s, enum bach_sim_cache ci,
		       const uint32_t *w, size_t n, char *why, size_t whylen)
{
	struct cache *c = &s->c[ci];
	uint32_t maxtag;
	size_t i = 0;
	int64_t last = -1;

	if ((unsigned)ci >= BACH_SIM_NCACHES || !s->have[ci])
		return n ? bad_word(why, whylen, 0, "a cache not configured")
			 : 0;
	c->valid = 1; /* invalidate() everything */
	invalidate(c);
	c->clock = 0;
	maxtag = UINT32_MAX >> c->lg_line;
	while (i < n) {
		uint32_t set, cnt, base;

		if (n - i < 2)
			return bad_word(why, whylen, i, "a set cut short");
		set = w[i];
		cnt = w[i + 1];
		if (set >= c->nsets || (int64_t)set <= last)
			return bad_word(why, whylen, i,
					"not a set after the one before");
		if (!cnt || cnt > c->assoc || (n - i - 2) / 2 < cnt)
			return bad_word(why, whylen, i + 1,
					"not a count of the set's lines");
		last = set;
		base = set * c->assoc;
		i += 2;
		for (uint32_t r = 0; r < cnt; r++)
			c->order[r] = NONE;
		for (uint32_t j = 0; j < cnt; j++, i += 2) {
			uint32_t tag = w[i], rank = w[i + 1] >> 1,
				 slot = base + j;
			bool dirty = w[i + 1] & 1;

			if (tag > maxtag || set_of(c, tag) != set)
				return bad_word(why, whylen, i,
						"a line not of this set");
			if (rank >= cnt || c->order[rank] != NONE ||
			    (c->repl != BACH_REPL_RANDOM && rank != j))
				return bad_word(why, whylen, i + 1,
						"not the line's rank");
			if (dirty && c->wt)
				return bad_word(
					why, whylen, i + 1,
					"dirty in a cache that keeps no dirty line");
			if (c->lanes ? lanes_find(c, base, tag)
				     : hash_find(c, tag) != NONE)
				return bad_word(why, whylen, i,
						"a line given twice");
			c->order[rank] = slot;
			if (c->lanes && c->repl != BACH_REPL_RANDOM) {
				/* in order, the oldest line last */
				c->tag[base + cnt - 1 - j] =
					tag | (dirty ? DIRTY : 0);
				continue;
			}
			c->tag[slot] = tag | (c->lanes && dirty ? DIRTY : 0);
			if (!c->lanes)
				c->dirty[slot] = dirty;
			if (c->repl == BACH_REPL_RANDOM)
				c->stamp[slot] = rank + 1;
			if (c->hashed)
				hash_insert(c, slot);
		}
		c->valid += cnt;
		if (c->lanes && c->repl != BACH_REPL_RANDOM)
			continue;
		if (c->hashed && c->repl != BACH_REPL_RANDOM)
			for (uint32_t r = 0; r < cnt; r++)
				list_push(c, set, c->order[r]);
		c->filled[set] = cnt;
		if (c->clock < cnt)
			c->clock = cnt;
	}
	return 0;
}

/* the sets of a and b (caches of one configuration) hold the same */
static bool same_cache(struct cache *a, struct cache *b)
{
	uint32_t wa[4 * SMALL_ASSOC], *wb = wa + 2 * SMALL_ASSOC;

	if (a->valid != b->valid)
		return false;
	if (!a->valid)
		return true;
	if (a->lanes && a->repl != BACH_REPL_RANDOM) /* in order, dirty bits */
		return !memcmp(a->tag, b->tag,
			       (size_t)a->nsets * a->assoc * sizeof(*a->tag));
	if (memcmp(a->filled, b->filled, a->nsets * sizeof(*a->filled)))
		return false;
	for (uint32_t set = 0; set < a->nsets; set++) {
		uint32_t n = a->filled[set], base = set * a->assoc;

		if (!n)
			continue;
		if (!a->hashed) {
			set_words(a, set, wa);
			set_words(b, set, wb);
			if (memcmp(wa, wb, 2 * n * sizeof(*wa)))
				return false;
		} else if (a->repl != BACH_REPL_RANDOM) {
			uint32_t x = a->next[list_end(a, set)],
				 y = b->next[list_end(b, set)];

			for (; x != list_end(a, set);
			     x = a->next[x], y = b->next[y])
				if (a->tag[x] != b->tag[y] ||
				    flags_of(a, x, 0) != flags_of(b, y, 0))
					return false;
		} else {
			uint32_t *o = a->order;

			for (uint32_t w = base; w < base + n; w++)
				if (a->tag[w] != b->tag[w] ||
				    flags_of(a, w, 0) != flags_of(b, w, 0))
					return false;
			for (uint32_t w = 0; w < n; w++)
				o[w] = base + w;
			qsort_r(o, n, sizeof(*o), by_stamp, a->stamp);
			for (uint32_t r = 1; r < n; r++)
				if (b->stamp[o[r]] < b->stamp[o[r - 1]])
					return false;
		}
	}
	return true;
}

uint64_t bach_sim_last_get(const struct bach_sim *s,
			   uint64_t draws[BACH_SIM_NCACHES])
{
	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		draws[i] = s->have[i] && s->c[i].draw_at == s->pos
				   ? s->c[i].draws
				   : 0;
	return s->pos;
}

void bach_sim_last_set(struct bach_sim *s, uint64_t pos,
		       const uint64_t draws[BACH_SIM_NCACHES])
{
	s->pos = pos;
	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		s->c[i].draw_at = draws[i] ? pos : UINT64_MAX;
		s->c[i].draws = draws[i];
	}
}

/* ---- a configuration whose L1 is another's ----------------------------- */

static bool l1_cache(int i)
{
	return i == BACH_SIM_L1I || i == BACH_SIM_L1D || i == BACH_SIM_L1;
}

bool bach_sim_same_l1(const struct bach_sim *a, const struct bach_sim *b)
{
	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		const struct cache *x = &a->c[i], *y = &b->c[i];

		if (!l1_cache(i) || (!a->have[i] && !b->have[i]))
			continue;
		if (a->have[i] != b->have[i] || x->lg_line != y->lg_line ||
		    x->nsets != y->nsets || x->assoc != y->assoc ||
		    x->repl != y->repl || x->wt != y->wt || x->nwa != y->nwa ||
		    (x->repl == BACH_REPL_RANDOM && x->key != y->key))
			return false;
	}
	return true;
}

void bach_sim_add_tlb(struct bach_sim *s, const struct bach_sim_ref *r,
		      size_t n)
{
	struct cache *tlb = s->tlb;

	for (size_t i = 0; tlb && i < n; i++) {
		unsigned kind = r[i].kind;

		s->pos = r[i].pos;
		if (kind == BACH_SIM_GAP)
			invalidate(tlb); /* as flush() does */
		if (kind >= BACH_REF_NKINDS)
			continue;
		tlb_access(tlb, r[i].addr, kind);
		tlb->st.fetch[kind == BACH_REF_WRITE ? BACH_REF_READ : kind] +=
			r[i].more;
	}
}

int bach_sim_adopt_l1(struct bach_sim *s, const struct bach_sim *from)
{
	uint64_t draws[BACH_SIM_NCACHES];
	uint64_t pos = bach_sim_last_get(from, draws);

	for (int i = 0; i < BACH_SIM_NCACHES; i++) {
		uint32_t *w;
		size_t n;
		int err;

		if (!l1_cache(i) || !s->have[i])
			continue;
		err = bach_sim_state_get(from, (enum bach_sim_cache)i, &w, &n);
		if (!err)
			err = bach_sim_state_set(s, (enum bach_sim_cache)i, w,
						 n, NULL, 0);
		free(w);
		if (err)
			return err;
		s->c[i].st = from->c[i].st;
		s->c[i].draw_at = draws[i] ? pos : UINT64_MAX;
		s->c[i].draws = draws[i];
	}
	s->t = from->t;
	s->pos = pos;
	return 0;
}

void bach_sim_record(struct bach_sim *s, struct bach_sim_downs *d)
{
	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		if (l1_cache(i))
			s->c[i].rec = d;
}

void bach_sim_add_below(struct bach_sim *s, const struct bach_sim_down *d,
			size_t n)
{
	struct cache *l2 = &s->c[BACH_SIM_L2];

	for (size_t i = 0; s->have[BACH_SIM_L2] && i < n; i++) {
		s->pos = d[i].pos;
		if (d[i].kind == BACH_SIM_GAP) { /* flush() below the L1 */
			copyback(l2);
			for (int c = BACH_SIM_L2; c <= BACH_SIM_L3; c++)
				if (s->have[c])
					invalidate(&s->c[c]);
			continue;
		}
		deliver(l2, d[i].addr, d[i].size, d[i].kind);
	}
}

bool bach_sim_same_state(struct bach_sim *a, struct bach_sim *b)
{
	for (int i = 0; i < BACH_SIM_NCACHES; i++)
		if (a->have[i] != b->have[i] ||
		    (a->have[i] && !same_cache(&a->c[i], &b->c[i])))
			return false;
	return true;
}
