// SPDX-License-Identifier: MIT
/*
 * The producer half of a capture, on the acquisition thread: the services
 * drivers call (drivers/driver.h). Records are copied into ring blocks, gaps
 * and other events are placed at their record position, and the loss
 * policy decides what happens when the ring is full.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "bach/trace.h"
#include "capture_priv.h"
#include "lib/bus/frame.h"
#include "lib/io/zpool.h"
#define LOG_PREFIX NULL
#include "log.h"
#include "recover.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- producer: the services drivers call ------------------------------- */

static void publish(struct capture *c)
{
	if (!c->acq.blk)
		return;
	c->acq.blk->src1 =
		atomic_load_explicit(&c->sh.produced, memory_order_relaxed);
	ring_publish(&c->ring);
	c->acq.blk = NULL;
}

static struct ring_block *fresh_block(struct capture *c, bool wait);

/*
 * Room for one more event in the block being filled: a full event list
 * sends the block on as it is. NULL only under drop with a full ring.
 */
static struct ring_block *event_block(struct capture *c, bool wait)
{
	struct ring_block *b = c->acq.blk ? c->acq.blk : fresh_block(c, wait);

	if (b && b->nev == RING_MAX_EVENTS) {
		publish(c);
		b = fresh_block(c, wait);
	}
	return b;
}

static void put_event(struct ring_block *b, const struct ring_event *ev)
{
	struct ring_event *e = &b->ev[b->nev++];

	*e = *ev;
	e->at = b->nrec;
}

/*
 * An event at the current position. Under drop with the ring full the
 * source must not wait: the event waits instead, for the next block.
 */
static void add_event(struct capture *c, const struct ring_event *ev)
{
	struct ring_block *b =
		event_block(c, c->cfg.policy != BACH_POLICY_DROP);

	if (b)
		put_event(b, ev);
	else if (c->acq.npend_ev < RING_MAX_EVENTS)
		c->acq.pend_ev[c->acq.npend_ev++] = *ev;
}

/*
 * Ring stalls are merged: one event for the stalls of up to a second
 * (about a thousand of them at full speed), with their count and the time
 * the source was held.
 */
static void flush_stalls(struct capture *c)
{
	struct ring_event e = { .kind = RING_EV_STALL,
				.a = c->acq.stall.first_ns,
				.b = c->acq.stall.last_ns,
				.c = c->acq.stall.held_ns,
				.d = c->acq.stall.count };
	struct ring_event be = { .kind = RING_EV_BOARD_STALL,
				 .a = c->acq.bstall.episodes,
				 .b = c->acq.bstall.clocks };

	if (c->acq.stall.count) {
		memset(&c->acq.stall, 0, sizeof(c->acq.stall));
		add_event(c, &e);
	}
	if (c->acq.bstall.episodes) {
		memset(&c->acq.bstall, 0, sizeof(c->acq.bstall));
		add_event(c, &be);
	}
}

/* The board's own stalls (its status) are merged the same way. */
static void stalls_due(struct capture *c, uint64_t now)
{
	if ((c->acq.stall.count &&
	     now - c->acq.stall.first_ns >= STALL_MERGE_NS) ||
	    (c->acq.bstall.episodes &&
	     now - c->acq.bstall.first_ns >= STALL_MERGE_NS))
		flush_stalls(c);
}

/*
 * The clocks of block b, or NULL while the capture has none. A block that
 * gets its first clock takes a clock buffer (once per block, never per
 * record) and starts with BACH_TIME_NONE for what it holds.
 */
static struct ring_times *block_times(struct capture *c, struct ring_block *b)
{
	struct ring_times *t;

