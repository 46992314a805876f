// SPDX-License-Identifier: GPL-2.0-or-later
/* compare: comparability, per-metric statistics and verdicts. */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "closest-word.h"
#include "compare.h"
#include "compare-private.h"
#include "report.h"
#include "timing.h"

const char *const compare_default_metrics[] = {
	"pf_per_s",
	"tlb_per_s",
	"invalidations_per_s",
	"invalidations_per_s.*",
	"guest_ops_per_s",
	"latency_p50_ns",
	"latency_p99_ns",
	"latency_p999_ns",
};
const size_t compare_n_default_metrics = ARRAY_SIZE(compare_default_metrics);

static const char *const default_windows[] = { "snapshot" };

/*
 * dirty-log runs (seed 001), by default: their migration window, led by
 * the seed's figures (clear-log time and remote flushes per pass, flushes
 * per second, the dirty rate), then the guest's throughput and latency.
 */
static const char *const dirty_log_windows[] = { "migration" };
static const char *const dirty_log_metrics[] = {
	"clear_log_ns_per_iteration",
	"tlb_per_iteration",
	"tlb_per_s",
	"dirty_pages_per_s",
	"guest_ops_per_s",
	"pf_per_s",
	"pf_fast_per_s",
	"iteration_s",
	"latency_p50_ns",
	"latency_p99_ns",
};

/*
 * postcopy-restore runs (seed 003), by default: their migration window, led
 * by the seed's figure (the time to fault the region in) and the chunk size
 * postcopy served it in, then the page requests and the faults.
 */
static const char *const postcopy_metrics[] = {
	"fault_pass_ms",
	"postcopy_chunk_bytes",
	"postcopy_requests",
	"fault_mismatches",
	"set_spte_count",
	"tdp_spte_changes",
	"pf_per_s",
	"kvm_page_faults_per_s",
};

/*
 * numa-hinting runs (seed 002), by default: their steady window, led by the
 * seed's figure (KVM's remote TLB flushes for NUMA balancing's
 * invalidations, a count over the window), then what those invalidations
 * zapped and covered, the refaults, and NUMA balancing's own counts.
 */
static const char *const numa_windows[] = { "steady" };
static const char *const numa_metrics[] = {
	"numa_kvm_flushes",
	"numa_sptes_zapped",
	"numa_invalidations",
	"numa_invalidated_pages",
	"numa_tlb_shootdowns",
	"refaults",
	"numa_pte_updates",
	"numa_hint_faults",
	"numa_pages_migrated",
	"guest_ops_per_s",
	"latency_p99_ns",
};

/*
 * uffd-restore runs (seed 003), by default: their fault-in window, led by
 * the counts that carry the seed's result under TCG (the restore's KVM
 * faults, the SPTEs prefetch installed, the handler's requests), then the
 * seed's time, the chunk and the pages lost.
 */
static const char *const uffd_restore_windows[] = { "fault-in" };
static const char *const uffd_restore_metrics[] = {
	"restore_pf_taken",
	"restore_pf_prefetched",
	"uffd_requests",
	"restore_pass_ms",
	"restore_pf_fixed",
	"uffd_woken",
	"restore_chunk_bytes",
	"restore_mismatches",
};

static const struct {
	const char *scenario;
	const char *const *windows; /* one window */
	const char *const *metrics;
	size_t n_metrics;
} scenario_defaults[] = {
	{ "dirty-log", dirty_log_windows, dirty_log_metrics, ARRAY_SIZE(dirty_log_metrics) },
	{ "postcopy-restore", dirty_log_windows, postcopy_metrics, ARRAY_SIZE(postcopy_metrics) },
	{ "numa-hinting", numa_windows, numa_metrics, ARRAY_SIZE(numa_metrics) },
	{ "uffd-restore", uffd_restore_windows, uffd_restore_metrics, ARRAY_SIZE(uffd_restore_metrics) },
};

static bool is_scenario(const struct compare_side *side, const char *name)
{
	struct json_object *sc = side->n_reports ? json_lookup(json_lookup(side->reports[0]->root, "spec"), "scenario") : NULL;

	return sc && json_object_is_type(sc, json_type_string) && !strcmp(json_object_get_string(sc), name);
}

/* The spec fields two runs must share to be compared (docs/compare.md). */
static const char *const comparable_fields[] = {
	"spec.scenario", "spec.vm.memory", "spec.vm.vcpus", "spec.guest", "spec.timing", "spec.dirty_log", "spec.postcopy",
	"spec.numa_hinting", "spec.uffd_restore",
};

#define MAX_DIFFS 64
#define MAX_VALUE_TEXT 200

const char *compare_verdict_name(enum compare_verdict v)
{
	switch (v) {
	case COMPARE_INSUFFICIENT_DATA:
		return "insufficient-data";
	case COMPARE_NO_CHANGE:
		return "no-change";
	case COMPARE_CHANGED:
		return "changed";
	case COMPARE_IMPROVED:
		return "improved";
	case COMPARE_REGRESSED:
		return "regressed";
	}
	return "?";
}

const char *compare_better_name(enum compare_better b)
{
	switch (b) {
	case COMPARE_BETTER_LOWER:
		return "lower";
	case COMPARE_BETTER_HIGHER:
		return "higher";
	case COMPARE_BETTER_NONE:
		return "none";
	}
	return "?";
}

void compare_options_init(struct compare_options *o)
{
	*o = (struct compare_options){
		.alpha = 0.05,
		.threshold_pct = 5.0,
		.windows = (char **)default_windows,
		.n_windows = ARRAY_SIZE(default_windows),
		.metrics = (char **)compare_default_metrics,
		.n_metrics = ARRAY_SIZE(compare_default_metrics),
		.bootstrap_iterations = STATS_BOOTSTRAP_ITERATIONS,
		.bootstrap_seed = STATS_BOOTSTRAP_SEED,
		.aa_split = COMPARE_AA_ALTERNATE,
	};
}

static void metric_free(struct compare_metric *m)
{
	free(m->window);
	free(m->name);
	free(m->unit);
	free(m->arm[0].values);
	free(m->arm[1].values);
	strv_free(m->notes);
}

static void diffs_free(struct compare_difference *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].field);
		free(d[i].value_a);
		free(d[i].value_b);
		free(d[i].report_a);
		free(d[i].report_b);
		free(d[i].where);
	}
	free(d);
}

void compare_result_free(struct compare_result *r)
{
	if (!r)
		return;
	diffs_free(r->diffs, r->n_diffs);
	for (size_t i = 0; i < r->n_metrics; i++)
		metric_free(&r->metrics[i]);
	free(r->metrics);
	for (size_t i = 0; i < r->n_skipped; i++) {
		free(r->skipped[i].window);
		free(r->skipped[i].name);
		free(r->skipped[i].reason);
	}
	free(r->skipped);
	strv_free(r->warnings);
	free(r);
}

