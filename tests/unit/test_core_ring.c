// SPDX-License-Identifier: MIT
/*
 * The ring between acquisition and disk (core/ring.h): blocks come out in
 * the order they went in, none lost or repeated, a full ring says so
 * without waiting, and the end of the producer reaches the consumer;
 * blocks' clock buffers are bounded and reused.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bach/bytes.h"
#include "ring.h"

static void in_order_and_full(void **state)
{
	struct ring r;
	struct ring_block *b;
	bool ended = false;

	(void)state;
	assert_int_equal(ring_init(&r, 4), 0);
	assert_int_equal(r.nblocks, 4);
	for (uint32_t i = 0; i < 4; i++) {
		b = ring_producer_block(&r, false);
		assert_non_null(b);
		bach_put_be32(b->data, i);
		b->nrec = i + 1;
		ring_publish(&r);
	}
	assert_int_equal(ring_fill(&r), 4);
	/* full: no block without waiting */
	assert_null(ring_producer_block(&r, false));
	for (uint32_t i = 0; i < 2; i++) {
		b = ring_consume(&r, 0, &ended);
		assert_non_null(b);
		assert_int_equal(bach_get_be32(b->data), i);
		assert_int_equal(b->nrec, i + 1);
	}
	assert_int_equal(ring_waiting(&r), 2);
	/* taken is not released: still full */
	assert_null(ring_producer_block(&r, false));
	ring_release(&r);
	assert_non_null(ring_producer_block(&r, false));
	ring_release(&r);
	assert_int_equal(ring_fill(&r), 2);
	/* nothing new within the timeout: NULL, not ended */
	(void)ring_consume(&r, 0, &ended);
	(void)ring_consume(&r, 0, &ended);
	ring_release(&r);
	ring_release(&r);
	assert_null(ring_consume(&r, 10, &ended));
	assert_false(ended);
	ring_close(&r);
	assert_null(ring_consume(&r, -1, &ended));
	assert_true(ended);
	ring_free(&r);
}

#define NBLOCKS 20000

/*
 * Clock buffers: at most one a block, reused once given back, and a
 * block released with its buffer still on it gives it back too.
 */
static void clock_buffers(void **state)
{
	struct ring r;
	struct ring_block *b;
	struct ring_times *t[3];
	bool ended;

	(void)state;
	assert_int_equal(ring_init(&r, 2), 0);
	t[0] = ring_times_get(&r);
	t[1] = ring_times_get(&r);
	assert_non_null(t[0]);
	assert_non_null(t[1]);
	assert_ptr_not_equal(t[0], t[1]);
	t[0]->step[RING_BLOCK_RECS - 1] = 1; /* the whole of it is there */
	t[0]->esc[RING_TIME_ESC_MAX - 1] = 1;
	assert_null(ring_times_get(&r)); /* no more than the blocks */
	assert_int_equal(ring_times_bytes(&r), 2 * RING_TIMES_BYTES);
	ring_times_put(&r, t[1]);
	t[2] = ring_times_get(&r);
	assert_ptr_equal(t[2], t[1]);
	/* released with its clocks on it (a discarded block) */
	b = ring_producer_block(&r, false);
	b->times = t[2];
	ring_publish(&r);
	assert_ptr_equal(ring_consume(&r, 0, &ended), b);
	ring_release(&r);
	assert_null(b->times);
	assert_ptr_equal(ring_times_get(&r), t[2]);
	ring_times_put(&r, t[2]);
	ring_times_put(&r, t[0]);
	assert_int_equal(ring_times_bytes(&r), 2 * RING_TIMES_BYTES);
	ring_free(&r); /* frees them: the sanitized pass checks */
}

static void *producer(void *arg)
{
	struct ring *r = arg;

	for (uint32_t i = 0; i < NBLOCKS; i++) {
		struct ring_block *b = ring_producer_block(r, true);

		bach_put_be32(b->data, i);
		bach_put_be32(b->data + RING_BLOCK_RECS * 6 - 4, ~i);
		b->nrec = i % RING_BLOCK_RECS;
		ring_publish(r);
	}
	ring_close(r);
	return NULL;
}

/* Two threads, a small ring: every block once, in order, whole. */
static void threads(void **state)
{
	struct ring r;
	pthread_t t;
	bool ended = false;
	uint32_t next = 0;

	(void)state;
	assert_int_equal(ring_init(&r, 3), 0);
	assert_int_equal(pthread_create(&t, NULL, producer, &r), 0);
	for (;;) {
		struct ring_block *b = ring_consume(&r, -1, &ended);

		if (!b)
			break;
		assert_int_equal(bach_get_be32(b->data), next);
		assert_int_equal(
			bach_get_be32(b->data + RING_BLOCK_RECS * 6 - 4),
			~next);
		assert_int_equal(b->nrec, next % RING_BLOCK_RECS);
		next++;
		ring_release(&r);
	}
	assert_true(ended);
	assert_int_equal(next, NBLOCKS);
	pthread_join(t, NULL);
	ring_free(&r);
}

static void memory(void **state)
{
	uint64_t avail = ring_memory_available();

	(void)state;
	/* something, and not more than the machine could have */
	assert_true(avail > (1u << 20));
	assert_true(avail < (1ull << 50));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_and_full),
		cmocka_unit_test(threads),
		cmocka_unit_test(memory),
		cmocka_unit_test(clock_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
