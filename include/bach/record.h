/* SPDX-License-Identifier: MIT */
/*
 * The BYU record: six bytes per Pentium bus cycle (docs/design.md section 2).
 *
 *   byte 0..3  physical address, big-endian, A31..A3 (low 3 bits zero)
 *   byte 4     BE7#..BE0# as sampled, active low (0x00 = all eight bytes)
 *   byte 5     M/IO# D/C# W/R# CACHE# in bits 7..4, bits 3..0 zero
 *
 * Records are handled in place, as arrays of 6-byte groups; struct bach_rec
 * is an unpacked copy for code that wants named fields.
 */
#ifndef BACH_RECORD_H
#define BACH_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bach/bytes.h"

#define BACH_REC_SIZE 6

/* control >> 4. Values are fixed by the BYU specification: never renumber. */
enum bach_type {
	BACH_T_INVALID0 = 0,
	BACH_T_INT_ACK = 1,
	BACH_T_INVALID2 = 2,
	BACH_T_SPECIAL = 3,
	BACH_T_INVALID4 = 4,
	BACH_T_IO_READ = 5,
	BACH_T_INVALID6 = 6,
	BACH_T_IO_WRITE = 7,
	BACH_T_I_FETCH = 8,
	BACH_T_NC_I_FETCH = 9,
	BACH_T_INVALID10 = 10,
	BACH_T_INVALID11 = 11,
	BACH_T_D_READ = 12,
	BACH_T_NC_D_READ = 13,
	BACH_T_WRITE_BACK = 14,
	BACH_T_D_WRITE = 15,
};

#define BACH_NTYPES 16

/* Control-byte pin bits. */
#define BACH_CTL_MIO   0x80
#define BACH_CTL_DC    0x40
#define BACH_CTL_WR    0x20
#define BACH_CTL_CACHE 0x10

/*
 * A gap marker (docs/design.md section 6): an INVALID type with low nibble 0xF,
 * address = number of records lost at this position. bach writes control
 * byte 0x0F; readers accept any INVALID type with low nibble 0xF.
 */
#define BACH_GAP_CTL 0x0f

/* Special-cycle kinds, decoded from BE# (and A4 for halt/stop grant). */
enum bach_special {
	BACH_SP_SHUTDOWN,   /* BE# FE */
	BACH_SP_FLUSH,	    /* BE# FD, INVD */
	BACH_SP_HALT,	    /* BE# FB, A4 = 0 */
	BACH_SP_STOP_GRANT, /* BE# FB, A4 = 1 */
	BACH_SP_WRITEBACK,  /* BE# F7, WBINVD */
	BACH_SP_FLUSH_ACK,  /* BE# EF */
	BACH_SP_BTM,	    /* BE# DF, branch-trace message */
	BACH_SP_OTHER,	    /* any other BE# pattern */
	BACH_NSPECIAL
};

/* Validity faults, as a bit mask; 0 means a valid record. */
#define BACH_F_TYPE	0x1 /* control >> 4 is an INVALID type */
#define BACH_F_ADDR_LOW 0x2 /* address bits 2..0 not zero */
#define BACH_F_CTL_LOW	0x4 /* control bits 3..0 not zero */

struct bach_rec {
	uint32_t addr;
	uint8_t be;
	uint8_t ctl;
};

static inline void bach_rec_unpack(const uint8_t *p, struct bach_rec *r)
{
	r->addr = bach_get_be32(p);
	r->be = p[4];
	r->ctl = p[5];
}

static inline void bach_rec_pack(uint8_t *p, const struct bach_rec *r)
{
	bach_put_be32(p, r->addr);
	p[4] = r->be;
	p[5] = r->ctl;
}

static inline void bach_rec_put(uint8_t *p, uint32_t addr, uint8_t be,
				uint8_t ctl)
{
	bach_put_be32(p, addr);
	p[4] = be;
	p[5] = ctl;
}

static inline unsigned bach_type_of(uint8_t ctl)
{
	return ctl >> 4;
}

/* Bit n set when type n is one of the INVALID values. */
#define BACH_INVALID_TYPES 0x0c55u

static inline bool bach_type_valid(unsigned type)
{
	return !(BACH_INVALID_TYPES >> (type & 15) & 1);
}

static inline bool bach_type_is_memory(unsigned type)
{
	return type >= BACH_T_I_FETCH && bach_type_valid(type);
}

static inline bool bach_rec_is_gap(const uint8_t *p)
{
	return (p[5] & 0x0f) == 0x0f && !bach_type_valid(p[5] >> 4);
}

/* 0 when valid, else a mask of BACH_F_* faults. */
static inline unsigned bach_rec_check(const uint8_t *p)
{
	unsigned f = 0;

	if (!bach_type_valid(p[5] >> 4))
		f |= BACH_F_TYPE;
	if (p[3] & 7)
		f |= BACH_F_ADDR_LOW;
	if (p[5] & 0x0f)
		f |= BACH_F_CTL_LOW;
	return f;
}

/* Number of bytes requested: BE# bits that are zero. */
static inline unsigned bach_be_bytes(uint8_t be)
{
	return 8 - (unsigned)__builtin_popcount(be);
}

/* "INVALID", "INT_ACK", ... as in the BYU specification table. */
const char *bach_type_name(unsigned type);

/* Parse a type name (case-insensitive); -1 when unknown. */
int bach_type_parse(const char *name);

enum bach_special bach_special_kind(uint32_t addr, uint8_t be);
const char *bach_special_name(enum bach_special kind);

/* Human description of a fault mask, e.g. "INVALID type 6". */
const char *bach_fault_name(unsigned fault);

#endif