/* ---- comparability ---- */

static struct json_object *json_path(struct json_object *root, const char *dotted)
{
	char buf[128], *save = NULL;
	struct json_object *o = root;

	snprintf(buf, sizeof(buf), "%s", dotted);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_lookup(o, k);
	return o;
}

static char *value_text(struct json_object *v, bool present)
{
	char out[MAX_VALUE_TEXT + 4];

	if (!present)
		return strdup("(absent)");
	text_sanitize(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
		      out, sizeof(out));
	return strdup(out);
}

struct diff_list {
	struct compare_difference *d;
	size_t n;
	size_t dropped;
};

static int diff_add(struct diff_list *l, const char *field, struct json_object *a, bool has_a,
		    struct json_object *b, bool has_b, const struct compare_report *ra,
		    const struct compare_report *rb, const char *where)
{
	_cleanup_free_ char *va = value_text(a, has_a), *vb = value_text(b, has_b);

	if (!va || !vb)
		return -ENOMEM;
	/* the same difference seen again through another report adds nothing */
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->d[i].field, field) && !strcmp(l->d[i].value_a, va) && !strcmp(l->d[i].value_b, vb) &&
		    !strcmp(l->d[i].where, where))
			return 0;
	if (l->n >= MAX_DIFFS) {
		l->dropped++;
		return 0;
	}
	struct compare_difference *nv = realloc(l->d, (l->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	l->d = nv;
	struct compare_difference *d = &l->d[l->n];
	*d = (struct compare_difference){
		.field = strdup(field),
		.value_a = TAKE_PTR(va),
		.value_b = TAKE_PTR(vb),
		.report_a = strdup(ra->id),
		.report_b = strdup(rb->id),
		.where = strdup(where),
	};
	l->n++;
	if (!d->field || !d->report_a || !d->report_b || !d->where)
		return -ENOMEM;
	return 0;
}

/* Metric names in natural order: latency_p50, p99, p999; numbers by value. */
static int cmp_metric_name(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* Names every leaf under field where a and b differ. */
static int diff_json(struct diff_list *l, const char *field, struct json_object *a, bool has_a,
		     struct json_object *b, bool has_b, const struct compare_report *ra,
		     const struct compare_report *rb, const char *where, int depth)
{
	if (has_a == has_b && json_object_equal(a, b))
		return 0;
	if (depth > 8 || !has_a || !has_b || !json_object_is_type(a, json_type_object) ||
	    !json_object_is_type(b, json_type_object))
		return diff_add(l, field, a, has_a, b, has_b, ra, rb, where);

	_cleanup_strv_free_ char **keys = NULL;
	size_t n;
	int r = 0;
	json_object_object_foreach(a, ka, va_)
	{
		(void)va_;
		if (strv_push(&keys, ka) < 0)
			r = -ENOMEM;
	}
	json_object_object_foreach(b, kb, vb_)
	{
		(void)vb_;
		if (!json_lookup(a, kb) && !json_object_object_get_ex(a, kb, NULL) && strv_push(&keys, kb) < 0)
			r = -ENOMEM;
	}
	strv_sort(keys);
	n = strv_length(keys);
	for (size_t i = 0; i < n && r >= 0; i++) {
		_cleanup_free_ char *sub = NULL;
		struct json_object *x = NULL, *y = NULL;
		bool hx = json_object_object_get_ex(a, keys[i], &x);
		bool hy = json_object_object_get_ex(b, keys[i], &y);

		if (asprintf(&sub, "%s.%s", field, keys[i]) < 0) {
			sub = NULL;
			r = -ENOMEM;
			break;
		}
		r = diff_json(l, sub, x, hx, y, hy, ra, rb, where, depth + 1);
	}
	return r;
}

static int diff_reports(struct diff_list *l, const struct compare_report *ra, const struct compare_report *rb,
			const char *where)
{
	if (ra == rb)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(comparable_fields); i++) {
		const char *f = comparable_fields[i];
		const char *last = strrchr(f, '.');
		_cleanup_free_ char *parent_path = strndup(f, (size_t)(last - f));
		if (!parent_path)
			return -ENOMEM;
		struct json_object *pa = json_path(ra->root, parent_path), *pb = json_path(rb->root, parent_path);
		struct json_object *a = NULL, *b = NULL;
		bool ha = pa && json_object_object_get_ex(pa, last + 1, &a);
		bool hb = pb && json_object_object_get_ex(pb, last + 1, &b);
		int r = diff_json(l, f, a, ha, b, hb, ra, rb, where, 0);
		if (r < 0)
			return r;
	}
	return 0;
}

/* accel.timing of report ra's arm la against rb's arm lb: native against emulated is a difference */
static int diff_timing(struct diff_list *l, const struct compare_report *ra, const char *la,
		       const struct compare_report *rb, const char *lb, const char *where)
{
	struct report_timing ta, tb;

	report_timing_of(ra->root, la, &ta);
	report_timing_of(rb->root, lb, &tb);
	if (ta.emulated == tb.emulated)
		return 0;
	_cleanup_json_ struct json_object *a = json_object_new_string(ta.emulated ? "emulated" : "native");
	_cleanup_json_ struct json_object *b = json_object_new_string(tb.emulated ? "emulated" : "native");
	if (!a || !b)
		return -ENOMEM;
	return diff_add(l, "accel.timing", a, true, b, true, ra, rb, where);
}

static int diff_side_timing(struct diff_list *l, const struct compare_side *ref_side, const struct compare_side *s,
			    size_t first, const char *where)
{
	int r = 0;

	for (size_t i = first; i < s->n_reports && r >= 0; i++)
		r = diff_timing(l, ref_side->reports[0], ref_side->label, s->reports[i], s->label, where);
	return r;
}

int compare_check_comparable(const struct compare_side *baseline, const struct compare_side *patched,
			     struct compare_difference **diffs, size_t *n_diffs, struct sb_error *err)
{
	struct diff_list l = { 0 };
	const struct compare_report *ref = baseline->reports[0];
	char where_base[64], where_patch[64], where_across[96];
	int r = 0;

	snprintf(where_base, sizeof(where_base), "within %s", baseline->role);
	snprintf(where_patch, sizeof(where_patch), "within %s", patched->role);
	snprintf(where_across, sizeof(where_across), "%s vs %s", baseline->role, patched->role);

	for (size_t i = 1; i < baseline->n_reports && r >= 0; i++)
		r = diff_reports(&l, ref, baseline->reports[i], where_base);
	for (size_t i = 0; i < patched->n_reports && r >= 0; i++)
		r = diff_reports(&l, ref, patched->reports[i], where_across);
	/* differences among the patched runs themselves, beyond those against the baseline */
	for (size_t i = 1; i < patched->n_reports && r >= 0; i++)
		if (patched->reports[i] != ref)
			r = diff_reports(&l, patched->reports[0], patched->reports[i], where_patch);
	/* a run under TCG against one under KVM: its times, rates and latencies are the emulator's */
	if (r >= 0)
		r = diff_side_timing(&l, baseline, baseline, 1, where_base);
	if (r >= 0)
		r = diff_side_timing(&l, baseline, patched, 0, where_across);
	if (r >= 0)
		r = diff_side_timing(&l, patched, patched, 1, where_patch);
	if (r < 0) {
		diffs_free(l.d, l.n);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	*diffs = l.d;
	*n_diffs = l.n;
	return 0;
}

/* ---- metrics ---- */

static bool is_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

static int collect_metric_names(const struct compare_side *const side[2], const char *window, char ***names,
				struct sb_error *err)
{
	size_t n = strv_length(*names);

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < side[s]->n_reps; i++) {
			struct json_object *w = json_lookup(json_lookup(side[s]->reps[i].rep, "windows"), window);
			static const char *const parts[] = { "metrics", "unavailable" };
			for (size_t k = 0; k < ARRAY_SIZE(parts); k++) {
				struct json_object *o = json_lookup(w, parts[k]);
				if (!o || !json_object_is_type(o, json_type_object))
					continue;
				json_object_object_foreach(o, key, val)
				{
					(void)val;
					if (strv_contains(*names, key))
						continue;
					if (n >= COMPARE_MAX_METRICS)
						return sb_error_set(err, -E2BIG, "run %s: more than %d metrics in window %s",
								    side[s]->reps[i].report->id, COMPARE_MAX_METRICS,
								    window);
					if (strv_push(names, key) < 0)
						return sb_error_set(err, -ENOMEM, "out of memory");
					n++;
				}
			}
		}
	if (n > 1)
		qsort(*names, n, sizeof(**names), cmp_metric_name);
	return 0;
}

/* metric_info[name], else metric_info[base name] for a per-cause variant. */
static struct json_object *find_metric_info(const struct compare_side *side, const char *name)
{
	char base[128];
	const char *dot = strchr(name, '.');

	snprintf(base, sizeof(base), "%.*s", dot ? (int)(dot - name) : (int)strlen(name), name);
	for (size_t i = 0; i < side->n_reports; i++) {
		struct json_object *mi = json_lookup(side->reports[i]->root, "metric_info");
		struct json_object *o = json_lookup(mi, name);
		if (!o && dot)
			o = json_lookup(mi, base);
		if (o && json_object_is_type(o, json_type_object))
			return o;
	}
	return NULL;
}

static enum compare_better parse_better(const char *s, bool *known)
{
	*known = true;
	if (s && !strcmp(s, "lower"))
		return COMPARE_BETTER_LOWER;
	if (s && !strcmp(s, "higher"))
		return COMPARE_BETTER_HIGHER;
	*known = s && !strcmp(s, "none");
	return COMPARE_BETTER_NONE;
}

static double threshold_for(const struct compare_options *o, const char *name)
{
	double t = o->threshold_pct;

	for (size_t i = 0; i < o->n_thresholds; i++)
		if (!fnmatch(o->thresholds[i].pattern, name, 0))
			t = o->thresholds[i].pct;
	return t;
}

/* The smallest equal number of repetitions per arm whose p floor reaches alpha. */
static size_t reps_needed(double alpha)
{
	for (size_t k = 1; k < 1000; k++)
		if (stats_mwu_p_floor(k, k) <= alpha)
			return k;
	return 1000;
}

static int add_skipped(struct compare_result *r, const char *window, const char *name, const char *reason,
		       bool recurs)
{
	struct compare_skipped *nv = realloc(r->skipped, (r->n_skipped + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	r->skipped = nv;
	struct compare_skipped *s = &r->skipped[r->n_skipped++];
	*s = (struct compare_skipped){ strdup(window), strdup(name), strdup(reason), recurs };
	return s->window && s->name && s->reason ? 0 : -ENOMEM;
}

/*
 * Whether name is a member of a family a report writes only once the member
 * counted something (mn_invalidations.CAUSE.event.EVENT and .flag.FLAG,
 * docs/report-format.md) and metrics has the family's total: then the
 * member counted nothing, 0, rather than not measured. A flag only a
 * patched kernel sets is compared against the baseline's 0 this way.
 */
static bool counted_none(struct json_object *metrics, const char *name)
{
	const char *cut = strstr(name, ".event.");
	struct json_object *total;
	char family[256];

	if (!cut)
		cut = strstr(name, ".flag.");
	if (!cut || strncmp(name, "mn_invalidations.", strlen("mn_invalidations.")) ||
	    (size_t)(cut - name) >= sizeof(family))
		return false;
	snprintf(family, sizeof(family), "%.*s", (int)(cut - name), name);
	total = json_lookup(metrics, family);
	return total && json_is_number(total);
}

/*
 * Values of one metric on one side; reason gets why a repetition had none,
 * *lasting whether every repetition without one lacks it for a reason of the
 * host or the run's kind (the report says it cannot be measured, or the
 * window is not there) rather than a null of that repetition's.
 */
static int side_values(const struct compare_side *side, const char *window, const char *name,
		       struct compare_arm_stats *a, char *reason, size_t reason_size, bool *lasting,
		       struct sb_error *err)
{
	a->values = calloc(side->n_reps ? side->n_reps : 1, sizeof(*a->values));
	if (!a->values)
		return sb_error_set(err, -ENOMEM, "out of memory");
	reason[0] = '\0';
	*lasting = true;
	for (size_t i = 0; i < side->n_reps; i++) {
		const struct compare_rep *rp = &side->reps[i];
		struct json_object *w = json_lookup(json_lookup(rp->rep, "windows"), window);
		struct json_object *metrics = json_lookup(w, "metrics");
		struct json_object *v = NULL;
		/* json-c gives NULL for a JSON null: present tells null from absent */
		bool present = metrics && json_object_object_get_ex(metrics, name, &v);

		if (present && json_is_number(v)) {
			double d = json_object_get_double(v);
			if (!isfinite(d))
				return sb_error_set(err, -EINVAL, "%s: repetition %lld, window %s, metric %s: not a "
						    "finite number", rp->report->path, (long long)rp->index, window, name);
			a->values[a->n++] = d;
			continue;
		}
		if (!present && counted_none(metrics, name)) {
			a->values[a->n++] = 0;
			continue;
		}
		if (present && v)
			return sb_error_set(err, -EINVAL, "%s: repetition %lld, window %s: metric %s is a %s, expected "
					    "a number or null", rp->report->path, (long long)rp->index, window, name,
					    json_type_to_name(json_object_get_type(v)));
		const char *why = json_lookup_string(json_lookup(w, "unavailable"), name);
		if (!why && w)
			*lasting = false;
		if (!why)
			why = !w ? "the repetition has no such window" : present ? "null" : "not measured";
		a->n_missing++;
		if (!reason[0])
			text_sanitize(why ? why : "not measured", reason, reason_size);
	}
	return 0;
}

/*
 * The headline metrics and their counters (summary.c's metric table): a row
 * of zeros there is worth explaining.
 */
static const struct {
	const char *metric, *counter;
} headline_metrics[] = {
	{ "pf_per_s", "kvm.pf_taken" },
	{ "tlb_per_s", "kvm.remote_tlb_flush" },
	{ "invalidations_per_s", "bpf.invalidations" },
};

static bool all_zero(const struct compare_arm_stats *a)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->values[i] != 0.0)
			return false;
	return a->n > 0;
}

/*
 * Why a headline metric is 0 in every repetition of both sides, from the
 * reports: the counter's source and the hosts' KVM. "" when not headline.
 */
static void zero_reason(const struct compare_result *res, const char *name, char *buf, size_t len)
{
	const char *counter = NULL, *source = NULL;
	char kvm[2][160] = { "", "" };

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(headline_metrics); i++)
		if (!strcmp(headline_metrics[i].metric, name))
			counter = headline_metrics[i].counter;
	if (!counter)
		return;
	for (int s = 0; s < 2; s++) {
		struct json_object *root = res->side[s]->n_reports ? res->side[s]->reports[0]->root : NULL;
		struct json_object *k = json_lookup(json_lookup(root, "host"), "kvm");

		if (!source)
			source = json_lookup_string(json_lookup(json_lookup(root, "probes"), counter), "source");
		if (k)
			snprintf(kvm[s], sizeof(kvm[s]), "%s, %s", json_lookup_string(k, "module") ?: "?",
				 json_lookup_string(k, "context") ?: "?");
	}
	snprintf(buf, len, "0 in every repetition of both sides: %s counted no event%s%s%s%s%s", source ?: counter,
		 kvm[0][0] ? " (host KVM: " : "", kvm[0], kvm[0][0] && kvm[1][0] && strcmp(kvm[0], kvm[1]) ? " vs " : "",
		 kvm[0][0] && kvm[1][0] && strcmp(kvm[0], kvm[1]) ? kvm[1] : "", kvm[0][0] ? ")" : "");
}

