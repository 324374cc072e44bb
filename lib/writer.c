// SPDX-License-Identifier: MIT
/*
 * Trace writer: raw .byu, or blocked .byu.gz. For gzip the caller's records
 * fill a ring of block slots; worker threads take filled slots in order and
 * compress each into one member; the caller writes finished members in
 * ring order, then the EOF block. No thread waits for a whole batch: a
 * worker starts the next block the moment it is filled.
 *
 * A named output is written under a temporary name beside it and renamed
 * into place by a good close (bach/outfile.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bach/outfile.h"
#include "bach/record.h"
#include "bach/trace.h"

#define RAW_BUF (4u << 20)
#define SLOTS_PER_THREAD 8
#define MAX_THREADS 64

struct bach_writer;

struct worker {
	struct bach_writer *w;
	struct bach_deflater *d;
	pthread_t tid;
	bool started;
};

enum slot_state { SLOT_FREE, SLOT_FILLED, SLOT_DONE };

struct slot {
	uint8_t *in;		/* BACH_BGZF_MAX_INPUT */
	size_t len;
	uint8_t *out;		/* BACH_BGZF_MAX_BLOCK */
	size_t olen;
	enum slot_state state;	/* under mu */
};

struct bach_writer {
	struct bach_writer_opts o;
	struct bach_outfile out;
	int fd;
	int err;
	bool closed;
	char msg[512];
	uint64_t bytes;		/* bytes written to the file */

	uint8_t *buf;		/* raw: the output buffer */
	size_t fill, cap;

	/*
	 * gzip ring: slots [head, tail) are filled or done, in file order;
	 * [take, tail) are filled and not yet taken by a worker; the caller
	 * fills slot tail.
	 */
	struct slot *slots;
	size_t nslot;
	uint64_t head, tail, take;
	struct worker *workers;
	int nworkers;		/* started */
	int nalloc;		/* allocated */
	pthread_mutex_t mu;
	pthread_cond_t work;	/* a slot was filled, or quit */
	pthread_cond_t done;	/* a slot was compressed */
	bool quit;
	struct bach_deflater *own; /* compressor when there are no workers */
};

__attribute__((format(printf, 3, 4))) static int wfail(struct bach_writer *w,
						       int err,
						       const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return w->err;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
	va_end(ap);
	w->err = err;
	return err;
}

const char *bach_writer_strerror(const struct bach_writer *w)
{
	return w->msg[0] ? w->msg : "no error";
}

uint64_t bach_writer_bytes(const struct bach_writer *w)
{
	return w->bytes;
}

static const char *wname(const struct bach_writer *w)
{
	return bach_outfile_name(&w->out);
}

static int write_all(struct bach_writer *w, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return wfail(w, -errno,
				     "%s: write error at byte offset %llu: %s",
				     wname(w), (unsigned long long)w->bytes,
				     strerror(errno));
		}
		p += n;
		len -= (size_t)n;
		w->bytes += (uint64_t)n;
	}
	return 0;
}

static struct slot *slot_at(struct bach_writer *w, uint64_t i)
{
	return &w->slots[i % w->nslot];
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct bach_writer *w = wk->w;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct slot *s;

