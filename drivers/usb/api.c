// SPDX-License-Identifier: MIT
/*
 * usb: the capture board over libusb-1.0 (docs/usb.md). The driver table
 * entry, its options, finding and opening the board, and the session:
 * handshake at open, streaming in run(), riding out an unplug.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

#define OPTION_KEYS                                                           \
	"vid_pid, serial, path, bridge, policy, timing, pattern, filter, "    \
	"high_water, low_water, xfers, xfer_kib, timeout, status_ms, reconnect"

static int number(struct bach_source *src, const char *key, const char *v,
		  unsigned long long lo, unsigned long long hi,
		  unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 0);
	if (errno || end == v || *end || *v == '-' || *out < lo || *out > hi)
		return bach_source_error(src, -EINVAL,
					 "option %s: want a number from %llu to %llu, not '%s'",
					 key, lo, hi, v);
	return 0;
}

/* "1-2.3": bus, then the port on each hub from the root */
static bool valid_path(const char *p)
{
	const char *s = p;
	int parts = 0;

	for (;;) {
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
		parts++;
		if (!*s)
			return parts >= 2;
		if (*s != (parts == 1 ? '-' : '.'))
			return false;
		s++;
	}
}

static int parse_option(struct bach_source *src, struct usb *u,
			const char *k, const char *v)
{
	unsigned long long x;
	int err;

	if (!strcmp(k, "vid_pid")) {
		unsigned vid, pid;
		int n = 0;

		if (sscanf(v, "%4x:%4x%n", &vid, &pid, &n) != 2 || v[n])
			return bach_source_error(src, -EINVAL,
						 "option vid_pid: want VVVV:PPPP in hex (as lsusb prints), not '%s'",
						 v);
		u->vid = (uint16_t)vid;
		u->pid = (uint16_t)pid;
	} else if (!strcmp(k, "serial")) {
		if (!*v || strlen(v) >= sizeof(u->want_serial))
			return bach_source_error(src, -EINVAL,
						 "option serial: 1 to %zu characters, not '%s'",
						 sizeof(u->want_serial) - 1, v);
		strcpy(u->want_serial, v);
	} else if (!strcmp(k, "path")) {
		if (!valid_path(v) || strlen(v) >= sizeof(u->want_path))
			return bach_source_error(src, -EINVAL,
						 "option path: want BUS-PORT[.PORT]... as in /sys/bus/usb/devices (e.g. 1-2.3), not '%s'",
						 v);
		strcpy(u->want_path, v);
	} else if (!strcmp(k, "bridge")) {
		if (!strcmp(v, "auto"))
			u->bridge = USB_BRIDGE_AUTO;
		else if (!strcmp(v, "plain"))
			u->bridge = USB_BRIDGE_PLAIN;
		else if (!strcmp(v, "ftdi"))
			u->bridge = USB_BRIDGE_FTDI;
		else
			return bach_source_error(src, -EINVAL,
						 "option bridge: auto, plain or ftdi, not '%s'",
						 v);
	} else if (!strcmp(k, "policy")) {
		if (!strcmp(v, "stall"))
			u->cfg.policy = BACH_POLICY_STALL;
		else if (!strcmp(v, "drop"))
			u->cfg.policy = BACH_POLICY_DROP;
		else
			return bach_source_error(src, -EINVAL,
						 "option policy: stall or drop, not '%s'",
						 v);
	} else if (!strcmp(k, "pattern")) {
		if (!strcmp(v, "bus"))
			u->cfg.test_pattern = 0;
		else if (!strcmp(v, "counter"))
			u->cfg.test_pattern = 1;
		else if (!strcmp(v, "lfsr"))
			u->cfg.test_pattern = 2;
		else
			return bach_source_error(src, -EINVAL,
						 "option pattern: bus, counter or lfsr, not '%s'",
						 v);
	} else if (!strcmp(k, "timing")) {
		if ((err = number(src, k, v, 0, 1, &x)))
			return err;
		u->cfg.timing = (uint8_t)x;
	} else if (!strcmp(k, "reconnect")) {
		if ((err = number(src, k, v, 0, 1, &x)))
			return err;
		u->reconnect = x;
	} else if (!strcmp(k, "filter")) {
		if ((err = number(src, k, v, 0, 0xffff, &x)))
			return err;
		u->cfg.type_filter = (uint16_t)x;
	} else if (!strcmp(k, "high_water") || !strcmp(k, "low_water")) {
		if ((err = number(src, k, v, 0, 0xffff, &x)))
			return err;
		if (k[0] == 'h')
			u->cfg.high_water = (uint16_t)x;
		else
			u->cfg.low_water = (uint16_t)x;
	} else if (!strcmp(k, "xfers")) {
		if ((err = number(src, k, v, 2, 1024, &x)))
			return err;
		u->nxfer = (unsigned)x;
	} else if (!strcmp(k, "xfer_kib")) {
		if ((err = number(src, k, v, 1, 65536, &x)))
			return err;
		u->xfer_bytes = (unsigned)x << 10;
	} else if (!strcmp(k, "timeout")) {
		if ((err = number(src, k, v, 1, 3600, &x)))
			return err;
		u->timeout_ms = (unsigned)x * 1000;
	} else if (!strcmp(k, "status_ms")) {
		if ((err = number(src, k, v, 50, 60000, &x)))
			return err;
		u->status_ms = (unsigned)x;
	} else {
		return bach_source_error(src, -EINVAL,
					 "unknown option '%s' (" OPTION_KEYS ")",
					 k);
	}
	return 0;
}

