// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dirty-log scenario (seed 001: the time KVM spends clearing the dirty
 * log per migration pass, and the remote TLB flushes write-protection
 * causes): a precopy live migration to a destination QEMU on this host
 * (migrate-dest.h), held in its iterative phase for spec.dirty_log.iterate_s,
 * then cancelled or completed as the spec says.
 *
 * Held: QEMU's max-bandwidth is spec.dirty_log.max_bandwidth and its
 * downtime-limit spec.dirty_log.downtime_limit_ms (1 ms by default). QEMU
 * syncs the dirty log (a new pass, dirty-sync-count + 1, a MIGRATION_PASS
 * event) when what is left to send would fit in the downtime at the
 * measured bandwidth, and completes only when the dirty set found by that
 * sync fits too: with 1 ms, a guest that dirties more than a few pages per
 * pass never converges. One that does converge before iterate_s fails the
 * repetition (its passes would not be the ones asked for).
 *
 * Completion "cancel": migrate_cancel; the source runs on and the
 * destination, its stream cut, exits. "complete": max-bandwidth unlimited
 * and the downtime-limit raised, so the next sync converges; the source is
 * then paused (postmigrate), and is resumed (cont) once the destination has
 * been stopped, so the post window measures the same guest with dirty
 * tracking off again.
 *
 * At each MIGRATION_PASS event the scenario asks the runner for a sample
 * (sample_now), so timeline rows end at pass boundaries; the report derives
 * the passes from the rows (reports/iterations.c).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "failure.h"
#include "json-util.h"
#include "macro.h"
#include "migrate-dest.h"
#include "migration.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "scenario.h"
#include "vm.h"

/* How long the migration may stay in "setup" (it leaves it within ~0.1 s here). */
#define SETUP_TIMEOUT_MS 60000
/* After the iterations: how long the cancel or the completion may take. */
#define END_TIMEOUT_NS (60 * NSEC_PER_SEC)
/* "complete": QEMU's limits that let the next sync converge */
#define UNLIMITED_BANDWIDTH (1ll << 40)
#define COMPLETE_DOWNTIME_MS 300000
#define DEST_EXIT_WAIT_MS 2000 /* after a failed migration: time for a dying destination to be reaped */
#define DEST_STOP_MS 3000

enum phase {
	PHASE_IDLE,      /* before migrate */
	PHASE_ITERATING, /* held in its passes until iterate_s */
	PHASE_ENDING,    /* cancel sent, or limits lifted for completion */
	PHASE_DONE,
};

struct dirty {
	struct migrate_dest *dest;
	enum phase phase;
	struct scenario_failure fail; /* the first, for the window's error */
	struct migration mig; /* QEMU's side: status, passes, end, figures */
	uint64_t end_action_ns;
	uint64_t page_size;
	char dest_exit[512];
	char *dest_log;
	int dest_pid;
	bool cleaned;
};

static uint64_t iterate_ns(const struct scenario_ctx *ctx)
{
	return (uint64_t)(ctx->spec->dirty_log.iterate_s * 1e9);
}

