// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Knobs against a fake /proc/sys, /sys/module, /sys/kernel/debug (with
 * /proc/self/mounts saying whether debugfs is mounted) and /run tree in a temp
 * directory (the real ones cannot be crashed on demand without disturbing
 * the host; tests/runner/ exercises a real sysctl and the real
 * /run/snapbench/knobs.lock): values set per arm, originals restored at the
 * end, and after a SIGKILL mid-run by knobs_recover(); the host-wide lock
 * across state directories: a second run waits for the first (or is
 * refused, naming it), reads the true originals, a cancel ends its wait,
 * and the next run anywhere restores what a killed run left set.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "knobs.h"

static char base[] = "/tmp/test-knobs-XXXXXX";
static char root[300], state[300], state_b[300], state_c[300];
static struct knobs_options ko = { .run_id = "test-run" };

static void rm_tree(void)
{
	char *argv[] = { "rm", "-rf", "--", base, NULL };
	pid_t pid = fork();

	if (pid == 0) {
		execv("/bin/rm", argv);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void put(const char *rel, const char *value, mode_t mode)
{
	char path[600], dir[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
	f = fopen(path, "w");
	CHECK(f);
	fprintf(f, "%s\n", value);
	fclose(f);
	chmod(path, mode);
}

static void expect(const char *rel, const char *value)
{
	char path[600], buf[256] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	CHECK(f);
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	CHECK_MSG(!strcmp(buf, value), "%s is \"%s\", expected \"%s\"", rel, buf, value);
}

static bool journal_in(const char *dir)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", dir, KNOBS_JOURNAL);
	return access(path, F_OK) == 0;
}

static bool journal_exists(void)
{
	return journal_in(state);
}

static void add(struct spec_knobs *k, const char *name, const char *value)
{
	k->items = realloc(k->items, (k->n + 1) * sizeof(*k->items));
	CHECK(k->items);
	k->items[k->n].name = strdup(name);
	k->items[k->n].value = strdup(value);
	k->n++;
}

static void reset_tree(void)
{
	put("proc/sys/kernel/numa_balancing", "1", 0644);
	put("proc/sys/vm/stat_interval", "1", 0644);
	put("sys/module/kvm/parameters/halt_poll_ns", "200000", 0644);
	put("sys/module/kvm/parameters/tdp_mmu", "Y", 0444);
}

static void test_paths(void)
{
	char buf[256];

	CHECK(knobs_path("/", "sysctl:kernel.numa_balancing", buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, "/proc/sys/kernel/numa_balancing"));
	CHECK(knobs_path(NULL, "module:kvm.halt_poll_ns", buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, "/sys/module/kvm/parameters/halt_poll_ns"));
	CHECK(knobs_path("/x/", "sysctl:a.b", buf, sizeof(buf)) == 0 && !strcmp(buf, "/x/proc/sys/a/b"));
	CHECK(knobs_path("/", "sysctl:../etc.passwd", buf, sizeof(buf)) == -EINVAL);
	CHECK(knobs_path("/", "sysctl:a.b", buf, 5) == -ENAMETOOLONG);
	CHECK(knobs_path("/", "debugfs:sched/numa_balancing/scan_period_min_ms", buf, sizeof(buf)) == 0);
	CHECK(!strcmp(buf, "/sys/kernel/debug/sched/numa_balancing/scan_period_min_ms"));
	CHECK(knobs_path("/x", "debugfs:dri/0000:00:02.0/x", buf, sizeof(buf)) == 0 &&
	      !strcmp(buf, "/x/sys/kernel/debug/dri/0000:00:02.0/x"));
	/* nothing that leaves debugfs */
	CHECK(knobs_path("/", "debugfs:../../etc/passwd", buf, sizeof(buf)) == -EINVAL);
	CHECK(knobs_path("/", "debugfs:sched/../../../etc/passwd", buf, sizeof(buf)) == -EINVAL);
	CHECK(knobs_path("/", "debugfs:/etc/passwd", buf, sizeof(buf)) == -EINVAL);
	CHECK(knobs_path("/", "debugfs:sched//x", buf, sizeof(buf)) == -EINVAL);
	CHECK(knobs_path("/", "debugfs:sched/", buf, sizeof(buf)) == -EINVAL);
	CHECK(knobs_path("/", "debugfs:./sched", buf, sizeof(buf)) == -EINVAL);
	CHECK(knobs_path("/", "debugfs:", buf, sizeof(buf)) == -EINVAL);
}

static void put_mounts(bool debugfs)
{
	put("proc/self/mounts",
	    debugfs ? "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
		      "debugfs /sys/kernel/debug debugfs rw,nosuid,nodev,noexec,relatime 0 0\n"
		      "tracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec,relatime 0 0"
		    : "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
		      "tracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec,relatime 0 0",
	    0644);
}

static bool journal_has(const char *needle)
{
	char path[600], buf[8192];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", state, KNOBS_JOURNAL);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

#define SCAN_MIN "sys/kernel/debug/sched/numa_balancing/scan_period_min_ms"

/* debugfs files: set per arm, restored at the end and after a crash, under the same lock and journal */
static void test_debugfs(void)
{
	struct spec_knobs all = {}, arm = {};
	struct knobs_session *s = NULL;
	struct sb_error err = {};
	int pipefd[2], status;
	pid_t pid;
	char c;

	reset_tree();
	put_mounts(true);
	put(SCAN_MIN, "1000", 0644);
	add(&all, "debugfs:sched/numa_balancing/scan_period_min_ms", "");
	add(&all, "sysctl:kernel.numa_balancing", "");
	add(&arm, "debugfs:sched/numa_balancing/scan_period_min_ms", "100");
	add(&arm, "sysctl:kernel.numa_balancing", "1");

	CHECK_MSG(knobs_begin(state, &ko, &all, &s, &err) == 0, "%s", err.msg);
	CHECK(journal_has("debugfs:sched\\/numa_balancing") || journal_has("debugfs:sched/numa_balancing"));
	expect(SCAN_MIN, "1000");
	CHECK_MSG(knobs_set_arm(s, &arm, &err) == 0, "%s", err.msg);
	expect(SCAN_MIN, "100");
	CHECK(knobs_end(s, &err) == 0);
	expect(SCAN_MIN, "1000");
	CHECK(!journal_exists());

	/* killed mid-run; the host reboots and debugfs is not mounted yet: recovery says so and keeps the journal */
	CHECK(pipe(pipefd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(pipefd[0]);
		if (knobs_begin(state, &ko, &all, &s, &err) < 0 || knobs_set_arm(s, &arm, &err) < 0)
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	CHECK(read(pipefd[0], &c, 1) == 1);
	close(pipefd[0]);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
	expect(SCAN_MIN, "100");
	put_mounts(false);
	CHECK(knobs_recover(state, root, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "debugfs:sched/numa_balancing/scan_period_min_ms") &&
			  strstr(err.msg, "mount -t debugfs debugfs /sys/kernel/debug") && strstr(err.msg, "journal stays"),
		  "%s", err.msg);
	CHECK(journal_exists());
	put_mounts(true);
	CHECK_MSG(knobs_recover(state, root, &err) == 2, "%s", err.msg);
	expect(SCAN_MIN, "1000");
	CHECK(!journal_exists());

	spec_knobs_done(&all);
	spec_knobs_done(&arm);
}

/* One knob that cannot be begun: its error code and message. */
static int begin_one(const char *name, struct sb_error *err)
{
	struct spec_knobs k = {};
	struct knobs_session *s = NULL;
	int r;

	add(&k, name, "1");
	r = knobs_begin(state, &ko, &k, &s, err);
	if (r == 0)
		knobs_end(s, err);
	spec_knobs_done(&k);
	CHECK(!journal_exists());
	return r;
}

static void test_debugfs_errors(void)
{
	struct sb_error err = {};
	char path[600];

	reset_tree();
	put(SCAN_MIN, "1000", 0644);

	/* not mounted: the knob, and how to mount it (a test root is never mounted on) */
	put_mounts(false);
	CHECK(begin_one("debugfs:sched/numa_balancing/scan_period_min_ms", &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "knob debugfs:sched/numa_balancing/scan_period_min_ms: debugfs is not mounted") &&
			  strstr(err.msg, "mount -t debugfs debugfs /sys/kernel/debug"),
		  "%s", err.msg);
	printf("not mounted: %s\n", err.msg);
	put("proc/self/mounts", "debugfs /mnt/dbg debugfs rw 0 0", 0644);
	CHECK(begin_one("debugfs:sched/numa_balancing/scan_period_min_ms", &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "mounted on /mnt/dbg") && strstr(err.msg, "mount -t debugfs"), "%s", err.msg);
	put("proc/self/mounts", "", 0644);
	snprintf(path, sizeof(path), "%s/proc/self/mounts", root);
	unlink(path);
	CHECK(begin_one("debugfs:sched/numa_balancing/scan_period_min_ms", &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "cannot tell whether debugfs is mounted") && strstr(err.msg, "/proc/self/mounts"),
		  "%s", err.msg);

	/* the file is missing: the feature it needs where known, else the path to check */
	put_mounts(true);
	CHECK(begin_one("debugfs:sched/numa_balancing/scan_size_mb", &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "debugfs:sched/numa_balancing/scan_size_mb") && strstr(err.msg, "CONFIG_NUMA_BALANCING") &&
			  strstr(err.msg, "5.13") && strstr(err.msg, "sysctl:kernel.numa_balancing_scan_*"),
		  "%s", err.msg);
	printf("missing: %s\n", err.msg);
	CHECK(begin_one("debugfs:sched/preempt", &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "CONFIG_PREEMPT_DYNAMIC"), "%s", err.msg);
	CHECK(begin_one("debugfs:frobnicator/level", &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "debugfs:frobnicator/level") && strstr(err.msg, "/sys/kernel/debug/frobnicator/level") &&
			  strstr(err.msg, "ls /sys/kernel/debug/frobnicator'"),
		  "%s", err.msg);

	/* names that leave debugfs never reach a file */
	CHECK(begin_one("debugfs:../../proc/sys/kernel/numa_balancing", &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "not a valid knob name"), "%s", err.msg);

	if (geteuid() != 0) { /* root writes through 0444 files */
		put(SCAN_MIN, "1000", 0444);
		put("sys/kernel/security/lockdown", "none [integrity] confidentiality", 0444);
		CHECK(begin_one("debugfs:sched/numa_balancing/scan_period_min_ms", &err) == -EACCES);
		CHECK_MSG(strstr(err.msg, "locked down (integrity)"), "%s", err.msg);
		put("sys/kernel/security/lockdown", "[none] integrity confidentiality", 0444);
		CHECK(begin_one("debugfs:sched/numa_balancing/scan_period_min_ms", &err) == -EACCES);
		CHECK_MSG(strstr(err.msg, "run as root") && !strstr(err.msg, "locked down ("), "%s", err.msg);
	}

	/* no debugfs at all */
	put_mounts(false);
	char *argv[] = { "rm", "-rf", "--", NULL, NULL };
	snprintf(path, sizeof(path), "%s/sys/kernel/debug", root);
	argv[3] = path;
	pid_t pid = fork();
	if (pid == 0) {
		execv("/bin/rm", argv);
		_exit(127);
	}
	CHECK(pid > 0 && waitpid(pid, NULL, 0) == pid);
	CHECK(begin_one("debugfs:sched/numa_balancing/scan_period_min_ms", &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "CONFIG_DEBUG_FS"), "%s", err.msg);
}

/*
 * Files of choices read as the list with the selected word bracketed and
 * take the bare word: the journal keeps the word, so the end (and a
 * recovery) writes back something the kernel accepts.
 */
static void test_choice_files(void)
{
	struct spec_knobs all = {}, arm = {};
	struct knobs_session *s = NULL;
	struct sb_error err = {};

	reset_tree();
	put_mounts(true);
	put("sys/module/pcie_aspm/parameters/policy", "[default] performance powersave powersupersave", 0644);
	put("sys/kernel/debug/sched/preempt", "none voluntary (full) lazy", 0644);
	/* not lists of choices: kept as they read */
	put("sys/module/dm_mod/parameters/name", "a [b] c/d", 0644);
	put("proc/sys/kernel/core_pattern", "core [x]", 0644);
	add(&all, "module:pcie_aspm.policy", "");
	add(&all, "debugfs:sched/preempt", "");
	add(&all, "module:dm_mod.name", "");
	add(&all, "sysctl:kernel.core_pattern", "");
	add(&arm, "module:pcie_aspm.policy", "performance");
	add(&arm, "debugfs:sched/preempt", "none");

	CHECK_MSG(knobs_begin(state, &ko, &all, &s, &err) == 0, "%s", err.msg);
	CHECK(journal_has("\"default\"") && journal_has("\"full\"") && !journal_has("[default]") &&
	      !journal_has("(full)"));
	CHECK(journal_has("\"a [b] c\\/d\"") || journal_has("\"a [b] c/d\""));
	CHECK(journal_has("\"core [x]\""));
	CHECK(knobs_set_arm(s, &arm, &err) == 0);
	expect("sys/module/pcie_aspm/parameters/policy", "performance");
	expect("sys/kernel/debug/sched/preempt", "none");
	CHECK(knobs_end(s, &err) == 0);
	expect("sys/module/pcie_aspm/parameters/policy", "default");
	expect("sys/kernel/debug/sched/preempt", "full");
	expect("sys/module/dm_mod/parameters/name", "a [b] c/d"); /* never written: the arm left it */
	spec_knobs_done(&all);
	spec_knobs_done(&arm);
}

static void test_arms_and_restore(void)
{
	struct spec_knobs all = {}, arm_a = {}, arm_b = {};
	struct knobs_session *s = NULL, *s2 = NULL;
	struct sb_error err = {};

	reset_tree();
	add(&all, "sysctl:kernel.numa_balancing", "");
	add(&all, "module:kvm.halt_poll_ns", "");
	add(&arm_a, "sysctl:kernel.numa_balancing", "0");
	add(&arm_b, "module:kvm.halt_poll_ns", "0");

	CHECK_MSG(knobs_begin(state, &ko, &all, &s, &err) == 0, "%s", err.msg);
	CHECK(journal_exists()); /* before anything changed */
	expect("proc/sys/kernel/numa_balancing", "1");

	/* a second run cannot take knobs meanwhile, and is told who has them */
	CHECK(knobs_begin(state, &ko, &all, &s2, &err) == -EBUSY);
	char pid[32];
	snprintf(pid, sizeof(pid), "pid %d, run test-run", (int)getpid());
	CHECK_MSG(strstr(err.msg, "host-wide knob lock") && strstr(err.msg, pid), "%s", err.msg);
	/* and recovery leaves a live run alone */
	CHECK(knobs_recover(state, root, &err) == -EBUSY);

	CHECK(knobs_set_arm(s, &arm_a, &err) == 0);
	expect("proc/sys/kernel/numa_balancing", "0");
	expect("sys/module/kvm/parameters/halt_poll_ns", "200000");
	CHECK(knobs_set_arm(s, &arm_b, &err) == 0);
	expect("proc/sys/kernel/numa_balancing", "1"); /* back to original: arm b does not set it */
	expect("sys/module/kvm/parameters/halt_poll_ns", "0");
	CHECK(knobs_end(s, &err) == 0);
	expect("proc/sys/kernel/numa_balancing", "1");
	expect("sys/module/kvm/parameters/halt_poll_ns", "200000");
	CHECK(!journal_exists());
	CHECK(knobs_recover(state, root, &err) == 0);

	/* no knobs: no lock, no journal */
	struct spec_knobs none = {};
	CHECK(knobs_begin(state, &ko, &none, &s, &err) == 0);
	CHECK(!journal_exists());
	CHECK(knobs_begin(state, &ko, &none, &s2, &err) == 0);
	CHECK(knobs_end(s2, &err) == 0);
	CHECK(knobs_end(s, &err) == 0);
	CHECK(knobs_end(NULL, &err) == 0);

	spec_knobs_done(&all);
	spec_knobs_done(&arm_a);
	spec_knobs_done(&arm_b);
}

static void test_errors(void)
{
	struct spec_knobs k = {};
	struct knobs_session *s = NULL;
	struct sb_error err = {};

	reset_tree();
	add(&k, "sysctl:kernel.no_such_knob", "1");
	CHECK(knobs_begin(state, &ko, &k, &s, &err) == -ENOENT);
	CHECK(strstr(err.msg, "sysctl:kernel.no_such_knob") && strstr(err.msg, "sysctl -a"));
	CHECK(!journal_exists());
	spec_knobs_done(&k);

	if (geteuid() != 0) { /* root writes through 0444 files */
		add(&k, "module:kvm.tdp_mmu", "N");
		CHECK(knobs_begin(state, &ko, &k, &s, &err) == -EACCES);
		CHECK(strstr(err.msg, "module:kvm.tdp_mmu") && strstr(err.msg, "read-only"));
		CHECK(!journal_exists());
		spec_knobs_done(&k);
	}
}

static void test_crash_recovery(void)
{
	struct spec_knobs all = {};
	struct sb_error err = {};
	int pipefd[2], status;
	pid_t pid;
	char c;

	reset_tree();
	add(&all, "sysctl:kernel.numa_balancing", "0");
	add(&all, "sysctl:vm.stat_interval", "10");
	add(&all, "module:kvm.halt_poll_ns", "0");
	CHECK(pipe(pipefd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct knobs_session *s;
		close(pipefd[0]);
		if (knobs_begin(state, &ko, &all, &s, &err) < 0 || knobs_set_arm(s, &all, &err) < 0)
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause(); /* killed here, mid-run */
		_exit(0);
	}
	close(pipefd[1]);
	CHECK(read(pipefd[0], &c, 1) == 1);
	close(pipefd[0]);
	expect("proc/sys/kernel/numa_balancing", "0");
	expect("proc/sys/vm/stat_interval", "10");
	CHECK(knobs_recover(state, root, &err) == -EBUSY); /* still alive */
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));

	CHECK(journal_exists());
	CHECK_MSG(knobs_recover(state, root, &err) == 3, "%s", err.msg);
	expect("proc/sys/kernel/numa_balancing", "1");
	expect("proc/sys/vm/stat_interval", "1");
	expect("sys/module/kvm/parameters/halt_poll_ns", "200000");
	CHECK(!journal_exists());
	CHECK(knobs_recover(state, root, &err) == 0);

	/* a journal that cannot be read stays, with a message saying what to do */
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", state, KNOBS_JOURNAL);
	FILE *f = fopen(path, "w");
	CHECK(f);
	fputs("{ garbage", f);
	fclose(f);
	CHECK(knobs_recover(state, root, &err) == -EBADMSG);
	CHECK(strstr(err.msg, "by hand"));
	CHECK(journal_exists());
	/* knobs_begin refuses to start over a journal it cannot restore */
	struct knobs_session *s = NULL;
	CHECK(knobs_begin(state, &ko, &all, &s, &err) == -EBADMSG);
	unlink(path);
	spec_knobs_done(&all);
}

/*
 * A run in another state directory: takes knobs and says so on *ready_fd,
 * then holds them until a byte arrives on release (forever if release < 0).
 */
static pid_t other_run(const char *dir, const char *run_id, int release, int *ready_fd)
{
	int pipefd[2];
	pid_t pid;
	char c;

	CHECK(pipe(pipefd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct knobs_options o = { .root = root, .run_id = run_id };
		struct spec_knobs k = {};
		struct knobs_session *s;
		struct sb_error err = {};
		close(pipefd[0]);
		add(&k, "sysctl:kernel.numa_balancing", "0");
		if (knobs_begin(dir, &o, &k, &s, &err) < 0 || knobs_set_arm(s, &k, &err) < 0) {
			fprintf(stderr, "other run: %s\n", err.msg);
			_exit(1);
		}
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		if (release < 0)
			for (;;)
				pause(); /* killed here */
		if (read(release, &c, 1) != 1)
			_exit(1);
		_exit(knobs_end(s, &err) == 0 ? 0 : 1);
	}
	close(pipefd[1]);
	*ready_fd = pipefd[0];
	return pid;
}

static void wait_ready(int fd)
{
	char c;

	CHECK(read(fd, &c, 1) == 1);
	close(fd);
}

static int waits_seen, release_fd = -1;
static pid_t waited_for;

/* The wait began: cancel it (userdata), or let the holder end (release_fd). */
static void on_wait(const struct knobs_holder *h, void *userdata)
{
	waits_seen++;
	waited_for = h->pid;
	if (userdata)
		*(volatile sig_atomic_t *)userdata = 1;
	if (release_fd >= 0)
		CHECK(write(release_fd, "x", 1) == 1);
}

static void test_host_lock_across_state_dirs(void)
{
	struct spec_knobs all = {}, arm = {};
	struct knobs_session *s = NULL;
	struct knobs_holder h;
	struct sb_error err = {};
	char needle[600];
	int ready, status;
	pid_t pid;

	reset_tree();
	add(&all, "sysctl:kernel.numa_balancing", "");
	add(&arm, "sysctl:kernel.numa_balancing", "0");

	/* another run, with its own state directory, holds knobs: refused at once, naming it */
	pid = other_run(state, "run-a", -1, &ready);
	wait_ready(ready);
	expect("proc/sys/kernel/numa_balancing", "0");
	struct knobs_options o = { .root = root, .run_id = "run-b" };
	CHECK(knobs_begin(state_b, &o, &all, &s, &err) == -EBUSY);
	snprintf(needle, sizeof(needle), "pid %d, run run-a, state directory ", (int)pid);
	CHECK_MSG(strstr(err.msg, needle) && strstr(err.msg, "run again when it has ended"), "%s", err.msg);
	printf("refused: %s\n", err.msg);
	CHECK(!journal_in(state_b));
	CHECK(knobs_host_holder(root, &h) == 1 && h.pid == pid && !strcmp(h.run_id, "run-a"));

	/* a bounded wait ends with the same message */
	o.wait_ms = 300;
	CHECK(knobs_begin(state_b, &o, &all, &s, &err) == -EBUSY);
	CHECK_MSG(strstr(err.msg, "did not release it within") && strstr(err.msg, needle), "%s", err.msg);

	/* a cancel ends the wait */
	volatile sig_atomic_t cancel = 0;
	o.wait_ms = 60000;
	o.cancel = &cancel;
	o.waiting = on_wait;
	o.userdata = (void *)&cancel;
	waits_seen = 0;
	CHECK(knobs_begin(state_b, &o, &all, &s, &err) == -ECANCELED);
	CHECK(waits_seen == 1 && waited_for == pid);
	o.cancel = NULL;
	o.userdata = NULL;

	/* the holder dies with the knob set: the next run, whatever its state directory, puts it back first */
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid);
	expect("proc/sys/kernel/numa_balancing", "0");
	CHECK(journal_in(state));
	CHECK_MSG(knobs_begin(state_b, &o, &all, &s, &err) == 0, "%s", err.msg);
	CHECK(!journal_in(state));
	expect("proc/sys/kernel/numa_balancing", "1");
	CHECK(knobs_set_arm(s, &arm, &err) == 0);
	CHECK(knobs_end(s, &err) == 0);
	expect("proc/sys/kernel/numa_balancing", "1"); /* the true original, not the dead run's 0 */
	CHECK(knobs_host_holder(root, &h) == 0);      /* ended in order: no record left */

	/* two runs at once: the second waits for the first, then reads the true original */
	int release[2];
	CHECK(pipe(release) == 0);
	pid = other_run(state, "run-a", release[0], &ready);
	close(release[0]);
	wait_ready(ready);
	waits_seen = 0;
	release_fd = release[1];
	o.wait_ms = 60000;
	CHECK_MSG(knobs_begin(state_b, &o, &all, &s, &err) == 0, "%s", err.msg);
	CHECK(waits_seen == 1 && waited_for == pid);
	close(release[1]);
	release_fd = -1;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	expect("proc/sys/kernel/numa_balancing", "1"); /* the first run restored it before we read it */
	CHECK(knobs_set_arm(s, &arm, &err) == 0);
	expect("proc/sys/kernel/numa_balancing", "0");
	CHECK(knobs_end(s, &err) == 0);
	expect("proc/sys/kernel/numa_balancing", "1");

	/* a run killed holding knobs; a run without knobs of its own (knobs_recover) cleans up after it */
	pid = other_run(state, "run-a", -1, &ready);
	wait_ready(ready);
	kill(pid, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid);
	expect("proc/sys/kernel/numa_balancing", "0");
	CHECK_MSG(knobs_recover(state_c, root, &err) == 1, "%s", err.msg);
	expect("proc/sys/kernel/numa_balancing", "1");
	CHECK(!journal_in(state) && !journal_in(state_c));
	CHECK(knobs_host_holder(root, &h) == 0);

	/* a program that writes a knob itself holds the same lock */
	int fd = -1;
	o.run_id = "direct-writer";
	o.wait_ms = 0;
	CHECK_MSG(knobs_host_lock(&o, &fd, &err) == 0, "%s", err.msg);
	CHECK(knobs_begin(state_b, &ko, &all, &s, &err) == -EBUSY);
	snprintf(needle, sizeof(needle), "pid %d, run direct-writer", (int)getpid());
	CHECK_MSG(strstr(err.msg, needle), "%s", err.msg);
	knobs_host_unlock(fd);
	CHECK(knobs_begin(state_b, &ko, &all, &s, &err) == 0);
	CHECK(knobs_end(s, &err) == 0);

	spec_knobs_done(&all);
	spec_knobs_done(&arm);
}

/* Files others could write are never trusted: root would write whatever they say. */
static void test_unsafe_files(void)
{
	struct spec_knobs all = {};
	struct knobs_session *s = NULL;
	struct sb_error err = {};
	char lock[600], journal[600];
	FILE *f;

	reset_tree();
	add(&all, "sysctl:kernel.numa_balancing", "0");
	snprintf(lock, sizeof(lock), "%s/%s", root, KNOBS_HOST_LOCK);
	CHECK(chmod(lock, 0666) == 0);
	CHECK(knobs_begin(state, &ko, &all, &s, &err) == -EPERM);
	CHECK_MSG(strstr(err.msg, lock) && strstr(err.msg, "remove it"), "%s", err.msg);
	CHECK(chmod(lock, 0644) == 0);

	snprintf(journal, sizeof(journal), "%s/%s", state, KNOBS_JOURNAL);
	f = fopen(journal, "w");
	CHECK(f);
	fputs("{\"knobs\": [{\"name\": \"sysctl:kernel.numa_balancing\", \"original\": \"7\"}]}", f);
	fclose(f);
	CHECK(chmod(journal, 0666) == 0);
	CHECK(knobs_recover(state, root, &err) == -EPERM);
	CHECK_MSG(strstr(err.msg, "belongs to you"), "%s", err.msg);
	expect("proc/sys/kernel/numa_balancing", "1");
	CHECK(chmod(journal, 0600) == 0);
	CHECK(knobs_recover(state, root, &err) == 1);
	expect("proc/sys/kernel/numa_balancing", "7");
	spec_knobs_done(&all);
}

int main(void)
{
	umask(022);
	CHECK(mkdtemp(base));
	atexit(rm_tree);
	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(state_b, sizeof(state_b), "%s/state-b", base);
	snprintf(state_c, sizeof(state_c), "%s/state-c", base);
	CHECK(mkdir(root, 0755) == 0);
	ko.root = root;

	test_paths();
	test_arms_and_restore();
	test_errors();
	test_crash_recovery();
	test_debugfs();
	test_debugfs_errors();
	test_choice_files();
	test_host_lock_across_state_dirs();
	test_unsafe_files();
	return 0;
}
