/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * show, list and logs without snapbenchd: when no daemon answers on its
 * socket, the verbs read its run store (STATE_DIR/runs, or --store DIR)
 * with the daemon's own store code, saying so in one line.
 */
#pragma once

#include <getopt.h>

#include "client.h"
#include "store.h"

/* The --store option of show, list and logs (getopt value STORE_READ_OPT, its value the runs directory). */
#define STORE_READ_OPT 0x1300
#define STORE_READ_OPTION { "store", required_argument, NULL, STORE_READ_OPT }

/* The daemon's run store the verbs fall back to: STORE_DEFAULT_STATE_DIR/runs. */
#define STORE_READ_DEFAULT STORE_DEFAULT_STATE_DIR "/runs"

/*
 * Connects to snapbenchd at socket_path (NULL: the default) for verb who
 * ("snapbench show"), or, when it is not running (no socket, nobody
 * listening), opens the run store store_dir (NULL: STORE_READ_DEFAULT)
 * instead, having said so in one line on stderr. Returns 0 with *c or *s
 * set, or the exit code to stop with (the reason printed).
 */
int store_read_connect(const char *who, const char *socket_path, const char *store_dir, struct client **c,
		       struct store **s);
