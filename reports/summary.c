// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-window summaries of a repetition: rates from counter deltas, latency
 * percentiles from the merged probe histogram, snapshot figures. The metric
 * table here is the one docs/report-format.md lists.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json-number.h"
#include "macro.h"
#include "report.h"

#define LATENCY_COUNTER "guest.probe_reads"
/* dirty-log: metrics of the migration window's passes (report_rep_iterations()), not of one counter */
#define ITERATIONS "(migration passes)"
#define CLEAR_LOG_NS_COUNTER "bpf.clear_dirty_log_ns"
#define GET_LOG_NS_COUNTER "bpf.get_dirty_log_ns"
#define REMOTE_FLUSH_COUNTER "kvm.remote_tlb_flush"
/* postcopy-restore: figures of the destination's pass (rep.postcopy), not of one counter */
#define POSTCOPY "(postcopy pass)"
/* uffd-restore: figures of snapbench-uffd-restore's pass (rep.uffd_restore), its own VM's, not QEMU's */
#define UFFD_RESTORE "(uffd restore)"

static const struct report_metric_def metric_defs[] = {
	{ "pf_per_s", "kvm.pf_taken", false, "1/s", "lower",
	  "KVM page faults taken per second (pf_taken, summed over vCPUs)", false },
	{ "pf_fixed_per_s", "kvm.pf_fixed", false, "1/s", "lower",
	  "KVM page faults fixed by installing an SPTE per second (pf_fixed)", false },
	{ "pf_fast_per_s", "kvm.pf_fast", false, "1/s", "lower",
	  "KVM page faults fixed by the fast path per second (pf_fast)", false },
	{ "pf_spurious_per_s", "kvm.pf_spurious", false, "1/s", "lower",
	  "KVM spurious page faults per second (pf_spurious)", false },
	{ "tlb_per_s", "kvm.remote_tlb_flush", false, "1/s", "lower",
	  "KVM remote TLB flushes per second (remote_tlb_flush)", false },
	{ "tlb_requests_per_s", "kvm.remote_tlb_flush_requests", false, "1/s", "lower",
	  "KVM remote TLB flush requests per second (remote_tlb_flush_requests)", false },
	{ "vcpu_tlb_flush_per_s", "kvm.tlb_flush", false, "1/s", "lower",
	  "KVM vCPU TLB flushes per second (tlb_flush, summed over vCPUs)", false },
	{ "exits_per_s", "kvm.exits", false, "1/s", "lower",
	  "VM exits per second (exits, summed over vCPUs)", false },
	{ "invalidations_per_s", "bpf.invalidations", false, "1/s", "lower",
	  "MMU-notifier invalidations reaching KVM per second", false },
	{ "invalidations_per_s", "bpf.invalidations", true, "1/s", "lower",
	  "MMU-notifier invalidations reaching KVM per second, caused by", false },
	{ "invalidated_pages_per_s", "bpf.invalidated_pages", false, "1/s", "lower",
	  "pages covered by MMU-notifier invalidations reaching KVM per second", false },
	{ "kvm_page_faults_per_s", "bpf.page_fault", false, "1/s", "lower",
	  "guest page faults KVM handled per second (kvm:kvm_page_fault)", false },
	{ "host_tlb_flush_per_s", "bpf.host_tlb_flush", true, "1/s", "lower",
	  "host TLB flushes of the QEMU process (tlb:tlb_flush) per second, reason", false },
	{ "tlb_shootdowns_per_s", "bpf.tlb_shootdowns", true, "1/s", "lower",
	  "remote TLB shootdowns sent by the QEMU process per second, caused by", false },
	{ "guest_ops_per_s", "guest.ops", false, "1/s", "higher",
	  "guest workload operations per second, all workers", false },
	{ "latency_p50_ns", LATENCY_COUNTER, false, "ns", "lower", "guest probe read latency, median", false },
	{ "latency_p99_ns", LATENCY_COUNTER, false, "ns", "lower", "guest probe read latency, 99th percentile", false },
	{ "latency_p999_ns", LATENCY_COUNTER, false, "ns", "lower", "guest probe read latency, 99.9th percentile", false },
	{ "latency_max_ns", LATENCY_COUNTER, false, "ns", "lower",
	  "guest probe read latency, upper bound of the highest bucket hit", false },
	{ "latency_samples", LATENCY_COUNTER, false, "1", "none", "guest probe reads in the window", false },
	{ "clear_log_ns_per_iteration", ITERATIONS, false, "ns", "lower",
	  "time KVM spent clearing the dirty log (KVM_CLEAR_DIRTY_LOG, and KVM_GET_DIRTY_LOG) per migration pass (passes after the first that ran to their end)", false },
	{ "tlb_per_iteration", ITERATIONS, false, "1", "lower",
	  "KVM remote TLB flushes (remote_tlb_flush) per migration pass (passes after the first that ran to their end)", false },
	{ "dirty_pages_per_s", ITERATIONS, false, "1/s", "none",
	  "guest pages dirtied per second during the migration's passes (what each pass left for the next)", false },
	{ "iteration_s", ITERATIONS, false, "s", "none",
	  "duration of a migration pass, mean (passes after the first that ran to their end)", false },
	{ "iterations", ITERATIONS, false, "1", "none", "migration passes begun in the window", false },
	{ "fault_pass_ms", POSTCOPY, false, "ms", "lower",
	  "time the destination's guest took to touch its region once, linearly, after the postcopy switch-over (fault-linear)", false },
	{ "postcopy_chunk_bytes", POSTCOPY, false, "B", "none",
	  "the page size postcopy served the destination's faults in (4 KiB anonymous RAM, the huge page size with hugetlb)", false },
	{ "postcopy_requests", POSTCOPY, false, "1", "none",
	  "pages the destination asked the source for in postcopy (query-migrate postcopy-requests)", false },
	{ "fault_mismatches", POSTCOPY, false, "1", "lower",
	  "pages of the destination's region that did not hold what the source's guest wrote (0: no page lost)", false },
	{ "set_spte_count", POSTCOPY, false, "1", "none",
	  "SPTEs KVM installed in the migration window (kvmmmu:kvm_mmu_set_spte; the destination's from the switch-over)", false },
	{ "tdp_spte_changes", POSTCOPY, false, "1", "none",
	  "TDP MMU SPTE changes in the migration window (kvmmmu:kvm_tdp_mmu_spte_changed; the destination's from the switch-over)", false },
	{ "restore_pass_ms", UFFD_RESTORE, false, "ms", "lower",
	  "time snapbench-uffd-restore's vCPU took to touch its region once, linearly, every first touch a userfaultfd fault (seed 003's figure)", false },
	{ "restore_pf_taken", UFFD_RESTORE, false, "1", "lower",
	  "KVM page faults the restore's vCPU took during the pass (its pf_taken: kvm.pf_taken of the program's VM)", false },
	{ "restore_pf_fixed", UFFD_RESTORE, false, "1", "lower",
	  "KVM page faults fixed by installing an SPTE during the restore's pass (its pf_fixed)", false },
	{ "restore_pf_prefetched", UFFD_RESTORE, false, "1", "none",
	  "SPTEs KVM installed by prefetch during the restore's pass (pf_prefetched, seed 003's patch): the faults prefetch absorbed", false },
	{ "uffd_requests", UFFD_RESTORE, false, "1", "none",
	  "userfaultfd faults the restore's handler served by placing a chunk", false },
	{ "uffd_woken", UFFD_RESTORE, false, "1", "none",
	  "userfaultfd faults in a chunk the handler had placed already, only woken", false },
	{ "restore_chunk_bytes", UFFD_RESTORE, false, "B", "none", "the restore handler's chunk", false },
	{ "restore_mismatches", UFFD_RESTORE, false, "1", "lower",
	  "pages of the restore's region that did not hold their snapshot's content (0: no page lost)", false },
	{ "numa_kvm_flushes", "bpf.kvm_remote_flush.numa-hinting", false, "1", "lower",
	  "KVM remote TLB flushes (kvm_flush_remote_tlbs) for MMU-notifier invalidations sent by NUMA balancing, in the window (seed 002's figure)", true },
	{ "numa_invalidations", "bpf.invalidations.numa-hinting", false, "1", "lower",
	  "MMU-notifier invalidations reaching KVM sent by NUMA balancing (change_prot_numa), in the window", true },
	{ "numa_invalidated_pages", "bpf.invalidated_pages.numa-hinting", false, "1", "lower",
	  "pages covered by the MMU-notifier invalidations NUMA balancing sent, in the window", true },
	{ "numa_sptes_zapped", "bpf.sptes_zapped.numa-hinting", false, "1", "lower",
	  "SPTEs the TDP MMU zapped for MMU-notifier invalidations sent by NUMA balancing, in the window", true },
	{ "numa_tlb_shootdowns", "bpf.tlb_shootdowns.numa-hinting", false, "1", "lower",
	  "remote TLB shootdowns the QEMU process sent for NUMA balancing's PTE changes, in the window", true },
	{ "refaults", "kvm.pf_taken", false, "1", "lower", "KVM page faults taken in the window (pf_taken)", true },
	{ "numa_pte_updates", "vmstat.numa_pte_updates", false, "1", "none",
	  "PTEs NUMA balancing made PROT_NONE in the window (/proc/vmstat numa_pte_updates, host-wide)", true },
	{ "numa_hint_faults", "vmstat.numa_hint_faults", false, "1", "none",
	  "NUMA hinting faults in the window (/proc/vmstat numa_hint_faults, host-wide)", true },
	{ "numa_hint_faults_local", "vmstat.numa_hint_faults_local", false, "1", "none",
	  "NUMA hinting faults on pages already on the faulting CPU's node (/proc/vmstat numa_hint_faults_local, host-wide)", true },
	{ "numa_pages_migrated", "vmstat.numa_pages_migrated", false, "1", "none",
	  "pages NUMA balancing migrated in the window (/proc/vmstat numa_pages_migrated, host-wide)", true },
	/*
	 * Counts over the window, in every scenario: where times do not carry
	 * (a TCG host VM runs the kernel under test many times slower) the
	 * number of faults, flushes, zaps and invalidations a window saw
	 * still does, and the invalidations' events and flags by cause say why
	 * (docs/kernel-build.md, seed 000).
	 */
	{ "pf_taken", "kvm.pf_taken", false, "1", "lower", "KVM page faults taken in the window (pf_taken, summed over vCPUs)",
	  REPORT_COUNT_ALWAYS },
	{ "remote_tlb_flushes", "kvm.remote_tlb_flush", false, "1", "lower",
	  "KVM remote TLB flushes in the window (remote_tlb_flush)", REPORT_COUNT_ALWAYS },
	{ "tdp_sptes_zapped", "bpf.tdp_spte_changed_zapped", false, "1", "lower",
	  "SPTEs the TDP MMU zapped in the window (kvmmmu:kvm_tdp_mmu_spte_changed, present to not present)",
	  REPORT_COUNT_ALWAYS },
	{ "sptes_zapped", "bpf.sptes_zapped", true, "1", "lower",
	  "SPTEs the TDP MMU zapped in the window inside MMU-notifier invalidations caused by", REPORT_COUNT_ALWAYS },
	{ "remote_flushes", "bpf.kvm_remote_flush", true, "1", "lower",
	  "KVM remote TLB flush requests of the VM (fentry where every request passes), in the window, caused by",
	  REPORT_COUNT_ALWAYS },
	{ "mn_invalidations", "bpf.mn_invalidate", true, "1", "none",
	  "MMU-notifier invalidations of the VM (fentry), in the window: by cause, and by cause and event or flag",
	  REPORT_COUNT_ALWAYS },
	{ "snapshot_duration_s", NULL, false, "s", "lower", "wall time of the background snapshot", false },
	{ "snapshot_pages_per_s", NULL, false, "1/s", "higher", "guest pages written by the snapshot per second", false },
};

