// SPDX-License-Identifier: MIT
/*
 * usb: the board's commands, its IN stream and the bulk transfers that
 * carry it (docs/usb.md, docs/board-protocol.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

#define SYNC_BUF     (64u << 10) /* the handshake's IN reads */
#define SYNC_READ_MS 100
#define SYNC_MAX_NS  10000000000ull /* an old capture's tail: at most 10 s */

static const char *const ack_names[] = {
	[BACH_ACK_OK] = "OK",
	[BACH_ACK_UNKNOWN] = "UNKNOWN (the gateware does not know the command)",
	[BACH_ACK_INVALID] = "INVALID (a value out of range)",
	[BACH_ACK_BUSY] = "BUSY (the board is capturing)",
	[BACH_ACK_UNSUPPORTED] = "UNSUPPORTED (the board lacks the capability)",
};

const char *usb_ack_name(uint32_t result)
{
	if (result >= sizeof(ack_names) / sizeof(*ack_names))
		return "an unknown result";
	return ack_names[result];
}

/* A libusb error as -errno (the library's own name goes in messages). */
static int libusb_err(int r)
{
	switch (r) {
	case LIBUSB_ERROR_NO_DEVICE:
		return -ENODEV;
	case LIBUSB_ERROR_ACCESS:
		return -EACCES;
	case LIBUSB_ERROR_BUSY:
		return -EBUSY;
	case LIBUSB_ERROR_TIMEOUT:
		return -ETIMEDOUT;
	case LIBUSB_ERROR_NO_MEM:
		return -ENOMEM;
	case LIBUSB_ERROR_INTERRUPTED:
		return -EINTR;
	default:
		return -EIO;
	}
}

static const char *const cmd_names[] = {
	[BACH_CMD_IDENTIFY] = "IDENTIFY",
	[BACH_CMD_START] = "START",
	[BACH_CMD_STOP] = "STOP",
	[BACH_CMD_CONFIGURE] = "CONFIGURE",
	[BACH_CMD_STATUS] = "STATUS",
	[BACH_CMD_RESET_COUNTERS] = "RESET_COUNTERS",
};

static const char *cmd_name(uint32_t cmd)
{
	if (cmd >= sizeof(cmd_names) / sizeof(*cmd_names) || !cmd_names[cmd])
		return "?";
	return cmd_names[cmd];
}

/* ---- the bridge ---------------------------------------------------------- */

/*
 * An FTDI bridge starts every packet of the IN endpoint's size with two
 * modem status bytes (and sends them alone when it has nothing): squeeze
 * them out in place. Returns the bytes of the board's stream left.
 */
static size_t ftdi_strip(uint8_t *buf, size_t len, unsigned mps)
{
	size_t out = 0;

	for (size_t off = 0; off < len; off += mps) {
		size_t n = len - off < mps ? len - off : mps;

		if (n <= FTDI_STATUS_BYTES)
			continue;
		memmove(buf + out, buf + off + FTDI_STATUS_BYTES,
			n - FTDI_STATUS_BYTES);
		out += n - FTDI_STATUS_BYTES;
	}
	return out;
}

/* libftdi's names for the requests (ftdi.h) */
#define SIO_RESET	      0x00
#define SIO_SET_FLOW_CTRL     0x02
#define SIO_SET_LATENCY_TIMER 0x09
#define SIO_SET_BITMODE	      0x0b
#define SIO_RESET_SIO	      0
#define SIO_RESET_PURGE_RX    1
#define SIO_RESET_PURGE_TX    2
#define SIO_RTS_CTS_HS	      0x0100
#define BITMODE_RESET	      0x00
#define BITMODE_SYNCFF	      0x40

/*
 * Put channel A of an FTDI bridge into 245 synchronous FIFO mode (FTDI
 * AN_130): reset, bit mode reset then synchronous FIFO, latency timer,
 * RTS/CTS flow control, both buffers purged. A plain board needs nothing.
 */
