// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench's BPF programs: count KVM page faults, SPTE changes, TLB flushes
 * and MMU-notifier invalidations, split by the context they run in (the
 * target QEMU process, a kernel thread, another process), and classify
 * invalidations and remote TLB shootdowns into causes.
 *
 * Every tracepoint has three programs with the same body, one per backend:
 * tpbtf_<tp> (tp_btf, typed arguments), rawtp_<tp> (raw tracepoint) and
 * tp_<tp> (classic tracepoint through perf). All start with autoload off
 * ("?" sections); the loader turns on the one backend it picked for each
 * tracepoint. fentry_<func> programs count what only function entry sees
 * (the notifier's event type and flags, KVM's own remote TLB flushes); the
 * loader enables them only where the kernel accepts fentry programs.
 *
 * Cost: per-CPU counters only, no per-event output. The classifier decides
 * a cause from the current task's context (kernel thread kind, a migration
 * marker, PF_MEMALLOC, the syscall in progress and its arguments) and walks
 * the kernel stack only when that context is not decisive (task_work on
 * return to user space such as NUMA hinting, kworkers, page faults).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "probes-abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Kernel constants that are ABI or have not changed in a decade. */
#define PF_MEMALLOC 0x00000800u
#define PF_KTHREAD 0x00200000u
#define ENOSYS 38
#define PAGE_SHIFT 12
#define TLB_FLUSH_ALL (~0UL)

/*
 * The target process: writable data, not rodata, so that one load serves a
 * whole run: the loader points it at each repetition's QEMU
 * (sb_probes_retarget()).
 */
__u32 target_tgid = 0;

/*
 * Kernels since 6.2 have this kfunc, which the verifier turns into a move:
 * the "k" variants of the attributing programs use it to read pt_regs with
 * no helper call (task_regs()); the loader picks them where the kernel has
 * it, and never loads them elsewhere (an unresolved weak kfunc is only a
 * problem in a program that is loaded).
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * task_pt_regs(task) - task->stack: the same for every task of a kernel
 * (the top of the stack, less the padding and pt_regs). Learned from
 * bpf_task_pt_regs() on a "k" program's first use; 0: not yet.
 */
__u64 regs_delta = 0;

/*
 * fentry on both kvm_mmu_notifier_invalidate_range_start and _end, each
 * seen to run: SPTE zaps get their invalidation's cause. Not rodata: the
 * loader sets it once the pair has passed its trials
 * (fentry_selftest() in probes.c), after attaching.
 */
bool invalidations_open = false;

/* Set by the loader before load (rodata). */
const volatile bool attribution = true;
const volatile __u32 sample_every = 0; /* 1 in N stacks sampled; 0: none */
/* sample_every - 1 when that is a power of two (1024, the default): every Nth event by its counter's own count */
const volatile __u64 sample_mask = 0;
/* the syscall step's decisions cached per CPU (syscall_step()); false: decided for every event */
const volatile bool decision_cache = true;
/* count other processes' events (option count_other); false: count() leaves at the task check */
const volatile bool count_other = true;
const volatile __u64 spte_present_mask = 1ULL << 11;
const volatile __u64 pf_write_mask = 1ULL << 1;
const volatile __s32 ret_pf_fixed = 5;
/* syscall nr -> cause + 1, SB_SYSCALL_IOCTL, or 0 (not decisive) */
const volatile __u8 syscall_cause[SB_NR_SYSCALLS] = {};
/* ioctl commands that decide a cause, and that cause */
const volatile __u32 ioctl_cmd[SB_MAX_IOCTL_CMDS] = {};
const volatile __u8 ioctl_cause[SB_MAX_IOCTL_CMDS] = {};
const volatile __u32 nr_ioctl_cmds = 0;
/* madvise advice -> cause + 1; 0: munmap/madvise */
const volatile __u8 madvise_cause[SB_NR_MADVISE] = {};
/* sorted by start, non-overlapping */
const volatile struct sb_rule rules[SB_MAX_RULES] = {};
/*
 * How many: writable data, not rodata, on purpose. A constant lets the
 * verifier follow rule_cause()'s binary search with known bounds, every
 * branch of its tree a state of its own, for each of the stack's frames:
 * three quarters of the attributing programs' verification. Unknown, the
 * bounds are ranges and the search's states merge.
 */
__u32 nr_rules = 0;

/* Tasks inside migrate_pages(); only looked up while this is non-zero. */
__u64 migrations_active = 0;

#define SB_F_MMAPABLE (1U << 10) /* BPF_F_MMAPABLE */

/* One CPU's counters, in whole cache lines: no two CPUs write to one line. */
struct counts_slot {
	struct sb_counts c;
} __attribute__((aligned(64)));

/*
 * The counters: a slot per CPU in a plain array, indexed by the CPU the
 * current task runs on (task_cpu_of()), and mapped into the reader's memory
 * (sb_probes_read() reads it with no system call). A per-CPU array would
 * cost kernels before 6.10 a helper call per event (they do not inline its
 * lookup); this one's lookup is inlined on every kernel, and the CPU comes
 * from the task the context needs anyway.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, SB_F_MMAPABLE);
	__uint(max_entries, 1); /* the loader sets the possible CPUs */
	__type(key, __u32);
	__type(value, struct counts_slot);
} counts SEC(".maps");

/*
 * kvm_unmap_hva_range's hot path per CPU (struct sb_unmap_fast): a global
 * array, whose address is a constant of the programs, so the programs made
 * for one set of options count the target's event with no map lookup.
 */
struct sb_unmap_fast unmap_fast[SB_FAST_CPUS] = {};

/*
 * CPU cpu's line of unmap_fast, NULL past SB_FAST_CPUS. The bound is
 * tested on the register the index is computed from: clang would test one
 * zero-extended copy and index with another, whose bound 6.1's verifier
 * does not know ("unbounded memory access").
 */
static __always_inline struct sb_unmap_fast *unmap_fast_at(__u64 cpu)
{
	barrier_var(cpu);
	if (cpu >= SB_FAST_CPUS)
		return NULL;
	return &unmap_fast[cpu];
}

/*
 * Per-CPU room for one stack (too big for the 512-byte BPF stack), one per
 * attributed counter: a program that interrupts another on the same CPU
 * (an IPI's tlb_flush inside an invalidation) never shares its buffer.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SB_ATTR_MAX);
	__type(key, __u32);
	__type(value, struct sb_stack_val);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* the loader sets the bound */
	__type(key, struct sb_stack_key);
	__type(value, struct sb_stack_val);
} stacks SEC(".maps");

/* pid -> nesting depth of migrate_pages() */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} migrating SEC(".maps");

/*
 * The CPU the current task runs on: its thread_info's (x86 since 5.16) or
 * its own field (before). A program runs with migration off, so this is
 * the CPU running it: every slot of counts is written by one CPU, and the
 * kernel never nests a program inside itself on a CPU, so plain
 * increments are exact.
 */
static __always_inline __u32 task_cpu_of(struct task_struct *task)
{
	__u32 cpu;

	if (bpf_core_field_exists(task->thread_info.cpu))
		return task->thread_info.cpu;
	/* a load of its own: left to share one with the line above, clang loads at an offset computed at run time */
	cpu = task->cpu;
	barrier_var(cpu);
	return cpu;
}

/* CPU cpu's counters. NULL only if it were past the possible ones. */
static __always_inline struct sb_counts *counts_at(__u32 cpu)
{
	struct counts_slot *s = bpf_map_lookup_elem(&counts, &cpu);

	return s ? &s->c : NULL;
}

/* This CPU's counters; task: the current task. */
static __always_inline struct sb_counts *counts_get(struct task_struct *task)
{
	return counts_at(task_cpu_of(task));
}

/*
 * The CPU the program runs on, as bpf_get_smp_processor_id() gives it, in
 * the 64-bit register the helper returns it in: through the helper's own
 * declaration (a __u32) clang would clear the upper half first, two
 * instructions. On 6.1 the call (three instructions) costs less than a
 * load from the task (six: every load through a BTF pointer there is a
 * BPF_PROBE_MEM load with its address check); on 6.2 and later such a load
 * from the current task is one instruction, and the programs for those
 * kernels (the "k" ones) read thread_info.cpu, with no existence test:
 * all of them have it (5.16).
 */
static __u64 (*const smp_processor_id64)(void) = (void *)8; /* BPF_FUNC_get_smp_processor_id */

/*
 * The context of the current event. Every helper call counts here (with
 * return thunks a call costs ~13 ns on an AMD host, a fifth of a minimal
 * program): the counting path makes exactly one, bpf_get_current_task_btf(),
 * whose task gives the tgid, the flags and the CPU (counts_get()).
 */
static __always_inline __u64 ctx_of(struct task_struct *task)
{
	if ((__u32)task->tgid == target_tgid)
		return SB_CTX_TARGET;
	if (task->flags & PF_KTHREAD)
		return SB_CTX_KTHREAD;
	return SB_CTX_OTHER;
}

#define COMM8(a, b, c, d, e, f, g, h)                                                      \
	((__u64)(a) | (__u64)(b) << 8 | (__u64)(c) << 16 | (__u64)(d) << 24 |              \
	 (__u64)(e) << 32 | (__u64)(f) << 40 | (__u64)(g) << 48 | (__u64)(h) << 56)
#define MASK_BYTES(n) ((n) >= 8 ? ~0ULL : ((1ULL << ((n) * 8)) - 1))

