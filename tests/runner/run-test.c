// SPDX-License-Identifier: GPL-2.0-or-later
#include "run-test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "spec.h"
#include "test-accel.h"
#include "test-qemu.h"
#include "clock.h"
#include "knobs.h"
#include "runner.h"

extern char **environ;

static const char *validator, *schema;
static char last_report[PATH_MAX];

void run_test_init(int argc, char **argv)
{
	CHECK_MSG(argc >= 3, "usage: %s VALIDATE-REPORT.py SCHEMA.json", argv[0]);
	validator = argv[1];
	schema = argv[2];
	test_tmp_register();
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void run_test_require_root(void)
{
	if (geteuid() != 0)
		SKIP_TEST("root (BPF probes, knobs and QEMU users need it)");
}

void run_test_spec_init(struct run_spec *spec)
{
	struct sb_error err = {};

	CHECK(spec_init(spec) == 0);
	CHECK_MSG(spec_set(spec, "vm.accel", test_accel(), NULL, &err) == 0, "%s", err.msg);
}

bool run_test_kvm_counted(struct json_object *r)
{
	struct json_object *probes = jp(r, "probes");
	unsigned kvm = 0, bpf = 0;

	if (test_kvm())
		return true;
	CHECK_MSG(!strcmp(jstr(r, "accel/guest"), "tcg") && !strcmp(jstr(r, "accel/timing"), "emulated"),
		  "accel %s, timing %s", jstr(r, "accel/guest"), jstr(r, "accel/timing"));
	CHECK(jnull(r, "accel/host_vm") && jnull(r, "host_vm"));
	json_object_object_foreach(probes, name, p)
	{
		bool is_kvm = !strncmp(name, "kvm.", 4), is_bpf = !strncmp(name, "bpf.", 4);
		if (!is_kvm && !is_bpf)
			continue;
		CHECK_MSG(!jtrue(p, "available"), "%s is available under TCG", name);
		CHECK_MSG(jstr(p, "reason") && strstr(jstr(p, "reason"), "TCG"), "%s: reason %s", name, jstr(p, "reason"));
		kvm += is_kvm;
		bpf += is_bpf;
	}
	CHECK_MSG(kvm > 0 && bpf > 0, "TCG: %u kvm.* and %u bpf.* counters named unavailable", kvm, bpf);
	printf("TCG: %u kvm.* and %u bpf.* counters unavailable, each saying TCG\n", kvm, bpf);
	return false;
}

void run_test_validate(const char *report_path)
{
	char *argv[] = { "/usr/bin/python3", (char *)validator, (char *)schema, (char *)report_path, NULL };
	pid_t pid;
	int st;

	CHECK(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) == 0);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s does not validate against %s", report_path, schema);
}

void run_test_expect_shape(const char *name)
{
	const char *script = getenv("SNAPBENCH_REPORT_SHAPE"), *dir = getenv("SNAPBENCH_REPORT_SHAPES");
	bool write = getenv("SNAPBENCH_REPORT_SHAPE_WRITE");
	char golden[PATH_MAX];
	pid_t pid;
	int st;

	CHECK_MSG(script && dir, "$SNAPBENCH_REPORT_SHAPE and $SNAPBENCH_REPORT_SHAPES are not set (meson sets them)");
	CHECK_MSG(last_report[0], "no report to compare with shape %s", name);
	snprintf(golden, sizeof(golden), "%s/%s.json", dir, name);
	char *argv[] = { "/usr/bin/python3", (char *)script, write ? "--write" : golden, write ? golden : last_report,
			 write ? last_report : NULL, NULL };
	CHECK(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) == 0);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the report's keys and types differ from %s", last_report,
		  golden);
	printf("%s: its keys and types are %s's%s\n", last_report, golden, write ? " (written)" : "");
}

struct json_object *run_test_load(const char *report_path)
{
	struct json_object *o = json_object_from_file(report_path);

	CHECK_MSG(o, "cannot read %s", report_path);
	return o;
}

int run_test_run(const char *name, const struct run_spec *spec, struct runner_options *opts,
		 struct json_object **report, struct sb_error *err)
{
	static char run_dir[PATH_MAX];
	char path[PATH_MAX];
	uint64_t t0 = mono_ns();
	int k;

	if (!opts->run_dir) {
		snprintf(run_dir, sizeof(run_dir), "%s/run", test_tmpdir(name));
		opts->run_dir = run_dir;
	}
	if (!opts->qemu_binary && !spec->vm.qemu)
		opts->qemu_binary = test_qemu_binary(); /* the tier's QEMU (test-qemu.h), or PATH's */
	k = runner_execute(spec, opts, path, err);
	printf("%s: runner_execute = %d after %.1f s (%s)\n", name, k, (double)(mono_ns() - t0) / 1e9, err->msg);
	run_test_validate(path);
	snprintf(last_report, sizeof(last_report), "%s", path);
	*report = run_test_load(path);
	run_test_expect_qemu(*report, opts->qemu_binary ? opts->qemu_binary : spec->vm.qemu);
	return k;
}

