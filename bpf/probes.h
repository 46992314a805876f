/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bpf/: BPF probes for one target QEMU process. Counts what KVM's secondary
 * MMU and the host TLB see (MMU-notifier invalidations, aging, guest page
 * faults, SPTE changes, TLB flushes), KVM's vCPU events (exits, interrupt
 * injections, emulated instructions, which equal KVM's own stats where the
 * kernel says so) and classifies invalidations and
 * remote TLB shootdowns into causes (uffd-wp, numa-hinting, migration,
 * reclaim, munmap/madvise, mprotect, thp, ksm, other). Knows nothing of
 * QMP; docs/probes.md lists every counter, its probe and its backends.
 *
 * Use (the runner reads every 100 ms; each read is one bpf() syscall and
 * no allocation):
 *
 *     struct sb_probes *p;
 *     struct sb_probe_snapshot s;
 *     r = sb_probes_open(qemu_pid, NULL, &p, &err);   // probe, pick, load
 *     r = sb_probes_attach(p, &err);
 *     ... sb_probes_read(p, &s, &err) ...              // cumulative counts
 *     sb_probes_close(p);
 *
 * Every counter has an availability and a source: sb_probes_counter()
 * tells which probe and backend feed it, or why none could. A counter with
 * no working probe is unavailable, never zero.
 *
 * Contexts: each event is counted under the context it ran in. "target" is
 * a thread of the target process (tgid match; exact). "kthread" is a kernel
 * thread (kswapd, khugepaged, kworkers...): tracepoint arguments do not say
 * which VM such an event hit, so these count every VM on the host; the
 * fentry counters, where the kernel allows them, read the VM from the kvm
 * struct and count only the target's. "other" is another user process: not
 * the target VM (kept to show what was excluded).
 *
 * Needs root (CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN to mount tracefs).
 * Functions return a negative errno and fill err; nothing is printed.
 * Not thread-safe: one thread drives a struct sb_probes. sb_probes_open()
 * briefly routes libbpf's log to itself to report which program failed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "probes-abi.h"

enum sb_backend {
	SB_BACKEND_NONE = 0,
	SB_BACKEND_FENTRY,     /* fentry on a kernel function (BPF trampoline) */
	SB_BACKEND_TP_BTF,     /* BTF-typed raw tracepoint */
	SB_BACKEND_RAW_TP,     /* raw tracepoint */
	SB_BACKEND_TRACEPOINT, /* classic tracepoint through perf and tracefs */
	SB_BACKEND_MAX,
};

#define SB_BACKEND_BIT(b) (1u << (b))
#define SB_BACKENDS_ALL                                                                            \
	(SB_BACKEND_BIT(SB_BACKEND_FENTRY) | SB_BACKEND_BIT(SB_BACKEND_TP_BTF) |                  \
	 SB_BACKEND_BIT(SB_BACKEND_RAW_TP) | SB_BACKEND_BIT(SB_BACKEND_TRACEPOINT))

struct sb_probe_options {
	/* Backends allowed, a mask of SB_BACKEND_BIT(); tracepoints try tp_btf, then raw_tp, then classic. */
	unsigned int backends;
	/* Classify causes (costs a little per invalidation); false: count only. */
	bool attribution;
	/*
	 * Cache the syscall step's decisions per CPU (struct sb_decisions):
	 * the same counts, cheaper. Default on; off decides every event (the
	 * probe-cost benchmark and the exactness test compare the two).
	 */
	bool decision_cache;
	/*
	 * Where the kernel has the bpf_rdonly_cast kfunc (6.2 and later), load
	 * the attributing programs that read pt_regs without a helper call.
	 * Default on; off: bpf_task_pt_regs() everywhere (the benchmark's and
	 * the tests' comparison).
	 */
	bool kfuncs;
	/* Record the stack of 1 in N attributed events (0: none; a power of two: every Nth of each counter and
	 * context on a CPU, else a countdown). Events whose
	 * cause needed a stack walk are always recorded. */
	unsigned int stack_sample_every;
	/* Distinct stacks kept (1..65536); further ones are counted as dropped. */
	unsigned int max_stacks;
	/*
	 * KVM's exit path: kvm:kvm_exit (one event per VM exit) and
	 * kvm:kvm_inj_virq (one per interrupt injected), equal to KVM's
	 * exits and irq_injections stats. Default on (cost: docs/probes.md).
	 */
	bool exit_counters;
	/*
	 * kvm:kvm_emulate_insn, one event per instruction KVM emulates, equal
	 * to KVM's insn_emulation + insn_emulation_fail. Default off: where
	 * guests run under KVM's emulator that is millions of events a second.
	 * An option that is off leaves its counters unavailable, saying so.
	 */
	bool emulation_counter;
	/*
	 * SPTE zaps by the cause of the invalidation that made them
	 * (sb_counts.zap_cause): fentry on kvm_mmu_notifier_invalidate_range_end
	 * too, and a hash map update and delete per invalidation of the VM.
	 * Default off: every invalidation pays for it (a background snapshot
	 * sends hundreds of thousands); the numa-hinting scenario turns it on.
	 */
	bool zap_causes;
	/*
	 * Count the events of other processes (context "other") on the
	 * tracepoints, which fire for every process and VM of the host.
	 * Default off: the host's other VMs and processes then cost each
	 * program a task check and no more (bench/probe-cost's "other"). The
	 * fentry probes, which know the VM, count the target VM's events in
	 * every context either way. sb_probes_counts_other() tells which.
	 */
	bool count_other;
	/*
	 * Tests only: probe this tracepoint ("category:name") instead of the
	 * one that feeds test_counter, to exercise the fallback and
	 * unavailable paths with a tracepoint that does not exist.
	 */
	const char *test_tracepoint;
	enum sb_counter test_counter;
	/*
	 * Tests only: trust the fentry probes without trying them
	 * (sb_probes_attach() runs an invalidation and the dirty-log ioctls
	 * through them otherwise, on a VM of its own), to see what the
	 * attached programs count on their own.
	 */
	bool test_no_selftest;
	/* Tests only: the self-test's trials do nothing, so every program it tries is found not to run. */
	bool test_selftest_idle;
	/*
	 * Tests only: count remote flushes (bpf.kvm_remote_flush) with fentry
	 * on this function instead of where every request passes (a function
	 * whose first argument is the struct kvm *, called for some flushes
	 * only), so that a run's self-check finds the count partial.
	 */
	const char *test_flush_function;
};

