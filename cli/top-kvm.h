/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * KVM's own stats of one VM for snapbench top, the kvm.NAME rows: the
 * cumulative stats (counters, whose deltas make rates) of its vm target
 * and of its vCPUs summed, from QMP query-stats or from libvirt's bulk
 * stats of a domain. The names are fixed when the source is opened, so
 * every read fills the same slots.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct qmp_client;
struct libvirt_domain;
struct top_kvm;

/* One read: values[i] is name i's, -1 when that read lacked it. */
struct top_kvm_sample {
	uint64_t mono_ns;
	int64_t *values;
};

/*
 * Connects to the QMP socket at path, waiting up to timeout_ms for its
 * greeting. -ENOENT: nothing at path; -ENOTSOCK: not a socket there;
 * else qmp_connect()'s errors (qmp.h): -ETIMEDOUT (no greeting: another
 * client holds it, or the peer is no QMP server), -EBADMSG or -EPROTO (the
 * peer speaks something else than QMP).
 */
int top_qmp_connect(const char *path, int timeout_ms, struct qmp_client **ret, struct sb_error *err);

/* The QEMU process behind c: query-cpus-fast's first vCPU thread, and its thread group. */
int top_qmp_pid(struct qmp_client *c, pid_t *ret, struct sb_error *err);

/*
 * A source over c (taken, also on failure), named source in messages and
 * output. Learns the cumulative stats with query-stats-schemas;
 * -EREMOTEIO (QEMU before 7.1: no query-stats) or -ENODATA (no KVM stats,
 * e.g. TCG) with the reason in err.
 */
int top_kvm_open_qmp(struct qmp_client *c, const char *source, struct top_kvm **ret, struct sb_error *err);

/* A source over d (borrowed: it must outlive the source); its names are those of a first read. */
int top_kvm_open_libvirt(struct libvirt_domain *d, struct top_kvm **ret, struct sb_error *err);

size_t top_kvm_count(const struct top_kvm *k);
/* "kvm.exits": the row's name */
const char *top_kvm_name(const struct top_kvm *k, size_t i);
/* where the stats come from: the socket's path, or "libvirt domain NAME" */
const char *top_kvm_source(const struct top_kvm *k);

/* s->values has room for top_kvm_count() values: top_kvm_sample_alloc() makes it so. */
int top_kvm_sample_alloc(const struct top_kvm *k, struct top_kvm_sample *s);
int top_kvm_read(struct top_kvm *k, struct top_kvm_sample *s, struct sb_error *err);

void top_kvm_free(struct top_kvm *k);
