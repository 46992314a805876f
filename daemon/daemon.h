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
 * daemon.c: set-up, the loop, signals; each other unit has its header:
 * listen.h, the listening socket (systemd's, or created); current-run.h,
 * the current run (start, progress, end, cancel, events); conn.h,
 * connections (accept, credentials, I/O, deadlines); ops.h, the requests
 * of docs/protocol.md; metrics-file.h; status.h, the status for systemd;
 * log.h. They call one way: daemon.c calls them all, ops.c the current
 * run and conn.c, the current run conn.c; conn.c hands request lines to
 * ops.c through d->on_request (tests/architecture's call-loops checks).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "conn.h"
#include "current-run.h"
#include "error.h"
#include "queue.h"
#include "store.h"

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

#define DAEMON_DEFAULT_STATE_DIR STORE_DEFAULT_STATE_DIR
#define DAEMON_DEFAULT_GROUP "snapbench"
#define DAEMON_LOCK_FILE "snapbenchd.lock"

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
	conn_request_fn on_request;   /* ops_handle_line() */
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
