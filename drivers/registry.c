// SPDX-License-Identifier: MIT
/* Every driver built in, in one table (after gpsd and chrony). */
#include <stddef.h>
#include <string.h>

#include "bach/driver.h"

extern const struct bach_driver bach_driver_fake;
extern const struct bach_driver bach_driver_replay;
extern const struct bach_driver bach_driver_sigrok;
extern const struct bach_driver bach_driver_usb;

const struct bach_driver *const bach_drivers[] = {
	&bach_driver_fake,
	&bach_driver_replay,
	&bach_driver_sigrok,
	&bach_driver_usb,
	NULL,
};

const struct bach_driver *bach_driver_find(const char *name)
{
	for (size_t i = 0; bach_drivers[i]; i++)
		if (!strcmp(bach_drivers[i]->name, name))
			return bach_drivers[i];
	return NULL;
}
