/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qga/: a client for qemu-guest-agent (QGA), the agent inside Linux guests
 * that runs commands and reads and writes files for the host. It knows the
 * agent's protocol and nothing of snapbench's runner, daemon or libvirt.
 *
 * Two transports, as in qmp/:
 *
 *  - a stream (qga_connect() on a unix socket path, qga_connect_fd() on a
 *    connected socket): the host side of the guest's virtio-serial port
 *    "org.qemu.guest_agent.0", or qemu-ga itself listening on a socket.
 *    The agent sends no greeting and its replies carry no id, so the
 *    client synchronises with guest-sync-delimited (a random id, the
 *    agent's 0xFF sentinel before the reply) before the first command and
 *    again after anything that may have left a stale reply in the stream
 *    (a timeout, garbage). Replies are bounded in size and depth.
 *
 *  - an ops table (qga_client_new_with_ops()): the owner executes one
 *    command at a time, e.g. through libvirt's virDomainQemuAgentCommand(),
 *    which synchronises by itself.
 *
 * Errors are negative errnos with a struct sb_error message (common/error.h):
 *
 *   -ETIMEDOUT    no reply within the timeout
 *   -ENOTCONN     no agent: nothing listens, or the agent never answered a sync
 *   -ECONNRESET   the peer closed the connection
 *   -EMSGSIZE     a reply above max_reply bytes or nested too deep
 *   -EBADMSG      a reply that is not JSON
 *   -EPROTO       JSON of the wrong shape
 *   -EREMOTEIO    the agent answered with an error (class and desc in the message)
 *   -EINVAL       a bad argument from the caller
 *
 * One thread drives a client.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct json_object;
struct qga_client;

struct qga_options {
	size_t max_reply;          /* bytes; default QGA_DEFAULT_MAX_REPLY */
	int max_depth;             /* default QGA_DEFAULT_MAX_DEPTH */
	int command_timeout_ms;    /* the typed helpers' timeout; default QGA_DEFAULT_COMMAND_TIMEOUT_MS */
};

#define QGA_DEFAULT_MAX_REPLY (8u << 20)
#define QGA_DEFAULT_MAX_DEPTH 32
#define QGA_DEFAULT_COMMAND_TIMEOUT_MS 10000
/* bytes per guest-file-read / guest-file-write call (base64 makes the message 4/3 of it) */
#define QGA_FILE_CHUNK (1u << 20)
/* output kept per stream of a guest-exec; the agent itself caps it (16 MiB in QEMU 7.2) */
#define QGA_MAX_EXEC_OUTPUT (16u << 20)

/* A stream to a unix socket at path; retries while nothing listens, until timeout_ms. Then syncs. */
int qga_connect(const char *path, int timeout_ms, const struct qga_options *opts, struct qga_client **ret,
		struct sb_error *err);

/* The same over a connected stream socket (owned from here on, also on failure). */
int qga_connect_fd(int fd, const char *label, int timeout_ms, const struct qga_options *opts,
		   struct qga_client **ret, struct sb_error *err);

/*
 * A stream client on fd (owned from here on, also on failure) that does
 * not sync yet: the first command, or qga_sync(), does. For a guest that
 * is still booting, whose agent is not there to answer.
 */
int qga_client_new_fd(int fd, const char *label, const struct qga_options *opts, struct qga_client **ret,
		      struct sb_error *err);

/*
 * A transport the owner drives: execute sends one command (JSON text of
 * {"execute": ..., "arguments": ...}) and returns the agent's whole reply
 * ({"return": ...} or {"error": {...}}) as malloc'ed JSON text in
 * *reply_json, or a negative errno with err filled (-ENOTCONN when there
 * is no agent). close (optional) is called by qga_client_free().
 */
struct qga_transport_ops {
	int (*execute)(void *opaque, const char *command_json, int timeout_ms, char **reply_json,
		       struct sb_error *err);
	void (*close)(void *opaque);
};

int qga_client_new_with_ops(const struct qga_transport_ops *ops, void *opaque, const char *label,
			    const struct qga_options *opts, struct qga_client **ret, struct sb_error *err);

void qga_client_free(struct qga_client *c);
static inline void qga_client_freep(struct qga_client **c)
{
	qga_client_free(*c);
}
#define _cleanup_qga_client_ _cleanup_(qga_client_freep)

const char *qga_client_label(const struct qga_client *c);
int qga_client_command_timeout(const struct qga_client *c);
void qga_client_set_command_timeout(struct qga_client *c, int timeout_ms);

/*
 * Execute command with args (borrowed; NULL for none) within timeout_ms.
 * *ret (if not NULL) gets a new reference to the reply's "return" value.
 */
int qga_execute(struct qga_client *c, const char *command, struct json_object *args, int timeout_ms,
		struct json_object **ret, struct sb_error *err);

/*
 * guest-sync-delimited with a fresh random id (stream transports; a no-op
 * for ops transports, which sync by themselves). -ENOTCONN when the agent
 * does not answer within timeout_ms.
 */
int qga_sync(struct qga_client *c, int timeout_ms, struct sb_error *err);

/* ---- typed helpers (the client's command timeout) ---- */

/* guest-info: the agent's version, e.g. "7.2.0". */
int qga_info(struct qga_client *c, char *version, size_t len, struct sb_error *err);

/*
 * guest-exec of path with argv (argv[0] is NOT the program: these are its
 * arguments, NULL-terminated, may be NULL) and env ("K=V", may be NULL).
 * capture: keep stdout and stderr for guest-exec-status. *pid: the guest pid.
 */
int qga_exec(struct qga_client *c, const char *path, const char *const *argv, const char *const *env, bool capture,
	     int64_t *pid, struct sb_error *err);

struct qga_exec_status {
	bool exited;
	bool has_code;     /* exited normally: code is its exit code */
	int code;
	int signal;        /* killed by a signal: its number, else 0 */
	char *out, *err;   /* decoded stdout / stderr (NUL-terminated; may hold NULs), NULL if none */
	size_t out_len, err_len;
	bool out_truncated, err_truncated; /* the agent cut the output at its limit */
};
void qga_exec_status_clear(struct qga_exec_status *st);

/* guest-exec-status, once. */
int qga_exec_status(struct qga_client *c, int64_t pid, struct qga_exec_status *st, struct sb_error *err);

/*
 * Polls guest-exec-status every poll_ms until the process exited or
 * timeout_ms passed (-ETIMEDOUT; st then holds the last status).
 */
int qga_exec_wait(struct qga_client *c, int64_t pid, int timeout_ms, int poll_ms, struct qga_exec_status *st,
		  struct sb_error *err);

/*
 * Runs a command to its end: exec with capture, wait, and fail with
 * -EIO naming the command, its exit code or signal and the start of its
 * stderr when it did not exit 0. st (optional) gets the status.
 */
int qga_run(struct qga_client *c, const char *path, const char *const *argv, int timeout_ms,
	    struct qga_exec_status *st, struct sb_error *err);

/* guest-file-open (mode as fopen: "r", "w", "a" ...), -read, -write, -close. */
int qga_file_open(struct qga_client *c, const char *path, const char *mode, int64_t *handle, struct sb_error *err);
int qga_file_close(struct qga_client *c, int64_t handle, struct sb_error *err);
/* Writes all len bytes, in QGA_FILE_CHUNK pieces. */
int qga_file_write(struct qga_client *c, int64_t handle, const void *buf, size_t len, struct sb_error *err);
/* Reads up to len (<= QGA_FILE_CHUNK) bytes: *got, and *eof at the end of the file. */
int qga_file_read(struct qga_client *c, int64_t handle, void *buf, size_t len, size_t *got, bool *eof,
		  struct sb_error *err);

/*
 * Copies len bytes into the guest as path (created or truncated) and makes
 * it mode (chmod through guest-exec of /bin/chmod). For the probe program.
 */
int qga_copy_in(struct qga_client *c, const void *buf, size_t len, const char *path, unsigned mode,
		struct sb_error *err);

