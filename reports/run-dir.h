/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The layout of a run directory: what one run leaves behind, in a
 * directory named by its run id (report_new_id(), report.h). The run engine
 * writes it (`snapbench run --local`: RESULTS/<id>/), snapbenchd keeps one
 * per run in its results store, and `snapbench compare` reads them back
 * (docs/report-format.md, docs/service.md):
 *
 *   STATE_DIR/runs/<id>/       snapbenchd's results store (RUN_DIR_STORE_RUNS)
 *   <id>/report.json           the run report (snapbench.run/1)
 *   <id>/spec.json             the validated spec snapbenchd's worker executes
 *   <id>/worker.log            that worker's stdout and stderr
 *   <id>/qemu.pid              QEMU's pid while it runs (qemu backend), for a
 *                              supervisor after a crash
 *   <id>/qemu-TAG.log          QEMU's output, one per repetition (qemu backend)
 *   <id>/origin.json           where a run imported from elsewhere came from
 *                              (snapbench import-lava: the LAVA job, device,
 *                              log; docs/lava.md)
 *   <id>/owner.lock            flock()ed by the process executing the run for
 *                              its whole life: a "running" report whose lock
 *                              nobody holds was cut off (daemon recovery)
 *
 * Every component that reads or writes one of these files takes its name
 * from here.
 */
#pragma once

#define RUN_DIR_STORE_RUNS "runs"
#define RUN_DIR_REPORT "report.json"
#define RUN_DIR_SPEC "spec.json"
#define RUN_DIR_ORIGIN "origin.json"
#define RUN_DIR_WORKER_LOG "worker.log"
#define RUN_DIR_QEMU_PID "qemu.pid"
#define RUN_DIR_OWNER_LOCK "owner.lock"
/* RUN_DIR_QEMU_LOG_PREFIX TAG RUN_DIR_QEMU_LOG_SUFFIX */
#define RUN_DIR_QEMU_LOG_PREFIX "qemu-"
#define RUN_DIR_QEMU_LOG_SUFFIX ".log"

/*
 * Takes the run directory's owner lock (non-blocking); returns its fd, to
 * keep open (close-on-exec) while the run executes, -EBUSY when another
 * process owns the run, or another negative errno.
 */
int run_dir_own(const char *run_dir);

/* 1 when a process holds the owner lock, 0 when none does, or a negative errno. */
int run_dir_owned(const char *run_dir);
