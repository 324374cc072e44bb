// SPDX-License-Identifier: MIT
/* How many CPUs this process may run on (lib/cpus.h). */
#include <sched.h>
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