/* The kernel threads whose work has one cause; -1 for the others (kworkers...). */
static __always_inline int kthread_cause(struct task_struct *task)
{
	__u64 w = 0;

	bpf_probe_read_kernel(&w, sizeof(w), &task->comm);
	if ((w & MASK_BYTES(6)) == COMM8('k', 's', 'w', 'a', 'p', 'd', 0, 0))
		return SB_CAUSE_RECLAIM;
	if (w == COMM8('k', 'h', 'u', 'g', 'e', 'p', 'a', 'g'))
		return SB_CAUSE_THP;
	if ((w & MASK_BYTES(5)) == COMM8('k', 's', 'm', 'd', 0, 0, 0, 0))
		return SB_CAUSE_KSM;
	if (w == COMM8('k', 'c', 'o', 'm', 'p', 'a', 'c', 't'))
		return SB_CAUSE_MIGRATION;
	return -1;
}

/* The rule whose function contains ip, by binary search; -1 if none. */
static __always_inline int rule_cause(__u64 ip)
{
	__u32 lo = 0, hi = nr_rules;

	/* no clamp to a constant: hi stays a range to the verifier (see nr_rules) */
	if (hi > SB_MAX_RULES)
		return -1;
	for (int k = 0; k < 7; k++) { /* 2^7 > SB_MAX_RULES */
		__u32 mid;

		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		mid &= SB_MAX_RULES - 1;
		if (ip < rules[mid].start)
			hi = mid;
		else if (ip >= rules[mid].end)
			lo = mid + 1;
		else
			return rules[mid].cause;
	}
	return -1;
}

/* Fill sv->ip/nr with the kernel stack; returns the number of frames. */
static __always_inline __u32 stack_take(void *ctx, struct sb_stack_val *sv)
{
	long n = bpf_get_stack(ctx, sv->ip, sizeof(sv->ip), 0);

	sv->nr = n > 0 ? (__u32)(n / sizeof(__u64)) : 0;
	return sv->nr;
}

/*
 * The outermost frame that matches a rule decides: a THP split inside
 * NUMA hinting's change_prot_numa() counts as NUMA hinting, its cause.
 * A global function, which the verifier checks once on its own, whatever
 * state each of attribute()'s paths reaches it in.
 */
__noinline int stack_cause(struct sb_stack_val *sv)
{
	__u32 nr;

	if (!sv)
		return -1;
	nr = sv->nr;

	for (int j = 0; j < SB_STACK_DEPTH; j++) {
		int i = (int)nr - 1 - j;
		int c;

		if (i < 0)
			break;
		/* a return address; the call is in the byte before it */
		c = rule_cause(sv->ip[i & (SB_STACK_DEPTH - 1)] - 1);
		if (c >= 0)
			return c;
	}
	return -1;
}