/* The counter metric name reads ("numa_kvm_flushes": bpf.kvm_remote_flush.numa-hinting), into buf; false if none. */
static bool metric_counter(const char *name, char *buf, size_t len)
{
	size_t n;
	const struct report_metric_def *defs = report_metric_defs(&n);

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(defs[i].name);

		if (!defs[i].family && !strcmp(defs[i].name, name)) {
			snprintf(buf, len, "%s", defs[i].counter);
			return true;
		}
		if (defs[i].family && !strncmp(defs[i].name, name, l) && name[l] == '.') {
			snprintf(buf, len, "%s.%s", defs[i].counter, name + l + 1);
			return true;
		}
	}
	return false;
}

/* A note for each side whose reports mark the metric's counter partial (the self-check, docs/report-format.md). */
static int partial_notes(const struct compare_result *res, const char *name, char ***notes)
{
	char counter[256];

	if (!metric_counter(name, counter, sizeof(counter)))
		return 0;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < res->side[s]->n_reports; i++) {
			struct json_object *p = json_lookup(json_lookup(res->side[s]->reports[i]->root, "probes"), counter);
			const char *partial = json_lookup_string(p, "partial");

			if (partial && strv_pushf(notes, "%s: %s is partial, not exact (run %s): %s", res->side[s]->role,
						  counter, res->side[s]->reports[i]->id, partial) < 0)
				return -ENOMEM;
		}
	return 0;
}

