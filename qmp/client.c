// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The QMP protocol: greeting, capabilities negotiation, command ids, reply
 * matching, the event queue, QMP errors. Bytes come from common/unix-stream.c
 * (stream) or from the owner's ops table; framing is common/json-stream.c.
 */
#include "qmp.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "event-queue.h"
#include "json-util.h"
#include "json-stream.h"
#include "macro.h"
#include "qmp-internal.h"
#include "unix-stream.h"

#define READ_BUFFER_SIZE (64u << 10)
/* Ids of timed-out commands whose late replies we still recognise and drop. */
#define ABANDONED_IDS 16
#define ID_MAX 24

struct qmp_client {
	char *label;
	struct qmp_options opts;
	uint64_t deadline_ns; /* QMP_NO_DEADLINE, or commands wait no later than this */
	qmp_wait_hook wait_hook; /* called while a command waits for its reply */
	void *wait_userdata;

	/* stream transport */
	int fd;
	struct json_stream *stream;
	char *rbuf;
	size_t rpos, rlen;
	size_t msg_bytes;           /* wire bytes of the message being read */
	uint64_t next_id;
	char abandoned[ABANDONED_IDS][ID_MAX];
	size_t next_abandoned;
	int broken;                 /* negative errno once the stream is unusable */
	uint64_t scanned;           /* replies a call's scanner took (qmp_call.scan) */
	char broken_msg[SB_ERROR_MAX];

	/* ops transport */
	const struct qmp_transport_ops *ops;
	void *opaque;

	/* greeting */
	bool have_version;
	struct qmp_version version;
	char **capabilities;
	size_t n_capabilities;

	/* the last command's QMP error */
	char *last_class, *last_desc;

	/* events: the lock guards only these, for qmp_client_push_event() */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct event_queue events;
};

static uint64_t deadline_after(int timeout_ms)
{
	if (timeout_ms < 0)
		return UNIX_STREAM_NO_DEADLINE;
	return mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
}

static void apply_defaults(struct qmp_options *o, const struct qmp_options *in)
{
	if (in)
		*o = *in;
	else
		memset(o, 0, sizeof(*o));
	if (!o->max_message)
		o->max_message = QMP_DEFAULT_MAX_MESSAGE;
	if (o->max_depth <= 0)
		o->max_depth = QMP_DEFAULT_MAX_DEPTH;
	if (!o->max_events)
		o->max_events = QMP_DEFAULT_MAX_EVENTS;
	if (!o->max_event_bytes)
		o->max_event_bytes = QMP_DEFAULT_MAX_EVENT_BYTES;
	if (o->command_timeout_ms <= 0)
		o->command_timeout_ms = QMP_DEFAULT_COMMAND_TIMEOUT_MS;
}

static struct qmp_client *client_alloc(const char *label, const struct qmp_options *opts)
{
	struct qmp_client *c = calloc(1, sizeof(*c));
	pthread_condattr_t ca;

	if (!c)
		return NULL;
	c->fd = -1;
	c->deadline_ns = QMP_NO_DEADLINE;
	apply_defaults(&c->opts, opts);
	c->label = strdup(label);
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);
	event_queue_init(&c->events, c->opts.max_events, c->opts.max_event_bytes);
	if (!c->label) {
		qmp_client_free(c);
		return NULL;
	}
	return c;
}

void qmp_client_free(struct qmp_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->ops && c->ops->close)
		c->ops->close(c->opaque);
	json_stream_free(c->stream);
	free(c->rbuf);
	for (size_t i = 0; i < c->n_capabilities; i++)
		free(c->capabilities[i]);
	free(c->capabilities);
	free(c->last_class);
	free(c->last_desc);
	event_queue_clear(&c->events);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c->label);
	free(c);
}

const char *qmp_client_label(const struct qmp_client *c)
{
	return c->label;
}

int qmp_client_fd(const struct qmp_client *c)
{
	return c->fd;
}

