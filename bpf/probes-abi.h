/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the BPF programs (probes.bpf.c) and the loader (probes.c) share: the
 * layout of the per-CPU counter block, the stack records and the enums that
 * index them. Plain __u64/__u32 fields only, so the same header compiles for
 * the BPF target (types from vmlinux.h) and for user space (linux/types.h).
 *
 * Writers: every field of struct sb_counts is written by exactly one BPF
 * program (per-CPU, non-atomic increments are safe because the kernel never
 * nests one program inside itself on a CPU; different programs touch
 * different fields). The one exception, struct sb_unmap_fast's inflight_*
 * record, is written by the fentry on range_start and cleared by the
 * kvm_unmap_hva_range program, one after the other in the same task, never
 * from an interrupt. Readers sum the per-CPU copies.
 */
#pragma once

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Contexts an event can run in, relative to the target QEMU process. */
enum sb_ctx {
	SB_CTX_TARGET = 0, /* a thread of the target process (tgid match) */
	SB_CTX_KTHREAD,    /* a kernel thread: kswapd, khugepaged, kworker... (any VM) */
	SB_CTX_OTHER,      /* a thread of another user process: not the target VM */
	SB_CTX_MAX,
};

/*
 * Counters. Each is fed by one probe (a tracepoint through tp_btf, raw_tp or
 * a classic tracepoint, or an fentry program); the loader reports which.
 */
enum sb_counter {
	SB_C_UNMAP_HVA = 0,   /* kvm:kvm_unmap_hva_range; pages = host pages in the range */
	SB_C_AGE_HVA,         /* kvm:kvm_age_hva; pages = host pages in the range */
	SB_C_TEST_AGE_HVA,    /* kvm:kvm_test_age_hva */
	SB_C_PAGE_FAULT,      /* kvm:kvm_page_fault; detail = write faults */
	SB_C_FAST_PF,         /* kvmmmu:fast_page_fault; detail = fixed (RET_PF_FIXED) */
	SB_C_ZAP_PAGE,        /* kvmmmu:kvm_mmu_prepare_zap_page (shadow pages zapped) */
	SB_C_TDP_SPTE,        /* kvmmmu:kvm_tdp_mmu_spte_changed; detail = zaps (present -> not) */
	SB_C_SET_SPTE,        /* kvmmmu:kvm_mmu_set_spte (SPTEs installed) */
	SB_C_SPLIT_HUGE,      /* kvmmmu:kvm_mmu_split_huge_page */
	SB_C_TLB_TASK_SWITCH, /* tlb:tlb_flush, reason 0: on task switch */
	SB_C_TLB_REMOTE,      /* reason 1: remote shootdown received (IPI handler) */
	SB_C_TLB_LOCAL,       /* reason 2: local shootdown */
	SB_C_TLB_LOCAL_MM,    /* reason 3: local mm shootdown */
	SB_C_TLB_SEND_IPI,    /* reason 4: remote shootdown sent (initiator side) */
	SB_C_TLB_WRONG_CPU,   /* reason 5: remote wrong CPU */
	SB_C_KVM_EXIT,        /* kvm:kvm_exit: VM exits (== KVM's exits stat) */
	SB_C_INJ_VIRQ,        /* kvm:kvm_inj_virq (== irq_injections); detail = reinjected */
	SB_C_EMULATE_INSN,    /* kvm:kvm_emulate_insn (== insn_emulation + insn_emulation_fail); detail = failed */
	SB_C_MN_INVALIDATE,   /* fentry kvm_mmu_notifier_invalidate_range_start */
	SB_C_KVM_FLUSH,       /* fentry kvm_flush_remote_tlbs */
	SB_C_KVM_FLUSH_RANGE, /* fentry kvm_flush_remote_tlbs_range; pages = gfns */
	SB_C_CLEAR_DIRTY_LOG, /* fentry+fexit kvm_clear_dirty_log_protect (KVM_CLEAR_DIRTY_LOG); detail = ns inside */
	SB_C_GET_DIRTY_LOG,   /* fentry+fexit kvm_get_dirty_log_protect (KVM_GET_DIRTY_LOG); detail = ns inside */
	SB_C_MN_INVALIDATE_END, /* fentry kvm_mmu_notifier_invalidate_range_end: ends what SB_C_MN_INVALIDATE began */
	SB_C_MAX,
};

