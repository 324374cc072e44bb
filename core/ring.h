/* SPDX-License-Identifier: MIT */
/*
 * The ring between acquisition and disk: a preallocated single-producer,
 * single-consumer ring of record blocks. A block holds up to
 * RING_BLOCK_RECS records (exactly one blocked-gzip member's input) and the
 * events that happened at positions inside it. The producer (acquisition
 * thread) fills and publishes blocks; the consumer (writer thread) takes
 * and releases them in order. Locks are taken once per block.
 */
#ifndef BACHD_RING_H
#define BACHD_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RING_BLOCK_RECS 10880 /* 65280 bytes: BACH_BGZF_MAX_INPUT */
#define RING_MAX_EVENTS 32

enum ring_event_kind {
	RING_EV_GAP,   /* a = records lost, b = cause, c = gap
			  markers put after it, d = source index
			  of the next real record after it */
	RING_EV_STALL, /* a = first start ns, b = last end ns,
			  c = ns held, d = stalls merged */
	RING_EV_DEVICE_LOST,
	RING_EV_DEVICE_BACK,
	RING_EV_BOARD_STALL, /* a = episodes, b = bus clocks held */
	RING_EV_MARK,	     /* a = the driver's struct bach_source_mark,
				d = the source index where it stands */
};

struct ring_event {
	uint32_t at; /* record offset in the block */
	uint32_t kind;
	uint64_t a, b, c, d;
};

/*
 * A block's clocks as steps, 2 bytes a record where the clock moves by
 * less than 65535 (the board's deltas as they come): entry i is entry
 * i - 1 plus step[i] (mod 2^64; BACH_TIME_NONE before entry 0), or, where
 * step[i] is RING_TIME_ESCAPE, the next of esc. An escape is where the
 * step is 65535 or more, and where the entries go from BACH_TIME_NONE to
 * a clock or back (bach_time_writer_steps(), lib/io/timing.h). A block
 * whose escapes are all taken is published as it is (a block's worth of
 * clocks that jump would otherwise need 8 bytes a record).
 */
#define RING_TIME_ESCAPE  0xffff
#define RING_TIME_ESC_MAX (RING_BLOCK_RECS / 8)
struct ring_times {
	uint64_t prev; /* the last entry put */
	uint32_t nesc;
	uint16_t step[RING_BLOCK_RECS];
	uint64_t esc[RING_TIME_ESC_MAX];
};

struct ring_block {
	uint8_t *data;
	uint32_t nrec;	   /* records in data, gap markers included */
	uint32_t nmarkers; /* of which gap markers */
	uint32_t nev;
	/*
	 * Its records' clocks (from the ring's clock buffers:
	 * ring_times_get()), or NULL while it has none.
	 */
	struct ring_times *times;
	/*
	 * Source indexes (records the source delivered, lost ones
	 * included): src0 of the first real record put in the block, src1
	 * the count when the block was published. With the gap events'
	 * anchors (c, d) they map a source index to a block offset.
	 */
	uint64_t src0, src1;
	struct ring_event ev[RING_MAX_EVENTS];
};

struct ring {
	struct ring_block *blocks;
	size_t nblocks;
	uint8_t *mem; /* every block's data, one mapping */
	size_t mem_bytes;
	bool locked;	       /* mlock()ed (RLIMIT_MEMLOCK allowed it) */
	_Atomic uint64_t head; /* next block the consumer takes */
	_Atomic uint64_t tail; /* next block the producer publishes */
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	bool closed;	/* producer finished: no more blocks */
	uint64_t taken; /* consumer only: taken, not released */
	/*
	 * Clock buffers (timing, docs/formats.md 3.2): allocated as blocks
	 * first need one, at most one a block, given back when the writer
	 * has the clocks; under mu, taken once per block.
	 */
	struct ring_times **tfree;
	size_t ntfree, ntalloc;
};

#define RING_TIMES_BYTES sizeof(struct ring_times)

/*
 * Allocate nblocks blocks, every page touched (and locked in memory where
 * RLIMIT_MEMLOCK allows). -ENOMEM when the memory is not there.
 */
int ring_init(struct ring *r, size_t nblocks);
/*
 * Memory a new allocation can have: MemAvailable, or less when this
 * process's memory cgroup (v1 or v2) leaves less room under its limit.
 */
uint64_t ring_memory_available(void);
void ring_free(struct ring *r);

/*
 * A clock buffer for a block (RING_TIMES_BYTES, contents undefined): a
 * free one, else a new one. NULL when out of memory. Any thread.
 */
struct ring_times *ring_times_get(struct ring *r);
/* Give a block's clock buffer back (NULL: nothing). Any thread. */
void ring_times_put(struct ring *r, struct ring_times *t);
/* Bytes of clock buffers allocated so far. */
size_t ring_times_bytes(struct ring *r);

/* Blocks published and not yet released. */
static inline size_t ring_fill(struct ring *r)
{
	return (size_t)(atomic_load(&r->tail) - atomic_load(&r->head));
}

/* Consumer: blocks published and not yet taken. */
static inline size_t ring_waiting(struct ring *r)
{
	return (size_t)(atomic_load(&r->tail) - atomic_load(&r->head) -
			r->taken);
}

/*
 * Producer: the block to fill (it is not visible to the consumer until
 * published); NULL when the ring is full and !wait.
 */
struct ring_block *ring_producer_block(struct ring *r, bool wait);
void ring_publish(struct ring *r);
/* No more blocks will come; wakes the consumer. */
void ring_close(struct ring *r);

/*
 * Consumer: the oldest published block, waiting at most timeout_ms (-1:
 * forever); NULL on timeout, or when the ring is closed and empty (then
 * *ended is set).
 */
struct ring_block *ring_consume(struct ring *r, int timeout_ms, bool *ended);
/* The consumer's oldest taken block may be reused. */
void ring_release(struct ring *r);

#endif
