/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bounded FIFO of QMP events a client has read but nobody has taken
 * yet. Bounded by count and by the events' wire size; when full, the
 * oldest events are dropped and counted. Not locked: the client locks.
 * Internal to qmp/.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct qmp_event;

struct event_queue {
	struct qmp_event **items;   /* oldest first */
	size_t n, cap;
	size_t bytes;               /* sum of wire_bytes */
	size_t max_events, max_bytes;
	uint64_t dropped;
};

void event_queue_init(struct event_queue *q, size_t max_events, size_t max_bytes);
void event_queue_clear(struct event_queue *q);

/*
 * Append e (taking ownership, also on failure), dropping the oldest events
 * while the bounds would be exceeded. An event larger than max_bytes on its
 * own is dropped. Returns 0 or -ENOMEM.
 */
int event_queue_push(struct event_queue *q, struct qmp_event *e);

/* Remove and return the oldest event named name (any if NULL), or NULL. */
struct qmp_event *event_queue_take(struct event_queue *q, const char *name);
