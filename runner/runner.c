// SPDX-License-Identifier: GPL-2.0-or-later
/* The run engine: preflight, knobs, arms x repetitions, windows, report. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf-source.h"
#include "clock.h"
#include "config.h"
#include "drain.h"
#include "guest-pin.h"
#include "host.h"
#include "hostvm-rep.h"
#include "knobs.h"
#include "macro.h"
#include "mkdir-p.h"
#include "params.h"
#include "placement.h"
#include "preflight.h"
#include "qemu-args.h"
#include "qemu-binary.h"
#include "qmp.h"
#include "rep.h"
#include "report.h"
#include "run-dir.h"
#include "sampler.h"
#include "strv.h"
#include "scenario.h"
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

struct run {
	const struct run_spec *spec;
	const struct runner_options *opts;
	struct report *report;
	char report_path[PATH_MAX];
	const char *run_dir;
	char *guest_image;
	uint64_t start_ns;
	uint64_t last_write_ns;
	unsigned report_every_ms;
	bool report_every_default;   /* no --report-every: the gap grows with the rewrite's cost (write_due()) */
	uint64_t write_gap_ns;       /* the periodic rewrite's gap now */
	double rep_planned_s;
	unsigned reps_done;
	struct runner_progress progress;
	int owner_fd; /* the run directory's owner lock, held while the run executes */
	struct bpf_source *bpf;       /* the probes, loaded at the first repetition, retargeted for the next */
	struct hostvm_run *hostvm;    /* kernel arms: each repetition in a host VM (hostvm-rep.h) */
	struct placement placement;   /* where the guest runs (placement.h) */
	struct run_spec placed;       /* the spec as run when placement changed it (a kernel for "auto"); run->spec points here then */
	bool own_placed;
	int write_error;              /* the first report rewrite that failed (-ENOSPC ...): the run stops */
	char write_msg[SB_ERROR_MAX];
	/* the run engine's CPU by part (report runner.cpu): the main thread's, and ended repetitions' drain threads */
	uint64_t cpu_ns[REPORT_CPU_MAX];
	uint64_t wakeups, telemetry_reads;
	struct vm *live_vm; /* the repetition's VM: its drain thread's CPU counts live */
	bool migrate_channels; /* the QEMU takes migrate's channels argument (host.h: QEMU_FEATURE_MIGRATE_CHANNELS) */
	bool run_with_user;    /* it takes -run-with user= for vm.user (QEMU_FEATURE_RUN_WITH_USER) */
};

/* one repetition in flight: on this host, the state of local_rep's phases (rep.h) */
struct rep_run {
	struct run *run;
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

static bool cancelled(const struct run *run)
{
	return run->opts->cancel && *run->opts->cancel;
}

static void record_usage(struct run *run)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return;
	run->report->usage.set = true;
	run->report->usage.cpu_user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	run->report->usage.cpu_system_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	run->report->usage.wall_s = (double)(mono_ns() - run->start_ns) / 1e9;
	run->report->usage.samples = 0;
	for (size_t i = 0; i < run->report->n_reps; i++)
		run->report->usage.samples += run->report->reps[i]->n_rows;
	for (int i = 0; i < REPORT_CPU_MAX; i++)
		run->report->usage.cpu_s[i] = (double)run->cpu_ns[i] / 1e9;
	run->report->usage.wakeups = run->wakeups;
	run->report->usage.telemetry_reads = run->telemetry_reads;
	if (run->live_vm) {
		run->report->usage.cpu_s[REPORT_CPU_TELEMETRY] += (double)drain_cpu_ns(run->live_vm->telemetry) / 1e9;
		run->report->usage.telemetry_reads += drain_reads(run->live_vm->telemetry);
	}
}

/* The repetition's VM goes: its drain thread's CPU and reads join the run's. */
static void account_vm_end(struct run *run, struct vm *vm)
{
	if (!vm)
		return;
	run->cpu_ns[REPORT_CPU_TELEMETRY] += drain_cpu_ns(vm->telemetry);
	run->telemetry_reads += drain_reads(vm->telemetry);
	if (run->live_vm == vm)
		run->live_vm = NULL;
}

/* The report written, its CPU accounted (report_s). */
static int report_write_accounted(struct run *run, struct sb_error *err)
{
	uint64_t t = thread_cpu_ns();
	int k;

	record_usage(run);
	k = report_write(run->report, run->report_path, err);
	run->cpu_ns[REPORT_CPU_REPORT] += thread_cpu_ns() - t;
	return k;
}

/*
 * A rewrite that fails (a full file system, a quota) stops the run: going
 * on would measure what no report keeps. The run ends failed with the
 * write's error; the final write is tried all the same, and succeeds when
 * space came back in the meantime.
 */
