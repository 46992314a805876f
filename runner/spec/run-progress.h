/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a run is, as the run engine reports it to its progress callback
 * (runner.h) many times a second. A header of its own, without the engine,
 * because those who pass it on (snapbenchd's worker on its pipe, the CLI as
 * JSON lines) encode it with the wire protocol's progress_to_json()
 * (protocol/progress.h), and the protocol knows nothing of the engine.
 */
#pragma once

struct runner_progress {
	unsigned rep;          /* 0-based index of the current repetition */
	unsigned reps;         /* total repetitions of the run */
	const char *arm;       /* label of the current repetition's arm */
	const char *step;      /* "preflight", "knobs" (waiting for another run's knobs), "vm-start", "guest", "warmup", "pre", "snapshot" or "migration" (the scenario's window), "post", "stop", "done" */
	double elapsed_s;      /* since the run started */
	double rep_elapsed_s;  /* since the repetition started */
	double fraction;       /* 0..1 of the whole run (planned windows; the snapshot counted as its timeout/10) */
	/* the latest sample, per second; NAN when not measured */
	double pf_per_s, tlb_per_s, invalidations_per_s, guest_ops_per_s;
	/* the window that sample was taken in ("warmup", "pre", "snapshot", "migration", "post"): a step's
	 * first callbacks still carry the previous window's last sample; NULL before the
	 * repetition's first sample */
	const char *sample_window;
	double snapshot_fraction; /* 0..1 during the scenario's window (snapshot: transferred / total; dirty-log: of iterate_s), else NAN */
	/* QEMU has not answered this QMP command (e.g. "query-stats") for waiting_s seconds; else NULL, NAN */
	const char *waiting_for;
	double waiting_s;
	/* where the guest runs when that is not this host's KVM (runner/placement.h): one line, set from preflight on; else NULL */
	const char *placement;
};
