// SPDX-License-Identifier: GPL-2.0-or-later
/* A repetition on this host: local_rep's phases (rep.h, local-rep.h). */
#include "local-rep.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf-source.h"
#include "clock.h"
#include "drain.h"
#include "guest-pin.h"
#include "macro.h"
#include "params.h"
#include "qmp.h"
#include "rep.h"
#include "sampler.h"
#include "scenario.h"
#include "selfcheck.h"
#include "strv.h"
#include "vm.h"

#define GUEST_HELLO_TIMEOUT_MS 120000
/*
 * How often the run loop wakes between samples: in the scenario's window to
 * poll its action (a snapshot's end); in the others to notice a cancel, an
 * exited QEMU or the guest's stream ending. The guest's telemetry does not
 * wake it: the drain thread buffers it and each sample decodes it (its
 * reads woke the loop ~30 times a second).
 */
#define WINDOW_POLL_MS 50
#define IDLE_POLL_MS 250

/* one repetition in flight: the state of local_rep's phases (rep.h) */
struct rep_run {
	struct local_rep_run *run;
	struct report_rep *rep;
	unsigned index;
	size_t arm;
	bool fatal; /* it failed in a way the next repetition would repeat */
	char *append; /* the guest's command line */
	char tag[32], name[96];
	struct vm_config cfg; /* how the VM was started (the scenario keeps a pointer) */
	struct vm *vm;
	struct bpf_source *bpf;
	struct sampler *sampler;
	const struct scenario_ops *scenario;
	void *scenario_state;
	struct scenario_ctx sctx;
	uint64_t start_ns;
	char step[32];
	bool scenario_prepared;
	double snapshot_fraction;
	struct guest_pin *pin;  /* the arm pins the guest RAM (arms[].pin) */
};

static bool cancelled(const struct local_rep_run *run)
{
	return run->cancel && *run->cancel;
}

static void write_report(struct local_rep_run *run)
{
	run->write_report(run->userdata);
}

static bool write_due(struct local_rep_run *run)
{
	return run->write_due(run->userdata);
}

/* The scenario's fraction while its window is the step, else NAN. */
static double step_fraction(const struct rep_run *rr)
{
	return rr->scenario && !strcmp(rr->step, report_window_to_string(rr->scenario->window)) ? rr->snapshot_fraction
												: NAN;
}

/* The repetition's step in the run's progress; sample_window: the window of a sample just taken. */
static void progress(struct rep_run *rr, const struct run_rates *rates, const char *sample_window)
{
	rr->run->progress(rr->run->userdata, &(struct local_rep_progress){ .step = rr->step, .rep_start_ns = rr->start_ns,
								      .sample_window = sample_window,
								      .snapshot_fraction = step_fraction(rr),
								      .rates = rates });
}

/* QEMU has not answered a command for a second or more: the progress says so (qmp_wait_hook). */
static void qmp_waiting(void *userdata, const char *command, double waited_s)
{
	struct rep_run *rr = userdata;

	rr->run->progress(rr->run->userdata, &(struct local_rep_progress){ .step = rr->step, .rep_start_ns = rr->start_ns,
								      .snapshot_fraction = step_fraction(rr),
								      .waiting_for = command, .waiting_s = waited_s });
}

static int pattern_value(const char *s)
{
	int p = GUEST_PATTERN_WRITE64;

	guest_pattern_from_string(s, &p);
	return p;
}

static int guest_append(const struct run_spec *spec, char **ret, struct sb_error *err)
{
	static const char *const clocks[] = { "auto", "kvmclock", "cpuid", "pit" };
	struct guest_params p;

	guest_params_init(&p, spec->vm.vcpus);
	p.ram_bytes = spec->vm.memory;
	p.region_bytes = spec->guest.region_bytes;
	p.region_percent = spec->guest.region_percent ? spec->guest.region_percent : 50;
	p.page_size = spec->guest.page_size == SPEC_PAGE_2M ? 2u << 20 : 4096;
	p.pattern = pattern_value(spec->guest.pattern);
	for (unsigned i = 0; i < spec->vm.vcpus && i < GUEST_MAX_VCPUS; i++)
		p.vcpu_pattern[i] = spec->guest.vcpu_pattern[i] ? pattern_value(spec->guest.vcpu_pattern[i])
								: GUEST_PATTERN_DEFAULT;
	p.probe_vcpu = spec->guest.probe_vcpu;
	p.probe_gap_us = spec->guest.probe_gap_us;
	p.run_ms = 0;
	p.interval_ms = spec->guest.telemetry_interval_ms;
	p.seed = spec->guest.seed;
	scenario_guest_params(scenario_find(spec->scenario), spec, &p);
	p.clock = 0;
	for (size_t i = 0; i < ARRAY_SIZE(clocks); i++)
		if (!strcmp(spec->guest.clock, clocks[i]))
			p.clock = (int)i; /* enum guest_clock_source: kvmclock 1, cpuid 2, pit 3 */
	return guest_params_to_cmdline(&p, ret, err);
}

