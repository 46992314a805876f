// SPDX-License-Identifier: GPL-2.0-or-later
/* The snapbenchd client: connection, requests, replies and events. */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "strv.h"
#include "clock.h"
#include "exit-codes.h"
#include "macro.h"
#include "verb-args.h"

struct client {
	int fd;
	char *path;
	struct linebuf in;
	long long next_id;
};

int client_connect(const char *path, struct client **ret, struct sb_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct client *c;
	const char *env = getenv(PROTOCOL_SOCKET_ENV);

	if (!path)
		path = env && *env ? env : PROTOCOL_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return sb_error_set(err, -ENAMETOOLONG, "socket %s: path too long for a unix socket", path);
	strcpy(sa.sun_path, path);
	c = calloc(1, sizeof(*c));
	if (!c)
		return sb_error_set(err, -ENOMEM, "out of memory");
	c->path = strdup(path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!c->path || c->fd < 0) {
		int r = c->fd < 0 ? -errno : -ENOMEM;
		client_free(c);
		return sb_error_set(err, r, "socket: %s", strerror(-r));
	}
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		client_free(c);
		if (r == -ENOENT || r == -ECONNREFUSED)
			return sb_error_set(err, r,
					    "snapbenchd is not running (socket %s: %s); start it (systemctl start snapbenchd.socket, or snapbenchd as root), or point --socket or $%s at its socket; without it, 'snapbench run --local' runs here and 'snapbench show PATH' reads a report file",
					    path, strerror(-r), PROTOCOL_SOCKET_ENV);
		if (r == -EACCES)
			return sb_error_set(err, r, "socket %s: permission denied; the socket should be mode 0666 (see snapbenchd(8))",
					    path);
		return sb_error_set(err, r, "socket %s: connect: %s", path, strerror(-r));
	}
	linebuf_init(&c->in, PROTOCOL_MAX_REPLY);
	c->next_id = 1;
	*ret = c;
	return 0;
}

void client_free(struct client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	linebuf_done(&c->in);
	free(c->path);
	free(c);
}

