/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapbenchd's client connections (conn.c): accept, peer credentials,
 * bounded input and output, deadlines. Below the requests: each complete
 * request line goes to d->on_request (ops_handle_line(), which daemon.c
 * sets), so that ops.c calls conn.c and not the other way round.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "macro.h"
#include "protocol.h"
#include "report.h"

struct daemon;
struct json_object;

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

/* What handles one request line of c (ops_handle_line()). */
typedef void (*conn_request_fn)(struct daemon *d, struct conn *c, const char *line, size_t len);

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

/* Open connections of uid (watching_only: those that watch a run). */
unsigned conn_count_uid(const struct daemon *d, uid_t uid, bool watching_only);

/* "uid 1000 (alice)" into buf */
void daemon_describe_peer(const struct conn *c, char *buf, size_t len);