#define SB_PROBE_DEFAULT_SAMPLE_EVERY SB_DEFAULT_SAMPLE_EVERY
#define SB_PROBE_DEFAULT_MAX_STACKS 1024
#define SB_PROBE_MAX_STACKS 65536

/* Defaults: every backend, attribution on, 1 in 1024 stacks, 1024 stacks, exit counters on, emulation counter and zap causes off. */
void sb_probe_options_init(struct sb_probe_options *o);

/* One probe: a tracepoint or kernel function that feeds counters or the classifier. */
struct sb_probe_info {
	const char *name;        /* "kvm:kvm_unmap_hva_range", "fentry:kvm_flush_remote_tlbs" */
	const char *role;        /* "counter" or "marker" (feeds the classifier) */
	enum sb_backend backend; /* in use; SB_BACKEND_NONE when unavailable */
	bool available;
	char reason[768];        /* unavailable: why, per backend tried; else notes ("" if none) */
	char btf[80];            /* tp_btf, fentry: whose BTF has the target, "vmlinux" or "module kvm"; else "" */
};

struct sb_counter_info {
	enum sb_counter id;
	const char *name;         /* stable key for reports: "unmap_hva", "tlb_send_ipi"... */
	const char *description;
	const char *pages_label;  /* what sb_count.pages means, NULL if unused */
	const char *detail_label; /* what sb_count.detail means, NULL if unused */
	const struct sb_probe_info *probe;
	bool available;           /* == probe->available */
};

struct sb_probes;

/*
 * Whether this process may load and attach the probes at all: CAP_SYS_ADMIN
 * (root), or CAP_BPF and CAP_PERFMON, effective. 0, or -EPERM with err
 * naming what is missing (the caller adds the fix), before anything is
 * loaded.
 */
int sb_probes_check_privileges(struct sb_error *err);

/*
 * Prepare probes for pid (a QEMU process, or any thread of it: its thread
 * group is the target). Checks that the process exists and holds a KVM VM,
 * probes which backends work, loads the programs. opts may be NULL
 * (defaults). Fails only when no probe at all could be loaded or the
 * target is wrong; single unavailable probes are reported per counter.
 */
int sb_probes_open(pid_t pid, const struct sb_probe_options *opts, struct sb_probes **ret,
		   struct sb_error *err);

/*
 * Attach every loaded program. A program that fails to attach makes its
 * probe unavailable with the reason; fails only when nothing attached.
 * Then tries the fentry probes a VM without vCPUs reaches (the
 * MMU-notifier and dirty-log pairs) on a VM of its own, and makes one that
 * did not run unavailable too (docs/probes.md).
 */
int sb_probes_attach(struct sb_probes *p, struct sb_error *err);

/*
 * Points loaded (and attached) probes at another process, e.g. the next
 * repetition's QEMU, with the same checks as sb_probes_open(); one load
 * serves a whole run. Counters keep counting: take deltas across it.
 */
int sb_probes_retarget(struct sb_probes *p, pid_t pid, struct sb_error *err);

