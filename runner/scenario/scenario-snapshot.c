// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The background-snapshot scenario (seed 000): QEMU writes RAM and device
 * state to an fd while the guest runs; userfaultfd write-protects guest RAM
 * and every page QEMU saves is unprotected again, which is what reaches
 * KVM as MMU-notifier invalidations.
 *
 * spec.snapshot.max_bandwidth is applied by snapbench's own sink
 * (sink-throttle.h): QEMU writes into a pipe that a thread empties into the
 * sink at the rate. QEMU's max-bandwidth is not used for it: QEMU ignores
 * it for background snapshots (docs/running.md).
 *
 * QEMU's end is taken from its MIGRATION event, or from query-migrate's
 * status (asked at every sample for the progress figures), whichever comes
 * first: an event can be lost, the status cannot. A snapshot that stays in
 * "setup" longer than SETUP_TIMEOUT_MS fails with the likely cause.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "macro.h"
#include "migration.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "scenario.h"
#include "sink-throttle.h"
#include "vm.h"

/*
 * QEMU's max-bandwidth, always: "no limit". QEMU's default (128 MiB/s) does
 * not bind a background snapshot today, but would if a QEMU ever applied it
 * there, on top of the sink's rate.
 */
#define UNLIMITED_BANDWIDTH (1ull << 40)

/* After the sink failed, how long QEMU gets to notice (its next write fails with EPIPE) before it is cancelled. */
#define SINK_ERROR_GRACE_NS (5 * NSEC_PER_SEC)

/*
 * How long QEMU may stay in "setup". Its background snapshot leaves setup
 * once it has write-protected guest RAM with userfaultfd: the first sample
 * 100 ms after migrate already says "active" for a 256 MiB guest here.
 */
#define SETUP_TIMEOUT_MS 60000

struct snap {
	int fd;                       /* for QEMU: the sink itself, or the throttle's pipe */
	char *path;
	struct sink_throttle *throttle; /* spec.snapshot.max_bandwidth: the sink moves the bytes at the rate */
	struct sink_throttle_stats throttle_st; /* its figures, kept when it is freed */
	bool started, done, failed;
	struct migration mig;         /* QEMU's side: its status, end and error */
	uint64_t start_ns, end_ns, sink_error_ns;
	enum report_snapshot_status status;
	bool cleaned; /* snap_cleanup() ran: summarize may let go of the path */
	char error[SB_ERROR_MAX];
	int64_t bytes, pages, total_ms;
	int64_t file_bytes;
	bool kept;
};

static const char *sink_name(const struct snap *s)
{
	return s->path ? s->path : "/dev/null";
}

static int snap_prepare(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct snap *s = state;
	const struct run_spec *spec = ctx->spec;
	int k;

	s->fd = -1;
	s->bytes = s->pages = s->total_ms = s->file_bytes = -1;
	s->status = REPORT_SNAPSHOT_NOT_STARTED;
	migration_init(&s->mig, ctx->vm->qmp);
	if (spec->snapshot.sink_null) {
		s->fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (s->fd < 0)
			return sb_error_set(err, -errno, "/dev/null: %s", strerror(errno));
	} else {
		const char *dir = spec->snapshot.keep || !ctx->scratch_dir ? ctx->run_dir : ctx->scratch_dir;
		if (asprintf(&s->path, "%s/snapshot-rep%u.bin", dir, ctx->rep_index) < 0) {
			s->path = NULL;
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
		s->fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600);
		if (s->fd < 0)
			return sb_error_set(err, -errno, "snapshot file %s: %s; check the run directory (--output)", s->path,
					    strerror(errno));
	}
	if (spec->snapshot.max_bandwidth) {
		int sink = s->fd;

		s->fd = -1;
		k = sink_throttle_start(sink, spec->snapshot.max_bandwidth, &s->fd, &s->throttle);
		if (k < 0)
			return sb_error_set(err, k, "starting the snapshot's throttled sink (spec.snapshot.max_bandwidth): %s",
					    strerror(-k));
	}
	k = qmp_migrate_set_max_bandwidth(ctx->vm->qmp, (int64_t)UNLIMITED_BANDWIDTH, err);
	if (k < 0)
		return sb_error_prefix(err, "lifting QEMU's own max-bandwidth for the snapshot");
	return 0;
}

