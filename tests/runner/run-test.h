/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers for the run engine's integration tests: runs whose report is
 * validated against the JSON Schema, checks that no QEMU is left behind,
 * the host-wide knob lock, and the cases of a test program. Temporary
 * directories and JSON paths come from tests/lib (test-tmp.h, test-json.h).
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "test-json.h"
#include "test-tmp.h"

struct run_spec;
struct runner_options;
struct sb_error;

/* argv[1] = validate-report.py, argv[2] = run-1.schema.json (from meson). */
void run_test_init(int argc, char **argv);

/* Skips (77) unless we are root (BPF, knobs, QEMU users). */
void run_test_require_root(void);

/*
 * spec_init() with vm.accel set to what this host has (tests/lib/test-accel.h):
 * kvm, or tcg without /dev/kvm, so the run's flows are tested either way.
 */
void run_test_spec_init(struct run_spec *spec);

/*
 * Whether report r's guest ran under KVM, so that KVM's statistics and the
 * BPF probes counted it. Under TCG it checks instead that the report says
 * so (accel tcg, timing emulated) and that every kvm.* and bpf.* counter is
 * unavailable with TCG as the reason, never a silent 0.
 */
bool run_test_kvm_counted(struct json_object *r);

/* Validates the report at path: schema and the rules of validate-report.py. */
void run_test_validate(const char *report_path);

/*
 * The last report run_test_run() produced has the keys and types of
 * shapes/NAME.json (report-shape.py: counters' and metrics' names and
 * nulls are the host's); $SNAPBENCH_REPORT_SHAPE_WRITE=1 writes that file
 * from the report instead, once, when a report's form is meant to change.
 */
void run_test_expect_shape(const char *name);

/* Loads a report (fails the test if it cannot). */
struct json_object *run_test_load(const char *report_path);

/*
 * runner_execute(spec, opts) into opts->run_dir, or (when that is NULL) into
 * RUN under a fresh temp directory named name (test_tmpdir()); prints its result and how
 * long it took, validates the report and loads it into *report. Returns
 * runner_execute()'s result.
 */
int run_test_run(const char *name, const struct run_spec *spec, struct runner_options *opts,
		 struct json_object **report, struct sb_error *err);

/*
 * The report's host.qemu names binary (when not NULL) and, when binary is
 * the tier's $SNAPBENCH_QEMU with $SNAPBENCH_QEMU_WANT (test-qemu.h), a
 * version of its series and the features the probe found. run_test_run() checks every report so; with
 * $SNAPBENCH_QEMU it runs that QEMU unless the test named one.
 */
void run_test_expect_qemu(struct json_object *report, const char *binary);

/* Fails the test if a QEMU of the run of report (named snapbench-RUNID-repN) still runs. */
void run_test_expect_no_qemu(struct json_object *report);

/* Processes whose command line contains needle (QEMUs are named snapbench-RUNID-repN). */
unsigned run_test_count_processes(const char *needle);

/* Runs argv, stdout/stderr to files under dir; returns the exit status (or 128+signal). */
int run_test_spawn(char *const argv[], const char *out_path, const char *err_path);

/* The same without waiting: the child's pid, for run_test_wait(). */
pid_t run_test_spawn_async(char *const argv[], const char *out_path, const char *err_path);

/* Reaps pid: its exit status (or 128+signal). */
int run_test_wait(pid_t pid);

/* Reads a whole (small) file into a static buffer; "" if missing. */
const char *run_test_read_file(const char *path);

/* Integer in a /proc/sys file, or -1. */
long run_test_sysctl(const char *path);
void run_test_write_sysctl(const char *path, long value);

/*
 * The host-wide knob lock (runner/knobs.h), which every snapbench run that
 * sets knobs holds meanwhile: a test reads an original value, checks a
 * restored one, or writes a sysctl itself only while holding it, so that no
 * run (its own, or another one on this host) changes the value meanwhile.
 * Waits up to 10 minutes for it. Never hold it across a run that sets knobs.
 */
int run_test_knobs_lock(void);
void run_test_knobs_unlock(int fd);

/* run_test_sysctl() under the host-wide knob lock. */
long run_test_sysctl_locked(const char *path);

/* Under the lock: writes value unless the sysctl already has it (at exit: the value the test found). */
void run_test_restore_sysctl(const char *path, long value);

/* A test program's cases, one meson test() each (the case's name in its arguments). */
struct run_test_case {
	const char *name;
	void (*fn)(void);
};

/* Runs the case named only, or every case when only is NULL, each after a "--- NAME" line. */
void run_test_cases(const struct run_test_case *cases, size_t n, const char *only);
