// SPDX-License-Identifier: MIT
/*
 * Every driver built in, in one table (after gpsd and chrony), and what
 * the core does with their option tables.
 */
#include <stddef.h>
#include <string.h>

#include "drivers/driver.h"

extern const struct bach_driver bach_driver_fake;
extern const struct bach_driver bach_driver_replay;
extern const struct bach_driver bach_driver_sigrok;
extern const struct bach_driver bach_driver_usb;

/* make NO_SIGROK=1 / NO_USB=1 build without their libraries */
const struct bach_driver *const bach_drivers[] = {
	&bach_driver_fake,
	&bach_driver_replay,
#ifndef BACH_NO_SIGROK
	&bach_driver_sigrok,
#endif
#ifndef BACH_NO_USB
	&bach_driver_usb,
#endif
	NULL,
};

const struct bach_driver *bach_driver_find(const char *name)
{
	for (size_t i = 0; bach_drivers[i]; i++)
		if (!strcmp(bach_drivers[i]->name, name))
			return bach_drivers[i];
	return NULL;
}

int bach_driver_options(const struct bach_driver *drv,
			const struct bach_option *opts, size_t n,
			struct bach_optval *vals, char *msg, size_t cap)
{
	int err = bach_opts_parse(drv->options, drv->name, opts, n, vals, msg,
				  cap);

	if (!err && drv->check)
		err = drv->check(vals, msg, cap);
	return err;
}

void bach_drivers_print(FILE *f)
{
	char msg[256];

	for (size_t i = 0; bach_drivers[i]; i++) {
		const struct bach_driver *d = bach_drivers[i];

		fprintf(f, "%s%s: %s\n", i ? "\n" : "", d->name, d->summary);
		/* a table that contradicts itself is a bug: say so here */
		if (bach_opts_verify(d->options, msg, sizeof(msg)))
			fprintf(f, "  BUG: %s\n", msg);
		bach_opts_print(f, d->options);
	}
}
