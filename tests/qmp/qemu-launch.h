/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * For tests: start a real QEMU with KVM (or, without /dev/kvm, TCG:
 * tests/lib/test-accel.h) and QMP on a private unix socket in
 * a fresh temp dir, from an argv vector (no shell). Every QEMU started here
 * is killed and its temp dir removed when the test exits, also when a CHECK
 * fails (atexit) or meson's timeout sends SIGTERM; the child also gets
 * SIGKILL if the test dies outright (PR_SET_PDEATHSIG).
 *
 *   qemu-system-x86_64 -accel kvm|tcg -display none -nodefaults -no-user-config
 *       -m MEM -smp SMP -qmp unix:DIR/qmp.sock,server=on,wait=off EXTRA...
 *
 * $SNAPBENCH_QEMU overrides the binary.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct test_qemu {
	pid_t pid;
	char dir[64];
	char qmp_path[128];
	char log_path[128];
};

/* extra_argv: NULL-ended arguments appended to the command line, or NULL. */
void test_qemu_start(struct test_qemu *q, int mem_mib, int smp, const char *const *extra_argv);

/* DIR/name in buf; the file is removed at cleanup. */
const char *test_qemu_path(struct test_qemu *q, const char *name, char *buf, size_t size);

/* Wait up to timeout_ms for QEMU to exit by itself; returns its wait status or -1 on timeout. */
int test_qemu_wait_exit(struct test_qemu *q, int timeout_ms);

/* QEMU's log (its stdout and stderr) to out, its first max_lines lines (-1: all). */
void test_qemu_print_log(const struct test_qemu *q, FILE *out, int max_lines);

/* Kill (if still running), reap, remove the temp dir. Safe to call twice. */
void test_qemu_stop(struct test_qemu *q);