/* reps: the sides' repetition counts; when the metric has a value in every
 * repetition, the run-wide warning already explains a small n. */
static int decide(struct compare_metric *m, double alpha, const size_t reps[2])
{
	double magnitude = m->from_zero ? INFINITY : fabs(m->pct_change);
	int r = 0;

	if (m->mwu.p_floor > alpha) {
		m->verdict = COMPARE_INSUFFICIENT_DATA;
		if (m->arm[0].n != reps[0] || m->arm[1].n != reps[1])
			r = strv_pushf(&m->notes,
				       "n = %zu vs %zu: the exact Mann-Whitney U test cannot reach p <= %g with so few "
				       "values (smallest possible p %.3g); run at least %zu repetitions per arm",
				       m->arm[0].n, m->arm[1].n, alpha, m->mwu.p_floor, reps_needed(alpha));
	} else if (m->mwu.p > alpha) {
		m->verdict = COMPARE_NO_CHANGE;
	} else if (isnan(magnitude) || magnitude < m->threshold_pct) {
		m->verdict = COMPARE_NO_CHANGE;
		r = strv_pushf(&m->notes,
			       "significant (p = %.2g) but the change of medians (%+.1f%%) is within the %g%% threshold",
			       m->mwu.p, isnan(m->pct_change) ? 0.0 : m->pct_change, m->threshold_pct);
	} else {
		bool up = m->from_zero || m->pct_change > 0;
		switch (m->better) {
		case COMPARE_BETTER_LOWER:
			m->verdict = up ? COMPARE_REGRESSED : COMPARE_IMPROVED;
			break;
		case COMPARE_BETTER_HIGHER:
			m->verdict = up ? COMPARE_IMPROVED : COMPARE_REGRESSED;
			break;
		case COMPARE_BETTER_NONE:
			m->verdict = COMPARE_CHANGED;
			break;
		}
	}
	return r;
}