	if (!c->acq.timing)
		return NULL;
	if (!b->times) {
		t = b->times = ring_times_get(&c->ring);
		if (!t) {
			if (!c->acq.timing_nomem)
				log_warn(
					"%s: no memory for the timing (%zu bytes a block): records are kept without it",
					c->cfg.driver, RING_TIMES_BYTES);
			c->acq.timing_nomem = true;
			return NULL;
		}
		t->prev = BACH_TIME_NONE;
		t->nesc = 0;
		memset(t->step, 0, (size_t)b->nrec * sizeof(*t->step));
	}
	return b->times;
}

/*
 * Entry i of t is v: a step from the one before, or an escape (ring.h).
 * false when it needs an escape and none is left.
 */
static inline bool time_at(struct ring_times *t, uint32_t i, uint64_t v)
{
	uint64_t d = v - t->prev;

	if (d >= RING_TIME_ESCAPE ||
	    (v == BACH_TIME_NONE) != (t->prev == BACH_TIME_NONE)) {
		if (t->nesc == RING_TIME_ESC_MAX)
			return false;
		t->esc[t->nesc++] = v;
		d = RING_TIME_ESCAPE;
	}
	t->step[i] = (uint16_t)d;
	t->prev = v;
	return true;
}

/* Gap markers for lost records at the block's end; false when it is full. */
static bool put_markers(struct capture *c, struct ring_block *b, uint64_t *lost)
{
	struct ring_times *t = block_times(c, b);

	while (*lost) {
		uint32_t n = *lost > UINT32_MAX ? UINT32_MAX : (uint32_t)*lost;

		if (b->nrec == RING_BLOCK_RECS)
			return false;
		/* a marker is at the clock of the record before it (a block
		 * without an escape left counts as full) */
		if (t && !time_at(t, b->nrec, c->acq.last_clock))
			return false;
		bach_rec_put(b->data + (size_t)b->nrec * BACH_REC_SIZE, n, 0,
			     BACH_GAP_CTL);
		b->nrec++;
		b->nmarkers++;
		atomic_fetch_add_explicit(&c->sh.markers, 1,
					  memory_order_relaxed);
		*lost -= n;
	}
	return true;
}

/* A gap at the current position of c->acq.blk (which must exist). */
static void record_gap(struct capture *c, uint64_t lost,
		       enum bach_gap_cause cause)
{
	uint64_t left = lost;
	struct ring_block *b =
		event_block(c, c->cfg.policy != BACH_POLICY_DROP);

	if (!b) { /* drop, ring full: recorded where room appears */
		c->acq.pending[cause] += lost;
		return;
	}
	/* the anchor the writer maps source indexes with (ring.h) */
	put_event(b, &(struct ring_event){
			     .kind = RING_EV_GAP,
			     .a = lost,
			     .b = cause,
			     .c = c->cfg.gap_markers
					  ? (lost + UINT32_MAX - 1) / UINT32_MAX
					  : 0,
			     .d = atomic_load_explicit(&c->sh.produced,
						       memory_order_relaxed) });
	if (!c->cfg.gap_markers)
		return;
	while (!put_markers(c, c->acq.blk, &left)) {
		/* rare: the marker spills into the next block */
		publish(c);
		fresh_block(c, true);
	}
}

/* Record the gaps that waited for room, one per cause. */
static void record_pending(struct capture *c)
{
	for (int cause = 0; cause < NCAUSES; cause++) {
		uint64_t lost = c->acq.pending[cause];

		if (lost) {
			c->acq.pending[cause] = 0;
			record_gap(c, lost, cause);
		}
	}
}

/*
 * A new block to fill. Under stall a full ring holds the source until the
 * writer drains (a stall, recorded); under drop it gives NULL unless wait.
 */
static struct ring_block *fresh_block(struct capture *c, bool wait)
{
	struct ring_block *b = ring_producer_block(&c->ring, false);
	uint64_t t0 = 0, t1 = 0;

