/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Knobs: sysctls (/proc/sys/...), module parameters
 * (/sys/module/M/parameters/P) and debugfs files (/sys/kernel/debug/PATH,
 * such as the NUMA-balancing scan periods of 5.13+ kernels) set for a run
 * and restored after it, also after a crash. A file of choices ("[default]
 * performance", "none (full)") is journaled as its selected word. debugfs
 * that is not mounted on the real root is mounted on /sys/kernel/debug, as
 * the probes mount tracefs; under a test root it is an error.
 *
 * Two locks, both flock()s the kernel drops when their holder dies:
 *  - the host-wide knob lock, /run/snapbench/knobs.lock: knobs belong to
 *    the host, not to a state directory, so only one run at a time may
 *    change knobs, whatever state directory it uses
 *    (snapbench run --local with ./snapbench-runs, snapbenchd with
 *    /var/lib/snapbench, tests with temporary ones). The file holds a small
 *    record of its holder (pid, run id, state directory) for the message
 *    other runs get, and so that the next run to take the lock after a
 *    holder died restores the knobs that run left set, from the journal in
 *    its state directory, before it reads any original value;
 *  - the state directory's lock, STATE/knobs.lock, which keeps recovery of
 *    STATE/knobs.journal away from a run that is still alive.
 * The host-wide lock is always taken first.
 *
 * knobs_begin() takes both, reads the original value of every knob any arm
 * sets, and writes them to the journal (atomically, and fsync'ed) BEFORE
 * changing anything. knobs_set_arm() then sets one arm's values (knobs the
 * arm does not set go back to their original), and knobs_end() restores
 * every original, removes the journal and releases the locks. If the
 * process dies in between, the journal stays behind, and the next
 * knobs_recover() on the same state directory (snapbench run and snapbenchd
 * call it at start-up), or the next run on this host that takes the
 * host-wide lock, restores it.
 */
#pragma once

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "spec.h"

#define KNOBS_JOURNAL "knobs.journal"
#define KNOBS_LOCK "knobs.lock"
/* The host-wide lock, under the knobs' root ("/" on a real host). */
#define KNOBS_HOST_LOCK "run/snapbench/knobs.lock"

/* How long a run waits for the host-wide lock by default. */
#define KNOBS_WAIT_DEFAULT_MS (5 * 60 * 1000)

/* Who holds the host-wide lock, from its record. */
struct knobs_holder {
	pid_t pid;                   /* 0: unknown (no record, or its process has ended) */
	char run_id[64];             /* "" when the holder did not say */
	char state_dir[PATH_MAX];    /* "" when the holder keeps no journal */
};

struct knobs_options {
	const char *root;            /* where /proc, /sys and /run are: NULL or "/" on a real host; tests pass a directory
	                              * (with proc/self/mounts for debugfs knobs) */
	const char *run_id;          /* goes into the host-wide lock's record; may be NULL */
	int wait_ms;                 /* the host-wide lock is held by another run: wait this long; 0: do not wait */
	volatile sig_atomic_t *cancel; /* non-zero stops a wait (-ECANCELED); may be NULL */
	/* called once when a wait for the host-wide lock begins; may be NULL */
	void (*waiting)(const struct knobs_holder *holder, void *userdata);
	void *userdata;
};

struct knobs_session;

/*
 * o: the root, who we are and how long to wait (NULL: the real root, no
 * wait). all: every knob name any arm sets (values ignored). Fails without
 * changing anything when a knob does not exist or cannot be read. -EBUSY:
 * another run holds the host-wide lock (the message names it);
 * -ECANCELED: *o->cancel was set during the wait. With no knob at all
 * nothing is locked.
 */
int knobs_begin(const char *state_dir, const struct knobs_options *o, const struct spec_knobs *all,
		struct knobs_session **ret, struct sb_error *err);

/* Sets the arm's knobs; the session's other knobs return to their originals. */
int knobs_set_arm(struct knobs_session *s, const struct spec_knobs *arm, struct sb_error *err);

/*
 * Restores every original value, removes the journal, releases the locks and
 * frees s (also on error: the journal then stays for knobs_recover(), and
 * the host-wide record names it for the next run). NULL is fine.
 */
int knobs_end(struct knobs_session *s, struct sb_error *err);

/*
 * At start-up, never waiting: if state_dir holds a journal and no live run
 * holds the locks, restore the journaled values and remove the journal; and
 * if the host-wide record names a run that died holding it, restore that
 * run's journal too (best effort: without the rights to, nothing happens).
 * Returns the number of knobs restored (0: nothing to do), or -errno.
 * -EBUSY: a live run holds a lock state_dir's journal needs (the message
 * names it).
 */
int knobs_recover(const char *state_dir, const char *root, struct sb_error *err);

/*
 * The host-wide lock alone, for programs that change knobs without a
 * journal (tests that write a sysctl themselves): the same wait, the same
 * recovery of a dead holder's journal, a record naming o->run_id. *ret_fd
 * holds the lock until knobs_host_unlock().
 */
int knobs_host_lock(const struct knobs_options *o, int *ret_fd, struct sb_error *err);
void knobs_host_unlock(int fd);

/* Reads the host-wide lock's record without taking the lock: 1 with a record, 0 without, or -errno. */
int knobs_host_holder(const char *root, struct knobs_holder *ret);

/* The file that backs a knob name under root ("/proc/sys/kernel/numa_balancing", "/sys/kernel/debug/sched/..."). */
int knobs_path(const char *root, const char *name, char *buf, size_t len);
