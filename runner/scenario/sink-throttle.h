/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The throttled snapshot sink: spec.snapshot.max_bandwidth, done here
 * because QEMU does not apply max-bandwidth to a background snapshot (its
 * background-snapshot thread switches QEMU's rate limit off and never
 * waits on it; docs/running.md).
 *
 * QEMU gets the write end of a pipe; a pump (pump.h) moves what it writes
 * to the sink (the snapshot file, or /dev/null) at most at the rate, with
 * a token bucket (token-bucket.h). When the sink is behind, the pipe fills
 * and QEMU's writes block, as they would on slow storage. If the sink
 * fails (ENOSPC ...) the pump records the error and closes the read end at
 * once, so QEMU's next write fails with EPIPE and the snapshot fails
 * instead of hanging.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct sink_throttle;

#define SINK_THROTTLE_THREAD "sb-sink" /* the pump's thread name */

struct sink_throttle_stats {
	uint64_t rate, burst;  /* bytes/s, bytes */
	uint64_t bytes;        /* moved to the sink */
	uint64_t waited_ns;    /* spent waiting for the rate */
	bool ended;            /* the pump stopped: end of stream, error or stop */
	uint64_t end_ns;       /* mono_ns() when it did */
	int error;             /* 0, or a negative errno ... */
	bool sink_error;       /* ... from writing the sink (else from reading the pipe) */
};

/*
 * Starts moving from a new pipe to sink_fd (taken over, also on failure)
 * at rate bytes/s. *write_fd is the pipe's write end, for QEMU; the
 * caller closes it once QEMU has its copy.
 */
int sink_throttle_start(int sink_fd, uint64_t rate, int *write_fd, struct sink_throttle **ret);

/* The figures so far (safe while the pump runs). */
void sink_throttle_stats(struct sink_throttle *t, struct sink_throttle_stats *st);

/*
 * Stops the pump and joins it, then closes the pipe's read end: a QEMU
 * blocked in a write gets EPIPE. The figures stay. Again is fine.
 */
void sink_throttle_stop(struct sink_throttle *t);

/* Stops it (if need be), closes the sink, frees t. NULL is fine. */
void sink_throttle_free(struct sink_throttle *t);