static void rep_fail(struct rep_run *rr, const char *msg)
{
	char phase[64];

	snprintf(phase, sizeof(phase), "rep %u %s", rr->index, rr->step);
	report_error_set(&rr->rep->error, phase, msg);
}

/* Has QEMU died? Then fail with what it said. */
static int check_vm(struct rep_run *rr, struct sb_error *err)
{
	char desc[768];

	if (!vm_exited(rr->vm, desc, sizeof(desc)))
		return 0;
	free(rr->rep->vm_exit);
	vm_exit_summary(rr->vm, desc, sizeof(desc));
	rr->rep->vm_exit = strdup(desc);
	vm_exited(rr->vm, desc, sizeof(desc));
	return sb_error_set(err, -ECHILD, "QEMU (pid %d) exited during the %s window: %s", rr->vm->pid, rr->step,
			    desc);
}

/*
 * How long QEMU gets to be reaped after its monitor went away, most often
 * because it died: in a TCG host VM a QEMU tearing down its guest took
 * longer than a second.
 */
#define VM_EXIT_GRACE_MS 5000

static bool lost_monitor(int k)
{
	return k == -ECONNRESET || k == -EPIPE || k == -ENOTCONN || k == -ESHUTDOWN;
}

/* QEMU closes its sockets as it exits, a moment before it can be reaped. */
static void await_vm_exit(struct rep_run *rr)
{
	char desc[768];

	for (unsigned waited = 0; waited < VM_EXIT_GRACE_MS; waited += 50) {
		if (vm_exited(rr->vm, desc, sizeof(desc)))
			return;
		usleep(50000);
	}
}

/*
 * After a step failed with k: did QEMU end? Then *err becomes how (waiting
 * for QEMU to be reaped when k says the monitor went away) and < 0 is
 * returned; else *err is left alone and 0 returned.
 */
static int check_vm_after(struct rep_run *rr, int k, struct sb_error *err)
{
	struct sb_error e2 = {};

	if (lost_monitor(k))
		await_vm_exit(rr);
	if (check_vm(rr, &e2) < 0) {
		*err = e2;
		return e2.code;
	}
	return 0;
}

static int take(struct rep_run *rr, enum report_window w, struct sb_error *err)
{
	struct report_migration m;
	struct run_rates fig;
	bool with_migration = false;
	double fraction = NAN;
	int k;

	if (rr->scenario && w == rr->scenario->window && rr->scenario->progress) {
		struct sb_error e = {};
		if (rr->scenario->progress(rr->scenario_state, &rr->sctx, &m, &fraction, &e) >= 0) {
			with_migration = true;
			rr->snapshot_fraction = fraction;
		}
	}
	k = sampler_take(rr->sampler, w, with_migration ? &m : NULL, &fig, err);
	if (k < 0) {
		if (check_vm_after(rr, k, err) < 0)
			return err->code;
		return sb_error_prefix(err, "sampling");
	}
	progress(rr, &fig, report_window_to_string(w));
	return 0;
}

/* How long past the scenario's deadline a QMP command may still take: time to notice the deadline. */
#define DEADLINE_GRACE_MS 1000

/*
 * In the scenario's window, QMP commands may not wait past the scenario's
 * deadline (plus a grace): a QEMU that stops answering (SIGSTOP, a hang)
 * would otherwise hold each sample for the full command timeout.
 */
static void bound_qmp_by_deadline(struct rep_run *rr)
{
	uint64_t deadline = rr->scenario->deadline ? rr->scenario->deadline(rr->scenario_state, &rr->sctx) : UINT64_MAX;

	qmp_client_set_deadline(rr->vm->qmp, deadline == UINT64_MAX ? QMP_NO_DEADLINE
								    : deadline + DEADLINE_GRACE_MS * NSEC_PER_MSEC);
}

