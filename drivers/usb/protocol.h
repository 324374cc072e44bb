/* SPDX-License-Identifier: MIT */
/*
 * usb: the capture board over libusb (docs/usb.md). api.c holds the
 * driver table entry, the options and finding and opening the board;
 * protocol.c the board's commands, the IN stream and its transfers.
 *
 * Everything runs on one thread at a time: open() and close() on the main
 * thread, run() and every libusb callback (libusb events are handled only
 * inside run()) on the acquisition thread. stop() only sets a flag and
 * wakes the event loop.
 */
#ifndef BACH_USB_PROTOCOL_H
#define BACH_USB_PROTOCOL_H

#include <libusb.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/driver.h"
#include "lib/bus/frame.h"

#define USB_VID	     0x1209 /* pid.codes (systemd/60-bach.rules) */
#define USB_PID	     0x4243
#define USB_IFACE    0
#define USB_GW_MAJOR 1 /* the gateware major version we speak */

/*
 * The USB side of the board (docs/usb.md section 3): a plain vendor
 * interface (bulk OUT 0x01, bulk IN 0x81, as docs/board-protocol.md
 * section 1), or an FTDI FT2232H/FT232H in 245 synchronous FIFO mode,
 * whose channel A has bulk IN 0x81 and OUT 0x02, needs vendor requests to
 * enter that mode, and starts every IN packet with two modem status
 * bytes. The endpoints are read from the descriptors either way.
 */
enum usb_bridge {
	USB_BRIDGE_AUTO, /* FTDI if bcdDevice names an FTDI chip */
	USB_BRIDGE_PLAIN,
	USB_BRIDGE_FTDI,
};

#define FTDI_STATUS_BYTES 2 /* at the start of every IN packet */
#define FTDI_LATENCY_MS	  2 /* the chip sends what it holds this often */

#define USB_CMD_TIMEOUT_MS 1000 /* a command's reply (protocol section 1) */
#define USB_CMD_TRIES	   3
#define USB_MAX_FAILS	   16	/* failed IN transfers in a row: give up */
#define USB_MAX_EMPTY	   4096 /* empty IN transfers in a row: give up */
#define USB_DRAIN_MS	   3000 /* cancelled transfers must be back by then */

/* ---- the driver's state ------------------------------------------------- */

struct usb;
struct sync_wait;

struct usb_xfer {
	struct usb *u;
	struct libusb_transfer *t;
	bool busy; /* submitted and not yet back */
};

enum usb_state {
	USB_STARTING, /* START sent, its ACK not seen */
	USB_RUNNING,
	USB_STOPPING, /* STOP sent, its ACK not seen */
	USB_DONE,     /* cancelling and draining the transfers */
};

struct usb {
	/* options */
	uint16_t vid, pid;
	char want_serial[64];
	char want_path[32];
	struct bach_board_config cfg;
	unsigned nxfer, xfer_bytes; /* 0: from the link's speed */
	unsigned timeout_ms, status_ms;
	bool reconnect;
	enum usb_bridge bridge;

	/* the board */
	libusb_context *ctx;
	libusb_device_handle *h;
	libusb_hotplug_callback_handle hotplug;
	bool have_hotplug;
	bool claimed;
	char path[32];	 /* where it is plugged in: "1-2.3" */
	char serial[64]; /* its USB serial number */
	int speed;
	bool ftdi; /* the bridge is an FTDI chip */
	uint8_t ep_in, ep_out;
	unsigned mps; /* the IN endpoint's packet size */
	struct bach_board_identity id;
	uint32_t cmd_seq;

	struct bach_source *src;
	atomic_bool stop;

	/* streaming (run) */
	struct usb_xfer *x;
	unsigned nx;
	unsigned in_flight;
	struct libusb_transfer *cmd; /* the one command transfer */
	uint8_t cmd_buf[BACH_FRAME_HDR + BACH_CONFIG_SIZE + BACH_FRAME_CRC];
	bool cmd_busy;
	uint32_t pending; /* command awaiting its reply, 0: none */
	unsigned tries;
	uint64_t deadline; /* ns: the pending command times out */
	/*
	 * The board's replies come from the core's frame parser (usb_frame)
	 * once START is acknowledged. Before that, in the handshake and up to
	 * START's ACK, the stream is no capture's: this parser of our own
	 * finds the replies in it, and the rest is dropped.
	 */
	struct bach_parser *replies;
	struct sync_wait *sync; /* the handshake's command awaiting a reply */
	uint64_t fed;		/* bytes given to the core since START's ACK */
	uint64_t data_end;	/* index + count of the last data frame */
	enum usb_state state;
	bool started;	 /* START's ACK seen: bytes go to the core */
	size_t start_at; /* where in the current piece they begin */
	bool board_done; /* a LAST frame: the board stopped sampling */
	bool stop_acked;
	bool lost;   /* the board went away */
	bool halted; /* the IN endpoint stalled */
	int fatal;   /* -errno: the session fails */
	uint64_t last_rx, next_status;
	unsigned fails, empties;
	uint64_t stalls;
	uint64_t status_records; /* the last STATUS's count */
	struct bach_board_status status;
	bool arrived; /* hotplug: a board like ours appeared */
};

/* api.c */
int usb_find_open(struct usb *u, bool quiet);
void usb_close_board(struct usb *u);

/* protocol.c */
void usb_frame(void *priv, const struct bach_frame *f);
int usb_bridge_init(struct usb *u);
int usb_handshake(struct usb *u);
int usb_alloc_transfers(struct usb *u);
void usb_free_transfers(struct usb *u);
int usb_stream(struct usb *u);
const char *usb_ack_name(uint32_t result);

#endif