int usb_bridge_init(struct usb *u)
{
	static const struct {
		uint8_t req;
		uint16_t value, index;
		const char *what;
	} steps[] = {
		{ SIO_RESET, SIO_RESET_SIO, 1, "reset" },
		{ SIO_SET_BITMODE, BITMODE_RESET << 8 | 0xff, 1,
		  "bit mode reset" },
		{ SIO_SET_BITMODE, BITMODE_SYNCFF << 8 | 0xff, 1,
		  "245 synchronous FIFO mode" },
		{ SIO_SET_LATENCY_TIMER, FTDI_LATENCY_MS, 1, "latency timer" },
		{ SIO_SET_FLOW_CTRL, 0, SIO_RTS_CTS_HS | 1,
		  "RTS/CTS flow control" },
		{ SIO_RESET, SIO_RESET_PURGE_RX, 1,
		  "purging its receive buffer" },
		{ SIO_RESET, SIO_RESET_PURGE_TX, 1, "purging its send buffer" },
	};

	if (!u->ftdi)
		return 0;
	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		int r = libusb_control_transfer(
			u->h,
			LIBUSB_REQUEST_TYPE_VENDOR | LIBUSB_RECIPIENT_DEVICE |
				LIBUSB_ENDPOINT_OUT,
			steps[i].req, steps[i].value, steps[i].index, NULL, 0,
			USB_CMD_TIMEOUT_MS);

		if (r < 0)
			return bach_source_error(
				u->src, libusb_err(r),
				"board %s at %s (FTDI bridge): %s: %s",
				u->serial, u->path, steps[i].what,
				libusb_error_name(r));
	}
	return 0;
}

/* ---- the handshake: synchronous commands at open ----------------------- */

struct sync_wait {
	uint32_t cmd;
	bool got;
	uint64_t frames, bytes;	       /* seen while waiting */
	uint32_t result;	       /* the ACK's */
	struct bach_board_identity id; /* the IDENTITY's */
};

static void sync_frame(struct sync_wait *s, const struct bach_frame *f)
{
	s->frames++;
	if (s->got)
		return;
	if ((f->type == BACH_FT_ACK && f->c == s->cmd) ||
	    (f->type == BACH_FT_IDENTITY && s->cmd == BACH_CMD_IDENTIFY) ||
	    (f->type == BACH_FT_STATUS && s->cmd == BACH_CMD_STATUS)) {
		s->result = f->d;
		if (f->type == BACH_FT_IDENTITY)
			bach_frame_identity(f, &s->id);
		s->got = true;
	}
}

static void on_frame(struct usb *u, const struct bach_frame *f);

/* A frame in the stream before START's ACK (our own parser found it). */
static void on_reply(void *ctx, const struct bach_frame *f)
{
	struct usb *u = ctx;

	if (u->sync)
		sync_frame(u->sync, f);
	else if (!u->started) /* after START's ACK: the core's, usb_frame */
		on_frame(u, f);
}

/* Our own parser, as new: its replies go to on_reply(). */
static int replies_reset(struct usb *u)
{
	static const struct bach_parser_ops ops = { .frame = on_reply };

	if (!u->replies)
		u->replies = bach_parser_new(&ops, u);
	if (!u->replies)
		return -ENOMEM;
	bach_parser_reset(u->replies);
	return 0;
}

/*
 * Send cmd and read the IN stream until its reply, discarding everything
 * else (an earlier capture's tail). Up to USB_CMD_TRIES tries, 1 s each.
 */
static int command_sync(struct usb *u, uint32_t cmd,
			const struct bach_board_config *cfg,
			struct sync_wait *s, uint8_t *in)
{
	uint8_t frame[sizeof(u->cmd_buf)];