/* Set by snap_start() when QEMU refused the capability: every repetition would be refused alike. */
#define SNAP_REFUSED (-EOPNOTSUPP)

static int snap_start(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	static const struct qmp_migrate_capability caps[] = {
		{ "background-snapshot", true },
		{ "events", true },
	};
	struct snap *s = state;
	bool on = false;
	int k;

	s->start_ns = mono_ns();
	/* QEMU checks userfaultfd write-protect here; verify it took, as QEMU may fall back silently */
	k = qmp_migrate_set_capabilities(ctx->vm->qmp, caps, ARRAY_SIZE(caps), err);
	if (k >= 0) {
		k = qmp_query_migrate_capability(ctx->vm->qmp, "background-snapshot", &on, err);
		if (k >= 0 && !on)
			k = sb_error_set(err, -EOPNOTSUPP,
					 "query-migrate-capabilities says background-snapshot is off after setting it on");
	}
	if (k < 0) {
		s->status = REPORT_SNAPSHOT_FAILED;
		s->failed = true;
		snprintf(s->error, sizeof(s->error), "%s", err ? err->msg : "refused");
		if (k == -ETIMEDOUT || k == -ECONNRESET || k == -ENOTCONN)
			return sb_error_prefix(err, "setting the background-snapshot capability");
		sb_error_prefix(err,
				"QEMU refused the background snapshot (it needs userfaultfd write-protect for its user: run QEMU as root, or set the knob sysctl:vm.unprivileged_userfaultfd=1)");
		if (err)
			err->code = SNAP_REFUSED;
		return SNAP_REFUSED;
	}
	migration_started(&s->mig, mono_ns());
	k = qmp_migrate(ctx->vm->qmp,
			&(struct qmp_migrate_address){ .fd = s->fd, .fdname = "sbsnapshot", .channels = ctx->migrate_channels },
			err);
	if (k < 0) {
		s->status = REPORT_SNAPSHOT_FAILED;
		s->failed = true;
		snprintf(s->error, sizeof(s->error), "%s", err ? err->msg : "migrate failed");
		return sb_error_prefix(err, "starting the background snapshot");
	}
	s->started = true;
	s->status = REPORT_SNAPSHOT_ACTIVE;
	/* QEMU holds its own copy of the fd now */
	close(s->fd);
	s->fd = -1;
	return 0;
}

/* QEMU's migration's end, as a snapshot's status */
static enum report_snapshot_status qemu_status(const struct snap *s)
{
	switch (s->mig.end_status) {
	case QMP_MIGRATION_COMPLETED:
		return REPORT_SNAPSHOT_COMPLETED;
	case QMP_MIGRATION_CANCELLED:
		return REPORT_SNAPSHOT_CANCELLED;
	default:
		return REPORT_SNAPSHOT_FAILED;
	}
}

static void snapshot_ended(struct snap *s, enum report_snapshot_status status, uint64_t end_ns)
{
	s->done = true;
	s->failed = status != REPORT_SNAPSHOT_COMPLETED;
	s->status = status;
	s->end_ns = end_ns;
}

/*
 * Without a throttle the snapshot ends with QEMU's migration. With one it
 * ends when the sink has moved the last byte (QEMU completes once the rest
 * fits in the pipe), or fails when the sink failed: then QEMU's next write
 * fails too, and its error is added to the sink's.
 */
static void check_end(struct snap *s)
{
	struct sink_throttle_stats *ts = &s->throttle_st;

	if (s->throttle) {
		sink_throttle_stats(s->throttle, ts);
		if (ts->error < 0 && !s->sink_error_ns) {
			s->sink_error_ns = mono_ns();
			snprintf(s->error, sizeof(s->error), "%s %s: %s",
				 ts->sink_error ? "writing the snapshot to" : "reading QEMU's stream for", sink_name(s),
				 strerror(-ts->error));
		}
	}
	if (s->sink_error_ns) {
		if (s->mig.ended || mono_ns() - s->sink_error_ns > SINK_ERROR_GRACE_NS) {
			size_t len = strlen(s->error);
			if (s->mig.ended && *s->mig.error)
				snprintf(s->error + len, sizeof(s->error) - len, " (QEMU: %s)", s->mig.error);
			snapshot_ended(s, REPORT_SNAPSHOT_FAILED, s->mig.ended ? s->mig.end_ns : mono_ns());
		}
	} else if (s->mig.ended && qemu_status(s) != REPORT_SNAPSHOT_COMPLETED) {
		snprintf(s->error, sizeof(s->error), "%s", s->mig.error);
		snapshot_ended(s, qemu_status(s), s->mig.end_ns);
	} else if (s->mig.ended && !s->throttle) {
		snapshot_ended(s, REPORT_SNAPSHOT_COMPLETED, s->mig.end_ns);
	} else if (s->mig.ended && ts->ended) {
		snapshot_ended(s, REPORT_SNAPSHOT_COMPLETED, ts->end_ns > s->mig.end_ns ? ts->end_ns : s->mig.end_ns);
	}
}

