// SPDX-License-Identifier: GPL-2.0-or-later
/* The event queue: order, take by name, bounds by count and by bytes. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "event-queue.h"
#include "qmp.h"

static struct qmp_event *ev(const char *name, size_t bytes)
{
	struct qmp_event *e = calloc(1, sizeof(*e));

	CHECK(e);
	e->name = strdup(name);
	CHECK(e->name);
	e->wire_bytes = bytes;
	e->qemu_time_us = -1;
	return e;
}

static void expect(struct event_queue *q, const char *name, const char *want)
{
	struct qmp_event *e = event_queue_take(q, name);

	CHECK_MSG(e, "no %s event", name ? name : "any");
	CHECK_MSG(!strcmp(e->name, want), "got %s, want %s", e->name, want);
	qmp_event_free(e);
}

int main(void)
{
	struct event_queue q;

	/* FIFO overall and per name; other names keep their order. */
	event_queue_init(&q, 10, 1000);
	CHECK(event_queue_push(&q, ev("A", 10)) == 0);
	CHECK(event_queue_push(&q, ev("B", 10)) == 0);
	CHECK(event_queue_push(&q, ev("A", 11)) == 0);
	CHECK(event_queue_push(&q, ev("C", 10)) == 0);
	CHECK(q.n == 4 && q.bytes == 41);
	expect(&q, "C", "C");
	CHECK(event_queue_take(&q, "D") == NULL);
	expect(&q, "A", "A");
	CHECK(q.items[0]->wire_bytes == 10 && !strcmp(q.items[0]->name, "B"));
	expect(&q, NULL, "B");
	expect(&q, NULL, "A");
	CHECK(q.n == 0 && q.bytes == 0 && q.dropped == 0);

	/* Count bound: the oldest go first. */
	for (int i = 0; i < 25; i++) {
		char name[8];

		snprintf(name, sizeof(name), "E%d", i);
		CHECK(event_queue_push(&q, ev(name, 1)) == 0);
	}
	CHECK_MSG(q.n == 10 && q.dropped == 15, "n=%zu dropped=%llu bytes=%zu", q.n, (unsigned long long)q.dropped, q.bytes);
	expect(&q, NULL, "E15");
	event_queue_clear(&q);

	/* Byte bound: a big event pushes out old ones; one above the bound is dropped itself. */
	event_queue_init(&q, 100, 100);
	for (int i = 0; i < 5; i++)
		CHECK(event_queue_push(&q, ev("S", 20)) == 0);
	CHECK(q.n == 5 && q.bytes == 100 && q.dropped == 0);
	CHECK(event_queue_push(&q, ev("BIG", 50)) == 0);
	CHECK(q.n == 3 && q.bytes == 90 && q.dropped == 3);
	CHECK(event_queue_push(&q, ev("HUGE", 101)) == 0);
	CHECK(q.n == 3 && q.dropped == 4);
	expect(&q, "BIG", "BIG");
	event_queue_clear(&q);
	event_queue_clear(&q); /* twice is fine */

	printf("ok\n");
	return 0;
}