/* ---- finding the board ---------------------------------------------------- */

static void bus_path(libusb_device *dev, char *out, size_t cap)
{
	uint8_t ports[8];
	int n = libusb_get_port_numbers(dev, ports, sizeof(ports));
	size_t len;

	len = (size_t)snprintf(out, cap, "%u", libusb_get_bus_number(dev));
	for (int i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%c%u",
					i ? '.' : '-', ports[i]);
}

static const char *speed_name(int speed)
{
	switch (speed) {
	case LIBUSB_SPEED_LOW:
		return "low";
	case LIBUSB_SPEED_FULL:
		return "full";
	case LIBUSB_SPEED_HIGH:
		return "high";
	case LIBUSB_SPEED_SUPER:
		return "super";
	case LIBUSB_SPEED_UNKNOWN:
		return "unknown";
	default:
		return "super+";
	}
}

/* FTDI's chips give their type in bcdDevice, whatever VID:PID they carry */
static bool ftdi_chip(uint16_t bcd)
{
	return bcd == 0x0500 || bcd == 0x0700 || bcd == 0x0800 ||
	       bcd == 0x0900;
}

/* The bulk endpoints of our interface, and which bridge carries them. */
static int endpoints(struct usb *u, libusb_device *dev,
		     const struct libusb_device_descriptor *d)
{
	struct libusb_config_descriptor *cfg;
	const struct libusb_interface_descriptor *alt;
	int r = libusb_get_active_config_descriptor(dev, &cfg);

	if (r)
		return bach_source_error(u->src, -EIO,
					 "board %s at %s: no active configuration: %s",
					 u->serial, u->path,
					 libusb_error_name(r));
	u->ep_in = u->ep_out = 0;
	if (cfg->bNumInterfaces > USB_IFACE &&
	    cfg->interface[USB_IFACE].num_altsetting) {
		alt = &cfg->interface[USB_IFACE].altsetting[0];
		for (int i = 0; i < alt->bNumEndpoints; i++) {
			const struct libusb_endpoint_descriptor *e =
				&alt->endpoint[i];

			if ((e->bmAttributes & 3) != LIBUSB_TRANSFER_TYPE_BULK)
				continue;
			if (e->bEndpointAddress & LIBUSB_ENDPOINT_IN) {
				if (!u->ep_in) {
					u->ep_in = e->bEndpointAddress;
					u->mps = e->wMaxPacketSize & 0x7ff;
				}
			} else if (!u->ep_out) {
				u->ep_out = e->bEndpointAddress;
			}
		}
	}
	libusb_free_config_descriptor(cfg);
	if (!u->ep_in || !u->ep_out || !u->mps)
		return bach_source_error(u->src, -EPROTO,
					 "board %s at %s: interface %d has no bulk IN and bulk OUT endpoints (is it a bach board?)",
					 u->serial, u->path, USB_IFACE);
	u->ftdi = u->bridge == USB_BRIDGE_FTDI ||
		  (u->bridge == USB_BRIDGE_AUTO && ftdi_chip(d->bcdDevice));
	return 0;
}

