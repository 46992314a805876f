// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The loader: probe what the kernel allows, pick a backend per probe, set
 * the programs' read-only data (target, classifier tables), load, attach,
 * read the per-CPU counters (mapped), symbolize recorded stacks.
 */
#include "probes.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "clock.h"
#include "fileio.h"
#include "probe-features.h"
#include "kallsyms.h"
#include "macro.h"
#include "probes.skel.h"
#include "stack-symbols.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* UAPI since Linux 6.1; glibc 2.36 lacks it */
#endif

/* ---- what we probe ---- */

/* Probes that only run when an option asks for them (hot paths). */
enum probe_gate {
	GATE_NONE = 0,  /* always */
	GATE_EXITS,     /* sb_probe_options.exit_counters */
	GATE_EMULATION, /* sb_probe_options.emulation_counter */
	GATE_ZAP_CAUSES, /* sb_probe_options.zap_causes */
	GATE_ATTRIBUTION, /* sb_probe_options.attribution */
};

struct probe_def {
	const char *category; /* tracepoint category; NULL for an fentry probe */
	const char *name;     /* tracepoint or kernel function */
	int first, last;      /* counters fed, or -1 for a marker */
	enum probe_gate gate;
	bool timed;           /* fentry with an fexit_<name> program: the time inside the call */
};

enum {
	P_UNMAP_HVA,
	P_AGE_HVA,
	P_TEST_AGE_HVA,
	P_PAGE_FAULT,
	P_FAST_PF,
	P_ZAP_PAGE,
	P_TDP_SPTE,
	P_SET_SPTE,
	P_SPLIT_HUGE,
	P_TLB_FLUSH,
	P_KVM_EXIT,
	P_INJ_VIRQ,
	P_EMULATE_INSN,
	P_MIGRATE_START,
	P_MIGRATE_END,
	P_MN_INVALIDATE,
	P_MN_INVALIDATE_END,
	P_KVM_FLUSH,
	P_KVM_FLUSH_RANGE,
	P_CLEAR_DIRTY_LOG,
	P_GET_DIRTY_LOG,
	P_MAX,
};

static const struct probe_def probe_defs[P_MAX] = {
	[P_UNMAP_HVA] = { "kvm", "kvm_unmap_hva_range", SB_C_UNMAP_HVA, SB_C_UNMAP_HVA },
	[P_AGE_HVA] = { "kvm", "kvm_age_hva", SB_C_AGE_HVA, SB_C_AGE_HVA },
	[P_TEST_AGE_HVA] = { "kvm", "kvm_test_age_hva", SB_C_TEST_AGE_HVA, SB_C_TEST_AGE_HVA },
	[P_PAGE_FAULT] = { "kvm", "kvm_page_fault", SB_C_PAGE_FAULT, SB_C_PAGE_FAULT },
	[P_FAST_PF] = { "kvmmmu", "fast_page_fault", SB_C_FAST_PF, SB_C_FAST_PF },
	[P_ZAP_PAGE] = { "kvmmmu", "kvm_mmu_prepare_zap_page", SB_C_ZAP_PAGE, SB_C_ZAP_PAGE },
	[P_TDP_SPTE] = { "kvmmmu", "kvm_tdp_mmu_spte_changed", SB_C_TDP_SPTE, SB_C_TDP_SPTE },
	[P_SET_SPTE] = { "kvmmmu", "kvm_mmu_set_spte", SB_C_SET_SPTE, SB_C_SET_SPTE },
	[P_SPLIT_HUGE] = { "kvmmmu", "kvm_mmu_split_huge_page", SB_C_SPLIT_HUGE, SB_C_SPLIT_HUGE },
	[P_TLB_FLUSH] = { "tlb", "tlb_flush", SB_C_TLB_TASK_SWITCH, SB_C_TLB_WRONG_CPU },
	[P_KVM_EXIT] = { "kvm", "kvm_exit", SB_C_KVM_EXIT, SB_C_KVM_EXIT, GATE_EXITS },
	[P_INJ_VIRQ] = { "kvm", "kvm_inj_virq", SB_C_INJ_VIRQ, SB_C_INJ_VIRQ, GATE_EXITS },
	[P_EMULATE_INSN] = { "kvm", "kvm_emulate_insn", SB_C_EMULATE_INSN, SB_C_EMULATE_INSN, GATE_EMULATION },
	[P_MIGRATE_START] = { "migrate", "mm_migrate_pages_start", -1, -1 },
	[P_MIGRATE_END] = { "migrate", "mm_migrate_pages", -1, -1 },
	[P_MN_INVALIDATE] = { NULL, "kvm_mmu_notifier_invalidate_range_start", SB_C_MN_INVALIDATE,
			      SB_C_MN_INVALIDATE, GATE_ATTRIBUTION },
	[P_MN_INVALIDATE_END] = { NULL, "kvm_mmu_notifier_invalidate_range_end", SB_C_MN_INVALIDATE_END,
				  SB_C_MN_INVALIDATE_END, GATE_ZAP_CAUSES },
	[P_KVM_FLUSH] = { NULL, "kvm_flush_remote_tlbs", SB_C_KVM_FLUSH, SB_C_KVM_FLUSH },
	[P_KVM_FLUSH_RANGE] = { NULL, "kvm_flush_remote_tlbs_range", SB_C_KVM_FLUSH_RANGE, SB_C_KVM_FLUSH_RANGE },
	[P_CLEAR_DIRTY_LOG] = { NULL, "kvm_clear_dirty_log_protect", SB_C_CLEAR_DIRTY_LOG, SB_C_CLEAR_DIRTY_LOG,
				.timed = true },
	[P_GET_DIRTY_LOG] = { NULL, "kvm_get_dirty_log_protect", SB_C_GET_DIRTY_LOG, SB_C_GET_DIRTY_LOG, .timed = true },
};

struct counter_def {
	const char *name;
	const char *description;
	const char *pages_label;
	const char *detail_label;
	int probe;
};

static const struct counter_def counter_defs[SB_C_MAX] = {
	[SB_C_UNMAP_HVA] = { "unmap_hva", "MMU-notifier invalidations that reached KVM", "pages", NULL, P_UNMAP_HVA },
	[SB_C_AGE_HVA] = { "age_hva", "MMU-notifier aging (clear young) that reached KVM", "pages", NULL, P_AGE_HVA },
	[SB_C_TEST_AGE_HVA] = { "test_age_hva", "MMU-notifier test-young that reached KVM", NULL, NULL,
				P_TEST_AGE_HVA },
	[SB_C_PAGE_FAULT] = { "page_fault", "guest page faults KVM handled (NPT/EPT violations)", NULL, "write",
			      P_PAGE_FAULT },
	[SB_C_FAST_PF] = { "fast_page_fault", "KVM fast page fault attempts", NULL, "fixed", P_FAST_PF },
	[SB_C_ZAP_PAGE] = { "zap_page", "KVM shadow pages zapped", NULL, NULL, P_ZAP_PAGE },
	[SB_C_TDP_SPTE] = { "tdp_spte_changed", "TDP MMU SPTE changes", NULL, "zapped", P_TDP_SPTE },
	[SB_C_SET_SPTE] = { "set_spte", "SPTEs installed", NULL, NULL, P_SET_SPTE },
	[SB_C_SPLIT_HUGE] = { "split_huge_page", "KVM huge SPTEs split", NULL, NULL, P_SPLIT_HUGE },
	[SB_C_TLB_TASK_SWITCH] = { "tlb_task_switch", "host TLB flushes on task switch", "pages", "full",
				   P_TLB_FLUSH },
	[SB_C_TLB_REMOTE] = { "tlb_remote", "host TLB remote shootdowns received (IPI handler)", "pages", "full",
			      P_TLB_FLUSH },
	[SB_C_TLB_LOCAL] = { "tlb_local", "host TLB local shootdowns", "pages", "full", P_TLB_FLUSH },
	[SB_C_TLB_LOCAL_MM] = { "tlb_local_mm", "host TLB local mm shootdowns", "pages", "full", P_TLB_FLUSH },
	[SB_C_TLB_SEND_IPI] = { "tlb_send_ipi", "host TLB remote shootdowns sent (initiator)", "pages", "full",
				P_TLB_FLUSH },
	[SB_C_TLB_WRONG_CPU] = { "tlb_wrong_cpu", "host TLB remote flush on a CPU that left the mm", "pages",
				 "full", P_TLB_FLUSH },
	[SB_C_KVM_EXIT] = { "kvm_exit", "VM exits (KVM's exits stat counts the same)", NULL, NULL, P_KVM_EXIT },
	[SB_C_INJ_VIRQ] = { "inj_virq", "interrupts KVM injected (KVM's irq_injections stat counts the same)", NULL,
			    "reinjected", P_INJ_VIRQ },
	[SB_C_EMULATE_INSN] = { "emulate_insn",
				"instructions KVM emulated (KVM's insn_emulation + insn_emulation_fail stats)", NULL,
				"failed", P_EMULATE_INSN },
	[SB_C_MN_INVALIDATE] = { "mn_invalidate", "KVM MMU-notifier invalidate_range_start calls for the target VM",
				 "pages", NULL, P_MN_INVALIDATE },
	[SB_C_MN_INVALIDATE_END] = { "mn_invalidate_end",
				     "KVM MMU-notifier invalidate_range_end calls for the target VM", NULL, NULL,
				     P_MN_INVALIDATE_END },
	[SB_C_KVM_FLUSH] = { "kvm_remote_flush", "KVM remote TLB flushes for the target VM", NULL, NULL,
			     P_KVM_FLUSH },
	[SB_C_KVM_FLUSH_RANGE] = { "kvm_remote_flush_range", "KVM ranged remote TLB flush requests for the target VM",
				   "pages", NULL, P_KVM_FLUSH_RANGE },
	[SB_C_CLEAR_DIRTY_LOG] = { "clear_dirty_log", "KVM_CLEAR_DIRTY_LOG calls of the target VM (kvm_clear_dirty_log_protect)",
				   NULL, "ns", P_CLEAR_DIRTY_LOG },
	[SB_C_GET_DIRTY_LOG] = { "get_dirty_log", "KVM_GET_DIRTY_LOG calls of the target VM (kvm_get_dirty_log_protect)",
				 NULL, "ns", P_GET_DIRTY_LOG },
};

