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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bpf-source.h"
#include "clock.h"
#include "drain.h"
#include "json-util.h"
#include "macro.h"
#include "migrate-dest.h"
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
	bool failed, qemu_ended, cont_needed, cleaned;
	bool bpf_on_dest;  /* the probes count the destination's QEMU now ... */
	bool bpf_used;     /* ... or did */
	bool dest_stopped; /* by us: its exit is not news */
	char bpf_error[256];
	enum qmp_migration_status qemu_status, query_status;
	uint64_t migrate_ns, postcopy_ns, switchover_ns, fault_ns, end_ns, query_ns;
	unsigned expected, reported;
	double pass_ns;
	uint64_t pages, bytes, mismatches, first_mismatch;
	uint64_t touch_hist[GUEST_FAULT_HIST_BUCKETS]; /* the vCPUs' first-touch histograms, summed */
	uint64_t touch_tsc_hz;                          /* the guest's TSC rate, from its first FAULT */
	int64_t requests;
	int64_t dest_pf0, dest_pf;  /* the destination's KVM pf_taken (query-stats, vCPUs summed) at the pass's start; over it (< 0: not read) */
	uint64_t chunk;
	char status[32];
	char error[SB_ERROR_MAX];
	char dest_exit[512];
	char *dest_log;
	int dest_pid;
};

static uint64_t timeout_ns(const struct scenario_ctx *ctx)
{
	return (uint64_t)(ctx->spec->postcopy.timeout_s * 1e9);
}

static void fail(struct postcopy *s, const char *fmt, ...) _printf_(2, 3);
static void fail(struct postcopy *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return;
	s->failed = true;
	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
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
		snprintf(s->error, sizeof(s->error), "the source QEMU refused postcopy: %.900s", err->msg);
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
		snprintf(s->error, sizeof(s->error), "%s", err->msg);
		return k;
	}
	s->dest_pid = s->dest->vm->pid;
	s->dest_log = s->dest->vm->log_path ? strdup(s->dest->vm->log_path) : NULL;
	/* the destination checks userfaultfd when it gets postcopy-ram: a refusal shows here */
	k = qmp_migrate_set_capabilities(s->dest->vm->qmp, caps, n_caps, err);
	if (k < 0) {
		sb_error_prefix(err, "postcopy refused: the migration's destination QEMU (pid %d) refused postcopy-ram%s", s->dest_pid,
				spec->postcopy.preempt ? " or postcopy-preempt" : "");
		snprintf(s->error, sizeof(s->error),
			 "%.700s (postcopy needs userfaultfd in the destination, also for the faults KVM takes: run QEMU as root or set the knob sysctl:vm.unprivileged_userfaultfd=1)",
			 err->msg);
		return sb_error_set(err, k, "%s", s->error);
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
		fail(s, "%s", err->msg);
		return k;
	}
	s->migrate_ns = mono_ns();
	k = migrate_dest_migrate(s->dest, ctx->vm->qmp, err);
	if (k < 0) {
		fail(s, "%s", err->msg);
		return sb_error_prefix(err, "starting the migration");
	}
	s->phase = PHASE_PRECOPY;
	snprintf(s->status, sizeof(s->status), "setup");
	return 0;
}

static const char *dest_state(struct postcopy *s)
{
	return migrate_dest_note_exit(s->dest, s->dest_exit, sizeof(s->dest_exit));
}

/* query-migrate's error-desc; QEMU 7.2 leaves some refusals (postcopy-preempt over an fd) to its log only */
static void fetch_error(const struct scenario_ctx *ctx, char *buf, size_t len)
{
	struct qmp_migration_info mi = {};

	buf[0] = '\0';
	if (qmp_query_migrate(ctx->vm->qmp, &mi, NULL) >= 0 && mi.error_desc)
		snprintf(buf, len, "%s", mi.error_desc);
	qmp_migration_info_clear(&mi);
	if (!buf[0] && ctx->vm) {
		char tail[512];

		vm_log_tail(ctx->vm, tail, sizeof(tail));
		if (tail[0])
			snprintf(buf, len, "the source QEMU's log says: %s", tail);
	}
}

