/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A trimmed vmlinux.h for x86-64: only the kernel types snapbench's probes
 * touch, declared with the field names the kernel uses. It is not a copy of
 * any kernel's layout: every kernel record below carries
 * preserve_access_index, so clang emits CO-RE relocations and libbpf fixes
 * each field offset against the running kernel's BTF at load time. A field
 * that the running kernel lacks fails the load with libbpf naming the
 * field, unless the program guards it with bpf_core_field_exists().
 *
 * Why trimmed rather than the full ~2.8 MB dump: the set of kernel types
 * the probes depend on is visible and reviewable here, diffs stay readable,
 * and nothing in it is specific to one kernel build. The build option
 * -Dbpf_vmlinux=generate uses a full dump of /sys/kernel/btf/vmlinux
 * instead (the programs compile against either), and -Dbpf_vmlinux=PATH
 * takes any vmlinux.h.
 *
 * Adding a probe that needs a new kernel type or field: add it here with
 * the kernel's own names; offsets do not matter.
 */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __s8 s8;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
enum { false = 0, true = 1 };
typedef int pid_t;
typedef u64 gfn_t;
typedef u64 gpa_t;

/* UAPI (stable ABI, layouts are fixed): what BPF programs name directly. */
enum bpf_map_type {
	BPF_MAP_TYPE_UNSPEC = 0,
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_F_SKIP_FIELD_MASK = 0xff,
	BPF_F_USER_STACK = 1ULL << 8,
};

struct bpf_raw_tracepoint_args {
	__u64 args[0];
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct pt_regs {
	unsigned long r15;
	unsigned long r14;
	unsigned long r13;
	unsigned long r12;
	unsigned long bp;
	unsigned long bx;
	unsigned long r11;
	unsigned long r10;
	unsigned long r9;
	unsigned long r8;
	unsigned long ax;
	unsigned long cx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long cs;
	unsigned long flags;
	unsigned long sp;
	unsigned long ss;
};

struct thread_info {
	__u32 cpu; /* x86 since 5.16 */
};

struct sched_entity {
	u64 nr_migrations;
};

struct task_struct {
	struct thread_info thread_info;
	unsigned int cpu; /* before 5.16 */
	struct sched_entity se;
	void *stack;
	unsigned int flags;
	struct mm_struct *mm;
	pid_t pid;
	pid_t tgid;
	char comm[16];
};

struct mm_struct {
	struct task_struct *owner; /* CONFIG_MEMCG */
};

enum mmu_notifier_event {
	MMU_NOTIFY_UNMAP = 0,
	MMU_NOTIFY_CLEAR = 1,
	MMU_NOTIFY_PROTECTION_VMA = 2,
	MMU_NOTIFY_PROTECTION_PAGE = 3,
	MMU_NOTIFY_SOFT_DIRTY = 4,
	MMU_NOTIFY_RELEASE = 5,
	MMU_NOTIFY_MIGRATE = 6,
	MMU_NOTIFY_EXCLUSIVE = 7,
};

struct mmu_notifier {
	struct mm_struct *mm;
};

struct mmu_notifier_range {
	struct mm_struct *mm;
	unsigned long start;
	unsigned long end;
	unsigned int flags;
	enum mmu_notifier_event event;
};

struct kvm {
	struct mm_struct *mm;
	struct mmu_notifier mmu_notifier;
	pid_t userspace_pid;
};

struct kvm_vcpu {
	struct kvm *kvm;
	int vcpu_id;
};

struct kvm_mmu_page;
struct kvm_page_fault;

enum tlb_flush_reason {
	TLB_FLUSH_ON_TASK_SWITCH = 0,
	TLB_REMOTE_SHOOTDOWN = 1,
	TLB_LOCAL_SHOOTDOWN = 2,
	TLB_LOCAL_MM_SHOOTDOWN = 3,
	TLB_REMOTE_SEND_IPI = 4,
	TLB_REMOTE_WRONG_CPU = 5,
};

enum migrate_mode {
	MIGRATE_ASYNC = 0,
	MIGRATE_SYNC_LIGHT = 1,
	MIGRATE_SYNC = 2,
};

/* Classic tracepoint records (the perf ring layout, relocated by CO-RE). */
struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

struct trace_event_raw_kvm_unmap_hva_range {
	struct trace_entry ent;
	unsigned long start;
	unsigned long end;
};

struct trace_event_raw_kvm_age_hva {
	struct trace_entry ent;
	unsigned long start;
	unsigned long end;
};

struct trace_event_raw_kvm_test_age_hva {
	struct trace_entry ent;
	unsigned long hva;
};

struct trace_event_raw_kvm_page_fault {
	struct trace_entry ent;
	unsigned int vcpu_id;
	unsigned long guest_rip;
	u64 fault_address;
	u64 error_code;
};

struct trace_event_raw_kvm_exit {
	struct trace_entry ent;
	unsigned int exit_reason;
	unsigned long guest_rip;
	u32 isa;
};

struct trace_event_raw_kvm_inj_virq {
	struct trace_entry ent;
	unsigned int vector;
	bool soft;
	bool reinjected;
};

struct trace_event_raw_kvm_emulate_insn {
	struct trace_entry ent;
	__u64 rip;
	__u32 csbase;
	__u8 len;
	__u8 insn[15];
	__u8 flags;
	__u8 failed;
};

struct trace_event_raw_fast_page_fault {
	struct trace_entry ent;
	int vcpu_id;
	gpa_t cr2_or_gpa;
	u64 error_code;
	u64 *sptep;
	u64 old_spte;
	u64 new_spte;
	int ret;
};

struct trace_event_raw_kvm_mmu_page_class {
	struct trace_entry ent;
	__u64 gfn;
};

struct trace_event_raw_kvm_tdp_mmu_spte_changed {
	struct trace_entry ent;
	u64 gfn;
	u64 old_spte;
	u64 new_spte;
	u8 level;
	u8 as_id;
};

struct trace_event_raw_kvm_mmu_set_spte {
	struct trace_entry ent;
	u64 gfn;
	u64 spte;
};

struct trace_event_raw_kvm_mmu_split_huge_page {
	struct trace_entry ent;
	u64 gfn;
	u64 spte;
	int level;
	int errno;
};

struct trace_event_raw_tlb_flush {
	struct trace_entry ent;
	int reason;
	unsigned long pages;
};

struct trace_event_raw_mm_migrate_pages_start {
	struct trace_entry ent;
	enum migrate_mode mode;
	int reason;
};

struct trace_event_raw_mm_migrate_pages {
	struct trace_entry ent;
	unsigned long succeeded;
};

#pragma clang attribute pop

#endif /* __VMLINUX_H__ */
