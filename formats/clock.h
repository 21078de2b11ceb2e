/* SPDX-License-Identifier: MIT */
/* clock.h - the one clock of the tree: CLOCK_MONOTONIC in nanoseconds.
 *
 * It is part of the formats: perf requires jitdump timestamps on
 * CLOCK_MONOTONIC (`perf record -k 1`), and the outside-reader extension of
 * the GDB descriptor stamps its changes on the same clock (gdbjit.h), so a
 * reader compares them with its own now_ns().
 */
#ifndef FMT_CLOCK_H
#define FMT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