/*
 * Kernel functions that decide a cause when seen on a stack; the outermost
 * match wins. Only consulted when the context (kernel thread kind,
 * migration marker, PF_MEMALLOC, syscall) did not decide.
 */
static const struct {
	const char *function;
	enum sb_cause cause;
} rule_defs[] = {
	{ "mwriteprotect_range", SB_CAUSE_UFFD_WP },
	{ "uffd_wp_range", SB_CAUSE_UFFD_WP },
	{ "userfaultfd_clear_vma", SB_CAUSE_UFFD_WP },
	{ "userfaultfd_release", SB_CAUSE_UFFD_WP },
	{ "userfaultfd_unregister", SB_CAUSE_UFFD_WP },
	{ "task_numa_work", SB_CAUSE_NUMA_HINTING },
	{ "change_prot_numa", SB_CAUSE_NUMA_HINTING },
	{ "migrate_pages", SB_CAUSE_MIGRATION },
	{ "migrate_misplaced_folio", SB_CAUSE_MIGRATION },
	{ "compact_zone", SB_CAUSE_MIGRATION },
	{ "shrink_node", SB_CAUSE_RECLAIM },
	{ "shrink_folio_list", SB_CAUSE_RECLAIM },
	{ "folio_referenced", SB_CAUSE_RECLAIM },
	{ "do_vmi_munmap", SB_CAUSE_MUNMAP_MADVISE },
	{ "vms_complete_munmap_vmas", SB_CAUSE_MUNMAP_MADVISE },
	{ "do_madvise", SB_CAUSE_MUNMAP_MADVISE },
	{ "madvise_do_behavior", SB_CAUSE_MUNMAP_MADVISE },
	{ "exit_mmap", SB_CAUSE_MUNMAP_MADVISE },
	{ "unmap_mapping_range", SB_CAUSE_MUNMAP_MADVISE },
	{ "do_mremap", SB_CAUSE_MUNMAP_MADVISE },
	{ "do_mprotect_pkey", SB_CAUSE_MPROTECT },
	{ "mprotect_fixup", SB_CAUSE_MPROTECT },
	{ "khugepaged", SB_CAUSE_THP },
	{ "collapse_huge_page", SB_CAUSE_THP },
	{ "__split_huge_pmd", SB_CAUSE_THP },
	{ "split_huge_page_to_list_to_order", SB_CAUSE_THP },
	{ "ksm_scan_thread", SB_CAUSE_KSM },
	{ "ksm_do_scan", SB_CAUSE_KSM },
	{ "try_to_merge_one_page", SB_CAUSE_KSM },
	{ "break_ksm", SB_CAUSE_KSM },
	{ "unmerge_ksm_pages", SB_CAUSE_KSM },
};
#define NRULES ARRAY_SIZE(rule_defs)

/* Syscalls whose invalidations have one cause. */
static const struct {
	int nr;
	enum sb_cause cause;
} syscall_defs[] = {
	{ SYS_mprotect, SB_CAUSE_MPROTECT },
	{ SYS_pkey_mprotect, SB_CAUSE_MPROTECT },
	{ SYS_munmap, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_mremap, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_brk, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_mmap, SB_CAUSE_MUNMAP_MADVISE }, /* MAP_FIXED over a mapping unmaps it */
	{ SYS_remap_file_pages, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_shmdt, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_fallocate, SB_CAUSE_MUNMAP_MADVISE }, /* hole punch in a mapped memfd */
	{ SYS_ftruncate, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_truncate, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_exit, SB_CAUSE_MUNMAP_MADVISE },       /* address space teardown */
	{ SYS_exit_group, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_process_mrelease, SB_CAUSE_MUNMAP_MADVISE },
	{ SYS_mbind, SB_CAUSE_MIGRATION },
	{ SYS_migrate_pages, SB_CAUSE_MIGRATION },
	{ SYS_move_pages, SB_CAUSE_MIGRATION },
};

/* ioctls whose invalidations and flushes have one cause */
static const struct {
	__u32 cmd;
	enum sb_cause cause;
} ioctl_defs[] = {
	{ UFFDIO_WRITEPROTECT, SB_CAUSE_UFFD_WP },
	{ UFFDIO_UNREGISTER, SB_CAUSE_UFFD_WP },
	/* dirty tracking: write-protecting what was harvested, and the remote flush after it */
	{ KVM_GET_DIRTY_LOG, SB_CAUSE_DIRTY_LOG },
	{ KVM_CLEAR_DIRTY_LOG, SB_CAUSE_DIRTY_LOG },
	{ KVM_RESET_DIRTY_RINGS, SB_CAUSE_DIRTY_LOG },
};

/* madvise() advice with a cause of its own; every other advice counts as munmap/madvise. */
static const struct {
	int advice;
	enum sb_cause cause;
} madvise_defs[] = {
	{ MADV_COLLAPSE, SB_CAUSE_THP },
	{ MADV_HUGEPAGE, SB_CAUSE_THP },
	{ MADV_NOHUGEPAGE, SB_CAUSE_THP },
	{ MADV_PAGEOUT, SB_CAUSE_RECLAIM },
	{ MADV_COLD, SB_CAUSE_RECLAIM },
	{ MADV_MERGEABLE, SB_CAUSE_KSM },
	{ MADV_UNMERGEABLE, SB_CAUSE_KSM },
};

static const char *const backend_names[SB_BACKEND_MAX] = {
	[SB_BACKEND_NONE] = "none",
	[SB_BACKEND_FENTRY] = "fentry",
	[SB_BACKEND_TP_BTF] = "tp_btf",
	[SB_BACKEND_RAW_TP] = "raw_tp",
	[SB_BACKEND_TRACEPOINT] = "tracepoint",
};

static const char *const prog_prefix[SB_BACKEND_MAX] = {
	[SB_BACKEND_FENTRY] = "fentry_",
	[SB_BACKEND_TP_BTF] = "tpbtf_",
	[SB_BACKEND_RAW_TP] = "rawtp_",
	[SB_BACKEND_TRACEPOINT] = "tp_",
};

static const char *const cause_names[SB_CAUSE_MAX] = {
	[SB_CAUSE_UFFD_WP] = "uffd-wp",
	[SB_CAUSE_NUMA_HINTING] = "numa-hinting",
	[SB_CAUSE_MIGRATION] = "migration",
	[SB_CAUSE_RECLAIM] = "reclaim",
	[SB_CAUSE_MUNMAP_MADVISE] = "munmap/madvise",
	[SB_CAUSE_MPROTECT] = "mprotect",
	[SB_CAUSE_THP] = "thp",
	[SB_CAUSE_KSM] = "ksm",
	[SB_CAUSE_DIRTY_LOG] = "dirty-log",
	[SB_CAUSE_OTHER] = "other",
};

static const char *const ctx_names[SB_CTX_MAX] = {
	[SB_CTX_TARGET] = "target",
	[SB_CTX_KTHREAD] = "kthread",
	[SB_CTX_OTHER] = "other",
};

static const char *const attr_names[SB_ATTR_MAX] = {
	[SB_ATTR_UNMAP] = "unmap_hva",
	[SB_ATTR_TLB_SHOOTDOWN] = "tlb_send_ipi",
	[SB_ATTR_MN_INVALIDATE] = "mn_invalidate",
	[SB_ATTR_KVM_FLUSH] = "kvm_remote_flush",
};

const char *sb_backend_name(enum sb_backend b)
{
	return (unsigned)b < SB_BACKEND_MAX ? backend_names[b] : "?";
}

const char *sb_counter_name(enum sb_counter c)
{
	return (unsigned)c < SB_C_MAX ? counter_defs[c].name : "?";
}

const char *sb_cause_name(enum sb_cause c)
{
	return (unsigned)c < SB_CAUSE_MAX ? cause_names[c] : "?";
}

const char *sb_ctx_name(enum sb_ctx c)
{
	return (unsigned)c < SB_CTX_MAX ? ctx_names[c] : "?";
}

const char *sb_attr_name(enum sb_attr a)
{
	return (unsigned)a < SB_ATTR_MAX ? attr_names[a] : "?";
}

int sb_backend_mask_parse(const char *s, unsigned int *mask, struct sb_error *err)
{
	unsigned int m = 0;
	const char *p = s;

	while (*p) {
		size_t len = strcspn(p, ",");
		bool found = false;

		for (int b = SB_BACKEND_FENTRY; b < SB_BACKEND_MAX; b++)
			if (strlen(backend_names[b]) == len && !strncmp(p, backend_names[b], len)) {
				m |= SB_BACKEND_BIT(b);
				found = true;
			}
		if (!found)
			return sb_error_set(err, -EINVAL,
					    "unknown backend '%.*s' in '%s': use a comma-separated list of fentry, "
					    "tp_btf, raw_tp, tracepoint",
					    (int)len, p, s);
		p += len;
		if (*p == ',')
			p++;
	}
	if (!m)
		return sb_error_set(err, -EINVAL, "empty backend list '%s': name at least one of fentry, tp_btf, "
				    "raw_tp, tracepoint", s);
	*mask = m;
	return 0;
}

void sb_probe_options_init(struct sb_probe_options *o)
{
	*o = (struct sb_probe_options){
		.backends = SB_BACKENDS_ALL,
		.attribution = true,
		.decision_cache = true,
		.kfuncs = true,
		.stack_sample_every = SB_PROBE_DEFAULT_SAMPLE_EVERY,
		.max_stacks = SB_PROBE_DEFAULT_MAX_STACKS,
		.exit_counters = true,
		.emulation_counter = false,
		.test_counter = SB_C_MAX,
	};
}