static void note_status(struct postcopy *s, enum qmp_migration_status st, const char *name, uint64_t when)
{
	snprintf(s->status, sizeof(s->status), "%s", name);
	if (s->qemu_ended)
		return;
	if (st != QMP_MIGRATION_COMPLETED && st != QMP_MIGRATION_FAILED && st != QMP_MIGRATION_CANCELLED)
		return;
	s->qemu_ended = true;
	s->qemu_status = st;
	s->end_ns = when;
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

/* The source's MIGRATION events: its status, and "active" starts the switch to postcopy. */
static int read_events(struct postcopy *s, const struct scenario_ctx *ctx, struct sb_error *err)
{
	while (!s->qemu_ended) {
		_cleanup_qmp_event_ struct qmp_event *e = NULL;
		struct json_object *st;
		enum qmp_migration_status status;
		int k = qmp_wait_event(ctx->vm->qmp, "MIGRATION", 0, &e, NULL);

		if (k == -ETIMEDOUT)
			return 0;
		if (k < 0)
			return sb_error_set(err, k, "QMP connection to the source lost during the migration");
		if (!e->data || !json_object_object_get_ex(e->data, "status", &st))
			continue;
		status = qmp_migration_status_from_string(json_object_get_string(st));
		note_status(s, status, json_object_get_string(st), e->recv_mono_ns);
		if (s->phase == PHASE_PRECOPY && status == QMP_MIGRATION_ACTIVE) {
			k = qmp_migrate_start_postcopy(ctx->vm->qmp, err);
			if (k < 0) {
				fail(s, "migrate-start-postcopy was refused: %s", err->msg);
				return k;
			}
			s->postcopy_ns = mono_ns();
			s->phase = PHASE_SWITCHING;
			retarget_dest(s, ctx);
		}
	}
	return 0;
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
		fail(s, "QMP connection to the migration's destination QEMU (pid %d) lost before the switch-over", s->dest_pid);
		return sb_error_set(err, k, "%s", s->error);
	}
	s->switchover_ns = e->recv_mono_ns;
	s->dest_pf0 = dest_pf_taken(s);
	if (send(s->dest->vm->control_fd, &cmd, 1, MSG_NOSIGNAL) != 1) {
		fail(s, "cannot ask the destination's guest for its pass (its control socket): %s", strerror(errno));
		return sb_error_set(err, -EIO, "%s", s->error);
	}
	s->fault_ns = mono_ns();
	s->phase = PHASE_FAULTING;
	return 0;
}