void usb_close_board(struct usb *u)
{
	if (u->claimed)
		libusb_release_interface(u->h, USB_IFACE);
	u->claimed = false;
	if (u->h)
		libusb_close(u->h);
	u->h = NULL;
}

/*
 * Open the one board that matches the options (and, once one was open,
 * its serial number). quiet: no board is -ENODEV without a message.
 */
int usb_find_open(struct usb *u, bool quiet)
{
	libusb_device **list, *found = NULL;
	struct libusb_device_descriptor fd = { 0 };
	libusb_device_handle *h = NULL;
	char others[256] = "", denied[32] = "", serial[64] = "", path[32];
	int n, matches = 0, err = 0, r;

	n = (int)libusb_get_device_list(u->ctx, &list);
	if (n < 0)
		return bach_source_error(u->src, -EIO,
					 "cannot list USB devices: %s",
					 libusb_error_name(n));
	for (int i = 0; i < n; i++) {
		struct libusb_device_descriptor d;
		libusb_device_handle *dh;
		unsigned char s[64] = "";

		if (libusb_get_device_descriptor(list[i], &d) ||
		    d.idVendor != u->vid || d.idProduct != u->pid)
			continue;
		bus_path(list[i], path, sizeof(path));
		if (u->want_path[0] && strcmp(path, u->want_path))
			continue;
		r = libusb_open(list[i], &dh);
		if (r == LIBUSB_ERROR_ACCESS) {
			snprintf(denied, sizeof(denied), "%s", path);
			continue;
		}
		if (r)
			continue;
		if (d.iSerialNumber &&
		    libusb_get_string_descriptor_ascii(dh, d.iSerialNumber, s,
						       sizeof(s)) < 0)
			s[0] = 0;
		if (u->want_serial[0] && strcmp((char *)s, u->want_serial)) {
			libusb_close(dh);
			continue;
		}
		if (++matches > 1) {
			size_t l = strlen(others);

			snprintf(others + l, sizeof(others) - l, ", %s at %s",
				 s[0] ? (char *)s : "(no serial)", path);
			libusb_close(dh);
			continue;
		}
		found = list[i];
		fd = d;
		h = dh;
		snprintf(serial, sizeof(serial), "%s", (char *)s);
		snprintf(u->path, sizeof(u->path), "%s", path);
		u->speed = libusb_get_device_speed(found);
	}
	if (matches > 1) {
		err = bach_source_error(u->src, -EEXIST,
					"%d boards %04x:%04x: %s at %s%s: choose one with serial=S or path=P",
					matches, u->vid, u->pid,
					serial[0] ? serial : "(no serial)",
					u->path, others);
		libusb_close(h);
		goto out;
	}
	if (!h) {
		if (denied[0])
			err = bach_source_error(u->src, -EACCES,
						"board %04x:%04x at %s: permission denied (LIBUSB_ERROR_ACCESS): install systemd/60-bach.rules and join group bach (docs/usb.md)",
						u->vid, u->pid, denied);
		else if (quiet)
			err = -ENODEV;
		else
			err = bach_source_error(u->src, -ENODEV,
						"no board %04x:%04x%s%s%s%s found (is it plugged in and powered? lsusb -d %04x:%04x lists it)",
						u->vid, u->pid,
						u->want_serial[0] ? " with serial " : "",
						u->want_serial,
						u->want_path[0] ? " at " : "",
						u->want_path, u->vid, u->pid);
		goto out;
	}
	libusb_set_auto_detach_kernel_driver(h, 1);
	r = libusb_claim_interface(h, USB_IFACE);
	if (r) {
		err = bach_source_error(u->src,
					r == LIBUSB_ERROR_BUSY ? -EBUSY : -EIO,
					"board %s at %s: cannot claim interface %d: %s%s",
					serial, u->path, USB_IFACE,
					libusb_error_name(r),
					r == LIBUSB_ERROR_BUSY ?
						" (another program, another bachd?, has it)" :
						"");
		libusb_close(h);
		goto out;
	}
	u->h = h;
	u->claimed = true;
	snprintf(u->serial, sizeof(u->serial), "%s", serial);
	err = endpoints(u, found, &fd);
	if (!err)
		err = usb_bridge_init(u);
	if (err)
		usb_close_board(u);
out:
	libusb_free_device_list(list, 1);
	return err;
}

