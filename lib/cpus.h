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

/*
 * The widest vector instructions the passes that choose at run time may
 * use (the marker scan, bach mrc's filters and near stack): AVX-512 with
 * its byte permutes (F, BW, VBMI), AVX2 (with POPCNT), or neither; what
 * the CPU has, narrowed by the environment variable BACH_SIMD, "avx2" or
 * "none", so that the tests run each path on a CPU that has the widest
 * (tests/README.md). Read once.
 */
enum bach_simd { BACH_SIMD_NONE, BACH_SIMD_AVX2, BACH_SIMD_AVX512 };
enum bach_simd bach_simd(void);

#endif
