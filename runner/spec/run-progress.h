/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a run is, as the run engine reports it to its progress callback
 * (runner.h) many times a second, and its one JSON codec: every place the
 * progress travels encodes and decodes it here, the run engine inside a
 * host VM on its port (libexec/hostvm-run/, runner/hostvm-rep/hostvm-rep.c),
 * snapbenchd's worker on its pipe and the daemon to its clients (protocol.md), and
 * `snapbench run --json`. A header of its own, without the engine, so that
 * those who pass it on need not link the engine.
 *
 *   {"rep": 1, "reps": 6, "arm": "base", "step": "snapshot", "elapsed_s": 41.2,
 *    "rep_elapsed_s": 9.1, "fraction": 0.31, "pf_per_s": 120.5, "tlb_per_s": 3.0,
 *    "invalidations_per_s": 812.0, "guest_ops_per_s": 1.2e6, "sample_window": "snapshot",
 *    "snapshot_fraction": 0.4, "waiting_for": null, "waiting_s": null, "placement": null}
 *
 * Rates and snapshot_fraction are null when not measured; the rates are of
 * the latest sample, taken in sample_window (at a step's start still the
 * previous window's, which the CLI does not show as the step's: it waits for
 * sample_window to be the step; null before the repetition's first).
 * placement is one line saying where the guest runs when that is not this
 * host's KVM (a host VM because /dev/kvm is missing, or TCG), else null;
 * the CLI prints it once. Decoding keeps the known fields with their types
 * and bounds, so a confused sender cannot feed a reader junk.
 */
#pragma once

#include <math.h>

struct json_object;

/* The headline rates of a run's latest sample, per second; NAN: not measured. */
struct run_rates {
	double pf_per_s, tlb_per_s, invalidations_per_s, guest_ops_per_s;
};
#define RUN_RATES_NONE ((struct run_rates){ NAN, NAN, NAN, NAN })

struct runner_progress {
	unsigned rep;          /* 0-based index of the current repetition */
	unsigned reps;         /* total repetitions of the run */
	const char *arm;       /* label of the current repetition's arm */
	const char *step;      /* "preflight", "knobs" (waiting for another run's knobs), "vm-start", "guest", "warmup", "pre", "snapshot" or "migration" (the scenario's window), "post", "stop", "done" */
	double elapsed_s;      /* since the run started */
	double rep_elapsed_s;  /* since the repetition started */
	double fraction;       /* 0..1 of the whole run (planned windows; the snapshot counted as its timeout/10) */
	struct run_rates rates; /* the latest sample's */
	/* the window that sample was taken in ("warmup", "pre", "snapshot", "migration", "post"): a step's
	 * first callbacks still carry the previous window's last sample; NULL before the
	 * repetition's first sample */
	const char *sample_window;
	double snapshot_fraction; /* 0..1 during the scenario's window (snapshot: transferred / total; dirty-log: of iterate_s), else NAN */
	/* QEMU has not answered this QMP command (e.g. "query-stats") for waiting_s seconds; else NULL, NAN */
	const char *waiting_for;
	double waiting_s;
	/* where the guest runs when that is not this host's KVM (runner/preflight/placement.h): one line, set from preflight on; else NULL */
	const char *placement;
};

/* The longest progress line a reader takes. */
#define RUN_PROGRESS_MAX_LINE 4096
#define RUN_PROGRESS_NAME_MAX 64       /* arm, step, sample_window, waiting_for */
#define RUN_PROGRESS_PLACEMENT_MAX 512

/* A decoded progress: p's strings point into the buffers. */
struct run_progress_buf {
	struct runner_progress p;
	char arm[RUN_PROGRESS_NAME_MAX + 1], step[RUN_PROGRESS_NAME_MAX + 1];
	char sample_window[RUN_PROGRESS_NAME_MAX + 1], waiting_for[RUN_PROGRESS_NAME_MAX + 1];
	char placement[RUN_PROGRESS_PLACEMENT_MAX + 1];
};

/* p as a JSON object, every field present (new reference; NULL when out of memory). */
struct json_object *run_progress_to_json(const struct runner_progress *p);

/*
 * The known fields of in with their types and bounds into out; a missing,
 * mistyped or out-of-bounds field reads as not known (0, NULL or NAN).
 * -EINVAL when in is not an object.
 */
int run_progress_from_json(struct json_object *in, struct run_progress_buf *out);

/* run_progress_from_json() then run_progress_to_json(): what a reader passes on (new reference, or NULL). */
struct json_object *run_progress_sanitize(struct json_object *in);
