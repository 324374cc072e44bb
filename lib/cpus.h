/* SPDX-License-Identifier: MIT */
/*
 * How many CPUs this process may run on (library-internal): the CPUs of
 * its affinity mask (taskset, cgroup cpusets, systemd's CPUAffinity=), not
 * the machine's. A second thread started for work that one CPU would do
 * alone only slows it down.
 */
#ifndef BACH_CPUS_H
#define BACH_CPUS_H

/* The CPUs in the sched_getaffinity() mask, at most max, at least 1 (the
 * CPUs online when the mask cannot be read). */
unsigned bach_cpus(unsigned max);

#endif
