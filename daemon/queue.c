// SPDX-License-Identifier: GPL-2.0-or-later
/* The persisted run queue. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic-file.h"
#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "queue.h"

/* {"queued": [...], "running": {...}} */
#define QUEUE_MAX_DEPTH 8

int queue_init_empty(const char *state_dir, struct queue *q)
{
	*q = (struct queue){ 0 };
	if (asprintf(&q->path, "%s/%s", state_dir, QUEUE_FILE) < 0) {
		q->path = NULL;
		return -ENOMEM;
	}
	return 0;
}

void queue_done(struct queue *q)
{
	free(q->path);
	free(q->ids);
	*q = (struct queue){ 0 };
}

static int read_bounded(const char *path, char **ret, size_t *len, struct sb_error *err)
{
	/* not through a symlink, not blocking on a FIFO: a regular file or nothing */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	int r;

	if (fd < 0)
		return sb_error_set(err, -errno, "queue file %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sb_error_set(err, -EINVAL, "queue file %s: not a regular file; remove it", path);
	r = read_full_fd(fd, QUEUE_MAX_FILE_BYTES, ret, len);
	if (r == -EFBIG)
		return sb_error_set(err, -EFBIG, "queue file %s: larger than %u bytes; it is not one this daemon wrote",
				    path, QUEUE_MAX_FILE_BYTES);
	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (r < 0)
		return sb_error_set(err, r, "queue file %s: %s", path, strerror(-r));
	return 0;
}

int queue_load(const char *state_dir, struct queue *q, struct sb_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ struct json_object *o = NULL;
	struct json_object *v;
	size_t len = 0;
	int r;

	r = queue_init_empty(state_dir, q);
	if (r < 0)
		return sb_error_set(err, r, "out of memory");
	if (access(q->path, F_OK) < 0 && errno == ENOENT)
		return 0;
	r = read_bounded(q->path, &text, &len, err);
	if (r < 0)
		goto fail;
	r = json_parse_text(text, len, QUEUE_MAX_DEPTH, 0, &o, NULL);
	if (r == -ENOMEM) {
		sb_error_set(err, r, "out of memory");
		goto fail;
	}
	if (r < 0 || !json_object_is_type(o, json_type_object)) {
		r = sb_error_set(err, -EBADMSG, "queue file %s: not a JSON object", q->path);
		goto fail;
	}
	if (!json_object_object_get_ex(o, "version", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) != 1) {
		r = sb_error_set(err, -EBADMSG, "queue file %s: \"version\" is not 1", q->path);
		goto fail;
	}
	if (json_object_object_get_ex(o, "queued", &v)) {
		if (!json_object_is_type(v, json_type_array)) {
			r = sb_error_set(err, -EBADMSG, "queue file %s: \"queued\" is not an array", q->path);
			goto fail;
		}
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *e = json_object_array_get_idx(v, i);
			if (!json_object_is_type(e, json_type_string) || !report_id_valid(json_object_get_string(e))) {
				r = sb_error_set(err, -EBADMSG, "queue file %s: \"queued\"[%zu] is not a run id", q->path, i);
				goto fail;
			}
			if (queue_find(q, json_object_get_string(e)) >= 0)
				continue;
			r = queue_push(q, json_object_get_string(e));
			if (r < 0) {
				sb_error_set(err, r, "queue file %s: more than %d entries", q->path, QUEUE_HARD_MAX);
				goto fail;
			}
		}
	}
	if (json_object_object_get_ex(o, "running", &v) && v) {
		struct json_object *id, *pid, *start;

		if (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, "id", &id) ||
		    !json_object_is_type(id, json_type_string) || !report_id_valid(json_object_get_string(id))) {
			r = sb_error_set(err, -EBADMSG, "queue file %s: \"running\" has no valid \"id\"", q->path);
			goto fail;
		}
		q->has_running = true;
		snprintf(q->running.id, sizeof(q->running.id), "%s", json_object_get_string(id));
		if (json_object_object_get_ex(v, "worker_pid", &pid) && json_object_is_type(pid, json_type_int) &&
		    json_object_object_get_ex(v, "worker_start", &start) && json_object_is_type(start, json_type_int) &&
		    json_object_get_int64(pid) > 0 && json_object_get_int64(pid) < (1 << 30)) {
			q->running.worker_pid = (pid_t)json_object_get_int64(pid);
			q->running.worker_start = (uint64_t)json_object_get_int64(start);
		}
	}
	return 0;
fail:
	queue_done(q);
	return r;
}

int queue_save(const struct queue *q, struct sb_error *err)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array(), *run = NULL;
	_cleanup_free_ char *buf = NULL;
	int r;

	if (!o || !a)
		goto oom;
	for (size_t i = 0; i < q->n; i++)
		json_object_array_add(a, json_object_new_string(q->ids[i]));
	json_object_object_add(o, "version", json_object_new_int(1));
	json_object_object_add(o, "queued", a);
	a = NULL;
	if (q->has_running) {
		run = json_object_new_object();
		if (!run)
			goto oom;
		json_object_object_add(run, "id", json_object_new_string(q->running.id));
		json_object_object_add(run, "worker_pid", json_object_new_int64(q->running.worker_pid));
		json_object_object_add(run, "worker_start", json_object_new_int64((int64_t)q->running.worker_start));
	}
	json_object_object_add(o, "running", run);

	size_t n;
	const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED, &n);
	buf = text ? malloc(n + 1) : NULL;
	if (!buf)
		goto oom;
	memcpy(buf, text, n);
	buf[n] = '\n';
	r = atomic_file_write(q->path, buf, n + 1, 0644, err);
	json_object_put(o);
	return r;
oom:
	json_object_put(a);
	json_object_put(o);
	return sb_error_set(err, -ENOMEM, "out of memory");
}

ssize_t queue_find(const struct queue *q, const char *id)
{
	for (size_t i = 0; i < q->n; i++)
		if (!strcmp(q->ids[i], id))
			return (ssize_t)i;
	return -1;
}

int queue_push(struct queue *q, const char *id)
{
	char(*p)[REPORT_ID_MAX];

	if (q->n >= QUEUE_HARD_MAX)
		return -E2BIG;
	p = realloc(q->ids, (q->n + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	q->ids = p;
	snprintf(q->ids[q->n], REPORT_ID_MAX, "%s", id);
	q->n++;
	return 0;
}

void queue_remove_at(struct queue *q, size_t pos)
{
	if (pos >= q->n)
		return;
	memmove(q->ids + pos, q->ids + pos + 1, (q->n - pos - 1) * sizeof(*q->ids));
	q->n--;
}