/*
 * The periodic rewrite's gap after one that cost cpu_ns. A report grows
 * with its rows (a 5-repetition run at 100 ms reaches ~3 MB), and a fixed
 * gap makes rewriting it quadratic in the run's length; by default the
 * gap is 1000 times the last rewrite's CPU (0.1% of a core), no less than
 * report_every_ms and no more than a minute. Step changes still write at
 * once, and the last write has every row.
 */
#define REPORT_WRITE_BUDGET 1000
#define REPORT_GAP_MAX_NS (60 * NSEC_PER_SEC)
static void set_write_gap(struct run *run, uint64_t cpu_ns)
{
	uint64_t floor = (uint64_t)run->report_every_ms * NSEC_PER_MSEC, gap = cpu_ns * REPORT_WRITE_BUDGET;

	if (!run->report_every_default || gap < floor)
		gap = floor;
	run->write_gap_ns = gap < REPORT_GAP_MAX_NS || floor >= REPORT_GAP_MAX_NS ? gap : REPORT_GAP_MAX_NS;
}

static bool write_due(const struct run *run)
{
	return mono_ns() - run->last_write_ns >= run->write_gap_ns;
}

static void write_report(struct run *run)
{
	struct sb_error e = {};
	uint64_t cpu = run->cpu_ns[REPORT_CPU_REPORT];
	int k;

	k = report_write_accounted(run, &e);
	set_write_gap(run, run->cpu_ns[REPORT_CPU_REPORT] - cpu);
	run->last_write_ns = mono_ns();
	if (k < 0 && !run->write_error) {
		run->write_error = k;
		/* truncating a long message is fine; using the result keeps -Wformat-truncation quiet */
		if (snprintf(run->write_msg, sizeof(run->write_msg),
			     "the report could not be written, so the run stopped: %s; free space in the run directory or write the run elsewhere (--output DIR)",
			     e.msg) < 0)
			run->write_msg[0] = '\0';
	}
}

static void progress(struct run *run, const char *step, const struct rep_run *rr, const struct run_rates *rates)
{
	struct runner_progress *p = &run->progress;
	double rep_elapsed = rr ? (double)(mono_ns() - rr->start_ns) / 1e9 : 0;
	double within = run->rep_planned_s > 0 ? rep_elapsed / run->rep_planned_s : 0;

	if (!run->opts->progress)
		return;
	p->step = step;
	p->elapsed_s = (double)(mono_ns() - run->start_ns) / 1e9;
	p->rep_elapsed_s = rep_elapsed;
	if (within > 0.99)
		within = 0.99;
	p->fraction = p->reps ? ((double)run->reps_done + (rr ? within : 0)) / p->reps : 0;
	if (p->fraction > 1)
		p->fraction = 1;
	if (rates)
		p->rates = *rates;
	p->snapshot_fraction = rr && rr->scenario && !strcmp(step, report_window_to_string(rr->scenario->window))
				       ? rr->snapshot_fraction
				       : NAN;
	run->opts->progress(p, run->opts->userdata);
}

