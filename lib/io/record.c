// SPDX-License-Identifier: MIT
/* Names of record types, special cycles and faults. */
#include <strings.h>

#include "bach/bach.h"
#include "bach/record.h"

static const char *const type_names[BACH_NTYPES] = {
	[BACH_T_INVALID0] = "INVALID",	    [BACH_T_INT_ACK] = "INT_ACK",
	[BACH_T_INVALID2] = "INVALID",	    [BACH_T_SPECIAL] = "SPECIAL",
	[BACH_T_INVALID4] = "INVALID",	    [BACH_T_IO_READ] = "IO_READ",
	[BACH_T_INVALID6] = "INVALID",	    [BACH_T_IO_WRITE] = "IO_WRITE",
	[BACH_T_I_FETCH] = "I_FETCH",	    [BACH_T_NC_I_FETCH] = "NC_I_FETCH",
	[BACH_T_INVALID10] = "INVALID",	    [BACH_T_INVALID11] = "INVALID",
	[BACH_T_D_READ] = "D_READ",	    [BACH_T_NC_D_READ] = "NC_D_READ",
	[BACH_T_WRITE_BACK] = "WRITE_BACK", [BACH_T_D_WRITE] = "D_WRITE",
};

const char *bach_type_name(unsigned type)
{
	return type_names[type & 15];
}

int bach_type_parse(const char *name)
{
	for (int t = 0; t < BACH_NTYPES; t++)
		if (bach_type_valid((unsigned)t) &&
		    !strcasecmp(name, type_names[t]))
			return t;
	return -1;
}

enum bach_special bach_special_kind(uint32_t addr, uint8_t be)
{
	switch (be) {
	case 0xfe:
		return BACH_SP_SHUTDOWN;
	case 0xfd:
		return BACH_SP_FLUSH;
	case 0xfb:
		return addr & 0x10 ? BACH_SP_STOP_GRANT : BACH_SP_HALT;
	case 0xf7:
		return BACH_SP_WRITEBACK;
	case 0xef:
		return BACH_SP_FLUSH_ACK;
	case 0xdf:
		return BACH_SP_BTM;
	default:
		return BACH_SP_OTHER;
	}
}

static const char *const special_names[BACH_NSPECIAL] = {
	[BACH_SP_SHUTDOWN] = "shutdown",   [BACH_SP_FLUSH] = "flush",
	[BACH_SP_HALT] = "halt",	   [BACH_SP_STOP_GRANT] = "stop_grant",
	[BACH_SP_WRITEBACK] = "writeback", [BACH_SP_FLUSH_ACK] = "flush_ack",
	[BACH_SP_BTM] = "branch_trace",	   [BACH_SP_OTHER] = "other",
};

const char *bach_special_name(enum bach_special kind)
{
	return kind < BACH_NSPECIAL ? special_names[kind] : "other";
}

const char *bach_fault_name(unsigned fault)
{
	if (fault & BACH_F_TYPE)
		return "INVALID cycle type";
	if (fault & BACH_F_ADDR_LOW)
		return "address bits 2..0 set";
	if (fault & BACH_F_CTL_LOW)
		return "control bits 3..0 set";
	return "valid";
}

/* the Makefile gives the version; builds of lib/ alone (fuzzing) may not */
#ifndef BACH_VERSION
#define BACH_VERSION "unknown"
#endif

const char *bach_version(void)
{
	return BACH_VERSION;
}