/* Timed calls (SB_C_CLEAR_DIRTY_LOG, SB_C_GET_DIRTY_LOG): per-call latency, bucket b = [2^b, 2^(b+1)) ns. */
#define SB_TIMED_CALLS 2
#define SB_TIMED_HIST 40

/*
 * kvm_exit by exit reason (target VM only), one slot per code: SVM exit
 * codes and VMX basic exit reasons below SB_EXIT_LOW in their own slot,
 * SVM's 0x400.. codes (npf, avic, vmgexit) after them, SVM's -1 (invalid
 * guest state) in SB_EXIT_SVM_ERR, every other code (and a vendor whose
 * struct the probe cannot read) in SB_EXIT_UNKNOWN.
 */
#define SB_EXIT_LOW 0x100
#define SB_EXIT_SVM_HIGH 0x400
#define SB_EXIT_HIGH_SLOTS 16
#define SB_EXIT_SVM_ERR (SB_EXIT_LOW + SB_EXIT_HIGH_SLOTS)
#define SB_EXIT_UNKNOWN (SB_EXIT_SVM_ERR + 1)
#define SB_EXIT_SLOTS 512 /* a power of two: the index is masked for the verifier */
#define SB_EXIT_UNKNOWN_CODE 0xffffffff00000000ULL /* no code read */

/* tlb:tlb_flush reasons map to consecutive counters. */
#define SB_TLB_REASONS 6

/* Counters whose events are classified into causes. */
enum sb_attr {
	SB_ATTR_UNMAP = 0,      /* SB_C_UNMAP_HVA */
	SB_ATTR_TLB_SHOOTDOWN,  /* SB_C_TLB_SEND_IPI */
	SB_ATTR_MN_INVALIDATE,  /* SB_C_MN_INVALIDATE */
	SB_ATTR_KVM_FLUSH,      /* SB_C_KVM_FLUSH + SB_C_KVM_FLUSH_RANGE */
	SB_ATTR_MAX,
};

enum sb_cause {
	SB_CAUSE_UFFD_WP = 0,
	SB_CAUSE_NUMA_HINTING,
	SB_CAUSE_MIGRATION,
	SB_CAUSE_RECLAIM,
	SB_CAUSE_MUNMAP_MADVISE,
	SB_CAUSE_MPROTECT,
	SB_CAUSE_THP,
	SB_CAUSE_KSM,
	SB_CAUSE_DIRTY_LOG,
	SB_CAUSE_OTHER,
	SB_CAUSE_MAX,
};

/*
 * syscall_cause[] holds cause + 1 for syscalls that decide a cause, 0 for
 * those that do not, or one of these for syscalls decided by an argument.
 */
#define SB_SYSCALL_IOCTL 0xfe           /* by the ioctl command (ioctl_cmd[], ioctl_cause[]) */
#define SB_SYSCALL_MADVISE 0xfd         /* by madvise()'s advice (madvise_cause[]) */
#define SB_SYSCALL_PROCESS_MADVISE 0xfc /* by process_madvise()'s advice (madvise_cause[]) */
#define SB_NR_MADVISE 128               /* advice values with their own cause */

#define SB_NR_SYSCALLS 512
#define SB_MAX_IOCTL_CMDS 8
#define SB_MAX_RULES 64     /* kernel functions that decide a cause from a stack */
#define SB_STACK_DEPTH 32   /* frames kept per stack */
#define SB_MN_EVENTS 16     /* enum mmu_notifier_event values counted */
#define SB_MN_FLAG_BITS 16  /* mmu_notifier_range.flags bits counted */
#define SB_MN_FLAG_VALUE_BITS 4 /* the flags' low bits counted by value, per cause (sb_counts.mn_cause_flags) */
#define SB_MN_FLAG_VALUES (1 << SB_MN_FLAG_VALUE_BITS)

/* How a cause was decided; counted to show what the classifier costs. */
enum sb_how {
	SB_HOW_KTHREAD = 0, /* the kernel thread's kind */
	SB_HOW_MARKER,      /* a marker tracepoint (migration in progress) */
	SB_HOW_TASK_FLAG,   /* PF_MEMALLOC: reclaim */
	SB_HOW_SYSCALL,     /* the current syscall and its arguments */
	SB_HOW_STACK,       /* a kernel stack walk matched a rule */
	SB_HOW_STACK_NONE,  /* a kernel stack walk matched nothing: other */
	SB_HOW_MAX,
};