void run_test_expect_qemu(struct json_object *report, const char *binary)
{
	struct json_object *v = jp(report, "host/qemu/version");
	const char *version = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

	printf("QEMU: %s %s, features %s\n", jstr(report, "host/qemu/binary"), version ? version : "(did not answer)",
	       jp(report, "host/qemu/features") ? json_object_to_json_string(jp(report, "host/qemu/features")) : "-");
	if (binary)
		CHECK_MSG(!strcmp(jstr(report, "host/qemu/binary"), binary), "the report names QEMU %s, the run was given %s",
			  jstr(report, "host/qemu/binary"), binary);
	if (test_qemu_want() && binary && test_qemu_binary() && !strcmp(binary, test_qemu_binary())) {
		/* the tier's QEMU answers: the report names its version and what it has */
		CHECK_MSG(test_qemu_version_ok(version), "the report names QEMU %s, the tier is for %s", version,
			  test_qemu_want());
		CHECK(jp(report, "host/qemu/features") && json_object_array_length(jp(report, "host/qemu/features")) > 0);
	}
}

void run_test_expect_no_qemu(struct json_object *report)
{
	char needle[128];

	snprintf(needle, sizeof(needle), "snapbench-%s-rep", jstr(report, "id"));
	CHECK_MSG(run_test_count_processes(needle) == 0, "a QEMU of run %s is still running", jstr(report, "id"));
}

unsigned run_test_count_processes(const char *needle)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	unsigned n = 0;

	CHECK(d);
	while ((e = readdir(d))) {
		char path[300], buf[4096];
		ssize_t len;
		int fd;
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (ssize_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[len] = '\0';
		if (strstr(buf, needle) && !strstr(buf, "snapbench run"))
			n++;
	}
	closedir(d);
	return n;
}

pid_t run_test_spawn_async(char *const argv[], const char *out_path, const char *err_path)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	if (out_path)
		posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (err_path)
		posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

int run_test_wait(pid_t pid)
{
	int st;

	CHECK(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int run_test_spawn(char *const argv[], const char *out_path, const char *err_path)
{
	return run_test_wait(run_test_spawn_async(argv, out_path, err_path));
}

const char *run_test_read_file(const char *path)
{
	static char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

long run_test_sysctl(const char *path)
{
	const char *s = run_test_read_file(path);

	return *s ? atol(s) : -1;
}

void run_test_write_sysctl(const char *path, long value)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int n = snprintf(buf, sizeof(buf), "%ld", value);

	CHECK_MSG(fd >= 0, "%s: %s", path, strerror(errno));
	CHECK(write(fd, buf, (size_t)n) == n);
	close(fd);
}

int run_test_knobs_lock(void)
{
	char who[64];
	struct knobs_options o = { .run_id = who, .wait_ms = 10 * 60 * 1000 };
	struct sb_error err = {};
	int fd = -1;

	snprintf(who, sizeof(who), "test %s", program_invocation_short_name);
	CHECK_MSG(knobs_host_lock(&o, &fd, &err) == 0, "%s", err.msg);
	return fd;
}

void run_test_knobs_unlock(int fd)
{
	knobs_host_unlock(fd);
}

long run_test_sysctl_locked(const char *path)
{
	int fd = run_test_knobs_lock();
	long v = run_test_sysctl(path);

	run_test_knobs_unlock(fd);
	return v;
}

/* Also called at exit, where a failed CHECK (exit() again) must not happen. */
void run_test_restore_sysctl(const char *path, long value)
{
	struct knobs_options o = { .run_id = "test: restoring a sysctl", .wait_ms = 10 * 60 * 1000 };
	struct sb_error err = {};
	char buf[32];
	int fd = -1, n;

	if (value < 0)
		return;
	if (knobs_host_lock(&o, &fd, &err) < 0) {
		fprintf(stderr, "cannot restore %s to %ld: %s\n", path, value, err.msg);
		return;
	}
	if (run_test_sysctl(path) != value) {
		int w = open(path, O_WRONLY | O_CLOEXEC);
		n = snprintf(buf, sizeof(buf), "%ld", value);
		if (w < 0 || write(w, buf, (size_t)n) != n)
			fprintf(stderr, "cannot restore %s to %ld: %s\n", path, value, strerror(errno));
		if (w >= 0)
			close(w);
	}
	knobs_host_unlock(fd);
}

void run_test_cases(const struct run_test_case *cases, size_t n, const char *only)
{
	for (size_t i = 0; i < n; i++)
		if (!only || !strcmp(only, cases[i].name)) {
			printf("--- %s\n", cases[i].name);
			cases[i].fn();
		}
}
