/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Run progress as it travels from the worker to the daemon (one JSON object
 * per line on a pipe) and on to clients (status, watch events):
 *
 *   {"rep": 1, "reps": 6, "arm": "base", "step": "snapshot", "elapsed_s": 41.2,
 *    "rep_elapsed_s": 9.1, "fraction": 0.31, "pf_per_s": 120.5, "tlb_per_s": 3.0,
 *    "invalidations_per_s": 812.0, "guest_ops_per_s": 1.2e6, "sample_window": "snapshot",
 *    "snapshot_fraction": 0.4, "placement": null}
 *
 * Rates and snapshot_fraction are null when not measured; the rates are of
 * the latest sample, taken in sample_window (at a step's start still the
 * previous window's, which the CLI does not show as the step's: it waits for
 * sample_window to be the step; null before the repetition's first).
 * placement is one line saying where the guest runs when that is not this
 * host's KVM (a host VM because /dev/kvm is missing, or TCG), else null;
 * the CLI prints it once. The daemon does not
 * pass a worker's line on as it is: progress_sanitize() keeps the known
 * fields with their types, so a confused worker cannot feed clients junk.
 */
#pragma once

#include "error.h"

struct json_object;
struct runner_progress;

#define PROGRESS_MAX_LINE 4096
#define PROGRESS_PLACEMENT_MAX 512

/* The progress as a JSON object (new reference, NULL on ENOMEM). */
struct json_object *progress_to_json(const struct runner_progress *p);

/* The known fields of a progress object with the right types (new reference), or NULL. */
struct json_object *progress_sanitize(struct json_object *in);
