/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What runs the guests a test starts on this host: KVM when /dev/kvm opens,
 * else QEMU's TCG (docs/testing.md#without-devkvm). Flows (QMP, telemetry,
 * snapshots, failures, the daemon) are the same under TCG; what only KVM
 * has (its statistics, BPF counts of KVM events) a test checks under KVM, or
 * checks reported unavailable under TCG. Said once on stderr.
 */
#pragma once

#include <stdbool.h>

/* true: /dev/kvm opens read-write; false: the guests run under TCG */
bool test_kvm(void);

/* "kvm" or "tcg", as QEMU's -accel and the spec's vm.accel take it */
const char *test_accel(void);

/*
 * Whether the guests' clocks are an emulator's: under TCG here, or under KVM
 * in a host VM that TCG runs (hostvm-exec's SNAPBENCH_HOSTVM_ACCEL=tcg).
 * Counts are exact either way; a test that compares two clocks (a PIT
 * calibration against kvmclock) allows the drift of emulated time.
 */
bool test_timing_emulated(void);
