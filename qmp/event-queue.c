// SPDX-License-Identifier: GPL-2.0-or-later
#include "event-queue.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "qmp.h"

/* The queue owns the events it holds (qmp.h): their destructor is here, so the queue calls nothing of client.c. */
void qmp_event_free(struct qmp_event *e)
{
	if (!e)
		return;
	free(e->name);
	json_object_put(e->data);
	free(e);
}

void event_queue_init(struct event_queue *q, size_t max_events, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->max_events = max_events;
	q->max_bytes = max_bytes;
}

void event_queue_clear(struct event_queue *q)
{
	for (size_t i = 0; i < q->n; i++)
		qmp_event_free(q->items[i]);
	free(q->items);
	q->items = NULL;
	q->n = q->cap = q->bytes = 0;
}

static void remove_at(struct event_queue *q, size_t i)
{
	q->bytes -= q->items[i]->wire_bytes;
	memmove(q->items + i, q->items + i + 1, (q->n - i - 1) * sizeof(q->items[0]));
	q->n--;
}

int event_queue_push(struct event_queue *q, struct qmp_event *e)
{
	if (e->wire_bytes > q->max_bytes || q->max_events == 0) {
		qmp_event_free(e);
		q->dropped++;
		return 0;
	}
	while (q->n > 0 && (q->n >= q->max_events || q->bytes + e->wire_bytes > q->max_bytes)) {
		struct qmp_event *oldest = q->items[0];

		remove_at(q, 0);
		qmp_event_free(oldest);
		q->dropped++;
	}
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 16;
		struct qmp_event **items;

		if (cap > q->max_events)
			cap = q->max_events;
		items = realloc(q->items, cap * sizeof(items[0]));
		if (!items) {
			qmp_event_free(e);
			return -ENOMEM;
		}
		q->items = items;
		q->cap = cap;
	}
	q->items[q->n++] = e;
	q->bytes += e->wire_bytes;
	return 0;
}

struct qmp_event *event_queue_take(struct event_queue *q, const char *name)
{
	for (size_t i = 0; i < q->n; i++) {
		struct qmp_event *e = q->items[i];

		if (!name || !strcmp(e->name, name)) {
			remove_at(q, i);
			return e;
		}
	}
	return NULL;
}
