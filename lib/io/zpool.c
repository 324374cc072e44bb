// SPDX-License-Identifier: MIT
/*
 * Ordered block compression: a ring of slots; [head, tail) are pending in
 * submission order, [take, tail) not yet taken by a worker.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "lib/io/zpool.h"

enum slot_state { SLOT_FREE, SLOT_FILLED, SLOT_DONE };

struct slot {
	const uint8_t *in;
	size_t len;
	void *tag;
	uint8_t *out; /* BACH_BGZF_MAX_BLOCK */
	size_t olen;
	enum slot_state state; /* under mu */
};

struct worker {
	struct bach_zpool *z;
	struct bach_deflater *d;
	pthread_t tid;
	bool started;
};

struct bach_zpool {
	struct slot *slots;
	size_t depth;
	uint64_t head, tail, take;
	struct worker *workers;
	int nworkers;
	struct bach_deflater *own; /* when there are no workers */
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	bool quit;
};

static struct slot *slot_at(struct bach_zpool *z, uint64_t i)
{
	return &z->slots[i % z->depth];
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct bach_zpool *z = wk->z;

	pthread_mutex_lock(&z->mu);
	for (;;) {
		struct slot *s;

		while (z->take == z->tail && !z->quit)
			pthread_cond_wait(&z->work, &z->mu);
		if (z->take == z->tail)
			break;
		s = slot_at(z, z->take++);
		pthread_mutex_unlock(&z->mu);
		s->olen = bach_bgzf_block(wk->d, s->out, s->in, s->len);
		pthread_mutex_lock(&z->mu);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&z->done);
	}
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

struct bach_zpool *bach_zpool_new(int threads, size_t depth,
				  enum bach_deflate_backend backend, int level)
{
	struct bach_zpool *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->work, NULL);
	pthread_cond_init(&z->done, NULL);
	z->depth = depth ? depth : 1;
	z->slots = calloc(z->depth, sizeof(*z->slots));
	if (!z->slots)
		goto out_free;
	for (size_t i = 0; i < z->depth; i++) {
		z->slots[i].out = malloc(BACH_BGZF_MAX_BLOCK);
		if (!z->slots[i].out)
			goto out_free;
	}
	if (threads <= 0) {
		z->own = bach_deflater_new(backend, level);
		if (!z->own)
			goto out_free;
		return z;
	}
	z->workers = calloc((size_t)threads, sizeof(*z->workers));
	if (!z->workers)
		goto out_free;
	z->nworkers = threads;
	for (int i = 0; i < threads; i++) {
		struct worker *wk = &z->workers[i];

		wk->z = z;
		wk->d = bach_deflater_new(backend, level);
		if (!wk->d || pthread_create(&wk->tid, NULL, worker_main, wk))
			goto out_free;
		wk->started = true;
	}
	return z;
out_free:
	bach_zpool_free(z);
	return NULL;
}

void bach_zpool_free(struct bach_zpool *z)
{
	if (!z)
		return;
	pthread_mutex_lock(&z->mu);
	z->quit = true;
	pthread_cond_broadcast(&z->work);
	pthread_mutex_unlock(&z->mu);
	for (int i = 0; z->workers && i < z->nworkers; i++) {
		if (z->workers[i].started)
			pthread_join(z->workers[i].tid, NULL);
		bach_deflater_free(z->workers[i].d);
	}
	free(z->workers);
	bach_deflater_free(z->own);
	for (size_t i = 0; z->slots && i < z->depth; i++)
		free(z->slots[i].out);
	free(z->slots);
	pthread_mutex_destroy(&z->mu);
	pthread_cond_destroy(&z->work);
	pthread_cond_destroy(&z->done);
	free(z);
}

size_t bach_zpool_pending(const struct bach_zpool *z)
{
	return (size_t)(z->tail - z->head);
}

size_t bach_zpool_depth(const struct bach_zpool *z)
{
	return z->depth;
}

void bach_zpool_submit(struct bach_zpool *z, const uint8_t *in, size_t len,
		       void *tag)
{
	struct slot *s = slot_at(z, z->tail);

	s->in = in;
	s->len = len;
	s->tag = tag;
	if (!z->nworkers) {
		s->olen = bach_bgzf_block(z->own, s->out, in, len);
		s->state = SLOT_DONE;
		z->tail++;
		return;
	}
	pthread_mutex_lock(&z->mu);
	s->state = SLOT_FILLED;
	z->tail++;
	pthread_cond_signal(&z->work);
	pthread_mutex_unlock(&z->mu);
}

bool bach_zpool_peek(struct bach_zpool *z, bool wait, const uint8_t **out,
		     size_t *len, void **tag)
{
	struct slot *s;
	bool ready;

	if (z->head == z->tail)
		return false;
	s = slot_at(z, z->head);
	pthread_mutex_lock(&z->mu);
	while (wait && s->state != SLOT_DONE)
		pthread_cond_wait(&z->done, &z->mu);
	ready = s->state == SLOT_DONE;
	pthread_mutex_unlock(&z->mu);
	if (!ready)
		return false;
	*out = s->out;
	*len = s->olen;
	if (tag)
		*tag = s->tag;
	return true;
}

void bach_zpool_release(struct bach_zpool *z)
{
	struct slot *s = slot_at(z, z->head);

	s->state = SLOT_FREE;
	z->head++;
}
