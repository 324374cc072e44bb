/* SPDX-License-Identifier: MIT */
/*
 * The bus decoder: sampled Pentium bus pins in, BYU records out (design
 * section 5). One decoder serves live logic-analyzer data (drivers/sigrok)
 * and recorded captures (bach decode, the replay driver).
 *
 * Samples are logic-analyzer samples as libsigrok delivers them: `unitsize`
 * bytes each, channel i in bit (i % 8) of byte (i / 8). A map (the default
 * channel names, or a map file) says which channel carries which signal;
 * signals not captured take a constant level.
 *
 * State mode (no clk): each sample is one bus clock. Clock mode: the pins
 * are taken as they stood just before each rising edge of clk (what the
 * bus's own flip-flops latch at that edge).
 *
 * Each clock with ADS# low opens a cycle, unless the CPU is off the bus:
 * from a clock with BOFF# low through the first clock with BOFF# high its
 * outputs float, and while HLDA is high the bus is another master's; such
 * clocks are counted, never recorded. With BRDY#, KEN# and NA# (captured,
 * or fixed by a map line) the decoder follows the cycles to their end:
 * KEN#, sampled at the cycle's first BRDY# or NA#, decides whether a
 * cacheable read was really cacheable (and so a 4-transfer line fill);
 * BOFF# aborts every cycle still open, which the CPU then restarts, so the
 * aborted attempt is not recorded; pipelined cycles (NA#) complete in order
 * and are emitted in order. Otherwise every ADS# is a record at once (a
 * back-off then counts the cycles that may be recorded twice). A
 * writeback under AHOLD takes the address of the inquire (EADS#) that hit
 * when ahold and eads_n are captured (with hitm_n, an EADS# while HITM#
 * is asserted is ignored, as the CPU ignores it). docs/decoding.md states each
 * rule, with its source.
 */
#ifndef BACH_BUSDECODE_H
#define BACH_BUSDECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bus signals, in the order of docs/design.md section 5. */
enum bach_sig {
	BACH_SIG_CLK,
	BACH_SIG_ADS,
	BACH_SIG_A3,			 /* a3 .. a31: BACH_SIG_A3 + n - 3 */
	BACH_SIG_BE0 = BACH_SIG_A3 + 29, /* be0_n .. be7_n */
	BACH_SIG_MIO = BACH_SIG_BE0 + 8,
	BACH_SIG_DC,
	BACH_SIG_WR,
	BACH_SIG_CACHE,
	BACH_SIG_BRDY, /* optional: the rest */
	BACH_SIG_NA,
	BACH_SIG_KEN,
	BACH_SIG_BOFF,
	BACH_SIG_LOCK,
	BACH_SIG_HLDA,
	BACH_SIG_AHOLD, /* appended: AHOLD and EADS#, for */
	BACH_SIG_EADS,	/* writebacks run under AHOLD */
	BACH_SIG_HITM,	/* appended: HITM#, which inquire hit */
	BACH_SIG_SCYC,	/* appended: SCYC, a split locked sequence;
			   accepted, not used (no record field holds it) */
	BACH_NSIG
};

#define BACH_BUS_MAX_UNIT 16 /* bytes per sample: 128 channels */

/* "clk", "ads_n", "a3", ..., "hlda", "ahold", "eads_n", "hitm_n", "scyc" */
const char *bach_sig_name(int sig);
/* The signal named so, or -1. */
int bach_sig_find(const char *name);

/* A channel map as written in a map file, before it meets a capture. */
#define BACH_MAP_NONE (-2)

struct bach_mapentry {
	int sig;
	int level;     /* -1: a channel; 0 or 1: a constant level;
			  BACH_MAP_NONE: not captured */
	char *channel; /* the capture's channel name */
	unsigned line; /* where the map file said so (0: not from a file) */
};

struct bach_mapspec {
	const char *path; /* the map file, for messages */
	struct bach_mapentry *e;
	size_t n;
};

/*
 * Read a map file: `signal = channel`, `signal = low|high` (a constant
 * level) or `signal = none` (not captured, even where a channel has the
 * signal's name) lines, blank lines and `#` comments (a `#` at the start
 * of a line or after a blank; inside a name, as in ADS#, it is the name's).
 * Returns 0, or -1 with a message naming the file and line in err.
 */
int bach_mapspec_load(struct bach_mapspec *spec, const char *path, char *err,
		      size_t errlen);
void bach_mapspec_free(struct bach_mapspec *spec);

/* Where each signal comes from, for one capture. */
struct bach_busmap {
	int chan[BACH_NSIG];	  /* channel index, or -1: not captured */
	uint8_t level[BACH_NSIG]; /* the constant level when not captured */
	bool mapped[BACH_NSIG];	  /* the map file named it */
	/*
	 * A cycle opens where ADS# falls rather than on every clock it is
	 * low: the same on a Pentium bus, whose ADS# lasts one clock, and
	 * one record per strobe on buses whose strobe lasts longer. Set
	 * it after bach_busmap_resolve().
	 */
	bool ads_edge;
	/*
	 * A map line gave the signal a constant level (`ken_n = low`): the
	 * user says the pin never moves, so the decoder may rely on it.
	 * A level only taken by default is not relied on (see
	 * bach_busdec_new()).
	 */
	bool fixed[BACH_NSIG];
};