/* m's window, name, unit and direction, with the notes they need; 0 or -ENOMEM. */
static int metric_describe(struct compare_result *res, struct compare_metric *m, const char *window,
			   const char *name)
{
	bool known = true;

	if (!(m->window = strdup(window)) || !(m->name = strdup(name)))
		return -ENOMEM;
	struct json_object *info = find_metric_info(res->side[0], name);
	if (!info)
		info = find_metric_info(res->side[1], name);
	m->unit = strdup(json_lookup_string(info, "unit") ? json_lookup_string(info, "unit") : "");
	if (!m->unit)
		return -ENOMEM;
	m->better = parse_better(json_lookup_string(info, "better"), &known);
	if (!known && strv_pushf(&m->notes, "no direction (metric_info.better) in the reports: a change is "
				 "reported as changed, never as a regression") < 0)
		return -ENOMEM;
	struct json_object *pinfo = find_metric_info(res->side[1], name);
	if (info && pinfo && json_lookup_string(pinfo, "better") && json_lookup_string(info, "better") &&
	    strcmp(json_lookup_string(pinfo, "better"), json_lookup_string(info, "better")) &&
	    strv_pushf(&m->notes, "the reports disagree on the direction: %s side says better is %s; using %s",
		       res->side[1]->role, json_lookup_string(pinfo, "better"), compare_better_name(m->better)) < 0)
		return -ENOMEM;
	return 0;
}

