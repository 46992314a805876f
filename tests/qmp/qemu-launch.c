// SPDX-License-Identifier: GPL-2.0-or-later
#include "qemu-launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "test-qemu.h"
#include "clock.h"
#include "test-accel.h"

#define MAX_QEMUS 4
#define MAX_FILES 16

static struct test_qemu *qemus[MAX_QEMUS];
static char files[MAX_QEMUS][MAX_FILES][192];
static bool handlers_installed;

static int slot_of(const struct test_qemu *q)
{
	for (int i = 0; i < MAX_QEMUS; i++)
		if (qemus[i] == q)
			return i;
	return -1;
}

/* Async-signal-safe: kill, waitpid, unlink and rmdir only. */
static void cleanup_slot(int i)
{
	struct test_qemu *q = qemus[i];

	if (!q)
		return;
	if (q->pid > 0) {
		kill(q->pid, SIGKILL);
		waitpid(q->pid, NULL, 0);
		q->pid = 0;
	}
	for (int f = 0; f < MAX_FILES; f++)
		if (files[i][f][0]) {
			unlink(files[i][f]);
			files[i][f][0] = '\0';
		}
	rmdir(q->dir);
	qemus[i] = NULL;
}

void test_qemu_print_log(const struct test_qemu *q, FILE *out, int max_lines)
{
	FILE *f = fopen(q->log_path, "r");
	char line[512];

	for (int i = 0; f && i != max_lines && fgets(line, sizeof(line), f); i++)
		fputs(line, out);
	if (f)
		fclose(f);
}

static void cleanup_all(void)
{
	for (int i = 0; i < MAX_QEMUS; i++) {
		struct test_qemu *q = qemus[i];

		/* Still registered at exit: the test failed; show what QEMU said. */
		if (q && q->log_path[0]) {
			fprintf(stderr, "--- %s ---\n", q->log_path);
			test_qemu_print_log(q, stderr, -1);
		}
		cleanup_slot(i);
	}
}

static void on_signal(int sig)
{
	for (int i = 0; i < MAX_QEMUS; i++)
		cleanup_slot(i);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void register_file(int slot, const char *path)
{
	for (int f = 0; f < MAX_FILES; f++) {
		if (!strcmp(files[slot][f], path))
			return;
		if (!files[slot][f][0]) {
			snprintf(files[slot][f], sizeof(files[slot][f]), "%s", path);
			return;
		}
	}
	CHECK_MSG(false, "too many temp files for one QEMU");
}

const char *test_qemu_path(struct test_qemu *q, const char *name, char *buf, size_t size)
{
	int slot = slot_of(q);

	CHECK(slot >= 0);
	CHECK((size_t)snprintf(buf, size, "%s/%s", q->dir, name) < size);
	register_file(slot, buf);
	return buf;
}

void test_qemu_start(struct test_qemu *q, int mem_mib, int smp, const char *const *extra_argv)
{
	const char *qemu = test_qemu_binary();
	char mem[16], cpus[16], qmp[192];
	const char *argv[64];
	size_t n = 0;
	int slot = -1;

	if (!qemu || !qemu[0])
		qemu = "qemu-system-x86_64";

	memset(q, 0, sizeof(*q));
	for (int i = 0; i < MAX_QEMUS; i++)
		if (!qemus[i]) {
			slot = i;
			break;
		}
	CHECK_MSG(slot >= 0, "more than %d QEMUs at once", MAX_QEMUS);
	if (!handlers_installed) {
		atexit(cleanup_all);
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
		handlers_installed = true;
	}

	snprintf(q->dir, sizeof(q->dir), "/tmp/snapbench-test.XXXXXX");
	CHECK(mkdtemp(q->dir));
	qemus[slot] = q;
	test_qemu_path(q, "qmp.sock", q->qmp_path, sizeof(q->qmp_path));
	test_qemu_path(q, "qemu.log", q->log_path, sizeof(q->log_path));

	snprintf(mem, sizeof(mem), "%d", mem_mib);
	snprintf(cpus, sizeof(cpus), "%d", smp);
	snprintf(qmp, sizeof(qmp), "unix:%s,server=on,wait=off", q->qmp_path);
	const char *base[] = { qemu, "-accel", test_accel(), "-display", "none", "-nodefaults", "-no-user-config",
			       "-m", mem, "-smp", cpus, "-qmp", qmp };
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		argv[n++] = base[i];
	for (size_t i = 0; extra_argv && extra_argv[i]; i++) {
		CHECK(n < sizeof(argv) / sizeof(argv[0]) - 1);
		argv[n++] = extra_argv[i];
	}
	argv[n] = NULL;

	int log = open(q->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(log >= 0);
	pid_t parent = getpid();
	q->pid = fork();
	CHECK(q->pid >= 0);
	if (q->pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		/* Die with the test, whatever kills it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		dup2(devnull, STDIN_FILENO);
		dup2(log, STDOUT_FILENO);
		dup2(log, STDERR_FILENO);
		execvp(argv[0], (char *const *)argv);
		dprintf(log, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(log);
}

int test_qemu_wait_exit(struct test_qemu *q, int timeout_ms)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	int status;

	if (q->pid <= 0)
		return -1;
	for (;;) {
		pid_t r = waitpid(q->pid, &status, WNOHANG);

		if (r == q->pid) {
			q->pid = 0;
			return status;
		}
		CHECK(r == 0);
		if (mono_ns() >= deadline)
			return -1;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
}

void test_qemu_stop(struct test_qemu *q)
{
	int slot = slot_of(q);

	if (slot >= 0)
		cleanup_slot(slot);
}