/* ---- state ---- */

struct probe_state {
	struct sb_probe_info info;
	char label[160];
	char category[64];
	char name[96];
	unsigned long long tp_id;     /* classic tracepoint id */
	unsigned int excluded;        /* backends that failed to load for this probe */
	bool kfuncs_failed;           /* its "k" program failed to load: the plain one is used */
	bool variant_failed;          /* its program for these options failed to load: the general one is used */
	struct bpf_program *prog;
	struct bpf_link *link;
	struct bpf_program *exit_prog; /* timed probes: fexit_<name> */
	struct bpf_link *exit_link;
};

struct sb_probes {
	pid_t tgid;
	char comm[32];
	struct sb_probe_options opts;
	struct btf *vmlinux;
	struct kernel_btf *kbtf; /* lookups by name while choosing backends; freed once loaded */
	struct sb_probes_bpf *skel;
	struct probe_state probes[P_MAX];
	struct sb_counter_info counters[SB_C_MAX];
	struct sb_rule_info rules[NRULES];
	char mn_event_names[SB_MN_EVENTS][48];
	char mn_flag_names[SB_MN_FLAG_BITS][48];
	__s32 ret_pf_fixed;
	int ncpus;               /* possible CPUs: the counters' slots */
	const unsigned char *slots; /* the counters map, mapped (counts_map()) */
	size_t slot_size, slots_len;
	struct sb_rule rule_table[SB_MAX_RULES]; /* sorted, for the BPF side */
	size_t nr_rule_table;
	struct ksyms ksyms;
	bool ksyms_loaded;
	bool attached;
	bool kfuncs; /* the kernel has bpf_rdonly_cast: the "k" programs (bpf/probes.bpf.c) can load */
};

/* ---- libbpf log capture (to tell which program failed to load) ---- */

#define LOG_CAPTURE_MAX 65536
static char *log_capture;
static size_t log_capture_len;

/*
 * One message whole: a program's verifier log comes as one (between
 * libbpf's BEGIN and END PROG LOAD LOG lines), its complaint near its end,
 * so a message longer than half the capture keeps its tail.
 */
static int log_capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	_cleanup_free_ char *msg = NULL;
	const char *m;
	va_list aq;
	size_t len;
	int n;

	if (level == LIBBPF_DEBUG || !log_capture)
		return 0;
	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n <= 0 || !(msg = malloc((size_t)n + 1)))
		return 0;
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	m = msg;
	len = (size_t)n;
	if (len > LOG_CAPTURE_MAX / 2) {
		m += len - LOG_CAPTURE_MAX / 2;
		len = LOG_CAPTURE_MAX / 2;
	}
	if (log_capture_len + len + 1 > LOG_CAPTURE_MAX) {
		/* keep the tail: the failing program is named last */
		size_t need = log_capture_len + len + 1 - LOG_CAPTURE_MAX, drop = log_capture_len / 2;

		if (drop < need)
			drop = need; /* at most log_capture_len: len < LOG_CAPTURE_MAX */

		memmove(log_capture, log_capture + drop, log_capture_len - drop);
		log_capture_len -= drop;
	}
	memcpy(log_capture + log_capture_len, m, len);
	log_capture_len += len;
	log_capture[log_capture_len] = '\0';
	return 0;
}

/*
 * The program libbpf last named in a failure line ("prog 'x': ... failed
 * ..."), and what went wrong: the verifier's complaint (the line before
 * its "processed N insns" summary) when there is one, else libbpf's line.
 */
static bool log_failed_prog(char *name, size_t name_size, char *why, size_t why_size)
{
	char *p = log_capture, *prev = NULL, *verifier = NULL;
	size_t prev_len = 0, verifier_len = 0;
	bool found = false;

	if (!p)
		return false;
	while (p && *p) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *q = memmem(p, len, "prog '", 6);

		if (len > 10 && !strncmp(p, "processed ", 10) && prev) {
			verifier = prev;
			verifier_len = prev_len;
		}
		if (q && (memmem(p, len, "fail", 4) || memmem(p, len, "error", 5))) {
			char *s = q + 6, *e = memchr(s, '\'', len - (size_t)(s - p));

			if (e && (size_t)(e - s) < name_size) {
				memcpy(name, s, (size_t)(e - s));
				name[e - s] = '\0';
				found = true;
				if (verifier)
					snprintf(why, why_size, "verifier: %.*s", (int)verifier_len, verifier);
				else
					snprintf(why, why_size, "%.*s", (int)len, p);
			}
		}
		prev = p;
		prev_len = len;
		p = nl ? nl + 1 : NULL;
	}
	return found;
}

/* ---- target ---- */

static int read_status(pid_t pid, pid_t *tgid, char *comm, size_t comm_size, struct sb_error *err)
{
	char path[64], line[256];
	_cleanup_fclose_ FILE *f = NULL;
	bool have_tgid = false;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return sb_error_set(err, -ESRCH, "no process with pid %d: pass the pid of a running QEMU",
					    (int)pid);
		return sb_error_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:", 5)) {
			char *s = line + 5;

			s += strspn(s, " \t");
			s[strcspn(s, "\n")] = '\0';
			snprintf(comm, comm_size, "%s", s);
		} else if (!strncmp(line, "Tgid:", 5)) {
			*tgid = (pid_t)strtol(line + 5, NULL, 10);
			have_tgid = true;
		}
	}
	if (!have_tgid || *tgid <= 0)
		return sb_error_set(err, -EIO, "%s has no Tgid line", path);
	return 0;
}

/* ---- BTF-derived names and constants ---- */

static void btf_names(struct sb_probes *p)
{
	for (unsigned int i = 0; i < SB_MN_EVENTS; i++)
		snprintf(p->mn_event_names[i], sizeof(p->mn_event_names[i]), "event%u", i);
	for (unsigned int i = 0; i < SB_MN_FLAG_BITS; i++)
		snprintf(p->mn_flag_names[i], sizeof(p->mn_flag_names[i]), "bit%u", i);
	/* mainline defines the flag with #define, which BTF does not keep */
	snprintf(p->mn_flag_names[0], sizeof(p->mn_flag_names[0]), "MMU_NOTIFIER_RANGE_BLOCKABLE");
	p->ret_pf_fixed = 5;
	if (!p->vmlinux)
		return;

	__u32 n = btf__type_cnt(p->vmlinux);
	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(p->vmlinux, id);
		const char *tname;

		if (!btf_is_enum(t))
			continue;
		tname = btf__name_by_offset(p->vmlinux, t->name_off);
		const struct btf_enum *e = btf_enum(t);
		for (__u16 k = 0; k < btf_vlen(t); k++, e++) {
			const char *en = btf__name_by_offset(p->vmlinux, e->name_off);

			if (!en)
				continue;
			if (tname && !strcmp(tname, "mmu_notifier_event") && e->val >= 0 && e->val < SB_MN_EVENTS)
				snprintf(p->mn_event_names[e->val], sizeof(p->mn_event_names[0]), "%s", en);
			else if (!strncmp(en, "MMU_NOTIFIER_RANGE_", 19) && e->val > 0 &&
				 !(e->val & (e->val - 1)) && __builtin_ctz((unsigned)e->val) < SB_MN_FLAG_BITS)
				/* a flag a (patched) kernel declares in an enum */
				snprintf(p->mn_flag_names[__builtin_ctz((unsigned)e->val)], sizeof(p->mn_flag_names[0]),
					 "%s", en);
			else if (!strcmp(en, "RET_PF_FIXED"))
				p->ret_pf_fixed = e->val;
		}
	}
}

/* ---- backend selection ---- */

