/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapbenchd's current run (current-run.c): the next queued run's worker
 * started, its progress read and sent to the run's watchers, its cancel,
 * its end settled in the store.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "protocol.h"
#include "report.h"
#include "supervise.h"

struct daemon;
struct json_object;

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

/* The next queued run's worker, while none runs and snapbenchd is not stopping. */
void current_start_next(struct daemon *d);
/* Reads the worker's progress lines and sends them to the run's watchers. */
void current_read_progress(struct daemon *d);
/* The worker exited: settle the report, then go on with the queue. */
void current_finish(struct daemon *d);
/* Kills a cancelled worker past its deadline; returns the ms until the deadline (-1: none). */
int current_check_cancel_deadline(struct daemon *d, uint64_t now);

/* Cancels the current run (a request of by, "uid 1000 (alice)"). */
int daemon_cancel_current(struct daemon *d, const char *by);
/* Sends watchers of run an "end" event with its summary. */
void daemon_notify_end(struct daemon *d, const char *run);
/* The summary of the current run with its progress (new reference), or NULL. */
struct json_object *daemon_current_summary(struct daemon *d);
