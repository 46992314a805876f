/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Identifying processes by more than their number. A pid alone may have been
 * reused since it was written down; the daemon only signals a process after
 * checking who it is: its start time (field 22 of /proc/PID/stat) for the
 * worker it started, its command line for a QEMU a crashed run left behind.
 * Signals go through a pidfd opened before the check, so the process checked
 * is the process signalled.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct json_object;

/* Start time of pid in clock ticks since boot. -ENOENT: no such process. */
int proc_starttime(pid_t pid, uint64_t *ret);

/* pidfd_open(); -errno. */
int proc_pidfd_open(pid_t pid);
/* pidfd_send_signal(); -errno (-ESRCH: it has exited). */
int proc_pidfd_signal(int pidfd, int sig);
/* Waits up to timeout_ms for the process behind pidfd to exit: 1 exited, 0 still alive, -errno. */
int proc_pidfd_wait(int pidfd, int timeout_ms);

/*
 * Is pid the QEMU of run_id? Its executable name starts with "qemu-system"
 * and either its argv equals expected_argv (a JSON array of strings, may be
 * NULL) or it carries "-name" with a value that contains run_id.
 */
bool proc_is_run_qemu(pid_t pid, const char *run_id, struct json_object *expected_argv);