int qmp_client_command_timeout(const struct qmp_client *c)
{
	uint64_t now;

	if (c->deadline_ns == QMP_NO_DEADLINE)
		return c->opts.command_timeout_ms;
	now = mono_ns();
	if (now >= c->deadline_ns)
		return 1;
	uint64_t left_ms = (c->deadline_ns - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return left_ms < (uint64_t)c->opts.command_timeout_ms ? (int)left_ms : c->opts.command_timeout_ms;
}

void qmp_client_set_wait_hook(struct qmp_client *c, qmp_wait_hook hook, void *userdata)
{
	c->wait_hook = hook;
	c->wait_userdata = userdata;
}

void qmp_client_set_deadline(struct qmp_client *c, uint64_t deadline_ns)
{
	c->deadline_ns = deadline_ns;
}

void qmp_client_set_command_timeout(struct qmp_client *c, int timeout_ms)
{
	c->opts.command_timeout_ms = timeout_ms > 0 ? timeout_ms : QMP_DEFAULT_COMMAND_TIMEOUT_MS;
}

const char *qmp_client_last_error_class(const struct qmp_client *c)
{
	return c->last_class;
}

const char *qmp_client_last_error_desc(const struct qmp_client *c)
{
	return c->last_desc;
}

bool qmp_client_has_capability(const struct qmp_client *c, const char *name)
{
	for (size_t i = 0; i < c->n_capabilities; i++)
		if (!strcmp(c->capabilities[i], name))
			return true;
	return false;
}

size_t qmp_client_events_queued(struct qmp_client *c)
{
	size_t n;

	pthread_mutex_lock(&c->lock);
	n = c->events.n;
	pthread_mutex_unlock(&c->lock);
	return n;
}

uint64_t qmp_client_replies_scanned(const struct qmp_client *c)
{
	return c->scanned;
}

uint64_t qmp_client_events_dropped(struct qmp_client *c)
{
	uint64_t n;

	pthread_mutex_lock(&c->lock);
	n = c->events.dropped;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* The stream cannot be trusted any more: remember why, close it. */
static int mark_broken(struct qmp_client *c, int code, const struct sb_error *cause)
{
	if (c->broken)
		return code;
	c->broken = code;
	snprintf(c->broken_msg, sizeof(c->broken_msg), "%s", cause && cause->msg[0] ? cause->msg : strerror(-code));
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	return code;
}

static int broken_error(const struct qmp_client *c, struct sb_error *err)
{
	return sb_error_set(err, -ENOTCONN, "%s: the QMP connection is unusable after an earlier error: %s",
			    c->label, c->broken_msg);
}

/* ---- parsing helpers ---- */

struct json_object *qmp_json_member(struct json_object *o, const char *key, enum json_type type)
{
	struct json_object *v;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, type))
		return NULL;
	return v;
}

int qmp_version_from_json(struct json_object *info, struct qmp_version *ret)
{
	struct json_object *qemu = qmp_json_member(info, "qemu", json_type_object);
	struct json_object *v;

	if (!qemu)
		return -EPROTO;
	v = qmp_json_member(qemu, "major", json_type_int);
	ret->major = v ? json_object_get_int(v) : -1;
	v = qmp_json_member(qemu, "minor", json_type_int);
	ret->minor = v ? json_object_get_int(v) : -1;
	v = qmp_json_member(qemu, "micro", json_type_int);
	ret->micro = v ? json_object_get_int(v) : -1;
	v = qmp_json_member(info, "package", json_type_string);
	snprintf(ret->package, sizeof(ret->package), "%s", v ? json_object_get_string(v) : "");
	return 0;
}

/* Parse a whole JSON text under the client's bounds (ops transports). */
static int parse_bounded(struct qmp_client *c, const char *text, const char *what, struct json_object **ret,
			 struct sb_error *err)
{
	int r = json_parse_bounded(text, strlen(text), c->opts.max_message, c->opts.max_depth, c->label, ret, err);

	return r < 0 ? sb_error_prefix(err, "%s", what) : 0;
}

static struct qmp_event *event_new(const char *name, struct json_object *data, int64_t qemu_time_us,
				   size_t wire_bytes)
{
	struct qmp_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->name = strdup(name);
	if (!e->name) {
		free(e);
		return NULL;
	}
	e->data = data ? json_object_get(data) : NULL;
	e->qemu_time_us = qemu_time_us;
	e->recv_mono_ns = mono_ns();
	e->recv_realtime_ns = realtime_ns();
	e->wire_bytes = wire_bytes;
	return e;
}

static int enqueue_event(struct qmp_client *c, struct qmp_event *e, struct sb_error *err)
{
	int r;

	pthread_mutex_lock(&c->lock);
	r = event_queue_push(&c->events, e);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (r < 0)
		return sb_error_set(err, r, "out of memory queueing a QMP event");
	return 0;
}

/* QMP timestamps: {"seconds": S, "microseconds": U}; a missing one is not an error. */
static int64_t timestamp_us(int64_t seconds, int64_t microseconds)
{
	if (seconds < 0 || microseconds < 0 || microseconds >= 1000000 || seconds > INT64_MAX / 1000000 - 1)
		return -1;
	return seconds * 1000000 + microseconds;
}