/* After a failure in the scenario's window: once its deadline has passed, that deadline is the reason. */
static int deadline_error(struct rep_run *rr, int k, struct sb_error *err)
{
	uint64_t deadline = rr->scenario->deadline ? rr->scenario->deadline(rr->scenario_state, &rr->sctx) : UINT64_MAX;
	struct sb_error e = {};
	bool done = false;

	if (deadline == UINT64_MAX || mono_ns() < deadline)
		return k;
	if (rr->scenario->poll(rr->scenario_state, &rr->sctx, &done, &e) < 0 && e.code == -ETIMEDOUT) {
		*err = e;
		return e.code;
	}
	return k;
}

static int run_window_loop(struct rep_run *rr, enum report_window w, double duration_s, bool bounded,
			   struct sb_error *err);

/*
 * Samples window w every interval for duration_s, or (duration_s < 0)
 * until the scenario's action ends. The last row ends exactly at the
 * window's end.
 */
static int run_window(struct rep_run *rr, enum report_window w, double duration_s, struct sb_error *err)
{
	bool scenario_window = rr->scenario && w == rr->scenario->window && rr->vm->qmp;
	int k = run_window_loop(rr, w, duration_s, scenario_window, err);

	if (scenario_window) {
		if (k < 0)
			k = deadline_error(rr, k, err);
		qmp_client_set_deadline(rr->vm->qmp, QMP_NO_DEADLINE);
		/*
		 * Past the deadline QEMU may well not answer at all: each command
		 * of this repetition's teardown gets the grace alone (its VM is
		 * not used again).
		 */
		if (k == -ETIMEDOUT)
			qmp_client_set_command_timeout(rr->vm->qmp, DEADLINE_GRACE_MS);
	}
	return k;
}

/* bounded: QMP commands are bounded by the scenario's deadline */
static int run_window_loop(struct rep_run *rr, enum report_window w, double duration_s, bool bounded,
			   struct sb_error *err)
{
	struct local_rep_run *run = rr->run;
	uint64_t interval = (uint64_t)run->spec->timing.interval_ms * NSEC_PER_MSEC;
	uint64_t start = mono_ns(), next = start + interval;
	uint64_t end = duration_s >= 0 ? start + (uint64_t)(duration_s * 1e9) : UINT64_MAX;
	bool scenario_window = rr->scenario && w == rr->scenario->window;
	int k;

	snprintf(rr->step, sizeof(rr->step), "%s", report_window_to_string(w));
	progress(rr, NULL, NULL);
	write_report(run); /* at each phase change: a crash keeps where the run was */
	for (;;) {
		bool done = false;
		uint64_t now;

		if (cancelled(run))
			return sb_error_set(err, -ECANCELED, "cancelled during the %s window", rr->step);
		k = run->write_failed(run->userdata, err);
		if (k < 0)
			return k;
		if (bounded)
			bound_qmp_by_deadline(rr);
		if (scenario_window) {
			k = rr->scenario->poll(rr->scenario_state, &rr->sctx, &done, err);
			if (k < 0) {
				struct sb_error e2 = {};
				if (check_vm_after(rr, k, err) < 0)
					return err->code;
				take(rr, w, &e2); /* keep what the failed window measured */
				return k;
			}
		}
		k = check_vm(rr, err);
		if (k < 0)
			return k;
		now = mono_ns();
		if (now >= end || done)
			return take(rr, w, err);
		if (scenario_window && rr->scenario->sample_now && rr->scenario->sample_now(rr->scenario_state)) {
			k = take(rr, w, err);
			if (k < 0)
				return k;
			next = mono_ns() + interval;
		}
		if (now >= next) {
			k = take(rr, w, err);
			if (k < 0)
				return k;
			next += interval;
			if (next <= now)
				next = now + interval;
		}
		if (write_due(run))
			write_report(run);

		uint64_t until = next < end ? next : end;
		int ms = ms_until(until), cap = scenario_window ? WINDOW_POLL_MS : IDLE_POLL_MS;
		poll(NULL, 0, ms < cap ? ms : cap);
		(*run->wakeups)++;
		k = sampler_pump(rr->sampler, err);
		if (k == -EPIPE) {
			/* the guest's stream ended: QEMU died, or the guest stopped */
			usleep(100000);
			k = check_vm(rr, err);
			if (k < 0)
				return k;
			return sb_error_set(err, -EPIPE, "the guest stopped during the %s window: %s", rr->step,
					    *sampler_guest_end(rr->sampler) ? sampler_guest_end(rr->sampler)
									    : "its telemetry stream closed");
		}
		if (k < 0)
			return k;
	}
}

