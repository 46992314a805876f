// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Failure paths of a run, each for real, each ending in a clear error and a
 * report that validates and is marked failed (or cancelled):
 *
 *   qemu-missing    no QEMU binary: preflight says so; without preflight the
 *                   first repetition fails at vm-start and the run stops
 *   qemu-killed     QEMU killed mid-snapshot: that repetition fails with the
 *                   reason, the next one completes, no QEMU is left
 *   qemu-stopped    QEMU stopped (SIGSTOP) mid-snapshot: the snapshot's
 *                   deadline fires on time and the report names it; while
 *                   QEMU does not answer, the progress says which QMP
 *                   command the run waits for and how long it has
 *   sink-full       the snapshot file on a full (tiny) tmpfs: preflight says
 *                   so; without preflight the snapshot fails with QEMU's
 *                   error and the partial file is removed
 *   uffd-refused    QEMU as an unprivileged user without userfaultfd (the
 *                   knob sysctl:vm.unprivileged_userfaultfd=0 for the run,
 *                   never a write of our own): preflight says so; without
 *                   preflight QEMU refuses the background snapshot and the
 *                   run stops; with the knob at 1 it runs, and the sysctl
 *                   ends at the value it had
 *   report-full     the run directory's file system fills up mid-run (a
 *                   filler file on a tiny tmpfs, written in the pre window
 *                   until ENOSPC): the next report rewrite fails, the run
 *                   stops at once instead of measuring what no report would
 *                   keep, and once space is back (the filler removed when the
 *                   run says "done") the report says failed with the write's
 *                   error; the second repetition never starts
 *   cancel          cancelled mid-run: VM stopped, report cancelled
 *
 * argv[3] (optional) runs one case only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "macro.h"
#include "run-test.h"
#include "runner.h"
#include "spec.h"

