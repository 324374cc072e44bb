/* SPDX-License-Identifier: MIT */
/* The command line bachd and `bach capture` share. */
#ifndef BACHD_ARGS_H
#define BACHD_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"

struct bachd_args {
	bool check_config;
	bool help;
	bool list_drivers;
	bool version;
};

/*
 * --config is read first, then the other options override it. Returns 0,
 * or 2 after printing a message that names the option (or the config
 * file and line).
 */
int bachd_parse_args(struct bachd_config *c, struct bachd_args *a, int argc,
		     char **argv, const char *prog);
void bachd_usage(const char *prog, bool daemon);
/* The options' lines of that usage (bach help capture prints them too) */
void bachd_options_print(FILE *f, bool daemon);

#endif
