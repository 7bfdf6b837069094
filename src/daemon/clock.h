/*
 * The clocks the daemon reads, in milliseconds: the monotonic one for
 * timeouts and idle connections, the wall clock for deadlines saved in
 * the state (a cold start's end), which must mean the same after a
 * restart.
 */
#ifndef TOPOAWARE_CLOCK_H
#define TOPOAWARE_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "log.h"

static inline uint64_t
clock_mono_ms(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		fatal("clock_gettime");
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

static inline long long
clock_wall_ms(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		fatal("clock_gettime");
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

#endif
