/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A thread that reads a stream as fast as it arrives into a bounded buffer.
 *
 * Why: the micro guest writes its telemetry with one port write per byte,
 * and QEMU passes each byte on with its own write() from the vCPU thread,
 * holding its big lock. When the stream is not read, the pipe (or socket)
 * fills, QEMU spins in that write, its monitor stops answering, and a
 * runner waiting for a QMP reply would deadlock with it (seen with a
 * socket, which fills after ~0.1 s: each byte costs a whole buffer slot).
 * Draining on its own thread keeps QEMU running whatever the main thread
 * is waiting for.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DRAIN_MAX_BUFFERED (64u << 20) /* beyond this, bytes are dropped and counted */
#define DRAIN_BATCH_MS 10              /* at most one read per this long */

struct drain;

/* Starts draining fd (not owned). */
int drain_start(int fd, struct drain **ret);

/* Stops the thread and frees d; NULL is fine. */
void drain_free(struct drain *d);

/*
 * Takes up to len buffered bytes. Returns the number taken (0 when none
 * are buffered); *eof once the stream ended and everything was taken.
 */
size_t drain_take(struct drain *d, void *buf, size_t len, bool *eof);

/* Readable when bytes (or the end) are waiting: for poll(). */
int drain_poll_fd(const struct drain *d);

/* Bytes dropped because the buffer was full. */
uint64_t drain_dropped(struct drain *d);

/* Reads the drain's thread made (each a wakeup with bytes); 0 for NULL. */
uint64_t drain_reads(struct drain *d);

/* CPU time the drain's thread used so far; 0 for NULL. */
uint64_t drain_cpu_ns(struct drain *d);
