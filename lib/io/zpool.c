// SPDX-License-Identifier: MIT
/*
 * Ordered block compression: a ring of slots; [head, tail) are pending in
 * submission order, [take, ready) not yet taken by a worker, [ready, tail)
 * the frame being gathered. A worker takes a whole frame: its first slot
 * says how many blocks it has, and gets the frame's bytes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <zstd.h>

#include "lib/io/zpool.h"

enum slot_state { SLOT_FREE, SLOT_FILLED, SLOT_DONE };

struct slot {
	const uint8_t *in;
	size_t len;
	void *tag;
	uint8_t *out; /* BACH_BGZF_MAX_BLOCK */
	uint8_t *big; /* a frame of several blocks: from the spares */
	size_t bigcap, olen;
	size_t nblk;	       /* a frame's first slot: its blocks; else 0 */
	enum slot_state state; /* under mu */
};

struct worker {
	struct bach_zpool *z;
	struct bach_deflater *d;
	pthread_t tid;
	bool started;
};

/*
 * A frame buffer (ZSTD_compressBound() of a frame) not in use: a frame
 * takes one and gives it back when released, so there are never more
 * than the frames in flight, whatever slots they start at.
 */
struct spare {
	uint8_t *p;
	size_t cap;
};

struct bach_zpool {
	struct slot *slots;
	size_t depth;
	uint64_t head, tail, take, ready;
	size_t fblocks; /* blocks per frame */
	struct worker *workers;
	int nworkers;
	struct bach_deflater *own; /* when there are no workers */
	/* frame buffers not in use (struct spare), under mu */
	struct spare *spares;
	size_t nspares, maxspares;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	bool quit;
};

static struct slot *slot_at(struct bach_zpool *z, uint64_t i)
{
	return &z->slots[i % z->depth];
}

/*
 * Compress the frame starting at slot first (its blocks' slots owned by
 * the caller until marked done): one block as bach_bgzf_block() does, more
 * as one zstd frame into the first slot's buffer, grown to fit.
 */
static void compress(struct bach_zpool *z, struct bach_deflater *d,
		     uint64_t first)
{
	struct slot *s = slot_at(z, first);
	struct bach_piece in[BACH_ZPOOL_MAX_FRAME];
	struct spare b = { NULL, 0 };
	size_t n = s->nblk, total = 0, cap;

	if (n == 1) {
		s->olen = bach_bgzf_block(d, s->out, s->in, s->len);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct slot *k = slot_at(z, first + i);

		in[i] = (struct bach_piece){ k->in, k->len };
		total += k->len;
	}
	cap = ZSTD_compressBound(total);
	pthread_mutex_lock(&z->mu);
	if (z->nspares)
		b = z->spares[--z->nspares];
	pthread_mutex_unlock(&z->mu);
	if (b.cap < cap) {
		uint8_t *o = realloc(b.p, cap);

		if (!o) {
			free(b.p);
			s->big = NULL;
			s->olen = 0;
			return;
		}
		b = (struct spare){ o, cap };
	}
	s->big = b.p;
	s->bigcap = b.cap;
	s->olen = bach_zstd_frame(d, b.p, b.cap, in, n);
}

/* The frame at first is compressed: its slots done (with mu held). */
static void frame_done(struct bach_zpool *z, uint64_t first, size_t n)
{
	for (size_t i = 0; i < n; i++)
		slot_at(z, first + i)->state = SLOT_DONE;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct bach_zpool *z = wk->z;

	pthread_mutex_lock(&z->mu);
	for (;;) {
		uint64_t first;
		size_t n;

		while (z->take == z->ready && !z->quit)
			pthread_cond_wait(&z->work, &z->mu);
		if (z->take == z->ready)
			break;
		first = z->take;
		n = slot_at(z, first)->nblk;
		z->take += n;
		pthread_mutex_unlock(&z->mu);
		compress(z, wk->d, first);
		pthread_mutex_lock(&z->mu);
		frame_done(z, first, n);
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
	z->fblocks = 1;
	/* the frames being compressed, plus one a worker to come back */
	z->maxspares = 2 * (size_t)(threads > 0 ? threads : 1) + 2;
	z->spares = calloc(z->maxspares, sizeof(*z->spares));
	if (!z->spares)
		goto out_free;
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
	for (size_t i = 0; z->slots && i < z->depth; i++) {
		free(z->slots[i].out);
		free(z->slots[i].big);
	}
	for (size_t i = 0; i < z->nspares; i++)
		free(z->spares[i].p);
	free(z->spares);
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

void bach_zpool_frame(struct bach_zpool *z, size_t blocks)
{
	z->fblocks = blocks < 1			     ? 1
		     : blocks > BACH_ZPOOL_MAX_FRAME ? BACH_ZPOOL_MAX_FRAME
						     : blocks;
}

bool bach_zpool_gathering_none(const struct bach_zpool *z)
{
	return z->tail == z->ready;
}

void bach_zpool_end_frame(struct bach_zpool *z)
{
	uint64_t first = z->ready;
	size_t n = (size_t)(z->tail - first);

	if (!n)
		return;
	slot_at(z, first)->nblk = n;
	if (!z->nworkers) {
		z->ready = z->take = z->tail;
		compress(z, z->own, first);
		frame_done(z, first, n);
		return;
	}
	pthread_mutex_lock(&z->mu);
	z->ready = z->tail;
	pthread_cond_signal(&z->work);
	pthread_mutex_unlock(&z->mu);
}

void bach_zpool_submit(struct bach_zpool *z, const uint8_t *in, size_t len,
		       void *tag)
{
	struct slot *s = slot_at(z, z->tail);

	s->in = in;
	s->len = len;
	s->tag = tag;
	s->nblk = 0;
	pthread_mutex_lock(&z->mu);
	s->state = SLOT_FILLED;
	z->tail++;
	pthread_mutex_unlock(&z->mu);
	if (z->tail - z->ready >= z->fblocks)
		bach_zpool_end_frame(z);
}

bool bach_zpool_peek(struct bach_zpool *z, bool wait, const uint8_t **out,
		     size_t *len, void **tag)
{
	struct slot *s;
	bool ready;

	if (z->head == z->tail)
		return false;
	if (z->head == z->ready) { /* in the frame being gathered */
		if (!wait)
			return false;
		bach_zpool_end_frame(z);
	}
	s = slot_at(z, z->head);
	pthread_mutex_lock(&z->mu);
	while (wait && s->state != SLOT_DONE)
		pthread_cond_wait(&z->done, &z->mu);
	ready = s->state == SLOT_DONE;
	pthread_mutex_unlock(&z->mu);
	if (!ready)
		return false;
	*out = !s->nblk ? NULL : s->big ? s->big : s->out;
	*len = s->nblk ? s->olen : 0;
	if (tag)
		*tag = s->tag;
	return true;
}

void bach_zpool_release(struct bach_zpool *z)
{
	struct slot *s = slot_at(z, z->head);

	if (s->big) {
		pthread_mutex_lock(&z->mu);
		if (z->nspares < z->maxspares)
			z->spares[z->nspares++] =
				(struct spare){ s->big, s->bigcap };
		else
			free(s->big);
		pthread_mutex_unlock(&z->mu);
		s->big = NULL;
	}
	s->state = SLOT_FREE;
	z->head++;
}