static int handle_event(struct qmp_client *c, struct json_object *msg, size_t wire_bytes, struct sb_error *err)
{
	struct json_object *name = qmp_json_member(msg, "event", json_type_string);
	struct json_object *ts = qmp_json_member(msg, "timestamp", json_type_object);
	struct json_object *data = NULL, *sec, *usec;
	int64_t t = -1;
	struct qmp_event *e;

	if (!name)
		return sb_error_set(err, -EPROTO, "%s sent an event without a name", c->label);
	if (json_object_object_get_ex(msg, "data", &data) && !json_object_is_type(data, json_type_object))
		return sb_error_set(err, -EPROTO, "%s sent event %s whose data is not an object", c->label,
				    json_object_get_string(name));
	if (ts && (sec = qmp_json_member(ts, "seconds", json_type_int)) &&
	    (usec = qmp_json_member(ts, "microseconds", json_type_int)))
		t = timestamp_us(json_object_get_int64(sec), json_object_get_int64(usec));

	e = event_new(json_object_get_string(name), data, t, wire_bytes);
	if (!e)
		return sb_error_set(err, -ENOMEM, "out of memory queueing a QMP event");
	return enqueue_event(c, e, err);
}

/*
 * Turn a reply into the result of command: "return" into *ret, "error"
 * into -EREMOTEIO with class and desc kept.
 */
static int handle_reply(struct qmp_client *c, const char *command, struct json_object *reply,
			struct json_object **ret, struct sb_error *err)
{
	struct json_object *error = qmp_json_member(reply, "error", json_type_object);
	struct json_object *value;

	if (error) {
		struct json_object *cls = qmp_json_member(error, "class", json_type_string);
		struct json_object *desc = qmp_json_member(error, "desc", json_type_string);

		c->last_class = strdup(cls ? json_object_get_string(cls) : "GenericError");
		c->last_desc = strdup(desc ? json_object_get_string(desc) : "(no description)");
		if (!c->last_class || !c->last_desc)
			return sb_error_set(err, -ENOMEM, "out of memory");
		return sb_error_set(err, -EREMOTEIO, "QMP command '%s' failed: %s: %s", command, c->last_class,
				    c->last_desc);
	}
	if (!json_object_object_get_ex(reply, "return", &value))
		return sb_error_set(err, -EPROTO, "%s answered QMP command '%s' with neither return nor error",
				    c->label, command);
	if (ret)
		*ret = json_object_get(value);
	return 0;
}

static void clear_last_error(struct qmp_client *c)
{
	free(c->last_class);
	free(c->last_desc);
	c->last_class = c->last_desc = NULL;
}

