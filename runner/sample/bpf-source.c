// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bpf/'s counters under report names. Events of the target QEMU's own
 * threads (exact) feed the main counters; kernel threads' events (they
 * cannot be tied to one VM through tracepoints) get their own
 * "_kthread" counter so they are visible without polluting the VM's.
 */
#include "bpf-source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit-reasons.h"
#include "kvm-flavour.h"
#include "macro.h"
#include "probes.h"

/*
 * One counter a read emits: its report name and where its value sits in
 * struct sb_counts. Or, with key NULL, the place of counters named as they
 * appear: the exit reasons (read_exit_reasons()) or the invalidations'
 * events and flags by cause (read_mn_causes()).
 */
enum read_kind { READ_VALUE, READ_CONTEXTS, READ_EXIT_REASONS, READ_MN_CAUSES };

/* READ_CONTEXTS: the sum of the value in each context (SB_CTX_MAX of them, stride bytes apart) */
struct read_key {
	char *key;
	size_t off, stride;
	enum read_kind kind;
};

struct bpf_source {
	struct sb_probes *p;
	struct report *r;
	bool attribution;
	bool zaps_by_cause;     /* bpf.sptes_zapped.CAUSE: counted (see record_zaps()) */
	struct sb_probe_snapshot snap;
	bool exit_slot_seen[SB_EXIT_SLOTS]; /* its counter has a probes entry */
	/* the same for bpf.mn_invalidate.CAUSE.event.E and .flag.F (bit SB_MN_FLAG_VALUE_BITS: any higher one) */
	bool mn_event_seen[SB_DECISION_CAUSES][SB_MN_EVENTS];
	bool mn_flag_seen[SB_DECISION_CAUSES][SB_MN_FLAG_VALUE_BITS + 1];
	/* what bpf_source_read() emits, in order: named once at open (record_probes()), not at every sample */
	struct read_key *keys;
	size_t n_keys;
};

/* report names of tlb:tlb_flush reasons, as the kernel's enum tlb_flush_reason */
static const char *const tlb_reason_names[SB_TLB_REASONS] = {
	"task_switch", "remote_shootdown", "local_shootdown", "local_mm_shootdown", "remote_send_ipi", "remote_wrong_cpu",
};

/* "munmap/madvise" -> "munmap-madvise": report names have no '/' */
static void cause_key(enum sb_cause c, char *buf, size_t len)
{
	snprintf(buf, len, "%s", sb_cause_name(c));
	for (char *p = buf; *p; p++)
		if (*p == '/')
			*p = '-';
}

/* the report name of counter c's events (target context) */
static void counter_key(enum sb_counter c, const struct sb_counter_info *ci, char *buf, size_t len)
{
	if (c == SB_C_UNMAP_HVA)
		snprintf(buf, len, "bpf.invalidations");
	else if (c >= SB_C_TLB_TASK_SWITCH && c < SB_C_TLB_TASK_SWITCH + SB_TLB_REASONS)
		snprintf(buf, len, "bpf.host_tlb_flush.%s", tlb_reason_names[c - SB_C_TLB_TASK_SWITCH]);
	else
		snprintf(buf, len, "bpf.%s", ci->name);
}

static const struct {
	enum sb_attr attr;
	enum sb_counter counter;
	const char *prefix;
} attr_keys[] = {
	{ SB_ATTR_UNMAP, SB_C_UNMAP_HVA, "bpf.invalidations" },
	{ SB_ATTR_TLB_SHOOTDOWN, SB_C_TLB_SEND_IPI, "bpf.tlb_shootdowns" },
	{ SB_ATTR_MN_INVALIDATE, SB_C_MN_INVALIDATE, "bpf.mn_invalidate" },
	{ SB_ATTR_KVM_FLUSH, SB_C_KVM_FLUSH, "bpf.kvm_remote_flush" },
};

/* Timed calls' per-call latency histograms: "bpf.NAME_hist.B" counts calls of [2^B, 2^(B+1)) ns. */
static const struct {
	enum sb_counter counter;
	unsigned which; /* index into sb_counts.timed_hist */
} timed_keys[] = {
	{ SB_C_CLEAR_DIRTY_LOG, 0 },
	{ SB_C_GET_DIRTY_LOG, 1 },
};