	c->acq.stalled = false;
	if (!b) {
		if (c->cfg.policy == BACH_POLICY_DROP && !wait)
			return NULL;
		t0 = bach_now_ns();
		b = ring_producer_block(&c->ring, true);
		t1 = bach_now_ns();
		if (c->cfg.policy == BACH_POLICY_STALL) {
			c->acq.stalled = true;
			atomic_fetch_add(&c->sh.stalls, 1);
			atomic_fetch_add(&c->sh.stall_ns, t1 - t0);
		}
	}
	b->nrec = b->nmarkers = b->nev = 0;
	b->src0 = atomic_load_explicit(&c->sh.produced, memory_order_relaxed);
	c->acq.blk = b;
	c->acq.blk_born = bach_now_ns();
	if (c->acq.stalled) {
		if (!c->acq.stall.count)
			c->acq.stall.first_ns = t0;
		c->acq.stall.last_ns = t1;
		c->acq.stall.held_ns += t1 - t0;
		c->acq.stall.count++;
	}
	stalls_due(c, c->acq.blk_born);
	record_pending(c);
	/* events that waited for room (taken first: add_event may recurse) */
	if (c->acq.npend_ev) {
		struct ring_event ev[RING_MAX_EVENTS];
		unsigned n = c->acq.npend_ev;

		memcpy(ev, c->acq.pend_ev, n * sizeof(*ev));
		c->acq.npend_ev = 0;
		for (unsigned i = 0; i < n; i++)
			add_event(c, &ev[i]);
	}
	return c->acq.blk;
}

static struct ring_block *get_block(struct capture *c)
{
	return c->acq.blk ? c->acq.blk : fresh_block(c, false);
}

static void count_lost(struct capture *c, uint64_t n, enum bach_gap_cause cause)
{
	/* produced before lost: a reader of lost then produced never sees more
	 * lost */
	atomic_fetch_add(&c->sh.produced, n);
	atomic_fetch_add(&c->sh.lost, n);
	atomic_fetch_add_explicit(&c->sh.lost_by[cause], n,
				  memory_order_relaxed);
}

/*
 * Autostop by records: the source's records past the count are not taken
 * (neither produced nor lost), and the writer is told to stop it. Returns
 * how many of n to take.
 */
static uint64_t records_left(struct capture *c, uint64_t n)
{
	uint64_t p =
		atomic_load_explicit(&c->sh.produced, memory_order_relaxed);
	uint64_t max = c->cfg.stop_records;

	if (!max)
		return n;
	if (p + n >= max) {
		atomic_store(&c->sh.records_reached, true);
		return p >= max ? 0 : max - p;
	}
	return n;
}

void bach_source_records(struct bach_source *src, const uint8_t *recs, size_t n)
{
	bach_source_timed_records(src, recs, NULL, n);
}

/*
 * Once, at the first clock. The clocks live in per-block buffers taken
 * as blocks fill and given back as the writer has them: a few while the
 * writer keeps up, up to one a ring block (half of ring_mb more)
 * while it lags; the memory check at the start counted the ring only.
 */
static void timing_start(struct capture *c)
{
	uint64_t most = (uint64_t)c->ring.nblocks * RING_TIMES_BYTES;
	uint64_t avail = ring_memory_available();

	c->acq.timing = true;
	if (most > avail)
		log_warn(
			"%s: timing needs up to %llu MiB beside the ring while the writer lags, %llu MiB are available (ring_mb)",
			c->cfg.driver, (unsigned long long)(most >> 20),
			(unsigned long long)(avail >> 20));
}

/*
 * Where a run of records' clocks come from: none (clk and steps NULL),
 * a source's u64 clocks, or a TIMING frame's u16 deltas (little-endian,
 * as sent: the first record at ts, each one after it delta clocks after
 * the one before; first while the frame's first is still to come).
 */
struct clocks_in {
	const uint64_t *clk;
	const uint8_t *steps;
	uint64_t ts;
	bool first;
};

/*
 * A source's clock v as the capture keeps it: as it is, but where the
 * clocks go back (a board started again after an unplug, the next pass
 * of a replay's loop=1) shifted on to go on from the last one, so that
 * a capture's clocks never go back (docs/formats.md 3.2). No time stays
 * so. *shift and *last: the state, c->acq's once the entry is taken.
 */
