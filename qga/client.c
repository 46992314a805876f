// SPDX-License-Identifier: GPL-2.0-or-later
/* The guest agent client: transports, framing, sync, execute. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "json-stream.h"
#include "macro.h"
#include "qga.h"

#define QGA_SENTINEL 0xff

struct qga_client {
	char label[256];
	struct qga_options opts;
	/* stream */
	int fd;
	bool synced;
	bool broken;            /* the peer closed: no more commands */
	char *buf;              /* bytes read, not yet fed to js */
	size_t len, cap;
	struct json_stream *js; /* the reply being framed */
	/* ops */
	const struct qga_transport_ops *ops;
	void *opaque;
};

static void opts_fill(struct qga_client *c, const struct qga_options *o)
{
	if (o)
		c->opts = *o;
	if (!c->opts.max_reply)
		c->opts.max_reply = QGA_DEFAULT_MAX_REPLY;
	if (!c->opts.max_depth)
		c->opts.max_depth = QGA_DEFAULT_MAX_DEPTH;
	if (c->opts.command_timeout_ms <= 0)
		c->opts.command_timeout_ms = QGA_DEFAULT_COMMAND_TIMEOUT_MS;
}

static struct qga_client *client_new(const char *label, const struct qga_options *o)
{
	struct qga_client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = -1;
	snprintf(c->label, sizeof(c->label), "%s", label ? label : "guest agent");
	opts_fill(c, o);
	/* json_stream counts nested containers; max_depth counts the top-level value too */
	c->js = json_stream_new(c->opts.max_reply, c->opts.max_depth - 1);
	if (!c->js) {
		free(c);
		return NULL;
	}
	return c;
}

void qga_client_free(struct qga_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->ops && c->ops->close)
		c->ops->close(c->opaque);
	json_stream_free(c->js);
	free(c->buf);
	free(c);
}

const char *qga_client_label(const struct qga_client *c)
{
	return c->label;
}

int qga_client_command_timeout(const struct qga_client *c)
{
	return c->opts.command_timeout_ms;
}

void qga_client_set_command_timeout(struct qga_client *c, int timeout_ms)
{
	if (timeout_ms > 0)
		c->opts.command_timeout_ms = timeout_ms;
}

int qga_client_new_with_ops(const struct qga_transport_ops *ops, void *opaque, const char *label,
			    const struct qga_options *opts, struct qga_client **ret, struct sb_error *err)
{
	struct qga_client *c;

	if (!ops || !ops->execute)
		return sb_error_set(err, -EINVAL, "guest agent: a transport needs an execute function");
	c = client_new(label, opts);
	if (!c)
		return sb_error_set(err, -ENOMEM, "out of memory");
	c->ops = ops;
	c->opaque = opaque;
	c->synced = true;
	*ret = c;
	return 0;
}

/* ---- the stream ---- */

static int deadline_ms(uint64_t deadline)
{
	return deadline == UINT64_MAX ? -1 : ms_until(deadline);
}

static int send_all(struct qga_client *c, const void *data, size_t n, uint64_t deadline, struct sb_error *err)
{
	const char *p = data;

	while (n) {
		ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno != EAGAIN) {
			c->broken = errno == EPIPE || errno == ECONNRESET;
			return sb_error_set(err, c->broken ? -ECONNRESET : -errno, "%s: cannot send: %s", c->label,
					    strerror(errno));
		}
		struct pollfd pf = { .fd = c->fd, .events = POLLOUT };
		int ms = deadline_ms(deadline);
		if (ms == 0 || poll(&pf, 1, ms) == 0) {
			c->synced = false; /* part of a command may be on the wire */
			return sb_error_set(err, -ETIMEDOUT, "%s: the agent reads nothing (send timed out)", c->label);
		}
	}
	return 0;
}

/* Reads more bytes into the buffer; 0 on data, < 0 on timeout, EOF or error. */
static int read_more(struct qga_client *c, uint64_t deadline, struct sb_error *err)
{
	for (;;) {
		if (c->len == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 65536;
			if (cap > c->opts.max_reply + 65536)
				cap = c->opts.max_reply + 65536;
			if (cap <= c->len)
				return sb_error_set(err, -EMSGSIZE, "%s: a reply longer than %zu bytes; refusing it", c->label,
						    c->opts.max_reply);
			char *nb = realloc(c->buf, cap);
			if (!nb)
				return sb_error_set(err, -ENOMEM, "out of memory");
			c->buf = nb;
			c->cap = cap;
		}
		ssize_t k = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
		if (k > 0) {
			c->len += (size_t)k;
			return 0;
		}
		if (k == 0) {
			c->broken = true;
			return sb_error_set(err, -ECONNRESET, "%s: the agent closed the connection", c->label);
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			c->broken = errno == ECONNRESET;
			return sb_error_set(err, c->broken ? -ECONNRESET : -errno, "%s: %s", c->label, strerror(errno));
		}
		struct pollfd pf = { .fd = c->fd, .events = POLLIN };
		int ms = deadline_ms(deadline);
		if (ms == 0)
			return sb_error_set(err, -ETIMEDOUT, "%s: no reply from the agent in time", c->label);
		poll(&pf, 1, ms);
	}
}