	s->cmd = cmd;
	s->got = false;
	s->frames = s->bytes = 0;
	for (int tries = 0; tries < USB_CMD_TRIES && !atomic_load(&u->stop);
	     tries++) {
		size_t n =
			bach_frame_build_command(frame, u->cmd_seq++, cmd, cfg);
		uint64_t now = bach_now_ns(),
			 due = now + USB_CMD_TIMEOUT_MS * 1000000ull,
			 limit = now + SYNC_MAX_NS, frames;
		int r, done;

		r = libusb_bulk_transfer(u->h, u->ep_out, frame, (int)n, &done,
					 USB_CMD_TIMEOUT_MS);
		if (r == LIBUSB_ERROR_TIMEOUT)
			continue; /* the board did not take it: again */
		if (r)
			return bach_source_error(u->src, libusb_err(r),
						 "board at %s: sending %s: %s",
						 u->path, cmd_name(cmd),
						 libusb_error_name(r));
		while (!s->got && (now = bach_now_ns()) < due) {
			r = libusb_bulk_transfer(u->h, u->ep_in, in, SYNC_BUF,
						 &done, SYNC_READ_MS);
			if (r == LIBUSB_ERROR_PIPE) {
				libusb_clear_halt(u->h, u->ep_in);
				continue;
			}
			if (r && r != LIBUSB_ERROR_TIMEOUT)
				return bach_source_error(
					u->src, libusb_err(r),
					"board at %s: reading the reply to %s: %s",
					u->path, cmd_name(cmd),
					libusb_error_name(r));
			if (done > 0 && u->ftdi)
				done = (int)ftdi_strip(in, (size_t)done,
						       u->mps);
			if (done <= 0)
				continue;
			frames = s->frames;
			s->bytes += (uint64_t)done;
			bach_parser_feed(u->replies, in, (size_t)done);
			/* an old capture's tail: wait while its frames flow */
			if (s->frames > frames) {
				due = now + USB_CMD_TIMEOUT_MS * 1000000ull;
				if (due > limit)
					due = limit;
			}
		}
		if (s->got)
			return 0;
	}
	if (atomic_load(&u->stop))
		return -EINTR;
	if (s->bytes && !s->frames)
		return bach_source_error(
			u->src, -ETIMEDOUT,
			"board at %s does not answer %s: %llu bytes came, not one frame (an FTDI bridge not in 245 FIFO mode? see the option bridge=)",
			u->path, cmd_name(cmd), (unsigned long long)s->bytes);
	return bach_source_error(
		u->src, -ETIMEDOUT,
		"board at %s does not answer %s (no reply in %d s): is it a bach board with gateware %d.x?",
		u->path, cmd_name(cmd), USB_CMD_TRIES, USB_GW_MAJOR);
}

/* What the configuration needs that the board says it lacks, or NULL. */
static const char *missing_capability(const struct usb *u)
{
	unsigned caps = u->id.capabilities;

	if (u->cfg.policy == BACH_POLICY_STALL && !(caps & BACH_CAP_STALL))
		return "policy=stall needs the hold output (capability STALL), which this board lacks: use policy=drop";
	if (u->cfg.timing && !(caps & BACH_CAP_TIMING))
		return "timing=1 needs capability TIMING, which this board lacks";
	if (u->cfg.test_pattern && !(caps & BACH_CAP_TEST_PATTERN))
		return "pattern= needs capability TEST_PATTERN, which this board lacks";
	if (u->cfg.type_filter && !(caps & BACH_CAP_FILTER))
		return "filter= needs capability FILTER, which this board lacks";
	return NULL;
}

int usb_handshake(struct usb *u)
{
	struct sync_wait *s = malloc(sizeof(*s));
	uint8_t *in = malloc(SYNC_BUF);
	const char *lack;
	int err = -ENOMEM;

	if (!s || !in || replies_reset(u))
		goto out;
	u->sync = s;
	/* whatever an earlier host left running stops; its data is dropped */
	err = command_sync(u, BACH_CMD_STOP, NULL, s, in);
	if (err)
		goto out;
	err = command_sync(u, BACH_CMD_IDENTIFY, NULL, s, in);
	if (err)
		goto out;
	u->id = s->id;
	/* its strings as C strings (a full one loses its last byte) */
	u->id.serial[sizeof(u->id.serial) - 1] = 0;
	u->id.name[sizeof(u->id.name) - 1] = 0;
	if (u->id.gw_major != USB_GW_MAJOR) {
		err = bach_source_error(
			u->src, -EPROTONOSUPPORT,
			"board %s at %s runs gateware %u.%u, but this bach speaks gateware %d.x (protocol %d): flash gateware %d.x, or use a bach built for %u.x",
			u->serial, u->path, u->id.gw_major, u->id.gw_minor,
			USB_GW_MAJOR, BACH_PROTO_VERSION, USB_GW_MAJOR,
			u->id.gw_major);
		goto out;
	}
	lack = missing_capability(u);
	if (lack) {
		err = bach_source_error(
			u->src, -EOPNOTSUPP,
			"board %s at %s (capabilities 0x%x): %s", u->serial,
			u->path, u->id.capabilities, lack);
		goto out;
	}
	err = command_sync(u, BACH_CMD_CONFIGURE, &u->cfg, s, in);
	if (err)
		goto out;
	if (s->result != BACH_ACK_OK)
		err = bach_source_error(
			u->src, -EINVAL, "board %s at %s refused CONFIGURE: %s",
			u->serial, u->path, usb_ack_name(s->result));
out:
	u->sync = NULL;
	free(s);
	free(in);
	return err;
}

