/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qmp/: a small QMP client on json-c. It knows QEMU's monitor protocol and
 * nothing of snapbench's daemon, runner or libvirt.
 *
 * A struct qmp_client speaks QMP over one of two transports:
 *
 *  - a stream (qmp_connect() on a unix socket path, qmp_connect_fd() on a
 *    connected socket): the client frames messages, reads the greeting,
 *    negotiates qmp_capabilities, tags every command with an id, matches
 *    replies by id and queues the events that arrive in between;
 *
 *  - an ops table (qmp_client_new_with_ops()): the owner executes one
 *    command at a time through ops->execute (e.g. libvirt's
 *    virDomainQemuMonitorCommandWithFiles) and pushes events in with
 *    qmp_client_push_event() (e.g. from libvirt's monitor-event callback).
 *
 * The typed helpers in qmp-commands.h work over either.
 *
 * Errors: every function that can fail returns a negative errno and fills
 * the struct sb_error (common/error.h) when one is passed. The errnos are
 * distinct per cause so callers can branch on them:
 *
 *   -ETIMEDOUT     no connection, greeting, reply or event within the timeout
 *   -ECONNRESET    the peer closed the connection (also mid-message)
 *   -EMSGSIZE      a message above max_message bytes or nested deeper than
 *                  max_depth
 *   -EBADMSG       a message that is not valid JSON (or not UTF-8)
 *   -EPROTO        valid JSON that breaks QMP: no greeting, a reply with an
 *                  id we never sent, a reply or event of the wrong shape
 *   -EREMOTEIO     QEMU answered the command with an error reply; see
 *                  qmp_client_last_error_class()/_desc()
 *   -ENOTCONN      the connection was already unusable after one of the
 *                  errors above (the message repeats the first cause)
 *   -EINVAL        a bad argument from the caller (message names it)
 *   -ENOENT        qmp_connect(): still no socket at the path at the deadline
 *   -ENAMETOOLONG  qmp_connect(): the path does not fit a unix socket address
 *
 * After -ECONNRESET, -EMSGSIZE, -EBADMSG or -EPROTO on a stream the byte
 * stream cannot be trusted any more: the client refuses further commands
 * with -ENOTCONN, while events queued before the failure can still be
 * taken with qmp_wait_event(). A timeout waiting for a reply leaves the
 * client usable: the late reply is recognised by its id and dropped when it
 * arrives. (A command that could not even be sent in time, because the peer
 * reads nothing, leaves a partial command on the wire and breaks the stream.)
 *
 * Threads: one thread drives a client (execute, wait). The only call that
 * may come from another thread is qmp_client_push_event().
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct json_object;
struct qmp_client;

/* Bounds and defaults; zero fields take the default shown. */
struct qmp_options {
	size_t max_message;        /* bytes per message; default QMP_DEFAULT_MAX_MESSAGE */
	int max_depth;             /* JSON nesting depth; default QMP_DEFAULT_MAX_DEPTH */
	size_t max_events;         /* queued events; default QMP_DEFAULT_MAX_EVENTS */
	size_t max_event_bytes;    /* queued events' wire size; default QMP_DEFAULT_MAX_EVENT_BYTES */
	int command_timeout_ms;    /* used by the typed helpers; default QMP_DEFAULT_COMMAND_TIMEOUT_MS */
};

#define QMP_DEFAULT_MAX_MESSAGE (16u << 20)
#define QMP_DEFAULT_MAX_DEPTH 64
#define QMP_DEFAULT_MAX_EVENTS 1024
#define QMP_DEFAULT_MAX_EVENT_BYTES (16u << 20)
#define QMP_DEFAULT_COMMAND_TIMEOUT_MS 30000

/*
 * Connect to QEMU's QMP unix socket at path. While QEMU starts the socket
 * may not exist or refuse connections yet: retry until timeout_ms has passed.
 * Then read the greeting (kept: see qmp_client_version()) and negotiate
 * qmp_capabilities, all within the same timeout. opts may be NULL.
 */
int qmp_connect(const char *path, int timeout_ms, const struct qmp_options *opts,
		struct qmp_client **ret, struct sb_error *err);

/*
 * The same over an already connected stream socket (e.g. one end of a
 * socketpair whose other end QEMU got with -chardev socket,fd=N). Takes
 * ownership of fd, also on failure. label names the peer in messages.
 */
int qmp_connect_fd(int fd, const char *label, int timeout_ms, const struct qmp_options *opts,
		   struct qmp_client **ret, struct sb_error *err);

/*
 * A transport the owner drives. execute sends one command, a JSON object
 * text {"execute": ..., "arguments": ...} WITHOUT an "id" (the transport
 * may add its own, as libvirt does), with fd attached when fd >= 0, and
 * waits up to timeout_ms (< 0: no limit) for that command's reply. It sets
 * *reply_json to a malloc'ed JSON text of the whole reply ({"return": ...}
 * or {"error": {...}}; any "id" in it is ignored) and returns 0, or returns
 * a negative errno with err filled. The client frees *reply_json.
 *
 * wait_events (optional) lets the owner's event loop run for up to
 * timeout_ms while qmp_wait_event() waits, for owners that deliver events
 * from the waiting thread; without it qmp_wait_event() sleeps until another
 * thread pushes an event or the timeout passes.
 *
 * close (optional) is called once by qmp_client_free().
 */
struct qmp_transport_ops {
	int (*execute)(void *opaque, const char *command_json, int fd, int timeout_ms, char **reply_json,
		       struct sb_error *err);
	int (*wait_events)(void *opaque, int timeout_ms);
	void (*close)(void *opaque);
};

int qmp_client_new_with_ops(const struct qmp_transport_ops *ops, void *opaque, const char *label,
			    const struct qmp_options *opts, struct qmp_client **ret, struct sb_error *err);

/*
 * Queue an event on a client made with qmp_client_new_with_ops(). name is
 * the event name, seconds/microseconds QEMU's timestamp (negative if
 * unknown), data_json the event's "data" object as JSON text or NULL.
 * Thread-safe. Bounds apply as for events read from a stream.
 */
int qmp_client_push_event(struct qmp_client *c, const char *name, int64_t seconds, int64_t microseconds,
			  const char *data_json, struct sb_error *err);

/* Closes the transport and frees everything; NULL is fine. */
void qmp_client_free(struct qmp_client *c);

static inline void qmp_client_freep(struct qmp_client **c)
{
	qmp_client_free(*c);
}
#define _cleanup_qmp_client_ _cleanup_(qmp_client_freep)

/*
 * Execute command (e.g. "query-status") with args (a JSON object or NULL;
 * borrowed, not consumed), passing fd along when fd >= 0 (SCM_RIGHTS on a
 * unix socket; what "getfd" and "add-fd" consume). Waits up to timeout_ms
 * (< 0: no limit) for the reply. On success *ret (if not NULL) holds a new
 * reference to the reply's "return" value, which the caller puts. On a QMP
 * error reply returns -EREMOTEIO with err reading
 * "QMP command 'migrate' failed: GenericError: <desc>".
 * Events that arrive meanwhile are queued.
 */
int qmp_execute(struct qmp_client *c, const char *command, struct json_object *args, int fd, int timeout_ms,
		struct json_object **ret, struct sb_error *err);

/* One command of a batch: command and args (borrowed) in, ret out. */
struct qmp_call {
	const char *command;
	struct json_object *args;
	struct json_object *ret; /* on success: a new reference to its "return", which the caller puts */
	/*
	 * Optional, for a reply read many times a second: scan gets the
	 * reply's whole text (the line QEMU sends) and the command's id (NULL
	 * over a transport of whole messages, whose replies carry the
	 * transport's ids), and
	 * either fills scan_out from it (1: scanned is set, ret stays NULL) or
	 * declines (0: the reply is parsed into ret as usual); -ENOMEM fails
	 * the call. A scanner takes only text that json-c would parse to the
	 * same result (qmp-internal.h).
	 */
	int (*scan)(const char *text, size_t len, const char *id, void *scan_out);
	void *scan_out;
	bool scanned;
};
#define QMP_BATCH_MAX 8

/*
 * Execute up to QMP_BATCH_MAX commands at once: over a stream they go out in
 * one write and their replies are read in order, so the round trips of
 * commands issued together (a sample's query-stats of the VM and of its
 * vCPUs) cost one wait. Each call's ret is set as qmp_execute() sets it.
 * Stops at the first failure (timeout_ms bounds the whole batch) and
 * returns its error; the calls before it keep their ret, which the caller
 * puts in either case.
 */
int qmp_execute_batch(struct qmp_client *c, struct qmp_call *calls, size_t n, int timeout_ms, struct sb_error *err);

/*
 * The error class ("GenericError", "CommandNotFound", ...) and desc of the
 * last command's QMP error reply; NULL when the last command got no error
 * reply. Valid until the next command.
 */
const char *qmp_client_last_error_class(const struct qmp_client *c);
const char *qmp_client_last_error_desc(const struct qmp_client *c);

/* One QMP event, owned by whoever took it from the queue. */
struct qmp_event {
	char *name;                 /* "MIGRATION", "STOP", ... */
	struct json_object *data;   /* the event's "data" object, NULL if it had none */
	int64_t qemu_time_us;       /* QEMU's timestamp (CLOCK_REALTIME, µs), -1 if absent */
	uint64_t recv_mono_ns;      /* when we read it: mono_ns() */
	uint64_t recv_realtime_ns;  /* when we read it: realtime_ns() */
	size_t wire_bytes;          /* its size on the wire; counts against max_event_bytes */
};

void qmp_event_free(struct qmp_event *e);

static inline void qmp_event_freep(struct qmp_event **e)
{
	qmp_event_free(*e);
}
#define _cleanup_qmp_event_ _cleanup_(qmp_event_freep)

/*
 * Take the oldest queued event named name (any event when name is NULL),
 * reading from the transport for up to timeout_ms (0: only what has already
 * arrived; < 0: no limit). Events with other names stay queued in order.
 * Returns 0 and sets *ret, or -ETIMEDOUT, or a transport error.
 */
int qmp_wait_event(struct qmp_client *c, const char *name, int timeout_ms, struct qmp_event **ret,
		   struct sb_error *err);

/* Number of events currently queued, and events dropped (oldest first) because the queue was full. */
size_t qmp_client_events_queued(struct qmp_client *c);
uint64_t qmp_client_events_dropped(struct qmp_client *c);

/* Replies a call's scanner took (qmp_call.scan) since the client was made. */
uint64_t qmp_client_replies_scanned(const struct qmp_client *c);

/* What QEMU said about itself in its greeting (stream transports only). */
struct qmp_version {
	int major, minor, micro;
	char package[128];          /* e.g. "Debian 1:7.2+dfsg-7+deb12u18", may be "" */
};

/*
 * QEMU's version: from the greeting on a stream, through query-version
 * (once, then cached) on an ops transport.
 */
int qmp_client_version(struct qmp_client *c, struct qmp_version *ret, struct sb_error *err);

/* Whether the greeting offered a capability ("oob"); false on ops transports. */
bool qmp_client_has_capability(const struct qmp_client *c, const char *name);

/* The socket fd of a stream transport (for poll()), -1 for ops transports. */
int qmp_client_fd(const struct qmp_client *c);

/* The label used in messages: the socket path, or what the owner passed. */
const char *qmp_client_label(const struct qmp_client *c);

/*
 * Timeout the typed helpers use for each command, in ms (> 0): the command
 * timeout, or less when a deadline is set and nearer.
 */
int qmp_client_command_timeout(const struct qmp_client *c);
void qmp_client_set_command_timeout(struct qmp_client *c, int timeout_ms);

/*
 * A deadline (mono_ns()) no command may wait past, whatever its timeout:
 * for a caller whose own deadline must hold while QEMU does not answer
 * (stopped, hung). QMP_NO_DEADLINE clears it.
 */
#define QMP_NO_DEADLINE UINT64_MAX
void qmp_client_set_deadline(struct qmp_client *c, uint64_t deadline_ns);

/*
 * Called about once a second (QMP_WAIT_HOOK_MS) while a command waits for
 * its reply on a stream connection, with the command and how long it has
 * waited: for a caller whose progress must say what it waits for while
 * QEMU does not answer. The ops transport (libvirt's passthrough) blocks
 * inside libvirt and calls no hook. NULL clears it.
 */
#define QMP_WAIT_HOOK_MS 1000
typedef void (*qmp_wait_hook)(void *userdata, const char *command, double waited_s);
void qmp_client_set_wait_hook(struct qmp_client *c, qmp_wait_hook hook, void *userdata);
