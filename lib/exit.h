/* SPDX-License-Identifier: MIT */
/*
 * Exit statuses, for every program of the project (docs/design.md,
 * section "Interfaces"). Scripts and systemd units depend on them: never
 * renumber one, only append.
 */
#ifndef BACH_EXIT_H
#define BACH_EXIT_H

#define EXIT_OK 0
/* the data is bad: damage found, a truncated file, a malformed line; for a
 * capture, records were lost to a failed write */
#define EXIT_DATA 1
/* usage or environment: a bad option, a missing file, no device */
#define EXIT_USAGE 2
/* a capture stopped because the disk was full (ENOSPC) */
#define EXIT_ENOSPC 3
/* a capture's source failed (device, file being replayed) */
#define EXIT_SOURCE 4
/* a capture's manifest could not be written: its accounting is incomplete */
#define EXIT_MANIFEST 5

#endif