/*
 * The syscall step (option decision_cache), per CPU and attributed counter.
 * The cause a syscall decides depends only on its number and one argument
 * (ioctl's command, madvise's advice), so the last decision is kept and
 * reused while the next event's syscall and argument are the same (a
 * background snapshot's hundreds of thousands of uffd-wp ioctls are one
 * decision). The events the syscall step decides are counted here, by
 * cause, in one place instead of three arrays; sb_probes_read() adds them
 * to cause, how and cause_pages, and counts the decisions reused (sb_counts.reused).
 */
/* 1 in N attributed events' stacks sampled by default (sb_probe_options.stack_sample_every); a power of two */
#define SB_DEFAULT_SAMPLE_EVERY 1024

#define SB_DECISION_CAUSES 16 /* a power of two >= SB_CAUSE_MAX: the programs mask the index */

struct sb_decisions {
	/*
	 * The hot part first: a snapshot's events touch these 32 bytes
	 * (by_cause[SB_CAUSE_UFFD_WP] is the first) and the counter's own
	 * block, nothing else of the per-CPU memory (every distinct line a
	 * program stores to costs it, measured: docs/probes.md "Cost").
	 */
	__u64 last;             /* the last decision: SB_LAST(nr + 1, SB_ARG_*, cause + 1); 0: none yet */
	__u64 last_arg;         /* the value of its deciding argument */
	struct {
		__u64 events;   /* of the target, decided by the syscall step */
		__u64 pages;    /* their pages (SB_ATTR_UNMAP) */
	} by_cause[SB_DECISION_CAUSES]; /* [SB_CAUSE_MAX] and up: never written */
	__u64 made;             /* decisions made that decided a cause (the rest of by_cause's events reused one) */
	__u64 sample_countdown; /* events until the next sampled stack, when sample_every is not a power of two */
	__u64 regs_at;          /* the BPF side's scratch (ptr_bits()) */
};

/*
 * The decision handed over: a syscall's is its cause alone (below
 * SB_DECISION_CAUSES, an index the program uses as it is), any other's its
 * cause | how << 8 | 1 << 16.
 */
#define SB_INFLIGHT_DECISION(cause, how)                                                                   \
	((how) == SB_HOW_SYSCALL ? (__u64)(cause) : ((__u64)(cause) | (__u64)(how) << 8 | 1ULL << 16))

#define SB_LAST(nr1, reg, cause1) ((__u64)(nr1) | (__u64)(reg) << 16 | (__u64)(cause1) << 24)
#define SB_LAST_NR1(last) ((last) & 0xffff)
#define SB_LAST_REG(last) (((last) >> 16) & 0xff)
#define SB_LAST_CAUSE1(last) (((last) >> 24) & 0xff)

enum { SB_ARG_NONE = 0, SB_ARG_SI, SB_ARG_DX, SB_ARG_R10 };

struct sb_count {
	__u64 events;
	__u64 pages;  /* pages covered, where the event has a range */
	__u64 detail; /* counter-specific, see enum sb_counter */
};

