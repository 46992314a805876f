/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * runner/: the run engine. runner_execute() runs one spec (arms x
 * repetitions, interleaved A B A B) and writes RUN_DIR/report.json
 * (snapbench.run/1): at the start, when each repetition starts and ends,
 * every few seconds during one, and at the end. `snapbench run` calls it
 * directly; snapbenchd's worker calls it for each queued run.
 *
 * One repetition: a fresh VM (vm.h), BPF probes on its QEMU, the micro
 * guest's workload, then the windows warmup, pre, the scenario's own
 * (snapshot), post, each sampled every spec.timing.interval_ms
 * (sampler.h), then the VM is stopped. Scenarios sit behind scenario.h.
 *
 * Nothing is printed: progress goes to the callback, errors to the report
 * and to err.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "locate.h"
#include "run-progress.h"
#include "spec.h"

struct runner_options {
	const char *run_dir;       /* required; created (0755) if missing; its name is the run id when it has that shape */
	const char *state_dir;     /* the knob journal and lock; NULL: the run directory's parent */
	const char *scratch_dir;   /* where a snapshot file that is not kept goes; NULL: the run directory */
	const char *run_id;        /* NULL: the run directory's name if it is a run id, else a new id */
	const char *qemu_binary;   /* NULL: QEMU_DEFAULT_BINARY from PATH */
	const char *dest_qemu_binary; /* dirty-log: the migration's destination QEMU; NULL: qemu_binary (a migration between QEMU builds) */
	const char *guest_image;   /* NULL: runner_find_guest_image() */
	const char *sysroot;       /* where /proc, /sys and /run are, for knobs (tests); NULL: "/" */
	int knobs_wait_ms;         /* another run holds the host-wide knob lock (knobs.h): wait this long; 0: 5 minutes; < 0: do not wait */
	bool skip_preflight;       /* run even when preflight checks fail (the run then fails where they said) */
	volatile sig_atomic_t *cancel; /* non-zero: stop the run (VM stopped, knobs restored, report cancelled) */
	void (*progress)(const struct runner_progress *p, void *userdata);
	void *userdata;
	unsigned report_every_ms;  /* rewrite the report this often during a repetition; 0: every 5 s, longer as it grows (runner.c) */
	unsigned stop_timeout_ms;  /* for stopping a VM; 0: 10000 */
	unsigned qmp_timeout_ms;   /* for QEMU to answer a QMP command; 0: 30000 (inside a TCG host VM QEMU can take longer) */
	uint64_t created_ns;       /* the report's "created" (CLOCK_REALTIME; snapbenchd: when it was submitted); 0: now */
};

/*
 * Runs spec. Returns 0 when every repetition completed, -ECANCELED when
 * cancelled, or another negative errno when the run failed (preflight,
 * knobs, or at least one repetition); err then says why. In every case
 * except an unusable run directory the report is in RUN_DIR/report.json,
 * and report_path (if not NULL, size >= 4096) gets its path.
 */
int runner_execute(const struct run_spec *spec, const struct runner_options *opts, char *report_path,
		   struct sb_error *err);
