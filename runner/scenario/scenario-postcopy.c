// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The postcopy-restore scenario (seed 003: the time to fault a region in
 * after a restore, by the chunk size faults are served in): a postcopy
 * migration to a destination QEMU on this host (migrate-dest.h), then one
 * linear pass of the destination's guest over its region.
 *
 * The source's guest runs fault-linear (guest/kernel/workload.c): it
 * populated its region (address | 1 in each 4 KiB page) and waits. Both
 * QEMUs get postcopy-ram (and postcopy-preempt when spec.postcopy.preempt);
 * migrate, then migrate-start-postcopy as soon as the source says "active".
 * At the switch-over the source stops and the destination runs the guest
 * with almost none of its RAM: each first touch of a page faults into
 * QEMU's userfaultfd handler, which asks the source for it (a postcopy
 * request) while the source also pushes the rest in the background. When
 * the destination's guest has resumed (its RESUME event) the scenario sends
 * it GUEST_CMD_FAULT: the guest touches every page of its region once, in
 * order, and sends a FAULT record (the pass's time, the pages that did not
 * hold what the source wrote, its touches' latency histogram) on the
 * destination's telemetry stream, which the scenario reads itself (the
 * sampler reads the source's). The vCPUs' histograms are summed.
 *
 * The window ends once every fault-linear vCPU reported and the migration
 * completed; then the destination is stopped and the source resumed (cont)
 * for the post window. The chunk is the page size postcopy places: 4 KiB
 * for anonymous RAM, the huge page size for hugetlb-backed RAM.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bpf-source.h"
#include "clock.h"
#include "drain.h"
#include "failure.h"
#include "json-util.h"
#include "macro.h"
#include "migrate-dest.h"
#include "params.h"
#include "migration.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "scenario.h"
#include "telemetry.h"
#include "vm.h"

#define SETUP_TIMEOUT_MS 60000
#define DEST_EXIT_WAIT_MS 2000 /* after a failed migration: time for a dying destination to be reaped */
#define DEST_STOP_MS 3000
#define RESUME_WAIT_MS 40 /* per poll: the pass should start soon after the switch-over */

enum phase {
	PHASE_IDLE,      /* before migrate */
	PHASE_PRECOPY,   /* migrate sent; migrate-start-postcopy once active */
	PHASE_SWITCHING, /* migrate-start-postcopy sent; waiting for the destination's guest to resume */
	PHASE_FAULTING,  /* GUEST_CMD_FAULT sent; waiting for the passes and the migration's end */
	PHASE_DONE,
};

struct postcopy {
	struct migrate_dest *dest;
	struct guest_decoder *dec;
	enum phase phase;
	struct scenario_failure fail; /* the first, for the window's error */
	bool cleaned;
	struct migration mig; /* the source's side: status, end, figures */
	bool bpf_on_dest;  /* the probes count the destination's QEMU now ... */
	bool bpf_used;     /* ... or did */
	bool dest_stopped; /* by us: its exit is not news */
	char bpf_error[256];
	uint64_t postcopy_ns, switchover_ns, fault_ns;
	unsigned expected, reported;
	double pass_ns;
	uint64_t pages, bytes, mismatches, first_mismatch;
	uint64_t touch_hist[GUEST_FAULT_HIST_BUCKETS]; /* the vCPUs' first-touch histograms, summed */
	uint64_t touch_tsc_hz;                          /* the guest's TSC rate, from its first FAULT */
	int64_t requests;
	int64_t dest_pf0, dest_pf;  /* the destination's KVM pf_taken (query-stats, vCPUs summed) at the pass's start; over it (< 0: not read) */
	uint64_t chunk;
	char dest_exit[512];
	char *dest_log;
	int dest_pid;
};

static uint64_t timeout_ns(const struct scenario_ctx *ctx)
{
	return (uint64_t)(ctx->spec->postcopy.timeout_s * 1e9);
}

/* The vCPUs that run fault-linear, as the guest assigns roles (guest/kernel/workload.c). */
static unsigned fault_linear_vcpus(const struct run_spec *spec)
{
	unsigned n = 0;

	for (unsigned i = 0; i < spec->vm.vcpus && i < SPEC_MAX_VCPUS; i++) {
		const char *pat = spec->guest.vcpu_pattern[i] ? spec->guest.vcpu_pattern[i] : spec->guest.pattern;

		if ((int)i != spec->guest.probe_vcpu && pat && !strcmp(pat, "fault-linear"))
			n++;
	}
	return n;
}

static int pc_prepare(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	const struct run_spec *spec = ctx->spec;
	struct postcopy *s = state;
	struct qmp_migrate_capability caps[] = {
		{ "events", true },
		{ "postcopy-ram", true },
		{ "postcopy-preempt", true },
	};
	size_t n_caps = spec->postcopy.preempt ? 3 : 2;
	int k;

	migration_init(&s->mig, ctx->vm->qmp);
	s->pass_ns = -1;
	s->dest_pf0 = s->dest_pf = -1;
	s->requests = -1;
	s->chunk = spec->vm.backing == SPEC_BACKING_HUGETLB ? (spec->vm.hugepage_size ? spec->vm.hugepage_size : 2u << 20)
							    : 4096;
	s->expected = fault_linear_vcpus(spec);
	if (!ctx->vm_cfg)
		return sb_error_set(err, -EINVAL, "postcopy-restore: the runner gave no VM configuration for the destination");
	if (!s->expected)
		return sb_error_set(err, -EINVAL,
				    "postcopy-restore: no vCPU runs fault-linear (the probe's vCPU does not); set spec.guest.pattern \"fault-linear\"");
	if (guest_decoder_new(&s->dec) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	k = qmp_migrate_set_capabilities(ctx->vm->qmp, caps, n_caps, err);
	if (k < 0) {
		snprintf(s->fail.error, sizeof(s->fail.error), "the source QEMU refused postcopy: %.900s", err->msg);
		return sb_error_prefix(err, "setting the source's migration capabilities (events, postcopy-ram%s)",
				       spec->postcopy.preempt ? ", postcopy-preempt" : "");
	}
	if (spec->postcopy.background_bandwidth) {
		_cleanup_json_ struct json_object *p = json_object_new_object();

		if (!p || json_object_object_add(p, "max-postcopy-bandwidth",
						 json_object_new_int64((int64_t)spec->postcopy.background_bandwidth)) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		k = qmp_migrate_set_parameters(ctx->vm->qmp, p, err);
		if (k < 0)
			return sb_error_prefix(err, "setting QEMU's max-postcopy-bandwidth (spec.postcopy.background_bandwidth)");
	}
	k = migrate_dest_start(ctx->vm_cfg, ctx->dest_qemu_binary, NULL, 0, &s->dest, err);
	if (k < 0) {
		snprintf(s->fail.error, sizeof(s->fail.error), "%s", err->msg);
		return k;
	}
	s->dest_pid = s->dest->vm->pid;
	s->dest_log = s->dest->vm->log_path ? strdup(s->dest->vm->log_path) : NULL;
	/* the destination checks userfaultfd when it gets postcopy-ram: a refusal shows here */
	k = qmp_migrate_set_capabilities(s->dest->vm->qmp, caps, n_caps, err);
	if (k < 0) {
		sb_error_prefix(err, "postcopy refused: the migration's destination QEMU (pid %d) refused postcopy-ram%s", s->dest_pid,
				spec->postcopy.preempt ? " or postcopy-preempt" : "");
		snprintf(s->fail.error, sizeof(s->fail.error),
			 "%.700s (postcopy needs userfaultfd in the destination, also for the faults KVM takes: run QEMU as root or set the knob sysctl:vm.unprivileged_userfaultfd=1)",
			 err->msg);
		return sb_error_set(err, k, "%s", s->fail.error);
	}
	return 0;
}

static int pc_start(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct postcopy *s = state;
	int k;

	/* postcopy-preempt opens a second connection: not over one fd */
	struct migrate_dest_channel how = { .unix_socket = ctx->spec->postcopy.preempt, .channels = ctx->migrate_channels };

	k = migrate_dest_listen(s->dest, &how, err);
	if (k < 0) {
		scenario_fail(&s->fail, "%s", err->msg);
		return k;
	}
	migration_started(&s->mig, mono_ns());
	k = migrate_dest_migrate(s->dest, ctx->vm->qmp, err);
	if (k < 0) {
		scenario_fail(&s->fail, "%s", err->msg);
		return sb_error_prefix(err, "starting the migration");
	}
	s->phase = PHASE_PRECOPY;
	return 0;
}

static const char *dest_state(struct postcopy *s)
{
	return migrate_dest_note_exit(s->dest, s->dest_exit, sizeof(s->dest_exit));
}

/* QEMU's reason (error, when given); QEMU 7.2 leaves some refusals (postcopy-preempt over an fd) to its log only */
static void source_error(const struct scenario_ctx *ctx, const char *error, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)len - 1, error);
	if (!buf[0] && ctx->vm) {
		char tail[512];

		vm_log_tail(ctx->vm, tail, sizeof(tail));
		if (tail[0])
			snprintf(buf, len, "the source QEMU's log says: %.*s", (int)len, tail);
	}
}

/*
 * From the switch-over the guest runs, and faults, in the destination: the
 * probes count its QEMU until finish() points them back at the source.
 */
static void retarget_dest(struct postcopy *s, const struct scenario_ctx *ctx)
{
	struct sb_error e = {};

	if (!ctx->bpf)
		return;
	if (bpf_source_retarget(ctx->bpf, s->dest_pid, &e) < 0) {
		snprintf(s->bpf_error, sizeof(s->bpf_error), "%.250s", e.msg);
		return;
	}
	s->bpf_on_dest = s->bpf_used = true;
}

static void retarget_source(struct postcopy *s, const struct scenario_ctx *ctx)
{
	if (s->bpf_on_dest && ctx->bpf && ctx->vm)
		bpf_source_retarget(ctx->bpf, ctx->vm->pid, NULL);
	s->bpf_on_dest = false;
}

struct source_events {
	struct postcopy *s;
	const struct scenario_ctx *ctx;
};

/* The source's MIGRATION event said st: "active" starts the switch to postcopy. */
static int on_source_status(void *userdata, enum qmp_migration_status st, struct sb_error *err)
{
	struct source_events *ev = userdata;
	struct postcopy *s = ev->s;
	int k;

	if (s->phase != PHASE_PRECOPY || st != QMP_MIGRATION_ACTIVE)
		return 0;
	k = qmp_migrate_start_postcopy(ev->ctx->vm->qmp, err);
	if (k < 0) {
		scenario_fail(&s->fail, "migrate-start-postcopy was refused: %s", err->msg);
		return k;
	}
	s->postcopy_ns = mono_ns();
	s->phase = PHASE_SWITCHING;
	retarget_dest(s, ev->ctx);
	return 0;
}

static int read_events(struct postcopy *s, const struct scenario_ctx *ctx, struct sb_error *err)
{
	int k = migration_read_events(&s->mig, on_source_status, &(struct source_events){ s, ctx }, err);

	if (k < 0 && !s->fail.failed)
		return sb_error_set(err, k, "QMP connection to the source lost during the migration");
	return k;
}

/* The destination's KVM pf_taken, its vCPUs summed (query-stats), or -1 where it cannot be read. */
static int64_t dest_pf_taken(struct postcopy *s)
{
	static const char *const names[] = { "pf_taken", NULL };
	struct qmp_vcpu_stats vs = {};
	int64_t v = -1;

	if (qmp_query_stats_vcpu(s->dest->vm->qmp, names, &vs, NULL) >= 0 && qmp_stat_set_get(&vs.sum, "pf_taken", &v) < 0)
		v = -1;
	qmp_vcpu_stats_clear(&vs);
	return v;
}

/* The destination's guest runs: start its pass. */
static int wait_switchover(struct postcopy *s, struct sb_error *err)
{
	_cleanup_qmp_event_ struct qmp_event *e = NULL;
	const char cmd = GUEST_CMD_FAULT;
	int k;

	k = qmp_wait_event(s->dest->vm->qmp, "RESUME", RESUME_WAIT_MS, &e, NULL);
	if (k == -ETIMEDOUT)
		return 0;
	if (k < 0) {
		scenario_fail(&s->fail, "QMP connection to the migration's destination QEMU (pid %d) lost before the switch-over", s->dest_pid);
		return sb_error_set(err, k, "%s", s->fail.error);
	}
	s->switchover_ns = e->recv_mono_ns;
	s->dest_pf0 = dest_pf_taken(s);
	if (send(s->dest->vm->control_fd, &cmd, 1, MSG_NOSIGNAL) != 1) {
		scenario_fail(&s->fail, "cannot ask the destination's guest for its pass (its control socket): %s", strerror(errno));
		return sb_error_set(err, -EIO, "%s", s->fail.error);
	}
	s->fault_ns = mono_ns();
	s->phase = PHASE_FAULTING;
	return 0;
}

/* A record of the destination's telemetry: a FAULT (a vCPU's pass), a LOG error; the rest is the sampler's business. */
static void on_dest_record(void *userdata, const struct guest_record *rec)
{
	struct postcopy *s = userdata;

	if (rec->type == GUEST_RECORD_LOG && rec->log.level == GUEST_LOG_ERROR)
		scenario_fail(&s->fail, "the destination's guest: %s", rec->log.text);
	if (rec->type != GUEST_RECORD_FAULT)
		return;
	double ns = guest_fault_pass_ns(&rec->fault);
	if (ns > s->pass_ns)
		s->pass_ns = ns;
	s->pages += rec->fault.pages;
	s->bytes += rec->fault.bytes;
	if (rec->fault.mismatches && !s->mismatches)
		s->first_mismatch = rec->fault.first_mismatch;
	s->mismatches += rec->fault.mismatches;
	/* one guest, one TSC rate: the vCPUs' buckets add up */
	for (unsigned b = 0; b < GUEST_FAULT_HIST_BUCKETS; b++)
		s->touch_hist[b] += rec->fault.touch_hist[b];
	if (!s->touch_tsc_hz)
		s->touch_tsc_hz = rec->fault.tsc_hz;
	s->reported++;
	/* the last pass ended: the faults the destination's KVM took for it */
	if (s->reported == s->expected && s->dest_pf0 >= 0) {
		int64_t pf = dest_pf_taken(s);
		s->dest_pf = pf >= s->dest_pf0 ? pf - s->dest_pf0 : -1;
	}
}

/* The destination's telemetry: its FAULT records (and LOG errors); its SAMPLEs, without a HELLO, do not decode (no error: expected). */
static void read_dest_telemetry(struct postcopy *s)
{
	uint8_t buf[8192];
	bool eof = false;
	size_t n;

	while ((n = drain_take(s->dest->vm->telemetry, buf, sizeof(buf), &eof)))
		guest_decoder_take(s->dec, buf, n, on_dest_record, NULL, s);
}

static void query(struct postcopy *s, struct report_migration *m)
{
	struct qmp_migration_info mi = {};

	if (migration_query(&s->mig, &mi, NULL) < 0)
		return;
	if (mi.ram_postcopy_requests >= 0)
		s->requests = mi.ram_postcopy_requests;
	if (m) {
		migration_row(&s->mig, &mi, s->mig.query_ns, m);
		m->pages_per_s = 0; /* this scenario's rows have never had a rate: its report stays as it was */
	}
	qmp_migration_info_clear(&mi);
}

static void check_end(struct postcopy *s, const struct scenario_ctx *ctx)
{
	const struct migration *mig = &s->mig;
	double after_s = (double)(mig->end_ns - mig->migrate_ns) / 1e9;
	char why[SB_ERROR_MAX - 128];

	if (!mig->ended || s->fail.failed)
		return;
	if (mig->end_status == QMP_MIGRATION_FAILED) {
		source_error(ctx, mig->error, why, sizeof(why));
		/* a destination that was killed broke the stream before it could be reaped */
		migrate_dest_note_exit_wait(s->dest, s->dest_exit, sizeof(s->dest_exit), DEST_EXIT_WAIT_MS);
		scenario_fail(&s->fail, "the migration failed after %.1f s: %s%s%s", after_s, *why ? why : "QEMU gave no reason",
		     *s->dest_exit ? "; the destination QEMU " : "", s->dest_exit);
	} else if (mig->end_status == QMP_MIGRATION_CANCELLED) {
		scenario_fail(&s->fail, "the migration was cancelled after %.1f s, by someone else", after_s);
	} else if (s->phase == PHASE_PRECOPY) {
		scenario_fail(&s->fail, "the migration completed after %.1f s before it could switch to postcopy: QEMU did not report \"active\"",
		     after_s);
	}
}

static int pc_poll(void *state, const struct scenario_ctx *ctx, bool *done, struct sb_error *err)
{
	struct postcopy *s = state;
	double stuck_s;
	uint64_t now;
	int k;

	*done = false;
	if (!s->fail.failed && s->phase != PHASE_DONE) {
		k = read_events(s, ctx, err);
		if (k < 0) {
			scenario_fail(&s->fail, "%s", err->msg);
			return k;
		}
		check_end(s, ctx);
	}
	if (!s->fail.failed && s->phase == PHASE_SWITCHING) {
		k = wait_switchover(s, err);
		if (k < 0)
			return k;
	}
	if (!s->fail.failed && s->phase >= PHASE_SWITCHING)
		read_dest_telemetry(s);
	if (!s->fail.failed && s->phase < PHASE_DONE && dest_state(s)[0]) {
		char why[256], error[256];
		migration_fetch_error(&s->mig, error, sizeof(error));
		source_error(ctx, error, why, sizeof(why));
		scenario_fail(&s->fail, "the migration's destination QEMU (pid %d) exited during the migration: %s%s%s", s->dest_pid,
		     s->dest_exit, *why ? "; the source said: " : "", why);
	}
	now = mono_ns();
	stuck_s = migration_setup_stuck_s(&s->mig, ctx->setup_timeout_ms ? ctx->setup_timeout_ms : SETUP_TIMEOUT_MS);
	if (!s->fail.failed && s->phase == PHASE_PRECOPY && stuck_s > 0)
		scenario_fail(&s->fail, "the migration was still in \"setup\" %.1f s after migrate (query-migrate); see QEMU's logs in the run directory",
		     stuck_s);
	if (!s->fail.failed && s->phase != PHASE_DONE && now > s->mig.migrate_ns + timeout_ns(ctx))
		scenario_fail(&s->fail, "the migration and the destination's pass did not end within spec.postcopy.timeout_s (%g s): the source says %s, %u of %u fault-linear vCPUs reported%s",
		     ctx->spec->postcopy.timeout_s, s->mig.status, s->reported, s->expected,
		     s->phase < PHASE_FAULTING ? ", the destination's guest never resumed" : "");
	if (!s->fail.failed && s->phase == PHASE_FAULTING && s->reported >= s->expected && s->mig.ended &&
	    s->mig.end_status == QMP_MIGRATION_COMPLETED) {
		query(s, NULL); /* the final postcopy-requests */
		s->phase = PHASE_DONE;
		s->mig.resume_needed = true;
	}
	if (s->fail.failed) {
		*done = true;
		return sb_error_set(err, -EIO, "%s", s->fail.error);
	}
	*done = s->phase == PHASE_DONE;
	return 0;
}

static uint64_t pc_deadline(void *state, const struct scenario_ctx *ctx)
{
	struct postcopy *s = state;

	return s->mig.migrate_ns ? s->mig.migrate_ns + timeout_ns(ctx) + 10 * NSEC_PER_SEC : UINT64_MAX;
}

static int pc_progress(void *state, const struct scenario_ctx *ctx, struct report_migration *m, double *fraction,
		       struct sb_error *err)
{
	struct postcopy *s = state;

	(void)ctx;
	(void)err;
	query(s, m);
	if (fraction)
		*fraction = s->expected ? (double)s->reported / (double)s->expected : 0;
	return 0;
}

static int pc_finish(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct postcopy *s = state;

	dest_state(s);
	retarget_source(s, ctx);
	migrate_dest_stop(s->dest, DEST_STOP_MS);
	s->dest_stopped = true;
	return migration_resume_source(&s->mig, "postcopy", err);
}

static void pc_cleanup(void *state, const struct scenario_ctx *ctx)
{
	struct postcopy *s = state;

	s->cleaned = true;
	retarget_source(s, ctx);
	/* a migration in postcopy cannot be cancelled (the destination owns the guest): stopping both ends it */
	if (ctx->vm && ctx->vm->qmp && !ctx->vm->exited)
		migration_stop(&s->mig);
	if (s->dest) {
		if (s->dest->vm && s->dest->vm->telemetry && s->dec)
			read_dest_telemetry(s);
		if (!s->dest_stopped)
			dest_state(s);
		migrate_dest_stop(s->dest, DEST_STOP_MS);
		migrate_dest_free(s->dest);
		s->dest = NULL;
	}
	guest_decoder_free(s->dec);
	s->dec = NULL;
}

static double since(uint64_t ns, const struct scenario_ctx *ctx)
{
	return ns ? (double)(ns - ctx->rep_start_ns) / 1e9 : -1;
}

/* The summed first-touch histogram in ns: its non-empty buckets, in order. */
static void summarize_touches(const struct postcopy *s, struct report_postcopy *m)
{
	_Static_assert(GUEST_FAULT_HIST_BUCKETS <= REPORT_TOUCH_BUCKETS_MAX, "the report holds every bucket");

	m->n_touch = 0;
	for (unsigned b = 0; b < GUEST_FAULT_HIST_BUCKETS; b++) {
		if (!s->touch_hist[b] ||
		    guest_fault_hist_ns(s->touch_tsc_hz, b, &m->touch_lower_ns[m->n_touch], &m->touch_width_ns[m->n_touch]) < 0)
			continue;
		m->touch_count[m->n_touch++] = s->touch_hist[b];
	}
}

static void pc_summarize(void *state, const struct scenario_ctx *ctx, struct report_rep *rep)
{
	static const char *const backings[] = { "anon", "anon-nothp", "hugetlb", "memfd" };
	struct postcopy *s = state;
	struct report_postcopy *m = &rep->postcopy;
	const struct run_spec *spec = ctx->spec;

	m->set = true;
	snprintf(m->status, sizeof(m->status), "%s", s->mig.migrate_ns ? s->mig.status : "");
	m->started_s = since(s->mig.migrate_ns, ctx);
	m->switchover_s = since(s->switchover_ns, ctx);
	m->pass_started_s = since(s->fault_ns, ctx);
	snprintf(m->access, sizeof(m->access), "%s", spec->postcopy.access == SPEC_FAULT_WRITE ? "write" : "read");
	m->preempt = spec->postcopy.preempt;
	snprintf(m->backing, sizeof(m->backing), "%s", backings[spec->vm.backing]);
	m->chunk_bytes = s->chunk;
	m->pass_ns = s->reported ? s->pass_ns : -1;
	m->pass_vcpus = s->reported;
	m->dest_pf_taken = s->dest_pf;
	m->pass_pages = s->pages;
	m->pass_bytes = s->bytes;
	m->mismatches = s->mismatches;
	m->first_mismatch = s->first_mismatch;
	summarize_touches(s, m);
	m->postcopy_requests = s->requests;
	m->probes_on_destination = s->bpf_used;
	free(m->probes_error);
	m->probes_error = *s->bpf_error ? strdup(s->bpf_error) : NULL;
	migrate_dest_record(&m->dest, s->dest_pid, s->dest_exit, &s->dest_log, s->cleaned);
	free(m->error);
	m->error = *s->fail.error ? strdup(s->fail.error) : NULL;
}

/* the switch-over and the destination's pass */
static double pc_planned_s(const struct run_spec *spec)
{
	(void)spec;
	return 5;
}

/* the source's guest writes its pass rather than reading it */
static void pc_guest_params(const struct run_spec *spec, struct guest_params *p)
{
	p->fault_write = spec->postcopy.access == SPEC_FAULT_WRITE;
}

static void pc_host_needs(const struct run_spec *spec, struct scenario_needs *n)
{
	n->postcopy_ram = true;
	n->postcopy_preempt = spec->postcopy.preempt;
	n->userfaultfd = "postcopy needs userfaultfd in the migration's destination, for the faults KVM takes too";
}

const struct scenario_ops scenario_postcopy_restore = {
	.name = "postcopy-restore",
	.window = REPORT_WINDOW_MIGRATION,
	.state_size = sizeof(struct postcopy),
	.prepare = pc_prepare,
	.start = pc_start,
	.poll = pc_poll,
	.progress = pc_progress,
	.finish = pc_finish,
	.summarize = pc_summarize,
	.cleanup = pc_cleanup,
	.deadline = pc_deadline,
	.planned_s = pc_planned_s,
	.guest_params = pc_guest_params,
	.host_needs = pc_host_needs,
};