/* ---- streaming ---------------------------------------------------------- */

static void fail(struct usb *u, int err)
{
	if (!u->fatal)
		u->fatal = err;
}

static void LIBUSB_CALL in_done(struct libusb_transfer *t);

static void submit(struct usb_xfer *x)
{
	struct usb *u = x->u;
	int r;

	x->t->dev_handle = u->h;
	r = libusb_submit_transfer(x->t);
	if (!r) {
		x->busy = true;
		u->in_flight++;
	} else if (r == LIBUSB_ERROR_NO_DEVICE) {
		u->lost = true;
	} else if (r == LIBUSB_ERROR_NO_MEM) {
		fail(u,
		     bach_source_error(
			     u->src, -ENOMEM,
			     "board at %s: the kernel refused IN transfer %u of %u (%u bytes each): %s: raise /sys/module/usbcore/parameters/usbfs_memory_mb, or lower xfers= or xfer_kib= (docs/usb.md section 6)",
			     u->path, u->in_flight + 1, u->nx, u->xfer_bytes,
			     libusb_error_name(r)));
	} else {
		fail(u, bach_source_error(
				u->src, libusb_err(r),
				"board at %s: cannot submit an IN transfer: %s",
				u->path, libusb_error_name(r)));
	}
}

static void LIBUSB_CALL cmd_done(struct libusb_transfer *t)
{
	struct usb *u = t->user_data;

	u->cmd_busy = false;
	if (t->status == LIBUSB_TRANSFER_NO_DEVICE)
		u->lost = true;
	/* not taken (time-out, error): the reply's time-out resends it */
}

static void send_command(struct usb *u, uint32_t cmd)
{
	size_t n =
		bach_frame_build_command(u->cmd_buf, u->cmd_seq++, cmd, NULL);
	int r;

	libusb_fill_bulk_transfer(u->cmd, u->h, u->ep_out, u->cmd_buf, (int)n,
				  cmd_done, u, USB_CMD_TIMEOUT_MS);
	u->tries = u->pending == cmd ? u->tries + 1 : 1;
	u->pending = cmd;
	u->deadline = bach_now_ns() + USB_CMD_TIMEOUT_MS * 1000000ull;
	r = libusb_submit_transfer(u->cmd);
	if (!r)
		u->cmd_busy = true;
	else if (r == LIBUSB_ERROR_NO_DEVICE)
		u->lost = true;
	else
		fail(u, bach_source_error(u->src, libusb_err(r),
					  "board at %s: cannot send %s: %s",
					  u->path, cmd_name(cmd),
					  libusb_error_name(r)));
}

static void on_ack(struct usb *u, uint32_t cmd, uint32_t result, size_t end)
{
	u->pending = 0;
	switch (cmd) {
	case BACH_CMD_START:
		/* BUSY to a resent START: the first one took effect */
		if (result == BACH_ACK_OK ||
		    (result == BACH_ACK_BUSY && u->tries > 1)) {
			u->started = true;
			u->start_at = end;
			u->state = USB_RUNNING;
			u->next_status = 0; /* the session's first status now */
		} else {
			fail(u, bach_source_error(u->src, -EIO,
						  "board %s refused START: %s",
						  u->serial,
						  usb_ack_name(result)));
		}
		break;
	case BACH_CMD_STOP:
		u->stop_acked = true;
		break;
	default:
		break;
	}
}

