/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers for the run engine's integration tests: temp directories removed
 * at exit (also after a failed CHECK), report validation against the JSON
 * Schema, JSON paths, and checks that no QEMU is left behind.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

/* argv[1] = validate-report.py, argv[2] = run-1.schema.json (from meson). */
void run_test_init(int argc, char **argv);

/* Skips (77) unless /dev/kvm works and we are root (BPF, knobs, QEMU users). */
void run_test_require_kvm_root(void);

/* A fresh temp directory, removed with everything in it at exit. */
const char *run_test_tmpdir(const char *name);

/* Registers a command run at exit, before the directories go (e.g. umount). */
void run_test_at_exit(void (*fn)(void));

/* Validates the report at path: schema and the rules of validate-report.py. */
void run_test_validate(const char *report_path);

/* Loads a report (fails the test if it cannot). */
struct json_object *run_test_load(const char *report_path);

/* "a/b/0/c": object keys and array indexes. NULL if absent (or JSON null). */
struct json_object *jp(struct json_object *o, const char *path);
double jnum(struct json_object *o, const char *path);
const char *jstr(struct json_object *o, const char *path);
/* present and JSON null */
bool jnull(struct json_object *o, const char *path);

/* Processes whose command line contains needle (QEMUs are named snapbench-RUNID-repN). */
unsigned run_test_count_processes(const char *needle);

/* Runs argv, stdout/stderr to files under dir; returns the exit status (or 128+signal). */
int run_test_spawn(char *const argv[], const char *out_path, const char *err_path);

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