static int set_limits(struct qmp_client *qmp, int64_t bandwidth, int64_t downtime_ms, struct sb_error *err)
{
	_cleanup_json_ struct json_object *p = json_object_new_object();

	if (!p || json_object_object_add(p, "max-bandwidth", json_object_new_int64(bandwidth)) < 0 ||
	    json_object_object_add(p, "downtime-limit", json_object_new_int64(downtime_ms)) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	return qmp_migrate_set_parameters(qmp, p, err);
}

static int dirty_prepare(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	static const struct qmp_migrate_capability caps[] = { { "events", true } };
	const struct run_spec *spec = ctx->spec;
	struct dirty *s = state;
	int k;

	migration_init(&s->mig, ctx->vm->qmp);
	s->mig.passes = true;
	if (!ctx->vm_cfg)
		return sb_error_set(err, -EINVAL, "dirty-log: the runner gave no VM configuration for the destination");
	k = qmp_migrate_set_capabilities(ctx->vm->qmp, caps, ARRAY_SIZE(caps), err);
	if (k < 0)
		return sb_error_prefix(err, "setting the migration's capabilities (events)");
	k = set_limits(ctx->vm->qmp, (int64_t)spec->dirty_log.max_bandwidth, spec->dirty_log.downtime_limit_ms, err);
	if (k < 0)
		return sb_error_prefix(err, "setting QEMU's max-bandwidth and downtime-limit (spec.dirty_log)");
	/* now, not at the migration: an idle destination costs nothing, and one that cannot start fails early */
	k = migrate_dest_start(ctx->vm_cfg, ctx->dest_qemu_binary, caps, ARRAY_SIZE(caps), &s->dest, err);
	if (k < 0) {
		snprintf(s->fail.error, sizeof(s->fail.error), "%s", err ? err->msg : "the destination did not start");
		return k;
	}
	s->dest_pid = s->dest->vm->pid;
	s->dest_log = s->dest->vm->log_path ? strdup(s->dest->vm->log_path) : NULL;
	return 0;
}

static int dirty_start(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct dirty *s = state;
	int k;

	struct migrate_dest_channel how = { .channels = ctx->migrate_channels };

	k = migrate_dest_listen(s->dest, &how, err);
	if (k < 0) {
		scenario_fail(&s->fail, "%s", err ? err->msg : "migrate-incoming failed");
		return k;
	}
	migration_started(&s->mig, mono_ns());
	k = migrate_dest_migrate(s->dest, ctx->vm->qmp, err);
	if (k < 0) {
		scenario_fail(&s->fail, "%s", err ? err->msg : "migrate failed");
		return sb_error_prefix(err, "starting the migration");
	}
	s->phase = PHASE_ITERATING;
	return 0;
}

static const char *dest_state(struct dirty *s)
{
	return migrate_dest_note_exit(s->dest, s->dest_exit, sizeof(s->dest_exit));
}

/* The iterations are over: cancel, or lift the limits so that the next sync converges. */
static int end_iterations(struct dirty *s, const struct scenario_ctx *ctx, struct sb_error *err)
{
	int k;

	s->end_action_ns = mono_ns();
	s->phase = PHASE_ENDING;
	if (ctx->spec->dirty_log.completion == SPEC_COMPLETION_CANCEL) {
		k = qmp_migrate_cancel(ctx->vm->qmp, err);
		return k < 0 ? sb_error_prefix(err, "cancelling the migration after spec.dirty_log.iterate_s") : 0;
	}
	k = set_limits(ctx->vm->qmp, UNLIMITED_BANDWIDTH, COMPLETE_DOWNTIME_MS, err);
	return k < 0 ? sb_error_prefix(err, "lifting the migration's limits for its completion") : 0;
}

/* The migration reached a terminal status: was it the one asked for, and when? */
static void check_end(struct dirty *s, const struct scenario_ctx *ctx)
{
	bool cancel = ctx->spec->dirty_log.completion == SPEC_COMPLETION_CANCEL;
	const struct migration *mig = &s->mig;
	double after_s = (double)(mig->end_ns - mig->migrate_ns) / 1e9;

	if (!mig->ended)
		return;
	if (mig->end_status == QMP_MIGRATION_FAILED) {
		/* a destination that was killed broke the stream before it could be reaped */
		migrate_dest_note_exit_wait(s->dest, s->dest_exit, sizeof(s->dest_exit), DEST_EXIT_WAIT_MS);
		scenario_fail(&s->fail, "the migration failed after %.1f s: %.*s%s%s", after_s, SB_ERROR_MAX - 128,
		     *mig->error ? mig->error : "QEMU gave no reason", *s->dest_exit ? "; the destination QEMU " : "",
		     *s->dest_exit ? s->dest_exit : "");
	} else if (s->phase == PHASE_ITERATING && mig->end_status == QMP_MIGRATION_COMPLETED) {
		scenario_fail(&s->fail, "the migration converged after %.1f s, before spec.dirty_log.iterate_s (%g s): the guest dirtied too little for its passes to go on; lower spec.dirty_log.max_bandwidth or give the guest a writing pattern over a larger region",
		     after_s, ctx->spec->dirty_log.iterate_s);
	} else if (s->phase == PHASE_ITERATING) {
		scenario_fail(&s->fail, "the migration was cancelled after %.1f s, before spec.dirty_log.iterate_s, by someone else",
		     after_s);
	} else if (cancel != (mig->end_status == QMP_MIGRATION_CANCELLED)) {
		scenario_fail(&s->fail, "the migration ended %s where spec.dirty_log.completion asked to %s it",
		     qmp_migration_status_to_string(mig->end_status), cancel ? "cancel" : "complete");
	} else if (!cancel) {
		s->mig.resume_needed = true;
	}
	s->phase = PHASE_DONE;
}

static uint64_t deadline_of(const struct dirty *s, const struct scenario_ctx *ctx)
{
	if (!s->mig.migrate_ns)
		return UINT64_MAX;
	if (s->phase == PHASE_ENDING || s->phase == PHASE_DONE)
		return s->end_action_ns + END_TIMEOUT_NS;
	return s->mig.migrate_ns + iterate_ns(ctx) + END_TIMEOUT_NS;
}

static int dirty_poll(void *state, const struct scenario_ctx *ctx, bool *done, struct sb_error *err)
{
	struct dirty *s = state;
	double stuck_s = migration_setup_stuck_s(&s->mig, ctx->setup_timeout_ms ? ctx->setup_timeout_ms : SETUP_TIMEOUT_MS);
	int k;

	*done = false;
	if (s->phase != PHASE_DONE && !s->fail.failed) {
		k = migration_read_events(&s->mig, NULL, NULL, NULL);
		if (k < 0)
			return sb_error_set(err, k, "QMP connection lost during the migration");
		check_end(s, ctx);
	}
	if (!s->fail.failed && s->phase == PHASE_ITERATING && dest_state(s)[0]) {
		/* the source notices at its next write; say what the destination did meanwhile */
		char why[256];
		migration_fetch_error(&s->mig, why, sizeof(why));
		scenario_fail(&s->fail, "the migration's destination QEMU (pid %d) exited during the migration: %s%s%s", s->dest_pid,
		     s->dest_exit, *why ? "; the source said: " : "", why);
	}
	if (!s->fail.failed && s->phase == PHASE_ITERATING && stuck_s > 0)
		scenario_fail(&s->fail, "the migration was still in \"setup\" %.1f s after migrate (query-migrate); see QEMU's logs in the run directory",
		     stuck_s);
	if (!s->fail.failed && s->phase == PHASE_ITERATING && mono_ns() >= s->mig.migrate_ns + iterate_ns(ctx)) {
		k = end_iterations(s, ctx, err);
		if (k < 0) {
			scenario_fail(&s->fail, "%s", err->msg);
			return k;
		}
	}
	if (!s->fail.failed && s->phase == PHASE_ENDING && mono_ns() > s->end_action_ns + END_TIMEOUT_NS)
		scenario_fail(&s->fail, "the migration did not %s within %llu s of the end of its iterations (query-migrate says %s)",
		     ctx->spec->dirty_log.completion == SPEC_COMPLETION_CANCEL ? "cancel" : "complete",
		     (unsigned long long)(END_TIMEOUT_NS / NSEC_PER_SEC), s->mig.status);
	if (s->fail.failed) {
		*done = true;
		return sb_error_set(err, -EIO, "%s", s->fail.error);
	}
	*done = s->phase == PHASE_DONE;
	return 0;
}

static uint64_t dirty_deadline(void *state, const struct scenario_ctx *ctx)
{
	return deadline_of(state, ctx);
}

static bool dirty_sample_now(void *state)
{
	struct dirty *s = state;

	return migration_take_pass(&s->mig);
}

static int dirty_progress(void *state, const struct scenario_ctx *ctx, struct report_migration *m, double *fraction,
			  struct sb_error *err)
{
	struct dirty *s = state;
	struct qmp_migration_info mi = {};
	uint64_t now;
	int k;

	k = migration_query(&s->mig, &mi, err);
	if (k < 0)
		return k;
	now = s->mig.query_ns;
	migration_row(&s->mig, &mi, now, m);
	m->dirty_pages_rate = mi.ram_dirty_pages_rate >= 0 ? (double)mi.ram_dirty_pages_rate : -1;
	/* a pass's row: the sync under way, and the pages sent so far (migration_row()) */
	if (mi.ram_normal >= 0 && mi.ram_dirty_sync_count >= 0) {
		m->precopy = true;
		m->dirty_sync_count = (uint64_t)mi.ram_dirty_sync_count;
	}
	if (mi.ram_page_size > 0)
		s->page_size = (uint64_t)mi.ram_page_size;
	if (fraction) {
		*fraction = (double)(now - s->mig.migrate_ns) / (double)iterate_ns(ctx);
		if (*fraction > 1)
			*fraction = 1;
	}
	qmp_migration_info_clear(&mi);
	return 0;
}

static int dirty_finish(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct dirty *s = state;

	/* before the post window: a completed destination runs the guest too, on the same CPUs */
	dest_state(s);
	migrate_dest_stop(s->dest, DEST_STOP_MS);
	return migration_resume_source(&s->mig, "completed", err);
}

static void dirty_cleanup(void *state, const struct scenario_ctx *ctx)
{
	struct dirty *s = state;

	s->cleaned = true;
	if (ctx->vm && ctx->vm->qmp && !ctx->vm->exited)
		migration_stop(&s->mig);
	if (s->dest) {
		dest_state(s);
		migrate_dest_stop(s->dest, DEST_STOP_MS);
		migrate_dest_free(s->dest);
		s->dest = NULL;
	}
}

static void dirty_summarize(void *state, const struct scenario_ctx *ctx, struct report_rep *rep)
{
	struct dirty *s = state;
	struct report_live_migration *m = &rep->migration;
	const struct run_spec *spec = ctx->spec;

	m->set = true;
	snprintf(m->status, sizeof(m->status), "%s", s->mig.migrate_ns ? s->mig.status : "");
	m->started_s = s->mig.migrate_ns ? (double)(s->mig.migrate_ns - ctx->rep_start_ns) / 1e9 : -1;
	m->iterating_s = s->end_action_ns ? (double)(s->end_action_ns - s->mig.migrate_ns) / 1e9 : -1;
	snprintf(m->completion, sizeof(m->completion), "%s",
		 spec->dirty_log.completion == SPEC_COMPLETION_CANCEL ? "cancel" : "complete");
	snprintf(m->tracking, sizeof(m->tracking), "%s", spec->dirty_log.tracking == SPEC_DIRTY_RING ? "ring" : "bitmap");
	m->ring_size = spec->dirty_log.ring_size;
	m->max_bandwidth = spec->dirty_log.max_bandwidth;
	m->downtime_limit_ms = spec->dirty_log.downtime_limit_ms;
	m->page_size = s->page_size;
	migrate_dest_record(&m->dest, s->dest_pid, s->dest_exit, &s->dest_log, s->cleaned);
	free(m->error);
	m->error = *s->fail.error ? strdup(s->fail.error) : NULL;
}

/* held in its passes for iterate_s */
static double dirty_planned_s(const struct run_spec *spec)
{
	return spec->dirty_log.iterate_s;
}

/* the ring, when the spec tracks with it: the VM's KVM is created with it */
static void dirty_vm_config(const struct run_spec *spec, struct vm_config *cfg)
{
	cfg->dirty_ring_size = spec->dirty_log.tracking == SPEC_DIRTY_RING ? spec->dirty_log.ring_size : 0;
}

const struct scenario_ops scenario_dirty_log = {
	.name = "dirty-log",
	.window = REPORT_WINDOW_MIGRATION,
	.state_size = sizeof(struct dirty),
	.prepare = dirty_prepare,
	.start = dirty_start,
	.poll = dirty_poll,
	.progress = dirty_progress,
	.finish = dirty_finish,
	.summarize = dirty_summarize,
	.cleanup = dirty_cleanup,
	.deadline = dirty_deadline,
	.sample_now = dirty_sample_now,
	.planned_s = dirty_planned_s,
	.vm_config = dirty_vm_config,
};
