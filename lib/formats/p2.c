// SPDX-License-Identifier: MIT
/*
 * BYU's p2AddrTr records (byutr.h of the BYU Address Trace tools; the
 * BYU Address Trace Specification V1.0, ../shared/references: 000, for
 * the bus cycles they become). Import only.
 */
#include "lib/formats/format_kit.h"

/* p2AddrTr request types (BYU byutr.h) */
enum {
	P2_FETCH = 0x00,
	P2_MEMREAD = 0x01,
	P2_MEMREADINV = 0x02,
	P2_MEMWRITE = 0x03,
	P2_IOREAD = 0x10,
	P2_IOWRITE = 0x11,
	P2_DEFERREPLY = 0x20,
	P2_INTA = 0x21,
	P2_CNTRLAGNTRES = 0x22,
	P2_BRTRACEREC = 0x23,
	P2_SHUTDOWN = 0x31,
	P2_FLUSH = 0x32,
	P2_HALT = 0x33,
	P2_SYNC = 0x34,
	P2_FLUSHACK = 0x35,
	P2_STOPCLKACK = 0x36,
	P2_SMIACK = 0x37,
};

#define P2_SIZE 12
#define P2_LINE 32

/* ---- BYU p2AddrTr ------------------------------------------------------ */

/* A special cycle: BE# names the kind, A4 tells stop grant from halt. */
static int special(uint8_t *out, uint32_t addr, uint8_t be)
{
	bach_rec_put(out, addr, be, CTL_SPECIAL);
	return 1;
}

/*
 * A memory transfer: a 32-byte line is one burst cycle, one record for
 * the quadword the address names with BE# 0x00; up to 16 bytes follow the
 * quadword rule.
 */
static int p2_mem(uint8_t *out, uint32_t addr, unsigned size, uint8_t ctl,
		  unsigned flags, const char **why)
{
	if (size == P2_LINE) {
		bach_rec_put(out, addr & ~7u, 0x00, ctl);
		return 1;
	}
	if (size > 16)
		return bad(why, "bad size %u (1 to 16, or 32 for a line)",
			   size);
	return split(out, addr, size, ctl, flags, BACH_IMPORT_MAX_RECS, why);
}

/*
 * 12 bytes: address (LE32), request type, size, attribute, processor,
 * delta time (LE32). Attribute bits 1..0 of 00 mean uncacheable.
 */
static int p2_record(const char *line, size_t len, unsigned flags, uint8_t *out,
		     uint64_t *skipped, const char **why)
{
	const uint8_t *p = (const uint8_t *)line;
	uint32_t addr;
	unsigned type, size;
	bool cacheable;

	if (len != P2_SIZE)
		return bad(why, "p2AddrTr record of %zu bytes, not 12", len);
	addr = bach_get_le32(p);
	type = p[4];
	size = p[5];
	cacheable = (p[6] & 3) != 0;

	switch (type) {
	case P2_FETCH:
		return p2_mem(out, addr, size,
			      cacheable ? CTL_I_FETCH : CTL_NC_I_FETCH, flags,
			      why);
	case P2_MEMREAD:
	case P2_MEMREADINV:
		return p2_mem(out, addr, size,
			      cacheable ? CTL_D_READ : CTL_NC_D_READ, flags,
			      why);
	case P2_MEMWRITE:
		/* a burst write of a whole line is the Pentium's writeback */
		return p2_mem(out, addr, size,
			      size == P2_LINE ? CTL_WRITE_BACK : CTL_D_WRITE,
			      flags, why);
	case P2_IOREAD:
		return split(out, addr, size, CTL_IO_READ, flags, 8, why);
	case P2_IOWRITE:
		return split(out, addr, size, CTL_IO_WRITE, flags, 8, why);
	case P2_INTA:
		return split(out, addr, size ? size : 1, CTL_INT_ACK, flags, 8,
			     why);
	case P2_BRTRACEREC:
		return special(out, 0, 0xdf);
	case P2_SHUTDOWN:
		return special(out, 0, 0xfe);
	case P2_FLUSH:
		return special(out, 0, 0xfd);
	case P2_HALT:
		return special(out, 0, 0xfb);
	case P2_SYNC:
		return special(out, 0, 0xf7);
	case P2_FLUSHACK:
		return special(out, 0, 0xef);
	case P2_STOPCLKACK:
		return special(out, 0x10, 0xfb);
	case P2_DEFERREPLY:
	case P2_CNTRLAGNTRES:
	case P2_SMIACK:
		(*skipped)++;
		return 0;
	default:
		return bad(why, "unknown request type 0x%02x", type);
	}
}

const struct bach_format fmt_p2 = {
	.name = "p2",
	.alias = "p2AddrTr",
	.kind = BACH_FORMAT_FOREIGN,
	.help = "BYU 12-byte Pentium II records (p2AddrTr)",
	.line = p2_record,
	.unit = P2_SIZE,
	.units = "p2AddrTr records",
};