static void reason_add(struct probe_state *ps, const char *fmt, ...) _printf_(2, 3);
static void reason_add(struct probe_state *ps, const char *fmt, ...)
{
	size_t len = strlen(ps->info.reason);
	va_list ap;

	if (len + 3 >= sizeof(ps->info.reason))
		return;
	if (len) {
		memcpy(ps->info.reason + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(ps->info.reason + len, sizeof(ps->info.reason) - len, fmt, ap);
	va_end(ap);
}

static const enum sb_backend tracepoint_order[] = { SB_BACKEND_TP_BTF, SB_BACKEND_RAW_TP, SB_BACKEND_TRACEPOINT };

/*
 * Where every remote flush request passes, first found first (docs/probes.md):
 * KVM_REQ_TLB_FLUSH made of all vCPUs, through
 * kvm_make_all_cpus_request_except() on 6.1 (kvm_make_all_cpus_request()
 * tail-calls it), kvm_make_all_cpus_request() from 6.7 on; then
 * kvm_flush_remote_tlbs() itself, which counts only its out-of-line calls
 * where a build inlined it into the MMU notifier's.
 */
static const char *const flush_targets[] = { "kvm_make_all_cpus_request_except", "kvm_make_all_cpus_request",
					     "kvm_flush_remote_tlbs" };

/* The BPF program of P_KVM_FLUSH attached to ps->name: the request's, filtered, or kvm_flush_remote_tlbs' */
static const char *flush_program(const struct probe_state *ps)
{
	return strncmp(ps->name, "kvm_make_all_cpus_request", 25) ? "kvm_flush_remote_tlbs" : "kvm_flush_request";
}

/* P_KVM_FLUSH's function: the first of flush_targets the kernel attaches fentry to, or the test's. */
static int choose_flush_target(struct sb_probes *p, struct probe_state *ps, struct sb_error *e)
{
	int r = -ENOENT;

	if (p->opts.test_flush_function) {
		snprintf(ps->name, sizeof(ps->name), "%s", p->opts.test_flush_function);
		r = feature_fentry(p->kbtf, ps->name, ps->info.btf, sizeof(ps->info.btf), e);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(flush_targets) && r < 0; i++) {
			sb_error_clear(e);
			snprintf(ps->name, sizeof(ps->name), "%s", flush_targets[i]);
			r = feature_fentry(p->kbtf, ps->name, ps->info.btf, sizeof(ps->info.btf), e);
		}
	}
	if (strcmp(flush_program(ps), "kvm_flush_request"))
		snprintf(ps->label, sizeof(ps->label), "fentry:%.90s", ps->name);
	else
		snprintf(ps->label, sizeof(ps->label), "fentry:%.90s(KVM_REQ_TLB_FLUSH)", ps->name);
	return r;
}

/* Pick the first backend that the options allow, that has not failed to load, and that the kernel accepts. */
static void choose_backend(struct sb_probes *p, struct probe_state *ps, const struct probe_def *def)
{
	struct sb_error e = { 0 };
	int r;

	ps->info.backend = SB_BACKEND_NONE;
	ps->info.available = false;
	if (!def->category) {
		if (!(p->opts.backends & SB_BACKEND_BIT(SB_BACKEND_FENTRY))) {
			reason_add(ps, "fentry: not allowed by the backend option");
			return;
		}
		if (ps->excluded & SB_BACKEND_BIT(SB_BACKEND_FENTRY))
			return;
		if (ps == &p->probes[P_KVM_FLUSH])
			r = choose_flush_target(p, ps, &e);
		else
			r = feature_fentry(p->kbtf, ps->name, ps->info.btf, sizeof(ps->info.btf), &e);
		if (r < 0) {
			reason_add(ps, "fentry: %s", e.msg);
			return;
		}
		ps->info.backend = SB_BACKEND_FENTRY;
		ps->info.available = true;
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(tracepoint_order); i++) {
		enum sb_backend b = tracepoint_order[i];

		if (ps->excluded & SB_BACKEND_BIT(b))
			continue;
		if (!(p->opts.backends & SB_BACKEND_BIT(b))) {
			reason_add(ps, "%s: not allowed by the backend option", backend_names[b]);
			continue;
		}
		sb_error_clear(&e);
		switch (b) {
		case SB_BACKEND_TP_BTF:
			r = feature_tp_btf(p->kbtf, ps->name, ps->info.btf, sizeof(ps->info.btf), &e);
			break;
		case SB_BACKEND_RAW_TP:
			r = feature_raw_tp(ps->name, &e);
			break;
		default:
			r = feature_tracepoint(ps->category, ps->name, &ps->tp_id, &e);
			break;
		}
		if (r < 0) {
			reason_add(ps, "%s: %s", backend_names[b], e.msg);
			continue;
		}
		if (b != SB_BACKEND_TP_BTF)
			ps->info.btf[0] = '\0';
		ps->info.backend = b;
		ps->info.available = true;
		return;
	}
}

/* The "k" programs: the same as the plain ones, reading pt_regs with no helper call (bpf/probes.bpf.c). */
static const char *const kfunc_prefix[SB_BACKEND_MAX] = {
	[SB_BACKEND_FENTRY] = "fentryk_",
	[SB_BACKEND_TP_BTF] = "tpbtfk_",
};

/*
 * kvm_unmap_hva_range's tp_btf programs made for one set of options
 * (bpf/probes.bpf.c), which test none of them at run time: "d" the
 * defaults, "c" counting only; NULL: none fits, the program that reads
 * the options is used.
 */
static const char *unmap_variant(const struct sb_probe_options *o)
{
	if (o->count_other)
		return NULL;
	if (!o->attribution)
		return "c";
	if (o->decision_cache && o->stack_sample_every == SB_DEFAULT_SAMPLE_EVERY)
		return "d";
	return NULL;
}

/* Whether prog is one of those programs (tpbtfc_*, tpbtfck_*, tpbtfd_*, tpbtfdk_*). */
static bool prog_is_unmap_variant(const char *prog)
{
	return !strncmp(prog, "tpbtfc", 6) || !strncmp(prog, "tpbtfd", 6);
}

static struct bpf_program *find_prog(struct sb_probes *p, struct sb_probes_bpf *skel, struct probe_state *ps,
				     enum sb_backend b, const char *probe_name)
{
	struct bpf_program *prog = NULL;
	const char *variant = unmap_variant(&p->opts);
	char name[160];

	if (ps == &p->probes[P_UNMAP_HVA] && b == SB_BACKEND_TP_BTF && variant && !ps->variant_failed) {
		snprintf(name, sizeof(name), "tpbtf%s%s_%s", variant, p->kfuncs && !ps->kfuncs_failed ? "k" : "",
			 probe_name);
		prog = bpf_object__find_program_by_name(skel->obj, name);
		if (prog)
			return prog;
	}
	if (p->kfuncs && !ps->kfuncs_failed && kfunc_prefix[b]) {
		snprintf(name, sizeof(name), "%s%s", kfunc_prefix[b], probe_name);
		prog = bpf_object__find_program_by_name(skel->obj, name);
	}
	if (!prog) {
		snprintf(name, sizeof(name), "%s%s", prog_prefix[b], probe_name);
		prog = bpf_object__find_program_by_name(skel->obj, name);
	}
	return prog;
}

/* up to 4 symbols of each rule's function, as ksyms_find_each() finds them */
struct rule_matches {
	const struct ksym *found[NRULES][4];
	size_t n[NRULES];
};

static void rule_match(void *userdata, size_t rule, const struct ksym *sym)
{
	struct rule_matches *m = userdata;

	if (m->n[rule] < ARRAY_SIZE(m->found[rule]))
		m->found[rule][m->n[rule]++] = sym;
}

/*
 * Resolve the stack rules' functions from /proc/kallsyms, sorted by address
 * (a static function may appear more than once). The symbols stay loaded:
 * the stacks are symbolized from them.
 */
static int rules_resolve(struct sb_probes *p, struct sb_error *err)
{
	const char *names[NRULES];
	struct rule_matches m = { 0 };
	struct sb_rule *tmp = p->rule_table;
	size_t nr = 0;
	int r;

	for (size_t i = 0; i < NRULES; i++) {
		p->rules[i].function = rule_defs[i].function;
		p->rules[i].cause = rule_defs[i].cause;
		p->rules[i].resolved = false;
		names[i] = rule_defs[i].function;
	}
	if (!p->ksyms_loaded) {
		r = ksyms_load(&p->ksyms, NULL, err);
		if (r < 0)
			return sb_error_prefix(err, "cannot resolve the classifier's stack rules");
		p->ksyms_loaded = true;
	}
	if (ksyms_find_each(&p->ksyms, names, NRULES, rule_match, &m) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < NRULES; i++)
		for (size_t k = 0; k < m.n[i] && nr < SB_MAX_RULES; k++) {
			tmp[nr].start = m.found[i][k]->addr;
			tmp[nr].end = m.found[i][k]->end;
			tmp[nr].cause = rule_defs[i].cause;
			tmp[nr].pad = 0;
			nr++;
			p->rules[i].resolved = true;
		}
	/* sorted by start for the BPF side's binary search (insertion sort: nr <= 64) */
	for (size_t i = 1; i < nr; i++) {
		struct sb_rule x = tmp[i];
		size_t j = i;

		while (j > 0 && tmp[j - 1].start > x.start) {
			tmp[j] = tmp[j - 1];
			j--;
		}
		tmp[j] = x;
	}
	p->nr_rule_table = nr;
	return 0;
}

static void rodata_setup(struct sb_probes *p, struct sb_probes_bpf__rodata *ro)
{
	ro->attribution = p->opts.attribution;
	ro->decision_cache = p->opts.decision_cache;
	ro->count_other = p->opts.count_other;
	ro->sample_every = p->opts.stack_sample_every;
	if (p->opts.stack_sample_every > 1 && !(p->opts.stack_sample_every & (p->opts.stack_sample_every - 1)))
		ro->sample_mask = p->opts.stack_sample_every - 1;
	ro->ret_pf_fixed = p->ret_pf_fixed;
	for (size_t i = 0; i < ARRAY_SIZE(syscall_defs); i++)
		if (syscall_defs[i].nr >= 0 && syscall_defs[i].nr < SB_NR_SYSCALLS)
			ro->syscall_cause[syscall_defs[i].nr] = (__u8)(syscall_defs[i].cause + 1);
	ro->syscall_cause[SYS_ioctl] = SB_SYSCALL_IOCTL;
	ro->syscall_cause[SYS_madvise] = SB_SYSCALL_MADVISE;
	ro->syscall_cause[SYS_process_madvise] = SB_SYSCALL_PROCESS_MADVISE;
	for (size_t i = 0; i < ARRAY_SIZE(madvise_defs); i++)
		if (madvise_defs[i].advice >= 0 && madvise_defs[i].advice < SB_NR_MADVISE)
			ro->madvise_cause[madvise_defs[i].advice] = (__u8)(madvise_defs[i].cause + 1);
	_Static_assert(ARRAY_SIZE(ioctl_defs) <= SB_MAX_IOCTL_CMDS, "SB_MAX_IOCTL_CMDS is too small");
	for (size_t i = 0; i < ARRAY_SIZE(ioctl_defs); i++) {
		ro->ioctl_cmd[i] = ioctl_defs[i].cmd;
		ro->ioctl_cause[i] = (__u8)ioctl_defs[i].cause;
	}
	ro->nr_ioctl_cmds = ARRAY_SIZE(ioctl_defs);
	for (size_t i = 0; i < p->nr_rule_table; i++) {
		ro->rules[i].start = p->rule_table[i].start;
		ro->rules[i].end = p->rule_table[i].end;
		ro->rules[i].cause = p->rule_table[i].cause;
	}
}

/*
 * Turn on the program of each available probe (and the fexit of a timed
 * one) for the backend chosen; a probe whose program the object lacks
 * becomes unavailable, saying so. The caller destroys skel on an error.
 */
static int enable_programs(struct sb_probes *p, struct sb_probes_bpf *skel, struct sb_error *err)
{
	int r;

	for (int i = 0; i < P_MAX; i++) {
		struct probe_state *ps = &p->probes[i];

		ps->prog = ps->exit_prog = NULL;
		if (!ps->info.available)
			continue;
		ps->prog = find_prog(p, skel, ps, ps->info.backend,
				     i == P_KVM_FLUSH ? flush_program(ps) : probe_defs[i].name);
		if (!ps->prog) {
			ps->info.available = false;
			reason_add(ps, "%s: no such program in the BPF object", backend_names[ps->info.backend]);
			ps->info.backend = SB_BACKEND_NONE;
			continue;
		}
		bpf_program__set_autoload(ps->prog, true);
		if (probe_defs[i].timed) {
			char name[160];
			snprintf(name, sizeof(name), "fexit_%s", probe_defs[i].name);
			ps->exit_prog = bpf_object__find_program_by_name(skel->obj, name);
			if (!ps->exit_prog) {
				bpf_program__set_autoload(ps->prog, false);
				ps->prog = NULL;
				ps->info.available = false;
				reason_add(ps, "fexit: no such program in the BPF object");
				ps->info.backend = SB_BACKEND_NONE;
				continue;
			}
			bpf_program__set_autoload(ps->exit_prog, true);
		}
		if ((ps->info.backend == SB_BACKEND_TP_BTF || ps->info.backend == SB_BACKEND_FENTRY) &&
		    strcmp(ps->name, probe_defs[i].name) &&
		    !(i == P_KVM_FLUSH && !strcmp(ps->name, "kvm_make_all_cpus_request"))) {
			r = bpf_program__set_attach_target(ps->prog, 0, ps->name);
			if (r < 0)
				return sb_error_set(err, r, "cannot retarget %s to %s", bpf_program__name(ps->prog),
						    ps->name);
		}
	}
	return 0;
}

/* Open the skeleton, enable the chosen programs, load. On a program's load failure name it in *failed. */
static int load_once(struct sb_probes *p, char *failed, size_t failed_size, char *failed_line, size_t line_size,
		     struct sb_error *err)
{
	struct sb_probes_bpf *skel;
	libbpf_print_fn_t old;
	int r;

	failed[0] = '\0';
	skel = sb_probes_bpf__open();
	if (!skel)
		return sb_error_set(err, -errno, "cannot open the BPF object: %s", strerror(errno));

	rodata_setup(p, skel->rodata);
	skel->bss->target_tgid = (__u32)p->tgid; /* the initial value; sb_probes_retarget() changes it live */
	skel->bss->nr_rules = (__u32)p->nr_rule_table; /* not rodata: see probes.bpf.c */
	r = bpf_map__set_max_entries(skel->maps.stacks, p->opts.max_stacks);
	if (r < 0) {
		sb_probes_bpf__destroy(skel);
		return sb_error_set(err, r, "cannot size the stack map: %s", strerror(-r));
	}
	r = bpf_map__set_max_entries(skel->maps.counts, (__u32)p->ncpus);
	if (r < 0) {
		sb_probes_bpf__destroy(skel);
		return sb_error_set(err, r, "cannot size the counters map: %s", strerror(-r));
	}
	r = enable_programs(p, skel, err);
	if (r < 0) {
		sb_probes_bpf__destroy(skel);
		return r;
	}

	log_capture = malloc(LOG_CAPTURE_MAX);
	log_capture_len = 0;
	if (log_capture)
		log_capture[0] = '\0';
	old = libbpf_set_print(log_capture_print);
	r = sb_probes_bpf__load(skel);
	libbpf_set_print(old);
	if (r < 0) {
		if (!log_failed_prog(failed, failed_size, failed_line, line_size))
			sb_error_set(err, r, "cannot load the BPF programs: %s%s%s", strerror(-r),
				     log_capture && log_capture_len ? "; libbpf said: " : "",
				     log_capture ? log_capture : "");
		free(log_capture);
		log_capture = NULL;
		sb_probes_bpf__destroy(skel);
		for (int i = 0; i < P_MAX; i++)
			p->probes[i].prog = p->probes[i].exit_prog = NULL;
		return r;
	}
	free(log_capture);
	log_capture = NULL;
	p->skel = skel;
	return 0;
}

/* The probe whose program is prefix + its name, or -1. */
static int probe_of_prog(const char *prog, const char *prefix)
{
	size_t len = prefix ? strlen(prefix) : 0;

	if (!len || strncmp(prog, prefix, len))
		return -1;
	for (int i = 0; i < P_MAX; i++)
		if (!strcmp(prog + len, probe_defs[i].name))
			return i;
	return -1;
}

/* Map a program name back to its probe and backend; *kfuncs: it is a "k" program. */
static bool prog_to_probe(const char *prog, int *probe, enum sb_backend *backend, bool *kfuncs)
{
	int i = probe_of_prog(prog, "fexit_");

	/* a timed probe's exit half fails with its fentry backend */
	if (i >= 0 && probe_defs[i].timed) {
		*probe = i;
		*backend = SB_BACKEND_FENTRY;
		*kfuncs = false;
		return true;
	}
	for (int b = SB_BACKEND_FENTRY; b < SB_BACKEND_MAX; b++)
		for (int k = 0; k < 2; k++) {
			i = probe_of_prog(prog, k ? kfunc_prefix[b] : prog_prefix[b]);
			if (i >= 0) {
				*probe = i;
				*backend = (enum sb_backend)b;
				*kfuncs = k;
				return true;
			}
		}
	return false;
}

static int parse_test_tracepoint(const struct sb_probe_options *o, struct sb_error *err)
{
	const char *colon;

	if (o->test_flush_function &&
	    (!o->test_flush_function[0] || strlen(o->test_flush_function) >= 90 ||
	     strspn(o->test_flush_function, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(o->test_flush_function)))
		return sb_error_set(err, -EINVAL, "test flush function '%s': name a kernel function (letters, digits, _)",
				    o->test_flush_function);
	if (!o->test_tracepoint)
		return 0;
	colon = strchr(o->test_tracepoint, ':');
	if (!colon || colon == o->test_tracepoint || !colon[1] || strlen(o->test_tracepoint) >= 96 ||
	    strchr(o->test_tracepoint, '/'))
		return sb_error_set(err, -EINVAL, "test tracepoint '%s': write it as category:name",
				    o->test_tracepoint);
	if ((unsigned)o->test_counter >= SB_C_MAX || counter_defs[o->test_counter].probe == P_MN_INVALIDATE ||
	    counter_defs[o->test_counter].probe == P_MN_INVALIDATE_END ||
	    counter_defs[o->test_counter].probe == P_KVM_FLUSH ||
	    counter_defs[o->test_counter].probe == P_KVM_FLUSH_RANGE ||
	    counter_defs[o->test_counter].probe == P_CLEAR_DIRTY_LOG ||
	    counter_defs[o->test_counter].probe == P_GET_DIRTY_LOG)
		return sb_error_set(err, -EINVAL, "test tracepoint '%s': test_counter must name a tracepoint counter",
				    o->test_tracepoint);
	return 0;
}

/* The target: a live process that holds a KVM VM; 0, -ESRCH, -ENODEV... */
static int check_target(struct sb_probes *p, pid_t pid, struct sb_error *err)
{
	int r;

	r = read_status(pid, &p->tgid, p->comm, sizeof(p->comm), err);
	if (r < 0)
		return r;
	r = proc_find_fd(p->tgid, "anon_inode:kvm-vm", err);
	if (r < 0 && r != -ENOENT)
		return r;
	if (r == -ENOENT)
		return sb_error_set(err, -ENODEV,
				    "process %d (%s) holds no KVM VM (no anon_inode:kvm-vm among its fds): pass the "
				    "pid of a QEMU running with -accel kvm",
				    (int)p->tgid, p->comm);
	return 0;
}

/* Each probe's names and label, and its backend (or why it is off). */
static void probe_states_init(struct sb_probes *p)
{
	for (int i = 0; i < P_MAX; i++) {
		struct probe_state *ps = &p->probes[i];
		const struct probe_def *def = &probe_defs[i];

		snprintf(ps->name, sizeof(ps->name), "%s", def->name);
		if (def->category)
			snprintf(ps->category, sizeof(ps->category), "%s", def->category);
		if (p->opts.test_tracepoint && def->first >= 0 && counter_defs[p->opts.test_counter].probe == i) {
			const char *colon = strchr(p->opts.test_tracepoint, ':');

			snprintf(ps->category, sizeof(ps->category), "%.*s", (int)(colon - p->opts.test_tracepoint),
				 p->opts.test_tracepoint);
			snprintf(ps->name, sizeof(ps->name), "%s", colon + 1);
		}
		/* copies: gcc -fsanitize builds cannot tell sibling fields from the destination (-Wrestrict) */
		char category[sizeof(ps->category)], name[sizeof(ps->name)];
		memcpy(category, ps->category, sizeof(category));
		memcpy(name, ps->name, sizeof(name));
		if (def->category)
			snprintf(ps->label, sizeof(ps->label), "%s:%s", category, name);
		else
			snprintf(ps->label, sizeof(ps->label), "fentry:%s", name);
		ps->info.name = ps->label;
		ps->info.role = def->first >= 0 ? "counter" : "marker";
		if (def->gate == GATE_EXITS && !p->opts.exit_counters)
			reason_add(ps, "off: it fires on every VM exit; turn it on with the exit_counters option");
		else if (def->gate == GATE_ZAP_CAUSES && !p->opts.zap_causes)
			reason_add(ps, "off: it costs every invalidation a second program and two map operations; turn "
				       "it on with the zap_causes option (the numa-hinting scenario does)");
		else if (def->gate == GATE_ATTRIBUTION && !p->opts.attribution)
			reason_add(ps, "off: counting only; the notifier's event and flags and the cause's hand-over to "
				       "kvm:kvm_unmap_hva_range serve the attribution, and it costs every invalidation a "
				       "second program (kvm:kvm_unmap_hva_range counts the same invalidations)");
		else if (def->gate == GATE_EMULATION && !p->opts.emulation_counter)
			reason_add(ps, "off: it fires on every instruction KVM emulates (millions per second where "
				       "guests run under KVM's emulator), and KVM's insn_emulation and insn_emulation_fail "
				       "stats count the same events; turn it on with the emulation_counter option");
		else
			choose_backend(p, ps, def);
	}
}

/* Loads the programs; when one fails, drops its backend for that probe and retries. */
static int load_with_fallback(struct sb_probes *p, struct sb_error *err)
{
	int r;

	for (int attempt = 0;; attempt++) {
		char failed[160], line[512];
		int probe;
		enum sb_backend backend;
		bool any = false, kfuncs;

		for (int i = 0; i < P_MAX; i++)
			any |= p->probes[i].info.available;
		if (!any)
			return sb_error_set(err, -EOPNOTSUPP,
					    "no probe works on this kernel; %s: %s", p->probes[P_UNMAP_HVA].label,
					    p->probes[P_UNMAP_HVA].info.reason);
		sb_error_clear(err);
		r = load_once(p, failed, sizeof(failed), line, sizeof(line), err);
		if (r >= 0)
			break;
		if (failed[0] && prog_is_unmap_variant(failed) && !p->probes[P_UNMAP_HVA].variant_failed &&
		    attempt <= 4 * P_MAX) {
			/* the program that reads the options */
			p->probes[P_UNMAP_HVA].variant_failed = true;
			reason_add(&p->probes[P_UNMAP_HVA],
				   "tp_btf: the program made for these options failed to load (%s); the one that reads "
				   "the options is used",
				   line);
			continue;
		}
		if (!failed[0] || !prog_to_probe(failed, &probe, &backend, &kfuncs) || attempt > 4 * P_MAX)
			return r;
		struct probe_state *ps = &p->probes[probe];
		if (kfuncs) {
			/* the same backend, with bpf_task_pt_regs() */
			ps->kfuncs_failed = true;
			reason_add(ps, "%s: the program that reads pt_regs without a helper call failed to load (%s); "
				       "the one with bpf_task_pt_regs() is used",
				   backend_names[backend], line);
			continue;
		}
		ps->excluded |= SB_BACKEND_BIT(backend);
		reason_add(ps, "%s: the program failed to load (%s)", backend_names[backend], line);
		choose_backend(p, ps, &probe_defs[probe]);
	}
	return 0;
}

/*
 * Map the counters map (a slot per possible CPU, bpf/probes.bpf.c) into our
 * memory, read-only: sb_probes_read() then reads them with no system call.
 */
static int counts_map(struct sb_probes *p, struct sb_error *err)
{
	const struct bpf_map *m = p->skel->maps.counts;
	long page = sysconf(_SC_PAGESIZE);
	void *a;

	/* the kernel's stride: the value size rounded up to 8 bytes */
	p->slot_size = ((size_t)bpf_map__value_size(m) + 7) & ~(size_t)7;
	if (p->slot_size < sizeof(struct sb_counts))
		return sb_error_set(err, -EPROTO, "the counters map's values are %zu bytes, less than the %zu of struct "
					     "sb_counts: the BPF object and this program were built apart",
				    p->slot_size, sizeof(struct sb_counts));
	p->slots_len = (size_t)p->ncpus * p->slot_size;
	if (page > 0)
		p->slots_len = (p->slots_len + (size_t)page - 1) & ~((size_t)page - 1);
	a = mmap(NULL, p->slots_len, PROT_READ, MAP_SHARED, bpf_map__fd(m), 0);
	if (a == MAP_FAILED)
		return sb_error_set(err, -errno, "cannot map the counters map into memory: %s", strerror(errno));
	p->slots = a;
	return 0;
}

static void counters_init(struct sb_probes *p)
{
	for (int c = 0; c < SB_C_MAX; c++) {
		struct sb_counter_info *ci = &p->counters[c];

		ci->id = (enum sb_counter)c;
		ci->name = counter_defs[c].name;
		ci->description = counter_defs[c].description;
		ci->pages_label = counter_defs[c].pages_label;
		ci->detail_label = counter_defs[c].detail_label;
		ci->probe = &p->probes[counter_defs[c].probe].info;
		ci->available = ci->probe->available;
	}
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int sb_probes_check_privileges(struct sb_error *err)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data) < 0)
		return sb_error_set(err, -errno, "cannot read this process's capabilities: %s", strerror(errno));
#define HAS(c) (!!(data[(c) / 32].effective & (1u << ((c) % 32))))
	if (HAS(CAP_SYS_ADMIN) || (HAS(CAP_BPF) && HAS(CAP_PERFMON)))
		return 0;
#undef HAS
	return sb_error_set(err, -EPERM, "BPF probes need CAP_BPF and CAP_PERFMON (or root)");
}