static void rep_teardown(struct rep_run *rr)
{
	struct sb_error e = {};

	if (rr->scenario_prepared) {
		rr->scenario->cleanup(rr->scenario_state, &rr->sctx);
		rr->scenario->summarize(rr->scenario_state, &rr->sctx, rr->rep);
		rr->scenario_prepared = false;
	}
	if (rr->vm && !rr->vm->exited)
		vm_stop(rr->vm, (int)(rr->run->stop_timeout_ms ? rr->run->stop_timeout_ms : 10000), &e);
	guest_pin_close(rr->pin);
	rr->pin = NULL;
	rr->run->vm_ended(rr->run->userdata, rr->vm);
	sampler_free(rr->sampler);
	rr->sampler = NULL;
	rr->bpf = NULL; /* the run's (local_rep_run.bpf), closed at its end */
	vm_free(rr->vm);
	rr->vm = NULL;
	free(rr->scenario_state);
	rr->scenario_state = NULL;
}

/* ---- on this host: local_rep's phases (rep.h) ---- */

/* prepare: the repetition's record in the report and the run's progress, before its VM starts */
static int rep_begin(void *userdata, struct sb_error *err)
{
	struct rep_run *rr = userdata;
	const struct run_spec *spec = rr->run->spec;
	int k;

	rr->start_ns = mono_ns();
	k = rr->run->record(rr->run->userdata, rr->index, rr->arm, &rr->rep, err);

	if (k < 0)
		return k;
	rr->rep->memory_bytes = spec->vm.memory;
	rr->rep->vcpus = spec->vm.vcpus;
	rr->rep->pattern = strdup(spec->guest.pattern);
	rr->rep->guest_kind = strdup(spec->guest.kind == SPEC_GUEST_LINUX ? "linux" : "micro");
	rr->rep->snapshot.sink_null = spec->snapshot.sink_null;
	return 0;
}

/* The repetition's VM as the spec and the run's options say; tag and name are the caller's buffers. */
static struct vm_config rep_vm_config(const struct rep_run *rr, const char *append, char *tag, size_t tag_len,
				      char *name, size_t name_len)
{
	const struct local_rep_run *run = rr->run;
	const struct run_spec *spec = run->spec;

	struct vm_config cfg;

	snprintf(tag, tag_len, "rep%u", rr->index);
	snprintf(name, name_len, "snapbench-%s-rep%u", run->report->id, rr->index);
	cfg = (struct vm_config){
		.spec = spec,
		.qemu_binary = run->qemu_binary,
		.guest_image = run->guest_image,
		.guest_append = append,
		.run_dir = run->run_dir,
		.tag = tag,
		.name = name,
		.command_timeout_ms = (int)run->qmp_timeout_ms,
		.tcg = run->tcg,
		.run_with_user = run->run_with_user,
	};
	scenario_vm_config(scenario_find(spec->scenario), spec, &cfg);
	return cfg;
}

/* Starts the VM (cfg stays the caller's: the scenario keeps a pointer) and records it in the report. */
static int rep_start_vm(struct rep_run *rr, const struct vm_config *cfg, struct sb_error *err)
{
	struct local_rep_run *run = rr->run;
	int k = vm_start(cfg, &rr->vm, err);

	if (k < 0)
		return k;
	run->vm_started(run->userdata, rr->vm);
	if (rr->vm->qmp)
		qmp_client_set_wait_hook(rr->vm->qmp, qmp_waiting, rr);
	rr->rep->pid = rr->vm->pid;
	rr->rep->argv = strv_copy(rr->vm->argv);
	rr->rep->backend = strdup(rr->vm->backend->name);
	if (rr->vm->domain) {
		/* libvirt records monitor passthrough as a taint: the report says so */
		rr->rep->libvirt_uri = strdup(run->spec->vm.libvirt.uri);
		rr->rep->libvirt_domain = strdup(rr->vm->domain);
		rr->rep->libvirt_taints = strv_copy(rr->vm->taints);
	}
	rr->sctx = (struct scenario_ctx){
		.spec = run->spec,
		.vm = rr->vm,
		.run_dir = run->run_dir,
		.scratch_dir = run->scratch_dir,
		.rep_index = rr->index,
		.arm = rr->arm,
		.rep_start_ns = rr->start_ns,
		.vm_cfg = cfg,
		.dest_qemu_binary = run->dest_qemu_binary,
		.migrate_channels = run->migrate_channels,
	};
	write_report(run);
	return 0;
}