/* json_object_object_add() that also drops val when it fails (or val is NULL). */
static int add_member(struct json_object *o, const char *key, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(o, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *command_new(const char *command, struct json_object *args, const char *id)
{
	struct json_object *cmd = json_object_new_object();

	if (!cmd)
		return NULL;
	if (add_member(cmd, "execute", json_object_new_string(command)) < 0 ||
	    (args && add_member(cmd, "arguments", json_object_get(args)) < 0) ||
	    (id && add_member(cmd, "id", json_object_new_string(id)) < 0)) {
		json_object_put(cmd);
		return NULL;
	}
	return cmd;
}

static int check_command(const struct qmp_client *c, const char *command, struct json_object *args,
			 struct sb_error *err)
{
	if (!command || !command[0])
		return sb_error_set(err, -EINVAL, "no QMP command given: name one, e.g. query-status");
	if (args && !json_object_is_type(args, json_type_object))
		return sb_error_set(err, -EINVAL, "arguments of QMP command '%s' must be a JSON object, not %s",
				    command, json_type_to_name(json_object_get_type(args)));
	return 0;
}

/* ---- stream transport ---- */

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/*
 * A scanner's chance at the next message (qmp_call.scan), on what the buffer
 * holds: only when json-c holds no part of a message, and only a whole line
 * (QEMU ends each message with one). 1: taken (its line consumed); 0: json-c's
 * turn; 2: a line is still arriving and fits the buffer: read on.
 */
static int stream_scan(struct qmp_client *c, struct qmp_call *call, const char *id)
{
	const char *line, *nl;
	int r;

	/* the reply's depth is 5: a bound below that is json-c's to enforce */
	if (json_stream_pending(c->stream) > 0 || c->opts.max_depth < 5)
		return 0;
	while (c->rpos < c->rlen && is_space(c->rbuf[c->rpos]))
		c->rpos++; /* between messages: json-c would skip them too */
	if (c->rpos == c->rlen)
		return 0;
	line = c->rbuf + c->rpos;
	nl = memchr(line, '\n', c->rlen - c->rpos);
	if (!nl)
		return c->rlen - c->rpos < READ_BUFFER_SIZE && c->rlen - c->rpos <= c->opts.max_message ? 2 : 0;
	if ((size_t)(nl - line) > c->opts.max_message)
		return 0;
	r = call->scan(line, (size_t)(nl - line), id, call->scan_out);
	if (r == 1) {
		c->rpos += (size_t)(nl - line) + 1;
		c->scanned++;
	}
	return r;
}

/*
 * Read one complete message from the stream into *ret (0), or, for a call
 * with a scanner, let the scanner take it (1).
 */
static int stream_read_message(struct qmp_client *c, struct qmp_call *call, const char *id, uint64_t deadline,
			       struct json_object **ret, size_t *wire, struct sb_error *err)
{
	for (;;) {
		bool append = false;

		if (call && call->scan) {
			int k = stream_scan(c, call, id);

			if (k == 1)
				return 1;
			if (k < 0)
				return sb_error_set(err, k, "out of memory");
			append = k == 2;
		}
		if (!append && c->rpos < c->rlen) {
			size_t used = 0;
			int r = json_stream_feed(c->stream, c->rbuf + c->rpos, c->rlen - c->rpos, &used, ret,
						 c->label, err);

			c->rpos += used;
			c->msg_bytes += used;
			if (r < 0)
				return mark_broken(c, r, err);
			if (r == 1) {
				*wire = c->msg_bytes;
				c->msg_bytes = 0;
				return 0;
			}
		}
		if (append) { /* the line so far moved to the front, the rest read after it */
			memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
			c->rlen -= c->rpos;
		} else {
			c->rlen = 0;
		}
		c->rpos = 0;

		long n = unix_stream_recv(c->fd, c->rbuf + c->rlen, READ_BUFFER_SIZE - c->rlen, deadline, c->label,
					  err);
		if (n == -ETIMEDOUT)
			return (int)n;
		if (n < 0)
			return mark_broken(c, (int)n, err);
		if (n == 0) {
			size_t pending = json_stream_pending(c->stream) + c->rlen;

			if (pending > 0)
				sb_error_set(err, -ECONNRESET, "%s closed the connection in the middle of a message "
							       "(%zu bytes of it read)",
					     c->label, pending);
			else
				sb_error_set(err, -ECONNRESET, "%s closed the connection", c->label);
			return mark_broken(c, -ECONNRESET, err);
		}
		c->rlen += (size_t)n;
	}
}

static bool is_abandoned(struct qmp_client *c, const char *id)
{
	for (size_t i = 0; i < ABANDONED_IDS; i++)
		if (c->abandoned[i][0] && !strcmp(c->abandoned[i], id)) {
			c->abandoned[i][0] = '\0';
			return true;
		}
	return false;
}

static void abandon_id(struct qmp_client *c, const char *id)
{
	snprintf(c->abandoned[c->next_abandoned], ID_MAX, "%s", id);
	c->next_abandoned = (c->next_abandoned + 1) % ABANDONED_IDS;
}

/*
 * Read and handle one message. Events are queued. A reply is returned in
 * *reply (and 1) when it answers want_id; the late reply of an abandoned
 * command is dropped; any other reply breaks the protocol.
 */
static int stream_pump(struct qmp_client *c, struct qmp_call *call, const char *want_id, uint64_t deadline,
		       struct json_object **reply, struct sb_error *err)
{
	struct json_object *msg = NULL, *id;
	size_t wire = 0;
	int r;

	r = stream_read_message(c, call, want_id, deadline, &msg, &wire, err);
	if (r < 0)
		return r;
	if (r == 1) { /* the call's scanner took its reply */
		call->scanned = true;
		*reply = NULL;
		return 1;
	}

	if (!json_object_is_type(msg, json_type_object)) {
		r = sb_error_set(err, -EPROTO, "%s sent a %s where QMP sends objects", c->label,
				 json_type_to_name(json_object_get_type(msg)));
		goto broken;
	}
	if (json_object_object_get_ex(msg, "event", NULL)) {
		r = handle_event(c, msg, wire, err);
		json_object_put(msg);
		if (r == -EPROTO)
			return mark_broken(c, r, err);
		return r;
	}
	if (!json_object_object_get_ex(msg, "return", NULL) && !json_object_object_get_ex(msg, "error", NULL)) {
		r = sb_error_set(err, -EPROTO, "%s sent a message that is neither a reply nor an event: %.200s",
				 c->label, json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));
		goto broken;
	}

	if (json_object_object_get_ex(msg, "id", &id)) {
		const char *got = json_object_is_type(id, json_type_string) ? json_object_get_string(id) : NULL;

		if (want_id && got && !strcmp(got, want_id)) {
			*reply = msg;
			return 1;
		}
		if (got && is_abandoned(c, got)) {
			json_object_put(msg);
			return 0;
		}
		r = sb_error_set(err, -EPROTO, "%s sent a reply with id %.64s, which matches no command %s",
				 c->label, json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN),
				 want_id ? "in flight" : "(none is in flight)");
		goto broken;
	}
	/*
	 * No id: QEMU answers so only when it could not even parse the
	 * command, and then always with an error. Take that as the answer
	 * to the command in flight.
	 */
	if (want_id && json_object_object_get_ex(msg, "error", NULL)) {
		*reply = msg;
		return 1;
	}
	r = sb_error_set(err, -EPROTO, "%s sent a reply without an id %s", c->label,
			 want_id ? "to a command that had one" : "while no command was in flight");
broken:
	json_object_put(msg);
	return mark_broken(c, r, err);
}