static void consume(struct qga_client *c, size_t n)
{
	if (n == 0)
		return;
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

static bool between_values(char ch)
{
	return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t' || (unsigned char)ch == QGA_SENTINEL;
}

/*
 * The next JSON value in the stream, framed by common's json_stream (bounded
 * by max_reply and max_depth). skip_to_sentinel: first drop every byte up to
 * and including a 0xFF (what the agent sends before the reply to
 * guest-sync-delimited), and any half-read value. Stray 0xFF and whitespace
 * between values are skipped.
 */
static int read_value(struct qga_client *c, bool skip_to_sentinel, uint64_t deadline, struct json_object **ret,
		      struct sb_error *err)
{
	int r;

	if (skip_to_sentinel) {
		json_stream_reset(c->js);
		for (;;) {
			char *s = c->len ? memchr(c->buf, QGA_SENTINEL, c->len) : NULL;
			if (s) {
				consume(c, (size_t)(s - c->buf) + 1);
				break;
			}
			c->len = 0; /* stale bytes before the sentinel */
			r = read_more(c, deadline, err);
			if (r < 0)
				return r;
		}
	}
	for (;;) {
		struct json_object *v = NULL;
		size_t start = 0, used = 0;

		if (!json_stream_pending(c->js))
			while (start < c->len && between_values(c->buf[start]))
				start++;
		consume(c, start);
		if (!c->len) {
			r = read_more(c, deadline, err);
			if (r < 0)
				return r;
			continue;
		}
		r = json_stream_feed(c->js, c->buf, c->len, &used, &v, c->label, err);
		if (r < 0) {
			c->synced = false;
			c->len = 0;
			json_stream_reset(c->js);
			return r;
		}
		consume(c, used);
		if (r == 1) {
			*ret = v;
			return 0;
		}
	}
}

static uint64_t make_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? UINT64_MAX : mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
}

int qga_sync(struct qga_client *c, int timeout_ms, struct sb_error *err)
{
	uint64_t deadline = make_deadline(timeout_ms);
	char msg[128];
	uint32_t id;
	int r;

	if (c->ops)
		return 0;
	if (c->broken)
		return sb_error_set(err, -ECONNRESET, "%s: the agent closed the connection earlier", c->label);
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint32_t)mono_ns();
	id &= 0x7fffffff;
	/* a 0xFF first resets the agent's parser after a half-sent command */
	int n = snprintf(msg, sizeof(msg), "\xff{\"execute\": \"guest-sync-delimited\", \"arguments\": {\"id\": %u}}\n", id);
	r = send_all(c, msg, (size_t)n, deadline, err);
	if (r < 0)
		return r == -ETIMEDOUT ? sb_error_set(err, -ENOTCONN, "%s: the agent does not read its channel (is qemu-guest-agent running in the guest?)", c->label) : r;
	for (;;) {
		struct json_object *v = NULL, *rv;
		r = read_value(c, true, deadline, &v, err);
		if (r == -ETIMEDOUT)
			return sb_error_set(err, -ENOTCONN,
					    "%s: no answer to guest-sync-delimited within %d ms: is qemu-guest-agent installed and running in the guest?",
					    c->label, timeout_ms);
		if (r < 0)
			return r;
		bool match = json_object_object_get_ex(v, "return", &rv) && json_object_is_type(rv, json_type_int) &&
			     json_object_get_int64(rv) == (int64_t)id;
		json_object_put(v);
		if (match) {
			c->synced = true;
			return 0;
		}
		/* an answer to an older sync: wait for ours */
	}
}