/*
 * Resolve a map against a capture's channel names (index i = bit i of a
 * sample). A signal the map does not name is taken from a channel of its
 * own default name (case-insensitive), else it is not captured and takes
 * its default level: address bits 0, BE# 0 (all bytes), M/IO# 1, D/C# 1,
 * W/R# 0, CACHE# 1, KEN# 0, HLDA 0, AHOLD 0, the strobes high. spec may
 * be NULL. Errors (a channel the capture lacks, ads_n not captured; two
 * signals on one channel is fine) name the map line.
 */
int bach_busmap_resolve(struct bach_busmap *map,
			const struct bach_mapspec *spec,
			const char *const *names, size_t nnames, char *err,
			size_t errlen);

/*
 * What the decoder assumed and which rules it follows, as lines of text
 * (for a log or stderr): the signals not captured and their levels,
 * whether cycles are followed, and what each missing signal costs.
 * Returns the length written (cut to fit len).
 */
size_t bach_busmap_describe(const struct bach_busmap *map, char *buf,
			    size_t len);

struct bach_busdec_stats {
	uint64_t samples;      /* fed */
	uint64_t clocks;       /* bus clocks seen */
	uint64_t cycles;       /* ADS# seen */
	uint64_t records;      /* emitted */
	uint64_t aborted;      /* attempts aborted by BOFF# (restarted) */
	uint64_t ken_uncached; /* cacheable reads KEN# made noncacheable */
	uint64_t stray_brdy;   /* BRDY# with no cycle open */
	uint64_t overlapped;   /* a cycle opened with the pipeline full */
	uint64_t unfinished;   /* open at the end of the capture */
	/* appended */
	uint64_t off_bus;	 /* ADS# low while the CPU was off the bus
				    (HLDA high, or its outputs floated by
				    BOFF#): another master's cycle or a floating
				    pin, not recorded */
	uint64_t off_bus_clocks; /* clocks the CPU was off the bus */
	uint64_t backoffs;	 /* BOFF# assertions */
	uint64_t ken_unknown;	 /* reads asked with CACHE# and recorded so,
				    KEN# not followed (no cycle tracking) */
	uint64_t inquire_addr;	 /* writebacks under AHOLD recorded at the
				    address of the inquire (EADS#) */
	/* appended */
	uint64_t inquire_unsure; /* ... of which the inquire was the last of
				    several in one AHOLD episode, hitm_n not
				    captured: perhaps not the one that hit */
	uint64_t boff_unsure;	 /* no cycle tracking: cycles open, or perhaps
				    open, at a back-off; each is recorded at
				    its ADS# and, if it was open, again at its
				    restart (at most this many repeats) */
};

struct bach_busdec;

/*
 * A decoder for samples of `unitsize` bytes (1..BACH_BUS_MAX_UNIT). NULL
 * with a message in err when the map uses a channel beyond the sample.
 * It follows cycles when brdy_n is captured and ken_n and na_n are either
 * captured or given a level by a map line (map->fixed); a level taken by
 * default is not enough (bach_busmap_describe() says what it does).
 */
struct bach_busdec *bach_busdec_new(const struct bach_busmap *map,
				    unsigned unitsize, char *err,
				    size_t errlen);
void bach_busdec_free(struct bach_busdec *d);

/*
 * Decode samples[0 .. n) into out (room for `cap` records, at least 2).
 * Returns the records written; *used says how many samples were taken,
 * fewer than n only when out is full or, following BRDY#, has room for
 * just one more (a clock may emit two): call again with the rest.
 *
 * at[j] (room for cap) gets record j's sample: the index, counted from the
 * first sample ever fed (0), of the sample its ADS# was read from: in
 * state mode the clock's own sample, in clock mode the last sample before
 * the rising edge of clk (the pins as they stood at the edge). A cycle
 * that ends clocks later keeps the sample of its ADS#; records leave in
 * the order of their ADS#, so the indexes never go back.
 */
size_t bach_busdec_feed(struct bach_busdec *d, const uint8_t *samples, size_t n,
			size_t *used, uint8_t *out, uint64_t *at, size_t cap);

/*
 * The capture ended: cycles still open (their BRDY#s never came) become
 * records as they stand. Returns the records written (at most cap; call
 * again while it returns cap).
 */
size_t bach_busdec_finish(struct bach_busdec *d, uint8_t *out, uint64_t *at,
			  size_t cap);

void bach_busdec_stats(const struct bach_busdec *d,
		       struct bach_busdec_stats *st);

#endif
