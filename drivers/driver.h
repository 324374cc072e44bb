/* SPDX-License-Identifier: MIT */
/*
 * The driver contract: how a source of bus cycles (a capture board, a
 * logic analyzer, a file being replayed, the fake board) plugs into the
 * capture pipeline (docs/design.md section 3). Every driver is one `const
 * struct bach_driver` registered in drivers/registry.c.
 *
 * Threads. check(), open() and close() run on the main thread. run() runs on
 * the acquisition thread the core starts, and is the only member that delivers
 * data. stop() is called from the main thread while run() is running, and
 * must make run() return soon; it must not block.
 *
 * State. The core allocates priv_size zeroed bytes for the driver and
 * passes them to every member; a driver keeps no global state.
 *
 * Options. Each driver describes its options once, in `options` (the
 * table of lib/options.h: key, type, range, default, help). The core
 * parses the user's KEY=VALUE list (--option, the [driver] section of the
 * configuration) against it, and lists and documents the options from it
 * (bachd --list-drivers, --help): an unknown key, a bad value or a missing
 * required option is refused, naming it, before open() is called, and
 * bachd --check-config refuses it without opening anything.
 *
 * Errors. Members return 0 or -errno. A driver explains a failure with
 * bach_source_error() (the message names the device or file and what went
 * wrong, with the library's own name for the error where there is one);
 * the core logs it and the capture ends with exit status 4. A driver that
 * rides out an unplug reports it with bach_source_event("device_lost")
 * and ("device_back"): the core closes the segment at the loss.
 */
#ifndef BACH_DRIVER_H
#define BACH_DRIVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/bus/busdecode.h"
#include "lib/bus/frame.h"
#include "lib/options.h"

struct bach_source;

struct bach_driver {
	const char *name;
	const char *summary;
	/*
	 * The options, ended by an entry with key NULL; NULL if it takes
	 * none. Index the values open() gets with an enum in the table's
	 * order (designated initializers keep the two in step).
	 */
	const struct bach_optdesc *options;
	size_t priv_size;

	/*
	 * Checks that need several options together (timeout against
	 * status_ms), after each has passed its own: 0, or -EINVAL with the
	 * reason in msg ("option timeout: ..."). Touches no device or file:
	 * --check-config runs it too. Optional.
	 */
	int (*check)(const struct bach_optval *opts, char *msg, size_t cap);

	/*
	 * Open the device or file with the options already parsed: opts[i]
	 * is the value of options[i] (set when given or defaulted; unset
	 * when absent without a default), checked by check(). The array
	 * is the core's and lives only during open(); the strings it points
	 * to (s, list[]) stay valid until close() returns, so the driver may
	 * keep those pointers. Describe the device with
	 * bach_source_identity(). Required.
	 */
	int (*open)(struct bach_source *src, void *priv,
		    const struct bach_optval *opts);

	/*
	 * Acquire until the data ends (return 0), until stop() (return 0),
	 * or until a failure (-errno). Deliver through bach_source_frames(),
	 * bach_source_records() and bach_source_gap(). Required.
	 */
	int (*run)(struct bach_source *src, void *priv);

	/* Ask run() to return soon. Required. */
	void (*stop)(void *priv);

	/*
	 * Release everything open() acquired; also called after open()
	 * failed half-way, so it must cope with any part left unset (the
	 * private state starts zeroed). Optional.
	 */
	void (*close)(void *priv);

	/*
	 * A good board frame, of any type, that the core's frame parser found
	 * in the bytes run() gave bach_source_frames(): the replies to the
	 * driver's commands (ACK, STATUS, IDENTITY) and every data frame (its
	 * header; its records go to the capture), in stream order, each
	 * before its records are delivered. A driver that commands its board
	 * learns of the replies this way, without reading the stream twice.
	 * Called on the acquisition thread, from within
	 * bach_source_frames(); f is valid during the call only, and f->end
	 * is an offset in the bytes given to that call. It must not call
	 * bach_source_frames(); of the services below only
	 * bach_source_error(), bach_source_warn() and bach_source_flush()
	 * (replay with pace=original sleeps here until a data frame is due).
	 * Optional.
	 */
	void (*frame)(void *priv, const struct bach_frame *f);
};

/* NULL-terminated table of every driver built in. */
extern const struct bach_driver *const bach_drivers[];
const struct bach_driver *bach_driver_find(const char *name);

/*
 * Parse opts for drv into vals (bach_opt_count(drv->options) entries, or
 * at least one) and run its check(): 0, or -EINVAL (-ENOMEM) with the
 * message in msg ("FILE:LINE: option rate: ..."). Free vals with
 * bach_opts_free() either way. What capture_open() and --check-config do.
 */
int bach_driver_options(const struct bach_driver *drv,
			const struct bach_option *opts, size_t n,
			struct bach_optval *vals, char *msg, size_t cap);

/* Every driver, its summary and its options' help, as --list-drivers. */
void bach_drivers_print(FILE *f);

/* ---- services the core offers drivers ---------------------------------- */

