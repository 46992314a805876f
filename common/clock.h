/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_USEC 1000ULL

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Deadlines and intervals: never affected by wall-clock steps. */
static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Timestamps that go into reports. */
static inline uint64_t realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* CPU time of the calling thread (a system call: no vDSO for it). */
static inline uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The sooner of two poll() timeouts in ms, where < 0 is none (wait for ever): what a loop waits for its next deadline. */
static inline int poll_timeout_min(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* Milliseconds left until deadline (a mono_ns() value), 0 if past, for poll(). */
static inline int ms_until(uint64_t deadline_ns)
{
	uint64_t now = mono_ns();

	if (now >= deadline_ns)
		return 0;
	uint64_t ms = (deadline_ns - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}