static int set_probe(struct report *r, const char *counter, const struct sb_counter_info *ci, const char *suffix)
{
	const char *cannot = kvm_flavour_cannot_count(kvm_flavour_host(), counter);
	char source[256];

	if (ci->available && cannot)
		return report_set_probe(r, counter, false, ci->probe->name, sb_backend_name(ci->probe->backend), cannot);
	if (!ci->available)
		return report_set_probe(r, counter, false, ci->probe ? ci->probe->name : NULL,
					ci->probe ? sb_backend_name(ci->probe->backend) : NULL,
					ci->probe && ci->probe->reason[0] ? ci->probe->reason : "the probe is unavailable");
	/* a target found in a module's BTF (KVM built as modules) is named; vmlinux's is the default */
	if (!strncmp(ci->probe->btf, "module ", 7))
		snprintf(source, sizeof(source), "%s%s (BTF of %s)", ci->probe->name, suffix ? suffix : "",
			 ci->probe->btf);
	else
		snprintf(source, sizeof(source), "%s%s", ci->probe->name, suffix ? suffix : "");
	return report_set_probe(r, counter, true, source, sb_backend_name(ci->probe->backend), NULL);
}

/* A module parameter's first character ('Y', 'N', '1', '0'), or 0 when it cannot be read. */
static char module_param(const char *path)
{
	char buf[8] = "";
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0];
}

/*
 * SPTEs zapped by the cause of the invalidation that zapped them: the
 * TDP MMU's kvmmmu:kvm_tdp_mmu_spte_changed inside an invalidation the
 * fentry pair kvm_mmu_notifier_invalidate_range_start/_end brackets (the
 * shadow MMU zaps without a tracepoint). NULL when counted, else why not.
 */
static const char *zap_causes_unavailable(struct bpf_source *s)
{
	const struct sb_counter_info *start = sb_probes_counter(s->p, SB_C_MN_INVALIDATE),
				     *end = sb_probes_counter(s->p, SB_C_MN_INVALIDATE_END),
				     *tdp = sb_probes_counter(s->p, SB_C_TDP_SPTE);
	char npt = module_param("/sys/module/kvm_amd/parameters/npt"), ept = module_param("/sys/module/kvm_intel/parameters/ept");

	if (!s->attribution)
		return "cause attribution is unavailable on this kernel (see the bpf probes' notes)";
	if (end && !end->available && end->probe && strstr(end->probe->reason, "zap_causes"))
		return "counted only in numa-hinting runs: it costs every invalidation a second fentry program and two map operations";
	if (!start || !start->available || !end || !end->available)
		return "needs fentry on kvm_mmu_notifier_invalidate_range_start and _end, which do not both attach and run on this kernel (see the bpf probes' notes)";
	if (!tdp || !tdp->available)
		return tdp && tdp->probe && tdp->probe->reason[0] ? tdp->probe->reason
								  : "kvmmmu:kvm_tdp_mmu_spte_changed is not counted here";
	if (module_param("/sys/module/kvm/parameters/tdp_mmu") == 'N' || npt == 'N' || npt == '0' || ept == 'N' || ept == '0')
		return "KVM runs the shadow MMU here (kvm.tdp_mmu, kvm_amd.npt or kvm_intel.ept off), whose zaps have no tracepoint";
	return NULL;
}

/* Appends a counter to what a read emits: key (copied; NULL for the exit reasons) and its value at v. */
static int key_add_kind(struct bpf_source *s, const char *key, const __u64 *v, enum read_kind kind)
{
	struct read_key *k;

	if (!(s->n_keys & (s->n_keys + 1))) { /* grows at 0, 1, 3, 7...: doubling */
		k = realloc(s->keys, (2 * s->n_keys + 1) * sizeof(*k));
		if (!k)
			return -ENOMEM;
		s->keys = k;
	}
	k = &s->keys[s->n_keys];
	k->key = NULL;
	if (key && !(k->key = strdup(key)))
		return -ENOMEM;
	k->off = v ? (size_t)((const char *)v - (const char *)&s->snap.c) : 0;
	k->kind = kind;
	s->n_keys++;
	return 0;
}

