// SPDX-License-Identifier: MIT
/* Small services every driver uses (declared in drivers/driver.h). */
#include <time.h>

#include "drivers/driver.h"

uint64_t bach_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bach_sleep_until(uint64_t due, const atomic_bool *stop)
{
	uint64_t now;

	while (!atomic_load(stop) && (now = bach_now_ns()) < due) {
		uint64_t ns = due - now < 20000000ull ? due - now : 20000000ull;
		struct timespec d = { 0, (long)ns };

		nanosleep(&d, NULL);
	}
}
