/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scenarios: what happens to the VM between the pre and post windows.
 * The runner owns the VM, the sampler and the windows; a scenario owns its
 * action and its own window:
 *
 *   prepare    before the warmup: open sinks, set parameters (the VM runs)
 *   start      at the end of the pre window: begin the action
 *   poll       often (every ~50 ms) during its window: has it ended?
 *   progress   at each sample of its window: the row's migration figures
 *   finish     after its window: collect what the action did
 *   summarize  into the repetition's report
 *   cleanup    always, also after a failure: stop the action, close, delete
 *   deadline   (optional) when the action must have ended, mono_ns(); the
 *              runner bounds its QMP commands in the window by it, so a
 *              QEMU that stops answering cannot hold the run past it
 *   sample_now (optional) asked after each poll: true takes a sample at
 *              once, so a row ends where the action changed phase (a
 *              migration's new pass) rather than at the next interval
 *
 * and what the rest of the engine asks of a scenario before a repetition,
 * each optional:
 *
 *   planned_s     the seconds it adds to a repetition's plan (the ETA)
 *   vm_config     what it sets in the VM's configuration
 *   guest_params  what it sets in the micro guest's parameters
 *   host_needs    what it needs of this host and its QEMU (preflight.c)
 *
 * Adding one is a new scenario-<name>.c and a line in scenario.c's table;
 * the runner is untouched.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "report.h"
#include "spec.h"

struct vm;
struct vm_config;
struct bpf_source;
struct guest_params;

struct scenario_ctx {
	const struct run_spec *spec;
	struct vm *vm;
	const char *run_dir;
	const char *scratch_dir;  /* a snapshot file that is not kept goes here (runner_options.scratch_dir) */
	unsigned rep_index;
	size_t arm;            /* the repetition's arm, an index of spec->arms */
	uint64_t rep_start_ns; /* mono_ns() at the repetition's start */
	unsigned setup_timeout_ms; /* how long the action may stay in its setup state; 0: the scenario's default */
	const struct vm_config *vm_cfg; /* how vm was started (a migration's destination is started alike); may be NULL */
	const char *dest_qemu_binary;   /* a migration's destination QEMU; NULL: vm_cfg's */
	bool migrate_channels;          /* migrate and migrate-incoming in the channels form (QEMU 8.2+) rather than a uri */
	struct bpf_source *bpf;         /* the BPF probes, pointed at vm's QEMU; NULL: none (a scenario may point them at its destination for a while) */
};

/* What a scenario needs of the host, checked before the run (runner/preflight/preflight.c). */
struct scenario_needs {
	const char *userfaultfd;  /* why QEMU's user needs userfaultfd (ends "...: set the knob ..."); NULL: it does not */
	bool background_snapshot; /* QEMU's background-snapshot migration capability */
	bool postcopy_ram;        /* QEMU's postcopy-ram capability */
	bool postcopy_preempt;    /* and postcopy-preempt, in its 8.0 form */
	bool snapshot_file;       /* a file of the guest's RAM in the run (or scratch) directory, unless the sink is null */
};

struct scenario_ops {
	const char *name;
	enum report_window window; /* the window the action runs in */
	bool zap_causes;           /* the BPF probes count SPTE zaps by cause (costs every invalidation: bpf/probes.h) */
	size_t state_size;         /* zeroed state handed to every call */
	int (*prepare)(void *state, const struct scenario_ctx *ctx, struct sb_error *err);
	/* -EOPNOTSUPP: the host refuses the action; every repetition would be refused alike */
	int (*start)(void *state, const struct scenario_ctx *ctx, struct sb_error *err);
	/* *done when the action ended (successfully: 0; failed: < 0 with err) */
	int (*poll)(void *state, const struct scenario_ctx *ctx, bool *done, struct sb_error *err);
	/* fills the row's migration figures; 0 or < 0 (then no figures) */
	int (*progress)(void *state, const struct scenario_ctx *ctx, struct report_migration *m,
			double *fraction, struct sb_error *err);
	int (*finish)(void *state, const struct scenario_ctx *ctx, struct sb_error *err);
	void (*summarize)(void *state, const struct scenario_ctx *ctx, struct report_rep *rep);
	void (*cleanup)(void *state, const struct scenario_ctx *ctx);
	uint64_t (*deadline)(void *state, const struct scenario_ctx *ctx); /* UINT64_MAX: none (yet) */
	bool (*sample_now)(void *state);

	double (*planned_s)(const struct run_spec *spec);
	void (*vm_config)(const struct run_spec *spec, struct vm_config *cfg);
	void (*guest_params)(const struct run_spec *spec, struct guest_params *p);
	void (*host_needs)(const struct run_spec *spec, struct scenario_needs *n);
};

/* The scenario's answers, with the defaults of a scenario that has no hook (0 s, nothing set, nothing needed). */
double scenario_planned_s(const struct scenario_ops *ops, const struct run_spec *spec);
void scenario_vm_config(const struct scenario_ops *ops, const struct run_spec *spec, struct vm_config *cfg);
void scenario_guest_params(const struct scenario_ops *ops, const struct run_spec *spec, struct guest_params *p);
void scenario_host_needs(const struct scenario_ops *ops, const struct run_spec *spec, struct scenario_needs *n);

/* The scenario spec.scenario names (scenario.c's table); NULL for a value outside the enum. */
const struct scenario_ops *scenario_find(enum spec_scenario s);

extern const struct scenario_ops scenario_background_snapshot;
extern const struct scenario_ops scenario_dirty_log;
extern const struct scenario_ops scenario_postcopy_restore;
extern const struct scenario_ops scenario_numa_hinting;
extern const struct scenario_ops scenario_uffd_restore;