static int key_add(struct bpf_source *s, const char *key, const __u64 *v)
{
	return key_add_kind(s, key, v, key ? READ_VALUE : READ_EXIT_REASONS);
}

/* key_add() of the value in every context: v is the target's, the others follow stride bytes apart. */
static int key_add_contexts(struct bpf_source *s, const char *key, const __u64 *v, size_t stride)
{
	int k = key_add_kind(s, key, v, READ_CONTEXTS);

	if (k >= 0)
		s->keys[s->n_keys - 1].stride = stride;
	return k;
}

/*
 * KVM's remote flush requests are the VM's wherever they are made: the
 * fentry program knows the VM, and kernel threads (the NX huge page
 * recovery thread, kswapd, khugepaged) and other processes flush it too.
 * remote_tlb_flush_requests counts them all, and so does
 * bpf.kvm_remote_flush with its causes (the self-check, reports/selfcheck.h).
 */
static bool all_contexts(enum sb_counter c)
{
	return c == SB_C_KVM_FLUSH;
}

/*
 * Records each counter's probe in r and, for the available ones, what a
 * read emits (key_add()), in the order the rows have always had them: each
 * counter's events (with its pages, kernel threads' events or detail), the
 * timed calls' histograms, the exit reasons, then the causes and the zaps
 * by cause where counted. Which are available is settled at open.
 */
/* Each counter's events, with its pages, kernel threads' events or detail. */
static int record_counters(struct bpf_source *s, struct report *r)
{
	const struct sb_counts *cs = &s->snap.c;
	char key[128], suffix[128];
	int k = 0;

	for (int c = 0; c < SB_C_MAX && k >= 0; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(s->p, (enum sb_counter)c);
		if (!ci)
			continue;
		const struct sb_count *t = &cs->count[c][SB_CTX_TARGET];
		counter_key((enum sb_counter)c, ci, key, sizeof(key));
		k = set_probe(r, key, ci,
			      all_contexts(c) ? " (the target VM's, in every context)" : " (events of the target QEMU's threads)");
		if (k >= 0 && ci->available)
			k = all_contexts(c) ? key_add_contexts(s, key, &t->events, sizeof(cs->count[c][0]))
					    : key_add(s, key, &t->events);
		if (k >= 0 && ci->pages_label && c == SB_C_UNMAP_HVA)
			k = set_probe(r, "bpf.invalidated_pages", ci, " (pages covered)");
		if (k >= 0 && c == SB_C_UNMAP_HVA)
			k = set_probe(r, "bpf.invalidations_kthread", ci, " (kernel threads, any VM on the host)");
		if (k >= 0 && ci->available && c == SB_C_UNMAP_HVA) {
			k = key_add(s, "bpf.invalidated_pages", &t->pages);
			if (k >= 0)
				k = key_add(s, "bpf.invalidations_kthread", &cs->count[c][SB_CTX_KTHREAD].events);
		}
		if (k >= 0 && ci->detail_label && c != SB_C_UNMAP_HVA &&
		    !(c >= SB_C_TLB_TASK_SWITCH && c < SB_C_TLB_TASK_SWITCH + SB_TLB_REASONS)) {
			char dkey[160];
			snprintf(dkey, sizeof(dkey), "%s_%s", key, ci->detail_label);
			snprintf(suffix, sizeof(suffix), " (%s)", ci->detail_label);
			k = set_probe(r, dkey, ci, suffix);
			if (k >= 0 && ci->available)
				k = key_add(s, dkey, &t->detail);
		}
	}
	return k;
}

/* The timed calls' latency histograms. */
static int record_timed(struct bpf_source *s, struct report *r)
{
	const struct sb_counts *cs = &s->snap.c;
	char key[128];
	int k = 0;

	for (size_t t = 0; t < ARRAY_SIZE(timed_keys) && k >= 0; t++) {
		const struct sb_counter_info *ci = sb_probes_counter(s->p, timed_keys[t].counter);
		if (!ci || !ci->available)
			continue;
		for (int b = 0; b < SB_TIMED_HIST && k >= 0; b++) {
			snprintf(key, sizeof(key), "bpf.%s_hist.%d", ci->name, b);
			k = set_probe(r, key, ci, " (calls by latency, [2^B, 2^(B+1)) ns)");
			if (k >= 0)
				k = key_add(s, key, &cs->timed_hist[timed_keys[t].which][b]);
		}
	}
	return k;
}