static __always_inline void stack_record(struct sb_counts *c, struct sb_stack_val *sv, int attr, __u64 ectx,
					 int cause, int sampled)
{
	struct sb_stack_key key = {};
	struct sb_stack_val *v;
	__u64 h = 0xcbf29ce484222325ULL;

	for (int j = 0; j < SB_STACK_DEPTH; j++) {
		if ((__u32)j >= sv->nr)
			break;
		h = (h ^ sv->ip[j]) * 0x100000001b3ULL;
	}
	key.hash = h;
	key.attr = attr;
	key.ctx = ectx;
	key.cause = cause;
	key.sampled = sampled;

	v = bpf_map_lookup_elem(&stacks, &key);
	if (!v) {
		sv->count = 1;
		if (bpf_map_update_elem(&stacks, &key, sv, BPF_NOEXIST) == 0) {
			c->stacks_recorded[attr & (SB_ATTR_MAX - 1)]++;
			return;
		}
		v = bpf_map_lookup_elem(&stacks, &key); /* lost a race, or full */
		if (!v) {
			c->stacks_dropped[attr & (SB_ATTR_MAX - 1)]++;
			return;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	c->stacks_recorded[attr & (SB_ATTR_MAX - 1)]++;
}

/*
 * The cause a syscall decides from its syscall_cause[] entry v (not 0) and
 * its deciding argument (ioctl's command, madvise's advice; 0 for the
 * others), or -1. A pure function of the two, so it can be cached.
 */
static __always_inline int syscall_cause_of(__u8 v, __u32 arg)
{
	if (v == SB_SYSCALL_MADVISE || v == SB_SYSCALL_PROCESS_MADVISE) {
		__u8 m = 0;

		if (arg < SB_NR_MADVISE) {
			/* keep the mask: the compiler would index with an unbounded copy of arg */
			barrier_var(arg);
			m = madvise_cause[arg & (SB_NR_MADVISE - 1)];
		}
		return m > 0 && m <= SB_CAUSE_MAX ? m - 1 : SB_CAUSE_MUNMAP_MADVISE;
	}
	if (v == SB_SYSCALL_IOCTL) {
		for (int i = 0; i < SB_MAX_IOCTL_CMDS; i++) {
			if ((__u32)i >= nr_ioctl_cmds)
				break;
			if (ioctl_cmd[i] == arg)
				return ioctl_cause[i];
		}
		return -1;
	}
	/*
	 * Not "v <= SB_CAUSE_MAX ? v - 1 : -1": without BPF's jle (clang's
	 * default -mcpu) that compiles to "11 > v" with 11 in a register, a
	 * comparison 6.1's verifier cannot decide, so where v is known to be
	 * 253-255 it explored the branch with bounds that contradict (umin
	 * 252, umax 9) and refused the pointer arithmetic after it: with the
	 * decision cache off the tlb_flush program did not load there.
	 */
	if (v > SB_CAUSE_MAX)
		return -1;
	return v - 1;
}

static __always_inline unsigned long arg_of(struct pt_regs *regs, __u64 reg)
{
	if (reg == SB_ARG_SI)
		return regs->si;
	if (reg == SB_ARG_DX)
		return regs->dx;
	if (reg == SB_ARG_R10)
		return regs->r10;
	return 0;
}

/*
 * The syscall step of attribute(), inside a syscall of the target: the
 * cause, or -1 when the syscall decides nothing. With decision_cache the
 * last decision on this CPU for attr (struct sb_decisions) is reused while
 * the syscall and its deciding argument are the same, which is exact
 * because syscall_cause_of() depends on nothing else.
 */
static __always_inline long syscall_step(struct pt_regs *regs, struct sb_decisions *d)
{
	unsigned long nr = regs->orig_ax;
	__u64 reg = SB_ARG_NONE;
	__u32 arg;
	__u8 v;
	long cause;

	if (decision_cache) {
		__u64 last = d->last;

		if (SB_LAST_NR1(last) == nr + 1 && d->last_arg == (__u32)arg_of(regs, SB_LAST_REG(last)))
			return (long)SB_LAST_CAUSE1(last) - 1;
	}
	if (nr >= SB_NR_SYSCALLS)
		return -1;
	v = syscall_cause[nr & (SB_NR_SYSCALLS - 1)];
	if (!v)
		return -1;
	/* the kernel takes ioctl's command as unsigned int, madvise's advice as int */
	if (v == SB_SYSCALL_IOCTL)
		reg = SB_ARG_SI;
	else if (v == SB_SYSCALL_MADVISE)
		reg = SB_ARG_DX;
	else if (v == SB_SYSCALL_PROCESS_MADVISE)
		reg = SB_ARG_R10;
	arg = (__u32)arg_of(regs, reg);
	cause = syscall_cause_of(v, arg);
	if (decision_cache) {
		d->last = SB_LAST(nr + 1, reg, cause + 1);
		d->last_arg = arg;
		if (cause >= 0)
			d->made++; /* the others are reused: by_cause counts them all */
	}
	return cause;
}

/* p's address as a number, through memory: the verifier lets no pointer be subtracted or compared to one */
static __always_inline __u64 ptr_bits(struct sb_decisions *d, const void *p)
{
	d->regs_at = (__u64)p;
	return *(volatile __u64 *)&d->regs_at;
}

/*
 * The task's pt_regs. kfuncs (the "k" programs): task->stack plus
 * regs_delta, no helper call; the helper's answer teaches the delta once,
 * and checks it on the events whose stack is sampled (regs_mismatch).
 */
static __always_inline struct pt_regs *task_regs(struct task_struct *task, struct sb_decisions *d, bool kfuncs)
{
	struct pt_regs *regs;
	__u64 delta;

	if (kfuncs) {
		delta = regs_delta;
		if (delta)
			return bpf_rdonly_cast((void *)((unsigned long)task->stack + delta),
					       bpf_core_type_id_kernel(struct pt_regs));
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (kfuncs && regs)
		regs_delta = ptr_bits(d, regs) - (__u64)task->stack;
	return regs;
}

/* Whether task_regs()'s delta still gives bpf_task_pt_regs()'s answer; counts the events where not. */
static __always_inline void regs_check(struct task_struct *task, struct sb_decisions *d, struct sb_counts *c)
{
	__u64 delta = regs_delta;
	struct pt_regs *regs;

	if (!delta)
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return;
	if (ptr_bits(d, regs) != (__u64)task->stack + delta)
		c->regs_mismatch++;
}

/*
 * Decide the cause of an event in the target process or a kernel thread,
 * just counted in c; pages: its pages (SB_ATTR_UNMAP's cause_pages); nth:
 * its counter's events in its context on this CPU, itself included (read
 * only when a stack may be sampled).
 * Returns its cause, or -1 when it is not classified.
 */
static __always_inline int account(void *ctx, struct task_struct *task, __u64 ectx, int attr, struct sb_counts *c,
				   __u64 pages, const __u64 *nth, bool kfuncs, long cause, __u64 how,
				   struct sb_stack_val *sv);
static __always_inline void sample(void *ctx, struct task_struct *task, __u64 ectx, int attr, struct sb_counts *c,
				   const __u64 *nth, bool kfuncs, long cause, struct sb_stack_val *sv);

static __always_inline int attribute(void *ctx, struct task_struct *task, __u64 ectx, int attr, struct sb_counts *c,
				     __u64 pages, const __u64 *nth, bool kfuncs, __u64 *how_out)
{
	struct sb_stack_val *sv = NULL;
	/* 64-bit: as ints, each test and index would first extend them (three instructions for a sign) */
	long cause = -1;
	__u64 how = SB_HOW_STACK;
	struct sb_decisions *d;
	__u32 slot;

	if (!attribution || ectx == SB_CTX_OTHER)
		return -1;
	attr &= SB_ATTR_MAX - 1;
	slot = (__u32)attr;
	d = &c->decisions[attr];

	if (ectx == SB_CTX_KTHREAD) {
		cause = kthread_cause(task);
		how = SB_HOW_KTHREAD;
	}
	if (cause < 0 && migrations_active) {
		__u32 pid = task->pid;

		if (bpf_map_lookup_elem(&migrating, &pid)) {
			cause = SB_CAUSE_MIGRATION;
			how = SB_HOW_MARKER;
		}
	}
	if (cause < 0 && (task->flags & PF_MEMALLOC)) {
		cause = SB_CAUSE_RECLAIM;
		how = SB_HOW_TASK_FLAG;
	}
	if (cause < 0 && ectx == SB_CTX_TARGET) {
		struct pt_regs *regs = task_regs(task, d, kfuncs);

		/*
		 * Inside a syscall pt_regs->ax still holds the -ENOSYS the
		 * entry code put there; once the syscall returned (task_work,
		 * signal delivery on the way out) it holds the return value.
		 */
		if (regs && regs->ax == (unsigned long)-ENOSYS) {
			cause = syscall_step(regs, d);
			if (cause >= 0)
				how = SB_HOW_SYSCALL;
		}
	}
	if (cause < 0) {
		sv = bpf_map_lookup_elem(&scratch, &slot);
		if (sv) {
			stack_take(ctx, sv);
			cause = stack_cause(sv);
		}
		how = cause >= 0 ? SB_HOW_STACK : SB_HOW_STACK_NONE;
		if (cause < 0)
			cause = SB_CAUSE_OTHER;
	}
	if (how_out)
		*how_out = how;
	return account(ctx, task, ectx, attr, c, pages, nth, kfuncs, cause, how, sv);
}

/*
 * Count an event of attr whose cause (how: decided how) attribute() or a
 * decision taken over (the invalidation's, inflight_*) gave; sv: the stack
 * the decision walked, if it did. Samples 1 in sample_every stacks.
 * Returns the cause.
 */
static __always_inline int account(void *ctx, struct task_struct *task, __u64 ectx, int attr, struct sb_counts *c,
				   __u64 pages, const __u64 *nth, bool kfuncs, long cause, __u64 how,
				   struct sb_stack_val *sv)
{
	struct sb_decisions *d;

	attr &= SB_ATTR_MAX - 1;
	d = &c->decisions[attr];
	if (cause >= SB_CAUSE_MAX)
		cause = SB_CAUSE_OTHER;
	/* a no-op after the clamp, kept on the register every index below uses: older verifiers (6.1) lose the
	 * clamp's bound on the copies the compiler makes */
	barrier_var(cause);
	cause &= SB_DECISION_CAUSES - 1;

	if (decision_cache && how == SB_HOW_SYSCALL) {
		/* ectx is the target's: only its syscalls decide */
		d->by_cause[cause].events++;
		if (attr == SB_ATTR_UNMAP)
			d->by_cause[cause].pages += pages;
	} else {
		c->cause[attr][ectx & 3][cause]++;
		c->how[attr][how & 7]++;
		if (attr == SB_ATTR_UNMAP)
			c->cause_pages[ectx & 3][cause] += pages;
	}
	if (sv)
		stack_record(c, sv, attr, ectx, cause, 0);
	sample(ctx, task, ectx, attr, c, nth, kfuncs, cause, sv);
	return cause;
}

/* The 1 in sample_every stack of attr's events, the one counted last (its cause given; sv: its stack, if walked). */
static __always_inline void sample(void *ctx, struct task_struct *task, __u64 ectx, int attr, struct sb_counts *c,
				   const __u64 *nth, bool kfuncs, long cause, struct sb_stack_val *sv)
{
	struct sb_decisions *d;
	bool take = false;
	__u32 slot;

	attr &= SB_ATTR_MAX - 1;
	slot = (__u32)attr;
	d = &c->decisions[attr];
	/*
	 * A power of two (sample_mask, the default 1024's 1023) needs no
	 * countdown: no store to one more line per event. Tested first: it
	 * implies sample_every, so the default tests one flag an event.
	 */
	if (sample_mask) {
		take = (*nth & sample_mask) == 0;
	} else if (sample_every) {
		take = d->sample_countdown == 0;
		if (take)
			d->sample_countdown = sample_every - 1;
		else
			d->sample_countdown--;
	}
	if (take) {
		if (kfuncs && ectx == SB_CTX_TARGET)
			regs_check(task, d, c);
		if (!sv) {
			sv = bpf_map_lookup_elem(&scratch, &slot);
			if (!sv)
				return;
			stack_take(ctx, sv);
		}
		stack_record(c, sv, attr, ectx, cause, 1);
	}
}

/*
 * Count one event; returns the counter block, the context and (*task) the
 * current task, or NULL. vm_known: the caller checked that the event is the
 * target VM's (the fentry probes), so it counts in every context; else an
 * event of another process counts only with count_other, and costs nothing
 * past the task's tgid and flags otherwise.
 */
static __always_inline struct sb_counts *count_in(__u32 counter, struct task_struct **task, __u64 *ectx,
						  __u64 pages, __u64 detail, bool vm_known)
{
	struct sb_counts *c;
	struct sb_count *e;

	*task = bpf_get_current_task_btf();
	*ectx = ctx_of(*task); /* 64-bit: as an int, each use would first clear its upper half */
	if (*ectx == SB_CTX_OTHER && !vm_known && !count_other)
		return NULL;
	c = counts_get(*task);
	if (!c)
		return NULL;
	/*
	 * A counter computed at run time: keep the compiler from folding the
	 * bound check away, the verifier needs it on this register. A
	 * constant's offset is folded, with no check.
	 */
	if (!__builtin_constant_p(counter))
		barrier_var(counter);
	if (counter >= SB_C_MAX)
		return NULL;
	e = &c->count[counter][*ectx & 3];
	e->events++;
	e->pages += pages;
	e->detail += detail;
	return c;
}

/* count_in() for the tracepoints, which fire for every VM and process */
static __always_inline struct sb_counts *count(__u32 counter, struct task_struct **task, __u64 *ectx, __u64 pages,
					       __u64 detail)
{
	return count_in(counter, task, ectx, pages, detail, false);
}

/* count_in() for the fentry probes, which count only the target VM's events, in every context */
static __always_inline struct sb_counts *count_vm(__u32 counter, struct task_struct **task, __u64 *ectx, __u64 pages,
						  __u64 detail)
{
	return count_in(counter, task, ectx, pages, detail, true);
}

/* --- kvm:kvm_unmap_hva_range: an MMU-notifier invalidation reached KVM --- */

/*
 * The slow paths of kvm_unmap_hva_range's program, as calls: another
 * process's or a kernel thread's event, a target event the fentry did not
 * decide, a decision taken over that is not a syscall's, a stack sample. Inline, their registers made the target's path spill and
 * reload (15 instructions an event on 6.1, bench/probe-cost). Two of each,
 * kfuncs a constant in each: a "k" program's kfunc call must not reach a
 * program loaded where the kernel lacks the kfunc.
 */
#define DEFINE_UNMAP_SLOW(suffix, kf)                                                                      \
	static __noinline int unmap_attribute##suffix(void *ctx, struct task_struct *task, struct sb_counts *c,  \
						      __u64 ectx, __u64 pages)                                  \
	{                                                                                                  \
		attribute(ctx, task, ectx, SB_ATTR_UNMAP, c, pages, &c->count[SB_C_UNMAP_HVA][ectx & 3].events, \
			  kf, NULL);                                                                       \
		return 0;                                                                                  \
	}                                                                                                  \
	static __noinline int unmap_not_target##suffix(void *ctx, struct task_struct *task, __u64 pages)       \
	{                                                                                                  \
		struct sb_counts *c;                                                                       \
		__u64 ectx = SB_CTX_KTHREAD;                                                               \
		struct sb_count *e;                                                                        \
                                                                                                           \
		/* the caller leaves another process's event unless count_other */                        \
		if (!(task->flags & PF_KTHREAD))                                                           \
			ectx = SB_CTX_OTHER;                                                               \
		c = counts_get(task);                                                                      \
		if (!c)                                                                                    \
			return 0;                                                                          \
		e = &c->count[SB_C_UNMAP_HVA][ectx & 3];                                                   \
		e->events++;                                                                               \
		e->pages += pages;                                                                         \
		if (ectx == SB_CTX_KTHREAD && attribution)                                                 \
			unmap_attribute##suffix(ctx, task, c, ectx, pages);                                \
		return 0;                                                                                  \
	}                                                                                                  \
	/* the rest of a target event's accounting: a decision taken over that is not a syscall's, a sample */ \
	static __noinline int unmap_account##suffix(void *ctx, struct task_struct *task, struct sb_counts *c,    \
						    __u64 dec, __u64 pages)                                     \
	{                                                                                                  \
		account(ctx, task, SB_CTX_TARGET, SB_ATTR_UNMAP, c, pages,                                 \
			&c->count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events, kf, (long)(dec & 0xff), (dec >> 8) & 0xff, NULL); \
		return 0;                                                                                  \
	}                                                                                                  \
	static __noinline int unmap_sample##suffix(void *ctx, struct task_struct *task, struct sb_counts *c,     \
						   __u64 cause)                                                 \
	{                                                                                                  \
		sample(ctx, task, SB_CTX_TARGET, SB_ATTR_UNMAP, c, &c->count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events, \
		       kf, (long)cause, NULL);                                                             \
		return 0;                                                                                  \
	}                                                                                                  \
	/*                                                                                                 \
	 * The same three for the programs that count in h (unmap_fast), whose events decide the         \
	 * sample; the first two count the event in h first.                                               \
	 */                                                                                                \
	static __noinline int unmap_decide_fast##suffix(unsigned long long *ctx, struct task_struct *task, \
							struct sb_unmap_fast *h)                                  \
	{                                                                                                  \
		struct sb_counts *c = counts_get(task);                                                    \
		__u64 pages = (ctx[1] - ctx[0]) >> PAGE_SHIFT;                                             \
                                                                                                           \
		h->events++;                                                                               \
		h->pages += pages;                                                                         \
		if (c)                                                                                     \
			attribute(ctx, task, SB_CTX_TARGET, SB_ATTR_UNMAP, c, pages, &h->events, kf, NULL); \
		return 0;                                                                                  \
	}                                                                                                  \
	static __noinline int unmap_account_fast##suffix(unsigned long long *ctx, struct task_struct *task, \
							 struct sb_unmap_fast *h, __u64 dec)                      \
	{                                                                                                  \
		struct sb_counts *c = counts_get(task);                                                    \
		__u64 pages = (ctx[1] - ctx[0]) >> PAGE_SHIFT;                                             \
                                                                                                           \
		h->events++;                                                                               \
		h->pages += pages;                                                                         \
		if (c)                                                                                     \
			account(ctx, task, SB_CTX_TARGET, SB_ATTR_UNMAP, c, pages, &h->events, kf,         \
				(long)(dec & 0xff), (dec >> 8) & 0xff, NULL);                              \
		return 0;                                                                                  \
	}                                                                                                  \
	static __noinline int unmap_sample_fast##suffix(void *ctx, struct task_struct *task,              \
							struct sb_unmap_fast *h, __u64 cause)                     \
	{                                                                                                  \
		struct sb_counts *c = counts_get(task);                                                    \
                                                                                                           \
		if (c)                                                                                     \
			sample(ctx, task, SB_CTX_TARGET, SB_ATTR_UNMAP, c, &h->events, kf, (long)cause, NULL); \
		return 0;                                                                                  \
	}                                                                                                  \
	/* the target's event on a CPU past SB_FAST_CPUS: the counters map, the cause decided here */    \
	static __noinline int unmap_target_slow##suffix(unsigned long long *ctx)                          \
	{                                                                                                  \
		struct task_struct *task = bpf_get_current_task_btf();                                     \
		struct sb_counts *c = counts_get(task);                                                    \
		struct sb_count *e;                                                                        \
		__u64 pages = (ctx[1] - ctx[0]) >> PAGE_SHIFT;                                             \
                                                                                                           \
		if (!c)                                                                                    \
			return 0;                                                                          \
		e = &c->count[SB_C_UNMAP_HVA][SB_CTX_TARGET];                                              \
		e->events++;                                                                               \
		e->pages += pages;                                                                         \
		if (attribution)                                                                           \
			unmap_attribute##suffix(ctx, task, c, SB_CTX_TARGET, pages);                       \
		return 0;                                                                                  \
	}

