// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bach/record.h"
#include "ring.h"

/* The first number in file, or 0. */
static uint64_t read_u64(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Room left under this process's memory cgroup's limit, or UINT64_MAX. */
static uint64_t cgroup_room(void)
{
	char line[4096], path[4200];
	uint64_t room = UINT64_MAX;
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strrchr(line, ':'), *ctl = strchr(line, ':');
		uint64_t lim = 0, used = 0;

		if (!p || !ctl)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(ctl, "::", 2)) { /* v2 */
			snprintf(path, sizeof(path),
				 "/sys/fs/cgroup%s/memory.max", p + 1);
			lim = read_u64(path);
			snprintf(path, sizeof(path),
				 "/sys/fs/cgroup%s/memory.current", p + 1);
			used = read_u64(path);
		} else if (!strncmp(ctl, ":memory:", 8)) { /* v1 */
			snprintf(
				path, sizeof(path),
				"/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
				p + 1);
			lim = read_u64(path);
			snprintf(
				path, sizeof(path),
				"/sys/fs/cgroup/memory%s/memory.usage_in_bytes",
				p + 1);
			used = read_u64(path);
		}
		/* "max" reads as 0, v1's no limit as about 2^63 */
		if (lim && lim > used && lim - used < room)
			room = lim - used;
	}
	if (f)
		fclose(f);
	return room;
}

uint64_t ring_memory_available(void)
{
	char line[256];
	unsigned long long kb;
	uint64_t avail = UINT64_MAX, room = cgroup_room();
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			avail = (uint64_t)kb << 10;
	if (f)
		fclose(f);
	return room < avail ? room : avail;
}

int ring_init(struct ring *r, size_t nblocks)
{
	size_t bytes;

	memset(r, 0, sizeof(*r));
	if (nblocks < 2)
		nblocks = 2;
	bytes = nblocks * (size_t)RING_BLOCK_RECS * BACH_REC_SIZE;
	r->blocks = calloc(nblocks, sizeof(*r->blocks));
	r->tfree = calloc(nblocks, sizeof(*r->tfree));
	if (!r->blocks || !r->tfree) {
		free(r->blocks);
		free(r->tfree);
		r->blocks = NULL;
		r->tfree = NULL;
		return -ENOMEM;
	}
	/*
	 * Preallocated means there now, not at the first stall: the pages
	 * are populated (touched) here, and locked where RLIMIT_MEMLOCK
	 * allows, so that a start that succeeds keeps its ring.
	 */
	r->mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (r->mem == MAP_FAILED) {
		r->mem = NULL;
		free(r->blocks);
		free(r->tfree);
		r->blocks = NULL;
		r->tfree = NULL;
		return -ENOMEM;
	}
	r->mem_bytes = bytes;
	r->locked = mlock(r->mem, bytes) == 0;
	r->nblocks = nblocks;
	for (size_t i = 0; i < nblocks; i++)
		r->blocks[i].data =
			r->mem + i * (size_t)RING_BLOCK_RECS * BACH_REC_SIZE;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->not_empty, NULL);
	pthread_cond_init(&r->not_full, NULL);
	return 0;
}

void ring_free(struct ring *r)
{
	if (r->mem)
		munmap(r->mem, r->mem_bytes);
	r->mem = NULL;
	for (size_t i = 0; r->blocks && i < r->nblocks; i++)
		free(r->blocks[i].times);
	for (size_t i = 0; i < r->ntfree; i++)
		free(r->tfree[i]);
	free(r->tfree);
	r->tfree = NULL;
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

struct ring_times *ring_times_get(struct ring *r)
{
	struct ring_times *t = NULL;

	pthread_mutex_lock(&r->mu);
	if (r->ntfree)
		t = r->tfree[--r->ntfree];
	else if (r->ntalloc < r->nblocks && (t = malloc(RING_TIMES_BYTES)))
		r->ntalloc++;
	pthread_mutex_unlock(&r->mu);
	return t;
}

static void times_put_locked(struct ring *r, struct ring_times *t)
{
	if (t)
		r->tfree[r->ntfree++] = t;
}

void ring_times_put(struct ring *r, struct ring_times *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&r->mu);
	times_put_locked(r, t);
	pthread_mutex_unlock(&r->mu);
}

size_t ring_times_bytes(struct ring *r)
{
	size_t n;

	pthread_mutex_lock(&r->mu);
	n = r->ntalloc;
	pthread_mutex_unlock(&r->mu);
	return n * RING_TIMES_BYTES;
}

void ring_release(struct ring *r)
{
	struct ring_block *b = &r->blocks[atomic_load(&r->head) % r->nblocks];

	pthread_mutex_lock(&r->mu);
	/* a block released without its clocks taken (discarded) */
	times_put_locked(r, b->times);
	b->times = NULL;
	r->taken--;
	atomic_fetch_add(&r->head, 1);
	pthread_cond_signal(&r->not_full);
	pthread_mutex_unlock(&r->mu);
}
