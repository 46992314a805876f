/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Typed helpers: one function per QMP command snapbench needs, named for
 * verb and object, plus waits for the events it needs. They work over any
 * transport (qmp.h), use the client's command timeout, and return the
 * errnos documented in qmp.h. On -EREMOTEIO the QMP error class and desc
 * are in err's message and in qmp_client_last_error_class()/_desc().
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qmp.h"

/* ---- query-version, query-status ---- */

int qmp_query_version(struct qmp_client *c, struct qmp_version *ret, struct sb_error *err);

struct qmp_status {
	bool running;
	char status[32];            /* RunState: "running", "paused", "postmigrate", ... */
};

int qmp_query_status(struct qmp_client *c, struct qmp_status *ret, struct sb_error *err);

/* ---- query-stats, KVM provider ---- */

/* One statistic as a number: counters and instants as-is, booleans as 0/1. */
struct qmp_stat {
	char *name;
	int64_t value;              /* u64 values above INT64_MAX are clamped to INT64_MAX */
};

/*
 * The scalar KVM stats of one target (the VM, or one vCPU). Histograms and
 * other list values (halt_wait_hist ...) are left out: their names are
 * counted in n_skipped so a caller can tell "absent" from "not a scalar".
 */
struct qmp_stat_set {
	char *qom_path;             /* the vCPU's QOM path; NULL for the VM */
	size_t n, cap;              /* stats held, room for */
	struct qmp_stat *stats;     /* in QEMU's order */
	size_t n_skipped;
};

/* Value of name in set; -ENOENT when the set has no such scalar stat. */
int qmp_stat_set_get(const struct qmp_stat_set *set, const char *name, int64_t *ret);
void qmp_stat_set_clear(struct qmp_stat_set *set);

/* Per vCPU (in QEMU's order) and summed over the vCPUs by name. */
struct qmp_vcpu_stats {
	size_t n_vcpus;
	struct qmp_stat_set *vcpus;
	struct qmp_stat_set sum;    /* each name present in any vCPU, summed; qom_path NULL */
};

void qmp_vcpu_stats_clear(struct qmp_vcpu_stats *s);

/*
 * query-stats target "vm" / "vcpu" with provider "kvm". names (NULL-ended)
 * restricts the reply to those stats, which keeps frequent samples small;
 * NULL asks for all. Needs QEMU >= 7.1 with KVM; an older QEMU answers
 * CommandNotFound (-EREMOTEIO). On failure *ret is left cleared.
 */
int qmp_query_stats_vm(struct qmp_client *c, const char *const *names, struct qmp_stat_set *ret,
		       struct sb_error *err);
int qmp_query_stats_vcpu(struct qmp_client *c, const char *const *names, struct qmp_vcpu_stats *ret,
			 struct sb_error *err);

/*
 * Both at once (qmp_execute_batch(): one wait for the two replies), as a
 * sampler takes them: vm_names and vcpu_names as above. On failure both
 * are left cleared.
 */
int qmp_query_stats_kvm(struct qmp_client *c, const char *const *vm_names, const char *const *vcpu_names,
			struct qmp_stat_set *vm, struct qmp_vcpu_stats *vcpu, struct sb_error *err);

/*
 * query-stats-schemas with provider "kvm": the names of target's ("vm" or
 * "vcpu") stats whose type is type ("cumulative", "instant", "peak", ...),
 * in QEMU's order, as a NULL-terminated string vector (common/strv.h; the
 * caller frees it, an empty one when QEMU has none of that type). Lets a
 * caller ask query-stats for the counters only, which it can take deltas
 * of. Same QEMU and KVM needs as query-stats.
 */
int qmp_query_stats_names(struct qmp_client *c, const char *target, const char *type, char ***ret,
			  struct sb_error *err);

/* ---- migration ---- */

enum qmp_migration_status {
	QMP_MIGRATION_UNKNOWN = 0,  /* a status this library does not know */
	QMP_MIGRATION_NONE,
	QMP_MIGRATION_SETUP,
	QMP_MIGRATION_CANCELLING,
	QMP_MIGRATION_CANCELLED,
	QMP_MIGRATION_ACTIVE,
	QMP_MIGRATION_POSTCOPY_ACTIVE,
	QMP_MIGRATION_POSTCOPY_PAUSED,
	QMP_MIGRATION_POSTCOPY_RECOVER,
	QMP_MIGRATION_COMPLETED,
	QMP_MIGRATION_FAILED,
	QMP_MIGRATION_COLO,
	QMP_MIGRATION_PRE_SWITCHOVER,
	QMP_MIGRATION_DEVICE,
	QMP_MIGRATION_WAIT_UNPLUG,
};

