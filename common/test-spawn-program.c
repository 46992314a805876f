// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spawn.h against real processes: this program runs itself (/proc/self/exe)
 * as the child, in the mode its first argument names, and the child reports
 * what it found through its exit status or the fds it was given.
 */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "spawn-program.h"

static char self[PATH_MAX];

/* ---- the child's side: each mode exits 0 when what it checks holds ---- */

/* "fds N...": writes "fd N" to each of fds N..., and fails if fd 9 (never passed) is open. */
static int child_fds(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		int fd = atoi(argv[i]);
		char line[32];
		int n = snprintf(line, sizeof(line), "fd %d\n", fd);
		if (write(fd, line, (size_t)n) != n)
			return 2;
	}
	return fcntl(9, F_GETFD) < 0 && errno == EBADF ? 0 : 3;
}

/* "state": signals reset, the session, the parent-death signal, cwd, environment and umask as asked. */
static int child_state(void)
{
	sigset_t mask;
	struct sigaction sa;
	char cwd[PATH_MAX];
	int pdeath = 0;
	mode_t um = umask(0);

	if (sigprocmask(SIG_SETMASK, NULL, &mask) < 0 || sigismember(&mask, SIGUSR1))
		return 10;
	if (sigaction(SIGUSR2, NULL, &sa) < 0 || sa.sa_handler != SIG_DFL)
		return 11;
	if (getsid(0) != getpid())
		return 12;
	if (prctl(PR_GET_PDEATHSIG, &pdeath) < 0 || pdeath != SIGTERM)
		return 13;
	if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, "/"))
		return 14;
	if (!getenv("SPAWN_TEST") || strcmp(getenv("SPAWN_TEST"), "yes") || getenv("HOME"))
		return 15;
	if (um != 027)
		return 16;
	return 0;
}

static int child_main(int argc, char **argv)
{
	if (!strcmp(argv[1], "fds"))
		return child_fds(argc, argv);
	if (!strcmp(argv[1], "state"))
		return child_state();
	if (!strcmp(argv[1], "exit"))
		return atoi(argv[2]);
	if (!strcmp(argv[1], "signal")) {
		raise(SIGUSR1);
		return 20; /* not reached unless SIGUSR1 was blocked or ignored */
	}
	return 99;
}

/* ---- the parent's side ---- */

static int run(const struct spawn_options *o)
{
	struct sb_error err = {};
	int status;

	CHECK_MSG(spawn_run(o, &status, &err) == 0, "%s", err.msg);
	return status;
}

/* A program that does not exist: the error names it, in PATH and as a path. */
static void test_missing(void)
{
	char *argv[] = { "snapbench-no-such-program", NULL };
	char *argv_abs[] = { "/nonexistent/snapbench-no-such-program", NULL };
	struct sb_error err = {};
	pid_t pid = 0;

	CHECK(spawn_start(&(struct spawn_options){ .argv = argv }, &pid, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "snapbench-no-such-program") && strstr(err.msg, "not found in PATH"), "%s", err.msg);
	CHECK(pid == 0);

	/* with .path the lookup is skipped: the exec step reports it */
	sb_error_clear(&err);
	CHECK(spawn_start(&(struct spawn_options){ .argv = argv_abs, .path = argv_abs[0] }, &pid, &err) ==
	      -ENOENT);
	CHECK_MSG(strstr(err.msg, "cannot start /nonexistent/snapbench-no-such-program: exec: "), "%s", err.msg);
	CHECK_MSG(strstr(err.msg, strerror(ENOENT)), "%s", err.msg);

	/* an argv[0] that is not the path: both are named */
	char *argv_named[] = { "renamed", NULL };
	sb_error_clear(&err);
	CHECK(spawn_start(&(struct spawn_options){ .argv = argv_named, .path = argv_abs[0] }, &pid, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "cannot start renamed: exec /nonexistent/snapbench-no-such-program: "), "%s", err.msg);
}