int sb_probes_open(pid_t pid, const struct sb_probe_options *opts, struct sb_probes **ret, struct sb_error *err)
{
	_cleanup_sb_probes_ struct sb_probes *p = NULL;
	int r;

	if (pid <= 0)
		return sb_error_set(err, -EINVAL, "pid %d: pass the pid of a running QEMU (a positive number)",
				    (int)pid);
	p = calloc(1, sizeof(*p));
	if (!p)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (opts)
		p->opts = *opts;
	else
		sb_probe_options_init(&p->opts);
	if (!p->opts.backends)
		p->opts.backends = SB_BACKENDS_ALL;
	if (p->opts.max_stacks < 1 || p->opts.max_stacks > SB_PROBE_MAX_STACKS)
		return sb_error_set(err, -EINVAL, "max_stacks %u: choose 1 to %u", p->opts.max_stacks,
				    SB_PROBE_MAX_STACKS);
	r = parse_test_tracepoint(&p->opts, err);
	if (r < 0)
		return r;

	r = check_target(p, pid, err);
	if (r < 0)
		return r;

	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0)
		return sb_error_set(err, p->ncpus < 0 ? p->ncpus : -EIO, "cannot count the possible CPUs");

	p->vmlinux = btf__load_vmlinux_btf();
	if (!p->vmlinux)
		p->vmlinux = NULL; /* tp_btf and fentry report it per probe */
	p->kbtf = kernel_btf_new(p->vmlinux);
	if (!p->kbtf)
		return sb_error_set(err, -ENOMEM, "out of memory");
	p->kfuncs = p->opts.kfuncs && kernel_btf_find_vmlinux(p->kbtf, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;
	btf_names(p);
	if (p->opts.attribution) {
		r = rules_resolve(p, err);
		if (r < 0)
			return r;
	}

	probe_states_init(p);

	r = load_with_fallback(p, err);
	if (r < 0)
		return r;
	kernel_btf_free(TAKE_PTR(p->kbtf));
	r = counts_map(p, err);
	if (r < 0)
		return r;
	counters_init(p);
	*ret = TAKE_PTR(p);
	return 0;
}

