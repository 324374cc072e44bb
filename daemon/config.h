/* SPDX-License-Identifier: MIT */
/*
 * bachd's configuration: an INI file (parsed by libinih) and command-line
 * overrides. Every setting is documented in systemd/bachd.conf.example.
 */
#ifndef BACHD_CONFIG_H
#define BACHD_CONFIG_H

#include <stdbool.h>

#include "session.h"

struct bachd_config {
	struct capture_config cap;
	char control_socket[108];
	char control_group[64];
	int log_level;
	unsigned metrics_interval; /* seconds */
	/* the metrics' instance_name label ("": $BACHD_INSTANCE's, if any) */
	char instance_name[65];
	/* label.KEY values copied into every metrics series: "KEY,..." */
	char metrics_labels[256];
};

/* The [bachd] settings: what bachd_config_set() takes, and --help prints. */
extern const struct bach_optdesc bachd_settings[];

void bachd_config_defaults(struct bachd_config *c);

/*
 * Read FILE into c. On an error returns -EINVAL (or -errno when the file
 * cannot be read) with "FILE:LINE: what is wrong" in msg. The [driver]
 * options keep FILE and their line for later messages: FILE must outlive
 * c (argv does).
 */
int bachd_config_load(struct bachd_config *c, const char *file, char *msg,
		      size_t msglen);

/*
 * One setting by name, as in the [bachd] section ("policy", "drop");
 * returns 0 or -EINVAL with the reason in msg ("policy: stall or drop,
 * not 'fast'"; an unknown key lists the known ones).
 */
int bachd_config_set(struct bachd_config *c, const char *key, const char *value,
		     char *msg, size_t msglen);

/* The label.KEY of the len bytes at key (a metrics_labels item), or NULL. */
const struct capture_label *bachd_config_label(const struct bachd_config *c,
					       const char *key, size_t len);

#endif