static uint64_t onward(uint64_t v, uint64_t *shift, uint64_t *last)
{
	if (v != BACH_TIME_NONE) {
		v += *shift;
		if (v < *last) {
			*shift += *last - v;
			v = *last;
		}
		*last = v;
	}
	return v;
}

/*
 * n deltas (u16 little-endian) at d into steps at dst, *sum their sum.
 * false when one is RING_TIME_ESCAPE (dst is then only partly written).
 * Eight at a time where SSE2 is (every x86-64): no work a record but the
 * copy.
 */
static bool copy_steps(uint16_t *dst, const uint8_t *d, size_t n, uint64_t *sum)
{
	uint64_t s = 0;
	size_t i = 0;
#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	__m128i acc = _mm_setzero_si128(), esc = _mm_setzero_si128();
	__m128i ones = _mm_set1_epi16(-1), zero = _mm_setzero_si128();
	uint32_t lanes[4];

	/* 32-bit lanes: at most 2 * 65535 * 65535 / 8 each, a frame's */
	for (; i + 8 <= n; i += 8) {
		__m128i x = _mm_loadu_si128((const __m128i *)(d + 2 * i));

		_mm_storeu_si128((__m128i *)(dst + i), x);
		esc = _mm_or_si128(esc, _mm_cmpeq_epi16(x, ones));
		acc = _mm_add_epi32(acc,
				    _mm_add_epi32(_mm_unpacklo_epi16(x, zero),
						  _mm_unpackhi_epi16(x, zero)));
	}
	if (_mm_movemask_epi8(esc))
		return false;
	_mm_storeu_si128((__m128i *)lanes, acc);
	s = (uint64_t)lanes[0] + lanes[1] + lanes[2] + lanes[3];
#endif
	for (; i < n; i++) {
		uint16_t x = bach_get_le16(d + 2 * i);

		if (x == RING_TIME_ESCAPE)
			return false;
		dst[i] = x;
		s += x;
	}
	*sum = s;
	return true;
}

/*
 * The clocks of k records from in into t from entry at on. Returns how
 * many it took: fewer when t's escapes ran out (the block is then
 * published as it is).
 */
static size_t put_times(struct capture *c, struct ring_times *t, uint32_t at,
			struct clocks_in *in, size_t k)
{
	uint64_t shift = c->acq.clk_shift, last = c->acq.clk_last, sum;
	size_t i = 0;

	if (in->clk) {
		for (; i < k; i++) {
			uint64_t sh = shift, la = last;
			uint64_t v = onward(in->clk[i], &sh, &la);

			if (!time_at(t, at + (uint32_t)i, v))
				break;
			shift = sh, last = la;
		}
		in->clk += i;
	} else if (in->steps) {
		/*
		 * The frame's first at its timestamp, then each a step on
		 * (only the first may shift: a frame's clocks never go back);
		 * in->ts the last one put. A fresh block's first is an escape
		 * (from BACH_TIME_NONE), then the deltas are its steps.
		 */
		if (in->first) {
			uint64_t v = onward(in->ts, &shift, &last);

			if (!time_at(t, at, v))
				return 0;
			in->first = false;
			in->steps += 2;
			in->ts = v;
			i = 1;
		}
		if (i < k && t->prev != in->ts) {
			uint64_t v = in->ts + bach_get_le16(in->steps);

			if (!time_at(t, at + (uint32_t)i, v))
				return i;
			in->steps += 2;
			in->ts = v;
			i++;
		}
		if (i < k && t->prev != BACH_TIME_NONE &&
		    copy_steps(t->step + at + i, in->steps, k - i, &sum)) {
			t->prev += sum;
			in->steps += 2 * (k - i);
			in->ts = t->prev;
			i = k;
		}
		for (; i < k; i++, in->steps += 2) { /* a delta of 65535 */
			uint64_t v = in->ts + bach_get_le16(in->steps);

			if (!time_at(t, at + (uint32_t)i, v))
				break;
			in->ts = v;
		}
		if (in->ts != BACH_TIME_NONE)
			last = in->ts;
	} else {
		if (!time_at(t, at, BACH_TIME_NONE))
			return 0;
		memset(t->step + at + 1, 0, (k - 1) * sizeof(*t->step));
		i = k;
	}
	c->acq.clk_shift = shift;
	c->acq.clk_last = last;
	return i;
}

