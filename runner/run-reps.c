// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The two kinds of repetition (rep.h's phases filled twice): in a host VM
 * (hostvm-rep.h) or on this host (local-rep.h), chosen once for the run,
 * and the run's side of each: the repetition's record (each kind's prepare
 * asks for it), its progress, the report's rewrites.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hostvm-rep.h"
#include "run.h"
#include "vm.h"

/* A repetition's record in the report and the run's progress, of either kind (their phase tables' prepare calls it). */
static int rep_record(void *userdata, unsigned index, size_t arm, struct report_rep **rep, struct sb_error *err)
{
	struct run *run = userdata;
	int k = report_add_rep(run->report, arm, realtime_ns(), rep);

	if (k < 0)
		return sb_error_set(err, k, "out of memory");
	run->progress.rep = index;
	run->progress.arm = run->spec->arms[arm].label;
	run->progress.rates = RUN_RATES_NONE;
	run->progress.sample_window = NULL;
	return 0;
}

/* ---- kernel arms: the repetition runs in a host VM (hostvm-rep.h) ---- */

struct host_vm_rep {
	struct run *run;
	uint64_t start_ns;
	char step[32];
};

/* The run engine's progress inside the host VM (hostvm-rep.h): its step, rates and window become ours. */
static void host_vm_progress(const struct runner_progress *hp, void *userdata)
{
	struct host_vm_rep *h = userdata;
	const char *step = hp->step ? hp->step : "host-vm";
	bool changed = strcmp(h->step, step) != 0;
	int w = report_window_from_string(hp->sample_window);

	snprintf(h->step, sizeof(h->step), "%s", step);
	if (w >= 0)
		h->run->progress.sample_window = report_window_to_string(w);
	run_progress(h->run, h->step, h->start_ns, NAN, &hp->rates);
	/* at each step (the host VM's pid is in the report from its boot on), else when due */
	if (changed || run_write_due(h->run))
		run_write_report(h->run);
}

/* The repetition's record (hostvm-rep.h's record), in the report written at once: the run shows it before the boot. */
static int host_vm_record(void *userdata, unsigned index, size_t arm, struct report_rep **rep, struct sb_error *err)
{
	struct host_vm_rep *h = userdata;
	int k = rep_record(h->run, index, arm, rep, err);

	if (k >= 0)
		run_write_report(h->run);
	return k;
}

/* The repetition in a host VM: its phases are hostvm-rep.c's (hostvm_rep_run()), its record made by theirs. */
static int run_rep_host_vm(struct run *run, unsigned index, size_t arm, bool *fatal, struct sb_error *err)
{
	struct host_vm_rep h = { .run = run, .start_ns = mono_ns() };
	struct hostvm_rep_ctx ctx = {
		.spec = run->spec,
		.run_dir = run->run_dir,
		.qemu_binary = run->opts->qemu_binary,
		.guest_image = run->guest_image,
		.index = index,
		.arm = arm,
		.report = run->report,
		.cancel = run->opts->cancel,
		.record = host_vm_record,
		.progress = host_vm_progress,
		.userdata = &h,
	};

	*fatal = false;
	return hostvm_rep_run(run->hostvm, &ctx, err);
}

/* ---- on this host: local-rep.h, with the run's side of it here ---- */

static void local_progress(void *userdata, const struct local_rep_progress *lp)
{
	struct run *run = userdata;
	struct runner_progress *p = &run->progress;

	if (lp->sample_window)
		p->sample_window = lp->sample_window;
	p->waiting_for = lp->waiting_for;
	if (lp->waiting_for)
		p->waiting_s = lp->waiting_s;
	run_progress(run, lp->step, lp->rep_start_ns, lp->snapshot_fraction, lp->rates);
	p->waiting_for = NULL;
	p->waiting_s = NAN;
}

static void local_write_report(void *userdata)
{
	run_write_report(userdata);
}

static bool local_write_due(void *userdata)
{
	return run_write_due(userdata);
}

static int local_write_failed(void *userdata, struct sb_error *err)
{
	struct run *run = userdata;

	return run->write_error ? sb_error_set(err, run->write_error, "%s", run->write_msg) : 0;
}

static void local_vm_started(void *userdata, struct vm *vm)
{
	struct run *run = userdata;

	run->live_vm = vm;
}

static void local_vm_ended(void *userdata, struct vm *vm)
{
	run_account_vm_end(userdata, vm);
}

static int run_rep_local(struct run *run, unsigned index, size_t arm, bool *fatal, struct sb_error *err)
{
	return local_rep_run(&run->local, index, arm, fatal, err);
}

/* What a repetition on this host takes from the run, once preflight knows QEMU. */
static void run_local_reps(struct run *run)
{
	const struct runner_options *opts = run->opts;

	run->local = (struct local_rep_run){
		.spec = run->spec,
		.report = run->report,
		.run_dir = run->run_dir,
		.guest_image = run->guest_image,
		.qemu_binary = opts->qemu_binary,
		.dest_qemu_binary = opts->dest_qemu_binary,
		.scratch_dir = opts->scratch_dir,
		.qmp_timeout_ms = opts->qmp_timeout_ms,
		.stop_timeout_ms = opts->stop_timeout_ms,
		.cancel = opts->cancel,
		.tcg = !strcmp(run->placement.accel, "tcg"),
		.migrate_channels = run->migrate_channels,
		.run_with_user = run->run_with_user,
		.cpu_ns = run->cpu_ns,
		.wakeups = &run->wakeups,
		.userdata = run,
		.record = rep_record,
		.progress = local_progress,
		.write_report = local_write_report,
		.write_due = local_write_due,
		.write_failed = local_write_failed,
		.vm_started = local_vm_started,
		.vm_ended = local_vm_ended,
	};
	run->run_rep = run_rep_local;
}


void run_choose_reps(struct run *run)
{
	if (run->placement.host_vm)
		run->run_rep = run_rep_host_vm;
	else
		run_local_reps(run);
}