/* The BPF probes pointed at this repetition's QEMU (or why there are none), then its sampler. */
static int rep_open_probes(struct rep_run *rr, bool tcg, struct sb_error *err)
{
	struct local_rep_run *run = rr->run;
	const struct run_spec *spec = run->spec;
	int k;

	snprintf(rr->step, sizeof(rr->step), "probes");
	if (tcg) {
		bpf_source_report_unavailable(run->report,
					      "the guest runs under QEMU's TCG (vm.accel), not KVM: there is no KVM VM for the probes to count");
	} else if (spec->bpf.enabled) {
		struct sb_error e = {};
		char reason[SB_ERROR_MAX + 64];
		uint64_t t = thread_cpu_ns();
		/* loaded once per run, pointed at each repetition's QEMU */
		if (run->bpf && bpf_source_retarget(run->bpf, rr->vm->pid, &e) < 0) {
			bpf_source_close(run->bpf);
			run->bpf = NULL;
		}
		if (!run->bpf && bpf_source_open(rr->vm->pid, run->report, scenario_find(spec->scenario)->zap_causes, &run->bpf, &e) < 0) {
			snprintf(reason, sizeof(reason), "the BPF probes could not load: %s", e.msg);
			bpf_source_report_unavailable(run->report, reason);
		}
		run->cpu_ns[REPORT_CPU_BPF_LOAD] += thread_cpu_ns() - t;
		rr->bpf = run->bpf;
		rr->sctx.bpf = rr->bpf;
	} else {
		bpf_source_report_unavailable(run->report, "BPF probes are off (spec.bpf.enabled is false)");
	}
	k = sampler_new(run->report, rr->rep, rr->vm, rr->bpf, spec, rr->start_ns, &rr->sampler, err);
	if (k < 0)
		return k;
	sampler_set_cpu_account(rr->sampler, run->cpu_ns);
	return 0;
}

/* The guest's hello, then its RAM pinned when the arm asks. */
static int rep_wait_guest(struct rep_run *rr, struct sb_error *err)
{
	struct local_rep_run *run = rr->run;
	int k;

	snprintf(rr->step, sizeof(rr->step), "guest");
	progress(rr, NULL, NULL);
	k = sampler_wait_hello(rr->sampler, GUEST_HELLO_TIMEOUT_MS, run->cancel, err);
	if (k < 0 || !run->spec->arms[rr->arm].pin)
		return k;
	/* as an assigned device pins it: every page faulted in and pinned until the repetition ends */
	snprintf(rr->step, sizeof(rr->step), "pin");
	progress(rr, NULL, NULL);
	k = guest_pin_open(rr->vm->pid, run->spec->vm.memory, &rr->pin, err);
	if (k < 0)
		return k;
	rr->rep->pinned_pages = (int64_t)guest_pin_pages(rr->pin);
	write_report(run);
	return 0;
}

static int rep_prepare_scenario(struct rep_run *rr, struct sb_error *err)
{
	rr->scenario = scenario_find(rr->run->spec->scenario);
	rr->scenario_state = calloc(1, rr->scenario->state_size);
	if (!rr->scenario_state)
		return sb_error_set(err, -ENOMEM, "out of memory");
	rr->scenario_prepared = true;
	snprintf(rr->step, sizeof(rr->step), "%s", "prepare");
	return rr->scenario->prepare(rr->scenario_state, &rr->sctx, err);
}

/*
 * boot: the VM started, the probes on its QEMU, the guest up, the scenario
 * prepared. A step here that fails would fail the next repetition alike
 * (rep_end()).
 */
static int rep_boot(void *userdata, struct sb_error *err)
{
	struct rep_run *rr = userdata;
	int k;

	snprintf(rr->step, sizeof(rr->step), "vm-start");
	progress(rr, NULL, NULL);
	k = guest_append(rr->run->spec, &rr->append, err);
	if (k < 0)
		return k;
	rr->cfg = rep_vm_config(rr, rr->append, rr->tag, sizeof(rr->tag), rr->name, sizeof(rr->name));
	k = rep_start_vm(rr, &rr->cfg, err);
	if (k >= 0)
		k = rep_open_probes(rr, rr->cfg.tcg, err);
	if (k >= 0)
		k = rep_wait_guest(rr, err);
	if (k >= 0)
		k = rep_prepare_scenario(rr, err);
	return k;
}

/*
 * windows: the measurement: baseline, warm-up and pre windows, the
 * scenario's action and its window, the post window, and a last row read
 * with the guest paused. rr->fatal when the scenario refused outright
 * (every repetition would be).
 */
