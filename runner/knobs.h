/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Knobs: sysctls (/proc/sys/...) and module parameters
 * (/sys/module/M/parameters/P) set for a run and restored after it, also
 * after a crash.
 *
 * knobs_begin() takes the state directory's lock, reads the original value
 * of every knob any arm sets, and writes them to a journal (atomically, and
 * fsync'ed) BEFORE changing anything. knobs_set_arm() then sets one arm's
 * values (knobs the arm does not set go back to their original), and
 * knobs_end() restores every original and removes the journal. If the
 * process dies in between, the journal stays behind, and the next
 * knobs_recover() on the same state directory (snapbench run and snapbenchd
 * call it at start-up) restores it. The lock (flock, released by the kernel
 * when the process dies) keeps two runs from fighting over knobs and keeps
 * recovery away from a run that is still alive.
 */
#pragma once

#include <stdbool.h>

#include "error.h"
#include "spec.h"

#define KNOBS_JOURNAL "knobs.journal"
#define KNOBS_LOCK "knobs.lock"

struct knobs_session;

/*
 * root: where /proc and /sys are ("/" or NULL for the real ones; tests pass a
 * directory). all: every knob name any arm sets (values ignored). Fails
 * without changing anything when a knob does not exist or cannot be read.
 */
int knobs_begin(const char *state_dir, const char *root, const struct spec_knobs *all,
		struct knobs_session **ret, struct sb_error *err);

/* Sets the arm's knobs; the session's other knobs return to their originals. */
int knobs_set_arm(struct knobs_session *s, const struct spec_knobs *arm, struct sb_error *err);

/*
 * Restores every original value, removes the journal, releases the lock and
 * frees s (also on error: the journal then stays for knobs_recover()).
 * NULL is fine.
 */
int knobs_end(struct knobs_session *s, struct sb_error *err);

/*
 * At start-up: if state_dir holds a journal and no live run holds the lock,
 * restore the journaled values and remove the journal. Returns the number
 * of knobs restored (0: nothing to do), or -errno. -EBUSY: a live run holds
 * the lock.
 */
int knobs_recover(const char *state_dir, const char *root, struct sb_error *err);

/* The file that backs a knob name under root ("/proc/sys/kernel/numa_balancing"). */
int knobs_path(const char *root, const char *name, char *buf, size_t len);
