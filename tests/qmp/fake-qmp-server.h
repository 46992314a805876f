/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A scripted fake QMP server for tests, in a thread of the test program.
 * It listens on a unix socket in a fresh temp dir, accepts one client and
 * plays a script: expect command X (anything else fails the test), send
 * these bytes, sleep, close. After the script it waits for the client to
 * hang up; a command sent then is unexpected and fails the test too.
 * Temp files are removed by fake_server_finish() or at exit.
 */
#pragma once

#include <stddef.h>

enum fake_op {
	FAKE_END = 0,
	FAKE_RECV,        /* text: the command the client must send next */
	FAKE_RECV_FD,     /* the same, and it must carry an fd (kept, see fake_server_received_fd) */
	FAKE_SEND,        /* text: sent as is, "%ID%" replaced by the last command's id (JSON) */
	FAKE_SEND_FILL,   /* text: prefix; n: total bytes, padded with 'x' (no suffix: never ends) */
	FAKE_SLEEP,       /* n: milliseconds */
	FAKE_CLOSE,       /* close the connection now */
	FAKE_DRAIN,       /* read and discard until the client hangs up, then close */
	FAKE_FD_WRITE,    /* n: bytes ('s') written to the fd a FAKE_RECV_FD step received, as QEMU writes a stream */
	FAKE_FD_CLOSE,    /* close that fd now, as QEMU does when a migration ends */
};

struct fake_step {
	enum fake_op op;
	const char *text;
	size_t n;
	const char *args;   /* FAKE_RECV*: the command's arguments must equal this JSON (NULL: not checked) */
};

#define FAKE_GREETING_TEXT                                                                          \
	"{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 3, \"minor\": 2, \"major\": 7}, \"package\": " \
	"\"fake\"}, \"capabilities\": [\"oob\"]}}\r\n"

/* Script steps. */
#define EXPECT(cmd) { .op = FAKE_RECV, .text = (cmd) }
#define EXPECT_ARGS(cmd, json) { .op = FAKE_RECV, .text = (cmd), .args = (json) }
#define EXPECT_FD(cmd) { .op = FAKE_RECV_FD, .text = (cmd) }
#define SEND(t) { .op = FAKE_SEND, .text = (t) }
#define SEND_FILL(prefix, total) { .op = FAKE_SEND_FILL, .text = (prefix), .n = (total) }
#define PAUSE(ms) { .op = FAKE_SLEEP, .n = (ms) }
#define HANG_UP { .op = FAKE_CLOSE }
#define DRAIN { .op = FAKE_DRAIN }
#define FD_WRITE(bytes) { .op = FAKE_FD_WRITE, .n = (bytes) }
#define FD_CLOSE { .op = FAKE_FD_CLOSE }
#define END { .op = FAKE_END }

#define FAKE_OK "{\"return\": {}, \"id\": %ID%}\r\n"

/* The greeting and the qmp_capabilities exchange every client starts with. */
#define FAKE_HANDSHAKE SEND(FAKE_GREETING_TEXT), EXPECT("qmp_capabilities"), SEND(FAKE_OK)

struct fake_server;

/* Create the socket (after delay_ms, to test connect retries) and run steps in a thread. */
struct fake_server *fake_server_start(const struct fake_step *steps, int delay_ms);

/* Path of the server's socket (it may not exist yet while the delay runs). */
const char *fake_server_path(const struct fake_server *s);

/*
 * Wait for the script to end and the client to hang up (close the client
 * first), CHECK that nothing went wrong, return the fd a FAKE_RECV_FD step
 * received (the caller closes it) or -1 (none, or FAKE_FD_CLOSE closed it),
 * and free everything.
 */
int fake_server_finish(struct fake_server *s);
