/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapbenchd's state and its single-threaded poll loop. One process, no
 * threads: the listening socket, every client connection, a signalfd, and
 * the current run's worker (its pidfd and progress pipe) are all fds in one
 * poll() set; every deadline (a client's request, idle and total time, a
 * cancel that takes too long) bounds poll()'s timeout. Nothing a client does
 * can block the loop: sockets are non-blocking, input and output buffers
 * are bounded, and slow readers lose progress events rather than stall
 * others.
 *
 * daemon.c: set-up, the loop, signals, the status for systemd;
 * listen.c: the listening socket (systemd's, or created);
 * current-run.c: the current run (start, progress, end, cancel, events);
 * conn.c: connections (accept, credentials, I/O, deadlines);
 * ops.c: the requests of docs/protocol.md.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "error.h"
#include "protocol.h"
#include "queue.h"
#include "report.h"
#include "supervise.h"

struct json_object;
struct store;

struct daemon_config {
	const char *socket_path;      /* when not socket-activated */
	const char *state_dir;
	const char *group;            /* may submit and cancel, besides root */
	const char *worker_path;      /* NULL: worker_find_binary() */
	const char *qemu;             /* passed to the worker; NULL: its default */
	unsigned max_connections;
	unsigned max_connections_per_uid; /* for each uid but root's */
	unsigned reserved_connections;    /* of max_connections, only for root and the group */
	unsigned max_watches_per_uid;     /* watch requests at once, for each uid but root's */
	unsigned max_queue;
	unsigned request_timeout_ms;  /* from a request's first byte to its newline */
	unsigned idle_timeout_ms;     /* no request pending, nothing watched */
	unsigned lifetime_ms;         /* a connection that watches nothing */
	unsigned write_timeout_ms;    /* a peer that reads none of its replies */
	unsigned cancel_timeout_ms;   /* a cancelled worker gets this long before SIGKILL */
	unsigned recover_wait_ms;     /* for a previous daemon's worker to finish stopping */
	const char *metrics_file;     /* NULL: DAEMON_DEFAULT_METRICS_FILE for the default state dir; "": none */
};

#define DAEMON_DEFAULT_STATE_DIR "/var/lib/snapbench"
#define DAEMON_DEFAULT_GROUP "snapbench"
#define DAEMON_LOCK_FILE "snapbenchd.lock"
/* node_exporter's textfile collector reads *.prom here (Debian's prometheus-node-exporter) */
#define DAEMON_DEFAULT_METRICS_FILE "/var/lib/prometheus/node-exporter/snapbench.prom"
#define DAEMON_OUT_HIGH_WATER (1u << 20) /* stop reading requests / drop progress above this */
#define DAEMON_READ_CHUNK (64u << 10)

struct conn {
	int fd;
	unsigned serial;              /* for the log */
	struct ucred cred;
	bool may_write;
	uint64_t accepted_ns, last_activity_ns, line_start_ns, last_write_ns;
	struct linebuf in;
	char *out;
	size_t out_len, out_off, out_cap;
	bool closing;                 /* flush the output, then close */
	bool peer_eof;
	bool dead;                    /* close now */
	bool watching;
	char watch_run[REPORT_ID_MAX];
	struct json_object *watch_id;
	unsigned long dropped_events;
};

struct current_run {
	bool active;
	char id[REPORT_ID_MAX];
	char run_dir[PATH_MAX];
	struct worker_proc w;
	struct linebuf progress_in;
	struct json_object *progress; /* latest, sanitized */
	uint64_t started_ns;
	bool cancel_requested;
	char cancelled_by[96];
	uint64_t cancel_deadline_ns;
	bool killed;
	bool reaped;
	int wait_status;
};

struct daemon {
	struct daemon_config cfg;
	char *worker_path;
	int listen_fd;
	bool activated;               /* the socket came from systemd */
	char *socket_path;            /* ours to unlink at exit, NULL when activated */
	int signal_fd;
	int lock_fd;
	bool group_known;
	gid_t gid;
	struct store *store;
	struct queue queue;
	struct current_run cur;
	struct conn **conns;
	size_t n_conns;
	unsigned next_serial;
	bool stopping;
	uint64_t start_ns;
	unsigned long long requests;
	uint64_t last_status_ns;
	char last_status[256];
	bool metrics_failed;          /* the last write of the metrics file failed (said once) */
};

/* Fills cfg with the defaults. */
void daemon_config_defaults(struct daemon_config *cfg);

/*
 * Everything before serving: the state directory and its lock, the store,
 * the queue and recovery, the group, the worker binary, the socket (from
 * systemd, or created). Logs what recovery did.
 */
int daemon_setup(struct daemon *d, const struct daemon_config *cfg, struct sb_error *err);

/* Serves until SIGTERM/SIGINT and the current run stopped. */
int daemon_loop(struct daemon *d);

void daemon_teardown(struct daemon *d);

/* ---- used across daemon.c, conn.c and ops.c ---- */

/* Queues a message on conn (serialized as one line); drops the connection on ENOMEM. */
void conn_send(struct daemon *d, struct conn *c, struct json_object *msg);
/* Sends an error reply. */
void conn_send_error(struct daemon *d, struct conn *c, struct json_object *id, const char *code,
		     const char *field, const char *fmt, ...) _printf_(6, 7);

int conn_accept_all(struct daemon *d);
/* Reads and handles what the peer sent. */
void conn_on_input(struct daemon *d, struct conn *c);
/* Writes pending output. */
void conn_on_output(struct daemon *d, struct conn *c);
/* Enforces deadlines; returns the ms until this connection's next deadline (-1: none). */
int conn_check_deadlines(struct daemon *d, struct conn *c, uint64_t now);
void conn_free(struct conn *c);

/* ops.c: handles one request line from c. */
void ops_handle_line(struct daemon *d, struct conn *c, const char *line, size_t len);

/* listen.c: sets d->listen_fd (and d->activated, or d->socket_path). */
int listen_open(struct daemon *d, struct sb_error *err);
/* Accepts no more connections (the socket file stays until listen_close()). */
void listen_stop(struct daemon *d);
/* listen_stop(), and removes the socket file snapbenchd created. */
void listen_close(struct daemon *d);

/* current-run.c: the next queued run's worker, while none runs and snapbenchd is not stopping. */
void current_start_next(struct daemon *d);
/* Reads the worker's progress lines and sends them to the run's watchers. */
void current_read_progress(struct daemon *d);
/* The worker exited: settle the report, then go on with the queue. */
void current_finish(struct daemon *d);
/* Kills a cancelled worker past its deadline; returns the ms until the deadline (-1: none). */
int current_check_cancel_deadline(struct daemon *d, uint64_t now);

/* current-run.c: run control used by ops.c */
int daemon_cancel_current(struct daemon *d, const char *by);
/* daemon.c */
void daemon_update_status(struct daemon *d, bool force);
/* metrics-file.c: the metrics file's path (NULL: none), and its rewrite after a change */
const char *daemon_metrics_path(const struct daemon_config *cfg);
void daemon_write_metrics(struct daemon *d);
/* Sends watchers of run an "end" event with its summary. */
void daemon_notify_end(struct daemon *d, const char *run);
/* The summary of the current run with its progress (new reference), or NULL. */
struct json_object *daemon_current_summary(struct daemon *d);

/* Open connections of uid (watching_only: those that watch a run). */
unsigned conn_count_uid(const struct daemon *d, uid_t uid, bool watching_only);

/* "uid 1000 (alice)" into buf */
void daemon_describe_peer(const struct conn *c, char *buf, size_t len);

/* Logging to stderr; under systemd the "<N>" prefixes give the journal priorities. */
void log_msg(int priority, const char *fmt, ...) _printf_(2, 3);
#define log_error(...) log_msg(3, __VA_ARGS__)
#define log_warning(...) log_msg(4, __VA_ARGS__)
#define log_notice(...) log_msg(5, __VA_ARGS__)
#define log_info(...) log_msg(6, __VA_ARGS__)
#define log_debug(...) log_msg(7, __VA_ARGS__)