int sb_probes_retarget(struct sb_probes *p, pid_t pid, struct sb_error *err)
{
	pid_t old_tgid = p->tgid;
	char old_comm[sizeof(p->comm)];
	int r;

	if (pid <= 0)
		return sb_error_set(err, -EINVAL, "pid %d: pass the pid of a running QEMU (a positive number)",
				    (int)pid);
	memcpy(old_comm, p->comm, sizeof(old_comm));
	r = check_target(p, pid, err);
	if (r < 0) {
		p->tgid = old_tgid;
		memcpy(p->comm, old_comm, sizeof(old_comm));
		return r;
	}
	/* the programs read it at each event; the counters go on, readers take deltas */
	__atomic_store_n(&p->skel->bss->target_tgid, (__u32)p->tgid, __ATOMIC_RELAXED);
	return 0;
}

static int attach_tracepoint(struct probe_state *ps, struct sb_error *err)
{
	struct perf_event_attr attr = { 0 };
	int pfd;

	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = ps->tp_id;
	attr.sample_period = 1;
	pfd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return sb_error_set(err, -errno, "perf_event_open failed: %s", strerror(errno));
	ps->link = bpf_program__attach_perf_event(ps->prog, pfd);
	if (!ps->link) {
		int r = -errno;

		close(pfd);
		return sb_error_set(err, r, "attaching to the perf event failed: %s", strerror(-r));
	}
	return 0;
}

/*
 * fentry attaching is not proof that the program runs: Debian 12's 6.12
 * (6.12.95) attaches fentry to kvm_mmu_notifier_invalidate_range_end and
 * reports success, yet ftrace never enables that call site, so the program
 * never runs (the function tracer on the same function, and fentry on its
 * neighbour _range_start, do). Its counter would read a silent 0, and the
 * zap-cause window would never close. So the fentry probes that a VM
 * without vCPUs can reach are tried once after attaching, on a VM of the
 * loader's own: one page unmapped (KVM_CREATE_VM registers KVM's notifier
 * on this process's memory) for the MMU-notifier pair, KVM_GET_DIRTY_LOG
 * and KVM_CLEAR_DIRTY_LOG on a dirty-logging memslot for the dirty-log
 * pair. A program that did not run is detached and reported unavailable
 * with what was seen. Where a trial cannot run (no /dev/kvm for this
 * process, say) its probes are trusted and their notes say so.
 * kvm_flush_remote_tlbs needs mapped guest memory, hence a running vCPU:
 * not tried.
 */
enum { SELFTEST_PAGES = 64 }; /* KVM_CLEAR_DIRTY_LOG works in 64-page units */
#define SELFTEST_BYTES (SELFTEST_PAGES * 4096ul)

/* What a trial needs made first, each including the ones before it. */
enum { NEED_VM, NEED_SLOT, NEED_CLEAR, NEED_MAX };

