/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A repetition on this host as rep.h's phases: the VM started from the
 * spec, the BPF probes on its QEMU, the guest up, the scenario prepared
 * (boot); the windows warmup, pre, the scenario's own and post, each
 * sampled (windows); the scenario cleaned up and the VM stopped
 * (summarize); everything it started stopped and freed, the repetition
 * failed or cancelled with the reason (teardown). Beside it, hostvm-rep/
 * fills the same phases for a repetition in a host VM.
 *
 * What it needs of its run it is given in struct local_rep_run: the run's
 * settings, what the run keeps from one repetition to the next (the BPF
 * probes, the CPU accounts) and the run's side of what happens (its
 * record of the repetition, its progress, its report's rewrites).
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "report.h"
#include "run-progress.h"
#include "spec.h"

struct bpf_source;
struct vm;

/* A step of the repetition, for the run's progress (run-progress.h). */
struct local_rep_progress {
	const char *step;
	uint64_t rep_start_ns;          /* mono_ns() at its start: its share of the ETA */
	const char *sample_window;      /* the window of a sample just taken; NULL: none */
	double snapshot_fraction;       /* how far the scenario's action is; NAN: not in its window */
	const struct run_rates *rates;  /* the sample's headline rates; NULL: none */
	const char *waiting_for;        /* a QMP command QEMU has not answered for waiting_s; NULL: none */
	double waiting_s;
};

struct local_rep_run {
	const struct run_spec *spec;
	struct report *report;
	const char *run_dir;
	const char *guest_image;
	const char *qemu_binary;      /* NULL: QEMU_DEFAULT_BINARY */
	const char *dest_qemu_binary; /* a migration's destination QEMU; NULL: qemu_binary */
	const char *scratch_dir;      /* where a snapshot file that is not kept goes; NULL: run_dir */
	unsigned qmp_timeout_ms;      /* 0: the QMP client's default */
	unsigned stop_timeout_ms;     /* 0: 10 s */
	volatile sig_atomic_t *cancel;
	bool tcg;                     /* the guest runs under TCG (placement.h): no probes */
	bool migrate_channels;        /* QEMU takes migrate's channels argument */
	bool run_with_user;           /* QEMU takes -run-with user= */

	/* kept from one repetition to the next */
	struct bpf_source *bpf;       /* loaded at the first, retargeted for the next; the run closes it */
	uint64_t *cpu_ns;             /* the run's CPU by part, [REPORT_CPU_MAX] */
	uint64_t *wakeups;            /* the run loop's wakeups */

	/* the run's side, each called with userdata */
	void *userdata;
	/* the repetition's record in the report, the run's progress set to it */
	int (*record)(void *userdata, unsigned index, size_t arm, struct report_rep **rep, struct sb_error *err);
	/* the repetition's progress (struct local_rep_progress) */
	void (*progress)(void *userdata, const struct local_rep_progress *p);
	void (*write_report)(void *userdata);
	bool (*write_due)(void *userdata);
	/* < 0 once a rewrite of the report failed, err saying so: the run stops */
	int (*write_failed)(void *userdata, struct sb_error *err);
	/* the repetition's VM started (its drain thread's CPU counts live), and ended (its CPU accounted; vm may be NULL) */
	void (*vm_started)(void *userdata, struct vm *vm);
	void (*vm_ended)(void *userdata, struct vm *vm);
};

/* 0, -ECANCELED, or < 0 with err (*fatal when the next repetition would fail alike). */
int local_rep_run(struct local_rep_run *run, unsigned index, size_t arm, bool *fatal, struct sb_error *err);
