// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit test: the persisted queue round-trips, rejects what it did not write, stays bounded. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "queue.h"
#include "test-tmp.h"

static const char *dir;

static void write_file(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

static void load_bad(const char *text, const char *needle)
{
	struct queue q;
	struct sb_error err = {};

	write_file(QUEUE_FILE, text);
	CHECK_MSG(queue_load(dir, &q, &err) < 0, "accepted: %s", text);
	CHECK_MSG(strstr(err.msg, needle), "'%s' not in '%s'", needle, err.msg);
	CHECK(q.path == NULL && q.ids == NULL);
}

int main(void)
{
	struct queue q, back;
	struct sb_error err = {};
	const char *a = "20261130T034512Z-3f9c2a", *b = "20261130T034513Z-000001", *c = "20261130T034514Z-abcdef";

	dir = test_tmpdir("queue");

	/* no file: an empty queue */
	CHECK(queue_load(dir, &q, &err) == 0);
	CHECK(q.n == 0 && !q.has_running);
	CHECK(queue_push(&q, a) == 0 && queue_push(&q, b) == 0 && queue_push(&q, c) == 0);
	CHECK(queue_find(&q, b) == 1 && queue_find(&q, "nope") == -1);
	queue_remove_at(&q, 1);
	CHECK(q.n == 2 && queue_find(&q, c) == 1);
	q.has_running = true;
	snprintf(q.running.id, sizeof(q.running.id), "%s", b);
	q.running.worker_pid = 4242;
	q.running.worker_start = 123456789;
	CHECK_MSG(queue_save(&q, &err) == 0, "%s", err.msg);

	CHECK(queue_load(dir, &back, &err) == 0);
	CHECK(back.n == 2 && !strcmp(back.ids[0], a) && !strcmp(back.ids[1], c));
	CHECK(back.has_running && !strcmp(back.running.id, b));
	CHECK(back.running.worker_pid == 4242 && back.running.worker_start == 123456789);
	queue_done(&back);

	/* running: null, and duplicates folded */
	q.has_running = false;
	CHECK(queue_push(&q, a) == 0);
	CHECK(queue_save(&q, &err) == 0);
	CHECK(queue_load(dir, &back, &err) == 0);
	CHECK(!back.has_running && back.n == 2);
	queue_done(&back);
	queue_done(&q);

	/* files it did not write */
	load_bad("not json", "not a JSON object");
	load_bad("{\"version\": 2, \"queued\": []}", "\"version\" is not 1");
	load_bad("{\"version\": 1, \"queued\": {}}", "\"queued\" is not an array");
	load_bad("{\"version\": 1, \"queued\": [\"../../etc\"]}", "is not a run id");
	load_bad("{\"version\": 1, \"queued\": [], \"running\": {\"id\": 5}}", "\"running\" has no valid");

	/* a running entry without a usable worker pid still names the run */
	write_file(QUEUE_FILE, "{\"version\": 1, \"queued\": [], \"running\": {\"id\": \"20261130T034512Z-3f9c2a\", \"worker_pid\": -3}}");
	CHECK(queue_load(dir, &back, &err) == 0);
	CHECK(back.has_running && back.running.worker_pid == 0);
	queue_done(&back);

	/* bounded */
	CHECK(queue_init_empty(dir, &q) == 0);
	for (int i = 0; i < QUEUE_HARD_MAX; i++)
		CHECK(queue_push(&q, a) == 0);
	CHECK(queue_push(&q, a) == -E2BIG);
	queue_done(&q);
	return 0;
}