/*
 * The last of k clocks from in, without a clock buffer to put them in
 * (no memory): as the source gave them.
 */
static uint64_t skip_times(struct clocks_in *in, size_t k)
{
	uint64_t v = in->ts;

	if (in->clk) {
		v = in->clk[k - 1];
		in->clk += k;
		return v;
	}
	for (size_t i = 0; i < k; i++, in->steps += 2) {
		v = in->first ? v : v + bach_get_le16(in->steps);
		in->first = false;
	}
	in->ts = v;
	return v;
}

/* n records from the source, their clocks from in. */
static void put_records(struct bach_source *src, const uint8_t *recs,
			struct clocks_in *in, size_t n)
{
	struct capture *c = src->c;
	bool timed = in->clk || in->steps;

	n = (size_t)records_left(c, n);
	if (timed && n && !c->acq.timing)
		timing_start(c);

	while (n) {
		struct ring_block *b = get_block(c);
		size_t k;

		if (!b) { /* drop: counted now, recorded where room appears */
			count_lost(c, n, BACH_GAP_RING);
			c->acq.pending[BACH_GAP_RING] += n;
			return;
		}
		k = RING_BLOCK_RECS - b->nrec;
		if (k > n)
			k = n;
		if (timed || b->times) {
			struct ring_times *t = block_times(c, b);

			if (t) {
				k = put_times(c, t, b->nrec, in, k);
				if (timed)
					c->acq.last_clock = t->prev;
			} else if (timed) {
				c->acq.last_clock = skip_times(in, k);
			}
		}
		memcpy(b->data + (size_t)b->nrec * BACH_REC_SIZE, recs,
		       k * BACH_REC_SIZE);
		b->nrec += (uint32_t)k;
		recs += k * BACH_REC_SIZE;
		n -= k;
		atomic_fetch_add_explicit(&c->sh.produced, k,
					  memory_order_relaxed);
		/* full, or out of escapes (put_times() took fewer) */
		if (b->nrec == RING_BLOCK_RECS || n)
			publish(c);
	}
	/* a slow source still reaches the disk within a fraction of a second */
	bach_source_flush(src);
}

void bach_source_timed_records(struct bach_source *src, const uint8_t *recs,
			       const uint64_t *clocks, size_t n)
{
	struct clocks_in in = { .clk = clocks };

	put_records(src, recs, &in, n);
}

/* The records of a TIMING frame: its deltas as steps, no u64 a record. */
static void frame_records(struct bach_source *src, const uint8_t *recs,
			  const uint8_t *deltas, uint64_t ts, size_t n)
{
	struct clocks_in in = { .steps = deltas, .ts = ts, .first = true };

	put_records(src, recs, &in, n);
}

void bach_source_flush(struct bach_source *src)
{
	struct capture *c = src->c;
	bool waiting = c->acq.blk && c->acq.blk->nrec;
	uint64_t now;

	if (!waiting && !c->acq.stall.count && !c->acq.bstall.episodes)
		return;
	now = bach_now_ns();
	stalls_due(c, now);
	if (waiting && c->acq.blk &&
	    now - c->acq.blk_born > c->cfg.flush_ms * 1000000ull)
		publish(c);
}

void bach_source_gap(struct bach_source *src, uint64_t lost,
		     enum bach_gap_cause cause)
{
	struct capture *c = src->c;
	struct ring_block *b;