struct selftest {
	struct sb_probes *p;
	int vm;
	void *mem; /* the dirty-logging memslot's, or MAP_FAILED */
	/* per need: 0, or -errno of call (the trials that need it cannot run) */
	struct {
		int r;
		const char *call;
	} need[NEED_MAX];
	__u64 bitmap[SELFTEST_PAGES / 64];
	struct sb_probe_snapshot a, b;
	struct utsname u;
};

/* Attached through fentry (and fexit, for a timed probe): what the trials try. */
static bool fentry_attached(const struct probe_state *ps, int probe)
{
	return ps->link && ps->info.backend == SB_BACKEND_FENTRY && (!probe_defs[probe].timed || ps->exit_link);
}

/* Each trial: 0, or -errno of its call. */
static int trial_unmap(struct selftest *s)
{
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)s;
	if (page == MAP_FAILED)
		return -errno;
	page[0] = 1;
	munmap(page, 4096);
	return 0;
}

static int trial_get_dirty_log(struct selftest *s)
{
	struct kvm_dirty_log log = { .slot = 0, .dirty_bitmap = s->bitmap };

	return ioctl(s->vm, KVM_GET_DIRTY_LOG, &log) < 0 ? -errno : 0;
}

static int trial_clear_dirty_log(struct selftest *s)
{
	struct kvm_clear_dirty_log cl = { .slot = 0, .num_pages = SELFTEST_PAGES, .dirty_bitmap = s->bitmap };

	return ioctl(s->vm, KVM_CLEAR_DIRTY_LOG, &cl) < 0 ? -errno : 0;
}

static const struct {
	const char *what; /* "<what> a VM of snapbench's own" */
	int probes[2];
	size_t n;
	int need;
	const char *call; /* what run() calls */
	int (*run)(struct selftest *s);
} trials[] = {
	{ "one page unmapped from", { P_MN_INVALIDATE, P_MN_INVALIDATE_END }, 2, NEED_VM, "mmap", trial_unmap },
	{ "KVM_GET_DIRTY_LOG on", { P_GET_DIRTY_LOG }, 1, NEED_SLOT, "KVM_GET_DIRTY_LOG", trial_get_dirty_log },
	{ "KVM_CLEAR_DIRTY_LOG on", { P_CLEAR_DIRTY_LOG }, 1, NEED_CLEAR, "KVM_CLEAR_DIRTY_LOG", trial_clear_dirty_log },
};

/*
 * Runs trial t between two reads (sb_probe_options.test_selftest_idle: not
 * its call, only what it needs); each of its attached probes must have run
 * at least once.
 */
static void selftest_trial(struct selftest *s, size_t t)
{
	const char *call = s->need[trials[t].need].call;
	int r = s->need[trials[t].need].r;
	__u64 ran[2] = { 0, 0 };
	char counts[256] = "";
	size_t len = 0;

	sb_probes_read(s->p, &s->a, NULL);
	if (r == 0 && !s->p->opts.test_selftest_idle) {
		call = trials[t].call;
		r = trials[t].run(s);
	}
	sb_probes_read(s->p, &s->b, NULL);
	for (size_t i = 0; i < trials[t].n; i++) {
		int c = probe_defs[trials[t].probes[i]].first;

		for (int x = 0; x < SB_CTX_MAX; x++)
			ran[i] += s->b.c.count[c][x].events - s->a.c.count[c][x].events;
		if (len < sizeof(counts))
			len += (size_t)snprintf(counts + len, sizeof(counts) - len, "%s%s %llu", i ? " and " : "",
						probe_defs[trials[t].probes[i]].name, (unsigned long long)ran[i]);
	}
	for (size_t i = 0; i < trials[t].n; i++) {
		struct probe_state *ps = &s->p->probes[trials[t].probes[i]];

		if (!fentry_attached(ps, trials[t].probes[i]))
			continue;
		if (r < 0) {
			reason_add(ps, "attached but not self-tested (%s: %s)", call, strerror(-r));
			continue;
		}
		if (ran[i] > 0)
			continue;
		reason_add(ps,
			   "fentry: attached, but never ran: %s a VM of snapbench's own ran the programs on %s times, "
			   "so this kernel (%s) accepted the one on %s without calling it: count it on another kernel",
			   trials[t].what, counts, s->u.release, ps->name);
		bpf_link__destroy(ps->link);
		bpf_link__destroy(ps->exit_link);
		ps->link = ps->exit_link = NULL;
		ps->info.available = false;
		ps->info.backend = SB_BACKEND_NONE;
	}
}

/* A failed need: it, and the needs after it, which include it. */
static void selftest_failed(struct selftest *s, int need, int r, const char *call)
{
	for (int n = need; n < NEED_MAX; n++) {
		s->need[n].r = r;
		s->need[n].call = call;
	}
}

/* The VM, and the memslot the dirty-log trials use, logging dirty pages: s->vm, s->mem and s->need. */
static void selftest_vm(struct selftest *s)
{
	struct kvm_userspace_memory_region slot = { .slot = 0, .flags = KVM_MEM_LOG_DIRTY_PAGES,
						    .memory_size = SELFTEST_BYTES };
	_cleanup_close_ int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	bool manual = false;

	if (kvm >= 0)
		s->vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (s->vm < 0) {
		selftest_failed(s, NEED_VM, -errno, kvm < 0 ? "/dev/kvm" : "KVM_CREATE_VM");
		return;
	}
	/* KVM_CLEAR_DIRTY_LOG needs manual protection, turned on before the slot exists */
	if (ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2) > 0) {
		struct kvm_enable_cap cap = { .cap = KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2,
					      .args = { KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE } };

		manual = ioctl(s->vm, KVM_ENABLE_CAP, &cap) == 0;
	}
	s->mem = mmap(NULL, SELFTEST_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED) {
		selftest_failed(s, NEED_SLOT, -errno, "mmap");
		return;
	}
	slot.userspace_addr = (__u64)(unsigned long)s->mem;
	if (ioctl(s->vm, KVM_SET_USER_MEMORY_REGION, &slot) < 0)
		selftest_failed(s, NEED_SLOT, -errno, "KVM_SET_USER_MEMORY_REGION");
	else if (!manual)
		selftest_failed(s, NEED_CLEAR, -EOPNOTSUPP, "KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2");
}

static void fentry_selftest(struct sb_probes *p)
{
	struct selftest s = { .p = p, .vm = -1, .mem = MAP_FAILED };
	bool any = false;
	__u32 target;

	for (size_t t = 0; t < ARRAY_SIZE(trials); t++)
		for (size_t i = 0; i < trials[t].n; i++)
			any |= fentry_attached(&p->probes[trials[t].probes[i]], trials[t].probes[i]);
	if (!any || p->opts.test_no_selftest)
		goto out;
	if (uname(&s.u) < 0)
		snprintf(s.u.release, sizeof(s.u.release), "unknown");
	selftest_vm(&s);
	/*
	 * KVM names a VM by the thread that created it (kvm->userspace_pid,
	 * what is_target_vm() compares): this thread, for the trials' length.
	 * The target's events in that window are before any reader's first
	 * read; readers take deltas.
	 */
	target = __atomic_load_n(&p->skel->bss->target_tgid, __ATOMIC_RELAXED);
	__atomic_store_n(&p->skel->bss->target_tgid, (__u32)syscall(SYS_gettid), __ATOMIC_RELAXED);
	for (size_t t = 0; t < ARRAY_SIZE(trials); t++)
		selftest_trial(&s, t);
	__atomic_store_n(&p->skel->bss->target_tgid, target, __ATOMIC_RELAXED);
	if (s.vm >= 0)
		close(s.vm); /* before its memory goes */
	if (s.mem != MAP_FAILED)
		munmap(s.mem, SELFTEST_BYTES);
out:
	p->skel->bss->invalidations_open = p->probes[P_MN_INVALIDATE].link && p->probes[P_MN_INVALIDATE_END].link;
}

int sb_probes_attach(struct sb_probes *p, struct sb_error *err)
{
	bool any = false;

	if (p->attached)
		return sb_error_set(err, -EALREADY, "probes for pid %d are already attached", (int)p->tgid);
	for (int i = 0; i < P_MAX; i++) {
		struct probe_state *ps = &p->probes[i];
		struct sb_error e = { 0 };
		int r = 0;

		if (!ps->info.available || !ps->prog)
			continue;
		switch (ps->info.backend) {
		case SB_BACKEND_RAW_TP:
			ps->link = bpf_program__attach_raw_tracepoint(ps->prog, ps->name);
			if (!ps->link)
				r = sb_error_set(&e, -errno, "%s", strerror(errno));
			break;
		case SB_BACKEND_TRACEPOINT:
			r = attach_tracepoint(ps, &e);
			break;
		default:
			ps->link = bpf_program__attach(ps->prog);
			if (!ps->link)
				r = sb_error_set(&e, -errno, "%s", strerror(errno));
			if (r >= 0 && ps->exit_prog) {
				ps->exit_link = bpf_program__attach(ps->exit_prog);
				if (!ps->exit_link) {
					r = sb_error_set(&e, -errno, "fexit: %s", strerror(errno));
					bpf_link__destroy(ps->link);
					ps->link = NULL;
				}
			}
			break;
		}
		if (r < 0) {
			reason_add(ps, "%s: loaded but attaching failed: %s", backend_names[ps->info.backend], e.msg);
			ps->info.available = false;
			ps->info.backend = SB_BACKEND_NONE;
			continue;
		}
		if (probe_defs[i].first >= 0)
			any = true;
	}
	fentry_selftest(p);
	for (int c = 0; c < SB_C_MAX; c++)
		p->counters[c].available = p->counters[c].probe->available;
	if (!any)
		return sb_error_set(err, -EOPNOTSUPP, "no counter probe could be attached; %s: %s",
				    p->probes[P_UNMAP_HVA].label, p->probes[P_UNMAP_HVA].info.reason);
	p->attached = true;
	return 0;
}

