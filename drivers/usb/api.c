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

static int parse_vid_pid(const char *v, struct bach_optval *out, char *msg,
			 size_t cap)
{
	unsigned vid, pid;
	int n = 0;

	if (sscanf(v, "%4x:%4x%n", &vid, &pid, &n) != 2 || v[n]) {
		snprintf(msg, cap, "want VVVV:PPPP in hex (as lsusb prints)");
		return -EINVAL;
	}
	out->u = vid;
	out->u2 = pid;
	return 0;
}

/* "1-2.3": bus, then the port on each hub from the root */
static int parse_path(const char *p, struct bach_optval *out, char *msg,
		      size_t cap)
{
	const char *s = p;
	int parts = 0;

	(void)out;
	for (;;) {
		if (*s < '0' || *s > '9')
			break;
		while (*s >= '0' && *s <= '9')
			s++;
		parts++;
		if (!*s && parts >= 2)
			return 0;
		if (*s != (parts == 1 ? '-' : '.'))
			break;
		s++;
	}
	snprintf(
		msg, cap,
		"want BUS-PORT[.PORT]... as in /sys/bus/usb/devices (e.g. 1-2.3)");
	return -EINVAL;
}

enum {
	OPT_VID_PID,
	OPT_SERIAL,
	OPT_PATH,
	OPT_BRIDGE,
	OPT_POLICY,
	OPT_TIMING,
	OPT_PATTERN,
	OPT_FILTER,
	OPT_HIGH_WATER,
	OPT_LOW_WATER,
	OPT_XFERS,
	OPT_XFER_KIB,
	OPT_TIMEOUT,
	OPT_STATUS_MS,
	OPT_RECONNECT
};

/* in the order of enum usb_bridge, of the policies, of the test patterns */
static const char *const bridges[] = { "auto", "plain", "ftdi", NULL };
static const char *const policies[] = { "stall", "drop", NULL };
static const char *const patterns[] = { "bus", "counter", "lfsr", NULL };

static const struct bach_optdesc usb_options[] = {
	[OPT_VID_PID] = { .key = "vid_pid",
			  .type = BACH_OPT_CUSTOM,
			  .arg = "VVVV:PPPP",
			  .parse = parse_vid_pid,
			  .def = "1209:4243",
			  .help = "the board's USB IDs, hex as lsusb prints them" },
	[OPT_SERIAL] = { .key = "serial",
			 .type = BACH_OPT_STRING,
			 .arg = "S",
			 .min = 1,
			 .max = sizeof(((struct usb *)0)->want_serial) - 1,
			 .def_help = "any",
			 .help = "the board with this serial number" },
	[OPT_PATH] = { .key = "path",
		       .type = BACH_OPT_STRING,
		       .arg = "B-P[.P]...",
		       .parse = parse_path,
		       .max = sizeof(((struct usb *)0)->want_path) - 1,
		       .def_help = "any",
		       .help = "the board on this USB port (as in /sys/bus/usb/devices)" },
	[OPT_BRIDGE] = { .key = "bridge",
			 .type = BACH_OPT_ENUM,
			 .names = bridges,
			 .def = "auto",
			 .help = "what carries the board's FIFO: plain, or ftdi (FT2232H/FT232H, 245 sync FIFO); auto tells by the chip" },
	[OPT_POLICY] = { .key = "policy",
			 .type = BACH_OPT_ENUM,
			 .names = policies,
			 .def = "stall",
			 .help = "the board's loss policy (stall: it holds the CPU)" },
	[OPT_TIMING] = { .key = "timing",
			 .type = BACH_OPT_BOOL,
			 .def = "0",
			 .help = "frames carry per-record clock deltas" },
	[OPT_PATTERN] = { .key = "pattern",
			  .type = BACH_OPT_ENUM,
			  .names = patterns,
			  .def = "bus",
			  .help = "the bus, or a test pattern" },
	[OPT_FILTER] = { .key = "filter",
			 .type = BACH_OPT_UINT,
			 .arg = "MASK",
			 .max = 0xffff,
			 .def = "0",
			 .help = "record only cycle types t with bit t set, 0 for all" },
	[OPT_HIGH_WATER] = { .key = "high_water",
			     .type = BACH_OPT_UINT,
			     .arg = "N",
			     .max = 0xffff,
			     .def = "0",
			     .help = "stall: hold the CPU at this FIFO fill, in 1/65536ths, 0 for 75 %" },
	[OPT_LOW_WATER] = { .key = "low_water",
			    .type = BACH_OPT_UINT,
			    .arg = "N",
			    .max = 0xffff,
			    .def = "0",
			    .help = "stall: release it at this fill, 0 for 25 %" },
	[OPT_XFERS] = { .key = "xfers",
			.type = BACH_OPT_UINT,
			.arg = "N",
			.min = 2,
			.max = 1024,
			.def_help = "0.5 s of data",
			.help = "bulk IN transfers in flight" },
	[OPT_XFER_KIB] = { .key = "xfer_kib",
			   .type = BACH_OPT_UINT,
			   .arg = "K",
			   .min = 1,
			   .max = 65536,
			   .def_help = "about 10 ms of data",
			   .help = "KiB per transfer" },
	[OPT_TIMEOUT] = { .key = "timeout",
			  .type = BACH_OPT_UINT,
			  .arg = "S",
			  .min = 1,
			  .max = 3600,
			  .def = "5",
			  .help = "a board silent this many seconds ends the capture" },
	[OPT_STATUS_MS] = { .key = "status_ms",
			    .type = BACH_OPT_UINT,
			    .arg = "MS",
			    .min = 50,
			    .max = 60000,
			    .def = "1000",
			    .help = "ask the board for its status this often" },
	[OPT_RECONNECT] = { .key = "reconnect",
			    .type = BACH_OPT_BOOL,
			    .def = "0",
			    .help = "ride out an unplug: resume in a new segment when it is back" },
	{ 0 },
};

