// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test: process identity. Start times tell processes apart; a process
 * is taken for a run's QEMU only by its command line (a process named
 * qemu-system-... here is this test program started again under that name,
 * where it just waits).
 */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "check.h"
#include "proc.h"
#include "strv.h"

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return pid;
}

int main(int argc, char **argv_main)
{
	if (argc > 1 && !strcmp(argv_main[1], "-name")) {
		alarm(60); /* never outlive the test */
		pause();
		return 0;
	}

	uint64_t a, b;
	char **argv;
	const char *id = "20261130T034512Z-3f9c2a";

	CHECK(proc_starttime(getpid(), &a) == 0 && a > 0);
	CHECK(proc_starttime(getpid(), &b) == 0 && a == b);
	CHECK(proc_starttime(1 << 30, &a) == -ENOENT);
	CHECK(proc_cmdline(getpid(), 4096, &argv) == 0);
	CHECK(strstr(argv[0], "test-proc"));
	strv_free(argv);

	char *qemu_argv[] = { "qemu-system-x86_64", "-name", "snapbench-20261130T034512Z-3f9c2a-rep0", "600", NULL };
	pid_t q = spawn(qemu_argv);
	char *other_argv[] = { "qemu-system-x86_64", "-name", "someone-else", "600", NULL };
	pid_t o = spawn(other_argv);
	char *plain_argv[] = { "not-qemu", "-name", "20261130T034512Z-3f9c2a", "600", NULL };
	pid_t p = spawn(plain_argv);
	usleep(200000);

	CHECK(proc_starttime(q, &a) == 0);
	CHECK(proc_cmdline(q, 4096, &argv) == 0);
	CHECK(!strcmp(argv[0], "qemu-system-x86_64") && !strcmp(argv[2], "snapbench-20261130T034512Z-3f9c2a-rep0") &&
	      argv[4] == NULL);
	strv_free(argv);
	/* a truncated read still ends in a terminated vector */
	CHECK(proc_cmdline(q, 10, &argv) == 0);
	CHECK(!strcmp(argv[0], "qemu-syste") && argv[1] == NULL);
	strv_free(argv);

	CHECK(proc_is_run_qemu(q, id, NULL));
	CHECK(!proc_is_run_qemu(q, "20261130T034512Z-000000", NULL));
	CHECK(!proc_is_run_qemu(o, id, NULL));
	CHECK(!proc_is_run_qemu(p, id, NULL));       /* not a QEMU */
	CHECK(!proc_is_run_qemu(getpid(), id, NULL));

	/* the exact argv recorded in the report identifies it without -name */
	struct json_object *exp = json_object_new_array();
	for (int i = 0; other_argv[i]; i++)
		json_object_array_add(exp, json_object_new_string(other_argv[i]));
	CHECK(proc_is_run_qemu(o, id, exp));
	CHECK(!proc_is_run_qemu(q, "20261130T034512Z-000000", exp));
	json_object_put(exp);

	/* pidfds: signal, wait, and a dead process says so */
	int fd = proc_pidfd_open(q);
	CHECK(fd >= 0);
	CHECK(proc_pidfd_wait(fd, 0) == 0);
	CHECK(proc_pidfd_signal(fd, SIGKILL) == 0);
	CHECK(proc_pidfd_wait(fd, 5000) == 1);
	CHECK(waitpid(q, NULL, 0) == q);
	CHECK(proc_pidfd_signal(fd, SIGKILL) == -ESRCH);
	close(fd);
	CHECK(!proc_is_run_qemu(q, id, NULL));

	kill(o, SIGKILL);
	kill(p, SIGKILL);
	waitpid(o, NULL, 0);
	waitpid(p, NULL, 0);
	return 0;
}
