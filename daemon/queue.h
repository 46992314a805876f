/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run queue, persisted in STATE_DIR/queue.json (written atomically on
 * every change) so a restart loses nothing:
 *
 *   {"version": 1, "queued": ["ID", ...],
 *    "running": {"id": "ID", "worker_pid": N, "worker_start": TICKS} | null}
 *
 * "running" names the run being executed and the worker executing it (its
 * pid and its start time, so a later daemon can tell that worker from an
 * unrelated process that got the same pid). The queue file and the run
 * directories are reconciled at start-up (recover.c): the run directories
 * are the truth about which runs exist and what state they are in.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "report.h"

#define QUEUE_FILE "queue.json"
#define QUEUE_MAX_FILE_BYTES (1u << 20)
#define QUEUE_HARD_MAX 4096 /* what a queue file may hold at most */

struct queue_running {
	char id[REPORT_ID_MAX];
	pid_t worker_pid;          /* 0: not started yet */
	uint64_t worker_start;     /* /proc/PID/stat start time */
};

struct queue {
	char *path;
	size_t n;
	char (*ids)[REPORT_ID_MAX];
	bool has_running;
	struct queue_running running;
};

/*
 * Loads STATE_DIR/queue.json; a missing file is an empty queue. A file that
 * does not parse is an error naming it (the caller decides whether to start
 * over: reconciliation can rebuild the queue from the run directories).
 */
int queue_load(const char *state_dir, struct queue *q, struct sb_error *err);
/* An empty queue that saves to STATE_DIR/queue.json. */
int queue_init_empty(const char *state_dir, struct queue *q);
void queue_done(struct queue *q);

int queue_save(const struct queue *q, struct sb_error *err);

/* 0-based position of id, or -1. */
ssize_t queue_find(const struct queue *q, const char *id);
/* Appends id (not saved). -E2BIG beyond QUEUE_HARD_MAX. */
int queue_push(struct queue *q, const char *id);
/* Removes the entry at pos (not saved). */
void queue_remove_at(struct queue *q, size_t pos);
