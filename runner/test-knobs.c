// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Knobs against a fake /proc/sys and /sys/module tree in a temp directory
 * (the real ones cannot be crashed on demand without disturbing the host;
 * tests/runner/ exercises a real sysctl): values set per arm, originals
 * restored at the end, and after a SIGKILL mid-run by knobs_recover().
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
static char root[300], state[300];

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

static bool journal_exists(void)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", state, KNOBS_JOURNAL);
	return access(path, F_OK) == 0;
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

	CHECK_MSG(knobs_begin(state, root, &all, &s, &err) == 0, "%s", err.msg);
	CHECK(journal_exists()); /* before anything changed */
	expect("proc/sys/kernel/numa_balancing", "1");

	/* a second run cannot take knobs meanwhile */
	CHECK(knobs_begin(state, root, &all, &s2, &err) == -EBUSY);
	CHECK(strstr(err.msg, "another snapbench run"));
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
	CHECK(knobs_begin(state, root, &none, &s, &err) == 0);
	CHECK(!journal_exists());
	CHECK(knobs_begin(state, root, &none, &s2, &err) == 0);
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
	CHECK(knobs_begin(state, root, &k, &s, &err) == -ENOENT);
	CHECK(strstr(err.msg, "sysctl:kernel.no_such_knob") && strstr(err.msg, "sysctl -a"));
	CHECK(!journal_exists());
	spec_knobs_done(&k);

	if (geteuid() != 0) { /* root writes through 0444 files */
		add(&k, "module:kvm.tdp_mmu", "N");
		CHECK(knobs_begin(state, root, &k, &s, &err) == -EACCES);
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
		if (knobs_begin(state, root, &all, &s, &err) < 0 || knobs_set_arm(s, &all, &err) < 0)
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
	CHECK(knobs_begin(state, root, &all, &s, &err) == -EBADMSG);
	unlink(path);
	spec_knobs_done(&all);
}

int main(void)
{
	CHECK(mkdtemp(base));
	atexit(rm_tree);
	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(state, sizeof(state), "%s/state", base);
	CHECK(mkdir(root, 0755) == 0);

	test_paths();
	test_arms_and_restore();
	test_errors();
	test_crash_recovery();
	return 0;
}