const struct report_metric_def *report_metric_defs(size_t *n)
{
	*n = ARRAY_SIZE(metric_defs);
	return metric_defs;
}

double report_hist_percentile(const struct report_hist_layout *layout, const uint64_t *counts, double p)
{
	uint64_t total = 0, cum = 0;

	for (size_t i = 0; i < layout->n; i++)
		total += counts[i];
	if (total == 0)
		return NAN;
	if (p <= 0)
		p = 0;
	if (p > 1)
		p = 1;
	double target = p * (double)total;
	for (size_t i = 0; i < layout->n; i++) {
		if (!counts[i])
			continue;
		if ((double)(cum + counts[i]) >= target) {
			double frac = (target - (double)cum) / (double)counts[i];
			if (frac < 0)
				frac = 0;
			return layout->lower_ns[i] + frac * layout->width_ns[i];
		}
		cum += counts[i];
	}
	/* rounding: the last non-empty bucket's upper bound */
	for (size_t i = layout->n; i-- > 0;)
		if (counts[i])
			return layout->lower_ns[i] + layout->width_ns[i];
	return NAN;
}

static int add_value(struct json_object *metrics, const char *name, double v)
{
	struct json_object *o = json_number_new(v);

	if (json_object_object_add(metrics, name, o) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	return 0;
}

/* metric is null in metrics and named in unavailable with reason */
static int add_unavailable(struct json_object *metrics, struct json_object *unavailable, const char *name,
			   const char *reason)
{
	struct json_object *s;

	if (json_object_object_add(metrics, name, NULL) < 0)
		return -ENOMEM;
	s = json_object_new_string(reason);
	if (!s || json_object_object_add(unavailable, name, s) < 0) {
		json_object_put(s);
		return -ENOMEM;
	}
	return 0;
}

static int counter_index(const struct report_rep *rep, const char *name)
{
	for (size_t i = 0; i < rep->n_counters; i++)
		if (!strcmp(rep->counters[i], name))
			return (int)i;
	return -1;
}

/* Why a counter has no values: the probe's reason, or a generic one. */
static const char *missing_reason(const struct report *r, const char *counter, char *buf, size_t len)
{
	const struct report_probe *p = report_find_probe(r, counter);

	if (p && !p->available)
		return p->reason;
	snprintf(buf, len, "no samples of %s", counter);
	return buf;
}

static int summarize_latency(const struct report *r, const struct report_rep *rep, enum report_window w,
			     const struct report_metric_def *def, struct json_object *metrics,
			     struct json_object *unavailable, uint64_t **merged, bool *have_merged)
{
	char buf[128];
	const struct report_probe *p = report_find_probe(r, LATENCY_COUNTER);

	if (!p)
		return 0; /* latency not measured at all in this run: no metric */
	if (!p->available)
		return add_unavailable(metrics, unavailable, def->name, p->reason);
	if (!*have_merged) {
		*have_merged = true;
		if (rep->hist.n) {
			*merged = calloc(rep->hist.n, sizeof(**merged));
			if (!*merged)
				return -ENOMEM;
			for (size_t i = 0; i < rep->n_rows; i++) {
				const struct report_row *row = &rep->rows[i];
				if (row->window != w)
					continue;
				for (size_t k = 0; k < row->n_hist; k++)
					(*merged)[row->hist_bucket[k]] += row->hist_count[k];
			}
		}
	}
	uint64_t total = 0;
	for (size_t i = 0; *merged && i < rep->hist.n; i++)
		total += (*merged)[i];
	if (!strcmp(def->name, "latency_samples"))
		return add_value(metrics, def->name, (double)total);
	if (total == 0) {
		snprintf(buf, sizeof(buf), "no probe reads in this window");
		return add_unavailable(metrics, unavailable, def->name, buf);
	}
	double v;
	if (!strcmp(def->name, "latency_p50_ns"))
		v = report_hist_percentile(&rep->hist, *merged, 0.50);
	else if (!strcmp(def->name, "latency_p99_ns"))
		v = report_hist_percentile(&rep->hist, *merged, 0.99);
	else if (!strcmp(def->name, "latency_p999_ns"))
		v = report_hist_percentile(&rep->hist, *merged, 0.999);
	else
		v = report_hist_percentile(&rep->hist, *merged, 1.0);
	return add_value(metrics, def->name, v);
}

static int summarize_snapshot(const struct report_rep *rep, const struct report_metric_def *def,
			      struct json_object *metrics, struct json_object *unavailable)
{
	const struct report_snapshot *s = &rep->snapshot;
	char buf[128];

	if (s->status != REPORT_SNAPSHOT_COMPLETED || s->duration_s <= 0) {
		snprintf(buf, sizeof(buf), "the snapshot did not complete (status %s)",
			 report_snapshot_status_to_string(s->status));
		return add_unavailable(metrics, unavailable, def->name, buf);
	}
	if (!strcmp(def->name, "snapshot_duration_s"))
		return add_value(metrics, def->name, s->duration_s);
	if (s->pages < 0)
		return add_unavailable(metrics, unavailable, def->name, "QEMU did not report the pages written");
	return add_value(metrics, def->name, (double)s->pages / s->duration_s);
}

/*
 * The migration window's pass metrics. Per-pass figures are means over the
 * steady passes: those after the first (the bulk pass sends all of RAM)
 * that ran to their end before the iterations were ended (the cancel, or
 * the limits lifted for completion: a completion's last passes carry the
 * stop-and-copy, not the dirty-log cycle). The dirty rate is over the
 * passes that ended by then and whose dirty pages are known.
 */
static int summarize_iterations(const struct report *r, const struct report_rep *rep,
				const struct report_metric_def *def, struct json_object *metrics,
				struct json_object *unavailable)
{
	_cleanup_free_ struct report_iteration *it = NULL;
	size_t n = 0, steady = 0;
	double dur = 0, dirty = 0, dirty_dur = 0, sum = 0;
	const char *counter = NULL;
	char buf[256];
	int c = -1, c2 = -1, k;

	k = report_rep_iterations(rep, &it, &n);
	if (k < 0)
		return k;
	/* when the iterations were ended, in the rows' time; a tolerance for the sample that saw it */
	double cutoff = rep->migration.started_s >= 0 && rep->migration.iterating_s >= 0
				? rep->migration.started_s + rep->migration.iterating_s + 0.05
				: INFINITY;
	if (!strcmp(def->name, "iterations"))
		return add_value(metrics, def->name, (double)n);
	if (!strcmp(def->name, "clear_log_ns_per_iteration"))
		counter = CLEAR_LOG_NS_COUNTER;
	else if (!strcmp(def->name, "tlb_per_iteration"))
		counter = REMOTE_FLUSH_COUNTER;
	if (counter) {
		const struct report_probe *p = report_find_probe(r, counter);
		c = counter_index(rep, counter);
		if ((p && !p->available) || c < 0)
			return add_unavailable(metrics, unavailable, def->name, missing_reason(r, counter, buf, sizeof(buf)));
		/* without manual-protect, KVM_GET_DIRTY_LOG write-protects the pages itself: its time counts too */
		if (!strcmp(counter, CLEAR_LOG_NS_COUNTER) && (p = report_find_probe(r, GET_LOG_NS_COUNTER)) && p->available)
			c2 = counter_index(rep, GET_LOG_NS_COUNTER);
	}
	for (size_t i = 1; i < n; i++) {
		if (!it[i].complete || it[i].start_s + it[i].duration_s > cutoff)
			continue;
		steady++;
		dur += it[i].duration_s;
		for (size_t j = 0; c >= 0 && j < it[i].n_rows; j++) {
			const struct report_row *row = &rep->rows[it[i].first_row + j];
			sum += (size_t)c < row->n_values ? (double)row->values[c] : 0;
			sum += c2 >= 0 && (size_t)c2 < row->n_values ? (double)row->values[c2] : 0;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (it[i].dirty_pages >= 0 && it[i].duration_s > 0 && it[i].start_s + it[i].duration_s <= cutoff) {
			dirty += (double)it[i].dirty_pages;
			dirty_dur += it[i].duration_s;
		}
	if (!strcmp(def->name, "dirty_pages_per_s")) {
		if (dirty_dur <= 0)
			return add_unavailable(metrics, unavailable, def->name,
					       "no pass's dirty pages are known: a pass's are known once the next pass sent them");
		return add_value(metrics, def->name, dirty / dirty_dur);
	}
	if (!steady) {
		snprintf(buf, sizeof(buf), "no pass after the first ran to its end (%zu passes began); hold the migration longer (spec.dirty_log.iterate_s)", n);
		return add_unavailable(metrics, unavailable, def->name, buf);
	}
	return add_value(metrics, def->name, (counter ? sum : dur) / (double)steady);
}

/*
 * A counter's total over window w: what the prefetch patch changes is how
 * many SPTEs a pass installs; seed 002 gives counts over a VM's life.
 */
static int window_total(const struct report *r, const struct report_rep *rep, const char *counter, const char *name,
			enum report_window w, struct json_object *metrics, struct json_object *unavailable)
{
	const struct report_probe *probe = report_find_probe(r, counter);
	int c = counter_index(rep, counter);
	char buf[256];

	if (c < 0 || (probe && !probe->available))
		return add_unavailable(metrics, unavailable, name, missing_reason(r, counter, buf, sizeof(buf)));
	return add_value(metrics, name, (double)report_rep_counter_total(rep, (size_t)c, (int)w));
}

static int summarize_postcopy(const struct report *r, const struct report_rep *rep, const struct report_metric_def *def,
			      struct json_object *metrics, struct json_object *unavailable)
{
	const struct report_postcopy *p = &rep->postcopy;

	if (!strcmp(def->name, "set_spte_count"))
		return window_total(r, rep, "bpf.set_spte", def->name, REPORT_WINDOW_MIGRATION, metrics, unavailable);
	if (!strcmp(def->name, "tdp_spte_changes"))
		return window_total(r, rep, "bpf.tdp_spte_changed", def->name, REPORT_WINDOW_MIGRATION, metrics, unavailable);

	if (!strcmp(def->name, "postcopy_chunk_bytes"))
		return p->chunk_bytes ? add_value(metrics, def->name, (double)p->chunk_bytes)
				      : add_unavailable(metrics, unavailable, def->name, "the chunk size is not known");
	if (!strcmp(def->name, "postcopy_requests"))
		return p->postcopy_requests >= 0
			       ? add_value(metrics, def->name, (double)p->postcopy_requests)
			       : add_unavailable(metrics, unavailable, def->name,
						 "QEMU's query-migrate gave no postcopy-requests before the migration ended");
	if (p->pass_ns < 0)
		return add_unavailable(metrics, unavailable, def->name,
				       p->error ? p->error : "the destination's guest reported no fault-linear pass");
	if (!strcmp(def->name, "fault_pass_ms"))
		return add_value(metrics, def->name, p->pass_ns / 1e6);
	return add_value(metrics, def->name, (double)p->mismatches);
}

/* One of rep.uffd_restore's figures, or why it has none. */
static int summarize_uffd_restore(const struct report_rep *rep, const struct report_metric_def *def,
				  struct json_object *metrics, struct json_object *unavailable)
{
	const struct report_uffd_restore *u = &rep->uffd_restore;
	static const char no_pass[] = "snapbench-uffd-restore reported no pass";
	const char *why = u->error ? u->error : no_pass;
	int64_t v = -1;

	if (!strcmp(def->name, "restore_chunk_bytes"))
		return add_value(metrics, def->name, (double)u->chunk_bytes);
	if (u->pass_ms < 0)
		return add_unavailable(metrics, unavailable, def->name, why);
	if (!strcmp(def->name, "restore_pass_ms"))
		return add_value(metrics, def->name, u->pass_ms);
	if (!strcmp(def->name, "restore_mismatches"))
		return add_value(metrics, def->name, (double)u->mismatches);
	if (u->kvm_unavailable && !strncmp(def->name, "restore_pf_", 11))
		return add_unavailable(metrics, unavailable, def->name, u->kvm_unavailable);
	if (!strcmp(def->name, "uffd_requests"))
		v = u->uffd_requests;
	else if (!strcmp(def->name, "uffd_woken"))
		v = u->uffd_woken;
	else if (!strcmp(def->name, "restore_pf_taken"))
		v = u->pf_taken, why = "the kernel's KVM has no vCPU stat pf_taken";
	else if (!strcmp(def->name, "restore_pf_fixed"))
		v = u->pf_fixed, why = "the kernel's KVM has no vCPU stat pf_fixed";
	else if (!strcmp(def->name, "restore_pf_prefetched"))
		v = u->pf_prefetched,
		why = "the kernel's KVM has no vCPU stat pf_prefetched (it comes with seed 003's patch, examples/seed-003)";
	return v >= 0 ? add_value(metrics, def->name, (double)v) : add_unavailable(metrics, unavailable, def->name, why);
}

/* The rows of window w: where it starts and how long it lasts; false when it has none. */
static bool window_span(const struct report_rep *rep, enum report_window w, double *start, double *duration)
{
	bool any = false;

	*start = *duration = 0;
	for (size_t i = 0; i < rep->n_rows; i++) {
		const struct report_row *row = &rep->rows[i];
		if (row->window != w)
			continue;
		if (!any)
			*start = row->t_s - row->dt_s;
		any = true;
		*duration += row->dt_s;
	}
	return any;
}

/* A family of counters (def->counter.MEMBER): each member's count or rate in window w. */
static int summarize_family(const struct report_rep *rep, const struct report_metric_def *def, enum report_window w,
			    double duration, struct json_object *metrics, struct json_object *unavailable)
{
	size_t plen = strlen(def->counter);
	char buf[256];
	int k = 0;

	for (size_t c = 0; c < rep->n_counters && k >= 0; c++) {
		const char *name = rep->counters[c];
		if (strncmp(name, def->counter, plen) || name[plen] != '.' || !name[plen + 1])
			continue;
		snprintf(buf, sizeof(buf), "%s.%s", def->name, name + plen + 1);
		if (def->window_count)
			k = add_value(metrics, buf, (double)report_rep_counter_total(rep, c, (int)w));
		else if (duration <= 0)
			k = add_unavailable(metrics, unavailable, buf, "the window has no duration");
		else
			k = add_value(metrics, buf, (double)report_rep_counter_total(rep, c, (int)w) / duration);
	}
	return k;
}

/* One counter's rate in window w, or why there is none; nothing for a counter this report never measured. */
static int summarize_rate(const struct report *r, const struct report_rep *rep, const struct report_metric_def *def,
			  enum report_window w, double duration, struct json_object *metrics,
			  struct json_object *unavailable)
{
	const struct report_probe *p = report_find_probe(r, def->counter);
	int c = counter_index(rep, def->counter);
	char buf[256];

	if (p && !p->available && c >= 0)
		/* read (as 0) but it cannot move on this host: not a measurement */
		return add_unavailable(metrics, unavailable, def->name, missing_reason(r, def->counter, buf, sizeof(buf)));
	if (c < 0) {
		if (!p)
			return 0; /* never measured: not part of this report */
		return add_unavailable(metrics, unavailable, def->name, missing_reason(r, def->counter, buf, sizeof(buf)));
	}
	if (duration <= 0)
		return add_unavailable(metrics, unavailable, def->name, "the window has no duration");
	return add_value(metrics, def->name, (double)report_rep_counter_total(rep, (size_t)c, (int)w) / duration);
}

int report_rep_window_summary(const struct report *r, const struct report_rep *rep, enum report_window w,
			      struct json_object **ret)
{
	_cleanup_free_ uint64_t *merged = NULL;
	bool have_merged = false;
	double start, duration;
	struct json_object *o = NULL, *metrics = NULL, *unavailable = NULL;
	int k = -ENOMEM;

	*ret = NULL;
	if (!window_span(rep, w, &start, &duration))
		return 0;

	o = json_object_new_object();
	metrics = json_object_new_object();
	unavailable = json_object_new_object();
	if (!o || !metrics || !unavailable)
		goto fail;

	for (size_t d = 0; d < ARRAY_SIZE(metric_defs); d++) {
		const struct report_metric_def *def = &metric_defs[d];

		if (!def->counter) {
			if (w != REPORT_WINDOW_SNAPSHOT)
				continue;
			k = summarize_snapshot(rep, def, metrics, unavailable);
		} else if (def->window_count && !def->family) {
			if (!rep->numa.set && def->window_count != REPORT_COUNT_ALWAYS)
				continue;
			k = window_total(r, rep, def->counter, def->name, w, metrics, unavailable);
		} else if (!strcmp(def->counter, POSTCOPY)) {
			if (w != REPORT_WINDOW_MIGRATION || !rep->postcopy.set)
				continue;
			k = summarize_postcopy(r, rep, def, metrics, unavailable);
		} else if (!strcmp(def->counter, UFFD_RESTORE)) {
			if (w != REPORT_WINDOW_FAULT_IN || !rep->uffd_restore.set)
				continue;
			k = summarize_uffd_restore(rep, def, metrics, unavailable);
		} else if (!strcmp(def->counter, ITERATIONS)) {
			if (w != REPORT_WINDOW_MIGRATION || rep->postcopy.set)
				continue;
			k = summarize_iterations(r, rep, def, metrics, unavailable);
		} else if (!strcmp(def->counter, LATENCY_COUNTER)) {
			k = summarize_latency(r, rep, w, def, metrics, unavailable, &merged, &have_merged);
		} else if (def->family) {
			k = summarize_family(rep, def, w, duration, metrics, unavailable);
		} else {
			k = summarize_rate(r, rep, def, w, duration, metrics, unavailable);
		}
		if (k < 0)
			goto fail;
	}

	k = -ENOMEM;
	if (json_object_object_add(o, "start_s", json_number_new(start < 0 ? 0 : start)) < 0 ||
	    json_object_object_add(o, "duration_s", json_number_new(duration)) < 0)
		goto fail;
	if (json_object_object_add(o, "metrics", metrics) < 0)
		goto fail;
	metrics = NULL;
	if (json_object_object_add(o, "unavailable", unavailable) < 0)
		goto fail;
	*ret = o;
	return 0;
fail:
	json_object_put(metrics);
	json_object_put(unavailable);
	json_object_put(o);
	return k;
}