/* "setup" <-> QMP_MIGRATION_SETUP; unknown strings give QMP_MIGRATION_UNKNOWN. */
const char *qmp_migration_status_to_string(enum qmp_migration_status s);
enum qmp_migration_status qmp_migration_status_from_string(const char *s);

/* query-migrate. Fields QEMU did not report are -1 (numbers) or NULL. */
struct qmp_migration_info {
	enum qmp_migration_status status;  /* QMP_MIGRATION_NONE before the first migration */
	char status_name[32];              /* QEMU's string, also for unknown ones */
	int64_t total_time_ms;
	int64_t setup_time_ms;
	int64_t downtime_ms;
	int64_t ram_transferred;           /* bytes */
	int64_t ram_remaining;             /* bytes */
	int64_t ram_total;                 /* bytes */
	int64_t ram_duplicate;             /* pages (zero pages) */
	int64_t ram_normal;                /* pages */
	int64_t ram_pages_per_second;
	int64_t ram_dirty_sync_count;      /* dirty-log syncs so far: the precopy pass (iteration) under way */
	int64_t ram_dirty_pages_rate;      /* pages/s dirtied, as QEMU estimated it at its last sync */
	int64_t ram_postcopy_requests;     /* pages the destination asked for while in postcopy */
	int64_t ram_page_size;             /* bytes */
	char *error_desc;                  /* set when status is failed */
};

int qmp_query_migrate(struct qmp_client *c, struct qmp_migration_info *ret, struct sb_error *err);
void qmp_migration_info_clear(struct qmp_migration_info *info);

struct qmp_migrate_capability {
	const char *name;           /* "background-snapshot", "events", ... */
	bool state;
};

/* query-migrate-capabilities: *ret is the state of capability name; -ENOENT if QEMU lacks it. */
int qmp_query_migrate_capability(struct qmp_client *c, const char *name, bool *ret, struct sb_error *err);

/*
 * migrate-set-capabilities, then query-migrate-capabilities to verify that
 * each capability really has the requested state. A capability that did
 * not take gives -EOPNOTSUPP with a message naming it (for
 * background-snapshot: QEMU needs userfaultfd write-protect, which the host
 * refuses an unprivileged QEMU while vm.unprivileged_userfaultfd=0).
 */
int qmp_migrate_set_capabilities(struct qmp_client *c, const struct qmp_migrate_capability *caps, size_t n,
				 struct sb_error *err);

/* migrate-set-parameters with params (a JSON object, borrowed), e.g. {"max-bandwidth": 1048576}. */
int qmp_migrate_set_parameters(struct qmp_client *c, struct json_object *params, struct sb_error *err);

/* migrate-set-parameters max-bandwidth (bytes/s), verified with query-migrate-parameters. */
int qmp_migrate_set_max_bandwidth(struct qmp_client *c, int64_t bytes_per_second, struct sb_error *err);

/* getfd: hand fd to QEMU under fdname (SCM_RIGHTS); closefd drops it again. */
int qmp_getfd(struct qmp_client *c, int fd, const char *fdname, struct sb_error *err);
int qmp_closefd(struct qmp_client *c, const char *fdname, struct sb_error *err);

/*
 * Start a migration into fd: getfd under fdname, then migrate with uri
 * "fd:<fdname>". Never an exec: URI. QEMU keeps its own copy of fd; the
 * caller may close its copy once this returns. Returns when QEMU accepted
 * the command; wait for the end with qmp_wait_migration().
 */
int qmp_migrate_to_fd(struct qmp_client *c, int fd, const char *fdname, struct sb_error *err);

/* sizeof(sun_path): a unix socket's path is shorter */
#define QMP_UNIX_PATH_MAX 108

