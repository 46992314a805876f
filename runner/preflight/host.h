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

/*
 * What the runner relies on, each asked of QEMU itself (query-qmp-schema,
 * query-migrate-capabilities), not inferred from its version. The report
 * lists them by name (host.qemu.features); qemu_feature_since() says which
 * QEMU brought each, for preflight's refusals.
 */
enum qemu_feature {
	QEMU_FEATURE_QUERY_STATS,          /* "query-stats": KVM's own statistics */
	QEMU_FEATURE_BACKGROUND_SNAPSHOT,  /* "background-snapshot" migration capability */
	QEMU_FEATURE_POSTCOPY_RAM,         /* "postcopy-ram" migration capability */
	QEMU_FEATURE_POSTCOPY_PREEMPT,     /* "postcopy-preempt" migration capability */
	QEMU_FEATURE_MIGRATE_CHANNELS,     /* "migrate-channels": migrate and migrate-incoming take "channels" */
	QEMU_FEATURE_RUN_WITH_USER,        /* "run-with-user": -run-with user= (-runas is gone from 10.0) */
	QEMU_FEATURE_MAX,
};

struct qemu_info {
	char *path;          /* resolved binary */
	int major, minor, micro;
	char package[128];
	bool has[QEMU_FEATURE_MAX];
	bool has_query_stats;         /* has[QEMU_FEATURE_QUERY_STATS] */
	bool has_background_snapshot; /* has[QEMU_FEATURE_BACKGROUND_SNAPSHOT] */
	bool kvm_present;    /* query-kvm with -accel kvm */
};

/* The feature's name in reports ("query-stats", "migrate-channels" ...). */
const char *qemu_feature_name(enum qemu_feature f);
/* The QEMU release that brought it ("7.1"). */
const char *qemu_feature_since(enum qemu_feature f);
/* The names of the features q has, in enum order, as a string vector (never NULL but on out of memory). */
char **qemu_feature_names(const struct qemu_info *q);
/* postcopy-preempt as the runner uses it (a unix socket, 8.0's preempt channel) */
#define QEMU_PREEMPT_MIN_MAJOR 8
#define QEMU_PREEMPT_MIN_MINOR 0

/* Is q at least major.minor? */
bool qemu_version_at_least(const struct qemu_info *q, int major, int minor);

/*
 * Starts qemu -machine none,accel=kvm:tcg with QMP on a socketpair, asks
 * query-version, query-qmp-schema, query-migrate-capabilities and
 * query-kvm, quits.
 */
int qemu_probe(const char *binary, struct qemu_info *ret, struct sb_error *err);
void qemu_info_done(struct qemu_info *q);
