/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A sysctl a test or benchmark sets itself, put back on every exit path: at
 * exit (also after a failed CHECK) and on SIGTERM/SIGINT, where the previous
 * handler (e.g. tests/qmp's qemu-launch, which kills its QEMUs) runs after
 * the restore and the process then dies of the signal.
 *
 * A sysctl a run can set is a knob of the run, not set here; a test that
 * sets one a run could also set holds the host-wide knob lock meanwhile
 * (docs/testing.md).
 */
#pragma once

#include <stdbool.h>

/*
 * Reads the sysctl at path (a /proc/sys file, or a sysfs file of choices
 * such as transparent_hugepage/enabled, "always [madvise] never", whose
 * bracketed choice is the value kept) and sets it to value; fails the test
 * when either cannot be done. Setting one again keeps the value first
 * found. Up to eight per program.
 */
void test_sysctl_set(const char *path, const char *value);

/*
 * Puts back every sysctl test_sysctl_set() changed in this process (not a
 * forked parent's); true when all are back. Async-signal-safe.
 */
bool test_sysctl_restore(void);

/* The value test_sysctl_set() found at path (for messages), or NULL. */
const char *test_sysctl_saved(const char *path);

/*
 * (Re)installs the SIGTERM/SIGINT handlers: call it after anything else that
 * installs its own (e.g. test_qemu_start()) so that the restore comes first.
 */
void test_sysctl_install_signal_handlers(void);

/* fn runs first in the signal handler (e.g. kills a helper process); async-signal-safe. */
void test_sysctl_on_signal(void (*fn)(void));