/* A frame of the board: a reply, or a data frame by its header. */
static void on_frame(struct usb *u, const struct bach_frame *f)
{
	switch (f->type) {
	case BACH_FT_ACK:
		if (f->c == u->pending)
			on_ack(u, f->c, f->d, f->end);
		break;
	case BACH_FT_STATUS:
		if (u->pending == BACH_CMD_STATUS)
			u->pending = 0;
		if (u->started) {
			struct bach_board_status st;

			bach_frame_status(f, &st);
			u->status_records = st.records;
		}
		break;
	case BACH_FT_DATA:
		if (!u->started)
			break;
		u->data_end = f->a + f->c;
		if (f->flags & BACH_FF_LAST)
			u->board_done = true;
		break;
	default:
		break;
	}
}

/* struct bach_driver.frame: the core's frame parser found a frame. */
void usb_frame(void *priv, const struct bach_frame *f)
{
	on_frame(priv, f);
}

/*
 * The bytes of a completed IN transfer. Until START's ACK our own parser
 * looks for it, and drops the rest (an earlier session's); from the byte
 * after the ACK on, everything goes to the core's frame parser, which
 * hands the replies back (usb_frame). Either way each byte is read once.
 */
static void feed(struct usb *u, const uint8_t *buf, size_t len)
{
	u->last_rx = bach_now_ns();
	if (u->started) {
		u->fed += len;
		bach_source_frames(u->src, buf, len);
		return;
	}
	bach_parser_feed(u->replies, buf, len);
	if (u->started && u->start_at < len) {
		u->fed += len - u->start_at;
		bach_source_frames(u->src, buf + u->start_at,
				   len - u->start_at);
	}
}

static void LIBUSB_CALL in_done(struct libusb_transfer *t)
{
	struct usb_xfer *x = t->user_data;
	struct usb *u = x->u;
	size_t len = t->actual_length > 0 ? (size_t)t->actual_length : 0;

	x->busy = false;
	u->in_flight--;
	if (len && u->ftdi)
		len = ftdi_strip(t->buffer, len, u->mps);
	if (len)
		feed(u, t->buffer, len);
	switch (t->status) {
	case LIBUSB_TRANSFER_COMPLETED:
		if (t->actual_length > 0) {
			/* (an FTDI bridge's status alone says it is alive) */
			u->fails = u->empties = 0;
		} else if (++u->empties == USB_MAX_EMPTY) {
			fail(u,
			     bach_source_error(
				     u->src, -EPROTO,
				     "board %s sends nothing but empty packets (%d IN transfers in a row)",
				     u->serial, USB_MAX_EMPTY));
		}
		break;
	case LIBUSB_TRANSFER_CANCELLED:
		return;		    /* we are stopping, or clearing a halt */
	case LIBUSB_TRANSFER_STALL: /* resubmitted once the halt is cleared */
		u->halted = true;
		u->stalls++;
		if (++u->fails == USB_MAX_FAILS)
			fail(u,
			     bach_source_error(
				     u->src, -EPIPE,
				     "board %s: the IN endpoint stalled %d times in a row; clearing the halt does not help",
				     u->serial, USB_MAX_FAILS));
		return;
	case LIBUSB_TRANSFER_NO_DEVICE:
		u->lost = true;
		return;
	default: /* ERROR, OVERFLOW (babble), TIMED_OUT */
		if (++u->fails == USB_MAX_FAILS)
			fail(u,
			     bach_source_error(
				     u->src, -EIO,
				     "board %s: %d IN transfers in a row failed (the last: %s)",
				     u->serial, USB_MAX_FAILS,
				     t->status == LIBUSB_TRANSFER_OVERFLOW
					     ? "overflow (the board sent more than asked)"
					     : "transfer error"));
		break;
	}
	if (u->state != USB_DONE && !u->halted && !u->lost && !u->fatal)
		submit(x);
}

static void cancel_all(struct usb *u)
{
	for (unsigned i = 0; i < u->nx; i++)
		if (u->x[i].busy)
			libusb_cancel_transfer(u->x[i].t);
	if (u->cmd_busy)
		libusb_cancel_transfer(u->cmd);
}

/* Link speed -> bytes per second it carries (docs/usb.md, section 6). */
static uint64_t link_rate(int speed)
{
	switch (speed) {
	case LIBUSB_SPEED_LOW:
	case LIBUSB_SPEED_FULL:
		return 1000000;
	case LIBUSB_SPEED_HIGH:
	case LIBUSB_SPEED_UNKNOWN:
		return 40000000;
	default: /* SuperSpeed and above */
		return 350000000;
	}
}

