/* SPDX-License-Identifier: MIT */
/* The command line bachd and `bach capture` share. */
#ifndef BACHD_ARGS_H
#define BACHD_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "lib/complete.h"

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

/*
 * The completion of bachd's and `bach capture`'s command line
 * (lib/complete.h): their getopt table, and what the values complete to
 * (driver names, a driver's KEY=, the [bachd] KEY=, --policy's and
 * --autostop's words), from the tables bachd parses with.
 */
const struct option *bachd_options(const char **shortopts);
extern const struct complete_values bachd_complete_values[];

#endif
