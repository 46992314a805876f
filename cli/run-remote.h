/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `snapbench run` through snapbenchd: submit a spec, print the run id or
 * follow the run to its end (--wait). Also the follow loop `snapbench
 * cancel --wait` uses.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>

struct client;
struct json_object;
struct run_spec;

struct remote_run_options {
	const char *socket_path;  /* NULL: $SNAPBENCH_SOCKET, else the default */
	bool wait;                /* follow the run to its end */
	bool json;                /* JSON on stdout */
	bool quiet;               /* no progress */
};

/* Submits spec; returns an exit code (cli/exit-codes.h). */
int remote_run(const struct run_spec *spec, const struct remote_run_options *o);

/*
 * Follows run id on c until it ends: progress on stderr (a bar on a
 * terminal), unless quiet. SIGINT/SIGTERM cancel the run (through a second
 * connection) if cancel_on_signal, and the wait goes on until it ended.
 * Returns 0 with *final, the run's final summary; else it prints "who: why"
 * on stderr and returns the exit code (cli/exit-codes.h).
 */
int remote_follow(struct client *c, const char *who, const char *socket_path, const char *id, bool quiet,
		  bool cancel_on_signal, struct json_object **final);