/* The causes of invalidations and remote shootdowns, where attribution works (else why not). */
static int record_causes(struct bpf_source *s, struct report *r)
{
	const struct sb_counts *cs = &s->snap.c;
	char key[128], suffix[128];
	int k = 0;

	for (size_t a = 0; a < ARRAY_SIZE(attr_keys) && k >= 0; a++) {
		const struct sb_counter_info *ci = sb_probes_counter(s->p, attr_keys[a].counter);
		if (!ci || !ci->available)
			continue;
		for (int c = 0; c < SB_CAUSE_MAX && k >= 0; c++) {
			char ck[32];
			cause_key((enum sb_cause)c, ck, sizeof(ck));
			snprintf(key, sizeof(key), "%s.%s", attr_keys[a].prefix, ck);
			if (s->attribution) {
				snprintf(suffix, sizeof(suffix), ", classified: %s (docs/probes.md)", sb_cause_name(c));
				k = set_probe(r, key, ci, suffix);
				if (k >= 0 && all_contexts(attr_keys[a].counter))
					k = key_add_contexts(s, key, &cs->cause[attr_keys[a].attr][SB_CTX_TARGET][c],
							     sizeof(cs->cause[0][0]));
				else if (k >= 0)
					k = key_add(s, key, &cs->cause[attr_keys[a].attr][SB_CTX_TARGET][c]);
				if (k >= 0 && attr_keys[a].attr == SB_ATTR_UNMAP && ci->pages_label) {
					snprintf(key, sizeof(key), "bpf.invalidated_pages.%s", ck);
					snprintf(suffix, sizeof(suffix), " (pages covered), classified: %s (docs/probes.md)",
						 sb_cause_name(c));
					k = set_probe(r, key, ci, suffix);
					if (k >= 0)
						k = key_add(s, key, &cs->cause_pages[SB_CTX_TARGET][c]);
				}
			} else {
				k = report_set_probe(r, key, false, NULL, NULL,
						     "cause attribution is unavailable on this kernel (see the bpf probes' notes)");
			}
		}
	}
	return k;
}

/* The SPTEs zapped inside the VM's invalidations, by cause (else why not). */
static int record_zaps(struct bpf_source *s, struct report *r)
{
	const struct sb_counts *cs = &s->snap.c;
	char key[128], suffix[128];
	int k = 0;

	const struct sb_counter_info *tdp = sb_probes_counter(s->p, SB_C_TDP_SPTE);
	const char *why = zap_causes_unavailable(s);
	s->zaps_by_cause = !why;
	for (int c = 0; c < SB_CAUSE_MAX && k >= 0 && tdp; c++) {
		char ck[32];
		cause_key((enum sb_cause)c, ck, sizeof(ck));
		snprintf(key, sizeof(key), "bpf.sptes_zapped.%s", ck);
		snprintf(suffix, sizeof(suffix), " (zaps inside the VM's invalidations of cause %s, bracketed by fentry "
			 "kvm_mmu_notifier_invalidate_range_start/_end)", sb_cause_name(c));
		k = why ? report_set_probe(r, key, false, tdp->probe ? tdp->probe->name : NULL, NULL, why)
			: set_probe(r, key, tdp, suffix);
		if (k >= 0 && !why)
			k = key_add(s, key, &cs->zap_cause[c]);
	}
	return k;
}

static int record_probes(struct bpf_source *s, struct report *r)
{
	int k = record_counters(s, r);

	if (k >= 0)
		k = record_timed(s, r);
	if (k >= 0)
		k = key_add(s, NULL, NULL); /* the exit reasons: their probes entries as they appear */
	if (k >= 0)
		k = record_causes(s, r);
	const struct sb_counter_info *mn = sb_probes_counter(s->p, SB_C_MN_INVALIDATE);
	if (k >= 0 && mn && mn->available)
		k = key_add_kind(s, NULL, NULL, READ_MN_CAUSES);
	if (k >= 0)
		k = record_zaps(s, r);
	return k;
}