static int send_all(struct client *c, const char *buf, size_t len, struct sb_error *err)
{
	while (len > 0) {
		ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return sb_error_set(err, errno == EPIPE ? -ECONNRESET : -errno,
					    "snapbenchd (%s) closed the connection: %s", c->path, strerror(errno));
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int client_read(struct client *c, int timeout_ms, struct json_object **msg, struct sb_error *err)
{
	uint64_t deadline = timeout_ms >= 0 ? mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC : 0;

	for (;;) {
		char *line, *where;
		size_t len, room;
		int r = linebuf_next_line(&c->in, &line, &len);

		if (r < 0)
			return sb_error_set(err, -EMSGSIZE, "snapbenchd sent a message longer than %u bytes", PROTOCOL_MAX_REPLY);
		if (r > 0) {
			if (len == 0)
				continue;
			r = protocol_parse_line(line, len, PROTOCOL_MAX_REPLY_DEPTH, msg, err);
			if (r < 0)
				return sb_error_prefix(err, "snapbenchd sent a malformed message");
			return 0;
		}

		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int wait = timeout_ms >= 0 ? ms_until(deadline) : -1;
		if (timeout_ms >= 0 && wait == 0)
			return sb_error_set(err, -ETIMEDOUT, "snapbenchd (%s) did not answer within %d ms", c->path, timeout_ms);
		r = poll(&p, 1, wait);
		if (r < 0)
			return errno == EINTR ? sb_error_set(err, -EINTR, "interrupted")
					      : sb_error_set(err, -errno, "poll: %s", strerror(errno));
		if (r == 0)
			continue;
		r = linebuf_reserve(&c->in, 1 << 16, &where, &room);
		if (r < 0)
			return sb_error_set(err, r == -ENOMEM ? -ENOMEM : -EMSGSIZE, "snapbenchd sent a message longer than %u bytes",
					    PROTOCOL_MAX_REPLY);
		ssize_t n = recv(c->fd, where, room, 0);
		if (n < 0) {
			if (errno == EINTR)
				return sb_error_set(err, -EINTR, "interrupted");
			return sb_error_set(err, -ECONNRESET, "snapbenchd (%s): %s", c->path, strerror(errno));
		}
		if (n == 0)
			return sb_error_set(err, -ECONNRESET, "snapbenchd (%s) closed the connection (did it stop?)", c->path);
		linebuf_commit(&c->in, (size_t)n);
	}
}

int client_call(struct client *c, struct json_object *req, int timeout_ms, struct json_object **reply,
		struct sb_error *err)
{
	struct json_object *o = NULL;
	_cleanup_free_ char *line = NULL;
	long long id = c->next_id++;
	uint64_t deadline;
	size_t len;
	int r;

	if (timeout_ms <= 0)
		timeout_ms = CLIENT_DEFAULT_TIMEOUT_MS;
	deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	if (json_object_deep_copy(req, &o, NULL) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(o, "v", json_object_new_int(PROTOCOL_VERSION));
	json_object_object_add(o, "id", json_object_new_int64(id));
	r = protocol_serialize(o, &line, &len);
	json_object_put(o);
	if (r < 0)
		return sb_error_set(err, r, "out of memory");
	if (len > PROTOCOL_MAX_REQUEST + 1)
		return sb_error_set(err, -E2BIG, "the request is %zu bytes, more than snapbenchd accepts (%u); make the spec smaller",
				    len, PROTOCOL_MAX_REQUEST);
	r = send_all(c, line, len, err);
	if (r < 0)
		return r;

	for (;;) {
		struct json_object *msg, *v;
		int left = ms_until(deadline);

		if (left == 0)
			return sb_error_set(err, -ETIMEDOUT, "snapbenchd (%s) did not answer within %d ms", c->path, timeout_ms);
		r = client_read(c, left, &msg, err);
		while (r == -EINTR) /* a signal during a short request: finish the request */
			r = client_read(c, ms_until(deadline), &msg, err);
		if (r < 0)
			return r;
		/* a reply without an id answers what could not be parsed: ours */
		if (json_object_object_get_ex(msg, "ok", &v) &&
		    (!json_object_object_get_ex(msg, "id", &v) ||
		     (json_object_is_type(v, json_type_int) && json_object_get_int64(v) == id))) {
			*reply = msg;
			return 0;
		}
		json_object_put(msg); /* an event of an earlier watch */
	}
}

struct json_object *client_request_new(const char *op, const char *run)
{
	struct json_object *req = json_object_new_object();

	if (!req)
		return NULL;
	json_object_object_add(req, "op", json_object_new_string(op));
	if (run)
		json_object_object_add(req, "run", json_object_new_string(run));
	return req;
}

int client_request_on(struct client *c, const char *who, struct json_object *req, int timeout_ms,
		      struct json_object **ret_reply)
{
	_cleanup_json_ struct json_object *request = req, *reply = NULL;
	struct sb_error err = {};
	const char *code, *msg;
	int r;

	r = request ? client_call(c, request, timeout_ms, &reply, &err) : sb_error_set(&err, -ENOMEM, "out of memory");
	if (r < 0) {
		verb_error_as(who, "%s", err.msg);
		return client_exit_code_errno(r);
	}
	msg = client_reply_error(reply, &code);
	if (msg) {
		verb_error_as(who, "%s", msg);
		return client_exit_code(code);
	}
	*ret_reply = TAKE_PTR(reply);
	return EXIT_OK;
}

int client_request(const char *who, const char *socket_path, struct json_object *req, int timeout_ms,
		   struct client **ret_client, struct json_object **ret_reply)
{
	_cleanup_json_ struct json_object *request = req;
	_cleanup_client_ struct client *c = NULL;
	struct sb_error err = {};
	int r;

	r = client_connect(socket_path, &c, &err);
	if (r < 0) {
		verb_error_as(who, "%s", err.msg);
		return client_exit_code_errno(r);
	}
	r = client_request_on(c, who, TAKE_PTR(request), timeout_ms, ret_reply);
	if (r == EXIT_OK && ret_client)
		*ret_client = TAKE_PTR(c);
	return r;
}

struct json_object *client_get(struct json_object *o, const char *a, const char *b, const char *c)
{
	const char *keys[] = { a, b, c };

	for (size_t i = 0; i < 3 && keys[i]; i++) {
		if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, keys[i], &o))
			return NULL;
	}
	return o;
}

/* Bytes of the terminal control at p (of len left): 1 (C0 but newline and tab, DEL), 2 (C1 in UTF-8), or 0. */
static size_t terminal_control(const unsigned char *p, size_t len)
{
	if ((p[0] < 0x20 && p[0] != '\n' && p[0] != '\t') || p[0] == 0x7f)
		return 1;
	if (p[0] == 0xc2 && len > 1 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2; /* a C1 control (U+0080..U+009F), e.g. CSI */
	return 0;
}

bool client_terminal_sanitize(char *s, size_t len)
{
	bool changed = false;

	for (size_t i = 0; i < len; i++) {
		size_t n = terminal_control((const unsigned char *)s + i, len - i);

		memset(s + i, '?', n);
		if (n)
			i += n - 1;
		changed = changed || n;
	}
	return changed;
}

const char *client_terminal_text(struct json_object *v)
{
	const char *s;
	size_t len;
	char *copy;

	if (!v || !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	len = strlen(s);
	/* most text is clean: copy only what holds a control */
	size_t i = 0;
	while (i < len && !terminal_control((const unsigned char *)s + i, len - i))
		i++;
	if (i == len || !(copy = strdup(s)))
		return s;
	client_terminal_sanitize(copy, len);
	json_object_set_string(v, copy);
	free(copy);
	return json_object_get_string(v);
}

/* s with every control (newline and tab too) written as an escape (\\n, \\t, \\x1b, \\u009b); NULL on ENOMEM. */
static char *escape_controls(const char *s)
{
	size_t len = strlen(s), j = 0;
	char *out = malloc(len * 6 + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		const unsigned char *p = (const unsigned char *)s + i;
		if (*p == '\n' || *p == '\t' || *p == '\r') {
			out[j++] = '\\';
			out[j++] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
		} else if (terminal_control(p, len - i) == 2) {
			j += (size_t)sprintf(out + j, "\\u%04x", p[1]);
			i++;
		} else if (terminal_control(p, len - i) == 1) {
			j += (size_t)sprintf(out + j, "\\x%02x", *p);
		} else {
			out[j++] = (char)*p;
		}
	}
	out[j] = '\0';
	return out;
}

static bool has_control(const char *s)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n' || s[i] == '\t' || terminal_control((const unsigned char *)s + i, len - i))
			return true;
	return false;
}

int client_terminal_escape_tree(struct json_object *o)
{
	if (json_object_is_type(o, json_type_string)) {
		if (!has_control(json_object_get_string(o)))
			return 0;
		_cleanup_free_ char *e = escape_controls(json_object_get_string(o));
		return e && json_object_set_string(o, e) ? 0 : -ENOMEM;
	}
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if (client_terminal_escape_tree(json_object_array_get_idx(o, i)) < 0)
				return -ENOMEM;
		return 0;
	}
	if (!json_object_is_type(o, json_type_object))
		return 0;
	_cleanup_strv_free_ char **keys = NULL; /* renamed after the walk: not while iterating */
	json_object_object_foreach(o, key, val)
	{
		if (client_terminal_escape_tree(val) < 0)
			return -ENOMEM;
		if (has_control(key) && strv_push(&keys, key) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; keys && keys[i]; i++) {
		_cleanup_free_ char *e = escape_controls(keys[i]);
		struct json_object *v = json_object_get(json_object_object_get(o, keys[i]));
		if (!e) {
			json_object_put(v);
			return -ENOMEM;
		}
		json_object_object_del(o, keys[i]);
		json_object_object_add(o, e, v);
	}
	return 0;
}

const char *client_get_string(struct json_object *o, const char *key, const char *dflt)
{
	struct json_object *v = client_get(o, key, NULL, NULL);

	return v && json_object_is_type(v, json_type_string) ? client_terminal_text(v) : dflt;
}

const char *client_reply_error(struct json_object *reply, const char **code)
{
	struct json_object *ok = client_get(reply, "ok", NULL, NULL);

	if (ok && json_object_get_boolean(ok))
		return NULL;
	*code = client_get_string(client_get(reply, "error", NULL, NULL), "code", PROTO_ERR_INTERNAL);
	return client_get_string(client_get(reply, "error", NULL, NULL), "message", "snapbenchd refused the request");
}

int client_exit_code(const char *code)
{
	static const struct {
		const char *code;
		int exit;
	} map[] = {
		{ PROTO_ERR_DENIED, EXIT_DENIED },
		{ PROTO_ERR_BAD_JSON, EXIT_USAGE },
		{ PROTO_ERR_BAD_REQUEST, EXIT_USAGE },
		{ PROTO_ERR_UNKNOWN_OP, EXIT_USAGE },
		{ PROTO_ERR_VERSION, EXIT_UNAVAILABLE },
		{ PROTO_ERR_TOO_LARGE, EXIT_USAGE },
		{ PROTO_ERR_INVALID_SPEC, EXIT_USAGE },
		{ PROTO_ERR_NOT_FOUND, EXIT_USAGE },
		{ PROTO_ERR_TIMEOUT, EXIT_UNAVAILABLE },
		{ PROTO_ERR_BUSY, EXIT_UNAVAILABLE },
		{ PROTO_ERR_SHUTTING_DOWN, EXIT_UNAVAILABLE },
		{ PROTO_ERR_QUEUE_FULL, EXIT_FAIL },
		{ PROTO_ERR_CONFLICT, EXIT_FAIL },
	};

	for (size_t i = 0; code && i < ARRAY_SIZE(map); i++)
		if (!strcmp(code, map[i].code))
			return map[i].exit;
	return EXIT_FAIL;
}

int client_exit_code_errno(int r)
{
	switch (r) {
	case -ENOMEM:
		return EXIT_FAIL;
	case -E2BIG:
	case -ENAMETOOLONG:
		return EXIT_USAGE;
	default:
		return EXIT_UNAVAILABLE;
	}
}

int client_exit_code_state(const char *state)
{
	if (state && !strcmp(state, "completed"))
		return EXIT_OK;
	if (state && !strcmp(state, "cancelled"))
		return EXIT_CANCELLED;
	return EXIT_FAIL;
}

void client_print_json(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
}