static int LIBUSB_CALL hotplug(libusb_context *ctx, libusb_device *dev,
			       libusb_hotplug_event ev, void *data)
{
	struct usb *u = data;

	(void)ctx;
	if (ev == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED)
		u->arrived = true;
	else if (u->h && dev == libusb_get_device(u->h))
		u->lost = true;
	return 0;
}

/* ---- the driver's members ---------------------------------------------- */

static void describe(struct bach_source *src, struct usb *u)
{
	static const char *const sources[] = { "bus", "counter", "lfsr" };
	char ident[1024], name[80], serial[80], path[80];

	bach_json_escape(name, sizeof(name), u->id.name);
	bach_json_escape(serial, sizeof(serial),
			 u->serial[0] ? u->serial : u->id.serial);
	bach_json_escape(path, sizeof(path), u->path);
	snprintf(ident, sizeof(ident),
		 "\"name\":\"%s\",\"serial\":\"%s\",\"gateware\":\"%u.%u\",\"clock_hz\":%u,"
		 "\"fifo_records\":%u,\"capabilities\":%u,\"usb\":\"%04x:%04x\","
		 "\"usb_path\":\"%s\",\"usb_speed\":\"%s\",\"bridge\":\"%s\",\"endpoints\":\"%02x %02x\","
		 "\"transfers\":%u,\"transfer_bytes\":%u,"
		 "\"policy\":\"%s\",\"timing\":%s,\"source\":\"%s\",\"filter\":%u",
		 name, serial, u->id.gw_major, u->id.gw_minor, u->id.clock_hz,
		 u->id.fifo_records, u->id.capabilities, u->vid, u->pid, path,
		 speed_name(u->speed), u->ftdi ? "ftdi" : "plain", u->ep_out,
		 u->ep_in, u->nx, u->xfer_bytes,
		 u->cfg.policy == BACH_POLICY_DROP ? "drop" : "stall",
		 u->cfg.timing ? "true" : "false",
		 sources[u->cfg.test_pattern], u->cfg.type_filter);
	bach_source_identity(src, ident);
}

static int usb_open(struct bach_source *src, void *priv,
		    const struct bach_option *opts, size_t nopts)
{
	struct usb *u = priv;
	int r, err;

	u->src = src;
	u->vid = USB_VID;
	u->pid = USB_PID;
	u->timeout_ms = 5000;
	u->status_ms = 1000;
	for (size_t i = 0; i < nopts; i++) {
		err = parse_option(src, u, opts[i].key, opts[i].value);
		if (err)
			return err;
	}
	if (u->timeout_ms < 2 * u->status_ms)
		return bach_source_error(src, -EINVAL,
					 "option timeout: %u s is too short for status_ms=%u (at least two STATUS requests must go unanswered)",
					 u->timeout_ms / 1000, u->status_ms);
	r = libusb_init(&u->ctx);
	if (r) {
		u->ctx = NULL;
		return bach_source_error(src, -EIO, "libusb_init: %s",
					 libusb_error_name(r));
	}
	err = usb_find_open(u, false);
	if (err)
		return err;
	err = usb_handshake(u);
	if (err)
		return err;
	/* an unplugged board must come back as itself */
	if (!u->want_serial[0] && u->serial[0])
		snprintf(u->want_serial, sizeof(u->want_serial), "%s",
			 u->serial);
	if (libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG) &&
	    !libusb_hotplug_register_callback(
		    u->ctx,
		    LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED |
			    LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT,
		    0, u->vid, u->pid, LIBUSB_HOTPLUG_MATCH_ANY, hotplug, u,
		    &u->hotplug))
		u->have_hotplug = true;
	err = usb_alloc_transfers(u);
	if (err == -ENOMEM && !u->x)
		return err; /* said why */
	if (err)
		return bach_source_error(src, err,
					 "%u transfers of %u bytes: %s",
					 u->nx, u->xfer_bytes, strerror(-err));
	describe(src, u);
	return 0;
}

/*
 * After an unplug, the records the host knows were lost with the board:
 * the rest of a frame cut off mid-way, and what its last status counted
 * beyond the last whole frame. The board's counters go with it.
 */