/* QEMU has not answered a command for a second or more: the progress says so (qmp_wait_hook). */
static void qmp_waiting(void *userdata, const char *command, double waited_s)
{
	struct rep_run *rr = userdata;
	struct runner_progress *p = &rr->run->progress;

	p->waiting_for = command;
	p->waiting_s = waited_s;
	progress(rr->run, rr->step, rr, NULL);
	p->waiting_for = NULL;
	p->waiting_s = NAN;
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
	p.fault_write = spec->scenario == SPEC_SCENARIO_POSTCOPY_RESTORE && spec->postcopy.access == SPEC_FAULT_WRITE;
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
	rr->run->progress.sample_window = report_window_to_string(w);
	progress(rr->run, rr->step, rr, &fig);
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
	struct run *run = rr->run;
	uint64_t interval = (uint64_t)run->spec->timing.interval_ms * NSEC_PER_MSEC;
	uint64_t start = mono_ns(), next = start + interval;
	uint64_t end = duration_s >= 0 ? start + (uint64_t)(duration_s * 1e9) : UINT64_MAX;
	bool scenario_window = rr->scenario && w == rr->scenario->window;
	int k;

	snprintf(rr->step, sizeof(rr->step), "%s", report_window_to_string(w));
	progress(run, rr->step, rr, NULL);
	write_report(run); /* at each phase change: a crash keeps where the run was */
	for (;;) {
		bool done = false;
		uint64_t now;

		if (cancelled(run))
			return sb_error_set(err, -ECANCELED, "cancelled during the %s window", rr->step);
		if (run->write_error)
			return sb_error_set(err, run->write_error, "%s", run->write_msg);
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
		run->wakeups++;
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
		vm_stop(rr->vm, (int)(rr->run->opts->stop_timeout_ms ? rr->run->opts->stop_timeout_ms : 10000), &e);
	guest_pin_close(rr->pin);
	rr->pin = NULL;
	account_vm_end(rr->run, rr->vm);
	sampler_free(rr->sampler);
	rr->sampler = NULL;
	rr->bpf = NULL; /* the run's (run->bpf), closed at its end */
	vm_free(rr->vm);
	rr->vm = NULL;
	free(rr->scenario_state);
	rr->scenario_state = NULL;
}

/* ---- kernel arms: the repetition runs in a host VM (hostvm-rep.h) ---- */

/* The run engine's progress inside the host VM (hostvm-rep.h): its step, rates and window become ours. */
static void host_vm_progress(const struct runner_progress *hp, void *userdata)
{
	struct rep_run *rr = userdata;
	const char *step = hp->step ? hp->step : "host-vm";
	bool changed = strcmp(rr->step, step) != 0;
	int w = report_window_from_string(hp->sample_window);

	snprintf(rr->step, sizeof(rr->step), "%s", step);
	rr->snapshot_fraction = hp->snapshot_fraction;
	if (w >= 0)
		rr->run->progress.sample_window = report_window_to_string(w);
	progress(rr->run, rr->step, rr, &hp->rates);
	/* at each step (the host VM's pid is in the report from its boot on), else when due */
	if (changed || write_due(rr->run))
		write_report(rr->run);
}

/* A repetition's record in the report and the run's progress, of either kind. */
static int rep_record(struct rep_run *rr, struct sb_error *err)
{
	struct run *run = rr->run;
	int k;

	rr->start_ns = mono_ns();
	k = report_add_rep(run->report, rr->arm, realtime_ns(), &rr->rep);
	if (k < 0)
		return sb_error_set(err, k, "out of memory");
	run->progress.rep = rr->index;
	run->progress.arm = run->spec->arms[rr->arm].label;
	run->progress.rates = RUN_RATES_NONE;
	run->progress.sample_window = NULL;
	return 0;
}

/* The repetition in a host VM: its phases are hostvm-rep.c's (hostvm_rep_run()), on the record made here. */
static int run_rep_host_vm(struct rep_run *rr, struct sb_error *err)
{
	struct run *run = rr->run;
	int k = rep_record(rr, err);

	if (k < 0)
		return k;
	write_report(run);
	struct hostvm_rep_ctx ctx = {
		.spec = run->spec,
		.run_dir = run->run_dir,
		.qemu_binary = run->opts->qemu_binary,
		.guest_image = run->guest_image,
		.index = rr->index,
		.arm = rr->arm,
		.report = run->report,
		.rep = rr->rep,
		.cancel = run->opts->cancel,
		.progress = host_vm_progress,
		.userdata = rr,
	};
	k = hostvm_rep_run(run->hostvm, &ctx, err);
	rr->rep->finished_ns = realtime_ns();
	return k;
}

/* ---- on this host: local_rep's phases (rep.h) ---- */

/* prepare: the repetition's record in the report and the run's progress, before its VM starts */
static int rep_begin(void *userdata, struct sb_error *err)
{
	struct rep_run *rr = userdata;
	const struct run_spec *spec = rr->run->spec;
	int k = rep_record(rr, err);

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
	const struct run *run = rr->run;
	const struct run_spec *spec = run->spec;

	snprintf(tag, tag_len, "rep%u", rr->index);
	snprintf(name, name_len, "snapbench-%s-rep%u", run->report->id, rr->index);
	return (struct vm_config){
		.spec = spec,
		.qemu_binary = run->opts->qemu_binary,
		.guest_image = run->guest_image,
		.guest_append = append,
		.run_dir = run->run_dir,
		.tag = tag,
		.name = name,
		.command_timeout_ms = (int)run->opts->qmp_timeout_ms,
		.dirty_ring_size = spec->scenario == SPEC_SCENARIO_DIRTY_LOG && spec->dirty_log.tracking == SPEC_DIRTY_RING
					   ? spec->dirty_log.ring_size
					   : 0,
		.tcg = !strcmp(run->placement.accel, "tcg"),
		.run_with_user = run->run_with_user,
	};
}

/* Starts the VM (cfg stays the caller's: the scenario keeps a pointer) and records it in the report. */
static int rep_start_vm(struct rep_run *rr, const struct vm_config *cfg, struct sb_error *err)
{
	struct run *run = rr->run;
	int k = vm_start(cfg, &rr->vm, err);

	if (k < 0)
		return k;
	run->live_vm = rr->vm;
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
		.scratch_dir = run->opts->scratch_dir,
		.rep_index = rr->index,
		.rep_start_ns = rr->start_ns,
		.vm_cfg = cfg,
		.dest_qemu_binary = run->opts->dest_qemu_binary,
		.migrate_channels = run->migrate_channels,
	};
	write_report(run);
	return 0;
}