int bpf_source_open(pid_t pid, struct report *r, bool zap_causes, struct bpf_source **ret, struct sb_error *err)
{
	struct bpf_source *s = calloc(1, sizeof(*s));
	struct sb_probe_options o;
	int k;

	if (!s)
		return sb_error_set(err, -ENOMEM, "out of memory");
	sb_probe_options_init(&o);
	o.zap_causes = zap_causes;
	/* tests only: remote flushes counted where some pass, for the self-check's partial mark (reports/selfcheck.h) */
	o.test_flush_function = getenv("SNAPBENCH_TEST_FLUSH_FUNCTION");
	k = sb_probes_open(pid, &o, &s->p, err);
	if (k >= 0)
		k = sb_probes_attach(s->p, err);
	if (k < 0) {
		bpf_source_close(s);
		return k;
	}
	s->attribution = sb_probes_attribution(s->p);
	s->r = r;
	k = record_probes(s, r);
	if (k < 0) {
		bpf_source_close(s);
		return sb_error_set(err, k, "out of memory");
	}
	*ret = s;
	return 0;
}

int bpf_source_retarget(struct bpf_source *s, pid_t pid, struct sb_error *err)
{
	return sb_probes_retarget(s->p, pid, err);
}

/*
 * kvm_exit by reason: "bpf.kvm_exit_reason.NAME" for each reason seen so
 * far (a counter first seen later counts from zero, as it was), its probes
 * entry set when it first appears. They sum to bpf.kvm_exit.
 */
static int read_exit_reasons(struct bpf_source *s, counter_emit_fn emit, void *userdata)
{
	const struct sb_counter_info *ci = sb_probes_counter(s->p, SB_C_KVM_EXIT);
	enum sb_exit_isa isa = sb_exit_isa_of_module(kvm_flavour_host()->module);
	char key[128], name[64];
	int k;

	if (!ci || !ci->available)
		return 0;
	for (unsigned slot = 0; slot < SB_EXIT_SLOTS; slot++) {
		if (!s->snap.c.exit_reason[slot])
			continue;
		snprintf(key, sizeof(key), "bpf.kvm_exit_reason.%s", sb_exit_slot_name(slot, isa, name, sizeof(name)));
		if (!s->exit_slot_seen[slot]) {
			char suffix[160];
			snprintf(suffix, sizeof(suffix), " (events of the target QEMU's vCPUs, exit reason %s)", name);
			if ((k = set_probe(s->r, key, ci, suffix)) < 0)
				return k;
			s->exit_slot_seen[slot] = true;
		}
		if ((k = emit(userdata, key, s->snap.c.exit_reason[slot])) < 0)
			return k;
	}
	return 0;
}

/* "MMU_NOTIFY_PROTECTION_VMA" -> "protection_vma", "MMU_NOTIFIER_RANGE_PERM_UPGRADE" -> "perm_upgrade" */
static void mn_short_name(const char *name, char *buf, size_t len)
{
	static const char *const prefixes[] = { "MMU_NOTIFIER_RANGE_", "MMU_NOTIFY_" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) {
			name += strlen(prefixes[i]);
			break;
		}
	snprintf(buf, len, "%s", name);
	for (char *p = buf; *p; p++)
		*p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
}

/* One per-cause event or flag counter: its probes entry when first seen, then its value at every read. */
static int emit_mn_cause(struct bpf_source *s, bool *seen, unsigned ci, const char *kind, const char *name,
			 uint64_t v, counter_emit_fn emit, void *userdata)
{
	const struct sb_counter_info *ci_info = sb_probes_counter(s->p, SB_C_MN_INVALIDATE);
	char key[160], ck[32], suffix[256];
	int k;

	if (!v && !*seen)
		return 0;
	if (ci < SB_CAUSE_MAX)
		cause_key((enum sb_cause)ci, ck, sizeof(ck));
	else
		snprintf(ck, sizeof(ck), "unclassified");
	snprintf(key, sizeof(key), "bpf.mn_invalidate.%s.%s.%s", ck, kind, name);
	if (!*seen) {
		snprintf(suffix, sizeof(suffix), " (the target VM's invalidations of cause %s with %s %s)", ck,
			 !strcmp(kind, "event") ? "event" : "flag", name);
		if ((k = set_probe(s->r, key, ci_info, suffix)) < 0)
			return k;
		*seen = true;
	}
	return emit(userdata, key, v);
}

