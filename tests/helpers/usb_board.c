// SPDX-License-Identifier: MIT
/*
 * usb_board: the capture board emulated on usbfs, for testing the usb
 * driver's real libusb path without hardware (docs/usb.md, section 7).
 *
 *   usb_board [KEY=VALUE]... [--pid-file F] -- PROGRAM [ARG]...
 *   usb_board --lfsr N FILE      the LFSR test pattern's first N records
 *   usb_board --check            exit 0 if umockdev can run here, 77 if not
 *
 * It builds a umockdev testbed holding one board (a USB device with the
 * descriptors of docs/board-protocol.md section 1), runs PROGRAM under
 * umockdev's preload library (so libusb in PROGRAM sees the board in
 * sysfs and opens its usbfs node), and answers every usbfs ioctl of that
 * node: SUBMITURB, REAPURB(NDELAY), DISCARDURB, CLAIMINTERFACE,
 * CLEAR_HALT, control transfers for string descriptors. Bulk OUT bytes go
 * to the board model (drivers/board_model.c, the fake driver's board) as
 * commands; bulk IN URBs are filled from what the model sends back, so a
 * capture through libusb can be compared with `bach gen` record for
 * record. It exits with PROGRAM's status and says on stderr what it did,
 * and, last, how much CPU it and PROGRAM used.
 *
 * Options are the fake driver's (records, seed, rate, frame, drop_every,
 * corrupt_every, overflow_every, stall_every, disconnect, status_every),
 * where disconnect=R:T really unplugs the device (a uevent, every URB
 * failing as on a real unplug) and plugs it back T s later, powered off
 * in between; and these of the emulation:
 *
 *   serial=S        serial number (default EMU-<seed>)
 *   gw=M.N          gateware version in the identity (default 1.0)
 *   caps=MASK       capabilities (default 0xf: timing, stall, patterns, filter)
 *   speed=480|5000  high speed (512-byte packets) or SuperSpeed
 *   port=P          the board sits on bus 1, port P (path 1-P; default 2)
 *   second=S        a second board, serial S, on the next port
 *   replug=0        after disconnect=R:T, stay unplugged
 *   running=1       the board is capturing when the host first opens it
 *                   (an earlier host left it running)
 *   bridge=ftdi     the board's USB side is an FTDI FT2232H in 245
 *                   synchronous FIFO mode (fpga/boards): bcdDevice 0700,
 *                   two interfaces, channel A on bulk IN 0x81 and OUT
 *                   0x02; nothing flows until the host sets that mode
 *                   (vendor request SET_BITMODE 0x40); every IN packet
 *                   starts with two modem status bytes, which come alone
 *                   once per latency timer when there is nothing to send
 *   cut=B           unplug B bytes before the end of the frame that
 *                   crossed R (the host gets part of a frame)
 *   halt=B:K        once B bytes went in, the IN endpoint halts (STALL);
 *                   each CLEAR_HALT lets one more URB fail, K in all
 *   short=S         end every IN URB after 1..S bytes (short packets)
 *   silent_at=R     after R records the board answers nothing at all
 *   mem=B           IN URBs of more than B bytes in all are refused with
 *                   ENOMEM (usbcore's usbfs_memory_mb)
 *
 * poll() on an emulated node always reports it ready, where the kernel
 * would wake the host only when an URB completes; so a REAPURBNDELAY
 * with nothing to reap is held here for up to 20 ms (completed at once
 * when data comes), standing in for the kernel's wait.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib.h>
#include <linux/usbdevice_fs.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <umockdev.h>
#include <unistd.h>

#include "bach/bytes.h"
#include "bach/record.h"
#include "board_model.h"
#include "drivers/driver.h"
#include "lib/bus/frame.h"
#include "lib/exit.h"

#define HOLD_NS 20000000ull /* a REAP waits this long for data */
#define TICK_MS 1

struct urb {
	UMockdevIoctlData *data; /* struct usbdevfs_urb, resolved */
	unsigned char type, ep;
	int len; /* buffer_length */
};

/* One appearance of a board on the bus: a device node and its URBs. */
struct plug {
	struct board *b;
	unsigned devnum;
	char devnode[64];
	bool gone;		   /* unplugged: everything fails */
	GQueue in_pending;	   /* IN URBs waiting for data */
	GQueue out_pending;	   /* OUT URBs of a silent board */
	GQueue done;		   /* completed, to be reaped in order */
	UMockdevIoctlClient *held; /* a REAP waiting for something */
	uint64_t held_since;
};

struct board {
	struct emu *e;
	struct board_model m;
	char serial[17];
	unsigned port;
	char syspath[128];
	UMockdevIoctlBase *handler;
	struct plug *plug; /* present, or NULL */
	GList *old_plugs;

	/* the IN byte stream: [head, tail) made, not yet sent */
	uint8_t *out;
	size_t head, tail, cap;
	uint64_t made, sent;	/* stream offsets */
	uint64_t unplug_at;	/* offset: unplug there (or ~0) */
	uint64_t silent_at_off; /* offset: silent from there (or ~0) */
	bool silent;
	uint64_t hold_off, hold_until; /* a stall: held from offset until */
	bool halted;
	unsigned halts_left;
	bool halt_armed;
	uint32_t prng;
	/* FTDI bridge */
	unsigned bitmode, latency_ms;
	uint64_t last_status; /* ns: the last status-only packet */
};