/* usbcore's budget for all usbfs buffers, bytes (kernel default 16 MiB). */
static uint64_t usbfs_budget(void)
{
	FILE *f = fopen("/sys/module/usbcore/parameters/usbfs_memory_mb", "r");
	unsigned long long mb = 16;

	if (f) {
		if (fscanf(f, "%llu", &mb) != 1)
			mb = 16;
		fclose(f);
	}
	return mb ? mb << 20 : UINT64_MAX;
}

int usb_alloc_transfers(struct usb *u)
{
	uint64_t rate = link_rate(u->speed), budget = usbfs_budget() / 4 * 3;
	uint64_t size = u->xfer_bytes, n = u->nxfer;

	/* about 10 ms of data each, 0.5 s in all, within usbfs's budget */
	if (!size) {
		size = rate / 100;
		if (size > budget / 8)
			size = budget / 8;
		size = size / (16 << 10) * (16 << 10);
		if (size < (16 << 10))
			size = 16 << 10;
	}
	if (!n) {
		n = rate / 2 / size;
		if (n * size > budget)
			n = budget / size;
		if (n < 4)
			n = 4;
		if (n > 1024)
			n = 1024;
	}
	if (n * size > usbfs_budget())
		return bach_source_error(
			u->src, -ENOMEM,
			"%llu transfers of %llu bytes are more than the kernel lets usbfs hold (%llu MiB: /sys/module/usbcore/parameters/usbfs_memory_mb, docs/usb.md section 6)",
			(unsigned long long)n, (unsigned long long)size,
			(unsigned long long)(usbfs_budget() >> 20));
	u->x = calloc(n, sizeof(*u->x));
	u->cmd = libusb_alloc_transfer(0);
	if (!u->x || !u->cmd)
		return -ENOMEM;
	u->nx = (unsigned)n;
	u->xfer_bytes = (unsigned)size;
	for (unsigned i = 0; i < u->nx; i++) {
		struct usb_xfer *x = &u->x[i];
		void *buf;

		x->u = u;
		x->t = libusb_alloc_transfer(0);
		if (!x->t || posix_memalign(&buf, 4096, size))
			return -ENOMEM;
		libusb_fill_bulk_transfer(x->t, u->h, u->ep_in, buf, (int)size,
					  in_done, x, 0);
	}
	return 0;
}

void usb_free_transfers(struct usb *u)
{
	if (u->in_flight || u->cmd_busy)
		return; /* never free what the kernel may still write */
	for (unsigned i = 0; u->x && i < u->nx; i++) {
		if (u->x[i].t) {
			free(u->x[i].t->buffer);
			libusb_free_transfer(u->x[i].t);
		}
	}
	free(u->x);
	u->x = NULL;
	u->nx = 0;
	libusb_free_transfer(u->cmd);
	u->cmd = NULL;
}

/*
 * The endpoint stalled: every IN transfer comes back (cancelled), then
 * CLEAR_HALT, then all go out again in order; the board sends on from
 * where it stopped, and the frame parser accounts for anything lost.
 */
static void clear_halt(struct usb *u)
{
	int r;

	if (u->in_flight) {
		cancel_all(u);
		return;
	}
	r = libusb_clear_halt(u->h, u->ep_in);
	if (r == LIBUSB_ERROR_NO_DEVICE) {
		u->lost = true;
		return;
	}
	if (r) {
		fail(u, bach_source_error(
				u->src, libusb_err(r),
				"board %s: CLEAR_HALT on the IN endpoint: %s",
				u->serial, libusb_error_name(r)));
		return;
	}
	if (u->stalls <= 5 || u->stalls % 1000 == 0)
		bach_source_warn(
			u->src,
			"board %s: the IN endpoint stalled (%llu so far); halt cleared, capture goes on",
			u->serial, (unsigned long long)u->stalls);
	u->halted = false;
	for (unsigned i = 0; i < u->nx && !u->lost && !u->fatal; i++)
		if (!u->x[i].busy)
			submit(&u->x[i]);
}

