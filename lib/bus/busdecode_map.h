/* SPDX-License-Identifier: MIT */
/*
 * What the bus decoder (busdecode.c) takes from the channel maps
 * (busdecode_map.c) beyond lib/bus/busdecode.h. Hidden: nothing
 * here leaves libbach.
 */
#ifndef BACH_BUSDECODE_MAP_H
#define BACH_BUSDECODE_MAP_H

#include <stdbool.h>

#include "lib/bus/busdecode.h"

#pragma GCC visibility push(hidden)

/*
 * Following cycles to their end needs BRDY#, and KEN# and NA# known:
 * without KEN# a refused read cannot be told from a line fill, without
 * NA# KEN#'s sampling point on a pipelined bus is lost; either way later
 * BRDY#s go to the wrong cycle and a back-off drops cycles that had
 * completed. Without them: one record per ADS#.
 */
bool busmap_tracking(const struct bach_busmap *map);

#pragma GCC visibility pop

#endif
