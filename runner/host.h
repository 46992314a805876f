/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host a run executes on, for the report, and the QEMU it will use:
 * version, package, and whether it has what the scenarios need (asked of
 * a QEMU started with -machine none, so before any VM or knob).
 */
#pragma once

#include <stdbool.h>

#include "error.h"

struct report_host;

/* Fills kernel, cmdline, CPU, memory, hostname, virtualized. */
int host_collect(struct report_host *h);

struct qemu_info {
	char *path;          /* resolved binary */
	int major, minor, micro;
	char package[128];
	bool has_query_stats;
	bool has_background_snapshot;
	bool kvm_present;    /* query-kvm with -accel kvm */
};

/* Starts qemu -machine none,accel=kvm with QMP on a socketpair, asks, quits. */
int qemu_probe(const char *binary, struct qemu_info *ret, struct sb_error *err);
void qemu_info_done(struct qemu_info *q);
