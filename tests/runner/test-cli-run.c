// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `snapbench run --local` (without the daemon) as users and CI call it: exit codes (0, 2 bad flags or
 * spec, 4 preflight, 6 cancelled by SIGTERM), --json and --print-spec
 * output, and the crash path: snapbench SIGKILLed mid-run with a knob set
 * takes its QEMU with it (PR_SET_PDEATHSIG) and leaves the knob journal,
 * and the next `snapbench run` on the same results directory restores the
 * knob before anything else; two runs with different results (and state)
 * directories that set the same sysctl go one after the other (the
 * host-wide knob lock), and the sysctl ends at its original value.
 *
 * argv: validate-report.py schema snapbench [case]
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "knobs.h"
#include "macro.h"
#include "run-dir.h"
#include "run-test.h"
#include "test-accel.h"

#define KNOB_FILE "/proc/sys/kernel/printk_ratelimit"

static const char *snapbench;
static const char *dir;
static char out[PATH_MAX], errf[PATH_MAX];
static long knob_original = -1;

static void restore_knob(void)
{
	run_test_restore_sysctl(KNOB_FILE, knob_original);
}

/* Starts `snapbench run --local --accel kvm|tcg ARGS...`, its stdout and stderr to out_path and err_path. */
static pid_t sb_async_to(const char *const *args, const char *out_path, const char *err_path)
{
	char *argv[64];
	size_t n = 0;

	argv[n++] = (char *)snapbench;
	argv[n++] = "run";
	argv[n++] = "--local";
	argv[n++] = "--accel"; /* kvm, or tcg here on a machine without /dev/kvm */
	argv[n++] = (char *)test_accel();
	for (; *args && n < 62; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	return run_test_spawn_async(argv, out_path, err_path);
}

static pid_t sb_async(const char *const *args)
{
	return sb_async_to(args, out, errf);
}

/* Runs it to its end: its exit status (or 128+signal). */
static int sb(const char *const *args)
{
	return run_test_wait(sb_async(args));
}

/* The single run directory under results (its name is the run id). */
static const char *only_run(const char *results)
{
	static char path[PATH_MAX];
	DIR *d = opendir(results);
	struct dirent *e;
	int n = 0;

	CHECK(d);
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", results, e->d_name);
			n++;
		}
	closedir(d);
	CHECK_MSG(n == 1, "%d run directories in %s", n, results);
	return path;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Waits (bounded: a hang must fail, not stall CI) until cond() holds. */
#define WAIT_FOR(cond, seconds, what)                                          \
	do {                                                                   \
		int _i;                                                        \
		for (_i = 0; _i < (seconds) * 10 && !(cond); _i++)             \
			sleep_ms(100);                                         \
		CHECK_MSG((cond), "%s did not happen within %d s", what, seconds); \
	} while (0)

static const char *const quick[] = { "-n", "1", "--warmup", "0.5", "--pre", "1", "--post", "1", "--interval", "250", NULL };

static void test_usage_errors(void)
{
	char spec[PATH_MAX];
	FILE *f;

	CHECK(sb((const char *const[]){ "--memory", "12Q", NULL }) == 2);
	CHECK_MSG(strstr(run_test_read_file(errf), "--memory: must be a size"), "%s", run_test_read_file(errf));
	CHECK(sb((const char *const[]){ "--pre", "-1", NULL }) == 2);
	CHECK(strstr(run_test_read_file(errf), "--pre: must be > 0 (got -1)"));
	CHECK(sb((const char *const[]){ "--bogus", NULL }) == 2);
	CHECK(sb((const char *const[]){ "extra", NULL }) == 2);
	CHECK(strstr(run_test_read_file(errf), "unexpected argument 'extra'"));

	snprintf(spec, sizeof(spec), "%s/bad.json", dir);
	f = fopen(spec, "w");
	CHECK(f);
	fputs("{\"vm\": {\"memroy\": \"1G\"}}\n", f);
	fclose(f);
	CHECK(sb((const char *const[]){ "--spec", spec, NULL }) == 2);
	CHECK_MSG(strstr(run_test_read_file(errf), "spec.vm.memroy: unknown field") &&
			  strstr(run_test_read_file(errf), "bad.json"),
		  "%s", run_test_read_file(errf));

	/* a spec file plus flags: the flags win, the result is printed */
	f = fopen(spec, "w");
	CHECK(f);
	fputs("{\"repetitions\": 3, \"vm\": {\"memory\": \"512M\"}}\n", f);
	fclose(f);
	CHECK(sb((const char *const[]){ "--memory", "128M", "--spec", spec, "--print-spec", NULL }) == 0);
	struct json_object *j = json_tokener_parse(run_test_read_file(out));
	CHECK(j);
	CHECK(jnum(j, "repetitions") == 3 && jnum(j, "vm/memory") == 128 << 20);
	json_object_put(j);
}

static void test_preflight_exit(void)
{
	char results[PATH_MAX];

	snprintf(results, sizeof(results), "%s/preflight", dir);
	CHECK(sb((const char *const[]){ "--output", results, "--qemu", "/nonexistent/qemu", NULL }) == 4);
	CHECK(strstr(run_test_read_file(errf), "/nonexistent/qemu"));
	CHECK(strstr(run_test_read_file(out), "report: "));
	char report[PATH_MAX + 16];
	snprintf(report, sizeof(report), "%s/" RUN_DIR_REPORT, only_run(results));
	run_test_validate(report);

	/* a guest larger than the host's available memory, even with the null sink (no disk check) */
	snprintf(results, sizeof(results), "%s/preflight-memory", dir);
	CHECK(sb((const char *const[]){ "--output", results, "--sink", "null", "--memory", "1T", NULL }) == 4);
	CHECK_MSG(strstr(run_test_read_file(errf), "the guest's 1048576 MiB of RAM (spec.vm.memory) exceed the"), "%s",
		  run_test_read_file(errf));
	snprintf(report, sizeof(report), "%s/report.json", only_run(results));
	run_test_validate(report);
	struct json_object *r = run_test_load(report);
	CHECK(!strcmp(jstr(r, "state"), "failed") && strstr(jstr(r, "error/message"), "MemAvailable"));
	json_object_put(r);
}

static void test_json_run(void)
{
	char results[PATH_MAX];
	const char *args[32] = { "--output", NULL, "--json", "--sink", "null", "--label", "v6.18", NULL };
	size_t n = 7;

	snprintf(results, sizeof(results), "%s/json", dir);
	args[1] = results;
	for (const char *const *q = quick; *q; q++)
		args[n++] = *q;
	args[n] = NULL;
	CHECK_MSG(sb(args) == 0, "%s", run_test_read_file(errf));
	struct json_object *j = json_tokener_parse(run_test_read_file(out));
	CHECK_MSG(j, "stdout is not JSON: %s", run_test_read_file(out));
	CHECK(!strcmp(jstr(j, "state"), "completed"));
	CHECK(!strcmp(jstr(j, "arms/0/label"), "v6.18"));
	/* the outcome's headline figures: under TCG (no /dev/kvm here) KVM's and BPF's are not counted, the guest's are */
	CHECK(jnum(j, test_kvm() ? "arms/0/windows/snapshot/invalidations_per_s/median"
				  : "arms/0/windows/snapshot/guest_ops_per_s/median") > 0);
	run_test_validate(jstr(j, "report"));
	struct json_object *r = run_test_load(jstr(j, "report"));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/sink"), "null"));
	CHECK(jnull(r, "repetitions/0/snapshot/file_bytes"));
	json_object_put(r);
	json_object_put(j);
	/* progress went to stderr */
	CHECK(strstr(run_test_read_file(errf), "snapshot"));
}

static void test_sigterm(void)
{
	char results[PATH_MAX], report[PATH_MAX + 16];
	const char *args[] = { "--output", NULL, "-n", "3", "--interval", "250", NULL };
	pid_t pid;

	snprintf(results, sizeof(results), "%s/sigterm", dir);
	args[1] = results;
	pid = sb_async(args);
	WAIT_FOR(strstr(run_test_read_file(errf), ": pre"), 120, "the pre window");
	CHECK(kill(pid, SIGTERM) == 0);
	CHECK(run_test_wait(pid) == 6);
	snprintf(report, sizeof(report), "%s/" RUN_DIR_REPORT, only_run(results));
	run_test_validate(report);
	struct json_object *r = run_test_load(report);
	CHECK(!strcmp(jstr(r, "state"), "cancelled"));
	char needle[128];
	snprintf(needle, sizeof(needle), "snapbench-%s-rep", jstr(r, "id"));
	CHECK(run_test_count_processes(needle) == 0);
	json_object_put(r);
}

static void test_crash_recovery(void)
{
	char results[PATH_MAX], knob[64], journal[PATH_MAX + 32], needle[128];
	const char *args[] = { "--output", NULL, "-n", "2", "--knob", NULL, "--interval", "250", NULL };
	const char *run_dir;
	pid_t pid;

	knob_original = run_test_sysctl_locked(KNOB_FILE);
	CHECK(knob_original >= 0);
	test_at_exit(restore_knob);
	snprintf(results, sizeof(results), "%s/crash", dir);
	snprintf(knob, sizeof(knob), "sysctl:kernel.printk_ratelimit=%ld", knob_original + 5);
	args[1] = results;
	args[5] = knob;
	pid = sb_async(args);
	WAIT_FOR(strstr(run_test_read_file(errf), ": pre"), 120, "the pre window");
	CHECK(run_test_sysctl(KNOB_FILE) == knob_original + 5);
	run_dir = only_run(results);
	snprintf(needle, sizeof(needle), "snapbench-%s-rep", strrchr(run_dir, '/') + 1);
	CHECK(run_test_count_processes(needle) == 1);

	CHECK(kill(pid, SIGKILL) == 0);
	CHECK(run_test_wait(pid) == 128 + SIGKILL);
	/* its QEMU dies with it; the knob stays changed, and the journal says what to restore */
	WAIT_FOR(run_test_count_processes(needle) == 0, 30, "QEMU's exit after snapbench was killed");
	snprintf(journal, sizeof(journal), "%s/knobs.journal", results);
	if (access(journal, F_OK) < 0) {
		/* the first run on this host to take the knob lock restores a dead holder's journal: another one did */
		CHECK(run_test_sysctl_locked(KNOB_FILE) == knob_original);
		printf("another run on this host restored the knob first\n");
		return;
	}
	CHECK(run_test_sysctl(KNOB_FILE) == knob_original + 5);
	/* the partial report is a valid document, still "running" */
	char report[PATH_MAX + 16];
	snprintf(report, sizeof(report), "%s/" RUN_DIR_REPORT, run_dir);
	run_test_validate(report);

	/* the next run on the same results directory restores it first (even one that fails preflight) */
	CHECK(sb((const char *const[]){ "--output", results, "--qemu", "/nonexistent/qemu", NULL }) == 4);
	CHECK_MSG(run_test_sysctl_locked(KNOB_FILE) == knob_original, "the knob is %ld, expected %ld restored",
		  run_test_sysctl_locked(KNOB_FILE), knob_original);
	CHECK(access(journal, F_OK) < 0);
}

/*
 * Two runs, each with its own results and state directory, set the same
 * sysctl: the second waits for the first to end (the host-wide knob lock),
 * reads the true original then, and the sysctl ends where it started.
 * Without the lock the second would take the first run's value for the
 * original and leave it set.
 */
static pid_t lock_runs[2];

/* On a failed check: no run is left stopped, holding the knob lock (their QEMUs die with them). */
static void kill_lock_runs(void)
{
	for (int i = 0; i < 2; i++)
		if (lock_runs[i] > 0 && kill(lock_runs[i], SIGKILL) == 0)
			waitpid(lock_runs[i], NULL, 0);
}

static void test_knob_lock(void)
{
	char results_a[PATH_MAX], results_b[PATH_MAX], knob_a[64], knob_b[64], out_b[PATH_MAX], err_b[PATH_MAX];
	const char *args_a[] = { "--output", NULL, "--knob", NULL, "-n", "1", "--warmup", "0.5", "--pre", "2",
				 "--post", "1", "--interval", "250", NULL };
	const char *args_b[] = { "--output", NULL, "--knob", NULL, "-n", "1", "--warmup", "0.5", "--pre", "1",
				 "--post", "1", "--interval", "250", NULL };
	struct knobs_holder h;
	pid_t a, b;

	knob_original = run_test_sysctl_locked(KNOB_FILE);
	CHECK(knob_original >= 0);
	test_at_exit(restore_knob);
	snprintf(results_a, sizeof(results_a), "%s/lock-a", dir);
	snprintf(results_b, sizeof(results_b), "%s/lock-b", dir);
	snprintf(knob_a, sizeof(knob_a), "sysctl:kernel.printk_ratelimit=%ld", knob_original + 5);
	snprintf(knob_b, sizeof(knob_b), "sysctl:kernel.printk_ratelimit=%ld", knob_original + 7);
	snprintf(out_b, sizeof(out_b), "%s/stdout-b", dir);
	snprintf(err_b, sizeof(err_b), "%s/stderr-b", dir);
	args_a[1] = results_a;
	args_a[3] = knob_a;
	args_b[1] = results_b;
	args_b[3] = knob_b;

	test_at_exit(kill_lock_runs); /* runs before restore_knob */
	a = lock_runs[0] = sb_async(args_a);
	WAIT_FOR(strstr(run_test_read_file(errf), ": pre"), 120, "the first run's pre window");
	/* held still (SIGSTOP) with its knob set, so that the second run meets it for sure */
	CHECK(kill(a, SIGSTOP) == 0);
	CHECK(run_test_sysctl(KNOB_FILE) == knob_original + 5);
	CHECK(knobs_host_holder(NULL, &h) == 1);
	CHECK_MSG(h.pid == a && !strcmp(h.run_id, strrchr(only_run(results_a), '/') + 1),
		  "the host-wide knob lock names pid %d run %s", (int)h.pid, h.run_id);

	b = lock_runs[1] = sb_async_to(args_b, out_b, err_b);
	WAIT_FOR(strstr(run_test_read_file(err_b), "knobs"), 300, "the second run's wait for the knob lock");
	CHECK(run_test_sysctl(KNOB_FILE) == knob_original + 5); /* the second has not touched it */
	CHECK(knobs_host_holder(NULL, &h) == 1 && h.pid == a);
	CHECK(kill(a, SIGCONT) == 0);

	int st_a = run_test_wait(a), st_b;
	lock_runs[0] = 0;
	CHECK_MSG(st_a == 0, "the first run: %s", run_test_read_file(errf));
	st_b = run_test_wait(b);
	lock_runs[1] = 0;
	CHECK_MSG(st_b == 0, "the second run: %s", run_test_read_file(err_b));
	CHECK_MSG(run_test_sysctl_locked(KNOB_FILE) == knob_original, "the sysctl is %ld after both runs, expected %ld",
		  run_test_sysctl_locked(KNOB_FILE), knob_original);
	printf("second run:\n%s", run_test_read_file(err_b));
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "usage", test_usage_errors }, { "preflight", test_preflight_exit }, { "json", test_json_run },
		{ "sigterm", test_sigterm },    { "crash", test_crash_recovery }, { "knob-lock", test_knob_lock },
	};

	run_test_init(argc, argv);
	CHECK(argc > 3);
	snapbench = argv[3];
	run_test_require_root();
	dir = test_tmpdir("cli-run");
	snprintf(out, sizeof(out), "%s/stdout", dir);
	snprintf(errf, sizeof(errf), "%s/stderr", dir);
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 4 ? argv[4] : NULL);
	return 0;
}