/* The change of the medians: ratio and percent (a baseline of 0 noted); 0 or -ENOMEM. */
static int metric_change(struct compare_result *res, struct compare_metric *m)
{
	double b = m->arm[0].s.median, p = m->arm[1].s.median;

	if (b != 0.0) {
		m->ratio = p / b;
		m->pct_change = (m->ratio - 1.0) * 100.0;
	} else if (p == 0.0) {
		m->ratio = 1.0;
		m->pct_change = 0.0;
	} else {
		m->ratio = NAN;
		m->pct_change = NAN;
		m->from_zero = true;
		if (strv_pushf(&m->notes,
			       "the %s median is 0: the change has no ratio and counts as beyond any threshold",
			       res->side[0]->role) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The Mann-Whitney test and, where asked and small enough, the bootstrap interval; 0 or the statistics' errno. */
static int metric_tests(struct compare_result *res, struct compare_metric *m)
{
	int r;

	r = stats_mann_whitney(m->arm[0].values, m->arm[0].n, m->arm[1].values, m->arm[1].n, &m->mwu);
	if (r < 0)
		return r;
	if (res->opts.bootstrap_iterations && m->arm[0].n >= 2 && m->arm[1].n >= 2 &&
	    m->arm[0].n <= COMPARE_BOOTSTRAP_MAX_N && m->arm[1].n <= COMPARE_BOOTSTRAP_MAX_N) {
		r = stats_bootstrap_median_ratio(m->arm[0].values, m->arm[0].n, m->arm[1].values, m->arm[1].n,
						 res->opts.bootstrap_iterations, res->opts.bootstrap_seed,
						 1.0 - res->opts.alpha, &m->ci);
		if (r < 0)
			return r;
		m->have_ci = true;
	}
	return 0;
}

/* The metric's statistics, its test and its verdict, then the metric added to res (taken: freed on failure). */
static int finish_metric(struct compare_result *res, struct compare_metric *m, struct sb_error *err)
{
	int r;

	for (int s = 0; s < 2; s++) {
		r = stats_summarize(m->arm[s].values, m->arm[s].n, &m->arm[s].s);
		if (r < 0)
			goto fail_stats;
	}
	if (metric_change(res, m) < 0)
		goto oom;
	r = metric_tests(res, m);
	if (r < 0)
		goto fail_stats;
	m->threshold_pct = threshold_for(&res->opts, m->name);
	const size_t reps[2] = { res->side[0]->n_reps, res->side[1]->n_reps };
	/* a metric not judged keeps its statistics and direction, and gets "changed" for a change */
	enum compare_better better = m->better;
	if (m->unjudged)
		m->better = COMPARE_BETTER_NONE;
	r = decide(m, res->opts.alpha, reps);
	m->better = better;
	if (r < 0)
		goto oom;
	if (res->n_metrics >= COMPARE_MAX_METRICS) {
		metric_free(m);
		return sb_error_set(err, -E2BIG, "more than %d metrics; choose some with --metric", COMPARE_MAX_METRICS);
	}
	struct compare_metric *nv = realloc(res->metrics, (res->n_metrics + 1) * sizeof(*nv));
	if (!nv)
		goto oom;
	res->metrics = nv;
	res->metrics[res->n_metrics++] = *m;
	return 0;

fail_stats:
	metric_free(m);
	return sb_error_set(err, r, "%s in window %s: statistics failed: %s", m->name, m->window, strerror(-r));
oom:
	metric_free(m);
	return sb_error_set(err, -ENOMEM, "out of memory");
}

/* The rates of events KVM and the probes count exactly (and their causes): their count is a figure of its own. */
static bool counted_rate(const char *name)
{
	static const char *const rates[] = { "pf_per_s", "tlb_per_s", "invalidations_per_s" };
	size_t len = strcspn(name, ".");

	for (size_t i = 0; i < ARRAY_SIZE(rates); i++)
		if (strlen(rates[i]) == len && !strncmp(name, rates[i], len))
			return true;
	return false;
}

/* Per repetition with the rate: the events counted in the window, the rate times the window's duration. */
static int side_counts(const struct compare_side *side, const char *window, const char *name,
		       struct compare_arm_stats *a)
{
	a->values = calloc(side->n_reps ? side->n_reps : 1, sizeof(*a->values));
	if (!a->values)
		return -ENOMEM;
	for (size_t i = 0; i < side->n_reps; i++) {
		struct json_object *w = json_lookup(json_lookup(side->reps[i].rep, "windows"), window);
		struct json_object *v = json_lookup(json_lookup(w, "metrics"), name), *d = json_lookup(w, "duration_s");

		if (v && d && json_is_number(v) && json_is_number(d) &&
		    isfinite(json_object_get_double(v) * json_object_get_double(d)))
			a->values[a->n++] = round(json_object_get_double(v) * json_object_get_double(d));
		else
			a->n_missing++;
	}
	return 0;
}

/* Whether the counts are one figure in every repetition of both sides (within 1%): the workload fixes them. */
static bool counts_fixed(const struct compare_arm_stats c[2])
{
	double lo = INFINITY, hi = -INFINITY;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < c[s].n; i++) {
			lo = fmin(lo, c[s].values[i]);
			hi = fmax(hi, c[s].values[i]);
		}
	return c[0].n && c[1].n && hi > 0 && hi - lo <= 0.01 * hi;
}

/*
 * The count row of a rate that gets no verdict: "invalidations_per_s.X"
 * becomes "invalidations_count.X", compared as counts are, with the rate's
 * direction; counts (arm values) taken.
 */
static int add_count_metric(struct compare_result *res, const struct compare_metric *rate,
			    struct compare_arm_stats counts[2], struct sb_error *err)
{
	struct compare_metric c = { .better = rate->better };
	const char *dot = strchr(rate->name, '.');
	size_t len = dot ? (size_t)(dot - rate->name) : strlen(rate->name);

	c.window = strdup(rate->window);
	c.unit = strdup("1");
	if (asprintf(&c.name, "%.*s_count%s", (int)(len - strlen("_per_s")), rate->name, dot ? dot : "") < 0)
		c.name = NULL;
	c.arm[0] = counts[0];
	c.arm[1] = counts[1];
	counts[0] = counts[1] = (struct compare_arm_stats){ 0 };
	c.count_of_rate = true;
	if (!c.window || !c.unit || !c.name ||
	    strv_pushf(&c.notes, "the events counted in the window (%s x duration_s), compared in place of the "
		       "rate's verdict", rate->name) < 0) {
		metric_free(&c);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	return finish_metric(res, &c, err);
}

/* Why m gets no better/worse verdict (and a note saying so), or NULL; counts[] the rate's counts, if any. */
static const char *unjudged_reason(const struct compare_result *res, struct compare_metric *m,
				   const struct compare_arm_stats counts[2])
{
	if (m->emulated && !res->opts.verdict_on_emulated) {
		if (strv_pushf(&m->notes, "timing emulated: no better/worse verdict for a time, rate or latency "
			       "measured under TCG%s; --verdict-on-emulated gives one",
			       counts[0].n ? " (its count is compared below)" : "") < 0)
			return NULL;
		return "emulated";
	}
	if (counts[0].n && counts_fixed(counts) && !res->opts.verdict_on_fixed_count) {
		if (strv_pushf(&m->notes, "the count is %.0f in every repetition of both sides (within 1%%): the "
			       "workload fixes it, and the rate only measures the window's length; no better/worse "
			       "verdict (--verdict-on-fixed-count gives one), the count compared below",
			       counts[0].values[0]) < 0)
			return NULL;
		return "fixed count";
	}
	return NULL;
}

static int compute_metric(struct compare_result *res, const char *window, const char *name,
			  struct sb_error *err)
{
	struct compare_metric m = { 0 };
	struct compare_arm_stats counts[2] = { 0 };
	char reason[2][256];
	bool lasting[2];
	int r;

	for (int s = 0; s < 2; s++) {
		r = side_values(res->side[s], window, name, &m.arm[s], reason[s], sizeof(reason[s]), &lasting[s], err);
		if (r < 0)
			goto fail;
	}
	if (m.arm[0].n == 0 || m.arm[1].n == 0) {
		char why[600];
		int s = m.arm[0].n == 0 ? 0 : 1;
		snprintf(why, sizeof(why), "no values on the %s side%s%s", res->side[s]->role,
			 reason[s][0] ? ": " : "", reason[s]);
		metric_free(&m);
		/* the baseline, the reference every commit is held against, cannot have it */
		return add_skipped(res, window, name, why, s == 0 && lasting[0]) < 0
			       ? sb_error_set(err, -ENOMEM, "out of memory") : 0;
	}
	if (metric_describe(res, &m, window, name) < 0)
		goto oom;
	for (int s = 0; s < 2; s++)
		if (m.arm[s].n_missing &&
		    strv_pushf(&m.notes, "%s: %zu of %zu repetitions %s no value (%s)", res->side[s]->role,
			       m.arm[s].n_missing, m.arm[s].n + m.arm[s].n_missing, m.arm[s].n_missing == 1 ? "has" : "have",
			       reason[s]) < 0)
			goto oom;
	if (all_zero(&m.arm[0]) && all_zero(&m.arm[1])) {
		char why[600];

		zero_reason(res, name, why, sizeof(why));
		if (why[0] && strv_push(&m.notes, why) < 0)
			goto oom;
	}
	if (partial_notes(res, name, &m.notes) < 0)
		goto oom;
	m.emulated = (res->emulated[0] || res->emulated[1]) && report_metric_time_based(name, m.unit);
	if (counted_rate(name) && (side_counts(res->side[0], window, name, &counts[0]) < 0 ||
				   side_counts(res->side[1], window, name, &counts[1]) < 0))
		goto oom;
	if (!counts[0].n || !counts[1].n)
		counts[0].n = counts[1].n = 0;
	m.unjudged = unjudged_reason(res, &m, counts);
	bool add_count = m.unjudged && counts[0].n;
	struct compare_metric rate = m; /* its name and window stay valid: finish_metric() keeps them in res */
	r = finish_metric(res, &m, err);
	if (r >= 0 && add_count)
		r = add_count_metric(res, &rate, counts, err);
	free(counts[0].values);
	free(counts[1].values);
	return r;

oom:
	r = sb_error_set(err, -ENOMEM, "out of memory");
fail:
	metric_free(&m);
	free(counts[0].values);
	free(counts[1].values);
	return r;
}

/*
 * The report's name of a metric written as the tables print it: "pf/s" is
 * pf_per_s, "latency p99" and "latency_p99" latency_p99_ns, "p99.9" p999,
 * "invalidations/s (uffd-wp)" invalidations_per_s.uffd-wp. NULL when none
 * of names reads so.
 */
static const char *printed_name(const char *pat, char *const *names, size_t n)
{
	static const char *const units[] = { "", "_ns", "_ms", "_s", "_per_s" };
	char base[128] = "", cause[128] = "", want[300];
	const char *paren = strstr(pat, " (");
	size_t j = 0, len = paren ? (size_t)(paren - pat) : strlen(pat);

	if (paren && pat[strlen(pat) - 1] == ')')
		snprintf(cause, sizeof(cause), ".%.*s", (int)(strlen(paren) - 3), paren + 2);
	for (size_t i = 0; i < len && j + 8 < sizeof(base); i++) {
		if (!strncmp(pat + i, "/s", 2) && i + 2 == len) {
			memcpy(base + j, "_per_s", 6);
			j += 6;
			i++;
		} else if (!strncmp(pat + i, "p99.9", 5)) {
			memcpy(base + j, "p999", 4);
			j += 4;
			i += 4;
		} else {
			base[j++] = pat[i] == ' ' ? '_' : pat[i];
		}
	}
	base[j] = '\0';
	for (size_t u = 0; u < ARRAY_SIZE(units); u++) {
		bool rate = j >= 6 && !strcmp(base + j - 6, "_per_s");
		snprintf(want, sizeof(want), "%s%s%s", base, rate ? "" : units[u], cause);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(names[i], want))
				return names[i];
	}
	return NULL;
}

/* --metric PAT matches nothing: the error names the one it is a slip of, and the metrics there. */
static int no_such_metric(const char *pat, const char *window, char *const *names, size_t n, struct sb_error *err)
{
	const char *near = closest_word(pat, (const char *const *)names, n);
	struct strbuf b = { 0 };
	char shown[1024], near_shown[128] = "";

	for (size_t i = 0; i < n && i < 12; i++)
		strbuf_appendf(&b, "%s%s", i ? ", " : "", names[i]);
	if (n > 12)
		strbuf_appendf(&b, " and %zu more", n - 12);
	_cleanup_free_ char *list = strbuf_steal(&b);
	text_sanitize(list && *list ? list : "(none)", shown, sizeof(shown));
	if (near)
		text_sanitize(near, near_shown, sizeof(near_shown));
	return sb_error_set(err, -EINVAL, "--metric %s: no such metric in window %s of the selected runs%s%s%s; "
			    "there: %s (a name as the tables print it, such as pf/s or latency p99, works too)", pat,
			    window, near ? " (did you mean " : "", near_shown, near ? "?)" : "", shown);
}

/*
 * A window no repetition of either side has (--window migration on
 * background-snapshot runs) is a mistake in the request, not a metric
 * without values: refused, naming the windows the runs have.
 */
static int check_window_present(const struct compare_result *res, const char *window, struct sb_error *err)
{
	_cleanup_strv_free_ char **have = NULL;

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < res->side[s]->n_reps; i++) {
			struct json_object *ws = json_lookup(res->side[s]->reps[i].rep, "windows");
			if (json_lookup(ws, window))
				return 0;
			if (!json_object_is_type(ws, json_type_object))
				continue;
			json_object_object_foreach(ws, key, val)
			{
				(void)val;
				if (!strv_contains(have, key) && strv_length(have) < 16 && strv_push(&have, key) < 0)
					return sb_error_set(err, -ENOMEM, "out of memory");
			}
		}
	struct strbuf b = { 0 };
	for (size_t i = 0; have && have[i]; i++)
		strbuf_appendf(&b, "%s%s", i ? ", " : "", have[i]);
	_cleanup_free_ char *list = strbuf_steal(&b);
	char shown[512], scenario[64];
	text_sanitize(list && *list ? list : "none", shown, sizeof(shown));
	text_sanitize(json_lookup_string(json_lookup(res->side[0]->reports[0]->root, "spec"), "scenario") ?: "?",
		      scenario, sizeof(scenario));
	return sb_error_set(err, -EINVAL, "--window %s: no repetition of the selected runs (scenario %s) has this "
			    "window; they have %s", window, scenario, shown);
}

static int compute_window(struct compare_result *res, const char *window, struct sb_error *err)
{
	_cleanup_strv_free_ char **names = NULL;
	bool *taken = NULL;
	size_t n;
	int r;

	r = check_window_present(res, window, err);
	if (r < 0)
		return r;
	r = collect_metric_names(res->side, window, &names, err);
	if (r < 0)
		goto out;
	n = strv_length(names);
	taken = calloc(n ? n : 1, sizeof(*taken));
	if (!taken) {
		r = sb_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t p = 0; p < res->opts.n_metrics; p++) {
		const char *pat = res->opts.metrics[p];
		size_t matched = 0;

		for (size_t i = 0; i < n; i++) {
			if (fnmatch(pat, names[i], 0))
				continue;
			matched++;
			if (taken[i])
				continue;
			taken[i] = true;
			r = compute_metric(res, window, names[i], err);
			if (r < 0)
				goto out;
		}
		if (matched)
			continue;
		const char *as_printed = res->opts.metrics_explicit ? printed_name(pat, names, n) : NULL;
		if (as_printed) { /* "pf/s", "latency p99": the name the tables print for it */
			size_t i = 0;
			while (names[i] != as_printed)
				i++;
			if (!taken[i]) {
				taken[i] = true;
				r = compute_metric(res, window, names[i], err);
				if (r < 0)
					goto out;
			}
			continue;
		}
		if (res->opts.metrics_explicit) {
			r = no_such_metric(pat, window, names, n, err);
			goto out;
		}
		if (!is_glob(pat) && add_skipped(res, window, pat, "not in the reports", true) < 0) {
			r = sb_error_set(err, -ENOMEM, "out of memory");
			goto out;
		}
	}
	r = 0;
out:
	free(taken);
	return r;
}

static bool sides_overlap(const struct compare_side *a, const struct compare_side *b)
{
	for (size_t i = 0; i < a->n_reps; i++)
		for (size_t j = 0; j < b->n_reps; j++)
			if (a->reps[i].rep == b->reps[j].rep)
				return true;
	return false;
}

/* Adds a warning unless the same text is already there (both sides scan
 * the same store and may note the same broken run). */
static int add_warning(struct compare_result *r, const char *fmt, ...) _printf_(2, 3);
static int add_warning(struct compare_result *r, const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		s = NULL;
		return -ENOMEM;
	}
	if (strv_contains(r->warnings, s))
		return 0;
	return strv_push(&r->warnings, s);
}

