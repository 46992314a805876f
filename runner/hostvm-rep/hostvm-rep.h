/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel arms (docs/kernel-arms.md): a repetition in a host VM booting the
 * arm's kernel. hostvm_run_prepare() is the preflight of such a run: it
 * identifies each arm's kernel (hostvm/kernel-image.h), resolves the
 * modules its host VM loads, picks the accelerator and finds the init and
 * snapbench-hostvm-run; it records all that per arm in the report.
 * hostvm_rep_run() runs one repetition through the phases of rep.h:
 * prepare makes its record in the report (ctx->record: the run's side) and
 * fills in the host VM's part; boot writes the inner spec (one arm, one repetition, the knobs that are not
 * load-time module parameters), packs the initramfs and starts QEMU; follow
 * reads the progress port within the boot and run deadlines (or kills
 * QEMU); take-over drains the port and takes the repetition over from the
 * report the run engine inside wrote through the results share; end kills
 * and frees the host VM; again gives a silent one a fresh host VM, once.
 */
#pragma once

#include <signal.h>

#include "error.h"
#include "report.h"
#include "run-progress.h"
#include "spec.h"

/* a kernel arm's host VM kernel command line, before the arm's module parameters and host_vm.cmdline */
#define HOSTVM_CMDLINE "console=ttyS0 quiet panic=-1 rdinit=/init pci=noacpi cryptomgr.notests"

/* the runner inside (libexec/hostvm-run/run.c) sends {"event":"alive"} this often while it runs */
#define HOSTVM_HEARTBEAT_S 5

struct hostvm_run;

struct hostvm_rep_ctx {
	const struct run_spec *spec;
	const char *run_dir;
	const char *qemu_binary;       /* NULL: QEMU_DEFAULT_BINARY (outside and inside) */
	const char *guest_image;
	unsigned index;                /* the repetition's index in the run */
	size_t arm;
	struct report *report;
	volatile sig_atomic_t *cancel;
	/* the repetition's record in the report, the run's progress set to it (prepare, once: not again on a retry) */
	int (*record)(void *userdata, unsigned index, size_t arm, struct report_rep **rep, struct sb_error *err);
	/* the run engine's progress inside (run-progress.h); before it is up, step "host-vm-boot" and no rates */
	void (*progress)(const struct runner_progress *p, void *userdata);
	void *userdata;                /* record's and progress's */
};

/* run_dir: where the arms' unpacked kernels go (removed by hostvm_run_free()); NULL: boot the bzImages. */
int hostvm_run_prepare(const struct run_spec *spec, struct report *report, const char *run_dir,
		       struct hostvm_run **ret, struct sb_error *err);
void hostvm_run_free(struct hostvm_run *hr);

/* What one host VM boot took (bench/hostvm-boot). */
struct hostvm_boot_figures {
	double boot_s;          /* QEMU start to the runner inside ready */
	double init_uptime_s;   /* the host VM's uptime when its init had loaded the modules */
	double ready_uptime_s;  /* ... and when the runner was ready (after the 9p root and the dynamic loader) */
	double teardown_s;      /* ready to QEMU's exit (the runner exits, init powers off) */
};

/* Boots ctx->arm's host VM once with a runner that only says it is ready, in work_dir. */
int hostvm_boot_once(struct hostvm_run *hr, const struct hostvm_rep_ctx *ctx, const char *work_dir,
		     struct hostvm_boot_figures *fig, struct sb_error *err);

/* 0 when the repetition completed; < 0 with err (and the repetition failed or cancelled in the report). */
int hostvm_rep_run(struct hostvm_run *hr, const struct hostvm_rep_ctx *ctx, struct sb_error *err);