/*
 * Where a migration goes (or comes from): an fd handed to QEMU with getfd
 * under fdname, or, when unix_path is set, a unix socket's path, a
 * transport QEMU can open several connections over (postcopy-preempt and
 * multifd need that; an fd is one connection, which they refuse). channels
 * passes it in migrate's "channels" argument, [{"channel-type": "main",
 * "addr": {...}}] (QEMU 8.2 and later; qmp_schema_has_argument() tells),
 * instead of a "uri" ("fd:NAME", "unix:PATH").
 */
struct qmp_migrate_address {
	int fd;
	const char *fdname;
	const char *unix_path;
	bool channels;
};

/*
 * migrate, and migrate-incoming in a QEMU started with -incoming defer, to
 * a's address (getfd first for an fd; closefd again if QEMU refuses the
 * command). Return when QEMU accepted the command.
 */
int qmp_migrate(struct qmp_client *c, const struct qmp_migrate_address *a, struct sb_error *err);
int qmp_migrate_incoming(struct qmp_client *c, const struct qmp_migrate_address *a, struct sb_error *err);

int qmp_migrate_cancel(struct qmp_client *c, struct sb_error *err);

/*
 * The destination's side, in a QEMU started with -incoming defer: getfd
 * under fdname, then migrate-incoming with uri "fd:<fdname>". The caller
 * may close its copy of fd once this returns.
 */
int qmp_migrate_incoming_fd(struct qmp_client *c, int fd, const char *fdname, struct sb_error *err);

/*
 * migrate-start-postcopy: switch a migration with the postcopy-ram
 * capability (on both sides) to postcopy at its next iteration; the
 * destination then runs the guest and asks for pages as it faults.
 */
int qmp_migrate_start_postcopy(struct qmp_client *c, struct sb_error *err);

/* cont: resume the guest (also the source after a completed migration: it runs on there). */
int qmp_cont(struct qmp_client *c, struct sb_error *err);

/*
 * A background snapshot of RAM and devices into fd: sets the capabilities
 * background-snapshot and events (MIGRATION events) on, verifies them, and
 * starts migrate to fd. Returns once the snapshot has started.
 */
int qmp_snapshot_background_start(struct qmp_client *c, int fd, struct sb_error *err);

/* ---- the QMP schema ---- */

/*
 * query-qmp-schema: the array of schema entities (a few hundred KiB on
 * QEMU 10.0); the caller puts it. Ask it once and look things up in it:
 */
int qmp_query_qmp_schema(struct qmp_client *c, struct json_object **ret, struct sb_error *err);

/* Has the schema command? */
bool qmp_schema_has_command(struct json_object *schema, const char *command);

/* Does command take an argument named arg (e.g. "migrate", "channels": QEMU 8.2+)? */
bool qmp_schema_has_argument(struct json_object *schema, const char *command, const char *arg);

/*
 * query-command-line-options for option: *ret whether it takes parameter
 * ("run-with", "user": QEMU 9.1+). QEMU answers an option it lacks with an
 * error, which is returned (with *ret false).
 */
int qmp_command_line_option_has(struct qmp_client *c, const char *option, const char *parameter, bool *ret,
				struct sb_error *err);

/*
 * quit: QEMU replies and exits; a connection closed before the reply also
 * counts as success.
 */
int qmp_quit(struct qmp_client *c, struct sb_error *err);

/* ---- events ---- */

/*
 * Wait for MIGRATION events until one reports status want, taking the
 * MIGRATION events before it from the queue. A terminal status that is not
 * want ends the wait early: failed gives -EIO (with query-migrate's
 * error-desc in the message), cancelled -ECANCELED, completed -EINVAL.
 * last (optional) gets the last status seen. Needs the "events" migration
 * capability on (qmp_snapshot_background_start() sets it).
 */
int qmp_wait_migration(struct qmp_client *c, enum qmp_migration_status want, int timeout_ms,
		       enum qmp_migration_status *last, struct sb_error *err);

/* Wait for STOP, RESUME or SHUTDOWN; *ret (optional) gets the event. */
int qmp_wait_stop(struct qmp_client *c, int timeout_ms, struct qmp_event **ret, struct sb_error *err);
int qmp_wait_resume(struct qmp_client *c, int timeout_ms, struct qmp_event **ret, struct sb_error *err);
int qmp_wait_shutdown(struct qmp_client *c, int timeout_ms, struct qmp_event **ret, struct sb_error *err);