/* The target's thread group id and command name. */
pid_t sb_probes_target(const struct sb_probes *p);
const char *sb_probes_target_comm(const struct sb_probes *p);

/* Counters, summed over CPUs, cumulative since attach. */
struct sb_probe_snapshot {
	uint64_t mono_ns; /* when it was read (CLOCK_MONOTONIC) */
	struct sb_counts c;
};

int sb_probes_read(struct sb_probes *p, struct sb_probe_snapshot *s, struct sb_error *err);

const struct sb_counter_info *sb_probes_counter(const struct sb_probes *p, enum sb_counter c);
size_t sb_probes_probe_count(const struct sb_probes *p);
const struct sb_probe_info *sb_probes_probe(const struct sb_probes *p, size_t i);

/* Whether causes are classified (option on and the counter's attr available). */
bool sb_probes_attribution(const struct sb_probes *p);
/* Whether the kernel has bpf_rdonly_cast and the option kfuncs is on: the "k" programs are used where they exist. */
bool sb_probes_kfuncs(const struct sb_probes *p);

/*
 * The classifier's stack rules: kernel functions that decide a cause when
 * they appear on an event's stack, and whether /proc/kallsyms had them.
 */
struct sb_rule_info {
	const char *function;
	enum sb_cause cause;
	bool resolved;
};
size_t sb_probes_rule_count(const struct sb_probes *p);
const struct sb_rule_info *sb_probes_rule(const struct sb_probes *p, size_t i);

/* Names of mmu_notifier_event values and mmu_notifier_range.flags bits (from the kernel's BTF where it has them). */
const char *sb_probes_mn_event_name(const struct sb_probes *p, unsigned int event);
const char *sb_probes_mn_flag_name(const struct sb_probes *p, unsigned int bit);

/*
 * The target VM's invalidations of cause ci (SB_CAUSE_MAX: not
 * classified) whose range->flags had bit set, from the counts by flag
 * value (sb_counts.mn_cause_flags); bit SB_MN_FLAG_VALUE_BITS stands for
 * any higher bit (mn_cause_flags_high), above it is 0.
 */
uint64_t sb_mn_cause_flag_bit(const struct sb_counts *c, unsigned int ci, unsigned int bit);

/* A recorded kernel stack, symbolized. */
struct sb_stack_frame {
	uint64_t ip;
	char symbol[128]; /* "func+0x1f" or "func+0x1f [module]"; "0x..." when unknown */
};

struct sb_stack {
	enum sb_attr attr;
	enum sb_ctx ctx;
	enum sb_cause cause;
	bool sampled;    /* a 1-in-N sample (count = samples) rather than every event */
	uint64_t count;
	size_t nr;       /* frames, innermost first, BPF and tracepoint plumbing skipped */
	struct sb_stack_frame frames[SB_STACK_DEPTH];
};

/*
 * The max most frequent recorded stacks for attr, filtered by cause (-1:
 * any) and by kind (sampled: 1-in-N samples; !sampled: events whose cause
 * needed a stack walk). Symbolizes from /proc/kallsyms (read on first use).
 * *ret is malloc'ed; the caller frees it.
 */
int sb_probes_top_stacks(struct sb_probes *p, enum sb_attr attr, int cause, bool sampled, size_t max,
			 struct sb_stack **ret, size_t *n, struct sb_error *err);

/* Per-program cost from the kernel's own accounting (sysctl kernel.bpf_stats_enabled=1). */
struct sb_prog_stats {
	char name[64];
	uint64_t run_cnt;
	uint64_t run_time_ns;
	uint64_t recursion_misses; /* events the kernel skipped: the program was already running on that CPU */
};

/* Stats of every attached program; *ret is malloc'ed, the caller frees it. */
int sb_probes_prog_stats(struct sb_probes *p, struct sb_prog_stats **ret, size_t *n, struct sb_error *err);

void sb_probes_close(struct sb_probes *p);

/* Whether the tracepoints count other processes' events (option count_other): else their "other" counts are not counted, not 0. */
bool sb_probes_counts_other(const struct sb_probes *p);

static inline void sb_probes_closep(struct sb_probes **p)
{
	sb_probes_close(*p);
}
#define _cleanup_sb_probes_ _cleanup_(sb_probes_closep)

const char *sb_backend_name(enum sb_backend b);
const char *sb_counter_name(enum sb_counter c); /* the stable key: "unmap_hva"... */
const char *sb_cause_name(enum sb_cause c);
const char *sb_ctx_name(enum sb_ctx c);
const char *sb_attr_name(enum sb_attr a);
/* Parse "tp_btf,raw_tp" etc. into a backend mask; -EINVAL naming the bad word. */
int sb_backend_mask_parse(const char *s, unsigned int *mask, struct sb_error *err);