DEFINE_UNMAP_SLOW(, false)
DEFINE_UNMAP_SLOW(_k, true)

/*
 * The target's event, the one that matters, on the shortest path: counted,
 * then its cause taken over from the fentry on range_start, which
 * classified this very invalidation on this CPU just before (struct
 * sb_decisions' inflight_*), where it did; else decided by a call. START
 * and END are read after the helper call, and everything else this path
 * does is inline or a last call, so the program keeps one register across
 * a call (ctx): the JIT saves and restores, at every event, each
 * callee-saved register a program uses anywhere.
 *
 * ATTRIBUTION, CACHE, OTHER, SAMPLE_MASK and SAMPLE_EVERY are the options,
 * read from rodata: these programs serve any options. CPU: the way to the
 * CPU's number.
 */
#define ON_UNMAP_HVA_RANGE_(suffix, kf, START, END, ATTRIBUTION, CACHE, OTHER, SAMPLE_MASK, SAMPLE_EVERY, CPU) \
	do {                                                                                               \
		struct task_struct *task = bpf_get_current_task_btf();                                     \
		struct sb_unmap_fast *h;                                                                   \
		struct sb_decisions *d;                                                                    \
		struct sb_counts *c;                                                                       \
		__u32 cpu;                                                                                 \
		struct sb_count *e;                                                                        \
		unsigned long start;                                                                       \
		__u64 pages, dec;                                                                          \
                                                                                                           \
		if ((__u32)task->tgid != target_tgid) {                                                    \
			/* another process's event: the task check, no call (option count_other) */       \
			if ((task->flags & PF_KTHREAD) || (OTHER))                                         \
				unmap_not_target##suffix(ctx, task, ((END) - (START)) >> PAGE_SHIFT);      \
			return 0;                                                                          \
		}                                                                                          \
		cpu = (CPU);                                                                               \
		c = counts_at(cpu);                                                                        \
		if (!c)                                                                                    \
			return 0;                                                                          \
		start = (START);                                                                           \
		pages = ((END) - start) >> PAGE_SHIFT;                                                     \
		e = &c->count[SB_C_UNMAP_HVA][SB_CTX_TARGET];                                              \
		e->events++;                                                                               \
		e->pages += pages;                                                                         \
		if (!(ATTRIBUTION))                                                                        \
			return 0;                                                                          \
		h = unmap_fast_at(cpu);                                                                    \
		if (!(CACHE) || !h)                                                                        \
			return unmap_attribute##suffix(ctx, task, c, SB_CTX_TARGET, pages);                \
		if (h->inflight_task != (__u64)task || h->inflight_start != start ||                       \
		    h->inflight_migrations != task->se.nr_migrations)                                      \
			return unmap_attribute##suffix(ctx, task, c, SB_CTX_TARGET, pages);                \
		dec = h->inflight_decision;                                                                \
		h->inflight_task = 0;                                                                      \
		/* a syscall's decision is the cause alone (SB_INFLIGHT_DECISION()) */                     \
		if (dec > SB_DECISION_CAUSES - 1) /* a jgt on a constant: no register for it */          \
			return unmap_account##suffix(ctx, task, c, dec, pages);                            \
		/* account()'s syscall branch, less its clamp: the fentry's cause is one already */        \
		d = &c->decisions[SB_ATTR_UNMAP];                                                          \
		d->by_cause[dec].events++;                                                                 \
		d->by_cause[dec].pages += pages;                                                           \
		if ((SAMPLE_MASK) ? (e->events & (SAMPLE_MASK)) == 0 : (SAMPLE_EVERY) != 0)                \
			return unmap_sample##suffix(ctx, task, c, dec);                                    \
		return 0;                                                                                  \
	} while (0)
/* the options' macros below expanded into their arguments first */
#define ON_UNMAP_HVA_RANGE(...) ON_UNMAP_HVA_RANGE_(__VA_ARGS__)

/* the options from rodata: any combination */
#define UNMAP_ANY_OPTIONS attribution, decision_cache, count_other, sample_mask, sample_every

/* tp_btf and raw_tp: (start, end) are ctx[0] and ctx[1]; no BPF_PROG(), which would read them before the call */
SEC("?tp_btf/kvm_unmap_hva_range")
int tpbtf_kvm_unmap_hva_range(unsigned long long *ctx)
{
	ON_UNMAP_HVA_RANGE(, false, ctx[0], ctx[1], UNMAP_ANY_OPTIONS, task_cpu_of(task));
}

/* the "k" variant: see bpf_rdonly_cast above */
SEC("?tp_btf/kvm_unmap_hva_range")
int tpbtfk_kvm_unmap_hva_range(unsigned long long *ctx)
{
	ON_UNMAP_HVA_RANGE(_k, true, ctx[0], ctx[1], UNMAP_ANY_OPTIONS, task->thread_info.cpu);
}

/*
 * The same program for one set of options each, picked by the loader
 * (unmap_variant() in probes.c) when the options are those: no option is
 * tested at run time (a rodata flag's branch the verifier removes, but not
 * its load: two instructions each, on every event), and the target's
 * event counted in this CPU's struct sb_unmap_fast, whose address is a
 * constant, with no map lookup (its key on the stack, the lookup the
 * verifier inlines, its bound and NULL checks: 13 instructions, against a
 * bound check and an index). "c": counting only (no causes, no other
 * processes' events); "d": the defaults (causes, the decision cache, no
 * other processes' events, 1 in SB_DEFAULT_SAMPLE_EVERY stacks). CPU as
 * in smp_processor_id64(): the helper in the plain programs (6.1), the
 * task's field in the "k" ones.
 */
#define ON_UNMAP_COUNTING(suffix, CPU)                                                                     \
	do {                                                                                               \
		struct task_struct *task = bpf_get_current_task_btf();                                     \
		struct sb_unmap_fast *h;                                                                   \
		__u64 cpu;                                                                                 \
                                                                                                           \
		if ((__u32)task->tgid != target_tgid) {                                                    \
			/* a kernel thread's event; another process's is not counted (count_other off) */  \
			if (task->flags & PF_KTHREAD)                                                      \
				unmap_not_target##suffix(ctx, task, (ctx[1] - ctx[0]) >> PAGE_SHIFT);      \
			return 0;                                                                          \
		}                                                                                          \
		cpu = (CPU);                                                                               \
		if (cpu >= SB_FAST_CPUS)                                                                   \
			return unmap_target_slow##suffix(ctx);                                             \
		h = &unmap_fast[cpu];                                                                      \
		h->events++;                                                                               \
		h->pages += (ctx[1] - ctx[0]) >> PAGE_SHIFT;                                               \
		return 0;                                                                                  \
	} while (0)