static enum compare_verdict overall(const struct compare_result *r)
{
	bool any[5] = { false };

	for (size_t i = 0; i < r->n_metrics; i++)
		any[r->metrics[i].verdict] = true;
	if (any[COMPARE_REGRESSED])
		return COMPARE_REGRESSED;
	if (any[COMPARE_IMPROVED])
		return COMPARE_IMPROVED;
	if (any[COMPARE_NO_CHANGE] || any[COMPARE_CHANGED])
		return COMPARE_NO_CHANGE;
	return COMPARE_INSUFFICIENT_DATA;
}

static bool has_timing_diff(const struct compare_result *res)
{
	for (size_t i = 0; i < res->n_diffs; i++)
		if (!strcmp(res->diffs[i].field, "accel.timing"))
			return true;
	return false;
}

/* Whether any report of side s ran its repetitions of the side's arm with emulated timing. */
static bool side_emulated(const struct compare_side *s)
{
	for (size_t i = 0; i < s->n_reports; i++) {
		struct report_timing t;
		report_timing_of(s->reports[i]->root, s->label, &t);
		if (t.emulated)
			return true;
	}
	return false;
}

/* The options and sides compare can work with at all. */
static int check_request(const struct compare_side *baseline, const struct compare_side *patched,
			 const struct compare_options *opts, struct sb_error *err)
{
	if (!(opts->alpha > 0.0 && opts->alpha < 1.0))
		return sb_error_set(err, -EINVAL, "--alpha %g: must be between 0 and 1 (e.g. 0.05)", opts->alpha);
	if (!(opts->threshold_pct >= 0.0) || !isfinite(opts->threshold_pct))
		return sb_error_set(err, -EINVAL, "--threshold %g: must be a percentage >= 0 (e.g. 5)",
				    opts->threshold_pct);
	if (!baseline->n_reports || !patched->n_reports || !baseline->n_reps || !patched->n_reps)
		return sb_error_set(err, -ENODATA, "nothing to compare: the %s side has no completed repetition",
				    !baseline->n_reps || !baseline->n_reports ? baseline->role : patched->role);
	if (!opts->aa && sides_overlap(baseline, patched))
		return sb_error_set(err, -EINVAL, "--baseline %s and --patched %s select the same repetitions "
				    "(label '%s'); for a noise floor use --aa %s", baseline->selector,
				    patched->selector, baseline->label, baseline->selector);
	return 0;
}