struct emu {
	UMockdevTestbed *tb;
	GMainLoop *loop;
	GMainContext *worker; /* where umockdev calls us */
	GSource *tick;
	GMutex mu;
	struct board boards[2];
	unsigned nboards;
	struct board_opts o;
	unsigned gw_major, gw_minor, caps, speed;
	bool replug;
	bool running;
	bool ftdi;
	uint64_t cut;
	uint64_t halt_at;
	unsigned halt_count;
	unsigned short_max;
	uint64_t silent_at;
	uint64_t mem;	 /* usbfs's budget for IN URBs, bytes */
	unsigned devnum; /* the last address given out */
	GPid child;
	int status;
};

static void vnote(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));
static void vnote(const char *fmt, va_list ap)
{
	fputs("usb_board: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(fmt, ap);
	va_end(ap);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

/* ---- descriptors ------------------------------------------------------- */

/* Device descriptor and configuration: one vendor interface, two bulk EPs. */
static size_t descriptors(const struct emu *e, uint8_t *d)
{
	bool ss = e->speed >= 5000;
	unsigned mps = ss ? 1024 : 512;
	size_t n = 0, cfg;
	/* an FT2232H: channel A IN 0x81, OUT 0x02; channel B 0x83, 0x04 */
	static const uint8_t plain_eps[] = { 0x01, 0x81 },
			     ftdi_eps[] = { 0x81, 0x02, 0x83, 0x04 };
	const uint8_t *eps = e->ftdi ? ftdi_eps : plain_eps;
	unsigned nif = e->ftdi ? 2 : 1;

	/* device */
	d[n++] = 18;
	d[n++] = 1;
	bach_put_le16(d + n, ss ? 0x0300 : 0x0200);
	n += 2;
	d[n++] = 0; /* class: per interface */
	d[n++] = 0;
	d[n++] = 0;
	d[n++] = ss ? 9 : 64; /* ep0 packet size (2^9 at SuperSpeed) */
	bach_put_le16(d + n, 0x1209);
	n += 2;
	bach_put_le16(d + n, 0x4243);
	n += 2;
	bach_put_le16(d + n, e->ftdi ? 0x0700 : 0x0100);
	n += 2;
	d[n++] = 1; /* iManufacturer */
	d[n++] = 2; /* iProduct */
	d[n++] = 3; /* iSerialNumber */
	d[n++] = 1;
	/* configuration */
	cfg = n;
	d[n++] = 9;
	d[n++] = 2;
	n += 2; /* wTotalLength, below */
	d[n++] = (uint8_t)nif;
	d[n++] = 1;
	d[n++] = 0;
	d[n++] = 0x80;
	d[n++] = 50;
	for (unsigned f = 0; f < nif; f++) {
		/* vendor class, two bulk endpoints */
		d[n++] = 9;
		d[n++] = 4;
		d[n++] = (uint8_t)f;
		d[n++] = 0;
		d[n++] = 2;
		d[n++] = 0xff;
		d[n++] = 0xff;
		d[n++] = 0xff;
		d[n++] = 0;
		for (int i = 0; i < 2; i++) {
			d[n++] = 7;
			d[n++] = 5;
			d[n++] = eps[2 * f + (unsigned)i];
			d[n++] = 2;
			bach_put_le16(d + n, (uint16_t)mps);
			n += 2;
			d[n++] = 0;
			if (ss) { /* SuperSpeed endpoint companion */
				d[n++] = 6;
				d[n++] = 0x30;
				d[n++] = 15; /* bursts of 16 */
				d[n++] = 0;
				d[n++] = 0;
				d[n++] = 0;
			}
		}
	}
	bach_put_le16(d + cfg + 2, (uint16_t)(n - cfg));
	return n;
}

static size_t string_descriptor(const struct board *b, unsigned idx, uint8_t *d,
				size_t cap)
{
	const char *s = idx == 1   ? "bach project"
			: idx == 2 ? "bach capture board (emulated)"
			: idx == 3 ? b->serial
				   : NULL;
	size_t n = 2;

	if (idx == 0) { /* languages: en-US */
		d[0] = 4;
		d[1] = 3;
		bach_put_le16(d + 2, 0x0409);
		return 4 < cap ? 4 : cap;
	}
	if (!s)
		return 0;
	for (; *s && n + 2 <= 255; s++, n += 2)
		bach_put_le16(d + n, (uint8_t)*s);
	d[0] = (uint8_t)n;
	d[1] = 3;
	return n < cap ? n : cap;
}

/* ---- plugging ---------------------------------------------------------- */

static void plug_in(struct board *b)
{
	struct emu *e = b->e;
	uint8_t desc[128];
	size_t dn = descriptors(e, desc);
	GString *s = g_string_new(NULL);
	struct plug *p = g_new0(struct plug, 1);
	GError *err = NULL;
	char sys[160];

	p->b = b;
	p->devnum = ++e->devnum; /* addresses on bus 1 are never reused */
	snprintf(p->devnode, sizeof(p->devnode), "/dev/bus/usb/001/%03u",
		 p->devnum);
	g_queue_init(&p->in_pending);
	g_queue_init(&p->out_pending);
	g_queue_init(&p->done);

	/* a board powers up stopped, unconfigured, counting from zero */
	g_mutex_lock(&e->mu);
	board_power_on(&b->m);
	b->head = b->tail = 0;
	b->made = b->sent = 0;
	b->unplug_at = b->silent_at_off = b->hold_off = UINT64_MAX;
	b->hold_until = 0;
	b->halted = false;
	b->bitmode = 0; /* an FTDI chip wakes up as a serial port */
	b->latency_ms = 16;
	b->plug = p;
	if (e->running)
		board_start(&b->m); /* an earlier host's capture goes on */
	g_mutex_unlock(&e->mu);

	snprintf(sys, sizeof(sys), "/sys%s", b->syspath);
	/* the ioctl handler first: the program may open the node at once */
	if (!umockdev_testbed_attach_ioctl(e->tb, p->devnode, b->handler, &err))
		die("attach_ioctl %s: %s", p->devnode, err->message);
	g_string_append_printf(
		s,
		"P: %s\nN: bus/usb/001/%03u\n"
		"E: SUBSYSTEM=usb\nE: DEVTYPE=usb_device\nE: DRIVER=usb\n"
		"E: BUSNUM=001\nE: DEVNUM=%03u\nE: DEVNAME=%s\n"
		"E: ID_SERIAL_SHORT=%s\n"
		"A: busnum=1\\n\nA: devnum=%u\\n\nA: speed=%u\\n\n"
		"A: bConfigurationValue=1\\n\nA: idVendor=1209\\n\n"
		"A: idProduct=4243\\n\nA: serial=%s\\n\n"
		"A: devpath=%u\\n\nH: descriptors=",
		b->syspath, p->devnum, p->devnum, p->devnode, b->serial,
		p->devnum, e->speed, b->serial, b->port);
	for (size_t i = 0; i < dn; i++)
		g_string_append_printf(s, "%02x", desc[i]);
	g_string_append(s, "\n");
	if (!umockdev_testbed_add_from_string(e->tb, s->str, &err))
		die("add_from_string: %s", err->message);
	g_string_free(s, TRUE);
	umockdev_testbed_uevent(e->tb, sys, "add");
	note("board %s plugged in at 1-%u (%s)", b->serial, b->port,
	     p->devnode);
}

static gboolean replug_cb(gpointer data)
{
	plug_in(data);
	return G_SOURCE_REMOVE;
}

/* Main thread: the device leaves sysfs (a remove uevent). */
static gboolean unplug_cb(gpointer data)
{
	struct board *b = data;

	char sys[160];

	snprintf(sys, sizeof(sys), "/sys%s", b->syspath);
	umockdev_testbed_uevent(b->e->tb, sys, "remove");
	umockdev_testbed_remove_device(b->e->tb, sys);
	note("board %s unplugged after %llu bytes", b->serial,
	     (unsigned long long)b->sent);
	if (b->e->replug && b->m.o.disconnect_secs)
		g_timeout_add_seconds(b->m.o.disconnect_secs, replug_cb, b);
	else if (b->e->replug)
		g_idle_add(replug_cb, b);
	return G_SOURCE_REMOVE;
}

static void finish_urb(struct plug *p, struct urb *u, int status, int actual)
{
	struct usbdevfs_urb *k = (void *)u->data->data;

	k->status = status;
	k->actual_length = actual;
	g_queue_push_tail(&p->done, u);
}

/* Worker: everything in flight fails as on a real disconnect. */
static void unplug(struct board *b)
{
	struct plug *p = b->plug;
	struct urb *u;

	p->gone = true;
	while ((u = g_queue_pop_head(&p->in_pending)))
		finish_urb(p, u, -ESHUTDOWN, 0);
	while ((u = g_queue_pop_head(&p->out_pending)))
		finish_urb(p, u, -ESHUTDOWN, 0);
	b->plug = NULL;
	b->old_plugs = g_list_prepend(b->old_plugs, p);
	b->m.running = false;
	g_idle_add(unplug_cb, b);
}

/* ---- the IN stream ----------------------------------------------------- */

static void room(struct board *b, size_t n)
{
	if (b->head && b->head == b->tail)
		b->head = b->tail = 0;
	if (b->tail + n <= b->cap)
		return;
	if (b->head) {
		memmove(b->out, b->out + b->head, b->tail - b->head);
		b->tail -= b->head;
		b->head = 0;
	}
	if (b->tail + n > b->cap) {
		b->cap = (b->tail + n) * 2;
		b->out = g_realloc(b->out, b->cap);
	}
}

static void emit(void *ctx, const uint8_t *f, size_t n)
{
	struct board *b = ctx;

	room(b, n);
	memcpy(b->out + b->tail, f, n);
	b->tail += n;
	b->made += n;
}

static void board_nap(void *ctx, uint64_t ns)
{
	struct board *b = ctx;

	/* what the board sends after this waits out the stall */
	b->hold_off = b->made;
	b->hold_until = bach_now_ns() + ns;
}

/* Let the board sample until want bytes wait to be sent, or it cannot. */
static void produce(struct board *b, size_t want)
{
	struct emu *e = b->e;
	struct board_model *m = &b->m;

	while (b->tail - b->head < want && m->running && !b->silent) {
		uint64_t now = bach_now_ns(), due = board_due_ns(m);
		unsigned ev;
		size_t n;

		if (b->hold_until > now || (due && due > now))
			break;
		if (!board_sampling(m)) {
			/* sampled all its records: LAST, final status, stopped
			 */
			room(b, BOARD_FINISH_ROOM);
			n = board_finish(m, b->out + b->tail);
			b->tail += n;
			b->made += n;
			break;
		}
		room(b, board_step_room(m));
		n = board_step(m, b->out + b->tail, &ev);
		b->tail += n;
		b->made += n;
		if (ev & BOARD_EV_DISCONNECT) {
			b->unplug_at = b->made > e->cut ? b->made - e->cut : 0;
			if (b->unplug_at < b->sent)
				b->unplug_at = b->sent;
		}
		if (e->silent_at && m->index >= e->silent_at &&
		    b->silent_at_off == UINT64_MAX)
			b->silent_at_off = b->made;
	}
}

/* Bytes that may go out now, at most cap. */
static size_t sendable(struct board *b, size_t cap)
{
	uint64_t end = b->made, now = bach_now_ns();

	if (b->unplug_at < end)
		end = b->unplug_at;
	if (b->silent_at_off < end)
		end = b->silent_at_off;
	if (b->hold_until > now && b->hold_off < end)
		end = b->hold_off;
	if (end <= b->sent)
		return 0;
	return end - b->sent < cap ? (size_t)(end - b->sent) : cap;
}

/* ---- URBs -------------------------------------------------------------- */

/*
 * The FT2232H's IN packets: two modem status bytes, then up to 510 of the
 * board's. With nothing to send, a status-only packet once per latency
 * timer; a transfer whose data ends on a whole packet ends with one too.
 */
#define FTDI_MPS 512
static const uint8_t ftdi_status[2] = { 0x32, 0x60 };

static void fill_ftdi(struct board *b, struct plug *p, struct urb *u,
		      size_t cap)
{
	size_t room = cap / FTDI_MPS * (FTDI_MPS - 2) +
		      (cap % FTDI_MPS > 2 ? cap % FTDI_MPS - 2 : 0);
	uint64_t now = bach_now_ns();
	UMockdevIoctlData *buf;
	uint8_t *d;
	size_t n = 0, pos = 0, left;

	if (b->bitmode == 0x40) {
		produce(b, room);
		n = sendable(b, room);
	}
	if (!n && now - b->last_status < b->latency_ms * 1000000ull)
		return;
	d = g_malloc(cap);
	for (left = n; left || !pos;) {
		size_t k = left < FTDI_MPS - 2 ? left : FTDI_MPS - 2;

		memcpy(d + pos, ftdi_status, 2);
		if (k) /* (nothing sent yet: b->out may be NULL) */
			memcpy(d + pos + 2, b->out + b->head + (n - left), k);
		pos += 2 + k;
		left -= k;
		if (!left && k == FTDI_MPS - 2 && pos + 2 <= cap) {
			memcpy(d + pos, ftdi_status, 2); /* the short packet */
			pos += 2;
		}
	}
	g_queue_pop_head(&p->in_pending);
	buf = umockdev_ioctl_data_resolve(
		u->data, offsetof(struct usbdevfs_urb, buffer), pos, NULL);
	if (!buf)
		die("cannot resolve an IN buffer of %zu bytes", pos);
	memcpy(buf->data, d, pos);
	g_object_unref(buf);
	g_free(d);
	b->head += n;
	b->sent += n;
	b->last_status = now;
	finish_urb(p, u, 0, (int)pos);
}

/* Fill the first waiting IN URB, if the board has something to send. */
static void fill_in(struct board *b, struct plug *p)
{
	struct emu *e = b->e;
	struct urb *u = g_queue_peek_head(&p->in_pending);
	UMockdevIoctlData *buf;
	size_t cap, n;

	if (!u || b->halt_armed)
		return; /* NAK: nothing to send, or halted until CLEAR_HALT */
	if (b->halted) {
		g_queue_pop_head(&p->in_pending);
		finish_urb(p, u, -EPIPE, 0);
		note("IN endpoint stalled after %llu bytes",
		     (unsigned long long)b->sent);
		b->halted = false; /* one URB fails; CLEAR_HALT re-arms */
		b->halt_armed = true;
		return;
	}
	cap = (size_t)u->len;
	if (e->short_max) {
		b->prng = b->prng * 1103515245u + 12345u;
		n = 1 + (b->prng >> 8) % e->short_max;
		if (n < cap)
			cap = n;
	}
	if (e->ftdi) {
		fill_ftdi(b, p, u, cap);
	} else {
		produce(b, cap);
		n = sendable(b, cap);
		if (!n)
			return;
		g_queue_pop_head(&p->in_pending);
		buf = umockdev_ioctl_data_resolve(
			u->data, offsetof(struct usbdevfs_urb, buffer), n,
			NULL);
		if (!buf)
			die("cannot resolve an IN buffer of %zu bytes", n);
		memcpy(buf->data, b->out + b->head, n);
		g_object_unref(buf);
		b->head += n;
		b->sent += n;
		finish_urb(p, u, 0, (int)n);
	}
	if (e->halt_at && b->sent >= e->halt_at) {
		b->halts_left = e->halt_count;
		b->halted = true;
		e->halt_at = 0;
	}
	if (b->silent_at_off != UINT64_MAX && b->sent >= b->silent_at_off &&
	    !b->silent) {
		b->silent = true;
		note("board %s falls silent after %llu bytes", b->serial,
		     (unsigned long long)b->sent);
	}
}

/* Complete a REAP with the oldest finished URB; false if there is none. */
static bool try_reap(struct board *b, struct plug *p, UMockdevIoctlClient *c)
{
	UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(c), *ptr;
	struct urb *u;

	if (g_queue_is_empty(&p->done) && !p->gone) {
		if (b->unplug_at != UINT64_MAX && b->sent >= b->unplug_at)
			unplug(b);
		else
			fill_in(b, p);
	}
	u = g_queue_pop_head(&p->done);
	if (!u)
		return false;
	ptr = umockdev_ioctl_data_resolve(arg, 0, sizeof(void *), NULL);
	umockdev_ioctl_data_set_ptr(ptr, 0, u->data);
	umockdev_ioctl_client_complete(c, 0, 0);
	g_object_unref(ptr);
	g_object_unref(u->data);
	g_free(u);
	return true;
}

static gboolean tick_cb(gpointer data)
{
	struct emu *e = data;
	bool any = false;

	g_mutex_lock(&e->mu);
	for (unsigned i = 0; i < e->nboards; i++) {
		struct board *b = &e->boards[i];
		GList *l = g_list_copy(b->old_plugs);

		if (b->plug)
			l = g_list_prepend(l, b->plug);
		for (GList *it = l; it; it = it->next) {
			struct plug *p = it->data;

			if (!p->held)
				continue;
			if (try_reap(b, p, p->held)) {
				g_clear_object(&p->held);
			} else if (p->gone ||
				   bach_now_ns() - p->held_since > HOLD_NS) {
				umockdev_ioctl_client_complete(
					p->held, -1, p->gone ? ENODEV : EAGAIN);
				g_clear_object(&p->held);
			} else {
				any = true;
			}
		}
		g_list_free(l);
	}
	if (!any)
		e->tick = NULL;
	g_mutex_unlock(&e->mu);
	return any ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void hold(struct emu *e, struct plug *p, UMockdevIoctlClient *c)
{
	p->held = g_object_ref(c);
	p->held_since = bach_now_ns();
	if (!e->tick) {
		e->tick = g_timeout_source_new(TICK_MS);
		g_source_set_callback(e->tick, tick_cb, e, NULL);
		g_source_attach(e->tick, e->worker);
		g_source_unref(e->tick);
	}
}

/* The replies of the board: bytes for the IN stream. */
static void reply(void *ctx, const uint8_t *f, size_t n)
{
	emit(ctx, f, n);
}

static void control(struct board *b, struct plug *p, struct urb *u)
{
	UMockdevIoctlData *buf;
	uint8_t *s, d[256];
	unsigned type, idx;
	size_t n;

	buf = umockdev_ioctl_data_resolve(u->data,
					  offsetof(struct usbdevfs_urb, buffer),
					  (size_t)u->len, NULL);
	if (!buf || u->len < 8) {
		finish_urb(p, u, -EPIPE, 0);
		goto out;
	}
	s = buf->data;
	type = s[3];
	idx = s[2];
	n = 0;
	if (s[0] == 0x40 && b->e->ftdi) { /* FTDI vendor requests */
		if (s[1] == 0x0b)
			b->bitmode = s[3];
		else if (s[1] == 0x09)
			b->latency_ms = s[2] ? s[2] : 1;
		finish_urb(p, u, 0, 0);
		goto out;
	}
	if (s[0] == 0x80 && s[1] == 6 && type == 3)
		n = string_descriptor(b, idx, d, bach_get_le16(s + 6));
	else if (s[0] == 0x80 && s[1] == 6 && (type == 1 || type == 2)) {
		uint8_t all[128];
		size_t an = descriptors(b->e, all);

		n = type == 1 ? 18 : an - 18;
		memcpy(d, type == 1 ? all : all + 18, n);
		if (n > bach_get_le16(s + 6))
			n = bach_get_le16(s + 6);
	}
	if (!n) {
		note("control request %02x %02x stalled", s[0], s[1]);
		finish_urb(p, u, -EPIPE, 0);
		goto out;
	}
	if (n > (size_t)u->len - 8)
		n = (size_t)u->len - 8;
	memcpy(s + 8, d, n);
	finish_urb(p, u, 0, (int)n);
out:
	if (buf)
		g_object_unref(buf);
}

static uint64_t pending_bytes(struct plug *p)
{
	uint64_t n = 0;

	for (GList *l = p->in_pending.head; l; l = l->next)
		n += (uint64_t)((struct urb *)l->data)->len;
	return n;
}

static void submit(struct board *b, struct plug *p, UMockdevIoctlClient *c)
{
	UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(c);
	struct usbdevfs_urb *k;
	struct urb *u = g_new0(struct urb, 1);

	u->data = umockdev_ioctl_data_resolve(arg, 0, sizeof(*k), NULL);
	k = (void *)u->data->data;
	u->type = k->type;
	u->ep = k->endpoint;
	u->len = k->buffer_length;
	if (u->ep != 0x81 || !b->e->mem ||
	    pending_bytes(p) + (uint64_t)u->len <= b->e->mem)
		umockdev_ioctl_client_complete(c, 0, 0);
	if (u->type == USBDEVFS_URB_TYPE_CONTROL) {
		control(b, p, u);
	} else if (u->type != USBDEVFS_URB_TYPE_BULK ||
		   (u->ep != 0x81 && u->ep != (b->e->ftdi ? 0x02 : 0x01))) {
		finish_urb(p, u, -EPIPE, 0);
	} else if (u->ep == 0x81 && b->e->mem &&
		   pending_bytes(p) + (uint64_t)u->len > b->e->mem) {
		/* usbfs_memory_mb: the submit fails, the URB never was */
		umockdev_ioctl_client_complete(c, -1, ENOMEM);
		g_object_unref(u->data);
		g_free(u);
		return;
	} else if (u->ep == 0x81) {
		g_queue_push_tail(&p->in_pending, u);
	} else if (b->silent) {
		g_queue_push_tail(&p->out_pending, u); /* NAKed for ever */
	} else if (b->e->ftdi && b->bitmode != 0x40) {
		finish_urb(p, u, 0, u->len); /* a serial port: lost to us */
	} else {
		UMockdevIoctlData *buf = umockdev_ioctl_data_resolve(
			u->data, offsetof(struct usbdevfs_urb, buffer),
			(size_t)u->len, NULL);

		/* what the board sampled meanwhile is in its FIFO, ahead of
		 * the reply */
		produce(b, (size_t)BOARD_FIFO_RECORDS * BACH_REC_SIZE);
		if (buf) {
			board_write(&b->m, buf->data, (size_t)u->len, reply, b);
			g_object_unref(buf);
		}
		finish_urb(p, u, 0, u->len);
	}
}

static bool discard(struct plug *p, unsigned long addr)
{
	GQueue *qs[] = { &p->in_pending, &p->out_pending };

	for (int i = 0; i < 2; i++) {
		for (GList *l = qs[i]->head; l; l = l->next) {
			struct urb *u = l->data;

			if (u->data->client_addr != addr)
				continue;
			g_queue_delete_link(qs[i], l);
			finish_urb(p, u, -ENOENT, 0);
			return true;
		}
	}
	return false;
}

static struct plug *find_plug(struct board *b, const char *devnode)
{
	if (b->plug && !strcmp(b->plug->devnode, devnode))
		return b->plug;
	for (GList *l = b->old_plugs; l; l = l->next) {
		struct plug *p = l->data;

		if (!strcmp(p->devnode, devnode))
			return p;
	}
	return NULL;
}

static gboolean on_ioctl(UMockdevIoctlBase *h, UMockdevIoctlClient *c,
			 gpointer data)
{
	struct board *b = data;
	struct emu *e = b->e;
	UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(c), *d;
	unsigned long req = umockdev_ioctl_client_get_request(c);
	struct plug *p;

	(void)h;
	g_mutex_lock(&e->mu);
	if (!e->worker)
		e->worker = g_main_context_ref_thread_default();
	p = find_plug(b, umockdev_ioctl_client_get_devnode(c));
	if (!p || (p->gone && req != USBDEVFS_REAPURBNDELAY &&
		   req != USBDEVFS_REAPURB && req != USBDEVFS_DISCARDURB)) {
		umockdev_ioctl_client_complete(c, -1, ENODEV);
		goto out;
	}
	switch (req) {
	case USBDEVFS_GET_CAPABILITIES:
		d = umockdev_ioctl_data_resolve(arg, 0, sizeof(uint32_t), NULL);
		*(uint32_t *)d->data = USBDEVFS_CAP_ZERO_PACKET |
				       USBDEVFS_CAP_BULK_SCATTER_GATHER |
				       USBDEVFS_CAP_BULK_CONTINUATION |
				       USBDEVFS_CAP_NO_PACKET_SIZE_LIM |
				       USBDEVFS_CAP_REAP_AFTER_DISCONNECT;
		g_object_unref(d);
		umockdev_ioctl_client_complete(c, 0, 0);
		break;
	case USBDEVFS_CLAIMINTERFACE:
	case USBDEVFS_RELEASEINTERFACE:
	case USBDEVFS_SETINTERFACE:
	case USBDEVFS_SETCONFIGURATION:
	case USBDEVFS_RESETEP:
	case USBDEVFS_RESET:
	case USBDEVFS_DISCONNECT_CLAIM:
		umockdev_ioctl_client_complete(c, 0, 0);
		break;
	case USBDEVFS_GETDRIVER:
	case USBDEVFS_IOCTL:
		umockdev_ioctl_client_complete(c, -1, ENODATA);
		break;
	case USBDEVFS_CLEAR_HALT:
		if (b->halt_armed) {
			b->halt_armed = false;
			if (b->halts_left)
				b->halts_left--;
			b->halted = b->halts_left > 0;
			note("CLEAR_HALT%s",
			     b->halted ? " (the endpoint stalls again)" : "");
		}
		umockdev_ioctl_client_complete(c, 0, 0);
		break;
	case USBDEVFS_SUBMITURB:
		submit(b, p, c);
		break;
	case USBDEVFS_DISCARDURB:
		if (discard(p, *(unsigned long *)arg->data))
			umockdev_ioctl_client_complete(c, 0, 0);
		else
			umockdev_ioctl_client_complete(c, -1, EINVAL);
		break;
	case USBDEVFS_REAPURB:
	case USBDEVFS_REAPURBNDELAY:
		if (try_reap(b, p, c))
			break;
		if (p->gone)
			umockdev_ioctl_client_complete(c, -1, ENODEV);
		else
			hold(e, p, c);
		break;
	default:
		note("unhandled ioctl 0x%lx on %s", req, p->devnode);
		umockdev_ioctl_client_complete(c, -1, ENOTTY);
	}
out:
	g_mutex_unlock(&e->mu);
	return TRUE;
}

/* ---- the program under test -------------------------------------------- */

static void child_exit(GPid pid, gint status, gpointer data)
{
	struct emu *e = data;

	e->status = WIFEXITED(status) ? WEXITSTATUS(status)
				      : 128 + WTERMSIG(status);
	g_spawn_close_pid(pid);
	g_main_loop_quit(e->loop);
}

static gboolean forward_signal(gpointer data)
{
	struct emu *e = data;

	kill(e->child, SIGTERM);
	return G_SOURCE_CONTINUE;
}

/*
 * Sanitized, we (once run again under the preload) and the program we run
 * have umockdev's preload library before the sanitizer's runtime: tell
 * the runtime that this is meant (both read ASAN_OPTIONS at start).
 */
static void asan_link_order(void)
{
	const char *asan = getenv("ASAN_OPTIONS");
	char *v;

	if (asan && strstr(asan, "verify_asan_link_order=0"))
		return;
	v = asan && *asan ? g_strdup_printf("%s:verify_asan_link_order=0", asan)
			  : g_strdup("verify_asan_link_order=0");
	setenv("ASAN_OPTIONS", v, 1);
	g_free(v);
}

/* ---- the LFSR pattern, straight from docs/board-protocol.md ------------ */

static int write_lfsr(unsigned long long n, const char *path)
{
	FILE *f = fopen(path, "wb");
	uint32_t s = 1;

	if (!f)
		die("%s: %s", path, strerror(errno));
	for (unsigned long long i = 0; i < n; i++) {
		uint8_t r[6] = { (uint8_t)(s >> 24), (uint8_t)(s >> 16),
				 (uint8_t)(s >> 8),  (uint8_t)(s & 0xf8),
				 (uint8_t)s,	     0xc0 };

		fwrite(r, 1, 6, f);
		s = (s & 1) ? (s >> 1) ^ 0x80200003u : s >> 1;
	}
	return fclose(f) ? 1 : 0;
}

/* ---- set up ------------------------------------------------------------ */

static unsigned long long num(const char *k, const char *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end)
		die("option %s: not a number: '%s'", k, v);
	return x;
}

static void board_setup(struct emu *e, struct board *b, const char *serial,
			unsigned port)
{
	struct bach_board_identity *id = &b->m.id;

	b->e = e;
	if (board_init(&b->m, &e->o))
		die("out of memory");
	b->m.nap = board_nap;
	b->m.nap_ctx = b;
	g_strlcpy(b->serial, serial, sizeof(b->serial));
	b->port = port;
	b->prng = (uint32_t)e->o.seed;
	snprintf(b->syspath, sizeof(b->syspath),
		 "/devices/pci0000:00/0000:00:14.0/usb1/1-%u", port);
	id->vendor = 0x1209;
	id->product = 0x4243;
	id->gw_major = (uint8_t)e->gw_major;
	id->gw_minor = (uint8_t)e->gw_minor;
	id->capabilities = (uint16_t)e->caps;
	/* NUL-padded, not terminated when full (board-protocol section 5) */
	memset(id->serial, 0, sizeof(id->serial));
	memcpy(id->serial, serial, strnlen(serial, sizeof(id->serial)));
	memset(id->name, 0, sizeof(id->name));
	memcpy(id->name, "bach emulated board", 19);
	b->handler = umockdev_ioctl_base_new();
	g_signal_connect(b->handler, "handle-ioctl", G_CALLBACK(on_ioctl), b);
}

int main(int argc, char **argv)
{
	static struct emu e;
	const char *pidfile = NULL, *second = NULL;
	char serial[64] = "", msg[256];
	unsigned port = 2;
	GError *err = NULL;
	struct rusage self, kids;
	int i;

	bool check = argc == 2 && !strcmp(argv[1], "--check");

	if (argc == 4 && !strcmp(argv[1], "--lfsr"))
		return write_lfsr(num("--lfsr", argv[2]), argv[3]);
	asan_link_order();
	/*
	 * Under the preload ourselves, as umockdev-wrapper would run us: the
	 * uevents the testbed sends read the device from our mock /sys.
	 */
	if (!strstr(getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "",
		    "libumockdev-preload")) {
		const char *pre = getenv("LD_PRELOAD");
		char *v = pre && *pre
				  ? g_strdup_printf(
					    "libumockdev-preload.so.0:%s", pre)
				  : g_strdup("libumockdev-preload.so.0");

		setenv("LD_PRELOAD", v, 1);
		g_free(v);
		execv("/proc/self/exe", argv);
		die("cannot run myself under libumockdev-preload: %s",
		    strerror(errno));
	}
	board_opts_defaults(&e.o);
	e.gw_major = 1;
	e.caps = BACH_CAP_TIMING | BACH_CAP_STALL | BACH_CAP_TEST_PATTERN |
		 BACH_CAP_FILTER;
	e.speed = 480;
	e.replug = true;
	for (i = 1; !check && i < argc && strcmp(argv[i], "--"); i++) {
		char *k = argv[i], *v = strchr(k, '=');
		int r;

		if (!strcmp(k, "--pid-file") && i + 1 < argc) {
			pidfile = argv[++i];
			continue;
		}
		if (!v)
			die("want KEY=VALUE or --, not '%s'", k);
		*v++ = 0;
		r = board_opts_set(&e.o, k, v, msg, sizeof(msg));
		if (r == -EINVAL)
			die("%s", msg);
		if (!r)
			continue;
		if (!strcmp(k, "serial"))
			g_strlcpy(serial, v, 17);
		else if (!strcmp(k, "second"))
			second = v;
		else if (!strcmp(k, "gw")) {
			if (sscanf(v, "%u.%u", &e.gw_major, &e.gw_minor) != 2)
				die("option gw: want MAJOR.MINOR, not '%s'", v);
		} else if (!strcmp(k, "caps"))
			e.caps = (unsigned)num(k, v);
		else if (!strcmp(k, "speed"))
			e.speed = (unsigned)num(k, v);
		else if (!strcmp(k, "port"))
			port = (unsigned)num(k, v);
		else if (!strcmp(k, "replug"))
			e.replug = num(k, v) != 0;
		else if (!strcmp(k, "running"))
			e.running = num(k, v) != 0;
		else if (!strcmp(k, "bridge")) {
			if (strcmp(v, "ftdi") && strcmp(v, "plain"))
				die("option bridge: plain or ftdi, not '%s'",
				    v);
			e.ftdi = !strcmp(v, "ftdi");
		} else if (!strcmp(k, "cut"))
			e.cut = num(k, v);
		else if (!strcmp(k, "short"))
			e.short_max = (unsigned)num(k, v);
		else if (!strcmp(k, "silent_at"))
			e.silent_at = num(k, v);
		else if (!strcmp(k, "mem"))
			e.mem = num(k, v);
		else if (!strcmp(k, "halt")) {
			unsigned long long at, n;

			if (sscanf(v, "%llu:%llu", &at, &n) != 2 || !at || !n)
				die("option halt: want BYTES:COUNT, not '%s'",
				    v);
			e.halt_at = at;
			e.halt_count = (unsigned)n;
		} else
			die("unknown option '%s'", k);
	}
	if (i + 1 >= argc && !check)
		die("usage: usb_board [KEY=VALUE]... [--pid-file F] -- PROGRAM [ARG]...");
	if (!serial[0])
		snprintf(serial, 17, "EMU-%llu", (unsigned long long)e.o.seed);
	if (e.ftdi && e.speed != 480)
		die("an FT2232H is a high-speed (480 Mbit/s) device");

	g_mutex_init(&e.mu);
	e.tb = umockdev_testbed_new();
	if (!e.tb) {
		note("cannot make a umockdev testbed");
		return check ? 77 : EXIT_USAGE;
	}
	if (!umockdev_in_mock_environment()) {
		note("libumockdev-preload.so.0 is not loaded (LD_PRELOAD=%s)",
		     getenv("LD_PRELOAD"));
		return 77;
	}
	if (check)
		return 0;
	e.loop = g_main_loop_new(NULL, FALSE);
	board_setup(&e, &e.boards[0], serial, port);
	e.nboards = 1;
	if (second) {
		board_setup(&e, &e.boards[1], second, port + 1);
		e.nboards = 2;
	}
	for (unsigned b = 0; b < e.nboards; b++)
		plug_in(&e.boards[b]);

	if (!g_spawn_async(NULL, argv + i + 1, NULL,
			   G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
				   G_SPAWN_CHILD_INHERITS_STDIN,
			   NULL, NULL, &e.child, &err))
		die("cannot run %s: %s", argv[i + 1], err->message);
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f || fprintf(f, "%d\n", e.child) < 0 || fclose(f))
			die("%s: %s", pidfile, strerror(errno));
	}
	g_child_watch_add(e.child, child_exit, &e);
	g_unix_signal_add(SIGTERM, forward_signal, &e);
	g_unix_signal_add(SIGINT, forward_signal, &e);
	g_main_loop_run(e.loop);

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	note("%s exited %d; sent %llu bytes; cpu: emulator %.3f s, %s %.3f s",
	     argv[i + 1], e.status, (unsigned long long)e.boards[0].sent,
	     self.ru_utime.tv_sec + self.ru_stime.tv_sec +
		     (self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6,
	     argv[i + 1],
	     kids.ru_utime.tv_sec + kids.ru_stime.tv_sec +
		     (kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6);
	return e.status;
}