/*
 * The defaults: ON_UNMAP_HVA_RANGE_()'s path with its options constant
 * and the target's event, the decision taken over and its count in this
 * CPU's struct sb_unmap_fast.
 */
#define ON_UNMAP_DEFAULT(suffix, CPU)                                                                      \
	do {                                                                                               \
		struct task_struct *task = bpf_get_current_task_btf();                                     \
		struct sb_unmap_fast *h;                                                                   \
		unsigned long start;                                                                       \
		__u64 cpu, pages, dec;                                                                     \
                                                                                                           \
		if ((__u32)task->tgid != target_tgid) {                                                    \
			/* a kernel thread's event; another process's is not counted (count_other off) */  \
			if (task->flags & PF_KTHREAD)                                                      \
				unmap_not_target##suffix(ctx, task, (ctx[1] - ctx[0]) >> PAGE_SHIFT);      \
			return 0;                                                                          \
		}                                                                                          \
		cpu = (CPU);                                                                               \
		if (cpu >= SB_FAST_CPUS)                                                                   \
			return unmap_target_slow##suffix(ctx);                                             \
		h = &unmap_fast[cpu];                                                                      \
		/* one register for h: clang would rebuild it from the array's address, in one more */    \
		barrier_var(h);                                                                            \
		start = ctx[0];                                                                            \
		if (h->inflight_task != (__u64)task || h->inflight_start != start ||                       \
		    h->inflight_migrations != task->se.nr_migrations)                                      \
			return unmap_decide_fast##suffix(ctx, task, h);                                    \
		dec = h->inflight_decision;                                                                \
		h->inflight_task = 0;                                                                      \
		/* a syscall's decision is the cause alone (SB_INFLIGHT_DECISION()) */                     \
		if (dec > SB_DECISION_CAUSES - 1)                                                          \
			return unmap_account_fast##suffix(ctx, task, h, dec);                              \
		/* the rest with few registers live: the JIT saves each callee-saved one the program uses */ \
		pages = (ctx[1] - start) >> PAGE_SHIFT;                                                    \
		h->events++;                                                                               \
		h->pages += pages;                                                                         \
		h->by_cause[dec].events++;                                                                 \
		h->by_cause[dec].pages += pages;                                                           \
		if ((h->events & (SB_DEFAULT_SAMPLE_EVERY - 1)) == 0)                                      \
			return unmap_sample_fast##suffix(ctx, task, h, dec);                               \
		return 0;                                                                                  \
	} while (0)

SEC("?tp_btf/kvm_unmap_hva_range")
int tpbtfd_kvm_unmap_hva_range(unsigned long long *ctx)
{
	ON_UNMAP_DEFAULT(, smp_processor_id64());
}

SEC("?tp_btf/kvm_unmap_hva_range")
int tpbtfdk_kvm_unmap_hva_range(unsigned long long *ctx)
{
	ON_UNMAP_DEFAULT(_k, task->thread_info.cpu);
}

SEC("?tp_btf/kvm_unmap_hva_range")
int tpbtfc_kvm_unmap_hva_range(unsigned long long *ctx)
{
	ON_UNMAP_COUNTING(, smp_processor_id64());
}

SEC("?tp_btf/kvm_unmap_hva_range")
int tpbtfck_kvm_unmap_hva_range(unsigned long long *ctx)
{
	ON_UNMAP_COUNTING(_k, task->thread_info.cpu);
}

SEC("?raw_tp/kvm_unmap_hva_range")
int rawtp_kvm_unmap_hva_range(unsigned long long *ctx)
{
	ON_UNMAP_HVA_RANGE(, false, ctx[0], ctx[1], UNMAP_ANY_OPTIONS, task_cpu_of(task));
}

SEC("?tp/kvm/kvm_unmap_hva_range")
int tp_kvm_unmap_hva_range(struct trace_event_raw_kvm_unmap_hva_range *ctx)
{
	ON_UNMAP_HVA_RANGE(, false, ctx->start, ctx->end, UNMAP_ANY_OPTIONS, task_cpu_of(task));
}

/* --- kvm:kvm_age_hva, kvm:kvm_test_age_hva: aging (reclaim, idle tracking) --- */

static __always_inline void on_age_hva(unsigned long start, unsigned long end)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_AGE_HVA, &task, &ectx, (end - start) >> PAGE_SHIFT, 0);
}

SEC("?tp_btf/kvm_age_hva")
int BPF_PROG(tpbtf_kvm_age_hva, unsigned long start, unsigned long end)
{
	on_age_hva(start, end);
	return 0;
}

SEC("?raw_tp/kvm_age_hva")
int BPF_PROG(rawtp_kvm_age_hva, unsigned long start, unsigned long end)
{
	on_age_hva(start, end);
	return 0;
}

SEC("?tp/kvm/kvm_age_hva")
int tp_kvm_age_hva(struct trace_event_raw_kvm_age_hva *ctx)
{
	on_age_hva(ctx->start, ctx->end);
	return 0;
}

static __always_inline void on_test_age_hva(void)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_TEST_AGE_HVA, &task, &ectx, 0, 0);
}

SEC("?tp_btf/kvm_test_age_hva")
int BPF_PROG(tpbtf_kvm_test_age_hva, unsigned long hva)
{
	on_test_age_hva();
	return 0;
}

SEC("?raw_tp/kvm_test_age_hva")
int BPF_PROG(rawtp_kvm_test_age_hva, unsigned long hva)
{
	on_test_age_hva();
	return 0;
}

SEC("?tp/kvm/kvm_test_age_hva")
int tp_kvm_test_age_hva(void *ctx)
{
	on_test_age_hva();
	return 0;
}

/* --- kvm:kvm_page_fault: a guest page fault KVM handles (NPT/EPT violation) --- */

static __always_inline void on_page_fault(__u64 error_code)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_PAGE_FAULT, &task, &ectx, 0, (error_code & pf_write_mask) ? 1 : 0);
}

SEC("?tp_btf/kvm_page_fault")
int BPF_PROG(tpbtf_kvm_page_fault, struct kvm_vcpu *vcpu, u64 fault_address, u64 error_code)
{
	on_page_fault(error_code);
	return 0;
}

SEC("?raw_tp/kvm_page_fault")
int BPF_PROG(rawtp_kvm_page_fault, struct kvm_vcpu *vcpu, u64 fault_address, u64 error_code)
{
	on_page_fault(error_code);
	return 0;
}

SEC("?tp/kvm/kvm_page_fault")
int tp_kvm_page_fault(struct trace_event_raw_kvm_page_fault *ctx)
{
	on_page_fault(ctx->error_code);
	return 0;
}

/* --- kvmmmu:fast_page_fault: the lockless fast path; detail counts RET_PF_FIXED --- */

static __always_inline void on_fast_page_fault(int ret)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_FAST_PF, &task, &ectx, 0, ret == ret_pf_fixed ? 1 : 0);
}

SEC("?tp_btf/fast_page_fault")
int BPF_PROG(tpbtf_fast_page_fault, struct kvm_vcpu *vcpu, struct kvm_page_fault *fault, u64 *sptep,
	     u64 old_spte, int ret)
{
	on_fast_page_fault(ret);
	return 0;
}

SEC("?raw_tp/fast_page_fault")
int BPF_PROG(rawtp_fast_page_fault, struct kvm_vcpu *vcpu, struct kvm_page_fault *fault, u64 *sptep,
	     u64 old_spte, int ret)
{
	on_fast_page_fault(ret);
	return 0;
}

SEC("?tp/kvmmmu/fast_page_fault")
int tp_fast_page_fault(struct trace_event_raw_fast_page_fault *ctx)
{
	on_fast_page_fault(ctx->ret);
	return 0;
}

/* --- kvmmmu:kvm_mmu_prepare_zap_page: shadow pages zapped --- */

static __always_inline void on_zap_page(void)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_ZAP_PAGE, &task, &ectx, 0, 0);
}

SEC("?tp_btf/kvm_mmu_prepare_zap_page")
int BPF_PROG(tpbtf_kvm_mmu_prepare_zap_page, struct kvm_mmu_page *sp)
{
	on_zap_page();
	return 0;
}

SEC("?raw_tp/kvm_mmu_prepare_zap_page")
int BPF_PROG(rawtp_kvm_mmu_prepare_zap_page, struct kvm_mmu_page *sp)
{
	on_zap_page();
	return 0;
}

SEC("?tp/kvmmmu/kvm_mmu_prepare_zap_page")
int tp_kvm_mmu_prepare_zap_page(void *ctx)
{
	on_zap_page();
	return 0;
}

/* --- kvmmmu:kvm_tdp_mmu_spte_changed; detail counts zaps (present -> not present) --- */

/* The cause of the target VM's MMU-notifier invalidation a task is inside (range_start to range_end). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);   /* pid_tgid */
	__type(value, __u32); /* enum sb_cause */
} inval_cause SEC(".maps");

static __always_inline void on_tdp_spte_changed(__u64 old_spte, __u64 new_spte)
{
	struct task_struct *task;
	struct sb_counts *c;
	__u64 ectx;
	__u64 zap = (old_spte & spte_present_mask) && !(new_spte & spte_present_mask);

	c = count(SB_C_TDP_SPTE, &task, &ectx, 0, zap);
	if (c && zap && invalidations_open) {
		__u64 id = bpf_get_current_pid_tgid();
		__u32 *cause = bpf_map_lookup_elem(&inval_cause, &id);
		__u32 v;

		if (!cause)
			return;
		v = *cause;
		barrier_var(v);
		if (v < SB_CAUSE_MAX)
			c->zap_cause[v]++;
	}
}

