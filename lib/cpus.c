// SPDX-License-Identifier: MIT
/* How many CPUs this process may run on, and their vector instructions
 * (lib/cpus.h). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cpus.h"

unsigned bach_cpus(unsigned max)
{
	cpu_set_t set;
	long n;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n > (long)max)
		n = (long)max;
	return n < 1 ? 1 : (unsigned)n;
}

/* what the CPU has */
static enum bach_simd cpu_simd(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (!__builtin_cpu_supports("avx2") ||
	    !__builtin_cpu_supports("popcnt"))
		return BACH_SIMD_NONE;
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vbmi"))
		return BACH_SIMD_AVX512;
	return BACH_SIMD_AVX2;
#else
	return BACH_SIMD_NONE;
#endif
}

enum bach_simd bach_simd(void)
{
	static int v = -1; /* once; every thread finds the same */
	int s = __atomic_load_n(&v, __ATOMIC_RELAXED);

	if (s < 0) {
		const char *e = getenv("BACH_SIMD");

		s = (int)cpu_simd();
		if (e && !strcmp(e, "none"))
			s = BACH_SIMD_NONE;
		else if (e && !strcmp(e, "avx2") && s > BACH_SIMD_AVX2)
			s = BACH_SIMD_AVX2;
		__atomic_store_n(&v, s, __ATOMIC_RELAXED);
	}
	return (enum bach_simd)s;
}
