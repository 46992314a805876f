// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reference for the probe-cost benchmark: the least a tp_btf program
 * can do per event, bump one per-CPU counter. minimal_fentry, loaded only
 * by config minimal-fentry, is the same on fentry: the least a program on
 * kvm_mmu_notifier_invalidate_range_start costs a run, the trampoline's
 * accounting included.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("tp_btf/kvm_unmap_hva_range")
int BPF_PROG(minimal_unmap, unsigned long start, unsigned long end)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &zero);

	if (v)
		(*v)++;
	return 0;
}

SEC("?fentry/kvm_mmu_notifier_invalidate_range_start")
int BPF_PROG(minimal_fentry)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &zero);

	if (v)
		(*v)++;
	return 0;
}