/* The text of one command with its id, "\r\n" ended, appended to *text (*len bytes so far). */
static int command_text(struct qmp_client *c, const char *command, struct json_object *args, char *id,
			char **text, size_t *len)
{
	struct json_object *cmd;
	const char *json;
	size_t n;
	char *t;

	snprintf(id, ID_MAX, "sb-%" PRIu64, ++c->next_id);
	cmd = command_new(command, args, id);
	if (!cmd)
		return -ENOMEM;
	json = json_object_to_json_string_ext(cmd, JSON_C_TO_STRING_PLAIN);
	n = json ? strlen(json) : 0;
	t = json ? realloc(*text, *len + n + 3) : NULL;
	if (!t) {
		json_object_put(cmd);
		return -ENOMEM;
	}
	memcpy(t + *len, json, n);
	memcpy(t + *len + n, "\r\n", 3);
	*text = t;
	*len += n + 2;
	json_object_put(cmd);
	return 0;
}

/*
 * Waits for the reply to the command sent as id (sent at sent_ns) until
 * deadline; the caller abandons the ids after a timeout or a failure.
 */
static int stream_await(struct qmp_client *c, struct qmp_call *call, const char *id, uint64_t deadline,
			uint64_t sent_ns, int timeout_ms, struct json_object **reply, struct sb_error *err)
{
	int r;

	for (;;) {
		/* with a hook, the wait is cut into slices, and the hook told after each */
		uint64_t slice = c->wait_hook ? mono_ns() + (uint64_t)QMP_WAIT_HOOK_MS * NSEC_PER_MSEC : deadline;

		r = stream_pump(c, call, id, slice < deadline ? slice : deadline, reply, err);
		if (r == -ETIMEDOUT && slice < deadline) {
			sb_error_clear(err);
			c->wait_hook(c->wait_userdata, call->command, (double)(mono_ns() - sent_ns) / 1e9);
			continue;
		}
		if (r != 0)
			break;
	}
	if (r == -ETIMEDOUT)
		return sb_error_set(err, -ETIMEDOUT, "%s did not answer QMP command '%s' within %d ms", c->label,
				    call->command, timeout_ms);
	if (r < 0)
		return sb_error_prefix(err, "QMP command '%s'", call->command);
	return 0;
}

/*
 * Sends n commands in one write and takes their replies in order (a monitor
 * answers its commands in the order they came). One command is a batch of
 * one. Stops at the first failure, abandoning the commands after it.
 */
static int stream_execute(struct qmp_client *c, struct qmp_call *calls, size_t n, int fd, int timeout_ms,
			  struct sb_error *err)
{
	uint64_t deadline = deadline_after(timeout_ms);
	_cleanup_free_ char *text = NULL;
	char ids[QMP_BATCH_MAX][ID_MAX];
	size_t len = 0, i;
	int r;