/*
 * The invalidations' events and flags by cause: "bpf.mn_invalidate.CAUSE.event.EVENT"
 * and "bpf.mn_invalidate.CAUSE.flag.FLAG" (names from the kernel's BTF, e.g.
 * protection_vma, blockable, a patched kernel's perm_upgrade; bitN for a
 * flag it does not name; "high" for any flag above the bits counted), CAUSE
 * "unclassified" for those without a cause. Each appears once it counted
 * something, as the exit reasons do; the events of a cause sum to
 * bpf.mn_invalidate.CAUSE.
 */
static int read_mn_causes(struct bpf_source *s, counter_emit_fn emit, void *userdata)
{
	const struct sb_counts *c = &s->snap.c;
	char name[64];
	int k = 0;

	for (unsigned ci = 0; ci <= SB_CAUSE_MAX && k >= 0; ci++) {
		for (unsigned e = 0; e < SB_MN_EVENTS && k >= 0; e++) {
			mn_short_name(sb_probes_mn_event_name(s->p, e), name, sizeof(name));
			k = emit_mn_cause(s, &s->mn_event_seen[ci][e], ci, "event", name, c->mn_cause_event[ci][e], emit,
					  userdata);
		}
		for (unsigned b = 0; b <= SB_MN_FLAG_VALUE_BITS && k >= 0; b++) {
			if (b < SB_MN_FLAG_VALUE_BITS)
				mn_short_name(sb_probes_mn_flag_name(s->p, b), name, sizeof(name));
			else
				snprintf(name, sizeof(name), "high");
			k = emit_mn_cause(s, &s->mn_flag_seen[ci][b], ci, "flag", name, sb_mn_cause_flag_bit(c, ci, b), emit,
					  userdata);
		}
	}
	return k;
}

static __u64 contexts_sum(const char *v, size_t stride)
{
	__u64 sum = 0;

	for (int x = 0; x < SB_CTX_MAX; x++)
		sum += *(const __u64 *)(v + (size_t)x * stride);
	return sum;
}

int bpf_source_read(struct bpf_source *s, counter_emit_fn emit, void *userdata, struct sb_error *err)
{
	const char *c = (const char *)&s->snap.c;
	int k;

	k = sb_probes_read(s->p, &s->snap, err);
	if (k < 0)
		return k;
	for (size_t i = 0; i < s->n_keys; i++) {
		const struct read_key *rk = &s->keys[i];

		k = rk->kind == READ_VALUE	  ? emit(userdata, rk->key, *(const __u64 *)(c + rk->off))
		    : rk->kind == READ_CONTEXTS	  ? emit(userdata, rk->key, contexts_sum(c + rk->off, rk->stride))
		    : rk->kind == READ_EXIT_REASONS ? read_exit_reasons(s, emit, userdata)
						    : read_mn_causes(s, emit, userdata);
		if (k < 0)
			return sb_error_set(err, k, "out of memory");
	}
	return 0;
}

void bpf_source_close(struct bpf_source *s)
{
	if (!s)
		return;
	sb_probes_close(s->p);
	for (size_t i = 0; i < s->n_keys; i++)
		free(s->keys[i].key);
	free(s->keys);
	free(s);
}

int bpf_source_report_unavailable(struct report *r, const char *reason)
{
	static const char *const names[] = { "bpf.invalidations",   "bpf.invalidated_pages", "bpf.invalidations_kthread",
					     "bpf.page_fault",      "bpf.host_tlb_flush",    "bpf.tlb_shootdowns",
					     "bpf.clear_dirty_log_ns" };
	int k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(names) && k >= 0; i++)
		k = report_set_probe(r, names[i], false, NULL, NULL, reason);
	return k;
}