	lost = records_left(c, lost);
	if (!lost)
		return;
	count_lost(c, lost, cause);
	b = event_block(c, false);
	if (!b) {
		c->acq.pending[cause] += lost;
		return;
	}
	record_gap(c, lost, cause);
}

bool bach_source_stalled(struct bach_source *src)
{
	return src->c->acq.stalled;
}

void bach_json_escape(char *dst, size_t cap, const char *s)
{
	json_escape(dst, cap, s);
}

void bach_source_identity(struct bach_source *src, const char *json_members)
{
	struct capture *c = src->c;
	const char *hz = strstr(json_members, "\"clock_hz\":");

	pthread_mutex_lock(&c->sh.mu);
	snprintf(c->sh.identity, sizeof(c->sh.identity), "%s", json_members);
	pthread_mutex_unlock(&c->sh.mu);
	/* the nominal clock, for timing sidecars, until a status measures it */
	if (hz && !atomic_load(&c->sh.clock_hz))
		atomic_store(&c->sh.clock_hz,
			     (uint32_t)strtoul(hz + 11, NULL, 10));
}

void bach_source_board_status(struct bach_source *src,
			      const struct bach_board_status *st)
{
	struct capture *c = src->c;

	/*
	 * The board held the CPU since its last status (counters start at
	 * zero with the capture): a stall of its own.
	 */
	if (st->stall_episodes > c->sh.board.stall_episodes) {
		if (!c->acq.bstall.episodes)
			c->acq.bstall.first_ns = bach_now_ns();
		c->acq.bstall.episodes +=
			st->stall_episodes - c->sh.board.stall_episodes;
		c->acq.bstall.clocks +=
			st->stalled_clocks - c->sh.board.stalled_clocks;
		atomic_fetch_add(&c->sh.board_stalls,
				 st->stall_episodes -
					 c->sh.board.stall_episodes);
		stalls_due(c, bach_now_ns());
	}
	pthread_mutex_lock(&c->sh.mu); /* capture_status() reads it */
	c->sh.board = *st;
	c->sh.have_board_status = true;
	pthread_mutex_unlock(&c->sh.mu);
	atomic_store(&c->sh.clock_hz, st->clock_hz);
}

void bach_source_decoded(struct bach_source *src,
			 const struct bach_busdec_stats *st)
{
	struct capture *c = src->c;
	struct bach_busdec_stats *t = &c->sh.decode;

	pthread_mutex_lock(&c->sh.mu); /* capture_status() reads it */
	t->samples += st->samples;
	t->clocks += st->clocks;
	t->cycles += st->cycles;
	t->records += st->records;
	t->aborted += st->aborted;
	t->ken_uncached += st->ken_uncached;
	t->stray_brdy += st->stray_brdy;
	t->overlapped += st->overlapped;
	t->unfinished += st->unfinished;
	t->off_bus += st->off_bus;
	t->off_bus_clocks += st->off_bus_clocks;
	t->backoffs += st->backoffs;
	t->ken_unknown += st->ken_unknown;
	t->inquire_addr += st->inquire_addr;
	t->inquire_unsure += st->inquire_unsure;
	t->boff_unsure += st->boff_unsure;
	c->sh.have_decode = true;
	pthread_mutex_unlock(&c->sh.mu);
}

void bach_source_event(struct bach_source *src, const char *event,
		       const char *detail)
{
	struct capture *c = src->c;

	add_event(c, &(struct ring_event){
			     .kind = !strcmp(event, "device_lost")
					     ? RING_EV_DEVICE_LOST
					     : RING_EV_DEVICE_BACK });
	publish(c); /* the writer hears of it now */
	log_notice("%s: %s%s%s", c->cfg.driver, event, detail ? ": " : "",
		   detail ? detail : "");
}