static void account_loss(struct bach_source *src, struct usb *u)
{
	struct bach_board_status zero = { .fifo_size = u->id.fifo_records,
					  .clock_hz = u->id.clock_hz };
	uint64_t end = u->data_end, known = end;
	struct bach_frame cut;
	size_t have;

	if (!u->started)
		return;
	/* a frame begun in this session (not one cut off by an earlier loss) */
	have = bach_source_frames_pending(src, &cut);
	if (have && have <= u->fed && cut.type == BACH_FT_DATA &&
	    cut.a + cut.c > known)
		known = cut.a + cut.c;
	if (u->status_records > known)
		known = u->status_records;
	if (known > end)
		bach_source_gap(src, known - end, BACH_GAP_DEVICE);
	bach_source_board_status(src, &zero);
}

/* Wait for the board to come back and open it; 1: stopped meanwhile. */
static int wait_back(struct usb *u)
{
	uint64_t next = 0;
	int err;

	while (!atomic_load(&u->stop)) {
		struct timeval tv = { 0, 200000 };
		uint64_t now;

		libusb_handle_events_timeout_completed(u->ctx, &tv, NULL);
		bach_source_flush(u->src);
		now = bach_now_ns();
		if (!u->arrived && now < next)
			continue;
		u->arrived = false;
		next = now + 1000000000ull;
		err = usb_find_open(u, true);
		if (err == -ENODEV)
			continue;
		if (err)
			return err;
		err = usb_handshake(u);
		if (!err)
			return 0;
		usb_close_board(u);
		if (atomic_load(&u->stop))
			break;
		if (err != -ETIMEDOUT && err != -ENODEV && err != -EIO)
			return err; /* a board we must refuse */
	}
	return 1;
}

static int usb_run(struct bach_source *src, void *priv)
{
	struct usb *u = priv;
	char what[160];
	int err;

	u->src = src;
	for (;;) {
		err = usb_stream(u);
		if (!u->lost)
			return err;
		snprintf(what, sizeof(what), "board %s at %s unplugged",
			 u->serial, u->path);
		account_loss(src, u);
		bach_source_event(src, "device_lost", what);
		usb_close_board(u);
		if (!u->reconnect)
			return bach_source_error(src, -ENODEV,
						 "%s: the capture ends (reconnect=1 waits for it to come back)",
						 what);
		err = wait_back(u);
		if (err > 0)
			return 0;
		if (err)
			return err;
		snprintf(what, sizeof(what), "board %s back at %s", u->serial,
			 u->path);
		bach_source_event(src, "device_back", what);
	}
}

static void usb_stop(void *priv)
{
	struct usb *u = priv;

	atomic_store(&u->stop, true);
	if (u->ctx)
		libusb_interrupt_event_handler(u->ctx);
}

static void usb_close(void *priv)
{
	struct usb *u = priv;

	if (u->have_hotplug)
		libusb_hotplug_deregister_callback(u->ctx, u->hotplug);
	usb_free_transfers(u);
	usb_close_board(u);
	if (u->ctx)
		libusb_exit(u->ctx);
	bach_parser_free(u->replies);
}

const struct bach_driver bach_driver_usb = {
	.name = "usb",
	.summary = "the capture board over USB (libusb; docs/usb.md)",
	.options_help =
		"vid_pid=VVVV:PPPP  the board's USB IDs (default 1209:4243)\n"
		"serial=S           the board with this serial number\n"
		"path=B-P[.P]...    the board on this USB port (as in /sys/bus/usb/devices)\n"
		"bridge=B           auto (default), plain, or ftdi (FT2232H/FT232H, 245 sync FIFO)\n"
		"policy=stall|drop  the board's loss policy (default stall: it holds the CPU)\n"
		"timing=1           frames carry per-record clock deltas\n"
		"pattern=P          bus (default), or a test pattern: counter, lfsr\n"
		"filter=MASK        record only cycle types t with bit t set (0: all)\n"
		"high_water=N       stall: hold the CPU at this FIFO fill, 1/65536ths (0: 75 %)\n"
		"low_water=N        stall: release it at this fill (0: 25 %)\n"
		"xfers=N            bulk IN transfers in flight (default: 0.5 s of data)\n"
		"xfer_kib=K         KiB per transfer (default: about 10 ms of data)\n"
		"timeout=S          a board silent this long ends the capture (default 5)\n"
		"status_ms=MS       ask the board for its status this often (default 1000)\n"
		"reconnect=1        ride out an unplug: resume in a new segment when it is back\n",
	.priv_size = sizeof(struct usb),
	.open = usb_open,
	.run = usb_run,
	.stop = usb_stop,
	.close = usb_close,
	.frame = usb_frame,
};
