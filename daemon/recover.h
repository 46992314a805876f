/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start-up recovery, before the daemon serves anyone:
 *
 *  1. The run the previous daemon was executing (queue.json "running"): if
 *     its worker still lives (same pid and start time), it was told to stop
 *     by its parent-death signal; wait for it (bounded), then kill it. Kill
 *     the run's QEMU if it is still alive, after checking that the pid in
 *     RUN_DIR/qemu.pid really is that run's QEMU (its command line). Mark the
 *     report failed, "interrupted", keeping its partial timeline.
 *  2. knobs_recover(): knobs a dead run left set go back to their originals.
 *  3. Reconcile queue.json with the run directories: queued reports missing
 *     from the file are appended (oldest first), entries whose report is no
 *     longer queued are dropped.
 *
 * Only the run named in queue.json is touched: a report in state "running"
 * that the daemon did not own may belong to a `snapbench run --local` that
 * is still executing.
 */
#pragma once

#include "error.h"

struct queue;
struct store;

struct recover_result {
	char interrupted[64];  /* the run the previous daemon was executing, "" if none */
	char interrupted_state[96]; /* its state now: "failed (interrupted)" */
	int knobs_restored;    /* knobs put back */
	unsigned requeued;     /* queued runs found only in the run directories */
	unsigned dropped;      /* queue entries dropped */
	unsigned killed_qemu;  /* 0 or 1 */
	unsigned killed_worker;
	char notes[1024];      /* what went wrong along the way, for the log ("" if nothing) */
};

/* wait_ms bounds the wait for an old worker to finish stopping. */
int recover_state(struct store *store, struct queue *q, int wait_ms, struct recover_result *res,
		  struct sb_error *err);

/*
 * Kills the QEMU a run left behind (RUN_DIR/qemu.pid), if it is alive and
 * really is that run's QEMU. Returns 1 if it killed one, 0 if none, -errno.
 */
int recover_kill_run_qemu(const char *run_dir, const char *run_id);