/* What the session does next, once libusb's events are handled. */
static void step(struct usb *u, uint64_t now)
{
	uint64_t ms = 1000000ull;

	if (u->lost || u->fatal) {
		if (u->state != USB_DONE) {
			u->state = USB_DONE;
			cancel_all(u);
		}
		return;
	}
	if (u->halted && u->state != USB_DONE) {
		clear_halt(u);
		return;
	}
	/* a command without its reply */
	if (u->pending && !u->cmd_busy && now >= u->deadline) {
		uint32_t cmd = u->pending;

		if ((cmd == BACH_CMD_START || cmd == BACH_CMD_STOP) &&
		    u->tries < USB_CMD_TRIES) {
			send_command(u, cmd);
		} else if (cmd == BACH_CMD_START && atomic_load(&u->stop)) {
			u->state = USB_DONE; /* stopped before it started */
			cancel_all(u);
			return;
		} else if (cmd == BACH_CMD_START) {
			fail(u,
			     bach_source_error(
				     u->src, -ETIMEDOUT,
				     "board %s does not acknowledge START (%d tries)",
				     u->serial, USB_CMD_TRIES));
		} else if (cmd == BACH_CMD_STOP) {
			bach_source_warn(
				u->src,
				"board %s does not acknowledge STOP (%d tries): ending the capture without it",
				u->serial, USB_CMD_TRIES);
			u->stop_acked = true;
			u->pending = 0;
		} else {
			u->pending = 0; /* a STATUS unanswered: the silence
					   check counts */
		}
	}
	if ((u->state == USB_RUNNING || u->state == USB_STOPPING) &&
	    now - u->last_rx > u->timeout_ms * ms) {
		fail(u,
		     bach_source_error(
			     u->src, -ETIMEDOUT,
			     "board %s at %s is silent: not a byte in %u s, though STATUS was asked every %u ms",
			     u->serial, u->path, u->timeout_ms / 1000,
			     u->status_ms));
		return;
	}
	switch (u->state) {
	case USB_RUNNING:
		if (u->pending || u->cmd_busy)
			break;
		if (atomic_load(&u->stop) || u->board_done) {
			send_command(u, BACH_CMD_STOP);
			u->state = USB_STOPPING;
		} else if (now >= u->next_status) {
			send_command(u, BACH_CMD_STATUS);
			u->next_status = now + u->status_ms * ms;
		}
		break;
	case USB_STOPPING:
		if (u->stop_acked) {
			u->state = USB_DONE;
			cancel_all(u);
		}
		break;
	default:
		break;
	}
}

int usb_stream(struct usb *u)
{
	uint64_t drain_until = 0;

	u->state = USB_STARTING;
	u->started = u->board_done = u->stop_acked = false;
	u->lost = u->halted = false;
	u->fatal = 0;
	u->fails = u->empties = 0;
	u->pending = 0;
	u->status_records = 0;
	u->fed = u->data_end = 0;
	if (replies_reset(u))
		return -ENOMEM;
	for (unsigned i = 0; i < u->nx && !u->lost && !u->fatal; i++)
		submit(&u->x[i]);
	if (!u->lost && !u->fatal)
		send_command(u, BACH_CMD_START);
	u->last_rx = bach_now_ns();
	while (u->in_flight || u->cmd_busy || u->state != USB_DONE) {
		struct timeval tv = { 0, 50000 };
		uint64_t now;
		int r;

		r = libusb_handle_events_timeout_completed(u->ctx, &tv, NULL);
		if (r && r != LIBUSB_ERROR_INTERRUPTED &&
		    r != LIBUSB_ERROR_TIMEOUT)
			fail(u, bach_source_error(u->src, libusb_err(r),
						  "libusb event handling: %s",
						  libusb_error_name(r)));
		now = bach_now_ns();
		step(u, now);
		if (u->state == USB_DONE) {
			if (!drain_until)
				drain_until = now + USB_DRAIN_MS * 1000000ull;
			else if (now > drain_until) {
				fail(u,
				     bach_source_error(
					     u->src, -EIO,
					     "board %s: %u transfers still out %d s after cancelling them",
					     u->serial, u->in_flight,
					     USB_DRAIN_MS / 1000));
				break;
			}
		}
		/* the source is quiet: what we delivered goes on */
		bach_source_flush(u->src);
	}
	if (u->fatal)
		return u->fatal;
	return 0;
}