/* fds arrive at the numbers asked, also when a source's number is another's target; others are closed. */
static void test_fds(void)
{
	char *argv[] = { self, "fds", "3", "4", "7", NULL };
	int a[2], b[2], c[2], stray, status;
	char buf[64];
	ssize_t n;

	CHECK(pipe2(a, O_CLOEXEC) == 0 && pipe2(b, O_CLOEXEC) == 0 && pipe(c) == 0);
	/* every end above the numbers used below, so that none is overwritten */
	for (int i = 0; i < 2; i++) {
		int *ends[] = { &a[i], &b[i], &c[i] };
		for (size_t j = 0; j < ARRAY_SIZE(ends); j++) {
			int high = fcntl(*ends[j], j < 2 ? F_DUPFD_CLOEXEC : F_DUPFD, 30);
			CHECK(high >= 30);
			close(*ends[j]);
			*ends[j] = high;
		}
	}
	/* put a's write end at 4 and b's at 3, each the other's target, and leave 9 open without CLOEXEC */
	CHECK(dup3(a[1], 20, O_CLOEXEC) == 20 && dup3(b[1], 21, O_CLOEXEC) == 21);
	CHECK(dup2(20, 4) == 4 && dup2(21, 3) == 3);
	stray = dup2(c[1], 9);
	CHECK(stray == 9);
	struct spawn_fd fds[] = { { .fd = 4, .target = 3 }, { .fd = 3, .target = 4 }, { .fd = 4, .target = 7 },
				  { .fd = SPAWN_DEV_NULL, .target = 0 } };
	status = run(&(struct spawn_options){ .argv = argv, .path = self, .fds = fds, .n_fds = ARRAY_SIZE(fds) });
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
	close(3);
	close(4);
	close(9);
	close(20);
	close(21);
	close(a[1]);
	close(b[1]);
	close(c[1]);
	/* a (source 4, targets 3 and 7) got "fd 3" and "fd 7"; b (source 3, target 4) got "fd 4" */
	n = read(a[0], buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n] = '\0';
	CHECK_MSG(!strcmp(buf, "fd 3\nfd 7\n"), "%s", buf);
	n = read(b[0], buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n] = '\0';
	CHECK_MSG(!strcmp(buf, "fd 4\n"), "%s", buf);
	close(a[0]);
	close(b[0]);
	close(c[0]);
}

/* Exit status and signals come back as wait statuses. */
static void test_status(void)
{
	char *argv_exit[] = { self, "exit", "7", NULL };
	char *argv_sig[] = { self, "signal", NULL };
	char buf[128];
	int st;

	st = run(&(struct spawn_options){ .argv = argv_exit, .path = self });
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	spawn_describe_status(st, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "exit status 7"), "%s", buf);

	st = run(&(struct spawn_options){ .argv = argv_sig, .path = self, .reset_signals = true });
	CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1, "status 0x%x", st);
	spawn_describe_status(st, buf, sizeof(buf));
	CHECK_MSG(strstr(buf, "killed by signal 10"), "%s", buf);
}

/* What the child is asked to be: each option checked in the child. */
static void test_state(void)
{
	char *argv[] = { self, "state", NULL };
	char *envp[] = { "SPAWN_TEST=yes", NULL };
	sigset_t usr1, old;
	int st;

	/* block SIGUSR1 and ignore SIGUSR2 here: reset_signals undoes both in the child */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	CHECK(sigprocmask(SIG_BLOCK, &usr1, &old) == 0);
	CHECK(signal(SIGUSR2, SIG_IGN) != SIG_ERR);
	st = run(&(struct spawn_options){ .argv = argv, .path = self, .envp = envp, .cwd = "/", .new_session = true,
					  .parent_death_signal = SIGTERM, .reset_signals = true, .umask = 027 });
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);

	/* and without reset_signals the child inherits them: the state check fails on the mask */
	st = run(&(struct spawn_options){ .argv = argv, .path = self, .envp = envp, .cwd = "/", .new_session = true,
					  .parent_death_signal = SIGTERM, .umask = 027 });
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 10, "child status 0x%x", st);
	CHECK(sigprocmask(SIG_SETMASK, &old, NULL) == 0);
	CHECK(signal(SIGUSR2, SIG_DFL) != SIG_ERR);
}

/* The error pipe names the step that failed: a chdir to a directory that is not there. */
static void test_chdir_fails(void)
{
	char *argv[] = { self, "exit", "0", NULL };
	struct sb_error err = {};
	pid_t pid = 0;

	CHECK(spawn_start(&(struct spawn_options){ .argv = argv, .path = self, .cwd = "/nonexistent/spawn-test" }, &pid,
			  &err) == -ENOENT);
	CHECK(pid == 0);
	CHECK_MSG(strstr(err.msg, self) && strstr(err.msg, "chdir to /nonexistent/spawn-test") &&
			  strstr(err.msg, strerror(ENOENT)),
		  "%s", err.msg);
	/* the child was reaped: none is left */
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

/* PATH search: found, a path with a slash, missing, empty. */
static void test_find_program(void)
{
	_cleanup_free_ char *sh = NULL, *abs = NULL;
	char *none = NULL;

	CHECK(spawn_find_program("sh", &sh) == 0);
	CHECK_MSG(sh[0] == '/' && access(sh, X_OK) == 0, "%s", sh);
	CHECK(spawn_find_program(self, &abs) == 0 && !strcmp(abs, self));
	CHECK(spawn_find_program("snapbench-no-such-program", &none) == -ENOENT && !none);
	CHECK(spawn_find_program("/nonexistent/x", &none) == -ENOENT && !none);
	CHECK(spawn_find_program("", &none) == -EINVAL && !none);
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc > 1)
		return child_main(argc, argv);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	self[n] = '\0';
	test_missing();
	test_fds();
	test_status();
	test_state();
	test_chdir_fails();
	test_find_program();
	return 0;
}
