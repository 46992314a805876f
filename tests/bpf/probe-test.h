/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the bpf/ integration tests. */
#pragma once

#include <string.h>
#include <unistd.h>

#include "check.h"
#include "probes.h"

/* Open and attach; skip only when this machine cannot run BPF probes at all. */
static inline struct sb_probes *probes_start(pid_t pid, const struct sb_probe_options *o)
{
	struct sb_error err = { 0 };
	struct sb_probes *p = NULL;
	int r;

	if (geteuid() != 0)
		SKIP_TEST("root (BPF probes need CAP_BPF and CAP_PERFMON)");
	r = sb_probes_open(pid, o, &p, &err);
	if (r == -EOPNOTSUPP)
		SKIP_TEST("a kernel that accepts any KVM tracepoint probe: %s", err.msg);
	CHECK_MSG(r == 0, "sb_probes_open(%d): %s", (int)pid, err.msg);
	r = sb_probes_attach(p, &err);
	CHECK_MSG(r == 0, "sb_probes_attach: %s", err.msg);
	return p;
}

/* a and b loaded the same probes with the same backends; `what` names b's options, "else" a's result, in a failure. */
static inline void check_same_probes(const struct sb_probes *a, const struct sb_probes *b, const char *what)
{
	CHECK(sb_probes_probe_count(a) == sb_probes_probe_count(b));
	for (size_t i = 0; i < sb_probes_probe_count(a); i++) {
		const struct sb_probe_info *x = sb_probes_probe(a, i), *y = sb_probes_probe(b, i);

		/* counting only leaves out the one probe that serves only the attribution (bpf/probes.c's gates) */
		if (x->available && !y->available && strstr(y->reason, "off: counting only")) {
			CHECK_MSG(!strcmp(y->name, "fentry:kvm_mmu_notifier_invalidate_range_start"), "%s, %s: %s", y->name,
				  what, y->reason);
			continue;
		}
		CHECK_MSG(x->available == y->available && x->backend == y->backend, "%s, %s: %s (%s), else %s (%s)",
			  y->name, what, sb_backend_name(y->backend), y->reason, sb_backend_name(x->backend), x->reason);
	}
}

static inline void probes_read(struct sb_probes *p, struct sb_probe_snapshot *s)
{
	struct sb_error err = { 0 };

	CHECK_MSG(sb_probes_read(p, s, &err) == 0, "sb_probes_read: %s", err.msg);
}

/* b - a for every counter, in place into d */
static inline void snap_delta(const struct sb_probe_snapshot *a, const struct sb_probe_snapshot *b,
			      struct sb_probe_snapshot *d)
{
	const __u64 *x = (const __u64 *)&a->c, *y = (const __u64 *)&b->c;
	__u64 *z = (__u64 *)&d->c;

	for (size_t i = 0; i < sizeof(struct sb_counts) / sizeof(__u64); i++)
		z[i] = y[i] - x[i];
	d->mono_ns = b->mono_ns - a->mono_ns;
}

static inline __u64 cause_sum(const struct sb_probe_snapshot *s, enum sb_attr attr, enum sb_ctx ctx)
{
	__u64 n = 0;

	for (int k = 0; k < SB_CAUSE_MAX; k++)
		n += s->c.cause[attr][ctx][k];
	return n;
}

/* Whether any recorded stack of attr (and cause, -1: any) has a frame starting with fn. */
static inline bool stack_has_frame(struct sb_probes *p, enum sb_attr attr, int cause, bool sampled, const char *fn)
{
	struct sb_error err = { 0 };
	struct sb_stack *st = NULL;
	size_t n = 0, len = strlen(fn);
	bool found = false;

	CHECK_MSG(sb_probes_top_stacks(p, attr, cause, sampled, 1000, &st, &n, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < n && !found; i++)
		for (size_t f = 0; f < st[i].nr; f++)
			if (!strncmp(st[i].frames[f].symbol, fn, len) && st[i].frames[f].symbol[len] == '+') {
				found = true;
				break;
			}
	free(st);
	return found;
}