void bach_source_mark(struct bach_source *src, const struct bach_source_mark *m)
{
	struct capture *c = src->c;
	uint64_t p =
		atomic_load_explicit(&c->sh.produced, memory_order_relaxed);

	/* autostop by records: past the count, its record is not taken */
	if (c->cfg.stop_records && p >= c->cfg.stop_records)
		return;
	/* waits for room even under drop: a mark is never lost to it */
	put_event(event_block(c, true),
		  &(struct ring_event){ .kind = RING_EV_MARK,
					.a = (uint64_t)(uintptr_t)m,
					.d = p });
}

void bach_source_origin(struct bach_source *src, const char *source_members,
			const struct bach_label *labels, size_t nlabels)
{
	struct capture *c = src->c;

	free(c->origin);
	c->origin = strdup(source_members);
	if (!c->origin)
		log_warn("%s: no memory for the started event's source object",
			 c->cfg.driver);
	for (size_t i = 0; i < nlabels; i++) {
		char esc[300];
		size_t k = 0;
		int err;

		while (k < c->cfg.nlabels &&
		       strcmp(c->cfg.labels[k].key, labels[i].key))
			k++;
		if (k < c->cfg.nlabels)
			continue; /* the capture's own label wins */
		err = capture_config_label(&c->cfg, labels[i].key,
					   labels[i].value);
		if (err)
			log_warn(
				"%s: label.%s of the replayed capture not carried over: %s (it is in the started event's source.labels)",
				c->cfg.driver,
				bach_escape_ctl(esc, sizeof(esc),
						labels[i].key),
				err == -E2BIG ? "more than 16 labels"
					      : "not a label");
	}
}

static void source_log(struct bach_source *src, int prio, const char *fmt,
		       va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_msg(prio, NULL, "%s: %s", src->c->cfg.driver, msg);
}

int bach_source_error(struct bach_source *src, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	source_log(src, LOG_P_ERR, fmt, ap);
	va_end(ap);
	return err;
}

void bach_source_warn(struct bach_source *src, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	source_log(src, LOG_P_WARNING, fmt, ap);
	va_end(ap);
}

/*
 * A TIMING frame's deltas, for its records next: kept where they are (the
 * frame's payload, which the parser holds until its records are handed
 * over, lib/bus/frame.h).
 */
static void parser_deltas(void *ctx, const uint8_t *d, size_t n, uint64_t ts)
{
	struct bach_source *src = ctx;
	struct capture *c = src->c;

	c->acq.fdeltas = d;
	c->acq.fts = ts;
	c->acq.nfdeltas = n;
}

void bach_source_notice(struct bach_source *src, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	source_log(src, LOG_P_NOTICE, fmt, ap);
	va_end(ap);
}

/*
 * What the decoder and the board saw of the bus beyond the records, once
 * the acquisition is over: the cycles that were not the CPU's, BOFF#, the
 * warnings (docs/bachd.md section 5, the ended event).
 */
static void log_bus_summary(struct capture *c)
{
	const struct bach_busdec_stats *s = &c->sh.decode;

	if (c->sh.have_decode)
		bach_source_notice(&c->src,
				   "decoded %" PRIu64 " bus clocks, %" PRIu64
				   " cycles, %" PRIu64 " records; %" PRIu64
				   " off the bus (%" PRIu64 " clocks), %" PRIu64
				   " back-offs, %" PRIu64 " aborted, %" PRIu64
				   " KEN# noncacheable, %" PRIu64
				   " KEN# not followed, %" PRIu64
				   " inquire writebacks (%" PRIu64
				   " perhaps of the wrong inquire), %" PRIu64
				   " perhaps recorded twice, %" PRIu64
				   " stray BRDY#, %" PRIu64
				   " overlapped, %" PRIu64 " unfinished",
				   s->clocks, s->cycles, s->records, s->off_bus,
				   s->off_bus_clocks, s->backoffs, s->aborted,
				   s->ken_uncached, s->ken_unknown,
				   s->inquire_addr, s->inquire_unsure,
				   s->boff_unsure, s->stray_brdy, s->overlapped,
				   s->unfinished);
	if (c->sh.have_board_status && c->sh.board.offbus)
		bach_source_notice(
			&c->src,
			"the board saw %" PRIu64
			" ADS#s while the CPU was off the bus (not recorded)",
			c->sh.board.offbus);
}