SEC("?tp_btf/kvm_tdp_mmu_spte_changed")
int BPF_PROG(tpbtf_kvm_tdp_mmu_spte_changed, int as_id, gfn_t gfn, int level, u64 old_spte, u64 new_spte)
{
	on_tdp_spte_changed(old_spte, new_spte);
	return 0;
}

SEC("?raw_tp/kvm_tdp_mmu_spte_changed")
int BPF_PROG(rawtp_kvm_tdp_mmu_spte_changed, int as_id, gfn_t gfn, int level, u64 old_spte, u64 new_spte)
{
	on_tdp_spte_changed(old_spte, new_spte);
	return 0;
}

SEC("?tp/kvmmmu/kvm_tdp_mmu_spte_changed")
int tp_kvm_tdp_mmu_spte_changed(struct trace_event_raw_kvm_tdp_mmu_spte_changed *ctx)
{
	on_tdp_spte_changed(ctx->old_spte, ctx->new_spte);
	return 0;
}

/* --- kvmmmu:kvm_mmu_set_spte: SPTEs installed --- */

static __always_inline void on_set_spte(void)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_SET_SPTE, &task, &ectx, 0, 0);
}

SEC("?tp_btf/kvm_mmu_set_spte")
int BPF_PROG(tpbtf_kvm_mmu_set_spte, int level, gfn_t gfn, u64 *sptep)
{
	on_set_spte();
	return 0;
}

SEC("?raw_tp/kvm_mmu_set_spte")
int BPF_PROG(rawtp_kvm_mmu_set_spte, int level, gfn_t gfn, u64 *sptep)
{
	on_set_spte();
	return 0;
}

SEC("?tp/kvmmmu/kvm_mmu_set_spte")
int tp_kvm_mmu_set_spte(void *ctx)
{
	on_set_spte();
	return 0;
}

/* --- kvmmmu:kvm_mmu_split_huge_page --- */

static __always_inline void on_split_huge_page(void)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_SPLIT_HUGE, &task, &ectx, 0, 0);
}

SEC("?tp_btf/kvm_mmu_split_huge_page")
int BPF_PROG(tpbtf_kvm_mmu_split_huge_page, u64 gfn, u64 spte, int level, int errno)
{
	on_split_huge_page();
	return 0;
}

SEC("?raw_tp/kvm_mmu_split_huge_page")
int BPF_PROG(rawtp_kvm_mmu_split_huge_page, u64 gfn, u64 spte, int level, int errno)
{
	on_split_huge_page();
	return 0;
}

SEC("?tp/kvmmmu/kvm_mmu_split_huge_page")
int tp_kvm_mmu_split_huge_page(void *ctx)
{
	on_split_huge_page();
	return 0;
}

/*
 * --- tlb:tlb_flush: host TLB flushes by reason. TLB_REMOTE_SEND_IPI fires
 * in the initiator's context, so its causes are classified like
 * invalidations; TLB_REMOTE_SHOOTDOWN fires in the IPI handler of each
 * receiving CPU, in whatever task it interrupted. ---
 */

static __always_inline void on_tlb_flush(void *ctx, int reason, unsigned long pages, bool kfuncs)
{
	struct task_struct *task;
	__u32 r = (__u32)reason;
	struct sb_counts *c;
	__u64 ectx;

	if (r >= SB_TLB_REASONS)
		return;
	c = count(SB_C_TLB_TASK_SWITCH + r, &task, &ectx, pages == TLB_FLUSH_ALL ? 0 : pages,
		  pages == TLB_FLUSH_ALL ? 1 : 0);
	if (c && reason == bpf_core_enum_value(enum tlb_flush_reason, TLB_REMOTE_SEND_IPI))
		attribute(ctx, task, ectx, SB_ATTR_TLB_SHOOTDOWN, c, 0, &c->count[SB_C_TLB_TASK_SWITCH + r][ectx & 3].events,
			  kfuncs, NULL);
}

SEC("?tp_btf/tlb_flush")
int BPF_PROG(tpbtf_tlb_flush, int reason, unsigned long pages)
{
	on_tlb_flush(ctx, reason, pages, false);
	return 0;
}

SEC("?tp_btf/tlb_flush")
int BPF_PROG(tpbtfk_tlb_flush, int reason, unsigned long pages)
{
	on_tlb_flush(ctx, reason, pages, true);
	return 0;
}

SEC("?raw_tp/tlb_flush")
int BPF_PROG(rawtp_tlb_flush, int reason, unsigned long pages)
{
	on_tlb_flush(ctx, reason, pages, false);
	return 0;
}

SEC("?tp/tlb/tlb_flush")
int tp_tlb_flush(struct trace_event_raw_tlb_flush *ctx)
{
	on_tlb_flush(ctx, ctx->reason, ctx->pages, false);
	return 0;
}

/*
 * --- KVM's exit path, counted where KVM bumps its own vCPU stats, so each
 * counter equals a query-stats value exactly (docs/probes.md says why):
 * kvm:kvm_exit fires once per return from the guest, like stat.exits
 * (fastpath re-entries included); kvm:kvm_inj_virq once per interrupt
 * injected, beside stat.irq_injections; kvm:kvm_emulate_insn beside
 * stat.insn_emulation (failed = 0) and stat.insn_emulation_fail
 * (failed = 1). These fire on vCPU threads only, so the target context is
 * the VM's own. Hot: the loader enables them by option. ---
 */

/*
 * The exit reason, as the vendor module keeps it: SVM's VMCB exit code
 * (vcpu_svm->vmcb->control.exit_code) or VMX's exit reason
 * (vcpu_vmx->exit_reason.full), the value the classic tracepoint records
 * and perf kvm stat reads. Both structs live in the vendor module's BTF;
 * where that module is not loaded its branch resolves to dead code. The
 * local types name only the fields read (CO-RE matches by name, the
 * ___sb suffix is ignored).
 */
struct vmcb_control_area___sb {
	__u32 exit_code;
} __attribute__((preserve_access_index));

struct vmcb___sb {
	struct vmcb_control_area___sb control;
} __attribute__((preserve_access_index));

struct vcpu_svm___sb {
	struct kvm_vcpu vcpu;
	struct vmcb___sb *vmcb;
} __attribute__((preserve_access_index));

union vmx_exit_reason___sb {
	__u32 full;
} __attribute__((preserve_access_index));

struct vcpu_vmx___sb {
	struct kvm_vcpu vcpu;
	union vmx_exit_reason___sb exit_reason;
} __attribute__((preserve_access_index));

#define KVM_ISA_VMX 1 /* arch/x86/kvm/trace.h */
#define KVM_ISA_SVM 2

static __always_inline __u64 exit_code_of(struct kvm_vcpu *vcpu, __u32 isa)
{
	/*
	 * Kernels that mark a raw tracepoint's pointer arguments maybe-NULL
	 * (Debian 12's backports 6.12) refuse the arithmetic below on vcpu
	 * until it is checked: "pointer arithmetic on trusted_ptr_or_null_
	 * prohibited, null-check it first".
	 */
	if (!vcpu)
		return SB_EXIT_UNKNOWN_CODE;
	if (isa == KVM_ISA_SVM && bpf_core_type_exists(struct vcpu_svm___sb)) {
		struct vcpu_svm___sb *svm =
			(void *)((unsigned long)vcpu - bpf_core_field_offset(struct vcpu_svm___sb, vcpu));
		return BPF_CORE_READ(svm, vmcb, control.exit_code);
	}
	if (isa == KVM_ISA_VMX && bpf_core_type_exists(struct vcpu_vmx___sb)) {
		struct vcpu_vmx___sb *vmx =
			(void *)((unsigned long)vcpu - bpf_core_field_offset(struct vcpu_vmx___sb, vcpu));
		return BPF_CORE_READ(vmx, exit_reason.full);
	}
	return SB_EXIT_UNKNOWN_CODE;
}

/* The exit code's slot in sb_counts.exit_reason (probes-abi.h has the map). */
static __always_inline __u32 exit_slot(__u64 code, __u32 isa)
{
	if (code == SB_EXIT_UNKNOWN_CODE)
		return SB_EXIT_UNKNOWN;
	if (isa == KVM_ISA_VMX)
		code &= 0xffff; /* the basic reason; bit 31 is "VM entry failed" */
	else if (code == 0xffffffffu)
		return SB_EXIT_SVM_ERR;
	if (code < SB_EXIT_LOW)
		return (__u32)code;
	if (isa == KVM_ISA_SVM && code >= SB_EXIT_SVM_HIGH && code < SB_EXIT_SVM_HIGH + SB_EXIT_HIGH_SLOTS)
		return SB_EXIT_LOW + (__u32)(code - SB_EXIT_SVM_HIGH);
	return SB_EXIT_UNKNOWN;
}

/*
 * vcpu: the exit code is read from it (exit_code_of(), two
 * bpf_probe_read_kernel() calls), only for the target's exits: another
 * VM's exit costs the task check alone. NULL: code is the record's.
 */
static __always_inline void on_kvm_exit(struct kvm_vcpu *vcpu, __u64 code, __u32 isa)
{
	struct task_struct *task;
	struct sb_counts *c;
	__u32 slot;
	__u64 ectx;

	c = count(SB_C_KVM_EXIT, &task, &ectx, 0, 0);
	/* by reason for the target VM only: other VMs' vCPUs pass here too */
	if (!c || ectx != SB_CTX_TARGET)
		return;
	if (vcpu)
		code = exit_code_of(vcpu, isa);
	slot = exit_slot(code, isa);
	/* the compiler knows slot is in range and would drop the mask the verifier needs */
	barrier_var(slot);
	c->exit_reason[slot & (SB_EXIT_SLOTS - 1)]++;
}

SEC("?tp_btf/kvm_exit")
int BPF_PROG(tpbtf_kvm_exit, struct kvm_vcpu *vcpu, u32 isa)
{
	/* exit_code_of() says UNKNOWN for a NULL vcpu */
	on_kvm_exit(vcpu, SB_EXIT_UNKNOWN_CODE, isa);
	return 0;
}

