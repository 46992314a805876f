// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The numa-hinting scenario (seed 002: the TLB shootdowns KVM performs for
 * the invalidations NUMA balancing sends, which the patch removes for
 * long-term pinned guest memory). NUMA balancing (kernel.numa_balancing,
 * a knob of the spec) scans the memory of a task's VMAs whose memory
 * policy allows migrate-on-fault: the default policy does, a VMA's own
 * policy only with MPOL_F_MOF, which userspace asks for with MPOL_BIND |
 * MPOL_F_NUMA_BALANCING (Linux 5.12+). The guest RAM is a memfd (vm.backing
 * "memfd", so that arms[].pin can pin it), whose policy is the memfd's,
 * shared by every mapping of it:
 *
 *   QEMU start  the memory backend interleaves the RAM over the host's
 *               online nodes (policy=interleave,host-nodes=...): it is
 *               spread over both nodes of a 2-node host VM, and NUMA
 *               balancing does not scan it;
 *   prepare     the runner maps the memfd, and places vCPU i's thread on
 *               node i % nodes (sched_setaffinity over the node's CPUs);
 *   start       (the end of the pre window) the RAM's policy becomes
 *               MPOL_BIND over every node | MPOL_F_NUMA_BALANCING: from the
 *               next scan on, change_prot_numa() sends KVM an invalidation
 *               per range of it, and hinting faults migrate what a vCPU on
 *               the other node touches (pinned pages fail to migrate);
 *   poll        done after spec.numa_hinting.steady_s;
 *   finish      the policy is interleave again: scanning of the guest RAM
 *               stops, the post window shows what is left (QEMU's other
 *               memory keeps the default policy and is scanned throughout).
 *
 * The scenario changes no knob: kernel.numa_balancing and the scan period
 * (debugfs:sched/numa_balancing/...) are the spec's knobs, journaled and
 * restored by the runner. It refuses to start when numa_balancing is 0.
 */
#include <errno.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "fileio.h"
#include "guest-pin.h"
#include "json-util.h"
#include "macro.h"
#include "numa-host.h"
#include "qmp.h"
#include "scenario.h"
#include "vm.h"

#define NUMA_BALANCING "/proc/sys/kernel/numa_balancing"
#define QMP_TIMEOUT_MS 10000

struct numa {
	void *map;
	uint64_t bytes;
	uint64_t nodes;         /* online nodes, a bit mask */
	char balancing[16];
	uint64_t start_ns, end_ns;
	unsigned n_vcpus;
	int vcpu_node[REPORT_NUMA_VCPUS_MAX];
	bool pages_start, pages_end;
	uint64_t pages[2][REPORT_NUMA_NODES_MAX];
	char error[SB_ERROR_MAX];
};

static int fail(struct numa *s, int k, struct sb_error *err)
{
	snprintf(s->error, sizeof(s->error), "%s", err && err->msg[0] ? err->msg : strerror(-k));
	return k;
}

/* The n-th online node (n < count). */
static unsigned nth_node(uint64_t mask, unsigned n)
{
	for (unsigned b = 0; b < 64; b++)
		if (mask & (1ull << b) && n-- == 0)
			return b;
	return 0;
}

/* vCPU i's thread on node i % nodes: the guest's vCPUs touch the RAM from both nodes. */
static int place_vcpus(struct numa *s, const struct scenario_ctx *ctx, struct sb_error *err)
{
	_cleanup_json_ struct json_object *ret = NULL;
	unsigned count = numa_node_count(s->nodes);
	int k = qmp_execute(ctx->vm->qmp, "query-cpus-fast", NULL, -1, QMP_TIMEOUT_MS, &ret, err);

	if (k < 0)
		return sb_error_prefix(err, "numa-hinting: finding the vCPU threads (query-cpus-fast)");
	if (!json_object_is_type(ret, json_type_array))
		return sb_error_set(err, -EPROTO, "numa-hinting: query-cpus-fast did not return an array");
	for (size_t i = 0; i < json_object_array_length(ret) && s->n_vcpus < REPORT_NUMA_VCPUS_MAX; i++) {
		struct json_object *cpu = json_object_array_get_idx(ret, i), *tid, *idx;
		cpu_set_t set;
		unsigned node;

		if (!json_object_object_get_ex(cpu, "thread-id", &tid) || !json_object_object_get_ex(cpu, "cpu-index", &idx))
			return sb_error_set(err, -EPROTO, "numa-hinting: query-cpus-fast gave a vCPU without thread-id or cpu-index");
		node = nth_node(s->nodes, (unsigned)json_object_get_int(idx) % count);
		k = numa_host_node_cpus(node, &set, err);
		if (k < 0)
			return k;
		if (sched_setaffinity((pid_t)json_object_get_int(tid), sizeof(set), &set) < 0)
			return sb_error_set(err, -errno, "numa-hinting: placing vCPU %d (thread %d) on node %u: %s",
					    json_object_get_int(idx), json_object_get_int(tid), node, strerror(errno));
		s->vcpu_node[s->n_vcpus++] = (int)node;
	}
	return 0;
}

static void read_pages(struct numa *s, const struct scenario_ctx *ctx, int which)
{
	struct sb_error e = { 0 };

	if (numa_mapping_pages(ctx->vm->pid, GUEST_MEMFD_NAME, s->pages[which], REPORT_NUMA_NODES_MAX, &e) == 0) {
		if (which == 0)
			s->pages_start = true;
		else
			s->pages_end = true;
	}
}

static int numa_prepare(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct numa *s = state;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int k;

	s->map = MAP_FAILED;
	s->bytes = ctx->spec->vm.memory;
	k = numa_host_nodes(&s->nodes, err);
	if (k < 0)
		return fail(s, k, err);
	k = read_full_file(NUMA_BALANCING, 64, &buf, &len, NULL);
	if (k < 0)
		return fail(s, sb_error_set(err, -EOPNOTSUPP,
					    "numa-hinting: cannot read %s (%s): this kernel has no NUMA balancing "
					    "(CONFIG_NUMA_BALANCING)", NUMA_BALANCING, strerror(-k)), err);
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(s->balancing, sizeof(s->balancing), "%s", buf);
	if (!strcmp(buf, "0"))
		return fail(s, sb_error_set(err, -EINVAL,
					    "numa-hinting: kernel.numa_balancing is 0 here, so nothing scans the guest RAM; "
					    "add the knob sysctl:kernel.numa_balancing=1 to the spec (knobs)"), err);
	k = guest_memfd_map(ctx->vm->pid, s->bytes, &s->map, err);
	if (k < 0)
		return fail(s, sb_error_prefix(err, "numa-hinting"), err);
	k = place_vcpus(s, ctx, err);
	if (k < 0)
		return fail(s, k, err);
	return 0;
}

static int numa_start(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct numa *s = state;
	int k;

	read_pages(s, ctx, 0);
	k = numa_set_policy(s->map, s->bytes, NUMA_MPOL_BIND | NUMA_MPOL_F_NUMA_BALANCING, s->nodes, err);
	if (k == -EINVAL)
		return fail(s, sb_error_set(err, -EOPNOTSUPP,
					    "numa-hinting: this kernel refuses MPOL_F_NUMA_BALANCING (Linux 5.12+), so NUMA "
					    "balancing cannot be let scan a memfd's pages"), err);
	if (k < 0)
		return fail(s, sb_error_prefix(err, "numa-hinting: letting NUMA balancing scan the guest RAM"), err);
	s->start_ns = mono_ns();
	return 0;
}

static int numa_poll(void *state, const struct scenario_ctx *ctx, bool *done, struct sb_error *err)
{
	struct numa *s = state;

	(void)err;
	*done = mono_ns() - s->start_ns >= (uint64_t)(ctx->spec->numa_hinting.steady_s * 1e9);
	return 0;
}

/* Interleaved again, without MPOL_F_MOF: NUMA balancing skips the guest RAM from its next scan. */
static int stop_scanning(struct numa *s, struct sb_error *err)
{
	int mode = numa_node_count(s->nodes) > 1 ? NUMA_MPOL_INTERLEAVE : NUMA_MPOL_BIND;
	int k = numa_set_policy(s->map, s->bytes, mode, s->nodes, err);

	if (k == 0)
		s->end_ns = mono_ns();
	return k;
}

static int numa_finish(void *state, const struct scenario_ctx *ctx, struct sb_error *err)
{
	struct numa *s = state;
	int k = stop_scanning(s, err);

	if (k < 0)
		return fail(s, sb_error_prefix(err, "numa-hinting: ending NUMA balancing's scans of the guest RAM"), err);
	read_pages(s, ctx, 1);
	return 0;
}

static void numa_summarize(void *state, const struct scenario_ctx *ctx, struct report_rep *rep)
{
	struct numa *s = state;
	struct report_numa *m = &rep->numa;

	m->set = true;
	m->nodes = numa_node_count(s->nodes);
	snprintf(m->numa_balancing, sizeof(m->numa_balancing), "%s", s->balancing);
	m->started_s = s->start_ns ? (double)(s->start_ns - ctx->rep_start_ns) / 1e9 : -1;
	m->ended_s = s->end_ns ? (double)(s->end_ns - ctx->rep_start_ns) / 1e9 : -1;
	m->n_vcpus = s->n_vcpus;
	memcpy(m->vcpu_node, s->vcpu_node, sizeof(m->vcpu_node));
	m->pages_known = s->pages_start && s->pages_end;
	/* by node number: a host with nodes 0 and 2 has 3 entries */
	m->node_slots = 0;
	for (unsigned b = 0; b < REPORT_NUMA_NODES_MAX; b++)
		if (s->nodes & (1ull << b))
			m->node_slots = b + 1;
	if (m->pages_known) {
		memcpy(m->pages_start, s->pages[0], sizeof(m->pages_start));
		memcpy(m->pages_end, s->pages[1], sizeof(m->pages_end));
	}
	free(m->error);
	m->error = *s->error ? strdup(s->error) : NULL;
}

static void numa_cleanup(void *state, const struct scenario_ctx *ctx)
{
	struct numa *s = state;

	(void)ctx;
	if (s->map != MAP_FAILED && s->map) {
		if (s->start_ns && !s->end_ns)
			stop_scanning(s, NULL);
		munmap(s->map, s->bytes);
	}
	s->map = MAP_FAILED;
}

/* the guest RAM over every node, so that NUMA balancing has pages to move (memfd: vm-qemu.c) */
static void numa_vm_config(const struct run_spec *spec, struct vm_config *cfg)
{
	(void)spec;
	cfg->spread_nodes = true;
}

const struct scenario_ops scenario_numa_hinting = {
	.name = "numa-hinting",
	.window = REPORT_WINDOW_STEADY,
	.zap_causes = true, /* numa_sptes_zapped */
	.state_size = sizeof(struct numa),
	.prepare = numa_prepare,
	.start = numa_start,
	.poll = numa_poll,
	.finish = numa_finish,
	.summarize = numa_summarize,
	.cleanup = numa_cleanup,
	.vm_config = numa_vm_config,
};
