/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One run as runner.c executes it, shared by the files of runner/ only:
 * runner.c (preflight, knobs, the repetitions' loop, the end), run-report.c
 * (the report, its rewrites and the run's progress) and run-reps.c (the
 * two kinds of repetition, chosen once, and the run's side of each).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "local-rep.h"
#include "placement.h"
#include "report.h"
#include "run-progress.h"
#include "runner.h"
#include "spec.h"

struct hostvm_run;
struct vm;

struct run {
	const struct run_spec *asked; /* the spec as given: the report's */
	const struct run_spec *spec;  /* as run: set once, by run_place() (asked, or placed with the kernel it chose) */
	const struct runner_options *opts;
	struct report *report;
	char report_path[PATH_MAX];
	const char *run_dir;
	char *guest_image;
	uint64_t start_ns;
	uint64_t last_write_ns;
	unsigned report_every_ms;
	bool report_every_default;   /* no --report-every: the gap grows with the rewrite's cost (run_write_due()) */
	uint64_t write_gap_ns;       /* the periodic rewrite's gap now */
	double rep_planned_s;
	unsigned reps_done;
	struct runner_progress progress;
	int owner_fd; /* the run directory's owner lock, held while the run executes */
	/* one repetition of the kind placement chose (run_preflight()): on this host, or in a host VM */
	int (*run_rep)(struct run *run, unsigned index, size_t arm, bool *fatal, struct sb_error *err);
	struct local_rep_run local;   /* on this host: what each repetition takes from the run (the probes, loaded at the first) */
	struct hostvm_run *hostvm;    /* kernel arms: each repetition in a host VM (hostvm-rep.h) */
	struct placement placement;   /* where the guest runs (placement.h) */
	struct run_spec placed;       /* the spec as run when placement changed it (a kernel for "auto") */
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

/* the report: its usage figures, a rewrite (accounted, or when due, latching the first failure), its end */
void run_record_usage(struct run *run);
int run_write_report_accounted(struct run *run, struct sb_error *err);
bool run_write_due(const struct run *run);
void run_write_report(struct run *run);
void run_finish(struct run *run, enum report_state state, const char *phase, const char *msg);
/* the report as the run starts: the spec as asked, the host, the arms */
int run_build_report(struct run *run, const char *id, struct sb_error *err);
/* a repetition's VM ended: its drain thread's CPU and reads join the run's */
void run_account_vm_end(struct run *run, struct vm *vm);
/* the run's progress at step; rep_start_ns: the repetition under way's start (0: none); snapshot_fraction NAN: none */
void run_progress(struct run *run, const char *step, uint64_t rep_start_ns, double snapshot_fraction,
		  const struct run_rates *rates);

/* run->run_rep: a repetition in a host VM (placement chose host VMs), else on this host; once, after preflight */
void run_choose_reps(struct run *run);