/*
 * Board frames as bytes arrive (in pieces of any size): the frame parser
 * turns them into records and exactly counted gaps.
 */
void bach_source_frames(struct bach_source *src, const uint8_t *buf,
			size_t len);

/*
 * The frame that the bytes given to bach_source_frames() so far end
 * inside of, for a driver accounting for records that went with its
 * device: its header in *h, and the bytes of it given so far (which may
 * go back to before the device was lost and found again). 0 when no
 * frame is begun or its header has not come whole (bach_parser_pending()).
 */
size_t bach_source_frames_pending(struct bach_source *src,
				  struct bach_frame *h);

/*
 * How the bytes given to bach_source_frames() end, for a driver whose
 * stream has ended (a file): bach_parser_tail().
 */
void bach_source_frames_tail(struct bach_source *src,
			     struct bach_parser_tail *t);

/*
 * A driver about to wait for data calls this: records it delivered that
 * are still gathering into a block go on to the disk once they have
 * waited 200 ms, so a quiet source loses nothing to a crash.
 */
void bach_source_flush(struct bach_source *src);

/* Whole records from a source that already has them (replay of a trace). */
void bach_source_records(struct bach_source *src, const uint8_t *recs,
			 size_t n);

/*
 * The same with each record's bus clock (clocks[i] for record i; NULL:
 * none), kept in the segment's timing sidecar (docs/formats.md 3.2).
 */
void bach_source_timed_records(struct bach_source *src, const uint8_t *recs,
			       const uint64_t *clocks, size_t n);

/* Records lost at the current position, and why. */
void bach_source_gap(struct bach_source *src, uint64_t lost,
		     enum bach_gap_cause cause);

/*
 * Under the stall policy a full ring holds the source back: true when the
 * last delivery had to wait (the fake board counts that as a stall, as the
 * real board counts holding the CPU).
 */
bool bach_source_stalled(struct bach_source *src);

/* The device's identity for the manifest, a JSON object's members. */
void bach_source_identity(struct bach_source *src, const char *json_members);

/*
 * Provenance, for a driver that replays a recorded capture: from open(),
 * the members of the started event's "source" object (JSON, escaped by
 * the driver; copied) and the labels that capture had, which the new one
 * inherits: a label given to the new capture itself keeps its own value
 * (docs/bachd.md section 3, replay). Strings are copied.
 */
struct bach_label {
	const char *key, *value;
};
void bach_source_origin(struct bach_source *src, const char *source_members,
			const struct bach_label *labels, size_t nlabels);

/*
 * A mark carried over from a recorded capture (replay): a user's mark
 * (text, and source as that capture's event said it: "ctl", "signal",
 * "" for none) or, with rule set, an in-band marker's match (rec: the
 * record, count: the matches the event stands for, the last last_off
 * records after it). It stands before the next record delivered, with
 * "replayed":true. m is the driver's, and must stay valid until close()
 * returns (the writer thread reads it); under any policy the call waits
 * for room in the ring rather than lose the mark.
 */
struct bach_source_mark {
	const char *source;
	const char *text;
	const char *rule;
	uint8_t rec[6];
	uint64_t count, last_off;
};
void bach_source_mark(struct bach_source *src,
		      const struct bach_source_mark *m);

/* Board status frames pass through here into the daemon's status. */
void bach_source_board_status(struct bach_source *src,
			      const struct bach_board_status *st);

/*
 * The bus decoder's summary of what a driver decoded (one pass of a file,
 * or a live acquisition), when it is done with it. The core adds the
 * passes up, logs the totals at notice level when the acquisition ends and
 * writes them into the ended event (docs/bachd.md section 5).
 */
void bach_source_decoded(struct bach_source *src,
			 const struct bach_busdec_stats *st);

/* Manifest events: "device lost", "device back". */
void bach_source_event(struct bach_source *src, const char *event,
		       const char *detail);

/* The monotonic clock in ns. */
uint64_t bach_now_ns(void);

/*
 * Sleep until bach_now_ns() reaches due, looking at *stop at least every
 * 20 ms, so that pacing never keeps run() from returning after stop().
 */
void bach_sleep_until(uint64_t due, const atomic_bool *stop);

/* JSON string contents for s (no quotes), for identities; cut to fit. */
void bach_json_escape(char *dst, size_t cap, const char *s);

/* Log a driver failure; returns err. */
__attribute__((format(printf, 3, 4))) int
bach_source_error(struct bach_source *src, int err, const char *fmt, ...);

/*
 * Log something the driver rode out (a cleared STALL, a retried command):
 * a warning, not an error. Not for the hot path: rate-limit repeats.
 */
__attribute__((format(printf, 2, 3))) void
bach_source_warn(struct bach_source *src, const char *fmt, ...);

/*
 * Log something a user should see though nothing went wrong (a summary at
 * the end of an acquisition): notice level. Not for the hot path.
 */
__attribute__((format(printf, 2, 3))) void
bach_source_notice(struct bach_source *src, const char *fmt, ...);

#endif