	if (c->broken)
		return broken_error(c, err);
	for (i = 0; i < n; i++)
		if (command_text(c, calls[i].command, calls[i].args, ids[i], &text, &len) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");

	r = unix_stream_send(c->fd, text, len, fd, deadline, c->label, err);
	if (r < 0) {
		/* Part of a command may be on the wire: the stream is out of step. */
		sb_error_prefix(err, "QMP command '%s'", calls[0].command);
		return mark_broken(c, r, err);
	}

	uint64_t sent_ns = mono_ns();
	for (i = 0; i < n; i++) {
		struct json_object *reply = NULL;

		r = stream_await(c, &calls[i], ids[i], deadline, sent_ns, timeout_ms, &reply, err);
		if (r < 0) {
			if (c->broken)
				return r;
			break;
		}
		if (calls[i].scanned)
			continue;
		r = handle_reply(c, calls[i].command, reply, &calls[i].ret, err);
		json_object_put(reply);
		if (r < 0) {
			i++; /* answered: only the ones after it are still in flight */
			break;
		}
	}
	for (; i < n; i++)
		abandon_id(c, ids[i]);
	return r;
}

/* ---- ops transport ---- */

static int ops_execute(struct qmp_client *c, struct qmp_call *call, int fd, int timeout_ms, struct sb_error *err)
{
	_cleanup_free_ char *reply_text = NULL;
	struct json_object *cmd, *reply = NULL;
	int r;

	cmd = command_new(call->command, call->args, NULL);
	if (!cmd)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = c->ops->execute(c->opaque, json_object_to_json_string_ext(cmd, JSON_C_TO_STRING_PLAIN), fd, timeout_ms,
			    &reply_text, err);
	json_object_put(cmd);
	if (r < 0)
		return r;
	if (!reply_text)
		return sb_error_set(err, -EPROTO, "%s gave no reply to QMP command '%s'", c->label, call->command);

	/* a whole-message transport's replies carry no id: the scanner is asked for none */
	if (call->scan && strlen(reply_text) <= c->opts.max_message && c->opts.max_depth >= 5) {
		r = call->scan(reply_text, strlen(reply_text), NULL, call->scan_out);
		if (r < 0)
			return sb_error_set(err, r, "out of memory");
		if (r == 1) {
			call->scanned = true;
			c->scanned++;
			return 0;
		}
	}
	r = parse_bounded(c, reply_text, "reply", &reply, err);
	if (r < 0)
		return sb_error_prefix(err, "QMP command '%s'", call->command);
	if (!json_object_is_type(reply, json_type_object)) {
		json_object_put(reply);
		return sb_error_set(err, -EPROTO, "%s answered QMP command '%s' with a non-object", c->label,
				    call->command);
	}
	r = handle_reply(c, call->command, reply, &call->ret, err);
	json_object_put(reply);
	return r;
}

int qmp_execute(struct qmp_client *c, const char *command, struct json_object *args, int fd, int timeout_ms,
		struct json_object **ret, struct sb_error *err)
{
	struct qmp_call call = { .command = command, .args = args };
	int r;

	if (ret)
		*ret = NULL;
	r = check_command(c, command, args, err);
	if (r < 0)
		return r;
	clear_last_error(c);
	if (c->ops)
		r = ops_execute(c, &call, fd, timeout_ms, err);
	else
		r = stream_execute(c, &call, 1, fd, timeout_ms, err);
	if (ret)
		*ret = call.ret;
	else
		json_object_put(call.ret);
	return r;
}

int qmp_execute_batch(struct qmp_client *c, struct qmp_call *calls, size_t n, int timeout_ms, struct sb_error *err)
{
	int r = 0;

	if (n == 0 || n > QMP_BATCH_MAX)
		return sb_error_set(err, -EINVAL, "a QMP batch holds 1 to %d commands, not %zu", QMP_BATCH_MAX, n);
	for (size_t i = 0; i < n; i++) {
		calls[i].ret = NULL;
		calls[i].scanned = false;
	}
	for (size_t i = 0; i < n && r == 0; i++)
		r = check_command(c, calls[i].command, calls[i].args, err);
	if (r < 0)
		return r;
	clear_last_error(c);
	if (!c->ops)
		return stream_execute(c, calls, n, -1, timeout_ms, err);
	/* a transport of whole messages takes one command at a time */
	for (size_t i = 0; i < n && r == 0; i++)
		r = ops_execute(c, &calls[i], -1, timeout_ms, err);
	return r;
}

/* ---- events ---- */

static struct qmp_event *take_event(struct qmp_client *c, const char *name)
{
	struct qmp_event *e;

	pthread_mutex_lock(&c->lock);
	e = event_queue_take(&c->events, name);
	pthread_mutex_unlock(&c->lock);
	return e;
}

static int event_timeout(const struct qmp_client *c, const char *name, int timeout_ms, struct sb_error *err)
{
	return sb_error_set(err, -ETIMEDOUT, "%s sent no %s event within %d ms", c->label, name ? name : "QMP",
			    timeout_ms);
}

static int ops_wait_event(struct qmp_client *c, const char *name, int timeout_ms, struct qmp_event **ret,
			  struct sb_error *err)
{
	uint64_t deadline = deadline_after(timeout_ms);

