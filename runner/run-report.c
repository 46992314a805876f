// SPDX-License-Identifier: GPL-2.0-or-later
/* A run's report: built at the start, rewritten as the run goes (with its CPU and gap), ended; and its progress. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "clock.h"
#include "config.h"
#include "drain.h"
#include "host.h"
#include "run.h"
#include "vm.h"

void run_record_usage(struct run *run)
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
void run_account_vm_end(struct run *run, struct vm *vm)
{
	if (!vm)
		return;
	run->cpu_ns[REPORT_CPU_TELEMETRY] += drain_cpu_ns(vm->telemetry);
	run->telemetry_reads += drain_reads(vm->telemetry);
	if (run->live_vm == vm)
		run->live_vm = NULL;
}

/* The report written, its CPU accounted (report_s). */
int run_write_report_accounted(struct run *run, struct sb_error *err)
{
	uint64_t t = thread_cpu_ns();
	int k;

	run_record_usage(run);
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

bool run_write_due(const struct run *run)
{
	return mono_ns() - run->last_write_ns >= run->write_gap_ns;
}

void run_write_report(struct run *run)
{
	struct sb_error e = {};
	uint64_t cpu = run->cpu_ns[REPORT_CPU_REPORT];
	int k;

	k = run_write_report_accounted(run, &e);
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

/* rep_start_ns: the repetition under way's start (0: none); snapshot_fraction: NAN outside its scenario's window */
void run_progress(struct run *run, const char *step, uint64_t rep_start_ns, double snapshot_fraction,
		     const struct run_rates *rates)
{
	struct runner_progress *p = &run->progress;
	double rep_elapsed = rep_start_ns ? (double)(mono_ns() - rep_start_ns) / 1e9 : 0;
	double within = run->rep_planned_s > 0 ? rep_elapsed / run->rep_planned_s : 0;

	if (!run->opts->progress)
		return;
	p->step = step;
	p->elapsed_s = (double)(mono_ns() - run->start_ns) / 1e9;
	p->rep_elapsed_s = rep_elapsed;
	if (within > 0.99)
		within = 0.99;
	p->fraction = p->reps ? ((double)run->reps_done + (rep_start_ns ? within : 0)) / p->reps : 0;
	if (p->fraction > 1)
		p->fraction = 1;
	if (rates)
		p->rates = *rates;
	p->snapshot_fraction = snapshot_fraction;
	run->opts->progress(p, run->opts->userdata);
}

static json_object *knobs_json(const struct spec_knobs *k)
{
	json_object *o = json_object_new_object();

	for (size_t i = 0; o && i < k->n; i++)
		json_object_object_add(o, k->items[i].name, json_object_new_string(k->items[i].value));
	return o;
}

int run_build_report(struct run *run, const char *id, struct sb_error *err)
{
	const struct run_spec *spec = run->asked;
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

void run_finish(struct run *run, enum report_state state, const char *phase, const char *msg)
{
	run->report->state = state;
	run->report->finished_ns = realtime_ns();
	if (msg)
		report_error_set(&run->report->error, phase, msg);
}