static void parser_records(void *ctx, const uint8_t *recs, size_t n,
			   uint64_t ts)
{
	struct bach_source *src = ctx;
	struct capture *c = src->c;
	bool timed = c->acq.nfdeltas == n;

	(void)ts;
	c->acq.nfdeltas = 0;
	if (timed)
		frame_records(src, recs, c->acq.fdeltas, c->acq.fts, n);
	else
		bach_source_records(src, recs, n);
}

static void parser_gap(void *ctx, uint64_t lost, enum bach_gap_cause cause)
{
	bach_source_gap(ctx, lost, cause);
}

static void parser_status(void *ctx, const struct bach_board_status *st)
{
	bach_source_board_status(ctx, st);
}

/* the driver hears of its board's replies (struct bach_driver.frame) */
static void parser_frame(void *ctx, const struct bach_frame *f)
{
	struct bach_source *src = ctx;
	struct capture *c = src->c;

	if (c->drv->frame)
		c->drv->frame(c->priv, f);
}

const struct bach_parser_ops capture_parser_ops = {
	.deltas = parser_deltas,
	.records = parser_records,
	.gap = parser_gap,
	.status = parser_status,
	.frame = parser_frame,
};

size_t bach_source_frames_pending(struct bach_source *src, struct bach_frame *h)
{
	return bach_parser_pending(src->c->acq.parser, h);
}

void bach_source_frames_tail(struct bach_source *src,
			     struct bach_parser_tail *t)
{
	bach_parser_tail(src->c->acq.parser, t);
}

void bach_source_frames(struct bach_source *src, const uint8_t *buf, size_t len)
{
	struct capture *c = src->c;
	struct bach_parser_counters pc;

	/* the board's bytes as they came, for replay (one write a transfer) */
	if (c->acq.dump_fd >= 0 &&
	    write(c->acq.dump_fd, buf, len) != (ssize_t)len) {
		log_warn("%s/board-stream.bin: %s: no longer kept", c->capdir,
			 strerror(errno));
		close(c->acq.dump_fd);
		c->acq.dump_fd = -1;
	}
	bach_parser_feed(c->acq.parser, buf, len);
	/* the parser is this thread's: capture_status() reads the copy */
	bach_parser_counters(c->acq.parser, &pc);
	atomic_store_explicit(&c->sh.corrupt_frames, pc.bad_crc + pc.bad_header,
			      memory_order_relaxed);
}

void *capture_acq_main(void *arg)
{
	struct capture *c = arg;

	c->acq.run_err = c->drv->run(&c->src, c->priv);
	if (c->acq.run_err)
		log_err("%s: acquisition ended: %s", c->cfg.driver,
			strerror(-c->acq.run_err));
	log_bus_summary(c);
	/*
	 * Frames lost at the very end reveal no gap by themselves: the
	 * board's last status says how many records it sampled.
	 */
	if (c->sh.have_board_status &&
	    c->sh.board.records > bach_parser_next_index(c->acq.parser))
		bach_source_gap(&c->src,
				c->sh.board.records -
					bach_parser_next_index(c->acq.parser),
				BACH_GAP_FRAMES);
	flush_stalls(c);
	/* losses at the very end still get their place in the trace */
	for (int cause = 0; cause < NCAUSES; cause++) {
		if (c->acq.pending[cause]) {
			if (!c->acq.blk)
				fresh_block(c, true);
			record_pending(c);
			break;
		}
	}
	publish(c);
	ring_close(&c->ring);
	atomic_store(&c->sh.acq_done, true);
	return NULL;
}