/* The BPF probes pointed at this repetition's QEMU (or why there are none), then its sampler. */
static int rep_open_probes(struct rep_run *rr, bool tcg, struct sb_error *err)
{
	struct run *run = rr->run;
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
	struct run *run = rr->run;
	int k;

	snprintf(rr->step, sizeof(rr->step), "guest");
	progress(run, rr->step, rr, NULL);
	k = sampler_wait_hello(rr->sampler, GUEST_HELLO_TIMEOUT_MS, run->opts->cancel, err);
	if (k < 0 || !run->spec->arms[rr->arm].pin)
		return k;
	/* as an assigned device pins it: every page faulted in and pinned until the repetition ends */
	snprintf(rr->step, sizeof(rr->step), "pin");
	progress(run, rr->step, rr, NULL);
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
	progress(rr->run, rr->step, rr, NULL);
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
	struct run *run = rr->run;
	struct sb_error e = {};

	(void)err; /* nothing here fails the repetition */
	snprintf(rr->step, sizeof(rr->step), "stop");
	progress(run, rr->step, rr, NULL);
	rr->scenario->cleanup(rr->scenario_state, &rr->sctx);
	rr->scenario->summarize(rr->scenario_state, &rr->sctx, rr->rep);
	rr->scenario_prepared = false;
	if (vm_stop(rr->vm, (int)(run->opts->stop_timeout_ms ? run->opts->stop_timeout_ms : 10000), &e) < 0) {
		/* measured fine; a VM that had to be killed is worth a note, not a failure */
		free(rr->rep->vm_exit);
		rr->rep->vm_exit = strdup(e.msg);
	}
	sampler_pump(rr->sampler, NULL);
	rr->rep->state = REPORT_REP_COMPLETED;
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
static int run_rep(struct run *run, unsigned index, size_t arm, bool *fatal, struct sb_error *err)
{
	struct rep_run rr = { .run = run, .index = index, .arm = arm, .snapshot_fraction = NAN };
	int k;

	*fatal = false;
	if (run->hostvm)
		return run_rep_host_vm(&rr, err);
	k = rep_phases_run(&local_rep, &rr, err);
	*fatal = rr.fatal;
	return k;
}

static json_object *knobs_json(const struct spec_knobs *k)
{
	json_object *o = json_object_new_object();

	for (size_t i = 0; o && i < k->n; i++)
		json_object_object_add(o, k->items[i].name, json_object_new_string(k->items[i].value));
	return o;
}

static int build_report(struct run *run, const char *id, struct sb_error *err)
{
	const struct run_spec *spec = run->spec;
	struct json_object *sj = NULL;
	int k;

	uint64_t now = realtime_ns();

	k = report_new(id, run->opts->created_ns ? run->opts->created_ns : now, &run->report);
	if (k < 0)
		return sb_error_set(err, k, "out of memory");
	run->report->started_ns = now;
	k = spec_to_json(spec, &sj);
	if (k < 0)
		return sb_error_set(err, k, "out of memory");
	report_set_spec(run->report, sj);
	host_collect(&run->report->host);
	run->report->snapbench_version = strdup(PACKAGE_VERSION);
	for (size_t a = 0; a < spec->n_arms; a++) {
		struct spec_knobs kn = {};
		if (spec_arm_knobs(spec, a, &kn) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
		k = report_add_arm(run->report, spec->arms[a].label, knobs_json(&kn), spec->repetitions);
		spec_knobs_done(&kn);
		if (k < 0)
			return sb_error_set(err, k, "out of memory");
	}
	return 0;
}

/* every knob any arm sets */
static int all_knobs(const struct run_spec *spec, struct spec_knobs *all)
{
	for (size_t a = 0; a < spec->n_arms; a++) {
		struct spec_knobs k = {};
		if (spec_arm_knobs(spec, a, &k) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < k.n; i++) {
			bool dup = false;
			for (size_t j = 0; j < all->n; j++)
				dup |= !strcmp(all->items[j].name, k.items[i].name);
			if (dup)
				continue;
			struct spec_knob *n = realloc(all->items, (all->n + 1) * sizeof(*n));
			if (!n) {
				spec_knobs_done(&k);
				return -ENOMEM;
			}
			all->items = n;
			n[all->n].name = strdup(k.items[i].name);
			n[all->n].value = strdup(k.items[i].value);
			all->n++;
		}
		spec_knobs_done(&k);
	}
	return 0;
}

/* Another run holds the host-wide knob lock: say so while we wait for it. */
static void knobs_waiting(const struct knobs_holder *holder, void *userdata)
{
	(void)holder;
	progress(userdata, "knobs", NULL, NULL);
}

static void finish_run(struct run *run, enum report_state state, const char *phase, const char *msg)
{
	run->report->state = state;
	run->report->finished_ns = realtime_ns();
	if (msg)
		report_error_set(&run->report->error, phase, msg);
}

/* The run's id: opts->run_id, else the run directory's name when it has the shape of one, else a new one. */
static void pick_run_id(const struct runner_options *opts, char id[static REPORT_ID_MAX])
{
	const char *base = strrchr(opts->run_dir, '/');

	base = base && base[1] ? base + 1 : opts->run_dir;
	if (opts->run_id && report_id_valid(opts->run_id))
		snprintf(id, REPORT_ID_MAX, "%s", opts->run_id);
	else if (report_id_valid(base))
		snprintf(id, REPORT_ID_MAX, "%s", base);
	else
		report_new_id(realtime_ns(), id);
}

/* Where the knob journal and lock go: opts->state_dir, else the run directory's parent. */
static void pick_state_dir(const struct runner_options *opts, char *buf, size_t len)
{
	char *slash;

	if (opts->state_dir) {
		snprintf(buf, len, "%s", opts->state_dir);
		return;
	}
	snprintf(buf, len, "%s", opts->run_dir);
	slash = strrchr(buf, '/');
	if (slash && slash != buf)
		*slash = '\0';
	else if (slash)
		slash[1] = '\0';
	else
		snprintf(buf, len, ".");
}

/*
 * Where the guest runs (placement.h): recorded in the report, and when it
 * changes what runs (a kernel for "auto", host VMs because this host has no
 * KVM), the spec as run becomes a copy with that kernel.
 */
static int run_place(struct run *run, struct sb_error *err)
{
	struct report_placement *rp = &run->report->placement;
	struct placement *pl = &run->placement;
	int k;

	k = placement_decide(run->spec, run->opts->sysroot, pl, err);
	if (k < 0) {
		finish_run(run, REPORT_FAILED, "preflight", err ? err->msg : "no KVM");
		return k;
	}
	if (pl->kernel) {
		k = spec_copy(run->spec, &run->placed, err);
		if (k >= 0) {
			run->own_placed = true;
			k = spec_resolve_kernel(&run->placed, pl->kernel, pl->fell_back);
			if (k < 0)
				sb_error_set(err, k, "out of memory");
		}
		if (k < 0) {
			finish_run(run, REPORT_FAILED, "preflight", err ? err->msg : "out of memory");
			return k;
		}
		run->spec = &run->placed;
	}
	rp->set = true;
	snprintf(rp->guest_accel, sizeof(rp->guest_accel), "%s", pl->accel);
	rp->host_vm = pl->host_vm;
	rp->fell_back = pl->fell_back;
	rp->reason = strdup(pl->reason);
	rp->kernel = pl->kernel ? strdup(pl->kernel) : NULL;
	rp->kernel_how = pl->kernel ? strdup(pl->kernel_how) : NULL;
	/* worth a line on the terminal when the guest does not run where one would expect it */
	if (pl->fell_back || !strcmp(pl->accel, "tcg"))
		run->progress.placement = rp->reason;
	return 0;
}

/* The report's host.qemu: what the probe found (q->path NULL: it found nothing), else the name asked for. */
static void record_qemu(struct report_host *h, const struct qemu_info *q, const char *asked)
{
	char v[64];

	if (!q->path) {
		h->qemu_binary = strdup(asked ? asked : QEMU_DEFAULT_BINARY);
		return;
	}
	snprintf(v, sizeof(v), "%d.%d.%d", q->major, q->minor, q->micro);
	h->qemu_binary = strdup(q->path);
	h->qemu_version = strdup(v);
	h->qemu_package = *q->package ? strdup(q->package) : NULL;
	h->qemu_features = qemu_feature_names(q);
}

/* The guest image the run boots: the options', or the one installed; an absolute path. */
static int run_guest_image(struct run *run, struct sb_error *err)
{
	const struct runner_options *opts = run->opts;
	int k = opts->guest_image ? ((run->guest_image = strdup(opts->guest_image)) ? 0 : -ENOMEM)
				  : runner_find_guest_image(&run->guest_image, err);

	if (k < 0) {
		finish_run(run, REPORT_FAILED, "preflight", err ? err->msg : "no guest image");
		return k;
	}
	if (run->guest_image[0] != '/') {
		/* a host VM's run engine sees this host's / but not our working directory */
		char *abs = realpath(run->guest_image, NULL);
		if (abs) {
			free(run->guest_image);
			run->guest_image = abs;
		}
	}
	return 0;
}

/* Kernel arms: their host VMs prepared (the run engine inside each runs its own preflight). */
static int run_prepare_host_vms(struct run *run, struct sb_error *err)
{
	int k = hostvm_run_prepare(run->spec, run->report, run->opts->run_dir, &run->hostvm, err);

	if (k < 0) {
		if (run->placement.fell_back)
			sb_error_prefix(err, "%s; but", run->placement.reason);
		finish_run(run, REPORT_FAILED, "preflight", err ? err->msg : "host VM preflight failed");
		return k;
	}
	/* every arm's host VM has the same accelerator (hostvm_run_prepare() chose it once) */
	if (run->report->n_arms && run->report->arms[0].kernel && run->report->arms[0].kernel->accel)
		snprintf(run->report->placement.host_vm_accel, sizeof(run->report->placement.host_vm_accel), "%s",
			 run->report->arms[0].kernel->accel);
	return 0;
}

/*
 * The guest image and the preflight checks (skipped: a probe of QEMU, for
 * the report's host section). When they fail, so does the run.
 */
static int run_preflight(struct run *run, struct sb_error *err)
{
	const struct runner_options *opts = run->opts;
	struct report_host *h = &run->report->host;
	struct qemu_info q = {};
	int k;

	progress(run, "preflight", NULL, NULL);
	k = run_place(run, err);
	if (k < 0)
		return k;
	k = run_guest_image(run, err);
	if (k < 0)
		return k;
	struct preflight_input in = {
		.spec = run->spec,
		.run_dir = opts->run_dir,
		.scratch_dir = opts->scratch_dir,
		.qemu_binary = opts->qemu_binary,
		.guest_image = run->guest_image,
		.tcg = !strcmp(run->placement.accel, "tcg"),
		.host_vm = run->placement.host_vm,
		.refused = run->placement.refused,
		.refused_msg = run->placement.message,
	};
	if (run->placement.host_vm && !opts->skip_preflight) {
		k = preflight_run(&in, &q, err);
		qemu_info_done(&q);
		q = (struct qemu_info){};
		if (k < 0) {
			h->qemu_binary = strdup(opts->qemu_binary ? opts->qemu_binary : QEMU_DEFAULT_BINARY);
			finish_run(run, REPORT_FAILED, "preflight", err ? err->msg : "preflight failed");
			return k;
		}
	}
	if (run->placement.host_vm) {
		k = run_prepare_host_vms(run, err);
		if (k < 0)
			return k;
		struct sb_error e = {};
		if (qemu_probe(opts->qemu_binary, &q, &e) < 0)
			q.path = NULL;
	} else if (!opts->skip_preflight) {
		k = preflight_run(&in, &q, err);
		if (k < 0) {
			record_qemu(h, &q, opts->qemu_binary); /* a refused QEMU is named with its version too */
			qemu_info_done(&q);
			finish_run(run, REPORT_FAILED, "preflight", err ? err->msg : "preflight failed");
			return k;
		}
	} else {
		struct sb_error e = {};
		if (qemu_probe(opts->qemu_binary, &q, &e) < 0)
			q.path = NULL; /* the repetitions will say what is wrong */
	}
	record_qemu(h, &q, opts->qemu_binary);
	if (q.path) {
		/* the newer form where QEMU has it; a destination QEMU of its own (tests) keeps the uri */
		run->migrate_channels = q.has[QEMU_FEATURE_MIGRATE_CHANNELS] && !opts->dest_qemu_binary;
		run->run_with_user = q.has[QEMU_FEATURE_RUN_WITH_USER];
	}
	qemu_info_done(&q);
	return 0;
}

/* The knobs every arm sets, journaled in state_dir under the host-wide lock (knobs.h). */
static int run_knobs_begin(struct run *run, const char *state_dir, const char *id, struct spec_knobs *all,
			   struct knobs_session **knobs, struct sb_error *err)
{
	const struct runner_options *opts = run->opts;
	int k;

	/* kernel arms apply their knobs inside their host VMs, not here */
	if (!run->hostvm && all_knobs(run->spec, all) < 0) {
		k = sb_error_set(err, -ENOMEM, "out of memory");
		finish_run(run, REPORT_FAILED, "knobs", err ? err->msg : "out of memory");
		return k;
	}
	struct knobs_options ko = {
		.root = opts->sysroot,
		.run_id = id,
		.wait_ms = opts->knobs_wait_ms < 0 ? 0 : opts->knobs_wait_ms ? opts->knobs_wait_ms : KNOBS_WAIT_DEFAULT_MS,
		.cancel = opts->cancel,
		.waiting = knobs_waiting,
		.userdata = run,
	};
	k = knobs_begin(state_dir, &ko, all, knobs, err);
	if (k == -ECANCELED) {
		finish_run(run, REPORT_CANCELLED, "cancel", "the run was cancelled while it waited for the host-wide knob lock");
		return k;
	}
	if (k < 0) {
		finish_run(run, REPORT_FAILED, "knobs", err ? err->msg : "knobs");
		return k;
	}
	return 0;
}

/* What went wrong in the repetitions: how many failed, and the first failure. */
struct run_failures {
	unsigned failed;
	char phase[64];
	char error[SB_ERROR_MAX];
};

/*
 * Arms x repetitions, interleaved, each with its arm's knobs set. Stops at
 * a cancel, at a failure the next repetitions would repeat, or at two
 * failures in a row. Returns -ECANCELED, the first failure's errno, or 0.
 */
static int run_repetitions(struct run *run, struct knobs_session *knobs, struct run_failures *f)
{
	const struct run_spec *spec = run->spec;
	unsigned consecutive = 0;
	int k, ret = 0;

	for (unsigned r = 0, index = 0; r < spec->repetitions; r++) {
		for (size_t a = 0; a < spec->n_arms; a++, index++) {
			struct spec_knobs ak = {};
			struct sb_error e = {};
			bool fatal = false;

			if (cancelled(run))
				return -ECANCELED;
			if ((!run->hostvm && spec_arm_knobs(spec, a, &ak) < 0) || knobs_set_arm(knobs, &ak, &e) < 0) {
				spec_knobs_done(&ak);
				snprintf(f->phase, sizeof(f->phase), "rep %u knobs", index);
				snprintf(f->error, sizeof(f->error), "%s", *e.msg ? e.msg : "out of memory");
				f->failed++;
				return e.code ? e.code : -ENOMEM;
			}
			spec_knobs_done(&ak);
			k = run_rep(run, index, a, &fatal, &e);
			run->reps_done++;
			write_report(run);
			if (k == -ECANCELED)
				return k;
			if (run->write_error)
				return run->write_error; /* run_end() says why */
			if (k < 0) {
				f->failed++;
				consecutive++;
				if (!*f->error) {
					snprintf(f->phase, sizeof(f->phase), "%s", run->report->reps[run->report->n_reps - 1]->error.phase);
					snprintf(f->error, sizeof(f->error), "%s", e.msg);
					ret = k;
				}
				if (fatal || consecutive >= 2) {
					char note[SB_ERROR_MAX];
					/* truncating a long message is fine; using the result keeps -Wformat-truncation quiet */
					if (snprintf(note, sizeof(note), "%s (the run stopped: %s)", f->error,
						     fatal ? "the next repetitions would fail the same way"
							   : "two repetitions in a row failed") < 0)
						note[0] = '\0';
					snprintf(f->error, sizeof(f->error), "%s", note);
					return ret;
				}
			} else {
				consecutive = 0;
			}
		}
	}
	return ret;
}

/* The run's state from how its repetitions went (ret: run_repetitions() or knobs_end()); the run's return value. */
static int run_end(struct run *run, int ret, const struct run_failures *f, unsigned total, struct sb_error *err)
{
	if (run->write_error) {
		finish_run(run, REPORT_FAILED, "report", run->write_msg);
		sb_error_set(err, run->write_error, "%s", run->write_msg);
		return run->write_error;
	}
	if (ret == -ECANCELED) {
		finish_run(run, REPORT_CANCELLED, "cancel", "the run was cancelled");
		sb_error_set(err, ret, "the run was cancelled in repetition %u of %u", run->reps_done ? run->reps_done : 1, total);
	} else if (ret < 0 || f->failed) {
		char msg[SB_ERROR_MAX];
		/* truncating a long message is fine; using the result keeps -Wformat-truncation quiet */
		if (snprintf(msg, sizeof(msg), "%u of %u repetitions failed; first: %s: %s", f->failed, total, f->phase,
			     f->error) < 0)
			msg[0] = '\0';
		finish_run(run, REPORT_FAILED, f->phase, msg);
		sb_error_set(err, ret < 0 ? ret : -EIO, "%s", msg);
		if (ret == 0)
			ret = -EIO;
	} else {
		finish_run(run, REPORT_COMPLETED, NULL, NULL);
	}
	return ret;
}

/* Creates the run directory and takes it (one run at a time in it); where the report goes. */
static int run_claim_dir(struct run *run, char *report_path, struct sb_error *err)
{
	const struct runner_options *opts = run->opts;
	int k = mkdir_p(opts->run_dir, 0755);

	if (k < 0)
		return sb_error_set(err, k, "run directory %s: cannot create it: %s; choose another (--output DIR)",
				    opts->run_dir, strerror(-k));
	run->run_dir = opts->run_dir;
	run->owner_fd = run_dir_own(opts->run_dir);
	if (run->owner_fd < 0)
		return sb_error_set(err, run->owner_fd, "run directory %s: %s", opts->run_dir,
				    run->owner_fd == -EBUSY ? "another process is executing a run there; choose another (--output DIR)"
							    : strerror(-run->owner_fd));
	run->start_ns = mono_ns();
	run->report_every_ms = opts->report_every_ms ? opts->report_every_ms : 5000;
	run->report_every_default = !opts->report_every_ms;
	run->write_gap_ns = (uint64_t)run->report_every_ms * NSEC_PER_MSEC;
	snprintf(run->report_path, sizeof(run->report_path), "%s/" RUN_DIR_REPORT, opts->run_dir);
	if (report_path)
		snprintf(report_path, PATH_MAX, "%s", run->report_path);
	return 0;
}

/* The run's plan in its progress: repetitions, and how long one takes (for the ETA). */
static unsigned run_plan(struct run *run)
{
	const struct run_spec *spec = run->spec;
	unsigned total = spec_total_repetitions(spec);

	run->progress.reps = total;
	run->progress.rates = RUN_RATES_NONE;
	run->progress.waiting_s = NAN;
	run->rep_planned_s = spec->timing.warmup_s + spec->timing.pre_s + spec->timing.post_s +
			     fmax(2.0, (double)spec->vm.memory / (256.0 * 1024 * 1024)) + 3 +
			     (spec->scenario == SPEC_SCENARIO_DIRTY_LOG ? spec->dirty_log.iterate_s : 0) +
			     (spec->scenario == SPEC_SCENARIO_POSTCOPY_RESTORE ? 5 : 0);
	return total;
}

/* A run that died with knobs set: they go back before anything else (-EBUSY: another run holds them). */
static int run_recover_knobs(struct run *run, const char *state_dir, struct sb_error *err)
{
	struct sb_error e = {};
	int k = knobs_recover(state_dir, run->opts->sysroot, &e);

	if (k < 0 && k != -EBUSY) {
		finish_run(run, REPORT_FAILED, "knobs", e.msg);
		return sb_error_set(err, k, "%s", e.msg);
	}
	return 0;
}

/* The repetitions with the knobs set, the knobs put back, and the run's end. */
static int run_measure(struct run *run, struct knobs_session *knobs, unsigned total, struct sb_error *err)
{
	struct run_failures f = {};
	struct sb_error e = {};
	int ret = run_repetitions(run, knobs, &f);
	int k = knobs_end(knobs, &e);

	if (k < 0 && ret == 0) {
		ret = k;
		snprintf(f.phase, sizeof(f.phase), "knobs");
		snprintf(f.error, sizeof(f.error), "%s", e.msg);
	}
	progress(run, "done", NULL, NULL);
	return run_end(run, ret, &f, total, err);
}

/* The last report write (a run still running here failed), then everything the run held. */
static int run_release(struct run *run, int ret, struct sb_error *err)
{
	if (run->report) {
		struct sb_error e = {};
		if (run->report->state == REPORT_RUNNING)
			finish_run(run, REPORT_FAILED, "run", err && *err->msg ? err->msg : "internal error");
		if (report_write_accounted(run, &e) < 0 && ret == 0) {
			ret = e.code;
			if (err)
				*err = e;
		}
	}
	bpf_source_close(run->bpf);
	report_free(run->report);
	free(run->guest_image);
	close(run->owner_fd); /* after the last report write: the run is over */
	hostvm_run_free(run->hostvm);
	placement_done(&run->placement);
	if (run->own_placed)
		spec_done(&run->placed);
	return ret;
}

int runner_execute(const struct run_spec *spec, const struct runner_options *opts, char *report_path,
		   struct sb_error *err)
{
	struct runner_options with_qemu;
	struct run run = { .spec = spec, .opts = opts, .owner_fd = -1 };
	struct knobs_session *knobs = NULL;
	struct spec_knobs all = {};
	char id[REPORT_ID_MAX], state_dir[PATH_MAX];
	unsigned total;
	int k, ret = 0;

	if (!opts || !opts->run_dir || !*opts->run_dir)
		return sb_error_set(err, -EINVAL, "runner: no run directory given");
	k = spec_validate(spec, err);
	if (k < 0)
		return k;
	if (!opts->qemu_binary && spec->vm.qemu) {
		/* the spec's QEMU where the caller named none (--qemu wins) */
		with_qemu = *opts;
		with_qemu.qemu_binary = spec->vm.qemu;
		opts = run.opts = &with_qemu;
	}
	k = run_claim_dir(&run, report_path, err);
	if (k < 0)
		return k;

	pick_run_id(opts, id);
	ret = build_report(&run, id, err);
	if (ret < 0)
		goto out;
	total = run_plan(&run);
	write_report(&run);
	if (run.write_error) {
		ret = sb_error_set(err, run.write_error, "%s", run.write_msg);
		goto out;
	}

	pick_state_dir(opts, state_dir, sizeof(state_dir));
	ret = run_recover_knobs(&run, state_dir, err);
	if (ret >= 0)
		ret = run_preflight(&run, err);
	if (ret >= 0)
		ret = run_knobs_begin(&run, state_dir, id, &all, &knobs, err);
	if (ret < 0)
		goto out;
	ret = run_measure(&run, TAKE_PTR(knobs), total, err);

out:
	knobs_end(knobs, NULL);
	spec_knobs_done(&all);
	return run_release(&run, ret, err);
}
