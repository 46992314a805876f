/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The snapbenchd wire protocol (docs/protocol.md), shared by the daemon and
 * the CLI's client: newline-delimited JSON over a unix stream socket.
 *
 *   request: {"v": 1, "id": 7, "op": "status", ...}
 *   reply:   {"v": 1, "id": 7, "ok": true, ...}
 *            {"v": 1, "id": 7, "ok": false, "error": {"code", "message", "field"}}
 *   event:   {"v": 1, "id": 7, "event": "progress" | "state" | "end", "run": ID, ...}
 *
 * This file holds what both sides must agree on: the version, the bounds,
 * the framing of lines, the op names and the error codes. It knows nothing
 * of sockets or of the daemon's state.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct json_object;

#define PROTOCOL_VERSION 1
#define PROTOCOL_MAX_REQUEST (1u << 20)     /* bytes per request line, newline excluded */
#define PROTOCOL_MAX_DEPTH 32               /* JSON nesting in a request */
#define PROTOCOL_MAX_ID_STRING 128          /* a string request id */
#define PROTOCOL_MAX_REPLY (600u << 20)     /* what the client accepts (show of a whole report) */
#define PROTOCOL_MAX_REPLY_DEPTH 64
#define PROTOCOL_DEFAULT_SOCKET "/run/snapbench/snapbenchd.sock"
#define PROTOCOL_SOCKET_ENV "SNAPBENCH_SOCKET"

/* Error codes: stable strings, the client maps them to exit codes. */
#define PROTO_ERR_BAD_JSON "bad-json"             /* the line is not one JSON object */
#define PROTO_ERR_BAD_REQUEST "bad-request"       /* a field is missing or has the wrong type or value */
#define PROTO_ERR_VERSION "unsupported-version"   /* "v" is not one we speak */
#define PROTO_ERR_UNKNOWN_OP "unknown-op"
#define PROTO_ERR_TOO_LARGE "too-large"           /* request line over PROTOCOL_MAX_REQUEST; connection closed */
#define PROTO_ERR_TIMEOUT "timeout"               /* request not completed in time; connection closed */
#define PROTO_ERR_BUSY "busy"                     /* too many connections; connection closed */
#define PROTO_ERR_DENIED "denied"                 /* peer may not do this */
#define PROTO_ERR_NOT_FOUND "not-found"           /* no run with that id */
#define PROTO_ERR_INVALID_SPEC "invalid-spec"     /* the spec does not validate */
#define PROTO_ERR_QUEUE_FULL "queue-full"
#define PROTO_ERR_CONFLICT "conflict"             /* e.g. cancel of a run that already ended */
#define PROTO_ERR_SHUTTING_DOWN "shutting-down"   /* the daemon is stopping and takes no new runs */
#define PROTO_ERR_INTERNAL "internal"

enum protocol_op {
	PROTO_OP_SUBMIT,
	PROTO_OP_STATUS,
	PROTO_OP_LIST,
	PROTO_OP_SHOW,
	PROTO_OP_CANCEL,
	PROTO_OP_LOGS,
	PROTO_OP_WATCH,
	_PROTO_OP_MAX,
};

const char *protocol_op_to_string(enum protocol_op op);
int protocol_op_from_string(const char *s); /* enum value or -EINVAL */
/* "submit, status, ..." for messages */
const char *protocol_op_list(void);
/* Ops that change the daemon's state and need authorization. */
bool protocol_op_writes(enum protocol_op op);

/* ---- line framing ---- */

/*
 * A bounded line buffer for one direction of a connection. Bytes go in with
 * linebuf_append(); complete lines come out with linebuf_next_line(). A line
 * longer than max (newline excluded) is an overflow: the buffer stops
 * accepting and reports it, and the connection should be closed.
 */
struct linebuf {
	char *data;
	size_t len, cap, max;
	size_t scan;   /* bytes already known to hold no newline */
	size_t drop;   /* bytes of the line last returned, dropped on the next call */
	bool overflow;
};

void linebuf_init(struct linebuf *b, size_t max);
void linebuf_done(struct linebuf *b);
/* Room for at least want more bytes, never beyond max + 1 pending. Returns
 * where to write and sets *room; -ENOBUFS once a line overflowed. */
int linebuf_reserve(struct linebuf *b, size_t want, char **where, size_t *room);
/* n bytes were written at linebuf_reserve()'s pointer. */
void linebuf_commit(struct linebuf *b, size_t n);
/*
 * The next complete line (without its newline, NUL-terminated in place),
 * valid until the next call; 1 if there is one, 0 if not (yet), -EMSGSIZE
 * when the pending line is already longer than max.
 */
int linebuf_next_line(struct linebuf *b, char **line, size_t *len);
/* Bytes of the incomplete line pending. */
size_t linebuf_pending(const struct linebuf *b);

/* ---- messages ---- */

/*
 * Parses one line into a JSON object (depth-bounded; the whole line must be
 * one object, whitespace around it allowed). -EBADMSG with err naming what
 * is wrong and where.
 */
int protocol_parse_line(const char *line, size_t len, int max_depth, struct json_object **ret,
			struct sb_error *err);

/*
 * Checks a request's envelope: "v" (must be PROTOCOL_VERSION), "id" (absent,
 * an integer, or a string up to PROTOCOL_MAX_ID_STRING bytes), "op" (known).
 * On error *code and *field say what to send back; *id is the request's id
 * when it was usable (a borrowed reference, or NULL) so the error reply can
 * still carry it.
 */
int protocol_check_envelope(struct json_object *req, enum protocol_op *op, struct json_object **id,
			    const char **code, const char **field, struct sb_error *err);

/* A reply skeleton {"v": 1, "id": id, "ok": ok} (id: borrowed, copied by reference; NULL: no id). */
struct json_object *protocol_reply_new(struct json_object *id, bool ok);
/* {"v": 1, "id": id, "ok": false, "error": {"code", "message", "field" (if not NULL)}} */
struct json_object *protocol_error_new(struct json_object *id, const char *code, const char *field,
				       const char *message);
/* {"v": 1, "id": id, "event": name, "run": run} */
struct json_object *protocol_event_new(struct json_object *id, const char *name, const char *run);

/*
 * Typed field access for requests. Each returns 0 when the field is absent
 * (and leaves *ret alone), 1 when it is present with the right type, or
 * -EINVAL with err set to "FIELD: must be a ... (got ...)".
 */
int protocol_get_string(struct json_object *o, const char *key, size_t max_len, const char **ret,
			struct sb_error *err);
int protocol_get_bool(struct json_object *o, const char *key, bool *ret, struct sb_error *err);
int protocol_get_uint(struct json_object *o, const char *key, unsigned long long max, unsigned long long *ret,
		      struct sb_error *err);

/* Serializes o as one line with its newline (a malloc'ed string, *len without NUL). */
int protocol_serialize(struct json_object *o, char **ret, size_t *len);

/* Replaces bytes that are not valid UTF-8 (and NUL) with '?', in place. */
void protocol_sanitize_utf8(char *s, size_t len);

/* Whether s is valid UTF-8 (no NUL, overlong form, surrogate or code point past U+10FFFF); *bad_at: where not. */
bool protocol_utf8_valid(const char *s, size_t len, size_t *bad_at);
