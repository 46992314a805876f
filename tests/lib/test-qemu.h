/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QEMU a test starts: $SNAPBENCH_QEMU when set (tests/meson.build sets
 * it, with $SNAPBENCH_QEMU_WANT, for the QEMU 10.0 tier, suite qemu10:
 * docs/testing.md), else qemu-system-x86_64 in PATH. A tier's QEMU that is
 * missing fails the test, naming the command that fetches it: the tier
 * never falls back to the system's QEMU in silence.
 */
#pragma once

#include <stdbool.h>

/* $SNAPBENCH_QEMU (checked executable), or NULL for qemu-system-x86_64 in PATH */
const char *test_qemu_binary(void);

/* $SNAPBENCH_QEMU_WANT, the version the tier is for ("10.0"), or NULL */
const char *test_qemu_want(void);

/*
 * Does version ("10.0.2") belong to the tier's series? Always true without
 * $SNAPBENCH_QEMU_WANT.
 */
bool test_qemu_version_ok(const char *version);
