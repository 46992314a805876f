/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One repetition, as a table of named phases that both kinds of repetition
 * fill in: the local one (runner.c: a VM on this host) and the one in a
 * host VM (hostvm-rep.h: the arm's kernel booted, the run engine inside).
 * rep_phases_run() runs them in this order:
 *
 *   prepare    the repetition's record (report, paths); a failure here
 *              ends the repetition at once: nothing was started
 *   boot       the VM up and ready to measure
 *   windows    the measurement
 *   summarize  what was measured, into the report
 *   teardown   always once prepare succeeded, also after a failure (then k
 *              < 0 and failed names the phase that failed): the repetition
 *              marked failed or cancelled, everything it started stopped
 *   again      (optional) after a failure and its teardown: true when the
 *              repetition gets another attempt from prepare (err cleared)
 *
 * The same shape as scenario_ops (scenario.h): the runner owns the order,
 * each kind owns its steps.
 */
#pragma once

#include <stdbool.h>

#include "error.h"

enum rep_phase {
	REP_PHASE_NONE, /* teardown's failed when nothing failed (a failed prepare gets no teardown) */
	REP_PHASE_BOOT,
	REP_PHASE_WINDOWS,
	REP_PHASE_SUMMARIZE,
};

struct rep_phases {
	int (*prepare)(void *rep, struct sb_error *err);
	int (*boot)(void *rep, struct sb_error *err);
	int (*windows)(void *rep, struct sb_error *err);
	int (*summarize)(void *rep, struct sb_error *err);
	void (*teardown)(void *rep, int k, enum rep_phase failed, const struct sb_error *err);
	bool (*again)(void *rep, int k, struct sb_error *err);
};

/* 0 when every phase succeeded; else the failing phase's negative errno, with err (after teardown, and again). */
int rep_phases_run(const struct rep_phases *phases, void *rep, struct sb_error *err);
