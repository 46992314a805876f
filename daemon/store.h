/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The results store: one run directory per run under STATE_DIR/runs/, laid
 * out as reports/run-dir.h says (the layout `snapbench compare` and
 * docs/service.md rely on): report.json, spec.json (the validated spec the
 * worker executes), worker.log (the worker's stdout and stderr), and the
 * run engine's qemu-TAG.log and qemu.pid.
 *
 * store.c: the directories, reports and logs; store-index.c: the summary
 * index; store-end.c: ending runs.
 *
 * A queued run already has its directory, its spec and a report in state
 * "queued", so a run exists in one place from submission on. Reports are
 * read with the reports/ reader; the store keeps a small index (one summary
 * per run, refreshed when report.json changes) so list does not reparse
 * every report every time.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "report.h"

struct json_object;
struct store;

/* snapbenchd's state directory unless --state-dir says otherwise; its runs are in STATE_DIR/runs */
#define STORE_DEFAULT_STATE_DIR "/var/lib/snapbench"

/* Opens (creating runs/ 0755 if missing) the store under state_dir. */
int store_open(const char *state_dir, struct store **ret, struct sb_error *err);

/*
 * Opens the run directories under runs_dir to read them without a daemon
 * (snapbench show, list and logs when none answers): nothing is created;
 * -ENOENT/-ENOTDIR when runs_dir is not a directory.
 */
int store_open_runs(const char *runs_dir, struct store **ret, struct sb_error *err);
void store_free(struct store *s);
static inline void store_freep(struct store **s)
{
	store_free(*s);
}

const char *store_state_dir(const struct store *s);
const char *store_runs_dir(const struct store *s);

/* runs/<id> into buf; -EINVAL when id is not a run id, -ENAMETOOLONG. */
int store_run_dir(const struct store *s, const char *id, char *buf, size_t len);

/*
 * A new run: a fresh id, its directory, spec.json (spec_json as given) and
 * report.json in state "queued" with the spec. id gets the new id.
 */
int store_create_run(struct store *s, struct json_object *spec_json, char id[static REPORT_ID_MAX],
		     struct sb_error *err);

/* Reads runs/<id>/report.json with report_read(). -ENOENT: no such run. */
int store_read_report(struct store *s, const char *id, struct json_object **ret, struct sb_error *err);

/*
 * A run's summary (docs/protocol.md "run summary"): id, state, scenario,
 * description, labels, created/started/finished, error, repetitions, and
 * the headline medians of each arm. From the index; refreshed if the report
 * changed. *ret is a new reference. -ENOENT: no such run.
 */
int store_summary(struct store *s, const char *id, struct json_object **ret, struct sb_error *err);

/* The summary of a report already read (a new reference). */
struct json_object *store_summary_from_report(struct json_object *report);

struct store_filter {
	const char *label;     /* an arm with this label; NULL: any */
	const char *scenario;  /* NULL: any */
	int state;             /* enum report_state, -1: any */
	unsigned long long limit; /* the newest N that match; 0: all */
};

/* Summaries of the runs that match, oldest first (ids sort by creation time). */
int store_list(struct store *s, const struct store_filter *f, struct json_object **ret, struct sb_error *err);

/* Ids of every run in a given state, oldest first (for the queue's reconciliation). */
int store_ids_in_state(struct store *s, enum report_state state, char (**ret)[REPORT_ID_MAX], size_t *n,
		       struct sb_error *err);

/*
 * Ends a run that its worker did not end: sets the report's state (failed
 * or cancelled) with error {phase, message}, marks repetitions still
 * "running" the same way (their partial timelines stay), recounts each arm's
 * failed repetitions and sets "finished". A report already in a final state
 * is left alone, except that with STORE_END_OVERRIDE_CANCELLED a cancelled
 * one (and its cancelled repetitions) is changed too. Returns 1 when it
 * changed the report, 0 when not.
 */
#define STORE_END_OVERRIDE_CANCELLED 1u
int store_end_run(const char *run_dir, enum report_state state, const char *phase, const char *message,
		  unsigned flags, struct sb_error *err);

/* The same on a report object in memory. */
int store_end_report(struct json_object *report, enum report_state state, const char *phase,
		     const char *message, unsigned flags);

/*
 * A run cut off because snapbenchd went away (killed, crashed, host reboot):
 * failed, phase "interrupted", a cancelled state overridden (the worker
 * cancels its run when the daemon dies; that was no user's decision).
 */
#define STORE_INTERRUPTED_PHASE "interrupted"
int store_end_run_interrupted(const char *run_dir, struct sb_error *err);

/*
 * The tail of a run's logs: worker.log then qemu-*.log in name order, each
 * {"name", "bytes", "truncated", "text"} with at most max_bytes of text per
 * file (the end of the file; bytes that are not UTF-8 shown as '?').
 */
int store_logs(struct store *s, const char *id, size_t max_bytes, struct json_object **ret, struct sb_error *err);
/* max_bytes when a reader does not ask for another (op logs, snapbench logs) */
#define STORE_LOGS_DEFAULT_BYTES (64u << 10)

/* Removes "timeline" from each repetition of a report (what show sends unless asked). */
void store_strip_timelines(struct json_object *report);
