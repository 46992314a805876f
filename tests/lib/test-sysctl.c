// SPDX-License-Identifier: GPL-2.0-or-later
#include "test-sysctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static struct {
	char path[128];
	char saved[32];
	bool changed;
	pid_t pid; /* who set it: a forked child leaves it to its parent */
} sysctls[8];
static unsigned n_sysctls;
static void (*signal_fn)(void);
static struct sigaction prev_term, prev_int;

/* open/write/close: async-signal-safe */
static int write_file(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC); /* O_TRUNC: what a shell does; /proc/sys ignores it */
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, v, strlen(v));
	close(fd);
	return n == (ssize_t)strlen(v) ? 0 : -EIO;
}

bool test_sysctl_restore(void)
{
	pid_t self = getpid();
	bool all = true;

	for (unsigned i = 0; i < n_sysctls; i++) {
		if (sysctls[i].pid != self)
			continue;
		if (sysctls[i].changed && write_file(sysctls[i].path, sysctls[i].saved) == 0)
			sysctls[i].changed = false;
		all &= !sysctls[i].changed;
	}
	return all;
}

static void restore_at_exit(void)
{
	test_sysctl_restore();
}

const char *test_sysctl_saved(const char *path)
{
	for (unsigned i = 0; i < n_sysctls; i++)
		if (!strcmp(sysctls[i].path, path))
			return sysctls[i].saved;
	return NULL;
}

/* Restore, then hand over to whoever handled the signal before us, then die of it. */
static void on_signal(int sig)
{
	struct sigaction *prev = sig == SIGTERM ? &prev_term : &prev_int;

	if (signal_fn)
		signal_fn();
	test_sysctl_restore();
	if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN && prev->sa_handler != on_signal)
		prev->sa_handler(sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

void test_sysctl_install_signal_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_signal }, old;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &old);
	if (old.sa_handler != on_signal)
		prev_term = old;
	sigaction(SIGINT, &sa, &old);
	if (old.sa_handler != on_signal)
		prev_int = old;
}

void test_sysctl_on_signal(void (*fn)(void))
{
	signal_fn = fn;
}

/* "/proc/sys/kernel/numa_balancing" -> "kernel.numa_balancing" */
static void sysctl_name(const char *path, char *buf, size_t size)
{
	const char *p = strncmp(path, "/proc/sys/", 10) ? path : path + 10;

	snprintf(buf, size, "%s", p);
	for (char *c = buf; *c; c++)
		if (*c == '/')
			*c = '.';
}

void test_sysctl_set(const char *path, const char *value)
{
	char name[128];
	int fd;
	ssize_t n;

	/* set again: the value first found is the one to put back */
	for (unsigned i = 0; i < n_sysctls; i++)
		if (sysctls[i].pid == getpid() && !strcmp(sysctls[i].path, path)) {
			sysctl_name(path, name, sizeof(name));
			sysctls[i].changed = true;
			CHECK_MSG(write_file(path, value) == 0, "cannot set %s=%s", name, value);
			return;
		}
	CHECK(n_sysctls < sizeof(sysctls) / sizeof(sysctls[0]) && strlen(path) < sizeof(sysctls[0].path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK_MSG(fd >= 0, "cannot read %s: %s", path, strerror(errno));
	n = read(fd, sysctls[n_sysctls].saved, sizeof(sysctls[0].saved) - 1);
	close(fd);
	CHECK(n > 0);
	sysctls[n_sysctls].saved[n] = '\0';
	/* a sysfs file of choices ("always [madvise] never"): the bracketed one is the value */
	char *open_b = strchr(sysctls[n_sysctls].saved, '['), *close_b = open_b ? strchr(open_b, ']') : NULL;
	if (open_b && close_b) {
		*close_b = '\0';
		memmove(sysctls[n_sysctls].saved, open_b + 1, strlen(open_b + 1) + 1);
	}
	snprintf(sysctls[n_sysctls].path, sizeof(sysctls[0].path), "%s", path);
	if (n_sysctls == 0)
		atexit(restore_at_exit);
	test_sysctl_install_signal_handlers();
	sysctls[n_sysctls].pid = getpid();
	sysctls[n_sysctls++].changed = true;
	sysctl_name(path, name, sizeof(name));
	CHECK_MSG(write_file(path, value) == 0, "cannot set %s=%s", name, value);
}