pid_t sb_probes_target(const struct sb_probes *p)
{
	return p->tgid;
}

const char *sb_probes_target_comm(const struct sb_probes *p)
{
	return p->comm;
}

/* One CPU's syscall-step counts (struct sb_decisions) into the totals: events in the target, decided by the syscall. */
static void add_decisions(struct sb_counts *sum, const struct sb_counts *cpu)
{
	for (int a = 0; a < SB_ATTR_MAX; a++) {
		const struct sb_decisions *d = &cpu->decisions[a];
		__u64 events = 0;

		for (int k = 0; k < SB_CAUSE_MAX; k++) {
			events += d->by_cause[k].events;
			sum->cause[a][SB_CTX_TARGET][k] += d->by_cause[k].events;
			sum->how[a][SB_HOW_SYSCALL] += d->by_cause[k].events;
			if (a == SB_ATTR_UNMAP)
				sum->cause_pages[SB_CTX_TARGET][k] += d->by_cause[k].pages;
		}
		/* made is bumped before its event is counted: a read in between sees one more */
		sum->reused[a] += events > d->made ? events - d->made : 0;
	}
}

/*
 * One CPU's struct sb_unmap_fast into sum: its events and pages are the
 * target's unmap_hva counts, its by_cause the syscall step's decisions
 * taken over, as sb_decisions' by_cause (add_decisions()), all reused.
 */
static void add_unmap_fast(struct sb_counts *sum, const volatile struct sb_unmap_fast *h)
{
	sum->count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events += h->events;
	sum->count[SB_C_UNMAP_HVA][SB_CTX_TARGET].pages += h->pages;
	for (int k = 0; k < SB_CAUSE_MAX; k++) {
		__u64 events = h->by_cause[k].events;

		sum->cause[SB_ATTR_UNMAP][SB_CTX_TARGET][k] += events;
		sum->how[SB_ATTR_UNMAP][SB_HOW_SYSCALL] += events;
		sum->cause_pages[SB_CTX_TARGET][k] += h->by_cause[k].pages;
		sum->reused[SB_ATTR_UNMAP] += events;
	}
}

int sb_probes_read(struct sb_probes *p, struct sb_probe_snapshot *s, struct sb_error *err)
{
	__u64 *sum = (__u64 *)&s->c;
	const size_t words = sizeof(struct sb_counts) / sizeof(__u64);

	_Static_assert(sizeof(struct sb_counts) % sizeof(__u64) == 0, "sb_counts holds only __u64");
	_Static_assert(SB_DECISION_CAUSES >= SB_CAUSE_MAX, "SB_DECISION_CAUSES is too small");
	(void)err; /* a read of mapped memory cannot fail */
	s->mono_ns = mono_ns();
	memset(&s->c, 0, sizeof(s->c));
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		const __u64 *v = (const __u64 *)(p->slots + (size_t)cpu * p->slot_size);

		for (size_t w = 0; w < words; w++)
			sum[w] += v[w];
	}
	/* the flags' low bits, counted by value: their counts per bit */
	for (int x = 0; x < SB_CTX_MAX; x++)
		for (unsigned int v = 1; v < SB_MN_FLAG_VALUES; v++)
			for (unsigned int b = 0; b < SB_MN_FLAG_VALUE_BITS; b++)
				if (v & (1u << b))
					s->c.mn_flag[x][b] += s->c.mn_flag_values[x][v];
	memset(s->c.decisions, 0, sizeof(s->c.decisions));
	for (int cpu = 0; cpu < p->ncpus; cpu++)
		add_decisions(&s->c, (const struct sb_counts *)(p->slots + (size_t)cpu * p->slot_size));
	/* what the programs made for one set of options count (struct sb_unmap_fast), in the object's mapped data */
	for (int cpu = 0; cpu < p->ncpus && cpu < SB_FAST_CPUS; cpu++)
		add_unmap_fast(&s->c, &p->skel->bss->unmap_fast[cpu]);
	return 0;
}

const struct sb_counter_info *sb_probes_counter(const struct sb_probes *p, enum sb_counter c)
{
	return (unsigned)c < SB_C_MAX ? &p->counters[c] : NULL;
}

size_t sb_probes_probe_count(const struct sb_probes *p)
{
	return P_MAX;
}

const struct sb_probe_info *sb_probes_probe(const struct sb_probes *p, size_t i)
{
	return i < P_MAX ? &p->probes[i].info : NULL;
}

bool sb_probes_counts_other(const struct sb_probes *p)
{
	return p->opts.count_other;
}

bool sb_probes_attribution(const struct sb_probes *p)
{
	return p->opts.attribution;
}

bool sb_probes_kfuncs(const struct sb_probes *p)
{
	return p->kfuncs;
}

size_t sb_probes_rule_count(const struct sb_probes *p)
{
	return NRULES;
}

const struct sb_rule_info *sb_probes_rule(const struct sb_probes *p, size_t i)
{
	return i < NRULES ? &p->rules[i] : NULL;
}

uint64_t sb_mn_cause_flag_bit(const struct sb_counts *c, unsigned int ci, unsigned int bit)
{
	uint64_t n = 0;

	if (ci >= SB_DECISION_CAUSES || bit > SB_MN_FLAG_VALUE_BITS)
		return 0;
	if (bit == SB_MN_FLAG_VALUE_BITS)
		return c->mn_cause_flags_high[ci];
	for (unsigned int v = 0; v < SB_MN_FLAG_VALUES; v++)
		if (v & (1u << bit))
			n += c->mn_cause_flags[ci][v];
	return n;
}

const char *sb_probes_mn_event_name(const struct sb_probes *p, unsigned int event)
{
	return event < SB_MN_EVENTS ? p->mn_event_names[event] : "?";
}

const char *sb_probes_mn_flag_name(const struct sb_probes *p, unsigned int bit)
{
	return bit < SB_MN_FLAG_BITS ? p->mn_flag_names[bit] : "?";
}

/* ---- stacks ---- */

static int cmp_stack_count(const void *a, const void *b)
{
	const struct sb_stack *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return 0;
}

int sb_probes_top_stacks(struct sb_probes *p, enum sb_attr attr, int cause, bool sampled, size_t max,
			 struct sb_stack **ret, size_t *n, struct sb_error *err)
{
	_cleanup_free_ struct sb_stack *all = NULL;
	struct sb_stack_key key, next;
	struct sb_stack_val val;
	size_t cap = p->opts.max_stacks, count = 0;
	int fd = bpf_map__fd(p->skel->maps.stacks), r;
	void *prev = NULL;

	*ret = NULL;
	*n = 0;
	if (!p->ksyms_loaded) {
		r = ksyms_load(&p->ksyms, NULL, err);
		if (r < 0)
			return sb_error_prefix(err, "cannot symbolize stacks");
		p->ksyms_loaded = true;
	}
	all = calloc(cap, sizeof(*all));
	if (!all)
		return sb_error_set(err, -ENOMEM, "out of memory");
	/* bounded: the map holds at most max_stacks entries */
	for (size_t guard = 0; guard <= cap && bpf_map_get_next_key(fd, prev, &next) == 0; guard++) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val) < 0)
			continue; /* deleted meanwhile */
		if (key.attr != attr || (cause >= 0 && key.cause != cause) || (bool)key.sampled != sampled)
			continue;
		if (count >= cap)
			break;
		struct sb_stack *s = &all[count++];
		s->attr = (enum sb_attr)key.attr;
		s->ctx = (enum sb_ctx)key.ctx;
		s->cause = (enum sb_cause)key.cause;
		s->sampled = key.sampled;
		s->count = val.count;
		/* raw frames for now; symbolized after sorting */
		s->nr = val.nr > SB_STACK_DEPTH ? SB_STACK_DEPTH : val.nr;
		for (size_t i = 0; i < s->nr; i++)
			s->frames[i].ip = val.ip[i];
	}
	qsort(all, count, sizeof(*all), cmp_stack_count);
	if (count > max)
		count = max;
	for (size_t k = 0; k < count; k++)
		stack_symbolize(&p->ksyms, &all[k]);
	if (count == 0)
		return 0;
	*ret = TAKE_PTR(all);
	*n = count;
	return 0;
}

int sb_probes_prog_stats(struct sb_probes *p, struct sb_prog_stats **ret, size_t *n, struct sb_error *err)
{
	_cleanup_free_ struct sb_prog_stats *st = calloc(P_MAX, sizeof(*st));
	size_t k = 0;

	if (!st)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (int i = 0; i < P_MAX; i++) {
		struct probe_state *ps = &p->probes[i];
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (!ps->link || !ps->prog)
			continue;
		if (bpf_obj_get_info_by_fd(bpf_program__fd(ps->prog), &info, &len) < 0)
			return sb_error_set(err, -errno, "cannot read the stats of %s: %s",
					    bpf_program__name(ps->prog), strerror(errno));
		snprintf(st[k].name, sizeof(st[k].name), "%s", bpf_program__name(ps->prog));
		st[k].run_cnt = info.run_cnt;
		st[k].run_time_ns = info.run_time_ns;
		st[k].recursion_misses = info.recursion_misses;
		k++;
	}
	*ret = TAKE_PTR(st);
	*n = k;
	return 0;
}

void sb_probes_close(struct sb_probes *p)
{
	if (!p)
		return;
	for (int i = 0; i < P_MAX; i++) {
		bpf_link__destroy(p->probes[i].exit_link);
		bpf_link__destroy(p->probes[i].link);
	}
	sb_probes_bpf__destroy(p->skel);
	kernel_btf_free(p->kbtf);
	btf__free(p->vmlinux);
	ksyms_free(&p->ksyms);
	if (p->slots)
		munmap((void *)p->slots, p->slots_len);
	free(p);
}
