// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of the test library: JSON paths, temporary directories removed
 * at exit, and a "sysctl" (a plain file here) put back at exit, after a
 * failed CHECK and on SIGTERM, and a program run with its output read
 * line by line.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "test-json.h"
#include "test-qemu.h"
#include "test-spawn.h"
#include "test-sysctl.h"
#include "test-tmp.h"

static void test_json(void)
{
	struct json_object *o = json_tokener_parse(
		"{\"a\": {\"b\": [10, {\"c\": \"x\"}, null], \"n\": null, \"f\": 1.5}, \"m.dot\": {\"k\": 3}}");

	CHECK(o);
	CHECK(jint(o, "a/b/0") == 10);
	CHECK(!strcmp(jstr(o, "a/b/1/c"), "x"));
	CHECK(jnum(o, "a/f") == 1.5 && jnum(o, "a/b/0") == 10);
	CHECK(jint(o, "m.dot/k") == 3);
	CHECK(jp(o, "a/b/3") == NULL && jp(o, "a/b/x") == NULL && jp(o, "a/zz") == NULL && jp(o, "a/f/g") == NULL);
	CHECK(jnull(o, "a/n") && jnull(o, "a/b/2"));
	CHECK(!jnull(o, "a/zz") && !jnull(o, "a/f") && !jnull(o, "a/b/7"));
	CHECK(jget(o, "a/n") == NULL && jget(o, "a/b") != NULL);
	CHECK(jp(NULL, "a") == NULL);
	json_object_put(o);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

static const char *read_text(const char *path)
{
	static char buf[64];
	FILE *f = fopen(path, "r");
	size_t n;

	CHECK(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void test_rm_rf_tree(void)
{
	const char *dir = test_tmpdir("lib");
	char path[512];

	snprintf(path, sizeof(path), "%s/tree/a/b", dir);
	CHECK(mkdir(path, 0755) < 0); /* parents missing */
	snprintf(path, sizeof(path), "%s/tree", dir);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/tree/a", dir);
	CHECK(mkdir(path, 0500) == 0); /* not writable: removed all the same as root; skipped below otherwise */
	snprintf(path, sizeof(path), "%s/tree/f", dir);
	write_text(path, "x");
	snprintf(path, sizeof(path), "%s/tree/link", dir);
	CHECK(symlink("/", path) == 0); /* a link is removed, never followed */
	snprintf(path, sizeof(path), "%s/tree", dir);
	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s/tree/a", dir);
		CHECK(chmod(path, 0755) == 0);
		snprintf(path, sizeof(path), "%s/tree", dir);
	}
	CHECK(test_rm_rf(path) == 0);
	CHECK(access(path, F_OK) < 0);
	CHECK(access("/", F_OK) == 0);
	CHECK(test_rm_rf(path) == 0); /* already gone */
}

/* A child makes a temp directory and a changed "sysctl", then ends by how; both must be undone. */
static void child_and_check(const char *file, const char *how)
{
	int pipefd[2], st;
	char dir[256] = "";
	pid_t pid;
	ssize_t n;

	write_text(file, "0\n");
	CHECK(pipe(pipefd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		const char *d = test_tmpdir("lib-child");
		char f[300];

		snprintf(f, sizeof(f), "%s/file", d);
		write_text(f, "x");
		test_sysctl_set(file, "1");
		CHECK(!strcmp(read_text(file), "1"));
		CHECK(write(pipefd[1], d, strlen(d)) == (ssize_t)strlen(d));
		close(pipefd[1]);
		if (!strcmp(how, "exit"))
			exit(0);
		if (!strcmp(how, "check"))
			CHECK(!"a failed check exits");
		raise(SIGTERM);
		_exit(3);
	}
	close(pipefd[1]);
	n = read(pipefd[0], dir, sizeof(dir) - 1);
	close(pipefd[0]);
	CHECK(n > 0);
	dir[n] = '\0';
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!strcmp(how, "sigterm"))
		CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %#x", st);
	else
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == (!strcmp(how, "exit") ? 0 : 1), "status %#x", st);
	CHECK_MSG(!strcmp(read_text(file), "0\n"), "%s: not restored: '%s'", how, read_text(file));
	if (strcmp(how, "sigterm")) /* a signal skips atexit: the directory stays (the test's own goes) */
		CHECK_MSG(access(dir, F_OK) < 0, "%s: %s left behind", how, dir);
	else
		CHECK(test_rm_rf(dir) == 0);
}

static void test_sysctl_restore_paths(void)
{
	char file[512];

	snprintf(file, sizeof(file), "%s/sysctl", test_tmpdir("lib-sysctl"));
	child_and_check(file, "exit");
	child_and_check(file, "check");
	child_and_check(file, "sigterm");

	/* in this process: restore by hand, the saved value for messages */
	write_text(file, "7\n");
	test_sysctl_set(file, "8");
	CHECK(!strcmp(read_text(file), "8") && !strcmp(test_sysctl_saved(file), "7\n"));
	CHECK(test_sysctl_restore() && !strcmp(read_text(file), "7\n"));
	CHECK(test_sysctl_saved("/nonexistent") == NULL);
}

/* a program's lines as it prints them, its whole output, its exit code */
static void test_spawn_lines(void)
{
	char *argv[] = { "/usr/bin/printf", "one\ntwo\nthree", NULL };
	char *echo[] = { "/bin/echo", "hi", NULL }, *no[] = { "/bin/false", NULL };
	struct test_child c;
	char *line, *out;

	test_spawn(&c, argv);
	line = test_child_line(&c);
	CHECK(line && !strcmp(line, "one"));
	free(line);
	line = test_child_line(&c);
	CHECK(line && !strcmp(line, "two"));
	free(line);
	/* the last line has no newline */
	line = test_child_line(&c);
	CHECK(line && !strcmp(line, "three"));
	free(line);
	CHECK(!test_child_line(&c));
	CHECK(test_child_wait(&c) == 0);
	CHECK(test_run(echo, &out) == 0 && !strcmp(out, "hi\n"));
	free(out);
	CHECK(test_run(no, &out) == 1 && !strcmp(out, ""));
	free(out);
}

/* The tier's version check: a series takes its releases, not a longer number or another series. */
static void test_qemu_series(void)
{
	CHECK(unsetenv("SNAPBENCH_QEMU_WANT") == 0);
	CHECK(test_qemu_version_ok("7.2.22") && test_qemu_version_ok(NULL));
	CHECK(setenv("SNAPBENCH_QEMU_WANT", "10.0", 1) == 0);
	CHECK(test_qemu_version_ok("10.0.2") && test_qemu_version_ok("10.0"));
	CHECK(!test_qemu_version_ok("10.01.0") && !test_qemu_version_ok("7.2.22") && !test_qemu_version_ok("10.1.0"));
	CHECK(!test_qemu_version_ok(NULL));
	CHECK(unsetenv("SNAPBENCH_QEMU_WANT") == 0);
}

int main(void)
{
	test_json();
	test_rm_rf_tree();
	test_sysctl_restore_paths();
	test_spawn_lines();
	test_qemu_series();
	printf("ok\n");
	return 0;
}