	for (;;) {
		struct qmp_event *e;
		int left;

		pthread_mutex_lock(&c->lock);
		e = event_queue_take(&c->events, name);
		if (e) {
			pthread_mutex_unlock(&c->lock);
			*ret = e;
			return 0;
		}
		left = deadline == UNIX_STREAM_NO_DEADLINE ? -1 : ms_until(deadline);
		if (left == 0) {
			pthread_mutex_unlock(&c->lock);
			return event_timeout(c, name, timeout_ms, err);
		}
		if (c->ops->wait_events) {
			int r;

			pthread_mutex_unlock(&c->lock);
			r = c->ops->wait_events(c->opaque, left);
			if (r < 0)
				return sb_error_set(err, r, "%s: waiting for events failed: %s", c->label,
						    strerror(-r));
			continue;
		}
		if (left < 0) {
			pthread_cond_wait(&c->cond, &c->lock);
		} else {
			struct timespec ts = {
				.tv_sec = (time_t)(deadline / NSEC_PER_SEC),
				.tv_nsec = (long)(deadline % NSEC_PER_SEC),
			};
			pthread_cond_timedwait(&c->cond, &c->lock, &ts);
		}
		pthread_mutex_unlock(&c->lock);
	}
}

int qmp_wait_event(struct qmp_client *c, const char *name, int timeout_ms, struct qmp_event **ret,
		   struct sb_error *err)
{
	uint64_t deadline = deadline_after(timeout_ms);
	struct qmp_event *e;

	*ret = NULL;
	if (c->ops)
		return ops_wait_event(c, name, timeout_ms, ret, err);

