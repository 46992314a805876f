/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CLI's side of the snapbenchd protocol (docs/protocol.md): connect to
 * the daemon's socket, send requests, read replies and watch events. Used by
 * the verbs that talk to the daemon (run, status, list, show, cancel, logs).
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "error.h"
#include "json-util.h"
#include "protocol.h"

struct client;

#define CLIENT_DEFAULT_TIMEOUT_MS 60000

/*
 * Connects to path (NULL: $SNAPBENCH_SOCKET, else the default socket).
 * -ENOENT/-ECONNREFUSED/-EACCES... with err saying the daemon is not
 * reachable and how to start it.
 */
int client_connect(const char *path, struct client **ret, struct sb_error *err);
void client_free(struct client *c);
static inline void client_freep(struct client **c)
{
	client_free(*c);
}
#define _cleanup_client_ _cleanup_(client_freep)

/*
 * Sends a request: req holds the op's fields and "op" (v and id are added;
 * req is not taken). Waits up to timeout_ms (<= 0: CLIENT_DEFAULT_TIMEOUT_MS)
 * for the reply with its id (events that come first are skipped). A reply
 * with "ok": false is returned too (0): check it with client_reply_error().
 */
int client_call(struct client *c, struct json_object *req, int timeout_ms, struct json_object **reply,
		struct sb_error *err);

/* A request {"op": op} plus, if not NULL, "run": run; NULL on ENOMEM. */
struct json_object *client_request_new(const char *op, const char *run);

/*
 * A verb's request on connection c: makes the call (timeout_ms as for
 * client_call()). req is taken; NULL means it could not be built (out of
 * memory). Returns 0 with *reply; else it prints "who: why" on stderr and
 * returns the exit code of the failure or of the error reply.
 */
int client_request_on(struct client *c, const char *who, struct json_object *req, int timeout_ms,
		      struct json_object **reply);

/*
 * The same on a new connection to socket_path (see client_connect()); if c
 * is not NULL, *c gets the connection for more.
 */
int client_request(const char *who, const char *socket_path, struct json_object *req, int timeout_ms,
		   struct client **c, struct json_object **reply);

/*
 * The next message from the daemon (a reply or an event), waiting up to
 * timeout_ms (< 0: forever). -ETIMEDOUT, -ECONNRESET when the daemon closed
 * the connection, -EINTR when a signal arrived (so callers can act on it).
 */
int client_read(struct client *c, int timeout_ms, struct json_object **msg, struct sb_error *err);

/* The error of a reply, NULL when it is ok. *code gets the error code. */
const char *client_reply_error(struct json_object *reply, const char **code);

/* The exit code (cli/exit-codes.h) for a protocol error code. */
int client_exit_code(const char *code);

/* The exit code for a client_* failure (-errno). */
int client_exit_code_errno(int r);

/* The exit code for a run's final state string: completed 0, cancelled 6, else 1. */
int client_exit_code_state(const char *state);

/* A field of an object by path (up to 3 keys; NULL ends), or NULL. */
struct json_object *client_get(struct json_object *o, const char *a, const char *b, const char *c);
/* The string of a field, or dflt. */
/*
 * o[key] as a string for a terminal (dflt when missing or not a string).
 * Text that came from a spec, a guest, QEMU or a report may carry terminal
 * controls: ESC, BEL, BS, CR and other C0 and C1 controls (and DEL) become
 * '?' (newlines and tabs stay), in the tree too, so it is done once.
 */
const char *client_get_string(struct json_object *o, const char *key, const char *dflt);
/* The same for a string object v; NULL when v is not a string. */
const char *client_terminal_text(struct json_object *v);
/* In place over len bytes; true when something was replaced. */
bool client_terminal_sanitize(char *s, size_t len);
/*
 * Every string and key of the tree o with its controls, newlines and tabs
 * too, written as escapes (\n, \x1b): text printed one field a line, where
 * a label's newline would forge a line. 0 or -ENOMEM.
 */
int client_terminal_escape_tree(struct json_object *o);

/* Prints o as JSON on stdout (pretty), with a newline. */
void client_print_json(struct json_object *o);