static int open_unix(const char *path, int *ret, struct sb_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return sb_error_set(err, -ENAMETOOLONG, "guest agent socket %s: path too long for a unix socket", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sb_error_set(err, -errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	*ret = fd;
	return 0;
}

int qga_connect(const char *path, int timeout_ms, const struct qga_options *opts, struct qga_client **ret,
		struct sb_error *err)
{
	uint64_t deadline = make_deadline(timeout_ms);
	int fd = -1, r;

	for (;;) {
		r = open_unix(path, &fd, err);
		if (r >= 0)
			break;
		if (r != -ENOENT && r != -ECONNREFUSED)
			return sb_error_set(err, r, "guest agent socket %s: %s", path, strerror(-r));
		if (deadline_ms(deadline) == 0)
			return sb_error_set(err, -ENOTCONN, "guest agent socket %s: %s after %d ms; is the agent's channel configured?",
					    path, strerror(-r), timeout_ms);
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return qga_connect_fd(fd, path, deadline_ms(deadline), opts, ret, err);
}

int qga_client_new_fd(int fd, const char *label, const struct qga_options *opts, struct qga_client **ret,
		      struct sb_error *err)
{
	struct qga_client *c = client_new(label, opts);

	if (!c) {
		close(fd);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	c->fd = fd;
	*ret = c;
	return 0;
}

int qga_connect_fd(int fd, const char *label, int timeout_ms, const struct qga_options *opts,
		   struct qga_client **ret, struct sb_error *err)
{
	struct qga_client *c = client_new(label, opts);
	int r;

	if (!c) {
		close(fd);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	c->fd = fd;
	r = qga_sync(c, timeout_ms, err);
	if (r < 0) {
		qga_client_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* ---- commands ---- */

static int take_reply(struct qga_client *c, const char *command, struct json_object *reply, struct json_object **ret,
		      struct sb_error *err)
{
	struct json_object *rv, *e, *cls, *desc;

	if (!json_object_is_type(reply, json_type_object))
		return sb_error_set(err, -EPROTO, "%s: reply to '%s' is not a JSON object", c->label, command);
	if (json_object_object_get_ex(reply, "error", &e)) {
		const char *k = json_object_object_get_ex(e, "class", &cls) ? json_object_get_string(cls) : "?";
		const char *d = json_object_object_get_ex(e, "desc", &desc) ? json_object_get_string(desc) : "";
		return sb_error_set(err, -EREMOTEIO, "guest agent command '%s' failed: %s: %.600s", command, k, d);
	}
	if (!json_object_object_get_ex(reply, "return", &rv))
		return sb_error_set(err, -EPROTO, "%s: reply to '%s' has neither return nor error", c->label, command);
	if (ret)
		*ret = json_object_get(rv);
	return 0;
}

int qga_execute(struct qga_client *c, const char *command, struct json_object *args, int timeout_ms,
		struct json_object **ret, struct sb_error *err)
{
	struct json_object *msg = json_object_new_object(), *reply = NULL;
	uint64_t deadline = make_deadline(timeout_ms);
	const char *text;
	int r;

	if (!command || !*command) {
		json_object_put(msg);
		return sb_error_set(err, -EINVAL, "guest agent: no command name");
	}
	if (!msg)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(msg, "execute", json_object_new_string(command));
	if (args)
		json_object_object_add(msg, "arguments", json_object_get(args));
	text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (c->ops) {
		_cleanup_free_ char *rj = NULL;
		r = c->ops->execute(c->opaque, text, timeout_ms, &rj, err);
		json_object_put(msg);
		if (r < 0)
			return r;
		if (!rj)
			return sb_error_set(err, -EPROTO, "%s: empty reply to '%s'", c->label, command);
		char what[sizeof(c->label) + 160];
		snprintf(what, sizeof(what), "%s (its reply to '%.100s')", c->label, command);
		r = json_parse_bounded(rj, strlen(rj), c->opts.max_reply, c->opts.max_depth - 1, what, &reply, err);
		if (r < 0)
			return r;
		r = take_reply(c, command, reply, ret, err);
		json_object_put(reply);
		return r;
	}

	if (c->broken) {
		json_object_put(msg);
		return sb_error_set(err, -ECONNRESET, "%s: the agent closed the connection earlier", c->label);
	}
	if (!c->synced) {
		r = qga_sync(c, deadline_ms(deadline), err);
		if (r < 0) {
			json_object_put(msg);
			return r;
		}
	}
	r = send_all(c, text, strlen(text), deadline, err);
	if (r >= 0)
		r = send_all(c, "\n", 1, deadline, err);
	json_object_put(msg);
	if (r < 0)
		return r;
	r = read_value(c, false, deadline, &reply, err);
	if (r < 0) {
		if (r == -ETIMEDOUT) {
			c->synced = false; /* its reply may still come: sync before the next command */
			return sb_error_set(err, -ETIMEDOUT, "%s: no reply to '%s' within %d ms", c->label, command,
					    timeout_ms);
		}
		return r;
	}
	r = take_reply(c, command, reply, ret, err);
	json_object_put(reply);
	return r;
}