static uint64_t snapshot_deadline(const struct snap *s, const struct scenario_ctx *ctx)
{
	return s->start_ns ? s->start_ns + (uint64_t)(ctx->spec->snapshot.timeout_s * 1e9) : UINT64_MAX;
}

static int snap_poll(void *state, const struct scenario_ctx *ctx, bool *done, struct sb_error *err)
{
	struct snap *s = state;
	double stuck_s;

	if (!s->done) {
		struct sb_error e2 = {};
		int k = migration_read_events(&s->mig, NULL, NULL, &e2);
		if (k < 0)
			return sb_error_set(err, k, "QMP connection lost during the snapshot: %s", e2.msg);
		check_end(s);
	}
	stuck_s = migration_setup_stuck_s(&s->mig, ctx->setup_timeout_ms ? ctx->setup_timeout_ms : SETUP_TIMEOUT_MS);
	if (!s->done && stuck_s > 0) {
		migration_cancel(&s->mig);
		snapshot_ended(s, REPORT_SNAPSHOT_FAILED, mono_ns());
		snprintf(s->error, sizeof(s->error),
			 "QEMU's snapshot was still in \"setup\" %.1f s after migrate (query-migrate), so it never started; the likely cause is userfaultfd: QEMU write-protects guest RAM with it before it saves a page, and its user may not use userfaultfd (vm.unprivileged_userfaultfd changed during the run?) or the kernel refuses write-protection for this memory; see QEMU's log in the run directory",
			 stuck_s);
	}
	*done = s->done;
	if (s->failed)
		return sb_error_set(err, -EIO, "the snapshot %s: %s",
				    s->status == REPORT_SNAPSHOT_CANCELLED ? "was cancelled" : "failed",
				    *s->error ? s->error : "QEMU gave no reason");
	if (!s->done && mono_ns() > snapshot_deadline(s, ctx)) {
		migration_cancel(&s->mig);
		snapshot_ended(s, REPORT_SNAPSHOT_FAILED, mono_ns());
		*done = true;
		snprintf(s->error, sizeof(s->error), "did not complete within %g s (spec.snapshot.timeout_s)",
			 ctx->spec->snapshot.timeout_s);
		return sb_error_set(err, -ETIMEDOUT, "the snapshot %s; raise the timeout or lower the guest's memory%s",
				    s->error, s->throttle ? " (or raise spec.snapshot.max_bandwidth)" : "");
	}
	return 0;
}

static uint64_t snap_deadline(void *state, const struct scenario_ctx *ctx)
{
	return snapshot_deadline(state, ctx);
}

static int snap_progress(void *state, const struct scenario_ctx *ctx, struct report_migration *m, double *fraction,
			 struct sb_error *err)
{
	struct snap *s = state;
	struct qmp_migration_info mi = {};
	int k;

	(void)ctx;
	k = migration_query(&s->mig, &mi, err);
	if (k < 0)
		return k;
	migration_row(&s->mig, &mi, s->mig.query_ns, m);
	if (fraction)
		*fraction = mi.ram_total > 0 ? (double)m->transferred / (double)mi.ram_total : 0;
	if (fraction && *fraction > 1)
		*fraction = 1;
	qmp_migration_info_clear(&mi);
	return 0;
}