/* The defaults are the snapshot's: a scenario with its own window has its own (the sides share a scenario). */
static void apply_scenario_defaults(struct compare_result *res, const struct compare_side *baseline,
				    const struct compare_options *opts)
{
	for (size_t i = 0; i < ARRAY_SIZE(scenario_defaults); i++) {
		const typeof(scenario_defaults[0]) *d = &scenario_defaults[i];
		if (!is_scenario(baseline, d->scenario))
			continue;
		if (opts->windows == (char **)default_windows) {
			res->opts.windows = (char **)d->windows;
			res->opts.n_windows = 1;
		}
		if (opts->metrics == (char **)compare_default_metrics) {
			res->opts.metrics = (char **)d->metrics;
			res->opts.n_metrics = d->n_metrics;
		}
	}
}

/* A difference's value as a reader takes it: a size in bytes as "256 MiB" (the JSON's 268435456 otherwise). */
static const char *diff_value(const char *field, const char *json, char *buf, size_t size)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	size_t flen = strlen(field);
	char *end;

	if (!(strstr(field, "memory") || (flen > 6 && !strcmp(field + flen - 6, "_bytes"))))
		return json;
	errno = 0;
	unsigned long long v = strtoull(json, &end, 10);
	if (errno || end == json || *end || v == 0 || json[0] == '-')
		return json;
	size_t u = 0;
	while (u + 1 < ARRAY_SIZE(units) && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%llu %s", v, units[u]);
	return buf;
}

/* Runs that differ: refused with each difference named, or with --force compared with a warning for each. */
static int check_differences(struct compare_result *res, struct sb_error *err)
{
	if (res->n_diffs && !res->opts.force) {
		struct strbuf b = { 0 };
		strbuf_appendf(&b, "the runs are not comparable:");
		for (size_t i = 0; i < res->n_diffs && i < 8; i++) {
			const struct compare_difference *d = &res->diffs[i];
			char va[48], vb[48];
			strbuf_appendf(&b, " %s differs (%s): %s in run %s, %s in run %s;", d->field, d->where,
				    diff_value(d->field, d->value_a, va, sizeof(va)), d->report_a,
				    diff_value(d->field, d->value_b, vb, sizeof(vb)), d->report_b);
		}
		if (res->n_diffs > 8)
			strbuf_appendf(&b, " and %zu more;", res->n_diffs - 8);
		if (has_timing_diff(res))
			strbuf_appendf(&b, " a run under TCG (emulated timing: its times, rates and latencies are QEMU's "
				    "emulator's, its counts the kernel's own) against one under KVM;");
		strbuf_appendf(&b, " compare runs of the same scenario, VM size, guest workload, timing and "
			    "accelerator, or pass --force to compare them anyway");
		_cleanup_free_ char *msg = strbuf_steal(&b);
		return sb_error_set(err, -EINVAL, "%s", msg ? msg : "the runs are not comparable");
	}
	for (size_t i = 0; i < res->n_diffs; i++) {
		const struct compare_difference *d = &res->diffs[i];
		char va[48], vb[48];
		if (add_warning(res, "compared despite a difference (--force): %s (%s): %s in run %s, %s in run %s",
				d->field, d->where, diff_value(d->field, d->value_a, va, sizeof(va)), d->report_a,
				diff_value(d->field, d->value_b, vb, sizeof(vb)), d->report_b) < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* The sides' notes, and too few repetitions for any metric to reach significance, as warnings. */
static int add_side_warnings(struct compare_result *res)
{
	const struct compare_side *baseline = res->side[0], *patched = res->side[1];

	for (int s = 0; s < 2; s++)
		for (size_t i = 0; res->side[s]->notes && res->side[s]->notes[i]; i++)
			if ((!strncmp(res->side[s]->notes[i], "skipped ", 8)
				     ? add_warning(res, "%s", res->side[s]->notes[i])
				     : add_warning(res, "%s: %s", res->side[s]->role, res->side[s]->notes[i])) < 0)
				return -ENOMEM;

	double floor = stats_mwu_p_floor(baseline->n_reps, patched->n_reps);
	if (floor > res->opts.alpha &&
	    add_warning(res, "%zu vs %zu repetitions: no metric can reach significance at alpha %g (smallest "
			"possible p %.3g); run at least %zu repetitions per arm", baseline->n_reps, patched->n_reps,
			res->opts.alpha, floor, reps_needed(res->opts.alpha)) < 0)
		return -ENOMEM;
	return 0;
}

int compare_compute(const struct compare_side *baseline, const struct compare_side *patched,
		    const struct compare_options *opts, struct compare_result **out, struct sb_error *err)
{
	struct compare_result *res;
	int r;

	r = check_request(baseline, patched, opts, err);
	if (r < 0)
		return r;
	res = calloc(1, sizeof(*res));
	if (!res)
		return sb_error_set(err, -ENOMEM, "out of memory");
	res->opts = *opts;
	res->side[0] = baseline;
	res->side[1] = patched;
	res->emulated[0] = side_emulated(baseline);
	res->emulated[1] = side_emulated(patched);
	apply_scenario_defaults(res, baseline, opts);

	r = compare_check_comparable(baseline, patched, &res->diffs, &res->n_diffs, err);
	if (r >= 0)
		r = check_differences(res, err);
	if (r < 0)
		goto fail;
	if (add_side_warnings(res) < 0)
		goto oom;
	for (size_t w = 0; w < res->opts.n_windows; w++) {
		r = compute_window(res, res->opts.windows[w], err);
		if (r < 0)
			goto fail;
	}
	if (res->n_metrics == 0 &&
	    add_warning(res, "no metric had values on both sides in the chosen windows") < 0)
		goto oom;

	res->verdict = overall(res);
	res->exit_code = res->verdict == COMPARE_REGRESSED ? COMPARE_EXIT_REGRESSION : COMPARE_EXIT_OK;
	*out = res;
	return 0;

oom:
	r = sb_error_set(err, -ENOMEM, "out of memory");
fail:
	compare_result_free(res);
	return r;
}