SEC("?raw_tp/kvm_exit")
int BPF_PROG(rawtp_kvm_exit, struct kvm_vcpu *vcpu, u32 isa)
{
	on_kvm_exit(vcpu, SB_EXIT_UNKNOWN_CODE, isa);
	return 0;
}

/* the record carries the reason itself (kvm.ko's BTF relocates it; without that BTF: unknown) */
SEC("?tp/kvm/kvm_exit")
int tp_kvm_exit(struct trace_event_raw_kvm_exit *ctx)
{
	if (bpf_core_field_exists(ctx->exit_reason))
		on_kvm_exit(NULL, ctx->exit_reason, ctx->isa);
	else
		on_kvm_exit(NULL, SB_EXIT_UNKNOWN_CODE, 0);
	return 0;
}

static __always_inline void on_inj_virq(bool reinjected)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_INJ_VIRQ, &task, &ectx, 0, reinjected ? 1 : 0);
}

SEC("?tp_btf/kvm_inj_virq")
int BPF_PROG(tpbtf_kvm_inj_virq, unsigned int vector, bool soft, bool reinjected)
{
	on_inj_virq(reinjected);
	return 0;
}

SEC("?raw_tp/kvm_inj_virq")
int BPF_PROG(rawtp_kvm_inj_virq, unsigned int vector, bool soft, bool reinjected)
{
	on_inj_virq(reinjected);
	return 0;
}

SEC("?tp/kvm/kvm_inj_virq")
int tp_kvm_inj_virq(struct trace_event_raw_kvm_inj_virq *ctx)
{
	on_inj_virq(ctx->reinjected);
	return 0;
}

static __always_inline void on_emulate_insn(__u8 failed)
{
	struct task_struct *task;
	__u64 ectx;

	count(SB_C_EMULATE_INSN, &task, &ectx, 0, failed ? 1 : 0);
}

SEC("?tp_btf/kvm_emulate_insn")
int BPF_PROG(tpbtf_kvm_emulate_insn, struct kvm_vcpu *vcpu, __u8 failed)
{
	on_emulate_insn(failed);
	return 0;
}

SEC("?raw_tp/kvm_emulate_insn")
int BPF_PROG(rawtp_kvm_emulate_insn, struct kvm_vcpu *vcpu, __u8 failed)
{
	on_emulate_insn(failed);
	return 0;
}

SEC("?tp/kvm/kvm_emulate_insn")
int tp_kvm_emulate_insn(struct trace_event_raw_kvm_emulate_insn *ctx)
{
	on_emulate_insn(ctx->failed);
	return 0;
}

/*
 * --- migrate:mm_migrate_pages_start / mm_migrate_pages: a marker around
 * migrate_pages(), so invalidations inside it count as migration whoever
 * runs it (kcompactd, direct compaction, NUMA-misplaced page migration,
 * move_pages). Only the target's threads and kernel threads are tracked. ---
 */

static __always_inline void on_migrate_start(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct sb_counts *c;
	__u32 pid, one = 1, *depth;

	if (ctx_of(task) == SB_CTX_OTHER)
		return;
	pid = (__u32)task->pid;
	depth = bpf_map_lookup_elem(&migrating, &pid);
	if (depth) {
		(*depth)++;
	} else if (bpf_map_update_elem(&migrating, &pid, &one, BPF_NOEXIST)) {
		c = counts_get(task);
		if (c)
			c->marker_dropped++;
		return;
	}
	__sync_fetch_and_add(&migrations_active, 1);
}

static __always_inline void on_migrate_end(void)
{
	__u32 pid = (__u32)bpf_get_current_pid_tgid(), *depth;

	depth = bpf_map_lookup_elem(&migrating, &pid);
	if (!depth)
		return; /* began before we attached, or not tracked */
	if (*depth <= 1)
		bpf_map_delete_elem(&migrating, &pid);
	else
		(*depth)--;
	__sync_fetch_and_add(&migrations_active, -1);
}

SEC("?tp_btf/mm_migrate_pages_start")
int BPF_PROG(tpbtf_mm_migrate_pages_start, enum migrate_mode mode, int reason)
{
	on_migrate_start();
	return 0;
}

SEC("?raw_tp/mm_migrate_pages_start")
int BPF_PROG(rawtp_mm_migrate_pages_start, enum migrate_mode mode, int reason)
{
	on_migrate_start();
	return 0;
}

SEC("?tp/migrate/mm_migrate_pages_start")
int tp_mm_migrate_pages_start(void *ctx)
{
	on_migrate_start();
	return 0;
}

SEC("?tp_btf/mm_migrate_pages")
int BPF_PROG(tpbtf_mm_migrate_pages)
{
	on_migrate_end();
	return 0;
}

SEC("?raw_tp/mm_migrate_pages")
int BPF_PROG(rawtp_mm_migrate_pages)
{
	on_migrate_end();
	return 0;
}

SEC("?tp/migrate/mm_migrate_pages")
int tp_mm_migrate_pages(void *ctx)
{
	on_migrate_end();
	return 0;
}

/*
 * --- fentry: what only function entry sees. The kvm struct tells the VM
 * exactly (kvm->userspace_pid is the pid that created it), so these count
 * the target VM's events in every context, kernel threads included. ---
 */

/*
 * Whether the VM whose memory is mm (kvm->mm, the mm its MMU notifier
 * watches) is the target's: mm's owner (CONFIG_MEMCG: the process the mm
 * belongs to, one of its threads) is in the target process. Two loads from
 * the argument and a compare, no helper call and no
 * bpf_probe_read_kernel(): another VM's invalidation costs these programs
 * about what the floor program costs an event (bench/probe-cost's "other").
 * kvm->userspace_pid, the pid that created the VM, lies past 32 KiB into
 * struct kvm on 6.12, beyond a load's offset, so it took a
 * bpf_probe_read_kernel() call (80 instructions on 6.1); it is kept for
 * kernels without mm->owner.
 */