		while (w->take == w->tail && !w->quit)
			pthread_cond_wait(&w->work, &w->mu);
		if (w->take == w->tail)
			break; /* quit, and nothing left to do */
		s = slot_at(w, w->take++);
		pthread_mutex_unlock(&w->mu);
		s->olen = bach_bgzf_block(wk->d, s->out, s->in, s->len);
		pthread_mutex_lock(&w->mu);
		s->state = SLOT_DONE;
		pthread_cond_signal(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * Write out the finished slots at the head, in order; with wait_all, wait
 * for every filled slot. head and tail move only in the caller's thread.
 */
static int drain(struct bach_writer *w, bool wait_all)
{
	for (;;) {
		struct slot *s;
		bool ready;

		if (w->head == w->tail)
			return w->err;
		s = slot_at(w, w->head);
		pthread_mutex_lock(&w->mu);
		while (s->state != SLOT_DONE && wait_all)
			pthread_cond_wait(&w->done, &w->mu);
		ready = s->state == SLOT_DONE;
		pthread_mutex_unlock(&w->mu);
		if (!ready)
			return w->err;
		if (!w->err)
			write_all(w, s->out, s->olen);
		s->state = SLOT_FREE;
		s->len = 0;
		w->head++;
	}
}

/* The slot being filled is complete: hand it on. */
static int submit(struct bach_writer *w)
{
	struct slot *s = slot_at(w, w->tail);

	if (!s->len)
		return 0;
	if (!w->nworkers) {
		s->olen = bach_bgzf_block(w->own, s->out, s->in, s->len);
		s->state = SLOT_DONE;
		w->tail++;
		return drain(w, false);
	}
	pthread_mutex_lock(&w->mu);
	s->state = SLOT_FILLED;
	w->tail++;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	/* write what is finished; if the ring is full, wait for the head */
	drain(w, false);
	if (w->tail - w->head == w->nslot) {
		struct slot *h = slot_at(w, w->head);

		pthread_mutex_lock(&w->mu);
		while (h->state != SLOT_DONE)
			pthread_cond_wait(&w->done, &w->mu);
		pthread_mutex_unlock(&w->mu);
		drain(w, false);
	}
	return w->err;
}

int bach_writer_write(struct bach_writer *w, const uint8_t *recs, size_t n)
{
	size_t len = n * BACH_REC_SIZE;

	if (w->err)
		return w->err;
	if (w->o.format == BACH_OUT_BYU) {
		while (len) {
			size_t k = w->cap - w->fill < len ? w->cap - w->fill :
							    len;

			memcpy(w->buf + w->fill, recs, k);
			w->fill += k;
			recs += k;
			len -= k;
			if (w->fill == w->cap) {
				w->fill = 0;
				if (write_all(w, w->buf, w->cap))
					return w->err;
			}
		}
		return 0;
	}
	while (len) {
		struct slot *s = slot_at(w, w->tail);
		size_t k = BACH_BGZF_MAX_INPUT - s->len < len ?
				   BACH_BGZF_MAX_INPUT - s->len :
				   len;

		memcpy(s->in + s->len, recs, k);
		s->len += k;
		recs += k;
		len -= k;
		if (s->len == BACH_BGZF_MAX_INPUT && submit(w))
			return w->err;
	}
	return 0;
}

static int start_workers(struct bach_writer *w, int threads)
{
	if (threads == 1) {
		w->own = bach_deflater_new(w->o.backend, w->o.level);
		return w->own ? 0 : -ENOMEM;
	}
	w->workers = calloc((size_t)threads, sizeof(*w->workers));
	if (!w->workers)
		return -ENOMEM;
	w->nalloc = threads;
	for (int i = 0; i < threads; i++) {
		struct worker *wk = &w->workers[i];

		wk->w = w;
		wk->d = bach_deflater_new(w->o.backend, w->o.level);
		if (!wk->d)
			return -ENOMEM;
		if (pthread_create(&wk->tid, NULL, worker_main, wk))
			return -EAGAIN;
		wk->started = true;
		w->nworkers++;
	}
	return 0;
}

int bach_writer_open(struct bach_writer **wp, const char *path,
		     const struct bach_writer_opts *o)
{
	struct bach_writer *w = calloc(1, sizeof(*w));
	int threads, ret;

	*wp = w;
	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->fd = -1;
	w->out.fd = -1;
	if (!w->o.level)
		w->o.level = BACH_DEFAULT_LEVEL;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);

	ret = bach_outfile_open(&w->out, path);
	if (ret < 0)
		return wfail(w, ret, "%s: cannot create: %s", path,
			     strerror(-ret));
	w->fd = w->out.fd;

	if (o->format == BACH_OUT_BYU) {
		w->cap = RAW_BUF - RAW_BUF % BACH_REC_SIZE;
		w->buf = malloc(w->cap);
		if (!w->buf)
			return wfail(w, -ENOMEM, "%s: out of memory", wname(w));
		return 0;
	}
	threads = o->threads > 0 ? o->threads :
				   (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (threads < 1)
		threads = 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	w->nslot = (size_t)threads * SLOTS_PER_THREAD;
	w->slots = calloc(w->nslot, sizeof(*w->slots));
	if (!w->slots)
		return wfail(w, -ENOMEM, "%s: out of memory", wname(w));
	for (size_t i = 0; i < w->nslot; i++) {
		w->slots[i].in = malloc(BACH_BGZF_MAX_INPUT);
		w->slots[i].out = malloc(BACH_BGZF_MAX_BLOCK);
		if (!w->slots[i].in || !w->slots[i].out)
			return wfail(w, -ENOMEM, "%s: out of memory",
				     wname(w));
	}
	ret = start_workers(w, threads);
	if (ret < 0)
		return wfail(w, ret, "%s: cannot start compressor: %s",
			     wname(w), strerror(-ret));
	return 0;
}

int bach_writer_close(struct bach_writer *w)
{
	int ret;

	if (w->err || w->closed)
		return w->err;
	if (w->o.format == BACH_OUT_BYU_GZ) {
		if (submit(w) < 0 || drain(w, true) < 0 ||
		    write_all(w, bach_bgzf_eof, sizeof(bach_bgzf_eof)) < 0)
			return w->err;
	} else if (write_all(w, w->buf, w->fill) < 0) {
		return w->err;
	}
	ret = bach_outfile_commit(&w->out);
	if (ret < 0)
		return wfail(w, ret, "%s: cannot finish: %s", wname(w),
			     strerror(-ret));
	w->closed = true;
	return 0;
}

void bach_writer_free(struct bach_writer *w)
{
	if (!w)
		return;
	if (w->workers) {
		/* workers finish the slots they hold, then leave */
		pthread_mutex_lock(&w->mu);
		w->quit = true;
		pthread_cond_broadcast(&w->work);
		pthread_mutex_unlock(&w->mu);
		for (int i = 0; i < w->nalloc; i++) {
			if (w->workers[i].started)
				pthread_join(w->workers[i].tid, NULL);
			bach_deflater_free(w->workers[i].d);
		}
		free(w->workers);
	}
	bach_deflater_free(w->own);
	if (!w->closed)
		bach_outfile_abort(&w->out);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->done);
	free(w->buf);
	for (size_t i = 0; w->slots && i < w->nslot; i++) {
		free(w->slots[i].in);
		free(w->slots[i].out);
	}
	free(w->slots);
	free(w);
}
