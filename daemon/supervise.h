/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's side of a worker: start snapbench-worker for one run (its
 * stdout and stderr appended to RUN_DIR/worker.log, progress on a pipe),
 * signal it through a pidfd, and reap it. The daemon's poll loop watches
 * the pidfd (readable when the worker exits) and the progress pipe.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct worker_proc {
	pid_t pid;
	uint64_t start_ticks;  /* /proc/PID/stat start time, for queue.json */
	int pidfd;             /* readable once the worker exited */
	int progress_fd;       /* our end of the progress pipe, non-blocking */
};

struct worker_args {
	const char *worker_path;   /* the snapbench-worker binary */
	const char *run_dir;
	const char *knobs_dir;     /* the knob journal and lock (runner_options.state_dir) */
	const char *qemu;          /* NULL: the worker's default */
};

/* Starts the worker. On failure nothing is left running and err says why. */
int worker_start(const struct worker_args *a, struct worker_proc *w, struct sb_error *err);

/* Sends sig through the pidfd; -ESRCH once it has exited. */
int worker_signal(struct worker_proc *w, int sig);

/*
 * Reaps the worker if it has exited: 1 with *wait_status set, 0 if it still
 * runs. Closes the pidfd once reaped (the progress pipe stays open until
 * worker_close() so its last lines can still be read).
 */
int worker_reap(struct worker_proc *w, int *wait_status);

/* Closes what is left open. */
void worker_close(struct worker_proc *w);

/* "exit status 1" / "killed by signal 9 (Killed)" */
void worker_describe_status(int wait_status, char *buf, size_t len);

/* The worker binary: $SNAPBENCH_WORKER; else snapbench-worker next to the
 * running binary, or in its build tree (BUILD/libexec/worker/); else
 * LIBEXECDIR/snapbench-worker. */
int worker_find_binary(char **ret, struct sb_error *err);
