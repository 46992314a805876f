/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A thread that reads a stream and hands what it read to a consumer, at a
 * pace the consumer sets: the loop under the guest's telemetry drain
 * (drain.h) and the throttled snapshot sink (sink-throttle.h).
 *
 * Each turn it asks budget() how much it may read now (or how long to
 * wait first), waits until the fd is readable, reads at most that much
 * and calls deliver(). Waits end early when the pump is stopped. A
 * consumer that wants QEMU to block does so by not reading: the pipe
 * fills and QEMU's writes wait.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct pump;

struct pump_ops {
	/*
	 * Bytes that may be read now (> 0); or 0 and *wait_ns > 0: ask again
	 * after that long. NULL: no limit.
	 */
	size_t (*budget)(void *userdata, uint64_t now_ns, uint64_t *wait_ns);
	/* Takes n > 0 bytes; a negative errno ends the pump with it. */
	int (*deliver)(void *userdata, const void *buf, size_t n);
	/*
	 * Called once, last, on the pump's thread: 0 at the end of the stream,
	 * -ECANCELED when stopped, else the read's or deliver()'s error.
	 */
	void (*end)(void *userdata, int reason);
};

/*
 * Starts pumping fd (not owned: end() may close it) with reads of at most
 * chunk bytes, on a thread named name (at most 15 characters; ps -L shows it).
 */
int pump_start(int fd, size_t chunk, const char *name, const struct pump_ops *ops, void *userdata,
	       struct pump **ret);

/* CPU time the pump's thread used so far (all of it once it ended); 0 for NULL. */
uint64_t pump_cpu_ns(struct pump *p);

/* Stops the thread (if it still runs), joins it and frees p; NULL is fine. */
void pump_free(struct pump *p);