/* One per CPU: the slot of the counters map for that CPU (bpf/probes.bpf.c). */
struct sb_counts {
	struct sb_count count[SB_C_MAX][SB_CTX_MAX];
	__u64 cause[SB_ATTR_MAX][SB_CTX_MAX][SB_CAUSE_MAX];
	__u64 how[SB_ATTR_MAX][SB_HOW_MAX];
	__u64 mn_event[SB_CTX_MAX][SB_MN_EVENTS];
	__u64 mn_flag[SB_CTX_MAX][SB_MN_FLAG_BITS]; /* BPF: bits SB_MN_FLAG_VALUE_BITS and up; read: every bit */
	__u64 stacks_recorded[SB_ATTR_MAX]; /* stack records added or bumped */
	__u64 stacks_dropped[SB_ATTR_MAX];  /* stack map full */
	__u64 marker_dropped;               /* migration marker map full */
	__u64 timed_hist[SB_TIMED_CALLS][SB_TIMED_HIST]; /* target VM's timed calls, by latency */
	__u64 exit_reason[SB_EXIT_SLOTS];   /* target VM's kvm_exit by reason (SB_EXIT_*) */
	__u64 cause_pages[SB_CTX_MAX][SB_CAUSE_MAX]; /* SB_C_UNMAP_HVA's pages by cause */
	/* the target VM's TDP MMU SPTE zaps (SB_C_TDP_SPTE's detail) made inside one of its MMU-notifier
	 * invalidations, by the invalidation's cause (SB_ATTR_MN_INVALIDATE's, kept from range_start to range_end) */
	__u64 zap_cause[SB_CAUSE_MAX];
	/*
	 * The target VM's MMU-notifier invalidations (SB_C_MN_INVALIDATE) by
	 * cause ([SB_CAUSE_MAX]: not classified) and event, and by cause and
	 * the value of range->flags' low SB_MN_FLAG_VALUE_BITS bits (events
	 * with a higher bit set are also counted in mn_cause_flags_high): one
	 * store an event each, where a count per flag bit would test every
	 * bit. sb_mn_cause_flag_bit() gives the count per bit.
	 */
	__u64 mn_cause_event[SB_DECISION_CAUSES][SB_MN_EVENTS];
	__u64 mn_cause_flags[SB_DECISION_CAUSES][SB_MN_FLAG_VALUES];
	/* the MMU-notifier invalidations by context and the value of range->flags' low bits (mn_flag's) */
	__u64 mn_flag_values[SB_CTX_MAX][SB_MN_FLAG_VALUES];
	__u64 mn_cause_flags_high[SB_DECISION_CAUSES];
	/* the BPF side's, per CPU; zero in a struct sb_probe_snapshot, whose cause, how and cause_pages have them */
	struct sb_decisions decisions[SB_ATTR_MAX];
	/* events whose pt_regs, read without a helper, were not bpf_task_pt_regs()'s (checked when a stack is sampled) */
	__u64 regs_mismatch;
	/* filled by sb_probes_read(): the syscall decisions reused (struct sb_decisions) */
	__u64 reused[SB_ATTR_MAX];
};

/*
 * kvm_unmap_hva_range's hot path, per CPU for the first SB_FAST_CPUS CPUs,
 * in a global array of the BPF object (bpf/probes.bpf.c), whose address is
 * a constant of the programs: the programs made for one set of options
 * count the target's events here with no map lookup; the others, and
 * CPUs past SB_FAST_CPUS, count in the counters map. sb_probes_read()
 * adds these in.
 */
#define SB_FAST_CPUS 512

struct sb_unmap_fast {
	__u64 events; /* the target's events */
	__u64 pages;
	/*
	 * The target VM's invalidation that the fentry on
	 * kvm_mmu_notifier_invalidate_range_start classified on this CPU
	 * (option decision_cache), for the kvm_unmap_hva_range program, which
	 * the same call fires next. It takes the decision when the current
	 * task, the range's start and the task's migration count are the
	 * record's (no other task's record, and no record left behind on a
	 * CPU the task has since left), and clears inflight_task.
	 */
	__u64 inflight_task; /* the task, as a number; 0: none */
	__u64 inflight_start;
	__u64 inflight_migrations; /* task->se.nr_migrations then */
	__u64 inflight_decision;   /* SB_INFLIGHT_DECISION() (never a stack's: those walk again, for their stacks) */
	/* the target's events whose syscall decision was taken over, by cause (as sb_decisions' by_cause) */
	struct {
		__u64 events;
		__u64 pages;
	} by_cause[SB_DECISION_CAUSES];
} __attribute__((aligned(64)));

/* Kernel function [start, end) that decides a cause when seen on a stack. */
struct sb_rule {
	__u64 start;
	__u64 end;
	__u32 cause;
	__u32 pad;
};

/*
 * Stack records (BPF_MAP_TYPE_HASH). Two kinds share the map: every event
 * whose cause needed a stack walk (exact counts), and a sample of 1 in N
 * of all attributed events (counts are samples).
 */
struct sb_stack_key {
	__u64 hash;   /* of the frames */
	__u8 attr;    /* enum sb_attr */
	__u8 ctx;     /* enum sb_ctx */
	__u8 cause;   /* enum sb_cause */
	__u8 sampled; /* 1: 1-in-N sample, 0: every such event */
	__u32 pad;
};

struct sb_stack_val {
	__u64 count;
	__u32 nr; /* frames in ip[] */
	__u32 pad;
	__u64 ip[SB_STACK_DEPTH];
};