static __always_inline bool is_target_vm(struct kvm *kvm, struct mm_struct *mm)
{
	if (bpf_core_field_exists(mm->owner)) {
		struct task_struct *owner = mm->owner;

		return owner && (__u32)owner->tgid == target_tgid;
	}
	if (bpf_core_field_exists(kvm->userspace_pid))
		return (__u32)BPF_CORE_READ(kvm, userspace_pid) == target_tgid;
	/* kernels before both: only the target's own context */
	return (__u32)(bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

static __always_inline struct kvm *kvm_of_notifier(struct mmu_notifier *mn)
{
	return (struct kvm *)((unsigned long)mn - bpf_core_field_offset(struct kvm, mmu_notifier));
}

/* the notifier's VM: its mm is the notifier's own (mn->mm == kvm->mm) */
static __always_inline bool is_target_notifier(struct mmu_notifier *mn)
{
	return is_target_vm(kvm_of_notifier(mn), mn->mm);
}

static __always_inline void on_mn_invalidate_start(void *ctx, struct mmu_notifier *mn,
						   const struct mmu_notifier_range *range, bool kfuncs)
{
	struct task_struct *task;
	struct sb_counts *c;
	unsigned int event, flags = 0;
	unsigned long start, end;
	__u64 ectx, how = SB_HOW_STACK_NONE;
	int cause;

	/* the caller tested the VM; loads, not bpf_probe_read_kernel() calls (BPF_CORE_READ): range is the function's argument */
	start = range->start;
	end = range->end;
	c = count_vm(SB_C_MN_INVALIDATE, &task, &ectx, (end - start) >> PAGE_SHIFT, 0);
	if (!c)
		return;
	event = range->event;
	c->mn_event[ectx & 3][event & (SB_MN_EVENTS - 1)]++;
	if (bpf_core_field_exists(range->flags))
		flags = range->flags;
	/* the low bits by value, one store (sb_probes_read() counts their bits); the others, rare, by bit */
	c->mn_flag_values[ectx & 3][flags & (SB_MN_FLAG_VALUES - 1)]++;
	if (flags >> SB_MN_FLAG_VALUE_BITS)
		for (int b = SB_MN_FLAG_VALUE_BITS; b < SB_MN_FLAG_BITS; b++)
			if (flags & (1u << b))
				c->mn_flag[ectx & 3][b]++;
	cause = attribute(ctx, task, ectx, SB_ATTR_MN_INVALIDATE, c, 0, &c->count[SB_C_MN_INVALIDATE][ectx & 3].events,
			  kfuncs, &how);
	/* for kvm_unmap_hva_range's program, next on this CPU: the decision, unless a stack's (its stacks are counted) */
	if (decision_cache && cause >= 0 && how < SB_HOW_STACK) {
		struct sb_unmap_fast *h = unmap_fast_at(task_cpu_of(task));

		if (h) {
			h->inflight_task = (__u64)task;
			h->inflight_start = start;
			h->inflight_migrations = task->se.nr_migrations;
			h->inflight_decision = SB_INFLIGHT_DECISION(cause, how);
		}
	}
	{
		/* by cause: which invalidations carry which event and flags (a patched kernel's new flag) */
		__u64 ci = cause >= 0 ? (__u64)cause : SB_CAUSE_MAX;

		ci &= SB_DECISION_CAUSES - 1;
		c->mn_cause_event[ci][event & (SB_MN_EVENTS - 1)]++;
		c->mn_cause_flags[ci][flags & (SB_MN_FLAG_VALUES - 1)]++;
		if (flags >> SB_MN_FLAG_VALUE_BITS)
			c->mn_cause_flags_high[ci]++;
	}
	if (cause >= 0 && invalidations_open) {
		__u64 id = bpf_get_current_pid_tgid();
		__u32 v = (__u32)cause;

		bpf_map_update_elem(&inval_cause, &id, &v, BPF_ANY);
	}
}

/*
 * The VM's test inline, the rest a call: another VM's invalidation costs
 * the test and no more. Inline, the rest's registers made the JIT save and
 * restore four callee-saved registers on every run, that one's included.
 * Two of each, kfuncs a constant in each (see DEFINE_UNMAP_SLOW).
 */
#define DEFINE_MN_INVALIDATE_START(name, suffix, kf)                                                      \
	static __noinline int mn_invalidate_start##suffix(unsigned long long *ctx)                          \
	{                                                                                                  \
		on_mn_invalidate_start(ctx, (struct mmu_notifier *)ctx[0],                                 \
				       (const struct mmu_notifier_range *)ctx[1], kf);                     \
		return 0;                                                                                  \
	}                                                                                                  \
	SEC("?fentry/kvm_mmu_notifier_invalidate_range_start")                                             \
	int name(unsigned long long *ctx)                                                                  \
	{                                                                                                  \
		if (!is_target_notifier((struct mmu_notifier *)ctx[0]))                                    \
			return 0;                                                                          \
		return mn_invalidate_start##suffix(ctx);                                                   \
	}

DEFINE_MN_INVALIDATE_START(fentry_kvm_mmu_notifier_invalidate_range_start, , false)
DEFINE_MN_INVALIDATE_START(fentryk_kvm_mmu_notifier_invalidate_range_start, _k, true)

SEC("?fentry/kvm_mmu_notifier_invalidate_range_end")
int BPF_PROG(fentry_kvm_mmu_notifier_invalidate_range_end, struct mmu_notifier *mn,
	     const struct mmu_notifier_range *range)
{
	struct task_struct *task;
	__u64 id;
	__u64 ectx;

	if (!is_target_notifier(mn))
		return 0;
	count_vm(SB_C_MN_INVALIDATE_END, &task, &ectx, 0, 0);
	id = bpf_get_current_pid_tgid();
	bpf_map_delete_elem(&inval_cause, &id);
	return 0;
}

/*
 * kvm_flush_remote_tlbs() is every remote flush KVM requests (its
 * remote_tlb_flush_requests stat); kvm_flush_remote_tlbs_range() falls back
 * to it when the architecture cannot flush a range, so the range counter
 * counts requests and the plain one counts flushes, never summed.
 */
/* the VM's test inline, the rest a call (see DEFINE_MN_INVALIDATE_START) */
#define DEFINE_KVM_FLUSH(name, suffix, kf)                                                                \
	static __noinline int kvm_flush##suffix(unsigned long long *ctx)                                    \
	{                                                                                                  \
		struct task_struct *task;                                                                  \
		struct sb_counts *c;                                                                       \
		__u64 ectx;                                                                                \
                                                                                                           \
		c = count_vm(SB_C_KVM_FLUSH, &task, &ectx, 0, 0);                                          \
		if (!c)                                                                                    \
			return 0;                                                                          \
		/* another process's flush of the VM: attribute() decides the target's and kthreads' */    \
		if (ectx == SB_CTX_OTHER)                                                                  \
			c->cause[SB_ATTR_KVM_FLUSH][SB_CTX_OTHER][SB_CAUSE_OTHER]++;                        \
		else                                                                                       \
			attribute(ctx, task, ectx, SB_ATTR_KVM_FLUSH, c, 0,                                \
				  &c->count[SB_C_KVM_FLUSH][ectx & 3].events, kf, NULL);                   \
		return 0;                                                                                  \
	}                                                                                                  \
	SEC("?fentry/kvm_flush_remote_tlbs")                                                               \
	int name(unsigned long long *ctx)                                                                  \
	{                                                                                                  \
		struct kvm *kvm = (struct kvm *)ctx[0];                                                    \
                                                                                                           \
		if (!is_target_vm(kvm, kvm->mm))                                                           \
			return 0;                                                                          \
		return kvm_flush##suffix(ctx);                                                             \
	}

DEFINE_KVM_FLUSH(fentry_kvm_flush_remote_tlbs, , false)
DEFINE_KVM_FLUSH(fentryk_kvm_flush_remote_tlbs, _k, true)

/*
 * The same count where kvm_flush_remote_tlbs() makes its request of every
 * vCPU: kvm_make_all_cpus_request(kvm, req) (6.12, 7.x), or on 6.1
 * kvm_make_all_cpus_request_except(kvm, req, except), which the former
 * tail-calls (the loader retargets the program there). A kernel build may
 * inline kvm_flush_remote_tlbs() into the MMU notifier's callers in
 * kvm_main.c, where its fentry sees none of their flushes; the request
 * function, called from dozens of places across kvm.ko, stays out of line.
 * KVM_REQ_TLB_FLUSH is request 0 with KVM_REQUEST_WAIT and
 * KVM_REQUEST_NO_WAKEUP (0x300 from 6.1 to 7.2), and only
 * kvm_flush_remote_tlbs() makes it of all vCPUs. A flush the architecture's
 * hook did (Hyper-V's) makes no request: the self-check against
 * remote_tlb_flush_requests marks the count partial then (docs/probes.md).
 */
#define SB_KVM_REQ_TLB_FLUSH 0x300u
#define DEFINE_KVM_FLUSH_REQUEST(name, suffix)                                                            \
	SEC("?fentry/kvm_make_all_cpus_request")                                                           \
	int name(unsigned long long *ctx)                                                                  \
	{                                                                                                  \
		struct kvm *kvm = (struct kvm *)ctx[0];                                                    \
                                                                                                           \
		if ((__u32)ctx[1] != SB_KVM_REQ_TLB_FLUSH || !is_target_vm(kvm, kvm->mm))                  \
			return 0;                                                                          \
		return kvm_flush##suffix(ctx);                                                             \
	}

DEFINE_KVM_FLUSH_REQUEST(fentry_kvm_flush_request, )
DEFINE_KVM_FLUSH_REQUEST(fentryk_kvm_flush_request, _k)

SEC("?fentry/kvm_flush_remote_tlbs_range")
int BPF_PROG(fentry_kvm_flush_remote_tlbs_range, struct kvm *kvm, gfn_t gfn, u64 nr_pages)
{
	struct task_struct *task;
	__u64 ectx;

	if (!is_target_vm(kvm, kvm->mm))
		return 0;
	count_vm(SB_C_KVM_FLUSH_RANGE, &task, &ectx, nr_pages, 0);
	return 0;
}

/*
 * --- fentry + fexit: the time KVM spends in a call, for the target VM.
 * kvm_vm_ioctl_clear_dirty_log() and kvm_vm_ioctl_get_dirty_log() are
 * inlined into kvm_vm_ioctl() on the kernels seen here; the functions
 * they call with slots_lock held are not, and do the work (write-protect
 * the pages of the mask, flush remote TLBs). ---
 */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);   /* pid_tgid of the caller */
	__type(value, __u64); /* bpf_ktime_get_ns() at entry */
} timed_entry SEC(".maps");

static __always_inline void timed_enter(struct kvm *kvm)
{
	__u64 id, t;

	if (!is_target_vm(kvm, kvm->mm))
		return;
	id = bpf_get_current_pid_tgid();
	t = bpf_ktime_get_ns();
	bpf_map_update_elem(&timed_entry, &id, &t, BPF_ANY);
}

/*
 * floor(log2(d)) (0 for d < 2), at most SB_TIMED_HIST - 1: six halvings,
 * not a loop over the buckets. The loop branched on d at every bucket with
 * a different b on each path, so the verifier could prune nothing and gave
 * up after a million instructions (half a minute in a TCG host VM), and the
 * timed probes never loaded.
 */
static __always_inline __u32 log2_bucket(__u64 d)
{
	__u32 b = 0;

#pragma unroll
	for (__u32 half = 32; half > 1; half >>= 1) {
		__u32 s = (d >> half) ? half : 0;

		d >>= s;
		b += s;
	}
	b += (__u32)(d >> 1);
	return b < SB_TIMED_HIST ? b : SB_TIMED_HIST - 1;
}

static __always_inline void timed_exit(__u32 counter, __u32 which)
{
	struct task_struct *task;
	struct sb_counts *c;
	__u64 id = bpf_get_current_pid_tgid(), *t, d;
	__u32 b = 0;
	__u64 ectx;

	t = bpf_map_lookup_elem(&timed_entry, &id);
	if (!t)
		return;
	d = bpf_ktime_get_ns() - *t;
	bpf_map_delete_elem(&timed_entry, &id);
	b = log2_bucket(d);
	barrier_var(b); /* keep the bound check below: the verifier cannot follow the clamp's arithmetic */
	c = count_vm(counter, &task, &ectx, 0, d);
	if (c && which < SB_TIMED_CALLS && b < SB_TIMED_HIST)
		c->timed_hist[which][b]++;
}

SEC("?fentry/kvm_clear_dirty_log_protect")
int BPF_PROG(fentry_kvm_clear_dirty_log_protect, struct kvm *kvm)
{
	timed_enter(kvm);
	return 0;
}

SEC("?fexit/kvm_clear_dirty_log_protect")
int BPF_PROG(fexit_kvm_clear_dirty_log_protect, struct kvm *kvm)
{
	timed_exit(SB_C_CLEAR_DIRTY_LOG, 0);
	return 0;
}

SEC("?fentry/kvm_get_dirty_log_protect")
int BPF_PROG(fentry_kvm_get_dirty_log_protect, struct kvm *kvm)
{
	timed_enter(kvm);
	return 0;
}

SEC("?fexit/kvm_get_dirty_log_protect")
int BPF_PROG(fexit_kvm_get_dirty_log_protect, struct kvm *kvm)
{
	timed_exit(SB_C_GET_DIRTY_LOG, 1);
	return 0;
}
