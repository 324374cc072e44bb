// SPDX-License-Identifier: MIT
/*
 * The manifest's events by name (lib/io/manifest.h): the one list the writer
 * (core/manifest_write.c) takes each "event" member from and the reader
 * (lib/io/manifest_read.c) tells known events from unknown ones by.
 */
#include <string.h>

#include "lib/io/manifest.h"

const char *const bach_manifest_ev_names[BACH_EV_OTHER] = {
	[BACH_EV_STARTED] = "started",
	[BACH_EV_SEGMENT] = "segment",
	[BACH_EV_GAP] = "gap",
	[BACH_EV_STALL] = "stall",
	[BACH_EV_MARK] = "mark",
	[BACH_EV_DEVICE_LOST] = "device_lost",
	[BACH_EV_DEVICE_BACK] = "device_back",
	[BACH_EV_ENDED] = "ended",
	[BACH_EV_RETENTION] = "retention",
};

const char *bach_manifest_ev_name(enum bach_manifest_ev kind)
{
	return (unsigned)kind < BACH_EV_OTHER ? bach_manifest_ev_names[kind]
					      : NULL;
}

enum bach_manifest_ev bach_manifest_ev_kind(const char *name)
{
	for (unsigned k = 0; k < BACH_EV_OTHER; k++)
		if (bach_manifest_ev_names[k] &&
		    !strcmp(name, bach_manifest_ev_names[k]))
			return (enum bach_manifest_ev)k;
	return BACH_EV_OTHER;
}