static int usb_check(const struct bach_optval *o, char *msg, size_t cap)
{
	if (o[OPT_TIMEOUT].u * 1000 < 2 * o[OPT_STATUS_MS].u) {
		snprintf(
			msg, cap,
			"option timeout: %llu s is too short for status_ms=%llu (at least two STATUS requests must go unanswered)",
			(unsigned long long)o[OPT_TIMEOUT].u,
			(unsigned long long)o[OPT_STATUS_MS].u);
		return -EINVAL;
	}
	return 0;
}

/* ---- finding the board ------------------------------------------------- */

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
	return bcd == 0x0500 || bcd == 0x0700 || bcd == 0x0800 || bcd == 0x0900;
}

/* The bulk endpoints of our interface, and which bridge carries them. */
static int endpoints(struct usb *u, libusb_device *dev,
		     const struct libusb_device_descriptor *d)
{
	struct libusb_config_descriptor *cfg;
	const struct libusb_interface_descriptor *alt;
	int r = libusb_get_active_config_descriptor(dev, &cfg);

	if (r)
		return bach_source_error(
			u->src, -EIO,
			"board %s at %s: no active configuration: %s",
			u->serial, u->path, libusb_error_name(r));
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
		return bach_source_error(
			u->src, -EPROTO,
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
		err = bach_source_error(
			u->src, -EEXIST,
			"%d boards %04x:%04x: %s at %s%s: choose one with serial=S or path=P",
			matches, u->vid, u->pid,
			serial[0] ? serial : "(no serial)", u->path, others);
		libusb_close(h);
		goto out;
	}
	if (!h) {
		if (denied[0])
			err = bach_source_error(
				u->src, -EACCES,
				"board %04x:%04x at %s: permission denied (LIBUSB_ERROR_ACCESS): install systemd/60-bach.rules and join group bach (docs/usb.md)",
				u->vid, u->pid, denied);
		else if (quiet)
			err = -ENODEV;
		else
			err = bach_source_error(
				u->src, -ENODEV,
				"no board %04x:%04x%s%s%s%s found (is it plugged in and powered? lsusb -d %04x:%04x lists it)",
				u->vid, u->pid,
				u->want_serial[0] ? " with serial " : "",
				u->want_serial, u->want_path[0] ? " at " : "",
				u->want_path, u->vid, u->pid);
		goto out;
	}
	libusb_set_auto_detach_kernel_driver(h, 1);
	r = libusb_claim_interface(h, USB_IFACE);
	if (r) {
		err = bach_source_error(
			u->src, r == LIBUSB_ERROR_BUSY ? -EBUSY : -EIO,
			"board %s at %s: cannot claim interface %d: %s%s",
			serial, u->path, USB_IFACE, libusb_error_name(r),
			r == LIBUSB_ERROR_BUSY
				? " (another program, another bachd?, has it)"
				: "");
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
	snprintf(
		ident, sizeof(ident),
		"\"name\":\"%s\",\"serial\":\"%s\",\"gateware\":\"%u.%u\",\"clock_hz\":%u,\"fifo_records\":%u,\"capabilities\":%u,\"usb\":\"%04x:%04x\",\"usb_path\":\"%s\",\"usb_speed\":\"%s\",\"bridge\":\"%s\",\"endpoints\":\"%02x %02x\",\"transfers\":%u,\"transfer_bytes\":%u,\"policy\":\"%s\",\"timing\":%s,\"source\":\"%s\",\"filter\":%u",
		name, serial, u->id.gw_major, u->id.gw_minor, u->id.clock_hz,
		u->id.fifo_records, u->id.capabilities, u->vid, u->pid, path,
		speed_name(u->speed), u->ftdi ? "ftdi" : "plain", u->ep_out,
		u->ep_in, u->nx, u->xfer_bytes,
		u->cfg.policy == BACH_POLICY_DROP ? "drop" : "stall",
		u->cfg.timing ? "true" : "false", sources[u->cfg.test_pattern],
		u->cfg.type_filter);
	bach_source_identity(src, ident);
}

static int usb_open(struct bach_source *src, void *priv,
		    const struct bach_optval *opts)
{
	struct usb *u = priv;
	int r, err;

	u->src = src;
	u->vid = (uint16_t)opts[OPT_VID_PID].u;
	u->pid = (uint16_t)opts[OPT_VID_PID].u2;
	if (opts[OPT_SERIAL].set)
		snprintf(u->want_serial, sizeof(u->want_serial), "%s",
			 opts[OPT_SERIAL].s);
	if (opts[OPT_PATH].set)
		snprintf(u->want_path, sizeof(u->want_path), "%s",
			 opts[OPT_PATH].s);
	u->bridge = (enum usb_bridge)opts[OPT_BRIDGE].u;
	u->cfg.policy =
		opts[OPT_POLICY].u ? BACH_POLICY_DROP : BACH_POLICY_STALL;
	u->cfg.timing = (uint8_t)opts[OPT_TIMING].u;
	u->cfg.test_pattern = (uint8_t)opts[OPT_PATTERN].u;
	u->cfg.type_filter = (uint16_t)opts[OPT_FILTER].u;
	u->cfg.high_water = (uint16_t)opts[OPT_HIGH_WATER].u;
	u->cfg.low_water = (uint16_t)opts[OPT_LOW_WATER].u;
	u->nxfer = opts[OPT_XFERS].set ? (unsigned)opts[OPT_XFERS].u : 0;
	u->xfer_bytes = opts[OPT_XFER_KIB].set
				? (unsigned)opts[OPT_XFER_KIB].u << 10
				: 0;
	u->timeout_ms = (unsigned)opts[OPT_TIMEOUT].u * 1000;
	u->status_ms = (unsigned)opts[OPT_STATUS_MS].u;
	u->reconnect = opts[OPT_RECONNECT].u;
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
					 "%u transfers of %u bytes: %s", u->nx,
					 u->xfer_bytes, strerror(-err));
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
			return bach_source_error(
				src, -ENODEV,
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
	.options = usb_options,
	.check = usb_check,
	.priv_size = sizeof(struct usb),
	.open = usb_open,
	.run = usb_run,
	.stop = usb_stop,
	.close = usb_close,
	.frame = usb_frame,
};