static int rep_measure(void *userdata, struct sb_error *err)
{
	struct rep_run *rr = userdata;
	const struct run_spec *spec = rr->run->spec;
	int k;

	k = sampler_baseline(rr->sampler, err);
	if (k >= 0 && spec->timing.warmup_s > 0)
		k = run_window(rr, REPORT_WINDOW_WARMUP, spec->timing.warmup_s, err);
	if (k >= 0)
		k = run_window(rr, REPORT_WINDOW_PRE, spec->timing.pre_s, err);
	if (k < 0)
		return k;

	snprintf(rr->step, sizeof(rr->step), "%s", report_window_to_string(rr->scenario->window));
	k = rr->scenario->start(rr->scenario_state, &rr->sctx, err);
	if (k < 0) {
		/* refused outright (e.g. no userfaultfd): every repetition would be */
		rr->fatal = k == -EOPNOTSUPP;
		return k;
	}
	/* a report kept after a crash says the action was under way (summarize is idempotent) */
	rr->scenario->summarize(rr->scenario_state, &rr->sctx, rr->rep);
	write_report(rr->run);
	k = run_window(rr, rr->scenario->window, -1, err);
	if (k >= 0)
		k = rr->scenario->finish(rr->scenario_state, &rr->sctx, err);
	if (k >= 0)
		k = run_window(rr, REPORT_WINDOW_POST, spec->timing.post_s, err);
	if (k < 0)
		return k;
	/*
	 * The last row read with the guest paused, as the baseline was: every
	 * event one source counted the other did too, so their totals are
	 * equal where the kernel pairs them (docs/report-format.md).
	 */
	if (sampler_pause_vm(rr->sampler, true, NULL) >= 0)
		return take(rr, REPORT_WINDOW_POST, err);
	return 0;
}

/* summarize: a measured repetition's end: the scenario cleaned up, the VM stopped, the repetition completed. */
static int rep_complete(void *userdata, struct sb_error *err)
{
	struct rep_run *rr = userdata;
	struct local_rep_run *run = rr->run;
	struct sb_error e = {};

	(void)err; /* nothing here fails the repetition */
	snprintf(rr->step, sizeof(rr->step), "stop");
	progress(rr, NULL, NULL);
	rr->scenario->cleanup(rr->scenario_state, &rr->sctx);
	rr->scenario->summarize(rr->scenario_state, &rr->sctx, rr->rep);
	rr->scenario_prepared = false;
	if (vm_stop(rr->vm, (int)(run->stop_timeout_ms ? run->stop_timeout_ms : 10000), &e) < 0) {
		/* measured fine; a VM that had to be killed is worth a note, not a failure */
		free(rr->rep->vm_exit);
		rr->rep->vm_exit = strdup(e.msg);
	}
	sampler_pump(rr->sampler, NULL);
	rr->rep->state = REPORT_REP_COMPLETED;
	report_rep_selfcheck(run->report, rr->rep); /* -ENOMEM leaves a partial mark out, no more */
	rr->rep->finished_ns = realtime_ns();
	return 0;
}

/*
 * teardown: after an error k the repetition cancelled or failed, with the
 * reason; in every case everything it started stopped and freed.
 */
static void rep_end(void *userdata, int k, enum rep_phase failed, const struct sb_error *err)
{
	struct rep_run *rr = userdata;

	if (k < 0) {
		/* a step before the measurement that fails would fail the next repetition alike */
		if (failed == REP_PHASE_BOOT)
			rr->fatal = true;
		rr->rep->state = k == -ECANCELED ? REPORT_REP_CANCELLED : REPORT_REP_FAILED;
		rep_fail(rr, err ? err->msg : k == -ECANCELED ? "cancelled" : "failed");
	}
	rep_teardown(rr);
	if (k < 0)
		rr->rep->finished_ns = realtime_ns();
	free(rr->append);
	rr->append = NULL;
}

static const struct rep_phases local_rep = {
	.prepare = rep_begin,
	.boot = rep_boot,
	.windows = rep_measure,
	.summarize = rep_complete,
	.teardown = rep_end,
};

/* 0, -ECANCELED, or < 0 (*fatal when the next one would fail alike). */
int local_rep_run(struct local_rep_run *run, unsigned index, size_t arm, bool *fatal, struct sb_error *err)
{
	struct rep_run rr = { .run = run, .index = index, .arm = arm, .snapshot_fraction = NAN };
	int k = rep_phases_run(&local_rep, &rr, err);

	*fatal = rr.fatal;
	return k;
}
