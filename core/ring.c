// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bach/record.h"
#include "ring.h"

int ring_init(struct ring *r, size_t nblocks)
{
	memset(r, 0, sizeof(*r));
	if (nblocks < 2)
		nblocks = 2;
	r->blocks = calloc(nblocks, sizeof(*r->blocks));
	if (!r->blocks)
		return -ENOMEM;
	r->nblocks = nblocks;
	for (size_t i = 0; i < nblocks; i++) {
		r->blocks[i].data = malloc(RING_BLOCK_RECS * BACH_REC_SIZE);
		if (!r->blocks[i].data) {
			ring_free(r);
			return -ENOMEM;
		}
		/* preallocated means touched now, not at the first stall */
		memset(r->blocks[i].data, 0, RING_BLOCK_RECS * BACH_REC_SIZE);
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->not_empty, NULL);
	pthread_cond_init(&r->not_full, NULL);
	return 0;
}

void ring_free(struct ring *r)
{
	for (size_t i = 0; r->blocks && i < r->nblocks; i++)
		free(r->blocks[i].data);
	free(r->blocks);
	r->blocks = NULL;
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->not_empty);
	pthread_cond_destroy(&r->not_full);
}

struct ring_block *ring_producer_block(struct ring *r, bool wait)
{
	uint64_t tail = atomic_load(&r->tail);

	if (tail - atomic_load(&r->head) == r->nblocks) {
		if (!wait)
			return NULL;
		pthread_mutex_lock(&r->mu);
		while (tail - atomic_load(&r->head) == r->nblocks)
			pthread_cond_wait(&r->not_full, &r->mu);
		pthread_mutex_unlock(&r->mu);
	}
	return &r->blocks[tail % r->nblocks];
}

void ring_publish(struct ring *r)
{
	pthread_mutex_lock(&r->mu);
	atomic_fetch_add(&r->tail, 1);
	pthread_cond_signal(&r->not_empty);
	pthread_mutex_unlock(&r->mu);
}

void ring_close(struct ring *r)
{
	pthread_mutex_lock(&r->mu);
	r->closed = true;
	pthread_cond_broadcast(&r->not_empty);
	pthread_mutex_unlock(&r->mu);
}

struct ring_block *ring_consume(struct ring *r, int timeout_ms, bool *ended)
{
	uint64_t next = atomic_load(&r->head) + r->taken;
	struct timespec ts;
	struct ring_block *b = NULL;

	*ended = false;
	pthread_mutex_lock(&r->mu);
	if (timeout_ms > 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += timeout_ms / 1000;
		ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
	}
	while (atomic_load(&r->tail) == next && !r->closed) {
		if (timeout_ms == 0)
			break;
		if (timeout_ms < 0)
			pthread_cond_wait(&r->not_empty, &r->mu);
		else if (pthread_cond_timedwait(&r->not_empty, &r->mu, &ts) ==
			 ETIMEDOUT)
			break;
	}
	if (atomic_load(&r->tail) != next) {
		b = &r->blocks[next % r->nblocks];
		r->taken++;
	} else if (r->closed) {
		*ended = true;
	}
	pthread_mutex_unlock(&r->mu);
	return b;
}

void ring_release(struct ring *r)
{
	pthread_mutex_lock(&r->mu);
	r->taken--;
	atomic_fetch_add(&r->head, 1);
	pthread_cond_signal(&r->not_full);
	pthread_mutex_unlock(&r->mu);
}