static void small_spec(struct run_spec *spec, const char *reps)
{
	struct sb_error err = {};

	run_test_spec_init(spec);
	CHECK(spec_set(spec, "repetitions", reps, NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.memory", "256M", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.warmup_s", "0.5", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.pre_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.post_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.interval_ms", "200", NULL, &err) == 0);
}

static void test_qemu_missing(void)
{
	struct run_spec spec;
	struct runner_options opts = { .qemu_binary = "/nonexistent/qemu-system-x86_64" };
	struct sb_error err = {};
	struct json_object *r;

	small_spec(&spec, "2");
	CHECK(run_test_run("qemu-missing", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "error/phase"), "preflight"));
	CHECK_MSG(strstr(jstr(r, "error/message"), "/nonexistent/qemu-system-x86_64") &&
			  strstr(jstr(r, "error/message"), "--qemu"),
		  "%s", jstr(r, "error/message"));
	CHECK(strstr(err.msg, "/nonexistent/qemu-system-x86_64"));
	CHECK(json_object_array_length(jp(r, "repetitions")) == 0);
	CHECK(jnum(r, "arms/0/repetitions/completed") == 0);
	json_object_put(r);

	/* without preflight: the first repetition fails at vm-start, the run stops there */
	opts = (struct runner_options){ .qemu_binary = "/nonexistent/qemu-system-x86_64", .skip_preflight = true };
	CHECK(run_test_run("qemu-missing-nopf", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(json_object_array_length(jp(r, "repetitions")) == 1);
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 vm-start"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "/nonexistent/qemu-system-x86_64"));
	CHECK(strstr(jstr(r, "error/message"), "1 of 2 repetitions failed"));
	CHECK(jnum(r, "arms/0/repetitions/failed") == 1);
	json_object_put(r);
	spec_done(&spec);
}

static char killed_run_dir[PATH_MAX];
static pid_t killed_pid;

static void kill_in_snapshot(const struct runner_progress *p, void *userdata)
{
	char path[PATH_MAX + 16];

	(void)userdata;
	if (p->rep != 0 || strcmp(p->step, "snapshot") || killed_pid || !(p->snapshot_fraction > 0.1))
		return;
	snprintf(path, sizeof(path), "%s/qemu.pid", killed_run_dir);
	killed_pid = (pid_t)atol(run_test_read_file(path));
	CHECK_MSG(killed_pid > 0, "no pid in %s", path);
	printf("qemu-killed: killing QEMU pid %d at %.0f%% of the snapshot\n", killed_pid, p->snapshot_fraction * 100);
	CHECK(kill(killed_pid, SIGKILL) == 0);
}

static void test_qemu_killed(void)
{
	struct run_spec spec;
	struct runner_options opts = { .progress = kill_in_snapshot };
	struct sb_error err = {};
	struct json_object *r;

	small_spec(&spec, "2");
	/* slow enough to be caught in the middle: 256 MiB at 32 MiB/s */
	CHECK(spec_set(&spec, "snapshot.max_bandwidth", "32M", NULL, &err) == 0);
	snprintf(killed_run_dir, sizeof(killed_run_dir), "%s/run", test_tmpdir("qemu-killed"));
	opts.run_dir = killed_run_dir;
	CHECK(run_test_run("qemu-killed", &spec, &opts, &r, &err) < 0);
	CHECK_MSG(killed_pid > 0, "the snapshot window was never reached");
	CHECK(kill(killed_pid, 0) < 0 && errno == ESRCH);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 snapshot"));
	CHECK_MSG(strstr(jstr(r, "repetitions/0/error/message"), "killed by signal 9"), "%s",
		  jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/vm/exit"), "signal 9"));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "active") ||
	      !strcmp(jstr(r, "repetitions/0/snapshot/status"), "cancelled") ||
	      !strcmp(jstr(r, "repetitions/0/snapshot/status"), "failed"));
	/* the partial timeline stays */
	CHECK(json_object_array_length(jp(r, "repetitions/0/timeline")) >= 5);
	/* the next repetition ran and completed */
	CHECK(!strcmp(jstr(r, "repetitions/1/state"), "completed"));
	CHECK(jnum(r, "arms/0/repetitions/completed") == 1 && jnum(r, "arms/0/repetitions/failed") == 1);
	CHECK(jnum(r, "arms/0/windows/snapshot/guest_ops_per_s/n") == 1); /* the completed repetition only */
	run_test_expect_no_qemu(r);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/snapshot-rep0.bin", killed_run_dir);
	CHECK(access(path, F_OK) < 0);
	json_object_put(r);
	spec_done(&spec);
}

static char stopped_run_dir[PATH_MAX];
static pid_t stopped_pid;
static uint64_t stopped_ns;

static char stopped_waiting_for[64];
static double stopped_waiting_s;

static void stop_in_snapshot(const struct runner_progress *p, void *userdata)
{
	char path[PATH_MAX + 16];

	(void)userdata;
	if (stopped_pid)
		printf("qemu-stopped: %.1f s after the stop: step %s%s%s\n", (double)(mono_ns() - stopped_ns) / 1e9,
		       p->step, p->waiting_for ? ", waiting for QEMU to answer " : "",
		       p->waiting_for ? p->waiting_for : "");
	if (stopped_pid && p->waiting_for && p->waiting_s > stopped_waiting_s) {
		snprintf(stopped_waiting_for, sizeof(stopped_waiting_for), "%s", p->waiting_for);
		stopped_waiting_s = p->waiting_s;
	}
	if (p->rep != 0 || strcmp(p->step, "snapshot") || stopped_pid || !(p->snapshot_fraction > 0.05))
		return;
	snprintf(path, sizeof(path), "%s/qemu.pid", stopped_run_dir);
	stopped_pid = (pid_t)atol(run_test_read_file(path));
	CHECK_MSG(stopped_pid > 0, "no pid in %s", path);
	printf("qemu-stopped: stopping QEMU pid %d (SIGSTOP) at %.0f%% of the snapshot\n", stopped_pid,
	       p->snapshot_fraction * 100);
	stopped_ns = mono_ns();
	CHECK(kill(stopped_pid, SIGSTOP) == 0);
	/* the report on disk is rewritten at each phase change: one kept after a crash now says where the run was */
	snprintf(path, sizeof(path), "%s/report.json", stopped_run_dir);
	struct json_object *partial = run_test_load(path);
	CHECK_MSG(!strcmp(jstr(partial, "repetitions/0/snapshot/status"), "active"), "the report on disk says the snapshot is %s",
		  jstr(partial, "repetitions/0/snapshot/status"));
	json_object_put(partial);
}

/*
 * QEMU stopped (SIGSTOP) mid-snapshot answers no QMP command: the snapshot's
 * deadline (spec.snapshot.timeout_s) still fires on time, not after QMP
 * timeouts of 30 s each, and the report names that deadline.
 */
static void test_qemu_stopped(void)
{
	struct run_spec spec;
	struct runner_options opts = { .progress = stop_in_snapshot, .stop_timeout_ms = 2000 };
	struct sb_error err = {};
	struct json_object *r;

	small_spec(&spec, "1");
	/* 256 MiB at 16 MiB/s: 16 s, far longer than the 6 s deadline */
	CHECK(spec_set(&spec, "snapshot.max_bandwidth", "16M", NULL, &err) == 0);
	CHECK(spec_set(&spec, "snapshot.timeout_s", "6", NULL, &err) == 0);
	snprintf(stopped_run_dir, sizeof(stopped_run_dir), "%s/run", test_tmpdir("qemu-stopped"));
	opts.run_dir = stopped_run_dir;
	uint64_t start = mono_ns();
	CHECK(run_test_run("qemu-stopped", &spec, &opts, &r, &err) < 0);
	uint64_t end = mono_ns();
	CHECK_MSG(stopped_pid > 0, "the snapshot window was never reached");
	double after_stop = (double)(end - stopped_ns) / 1e9, total = (double)(end - start) / 1e9;
	printf("qemu-stopped: the run ended %.1f s after the stop, %.1f s after it started: %s\n", after_stop, total,
	       jstr(r, "repetitions/0/error/message"));
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK_MSG(strstr(jstr(r, "repetitions/0/error/message"), "spec.snapshot.timeout_s"), "%s",
		  jstr(r, "repetitions/0/error/message"));
	/* while QEMU did not answer, the progress said which command it waited for */
	printf("qemu-stopped: the progress said %.1f s waiting for QEMU to answer %s\n", stopped_waiting_s,
	       stopped_waiting_for);
	CHECK_MSG(stopped_waiting_s >= 1 && !strncmp(stopped_waiting_for, "query-", 6),
		  "no progress said what the run waited for (%s, %.1f s)", stopped_waiting_for, stopped_waiting_s);
	/*
	 * A correctness bound, not a speed target: the deadline (6 s after the
	 * snapshot began), a second or two to notice, and the 2 s stop timeout
	 * for the stopped QEMU; each QMP timeout it would otherwise wait out is 30 s.
	 */
	CHECK_MSG(after_stop < 6 + 2 + 2 + 5, "the run took %.1f s after QEMU stopped", after_stop);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void test_sink_full(void)
{
	const char *tmpfs_dir = test_tmpfs("sink-full", "16m");
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;
	char dir[PATH_MAX];

	small_spec(&spec, "1");
	snprintf(dir, sizeof(dir), "%s/preflight", tmpfs_dir);
	opts.run_dir = dir;
	CHECK(run_test_run("sink-full", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "error/phase"), "preflight"));
	CHECK_MSG(strstr(jstr(r, "error/message"), "MiB free") && strstr(jstr(r, "error/message"), "--sink null"),
		  "%s", jstr(r, "error/message"));
	json_object_put(r);

	/* without preflight: QEMU's write fails, the snapshot fails, the file goes */
	snprintf(dir, sizeof(dir), "%s/nopf", tmpfs_dir);
	opts = (struct runner_options){ .run_dir = dir, .skip_preflight = true };
	CHECK(run_test_run("sink-full", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 snapshot"));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "failed"));
	printf("sink-full: %s\n", jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "snapshot failed"));
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/snapshot-rep0.bin", dir);
	CHECK(access(path, F_OK) < 0);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

struct fill {
	char path[PATH_MAX];
	uint64_t filled_ns;
};

/* Fills the file system at the pre window, frees it when the run is done. */
static void fill_progress(const struct runner_progress *p, void *userdata)
{
	static const char zeros[65536];
	struct fill *f = userdata;

	if (!strcmp(p->step, "pre") && !f->filled_ns) {
		int fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		CHECK(fd >= 0);
		while (write(fd, zeros, sizeof(zeros)) > 0)
			;
		CHECK_MSG(errno == ENOSPC, "filling the tmpfs: %s", strerror(errno));
		/* the last partial page too */
		while (write(fd, zeros, 1) > 0)
			;
		close(fd);
		f->filled_ns = mono_ns();
	} else if (!strcmp(p->step, "done") && f->filled_ns) {
		CHECK(unlink(f->path) == 0);
	}
}

static void test_report_full(void)
{
	const char *tmpfs_dir = test_tmpfs("report-full", "4m");
	struct fill fill = {};
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;
	char dir[PATH_MAX];
	uint64_t t0 = mono_ns();

	small_spec(&spec, "2");
	CHECK(spec_set(&spec, "snapshot.sink", "null", NULL, &err) == 0);
	CHECK(spec_set(&spec, "timing.pre_s", "60", NULL, &err) == 0);
	snprintf(dir, sizeof(dir), "%s/run", tmpfs_dir);
	snprintf(fill.path, sizeof(fill.path), "%s/filler", tmpfs_dir);
	opts = (struct runner_options){ .run_dir = dir, .progress = fill_progress, .userdata = &fill,
					.report_every_ms = 200 };
	CHECK(run_test_run("report-full", &spec, &opts, &r, &err) < 0);
	CHECK(fill.filled_ns);
	double stopped_s = (double)(mono_ns() - fill.filled_ns) / 1e9;
	printf("report-full: stopped %.1f s after the file system filled (%.1f s in all): %s\n", stopped_s,
	       (double)(mono_ns() - t0) / 1e9, err.msg);
	CHECK_MSG(stopped_s < 20, "the run went on for %.1f s with a report it could not write", stopped_s);
	CHECK_MSG(strstr(err.msg, "No space left on device") && strstr(err.msg, "--output"), "%s", err.msg);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "error/phase"), "report"));
	CHECK_MSG(strstr(jstr(r, "error/message"), "No space left on device"), "%s", jstr(r, "error/message"));
	CHECK(json_object_array_length(jget(r, "repetitions")) == 1);
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 pre"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

#define UFFD_SYSCTL "/proc/sys/vm/unprivileged_userfaultfd"
static long uffd_original = -1;

/* only if a run failed to: the test then fails anyway */
static void restore_uffd(void)
{
	run_test_restore_sysctl(UFFD_SYSCTL, uffd_original);
}

static void test_uffd_refused(void)
{
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;

	if (access(UFFD_SYSCTL, F_OK) < 0)
		SKIP_TEST("%s", UFFD_SYSCTL);
	/* under the host-wide knob lock: no run on this host has it changed right now */
	uffd_original = run_test_sysctl_locked(UFFD_SYSCTL);
	CHECK(uffd_original >= 0);
	test_at_exit(restore_uffd);

	small_spec(&spec, "2");
	CHECK(spec_set(&spec, "vm.user", "nobody", NULL, &err) == 0);
	/* the runs set it to 0 themselves, journaled and restored like any knob */
	CHECK(spec_set(&spec, "knobs", "sysctl:vm.unprivileged_userfaultfd=0", NULL, &err) == 0);
	CHECK(run_test_run("uffd-refused", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "error/phase"), "preflight"));
	CHECK_MSG(strstr(jstr(r, "error/message"), "nobody") &&
			  strstr(jstr(r, "error/message"), "sysctl:vm.unprivileged_userfaultfd=1"),
		  "%s", jstr(r, "error/message"));
	json_object_put(r);

	/* without preflight: QEMU (as nobody) starts, then refuses the snapshot */
	opts = (struct runner_options){ .skip_preflight = true };
	CHECK(run_test_run("uffd-refused-nopf", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(json_object_array_length(jp(r, "repetitions")) == 1); /* the run stopped: it would fail alike */
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 snapshot"));
	printf("uffd-refused: %s\n", jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "refused the background snapshot"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "migrate-set-capabilities"));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "failed"));
	CHECK(jnum(r, "repetitions/0/windows/pre/duration_s") > 0); /* what it measured before stays */
	run_test_expect_no_qemu(r);
	json_object_put(r);

	/* the fix the message gives works: the knob for the run, restored after */
	CHECK(spec_set(&spec, "repetitions", "1", NULL, &err) == 0);
	CHECK(spec_set(&spec, "knobs", "sysctl:vm.unprivileged_userfaultfd=1", NULL, &err) == 0);
	opts = (struct runner_options){};
	CHECK_MSG(run_test_run("uffd-knob", &spec, &opts, &r, &err) == 0, "%s", err.msg);
	CHECK(!strcmp(jstr(r, "state"), "completed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "completed"));
	CHECK_MSG(run_test_sysctl_locked(UFFD_SYSCTL) == uffd_original, "vm.unprivileged_userfaultfd is %ld, expected %ld",
		  run_test_sysctl_locked(UFFD_SYSCTL), uffd_original);
	json_object_put(r);
	spec_done(&spec);
}

static volatile sig_atomic_t cancel_flag;

static void cancel_in_pre(const struct runner_progress *p, void *userdata)
{
	(void)userdata;
	if (p->rep == 1 && !strcmp(p->step, "pre"))
		cancel_flag = 1;
}

static void test_cancel(void)
{
	struct run_spec spec;
	struct runner_options opts = { .cancel = &cancel_flag, .progress = cancel_in_pre };
	struct sb_error err = {};
	struct json_object *r;

	small_spec(&spec, "3");
	CHECK(run_test_run("cancel", &spec, &opts, &r, &err) == -ECANCELED);
	CHECK(!strcmp(jstr(r, "state"), "cancelled"));
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "completed"));
	CHECK(!strcmp(jstr(r, "repetitions/1/state"), "cancelled"));
	CHECK(json_object_array_length(jp(r, "repetitions")) == 2);
	CHECK(jnum(r, "arms/0/repetitions/completed") == 1);
	CHECK(jnum(r, "arms/0/repetitions/total") == 3);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "qemu-missing", test_qemu_missing }, { "qemu-killed", test_qemu_killed },
		{ "qemu-stopped", test_qemu_stopped },
		{ "sink-full", test_sink_full },       { "uffd-refused", test_uffd_refused },
		{ "report-full", test_report_full }, { "cancel", test_cancel },
	};

	run_test_init(argc, argv);
	run_test_require_root();
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 3 ? argv[3] : NULL);
	return 0;
}