static int snap_finish(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct snap *s = state;
	struct qmp_migration_info mi = {};
	struct stat st;
	int k;

	(void)ctx;
	k = qmp_query_migrate(s->mig.qmp, &mi, err);
	if (k < 0)
		return sb_error_prefix(err, "reading the snapshot's statistics");
	s->total_ms = mi.total_time_ms;
	s->bytes = mi.ram_transferred;
	if (mi.ram_normal >= 0 || mi.ram_duplicate >= 0)
		s->pages = (mi.ram_normal > 0 ? mi.ram_normal : 0) + (mi.ram_duplicate > 0 ? mi.ram_duplicate : 0);
	qmp_migration_info_clear(&mi);
	if (s->throttle)
		sink_throttle_stats(s->throttle, &s->throttle_st);
	if (s->path && stat(s->path, &st) == 0)
		s->file_bytes = st.st_size;
	return 0;
}

static void snap_cleanup(void *state, const struct scenario_ctx *ctx)
{
	struct snap *s = state;
	bool cancelling = false;

	s->cleaned = true;

	if (s->started && !s->mig.ended && ctx->vm && ctx->vm->qmp)
		/* stop QEMU writing before the file goes; bounded */
		cancelling = migration_cancel(&s->mig);
	if (s->throttle) {
		/* after the cancel, so that a QEMU blocked on the pipe sees EPIPE while cancelling, not as a failure */
		sink_throttle_stop(s->throttle);
		sink_throttle_stats(s->throttle, &s->throttle_st);
		sink_throttle_free(s->throttle);
		s->throttle = NULL;
	}
	if (cancelling)
		migration_wait_cancelled(&s->mig);
	if (s->started && !s->done)
		s->status = REPORT_SNAPSHOT_CANCELLED;
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	if (s->path) {
		/* a partial snapshot is of no use, and may be what filled the disk */
		if (ctx->spec->snapshot.keep && s->status == REPORT_SNAPSHOT_COMPLETED)
			s->kept = true;
		else
			unlink(s->path);
	}
}

static void snap_summarize(void *state, const struct scenario_ctx *ctx, struct report_rep *rep)
{
	struct snap *s = state;
	struct report_snapshot *o = &rep->snapshot;

	o->status = s->status;
	o->sink_null = ctx->spec->snapshot.sink_null;
	if (s->started) {
		o->started_s = (double)(s->start_ns - ctx->rep_start_ns) / 1e9;
		if (s->status == REPORT_SNAPSHOT_COMPLETED && s->throttle_st.rate)
			/* QEMU completes while the pipe still holds the tail: time it to the sink's last byte */
			o->duration_s = (double)(s->end_ns - s->mig.migrate_ns) / 1e9;
		else if (s->status == REPORT_SNAPSHOT_COMPLETED)
			o->duration_s = s->total_ms > 0 ? (double)s->total_ms / 1e3
							: (double)(s->mig.end_ns - s->start_ns) / 1e9;
	}
	o->bytes = s->bytes;
	o->pages = s->pages;
	o->file_bytes = s->file_bytes;
	o->kept = s->kept;
	o->throttle_rate = s->throttle_st.rate;
	o->throttle_burst = s->throttle_st.burst;
	o->throttle_bytes = s->throttle_st.rate ? (int64_t)s->throttle_st.bytes : -1;
	o->throttle_waited_s = (double)s->throttle_st.waited_ns / 1e9;
	free(o->path);
	o->path = s->kept && s->path ? strdup(s->path) : NULL;
	free(o->error);
	o->error = *s->error ? strdup(s->error) : NULL;
	if (s->cleaned) {
		/* the last call; earlier ones (at the snapshot's start, for the report on disk) keep the path */
		free(s->path);
		s->path = NULL;
	}
}

static void snap_host_needs(const struct run_spec *spec, struct scenario_needs *n)
{
	(void)spec;
	n->background_snapshot = true;
	n->snapshot_file = true;
	n->userfaultfd = "background snapshots need userfaultfd write-protect";
}

const struct scenario_ops scenario_background_snapshot = {
	.name = "background-snapshot",
	.window = REPORT_WINDOW_SNAPSHOT,
	.state_size = sizeof(struct snap),
	.prepare = snap_prepare,
	.start = snap_start,
	.poll = snap_poll,
	.progress = snap_progress,
	.finish = snap_finish,
	.summarize = snap_summarize,
	.cleanup = snap_cleanup,
	.deadline = snap_deadline,
	.host_needs = snap_host_needs,
};