	for (;;) {
		int r;

		e = take_event(c, name);
		if (e) {
			*ret = e;
			return 0;
		}
		if (c->broken)
			return broken_error(c, err);
		r = stream_pump(c, NULL, NULL, deadline, NULL, err);
		if (r == -ETIMEDOUT) {
			/* The last read may have queued it just before the deadline. */
			e = take_event(c, name);
			if (e) {
				*ret = e;
				return 0;
			}
			return event_timeout(c, name, timeout_ms, err);
		}
		if (r < 0) {
			e = take_event(c, name);
			if (e) {
				*ret = e;
				return 0;
			}
			return sb_error_prefix(err, "waiting for %s event", name ? name : "a QMP");
		}
	}
}

int qmp_client_push_event(struct qmp_client *c, const char *name, int64_t seconds, int64_t microseconds,
			  const char *data_json, struct sb_error *err)
{
	struct json_object *data = NULL;
	struct qmp_event *e;
	size_t wire;
	int r;

	if (!name || !name[0])
		return sb_error_set(err, -EINVAL, "QMP event without a name");
	wire = strlen(name) + (data_json ? strlen(data_json) : 0);
	if (data_json) {
		r = parse_bounded(c, data_json, "event data", &data, err);
		if (r < 0)
			return r;
		if (!json_object_is_type(data, json_type_object)) {
			json_object_put(data);
			return sb_error_set(err, -EPROTO, "%s: data of event %s is not a JSON object", c->label,
					    name);
		}
	}
	e = event_new(name, data, timestamp_us(seconds, microseconds), wire);
	json_object_put(data);
	if (!e)
		return sb_error_set(err, -ENOMEM, "out of memory queueing a QMP event");
	return enqueue_event(c, e, err);
}

/* ---- construction ---- */

static int parse_greeting(struct qmp_client *c, struct json_object *msg, struct sb_error *err)
{
	struct json_object *qmp = qmp_json_member(msg, "QMP", json_type_object);
	struct json_object *caps;

	if (!qmp)
		return sb_error_set(err, -EPROTO,
				    "%s did not greet with a QMP banner: is this QEMU's QMP socket (not HMP or a serial "
				    "console)?",
				    c->label);
	if (qmp_version_from_json(qmp_json_member(qmp, "version", json_type_object), &c->version) < 0)
		return sb_error_set(err, -EPROTO, "%s: the QMP greeting has no QEMU version", c->label);
	c->have_version = true;

	caps = qmp_json_member(qmp, "capabilities", json_type_array);
	if (caps) {
		size_t n = json_object_array_length(caps);

		c->capabilities = calloc(n ? n : 1, sizeof(char *));
		if (!c->capabilities)
			return sb_error_set(err, -ENOMEM, "out of memory");
		for (size_t i = 0; i < n; i++) {
			struct json_object *cap = json_object_array_get_idx(caps, i);

			if (!json_object_is_type(cap, json_type_string))
				continue;
			c->capabilities[c->n_capabilities] = strdup(json_object_get_string(cap));
			if (!c->capabilities[c->n_capabilities])
				return sb_error_set(err, -ENOMEM, "out of memory");
			c->n_capabilities++;
		}
	}
	return 0;
}

static int stream_handshake(struct qmp_client *c, uint64_t deadline, int timeout_ms, struct sb_error *err)
{
	_cleanup_json_ struct json_object *msg = NULL;
	size_t wire = 0;
	int r, left;

	r = stream_read_message(c, NULL, NULL, deadline, &msg, &wire, err);
	if (r == -ETIMEDOUT)
		return sb_error_set(err, r,
				    "%s sent no QMP greeting within %d ms; QEMU serves one QMP client per socket at a "
				    "time: is another client connected?",
				    c->label, timeout_ms);
	if (r < 0)
		return sb_error_prefix(err, "reading the QMP greeting");
	if (!json_object_is_type(msg, json_type_object))
		r = sb_error_set(err, -EPROTO, "%s sent a %s as its QMP greeting", c->label,
				 json_type_to_name(json_object_get_type(msg)));
	else
		r = parse_greeting(c, msg, err);
	if (r < 0)
		return mark_broken(c, r, err);

	left = deadline == UNIX_STREAM_NO_DEADLINE ? -1 : ms_until(deadline);
	if (left == 0)
		left = 1;
	return qmp_execute(c, "qmp_capabilities", NULL, -1, left, NULL, err);
}

static int stream_client_new(int fd, const char *label, uint64_t deadline, int timeout_ms,
			     const struct qmp_options *opts, struct qmp_client **ret, struct sb_error *err)
{
	struct qmp_client *c = client_alloc(label, opts);
	int r;

	if (!c) {
		close(fd);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	c->fd = fd;
	c->stream = json_stream_new(c->opts.max_message, c->opts.max_depth);
	c->rbuf = malloc(READ_BUFFER_SIZE);
	if (!c->stream || !c->rbuf) {
		qmp_client_free(c);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	r = stream_handshake(c, deadline, timeout_ms, err);
	if (r < 0) {
		qmp_client_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int qmp_connect(const char *path, int timeout_ms, const struct qmp_options *opts, struct qmp_client **ret,
		struct sb_error *err)
{
	uint64_t deadline = deadline_after(timeout_ms);
	char hint[256]; /* a longer path fails with -ENAMETOOLONG before the hint is used */
	int fd;

	*ret = NULL;
	if (!path || !path[0])
		return sb_error_set(err, -EINVAL, "no QMP socket path given: pass the path of QEMU's -qmp unix socket");
	snprintf(hint, sizeof(hint), "is QEMU running with -qmp unix:%s,server=on,wait=off?", path);
	fd = unix_stream_connect(path, "QMP socket", hint, deadline, err);
	if (fd < 0)
		return fd;
	return stream_client_new(fd, path, deadline, timeout_ms, opts, ret, err);
}

int qmp_connect_fd(int fd, const char *label, int timeout_ms, const struct qmp_options *opts,
		   struct qmp_client **ret, struct sb_error *err)
{
	int r;

	*ret = NULL;
	if (!label)
		label = "QMP peer";
	if (fd < 0)
		return sb_error_set(err, -EBADF, "%s: invalid fd %d", label, fd);
	r = unix_stream_adopt(fd, label, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	return stream_client_new(fd, label, deadline_after(timeout_ms), timeout_ms, opts, ret, err);
}

int qmp_client_new_with_ops(const struct qmp_transport_ops *ops, void *opaque, const char *label,
			    const struct qmp_options *opts, struct qmp_client **ret, struct sb_error *err)
{
	struct qmp_client *c;

	*ret = NULL;
	if (!ops || !ops->execute)
		return sb_error_set(err, -EINVAL, "a QMP transport needs an execute operation");
	c = client_alloc(label ? label : "QMP transport", opts);
	if (!c)
		return sb_error_set(err, -ENOMEM, "out of memory");
	c->ops = ops;
	c->opaque = opaque;
	*ret = c;
	return 0;
}

int qmp_client_version(struct qmp_client *c, struct qmp_version *ret, struct sb_error *err)
{
	_cleanup_json_ struct json_object *reply = NULL;
	int r;

	if (c->have_version) {
		*ret = c->version;
		return 0;
	}
	r = qmp_execute(c, "query-version", NULL, -1, c->opts.command_timeout_ms, &reply, err);
	if (r < 0)
		return r;
	r = qmp_version_from_json(reply, &c->version);
	if (r < 0)
		return sb_error_set(err, r, "%s: query-version returned no qemu version", c->label);
	c->have_version = true;
	*ret = c->version;
	return 0;
}