/* The destination's telemetry: FAULT records (and LOG errors); its SAMPLEs, without a HELLO, are skipped. */
static void read_dest_telemetry(struct postcopy *s)
{
	uint8_t buf[8192];
	bool eof = false;

	for (;;) {
		size_t n = drain_take(s->dest->vm->telemetry, buf, sizeof(buf), &eof), off = 0;

		if (!n)
			break;
		while (off < n) {
			off += guest_decoder_feed(s->dec, buf + off, n - off);
			for (;;) {
				const struct guest_record *rec;
				struct sb_error e = {};
				int k = guest_decoder_next(s->dec, &rec, &e);

				if (k == 0)
					break;
				if (k < 0)
					continue; /* a SAMPLE before HELLO: expected on this stream */
				if (rec->type == GUEST_RECORD_LOG && rec->log.level == GUEST_LOG_ERROR)
					fail(s, "the destination's guest: %s", rec->log.text);
				if (rec->type != GUEST_RECORD_FAULT)
					continue;
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
		}
	}
}

static void query(struct postcopy *s, const struct scenario_ctx *ctx, struct report_migration *m)
{
	struct qmp_migration_info mi = {};
	uint64_t now;

	if (qmp_query_migrate(ctx->vm->qmp, &mi, NULL) < 0)
		return;
	now = mono_ns();
	s->query_status = mi.status;
	s->query_ns = now;
	note_status(s, mi.status, mi.status_name, now);
	if (mi.ram_postcopy_requests >= 0)
		s->requests = mi.ram_postcopy_requests;
	if (m) {
		memset(m, 0, sizeof(*m));
		snprintf(m->status, sizeof(m->status), "%s", mi.status_name);
		m->transferred = mi.ram_transferred > 0 ? (uint64_t)mi.ram_transferred : 0;
		m->remaining = mi.ram_remaining > 0 ? (uint64_t)mi.ram_remaining : 0;
		m->dirty_pages_rate = -1;
	}
	qmp_migration_info_clear(&mi);
}

static void check_end(struct postcopy *s, const struct scenario_ctx *ctx)
{
	char why[SB_ERROR_MAX - 128];

	if (!s->qemu_ended || s->failed)
		return;
	if (s->qemu_status == QMP_MIGRATION_FAILED) {
		fetch_error(ctx, why, sizeof(why));
		/* a destination that was killed broke the stream before it could be reaped */
		migrate_dest_note_exit_wait(s->dest, s->dest_exit, sizeof(s->dest_exit), DEST_EXIT_WAIT_MS);
		fail(s, "the migration failed after %.1f s: %s%s%s", (double)(s->end_ns - s->migrate_ns) / 1e9,
		     *why ? why : "QEMU gave no reason", *s->dest_exit ? "; the destination QEMU " : "", s->dest_exit);
	} else if (s->qemu_status == QMP_MIGRATION_CANCELLED) {
		fail(s, "the migration was cancelled after %.1f s, by someone else", (double)(s->end_ns - s->migrate_ns) / 1e9);
	} else if (s->phase == PHASE_PRECOPY) {
		fail(s, "the migration completed after %.1f s before it could switch to postcopy: QEMU did not report \"active\"",
		     (double)(s->end_ns - s->migrate_ns) / 1e9);
	}
}

static int pc_poll(void *state, const struct scenario_ctx *ctx, bool *done, struct sb_error *err)
{
	struct postcopy *s = state;
	uint64_t setup_ns = (uint64_t)(ctx->setup_timeout_ms ? ctx->setup_timeout_ms : SETUP_TIMEOUT_MS) * NSEC_PER_MSEC;
	uint64_t now;
	int k;

	*done = false;
	if (!s->failed && s->phase != PHASE_DONE) {
		k = read_events(s, ctx, err);
		if (k < 0) {
			fail(s, "%s", err->msg);
			return k;
		}
		check_end(s, ctx);
	}
	if (!s->failed && s->phase == PHASE_SWITCHING) {
		k = wait_switchover(s, err);
		if (k < 0)
			return k;
	}
	if (!s->failed && s->phase >= PHASE_SWITCHING)
		read_dest_telemetry(s);
	if (!s->failed && s->phase < PHASE_DONE && dest_state(s)[0]) {
		char why[256];
		fetch_error(ctx, why, sizeof(why));
		fail(s, "the migration's destination QEMU (pid %d) exited during the migration: %s%s%s", s->dest_pid,
		     s->dest_exit, *why ? "; the source said: " : "", why);
	}
	now = mono_ns();
	if (!s->failed && s->phase == PHASE_PRECOPY && s->query_status == QMP_MIGRATION_SETUP &&
	    s->query_ns > s->migrate_ns && s->query_ns - s->migrate_ns > setup_ns)
		fail(s, "the migration was still in \"setup\" %.1f s after migrate (query-migrate); see QEMU's logs in the run directory",
		     (double)(s->query_ns - s->migrate_ns) / 1e9);
	if (!s->failed && s->phase != PHASE_DONE && now > s->migrate_ns + timeout_ns(ctx))
		fail(s, "the migration and the destination's pass did not end within spec.postcopy.timeout_s (%g s): the source says %s, %u of %u fault-linear vCPUs reported%s",
		     ctx->spec->postcopy.timeout_s, s->status, s->reported, s->expected,
		     s->phase < PHASE_FAULTING ? ", the destination's guest never resumed" : "");
	if (!s->failed && s->phase == PHASE_FAULTING && s->reported >= s->expected && s->qemu_ended &&
	    s->qemu_status == QMP_MIGRATION_COMPLETED) {
		query(s, ctx, NULL); /* the final postcopy-requests */
		s->phase = PHASE_DONE;
		s->cont_needed = true;
	}
	if (s->failed) {
		*done = true;
		return sb_error_set(err, -EIO, "%s", s->error);
	}
	*done = s->phase == PHASE_DONE;
	return 0;
}

static uint64_t pc_deadline(void *state, const struct scenario_ctx *ctx)
{
	struct postcopy *s = state;

	return s->migrate_ns ? s->migrate_ns + timeout_ns(ctx) + 10 * NSEC_PER_SEC : UINT64_MAX;
}

static int pc_progress(void *state, const struct scenario_ctx *ctx, struct report_migration *m, double *fraction,
		       struct sb_error *err)
{
	struct postcopy *s = state;

	(void)err;
	query(s, ctx, m);
	if (fraction)
		*fraction = s->expected ? (double)s->reported / (double)s->expected : 0;
	return 0;
}

static int pc_finish(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct postcopy *s = state;
	int k;

	dest_state(s);
	retarget_source(s, ctx);
	migrate_dest_stop(s->dest, DEST_STOP_MS);
	s->dest_stopped = true;
	if (s->cont_needed) {
		k = qmp_cont(ctx->vm->qmp, err);
		if (k < 0)
			return sb_error_prefix(err, "resuming the source after the postcopy migration (cont)");
		s->cont_needed = false;
	}
	return 0;
}

static void pc_cleanup(void *state, const struct scenario_ctx *ctx)
{
	struct postcopy *s = state;

	s->cleaned = true;
	retarget_source(s, ctx);
	if (s->migrate_ns && !s->qemu_ended && ctx->vm && ctx->vm->qmp && !ctx->vm->exited) {
		enum qmp_migration_status last;
		/* a migration in postcopy cannot be cancelled (the destination owns the guest): stopping both ends it */
		if (qmp_migrate_cancel(ctx->vm->qmp, NULL) >= 0)
			qmp_wait_migration(ctx->vm->qmp, QMP_MIGRATION_CANCELLED, 2000, &last, NULL);
	}
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
	snprintf(m->status, sizeof(m->status), "%s", s->migrate_ns ? s->status : "");
	m->started_s = since(s->migrate_ns, ctx);
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
	m->error = *s->error ? strdup(s->error) : NULL;
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
};
