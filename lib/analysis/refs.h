/* SPDX-License-Identifier: MIT */
/*
 * The memory reference a record makes, for the analyses (bach sim, bach
 * mrc, bach plot; docs/analysis.md section 1):
 *
 *   I_FETCH, NC_I_FETCH      an instruction fetch
 *   D_READ, NC_D_READ        a data read
 *   D_WRITE, WRITE_BACK      a write
 *
 * Every other record (I/O, special and interrupt-acknowledge cycles,
 * INVALID types, gap markers) is no reference. A reference is one access
 * within the record's quadword: from its lowest requested byte (the first
 * zero bit of BE#) to its highest, gaps in BE# included; BE# ff (nothing
 * requested) is the whole quadword. This is exactly what
 * `bach convert --to dinx` writes, so Dinero IV reads the same references
 * from that export (docs/formats.md section 7).
 */
#ifndef BACH_REFS_H
#define BACH_REFS_H

#include <stdint.h>

#include "bach/record.h"

enum bach_ref_kind {
	BACH_REF_IFETCH,
	BACH_REF_READ,
	BACH_REF_WRITE,
	BACH_REF_NKINDS,
	BACH_REF_NONE = BACH_REF_NKINDS, /* not a reference */
};

/* Kind of reference by control byte >> 4. */
static inline unsigned bach_ref_kind(uint8_t ctl)
{
	/* 4 bits per type, type 15 in the top nibble */
	static const uint64_t kinds = 0x2211330033333333ull;

	return (unsigned)(kinds >> ((ctl >> 4) * 4) & 15);
}

/*
 * First byte address of the reference and its size (1 to 8). The address
 * field is taken as it is (bits 2..0 set are damage bach verify reports);
 * a reference that would run past 4 GiB is cut there.
 */
static inline uint32_t bach_ref_span(const uint8_t *rec, unsigned *size)
{
	unsigned want = (uint8_t)~rec[4];
	uint32_t a = bach_get_be32(rec);
	unsigned lo = 0, n = 8;

	if (want) {
		lo = (unsigned)__builtin_ctz(want);
		n = 32 - (unsigned)__builtin_clz(want) - lo;
	}
	if ((uint64_t)a + lo + n > (1ull << 32)) {
		if ((uint64_t)a + lo >= (1ull << 32))
			lo = 0; /* wrapped: the record's own address */
		n = (unsigned)((1ull << 32) - a - lo);
	}
	*size = n;
	return a + lo;
}

static inline const char *bach_ref_kind_name(unsigned kind)
{
	static const char *const names[] = { "ifetch", "read", "write" };

	return kind < BACH_REF_NKINDS ? names[kind] : "none";
}

#endif
