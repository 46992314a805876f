// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * compare's rules on small reports built here: verdict directions, zero
 * medians, thresholds, A/A splits, comparability, selection errors, bounds,
 * number formatting and SVG escaping. The golden tests (tests/compare/) cover
 * whole outputs; this covers the corners.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compare.h"
#include "json-util.h"
#include "store-index.h"
#include "strv.h"
#include "svg.h"
#include "timing.h"

static char tmpdir[] = "/tmp/test-compare.XXXXXX";

struct metric_spec {
	const char *name;
	const char *better; /* NULL: no metric_info entry */
	double v[8];        /* NAN: null in that repetition */
};

/* A one-arm run report with n repetitions and the given snapshot metrics. */
static char *write_report(const char *file, const char *id, const char *label, size_t n,
			  const struct metric_spec *ms, size_t n_ms, const char *pattern)
{
	struct json_object *root = json_object_new_object(), *spec = json_object_new_object();
	struct json_object *vm = json_object_new_object(), *guest = json_object_new_object();
	struct json_object *timing = json_object_new_object(), *info = json_object_new_object();
	struct json_object *arms = json_object_new_array(), *reps = json_object_new_array();
	struct json_object *arm = json_object_new_object();
	char *path;

	json_object_object_add(root, "schema", json_object_new_string("snapbench.run/1"));
	json_object_object_add(root, "id", json_object_new_string(id));
	json_object_object_add(root, "state", json_object_new_string("completed"));
	json_object_object_add(spec, "scenario", json_object_new_string("background-snapshot"));
	json_object_object_add(vm, "memory", json_object_new_int64(268435456));
	json_object_object_add(vm, "vcpus", json_object_new_int(2));
	json_object_object_add(spec, "vm", vm);
	json_object_object_add(guest, "kind", json_object_new_string("micro"));
	if (pattern)
		json_object_object_add(guest, "pattern", json_object_new_string(pattern));
	json_object_object_add(spec, "guest", guest);
	json_object_object_add(timing, "pre_s", json_object_new_int(3));
	json_object_object_add(spec, "timing", timing);
	json_object_object_add(root, "spec", spec);
	for (size_t m = 0; m < n_ms; m++) {
		if (!ms[m].better)
			continue;
		struct json_object *mi = json_object_new_object();
		json_object_object_add(mi, "unit", json_object_new_string("1/s"));
		json_object_object_add(mi, "better", json_object_new_string(ms[m].better));
		json_object_object_add(info, ms[m].name, mi);
	}
	json_object_object_add(root, "metric_info", info);
	json_object_object_add(arm, "label", json_object_new_string(label));
	json_object_array_add(arms, arm);
	json_object_object_add(root, "arms", arms);
	for (size_t i = 0; i < n; i++) {
		struct json_object *rep = json_object_new_object(), *wins = json_object_new_object();
		struct json_object *snap = json_object_new_object(), *metrics = json_object_new_object();
		struct json_object *unavail = json_object_new_object();
		json_object_object_add(rep, "index", json_object_new_int((int)i));
		json_object_object_add(rep, "arm", json_object_new_string(label));
		json_object_object_add(rep, "state", json_object_new_string("completed"));
		for (size_t m = 0; m < n_ms; m++) {
			if (isnan(ms[m].v[i])) {
				json_object_object_add(metrics, ms[m].name, NULL);
				json_object_object_add(unavail, ms[m].name, json_object_new_string("probe missing"));
			} else {
				json_object_object_add(metrics, ms[m].name, json_object_new_double(ms[m].v[i]));
			}
		}
		json_object_object_add(snap, "metrics", metrics);
		json_object_object_add(snap, "unavailable", unavail);
		json_object_object_add(wins, "snapshot", snap);
		json_object_object_add(rep, "windows", wins);
		json_object_array_add(reps, rep);
	}
	json_object_object_add(root, "repetitions", reps);

	CHECK(asprintf(&path, "%s/%s", tmpdir, file) > 0);
	CHECK(json_object_to_file(path, root) == 0);
	json_object_put(root);
	return path;
}

static int unlink_at(const char *dir, const char *name)
{
	_cleanup_free_ char *path = NULL;

	CHECK(asprintf(&path, "%s/%s", dir, name) > 0);
	return unlink(path);
}

struct fixture {
	struct compare_pool pool;
	struct compare_side base, patch;
	struct compare_result *res;
};

static void fixture_done(struct fixture *f)
{
	compare_result_free(f->res);
	compare_side_done(&f->base);
	compare_side_done(&f->patch);
	compare_pool_done(&f->pool);
}

static int run(struct fixture *f, const char *a, const char *b, const struct compare_options *o,
	       struct sb_error *err)
{
	*f = (struct fixture){ 0 };
	CHECK(compare_select(&f->pool, "baseline", a, NULL, 0, NULL, &f->base, err) == 0);
	CHECK(compare_select(&f->pool, "patched", b, NULL, 0, NULL, &f->patch, err) == 0);
	return compare_compute(&f->base, &f->patch, o, &f->res, err);
}

static const struct compare_metric *find(const struct compare_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].name, name))
			return &r->metrics[i];
	return NULL;
}

/* Default options over every metric of the reports. */
static void options_all_metrics(struct compare_options *o)
{
	static char *all[] = { "*" };

	compare_options_init(o);
	o->metrics = all;
	o->n_metrics = 1;
}

static void test_verdicts(void)
{
	const struct metric_spec base[] = {
		{ "pf_per_s", "lower", { 100, 101, 102, 103, 104 } },
		{ "guest_ops_per_s", "higher", { 100, 101, 102, 103, 104 } },
		{ "latency_samples", "none", { 100, 101, 102, 103, 104 } },
		{ "tlb_per_s", "lower", { 0, 0, 0, 0, 0 } },
		{ "exits_per_s", "lower", { 0, 0, 0, 0, 0 } },
		{ "same_per_s", "lower", { 7, 7, 7, 7, 7 } },
		{ "small_per_s", "lower", { 100, 101, 102, 103, 104 } },
		{ "invalidations_per_s", "lower", { 50, 51, 52, 53, 54 } },
		{ "invalidations_per_s.uffd-wp", NULL, { 50, 51, 52, 53, 54 } },
		{ "nodir_per_s", NULL, { 1, 2, 3, 4, 5 } },
	};
	const struct metric_spec patch[] = {
		{ "pf_per_s", "lower", { 200, 201, 202, 203, 204 } },        /* up: regressed */
		{ "guest_ops_per_s", "higher", { 200, 201, 202, 203, 204 } }, /* up: improved */
		{ "latency_samples", "none", { 200, 201, 202, 203, 204 } },   /* no direction: changed */
		{ "tlb_per_s", "lower", { 1, 2, 1, 2, 1 } },                  /* from 0 */
		{ "exits_per_s", "lower", { 0, 0, 0, 0, 0 } },                /* 0 vs 0 */
		{ "same_per_s", "lower", { 7, 7, 7, 7, 7 } },                 /* identical */
		{ "small_per_s", "lower", { 105, 106, 107, 108, 109 } },      /* +4.9%: under 5% */
		{ "invalidations_per_s", "lower", { 20, 21, 22, 23, 24 } },
		{ "invalidations_per_s.uffd-wp", NULL, { 20, 21, 22, 23, 24 } }, /* direction from the base name */
		{ "nodir_per_s", NULL, { 10, 20, 30, 40, 50 } },
	};
	_cleanup_free_ char *a = write_report("v-a.json", "20261101T000000Z-000001", "a", 5, base, ARRAY_SIZE(base), "w");
	_cleanup_free_ char *b = write_report("v-b.json", "20261101T000000Z-000002", "b", 5, patch, ARRAY_SIZE(patch), "w");
	struct compare_options o;
	struct sb_error err = { 0 };
	struct fixture f;
	const struct compare_metric *m;

	options_all_metrics(&o);
	CHECK_MSG(run(&f, a, b, &o, &err) == 0, "%s", err.msg);

	m = find(f.res, "pf_per_s");
	CHECK(m && m->verdict == COMPARE_REGRESSED && fabs(m->pct_change - 98.0392156863) < 1e-6);
	CHECK(m->mwu.p < 0.008 && m->have_ci);
	m = find(f.res, "guest_ops_per_s");
	CHECK(m && m->verdict == COMPARE_IMPROVED && m->better == COMPARE_BETTER_HIGHER);
	m = find(f.res, "latency_samples");
	CHECK(m && m->verdict == COMPARE_CHANGED);
	m = find(f.res, "tlb_per_s");
	CHECK(m && m->from_zero && isnan(m->ratio) && isnan(m->pct_change) && m->verdict == COMPARE_REGRESSED);
	m = find(f.res, "exits_per_s");
	CHECK(m && m->ratio == 1.0 && m->pct_change == 0.0 && m->verdict == COMPARE_NO_CHANGE && m->mwu.p == 1.0);
	CHECK(strv_length(m->notes) == 0); /* not a headline metric: its zeros need no note */
	m = find(f.res, "same_per_s");
	CHECK(m && m->verdict == COMPARE_NO_CHANGE && m->mwu.p == 1.0 && m->mwu.ties);
	m = find(f.res, "small_per_s");
	CHECK(m && m->verdict == COMPARE_NO_CHANGE && m->mwu.p < 0.05 && strv_length(m->notes) == 1 &&
	      strstr(m->notes[0], "within the 5% threshold"));
	m = find(f.res, "invalidations_per_s.uffd-wp");
	CHECK(m && m->better == COMPARE_BETTER_LOWER && m->verdict == COMPARE_IMPROVED);
	m = find(f.res, "nodir_per_s");
	CHECK(m && m->better == COMPARE_BETTER_NONE && m->verdict == COMPARE_CHANGED && strv_length(m->notes) == 1);
	CHECK(f.res->verdict == COMPARE_REGRESSED && f.res->exit_code == COMPARE_EXIT_REGRESSION);
	fixture_done(&f);

	/* per-metric thresholds: the last match wins */
	struct compare_threshold th[] = { { "*_per_s", 100 }, { "pf_*", 50 } };
	o.thresholds = th;
	o.n_thresholds = ARRAY_SIZE(th);
	CHECK(run(&f, a, b, &o, &err) == 0);
	m = find(f.res, "pf_per_s");
	CHECK(m->threshold_pct == 50 && m->verdict == COMPARE_REGRESSED);
	m = find(f.res, "guest_ops_per_s");
	CHECK(m->threshold_pct == 100 && m->verdict == COMPARE_NO_CHANGE); /* +98%: under 100 */
	CHECK(find(f.res, "tlb_per_s")->verdict == COMPARE_REGRESSED);    /* from 0 beats any threshold */
	fixture_done(&f);
	o.n_thresholds = 0;

	/* a stricter alpha that 5 vs 5 cannot reach */
	o.alpha = 0.005;
	CHECK(run(&f, a, b, &o, &err) == 0);
	CHECK(find(f.res, "pf_per_s")->verdict == COMPARE_INSUFFICIENT_DATA);
	CHECK(f.res->verdict == COMPARE_INSUFFICIENT_DATA && f.res->exit_code == COMPARE_EXIT_OK);
	CHECK(strv_length(f.res->warnings) == 1 && strstr(f.res->warnings[0], "at least 6 repetitions"));
	fixture_done(&f);
}

/* A headline metric that is 0 in every repetition of both sides says why, from the reports. */
static void test_zero_headline(void)
{
	const struct metric_spec zeros[] = { { "pf_per_s", "lower", { 0, 0, 0, 0, 0 } } };
	_cleanup_free_ char *a = write_report("z-a.json", "20261101T000000Z-000011", "a", 5, zeros, 1, "w");
	_cleanup_free_ char *b = write_report("z-b.json", "20261101T000000Z-000012", "b", 5, zeros, 1, "w");
	struct compare_options o;
	struct sb_error err = { 0 };
	struct fixture f;
	const struct compare_metric *m;

	options_all_metrics(&o);
	CHECK_MSG(run(&f, a, b, &o, &err) == 0, "%s", err.msg);
	m = find(f.res, "pf_per_s");
	CHECK(m && m->verdict == COMPARE_NO_CHANGE && strv_length(m->notes) == 1);
	CHECK_MSG(!strcmp(m->notes[0], "0 in every repetition of both sides: kvm.pf_taken counted no event"), "%s",
		  m->notes[0]);
	fixture_done(&f);
}

/*
 * A counter the run's self-check marked partial (probes' "partial",
 * reports/selfcheck.h): the metric that reads it, and the run's warnings,
 * say so with the numbers.
 */
static void test_partial_counter(void)
{
	const struct metric_spec faults[] = { { "kvm_page_faults_per_s", "lower", { 5, 6, 5, 6, 5 } } };
	_cleanup_free_ char *a = write_report("p-a.json", "20261101T000000Z-000021", "a", 5, faults, 1, "w");
	_cleanup_free_ char *b = write_report("p-b.json", "20261101T000000Z-000022", "b", 5, faults, 1, "w");
	const char *partial = "repetition 2: bpf.page_fault counted 52 of the 86 page faults KVM counted (kvm.pf_taken)";
	struct json_object *root = json_object_from_file(a), *probes = json_object_new_object();
	struct json_object *p = json_object_new_object();
	struct compare_options o;
	struct sb_error err = { 0 };
	struct fixture f;
	const struct compare_metric *m;
	bool noted = false, warned = false;

	CHECK(root);
	json_object_object_add(p, "available", json_object_new_boolean(true));
	json_object_object_add(p, "source", json_object_new_string("kvm:kvm_page_fault"));
	json_object_object_add(p, "backend", json_object_new_string("tp_btf"));
	json_object_object_add(p, "partial", json_object_new_string(partial));
	json_object_object_add(probes, "bpf.page_fault", p);
	json_object_object_add(root, "probes", probes);
	CHECK(json_object_to_file(a, root) == 0);
	json_object_put(root);

	options_all_metrics(&o);
	CHECK_MSG(run(&f, a, b, &o, &err) == 0, "%s", err.msg);
	m = find(f.res, "kvm_page_faults_per_s");
	CHECK(m);
	for (size_t i = 0; m->notes && m->notes[i]; i++)
		noted |= strstr(m->notes[i], "baseline: bpf.page_fault is partial, not exact") && strstr(m->notes[i], partial);
	for (size_t i = 0; f.res->warnings && f.res->warnings[i]; i++)
		warned |= strstr(f.res->warnings[i], "bpf.page_fault is partial, not exact: ") &&
			  strstr(f.res->warnings[i], "52 of the 86");
	CHECK_MSG(noted, "no partial note on kvm_page_faults_per_s (%zu notes)", strv_length(m->notes));
	CHECK_MSG(warned, "no partial warning (%zu warnings)", strv_length(f.res->warnings));
	fixture_done(&f);
	CHECK(unlink_at(tmpdir, "p-a.json") == 0 && unlink_at(tmpdir, "p-b.json") == 0);
}

static void test_small_and_missing(void)
{
	const struct metric_spec one[] = { { "pf_per_s", "lower", { 100 } } };
	const struct metric_spec four[] = { { "pf_per_s", "lower", { 1, 2, NAN, NAN } } };
	_cleanup_free_ char *a = write_report("s-a.json", "20261101T000000Z-000003", "a", 1, one, 1, "w");
	_cleanup_free_ char *b = write_report("s-b.json", "20261101T000000Z-000004", "b", 4, four, 1, "w");
	struct compare_options o;
	struct sb_error err = { 0 };
	struct fixture f;

	compare_options_init(&o);
	o.bootstrap_iterations = 0;
	CHECK(run(&f, a, b, &o, &err) == 0);
	const struct compare_metric *m = find(f.res, "pf_per_s");
	/* n = 1: no spread, no bootstrap, and never significant */
	CHECK(m && m->arm[0].n == 1 && isnan(m->arm[0].s.stddev) && !m->have_ci);
	CHECK(m->arm[1].n == 2 && m->arm[1].n_missing == 2);
	CHECK(m->verdict == COMPARE_INSUFFICIENT_DATA && m->mwu.p_floor > 0.6);
	bool noted = false;
	for (size_t i = 0; m->notes && m->notes[i]; i++)
		noted |= strstr(m->notes[i], "2 of 4 repetitions have no value (probe missing)") != NULL;
	CHECK(noted);
	CHECK(f.res->verdict == COMPARE_INSUFFICIENT_DATA);
	/* default metrics not in the reports are listed as skipped */
	CHECK(f.res->n_skipped == 6);
	fixture_done(&f);

	/* a metric null everywhere on one side is skipped with its reason */
	const struct metric_spec nulls[] = { { "pf_per_s", "lower", { NAN, NAN, NAN, NAN } } };
	_cleanup_free_ char *c = write_report("s-c.json", "20261101T000000Z-000005", "c", 4, nulls, 1, "w");
	CHECK(run(&f, a, c, &o, &err) == 0);
	CHECK(f.res->n_metrics == 0 && f.res->verdict == COMPARE_INSUFFICIENT_DATA);
	bool skipped = false;
	for (size_t i = 0; i < f.res->n_skipped; i++)
		skipped |= !strcmp(f.res->skipped[i].name, "pf_per_s") &&
			   strstr(f.res->skipped[i].reason, "patched side: probe missing");
	CHECK(skipped);
	fixture_done(&f);
}

/*
 * A member of mn_invalidations' event and flag families is written only once
 * it counted something: absent beside its family's total it is 0 (a flag only
 * the patched kernel sets is "from 0"); absent without the total it is not
 * measured.
 */
static void test_counted_none(void)
{
	const struct metric_spec base[] = {
		{ "mn_invalidations.uffd-wp", "lower", { 100, 100, 100, 100 } },
	};
	const struct metric_spec patched[] = {
		{ "mn_invalidations.uffd-wp", "lower", { 100, 100, 100, 100 } },
		{ "mn_invalidations.uffd-wp.flag.bit1", "lower", { 99, 99, 99, 99 } },
		{ "mn_invalidations.thp.flag.bit1", "lower", { 5, 5, 5, 5 } },
	};
	_cleanup_free_ char *a = write_report("cn-a.json", "20261101T000000Z-000031", "a", 4, base, 1, "w");
	_cleanup_free_ char *b = write_report("cn-b.json", "20261101T000000Z-000032", "b", 4, patched, 3, "w");
	struct compare_options o;
	struct sb_error err = { 0 };
	struct fixture f;

	options_all_metrics(&o);
	o.bootstrap_iterations = 0;
	CHECK(run(&f, a, b, &o, &err) == 0);
	const struct compare_metric *m = find(f.res, "mn_invalidations.uffd-wp.flag.bit1");
	CHECK_MSG(m && m->arm[0].n == 4 && m->arm[0].s.median == 0 && m->arm[1].s.median == 99, "%s",
		  m ? "wrong values" : "not compared");
	/* no mn_invalidations.thp total on the baseline side: not measured there, skipped */
	CHECK(!find(f.res, "mn_invalidations.thp.flag.bit1"));
	bool skipped = false;
	for (size_t i = 0; i < f.res->n_skipped; i++)
		skipped |= !strcmp(f.res->skipped[i].name, "mn_invalidations.thp.flag.bit1");
	CHECK(skipped);
	fixture_done(&f);
}

static void test_comparability(void)
{
	const struct metric_spec ms[] = { { "pf_per_s", "lower", { 1, 2, 3, 4 } } };
	_cleanup_free_ char *a = write_report("c-a.json", "20261101T000000Z-000006", "a", 4, ms, 1, "write64");
	_cleanup_free_ char *b = write_report("c-b.json", "20261101T000000Z-000007", "b", 4, ms, 1, NULL);
	struct compare_options o;
	struct sb_error err = { 0 };
	struct fixture f;

	compare_options_init(&o);
	CHECK(run(&f, a, b, &o, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "spec.guest.pattern differs (baseline vs patched): \"write64\" in run "
			 "20261101T000000Z-000006, (absent) in run 20261101T000000Z-000007"), "%s", err.msg);
	CHECK(strstr(err.msg, "--force"));
	fixture_done(&f);

	o.force = true;
	CHECK(run(&f, a, b, &o, &err) == 0);
	CHECK(f.res->n_diffs == 1 && !strcmp(f.res->diffs[0].field, "spec.guest.pattern"));
	CHECK(strv_length(f.res->warnings) >= 1 && strstr(f.res->warnings[0], "--force"));
	fixture_done(&f);

	/* the same repetitions on both sides */
	o.force = false;
	f = (struct fixture){ 0 };
	CHECK(compare_select(&f.pool, "baseline", a, NULL, 0, NULL, &f.base, &err) == 0);
	CHECK(compare_select(&f.pool, "patched", a, NULL, 0, NULL, &f.patch, &err) == 0);
	CHECK(f.pool.n == 1); /* loaded once */
	CHECK(compare_compute(&f.base, &f.patch, &o, &f.res, &err) == -EINVAL && strstr(err.msg, "--aa"));
	fixture_done(&f);
}

/* A report's timing: accel.timing, else an older report's kernel arms under TCG, else native; which metrics it marks. */
static void test_timing(void)
{
	struct report_timing t;
	_cleanup_json_ struct json_object *plain = json_tokener_parse("{\"arms\": [{\"label\": \"a\"}]}");
	_cleanup_json_ struct json_object *accel = json_tokener_parse(
		"{\"accel\": {\"guest\": \"kvm\", \"host_vm\": \"tcg\", \"timing\": \"emulated\", \"reason\": \"no /dev/kvm\"},"
		" \"arms\": [{\"label\": \"a\", \"kernel\": {\"host_vm\": {\"accel\": \"kvm\"}}}]}");
	_cleanup_json_ struct json_object *native = json_tokener_parse(
		"{\"accel\": {\"guest\": \"kvm\", \"host_vm\": null, \"timing\": \"native\", \"reason\": \"KVM\"},"
		" \"arms\": [{\"label\": \"a\", \"kernel\": {\"host_vm\": {\"accel\": \"tcg\"}}}]}");
	_cleanup_json_ struct json_object *old = json_tokener_parse(
		"{\"arms\": [{\"label\": \"k\", \"kernel\": {\"host_vm\": {\"accel\": \"kvm\"}}},"
		" {\"label\": \"t\", \"kernel\": {\"host_vm\": {\"accel\": \"tcg\"}}}]}");

	CHECK(plain && accel && native && old);
	report_timing_of(plain, NULL, &t);
	CHECK(!t.emulated && !strcmp(t.source, "none recorded"));
	report_timing_of(accel, "a", &t);
	CHECK(t.emulated && !strcmp(t.source, "accel.timing") && !strcmp(t.why, "no /dev/kvm"));
	/* accel.timing wins over what the arms say */
	report_timing_of(native, NULL, &t);
	CHECK(!t.emulated);
	report_timing_of(old, "k", &t);
	CHECK(!t.emulated);
	report_timing_of(old, "t", &t);
	CHECK(t.emulated && !strcmp(t.source, "arms[].kernel.host_vm.accel") && strstr(t.why, "arm t"));
	report_timing_of(old, NULL, &t);
	CHECK(t.emulated);

	CHECK(report_metric_time_based("pf_per_s", "1/s"));
	CHECK(report_metric_time_based("invalidations_per_s.uffd-wp", NULL));
	CHECK(report_metric_time_based("latency_p99_ns", "ns"));
	CHECK(report_metric_time_based("fault_pass_ms", "ms"));
	CHECK(report_metric_time_based("iteration_s", NULL));
	CHECK(report_metric_time_based("clear_log_ns_per_iteration", "ns"));
	CHECK(!report_metric_time_based("latency_samples", "1"));
	CHECK(!report_metric_time_based("numa_kvm_flushes", "1"));
	CHECK(!report_metric_time_based("postcopy_chunk_bytes", "B"));
	CHECK(!report_metric_time_based("tlb_per_iteration", NULL));
}

static void test_aa_split(void)
{
	const struct metric_spec ms[] = { { "pf_per_s", "lower", { 0, 1, 2, 3, 4, 5, 6 } } };
	_cleanup_free_ char *a = write_report("aa.json", "20261101T000000Z-000008", "a", 7, ms, 1, "w");
	struct compare_pool pool = { 0 };
	struct compare_side all, x, y;
	struct sb_error err = { 0 };

	CHECK(compare_select(&pool, "aa", a, NULL, 0, NULL, &all, &err) == 0);
	CHECK(compare_split_aa(&all, COMPARE_AA_ALTERNATE, &x, &y, &err) == 0);
	CHECK(x.n_reps == 4 && y.n_reps == 3);
	for (size_t i = 0; i < x.n_reps; i++)
		CHECK(x.reps[i].index == (int64_t)(2 * i));
	for (size_t i = 0; i < y.n_reps; i++)
		CHECK(y.reps[i].index == (int64_t)(2 * i + 1));
	CHECK(!strcmp(x.role, "A") && !strcmp(y.role, "B") && !strcmp(x.label, "a"));
	compare_side_done(&x);
	compare_side_done(&y);
	CHECK(compare_split_aa(&all, COMPARE_AA_HALVES, &x, &y, &err) == 0);
	CHECK(x.n_reps == 4 && y.n_reps == 3 && x.reps[3].index == 3 && y.reps[0].index == 4);
	compare_side_done(&x);
	compare_side_done(&y);
	all.n_reps = 1;
	CHECK(compare_split_aa(&all, COMPARE_AA_HALVES, &x, &y, &err) == -EINVAL && strstr(err.msg, "at least 2"));
	compare_side_done(&all);
	compare_pool_done(&pool);
}

static void write_text(const char *name, const char *text, char **path)
{
	FILE *f;

	CHECK(asprintf(path, "%s/%s", tmpdir, name) > 0);
	f = fopen(*path, "w");
	CHECK(f);
	fputs(text, f);
	fclose(f);
}

static void test_bad_inputs(void)
{
	struct compare_pool pool = { 0 };
	struct compare_report *rep;
	struct compare_side side;
	struct sb_error err = { 0 };
	_cleanup_free_ char *deep = NULL, *trunc = NULL, *trailing = NULL, *noreps = NULL, *p = NULL;
	char buf[300];

	/* nesting beyond COMPARE_JSON_MAX_DEPTH */
	memset(buf, '[', 200);
	buf[200] = '\0';
	write_text("deep.json", buf, &deep);
	CHECK(compare_pool_load(&pool, deep, &rep, &err) == -EINVAL && strstr(err.msg, "nested deeper"));
	write_text("trunc.json", "{\"schema\": \"snapbench.run/1\", ", &trunc);
	CHECK(compare_pool_load(&pool, trunc, &rep, &err) == -EINVAL && strstr(err.msg, "truncated"));
	write_text("trailing.json", "{} {}", &trailing);
	CHECK(compare_pool_load(&pool, trailing, &rep, &err) == -EINVAL && strstr(err.msg, "trailing data"));
	write_text("noreps.json", "{\"schema\": \"snapbench.run/1\", \"id\": \"x\", \"state\": \"completed\", "
		   "\"spec\": {}, \"metric_info\": {}, \"arms\": []}", &noreps);
	CHECK(compare_pool_load(&pool, noreps, &rep, &err) == -EINVAL && strstr(err.msg, "\"repetitions\""));
	CHECK(compare_pool_load(&pool, tmpdir, &rep, &err) < 0 && strstr(err.msg, "without a readable report.json"));
	CHECK(pool.n == 0);

	/* selectors */
	CHECK(compare_select(&pool, "baseline", "", NULL, 0, NULL, &side, &err) == -EINVAL);
	CHECK(compare_select(&pool, "baseline", "label=a,label=b", NULL, 0, "/nonexistent", &side, &err) == -EINVAL &&
	      strstr(err.msg, "more than one label"));
	CHECK(compare_select(&pool, "baseline", "bogus", NULL, 0, NULL, &side, &err) == -EINVAL &&
	      strstr(err.msg, "neither label="));
	CHECK(compare_select(&pool, "baseline", "id=..", NULL, 0, "/tmp", &side, &err) == -EINVAL);
	CHECK(compare_select(&pool, "baseline", "id=x", NULL, 0, NULL, &side, &err) == -EINVAL &&
	      strstr(err.msg, "--store"));
	CHECK(compare_select(&pool, "baseline", "label=a", NULL, 0, "/nonexistent/store", &side, &err) == -ENOENT &&
	      strstr(err.msg, "/nonexistent/store"));

	/* a store: run directories are scanned, other entries ignored */
	const struct metric_spec ms[] = { { "pf_per_s", "lower", { 1, 2 } } };
	CHECK(asprintf(&p, "%s/store", tmpdir) > 0);
	CHECK(mkdir(p, 0755) == 0);
	_cleanup_free_ char *r1 = NULL, *d1 = NULL;
	CHECK(asprintf(&d1, "%s/store/20261101T000000Z-00000a", tmpdir) > 0);
	CHECK(mkdir(d1, 0755) == 0);
	r1 = write_report("store/20261101T000000Z-00000a/report.json", "20261101T000000Z-00000a", "lbl", 2, ms, 1, "w");
	CHECK(compare_select(&pool, "baseline", "label=lbl", NULL, 0, p, &side, &err) == 0);
	CHECK(side.n_reps == 2 && side.n_reports == 1 && !strcmp(side.label, "lbl"));
	compare_side_done(&side);
	CHECK(compare_select(&pool, "baseline", "id=20261101T000000Z-00000a", NULL, 0, p, &side, &err) == 0);
	CHECK(side.n_reps == 2 && pool.n == 1);
	compare_side_done(&side);
	CHECK(compare_select(&pool, "baseline", "label=other", NULL, 0, p, &side, &err) == -ENOENT &&
	      strstr(err.msg, "no run with an arm labelled 'other'"));
	compare_pool_done(&pool);
	unlink(r1);
	rmdir(d1);
	CHECK(unlink_at(p, STORE_INDEX_FILE) == 0); /* the scan by label wrote it */
	rmdir(p);
	unlink(deep);
	unlink(trunc);
	unlink(trailing);
	unlink(noreps);
}

/* The store's label index: a scan by label loads only the runs that have it, once the index knows them. */
static void test_store_index(void)
{
	static const char *const ids[] = { "20261102T000000Z-00000a", "20261102T000000Z-00000b",
					   "20261102T000000Z-00000c" };
	static const char *const labels[] = { "a", "b", "c" };
	const struct metric_spec ms[] = { { "pf_per_s", "lower", { 1, 2 } } };
	_cleanup_free_ char *store = NULL;
	char *files[3] = {}, *dirs[3] = {};
	struct compare_pool pool = { 0 };
	struct compare_side side = { 0 };
	struct sb_error err = { 0 };

	CHECK(asprintf(&store, "%s/ix-store", tmpdir) > 0);
	CHECK(mkdir(store, 0755) == 0);
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		_cleanup_free_ char *rel = NULL;
		CHECK(asprintf(&dirs[i], "%s/%s", store, ids[i]) > 0);
		CHECK(mkdir(dirs[i], 0755) == 0);
		CHECK(asprintf(&rel, "ix-store/%s/report.json", ids[i]) > 0);
		files[i] = write_report(rel, ids[i], labels[i], 2, ms, 1, "w");
	}

	/* no index yet: every run is loaded, and the index written */
	CHECK(compare_select(&pool, "baseline", "label=a", NULL, 0, store, &side, &err) == 0);
	CHECK_MSG(pool.n_parsed == 3, "%zu reports loaded", pool.n_parsed);
	CHECK_MSG(pool.n == 1, "%zu reports kept, the selection has 1", pool.n); /* the others dropped */
	compare_side_done(&side);
	compare_pool_done(&pool);

	/* with it: only run a's report */
	CHECK(compare_select(&pool, "baseline", "label=a", NULL, 0, store, &side, &err) == 0);
	CHECK_MSG(pool.n_parsed == 1 && side.n_reps == 2, "%zu reports loaded, %zu repetitions", pool.n_parsed, side.n_reps);
	compare_side_done(&side);
	compare_pool_done(&pool);

	/* a rewritten report (another size) is not what its entry describes: loaded again */
	char *again = write_report(strstr(files[1], "ix-store/"), ids[1], "a", 1, ms, 1, "w");
	free(again);
	CHECK(compare_select(&pool, "baseline", "label=a", NULL, 0, store, &side, &err) == 0);
	CHECK_MSG(pool.n_parsed == 2 && side.n_reports == 2, "%zu reports loaded, %zu used", pool.n_parsed, side.n_reports);
	compare_side_done(&side);
	compare_pool_done(&pool);

	/* an index that does not parse is no index: every run is loaded */
	_cleanup_free_ char *ixpath = NULL;
	CHECK(asprintf(&ixpath, "%s/%s", store, STORE_INDEX_FILE) > 0);
	FILE *f = fopen(ixpath, "w");
	CHECK(f && fputs("{\"schema\": \"snapbench.store-index/1\", \"runs\": [", f) >= 0 && fclose(f) == 0);
	CHECK(compare_select(&pool, "baseline", "label=c", NULL, 0, store, &side, &err) == 0);
	CHECK_MSG(pool.n_parsed == 3 && side.n_reports == 1, "%zu reports loaded, %zu used", pool.n_parsed, side.n_reports);
	compare_side_done(&side);
	compare_pool_done(&pool);

	CHECK(unlink(ixpath) == 0);
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
		CHECK(unlink_at(dirs[i], "report.json") == 0);
		CHECK(rmdir(dirs[i]) == 0);
		free(files[i]);
		free(dirs[i]);
	}
	CHECK(rmdir(store) == 0);
}

static void test_format(void)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{ 950015, "950,015" }, { 1004353.4, "1,004,353" }, { 94, "94" },     { 0.1, "0.1" },
		{ 0.3333, "0.33" },    { 12.25, "12.2" },          { 2.5, "2.5" },   { 0, "0" },
		{ -0.0, "0" },         { -1440, "-1,440" },        { 100, "100" },   { 999.6, "1,000" },
		{ NAN, "n/a" },        { 1e300, "n/a" },           { 0.0004, "0.0004" },
		/* what a report may hold but no run measures: n/a, not 100,000,000P */
		{ 1e23, "n/a" },       { -1e308, "n/a" },          { 1e18, "n/a" },  { 2e15, "2e+15" },
	};
	char buf[64];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		compare_format_number(cases[i].v, buf, sizeof(buf));
		CHECK_MSG(!strcmp(buf, cases[i].want), "%g -> %s, want %s", cases[i].v, buf, cases[i].want);
	}
}

/* The ratio column, a change near -100%, and the time units of tables and plots. */
static void test_change_ratio_units(void)
{
	static const struct {
		double ratio, pct;
		bool from_zero;
		const char *change, *ratio_text;
	} cases[] = {
		{ 1.0 / 14400, (1.0 / 14400 - 1) * 100, false, "1/14,400x", "1/14,400x" },
		{ 0.002635, -99.7365, false, "1/380x", "1/380x" },
		{ 0.263, -73.7, false, "1/3.80x", "0.263x" },
		{ 0.5, -50, false, "-50.0%", "0.500x" },
		{ 0.765, -23.5, false, "-23.5%", "0.765x" },
		{ 0.0, -100, false, "-100%", "0x" },
		{ 1.0, 0, false, "0.0%", "1.00x" },
		{ 1.022, 2.2, false, "+2.2%", "1.02x" },
		{ 2.0, 100, false, "+100.0%", "2.00x" },
		{ 2.52, 152, false, "2.52x", "2.52x" },
		{ 14400, 1439900, false, "14,400x", "14,400x" },
		{ NAN, NAN, true, "from 0", "n/a" },
		{ 0.00001, -99.999, false, "1/100,000x", "1/100,000x" },
	};
	char buf[80];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct compare_metric m = { .ratio = cases[i].ratio, .pct_change = cases[i].pct,
					    .from_zero = cases[i].from_zero };
		compare_format_change(&m, buf, sizeof(buf));
		CHECK_MSG(!strcmp(buf, cases[i].change), "change %g -> %s, want %s", cases[i].pct, buf, cases[i].change);
		compare_format_ratio(&m, buf, sizeof(buf));
		CHECK_MSG(!strcmp(buf, cases[i].ratio_text), "ratio %g -> %s, want %s", cases[i].ratio, buf,
			  cases[i].ratio_text);
	}

	static const struct {
		const char *name, *unit;
		double magnitude, mult;
		const char *want;
	} units[] = {
		{ "latency_p99_ns", "ns", 19789, 1e-3, "\xc2\xb5s" },
		{ "latency_p50_ns", "ns", 340, 1, "ns" },
		{ "latency_p999_ns", "ns", 5.87e6, 1e-6, "ms" },
		{ "latency_max_ns", "", 2.5e9, 1e-9, "s" },          /* unit from the name */
		{ "snapshot_duration_s", "s", 0.25, 1e3, "ms" },
		{ "snapshot_duration_s", "s", 2.4, 1, "s" },
		{ "latency_p99_ns", "ns", 0, 1, "ns" },              /* nothing to scale by */
		{ "pf_per_s", "1/s", 950015, 1, NULL },              /* not a time */
		{ "x", "us", 1500, 1e-3, "ms" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		struct compare_scale sc = compare_time_scale(units[i].name, units[i].unit, units[i].magnitude);
		CHECK_MSG(fabs(sc.mult - units[i].mult) < 1e-12 * units[i].mult &&
			  (units[i].want ? sc.unit && !strcmp(sc.unit, units[i].want) : !sc.unit),
			  "%s %g %s -> %g %s", units[i].name, units[i].magnitude, units[i].unit, sc.mult,
			  sc.unit ? sc.unit : "(none)");
	}
	compare_metric_label("latency_p99_ns", &(struct compare_scale){ 1e-3, "\xc2\xb5s" }, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "latency p99 (\xc2\xb5s)"), "%s", buf);
	compare_metric_label("latency_p999_ns", NULL, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "latency p99.9 (ns)"), "%s", buf);
	compare_metric_label("invalidations_per_s.uffd-wp", &(struct compare_scale){ 1, NULL }, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "invalidations/s (uffd-wp)"), "%s", buf);
	compare_format_median_range(19.789, 16.885, 20.2, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "19.8 (16.9 20.2)"), "%s", buf);

	/* each figure in its own unit, never "(ms) 0.0011"; full digits at any width; the range left out when min == max */
	struct compare_metric lat = { .name = "latency_p999_ns", .unit = "ns" };
	compare_format_value(&lat, 1.2e6, false, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "1.2ms"), "%s", buf);
	compare_format_value(&lat, 1100, false, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "1.1\xc2\xb5s"), "%s", buf);
	compare_format_value(&lat, 1100, true, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "1.1us"), "%s", buf);
	compare_format_value(&lat, 340, false, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "340ns"), "%s", buf);
	struct compare_metric pf = { .name = "pf_per_s", .unit = "1/s" };
	static const struct {
		double v;
		const char *full;
	} nums[] = { { 950015, "950,015" }, { 1004353, "1,004,353" }, { 9999, "9,999" }, { 65000, "65,000" },
		     { 999600, "999,600" }, { -12345, "-12,345" }, { 0.3, "0.3" } };
	for (size_t i = 0; i < ARRAY_SIZE(nums); i++) {
		compare_format_value(&pf, nums[i].v, false, buf, sizeof(buf));
		CHECK_MSG(!strcmp(buf, nums[i].full), "%g -> %s", nums[i].v, buf);
	}
	pf.arm[0].s = (struct stats_summary){ .median = 41, .min = 41, .max = 41 };
	compare_format_side(&pf, 0, false, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "41"), "%s", buf);
	pf.arm[0].s = (struct stats_summary){ .median = 950015, .min = 901000, .max = 990000 };
	compare_format_side(&pf, 0, false, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "950,015 (901,000 990,000)"), "%s", buf);
	/* the interval in the change's form */
	struct compare_metric ci = { .ratio = 0.263, .pct_change = -73.7, .have_ci = true,
				     .ci = { .low = 0.206, .high = 0.308 } };
	compare_format_ci(&ci, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "[1/4.85x 1/3.25x]"), "%s", buf);
	ci = (struct compare_metric){ .ratio = 0.765, .pct_change = -23.5, .have_ci = true,
				      .ci = { .low = 0.7, .high = 0.8 } };
	compare_format_ci(&ci, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, "[-30.0% -20.0%]"), "%s", buf);
	ci.have_ci = false;
	compare_format_ci(&ci, buf, sizeof(buf));
	CHECK_MSG(!strcmp(buf, ""), "%s", buf);
}

/* Metrics 0 everywhere leave the Markdown (named on a line) unless show_all; the order of its parts. */
static void test_markdown_zero_metrics(void)
{
	const struct metric_spec base[] = {
		{ "pf_per_s", "lower", { 100, 101, 102, 103, 104 } },
		{ "exits_per_s", "lower", { 0, 0, 0, 0, 0 } },
	};
	const struct metric_spec patch[] = {
		{ "pf_per_s", "lower", { 100, 101, 102, 103, 104 } },
		{ "exits_per_s", "lower", { 0, 0, 0, 0, 0 } },
	};
	_cleanup_free_ char *a = write_report("m-a.json", "20261101T000000Z-000021", "a", 5, base, 2, "w");
	_cleanup_free_ char *b = write_report("m-b.json", "20261101T000000Z-000022", "b", 5, patch, 2, "w");
	struct compare_options o;
	struct sb_error err = { 0 };
	struct fixture f;

	options_all_metrics(&o);
	CHECK_MSG(run(&f, a, b, &o, &err) == 0, "%s", err.msg);
	CHECK(f.res->n_metrics == 2);
	const struct compare_metric *m = find(f.res, "exits_per_s");
	CHECK(m && compare_metric_all_zero(m) && !compare_metric_all_zero(find(f.res, "pf_per_s")));
	_cleanup_free_ char *md = compare_format_markdown(f.res, COMPARE_MD_PLOTS | COMPARE_MD_TIMELINE);
	_cleanup_free_ char *txt = compare_format_table(f.res, NULL);
	CHECK(md && txt);
	CHECK_MSG(!strstr(md, "| exits/s |") && strstr(md, "(`--all` keeps them): exits/s.\n"), "%s", md);
	CHECK_MSG(strstr(md, "[pf/s](snapshot-pf_per_s.svg)") && !strstr(md, "exits_per_s.svg"), "%s", md);
	/* the text table folds them alike: one line naming them, no row */
	CHECK_MSG(!strstr(txt, "  exits/s ") && strstr(txt, "(--all keeps them): exits/s.\n"), "%s", txt);
	/* the kernels before the table, the notes folded after the plots */
	const char *kernel = strstr(md, "Kernel: "), *table = strstr(md, "| pf/s |"), *plots = strstr(md, "**Plots**");
	CHECK_MSG(kernel && table && plots && kernel < table && table < plots, "%s", md);
	fixture_done(&f);

	o.show_all = true;
	CHECK(run(&f, a, b, &o, &err) == 0);
	_cleanup_free_ char *md_all = compare_format_markdown(f.res, 0);
	CHECK_MSG(md_all && strstr(md_all, "| exits/s |") && !strstr(md_all, "--all") && !strstr(md_all, "**Plots**"),
		  "%s", md_all);
	_cleanup_free_ char *txt_all = compare_format_table(f.res, NULL);
	CHECK_MSG(txt_all && strstr(txt_all, "  exits/s ") && !strstr(txt_all, "--all"), "%s", txt_all);
	CHECK(compare_metric_shown(f.res, 0) && compare_metric_shown(f.res, 1));
	fixture_done(&f);
}

static void test_svg_escape(void)
{
	struct svg s;
	char *out;

	CHECK(svg_begin(&s, 10, 10, "a<b & \"c\" 'd'") == 0);
	svg_text(&s, 1, 1, "start", 10, "black", "%s", "x</text><script>\x01\xc3\xa9");
	out = svg_end(&s);
	CHECK(out);
	CHECK(strstr(out, "<title>a&lt;b &amp; &quot;c&quot; &apos;d&apos;</title>"));
	CHECK(strstr(out, ">x&lt;/text&gt;&lt;script&gt;?" "?" "?</text>"));
	CHECK(!strstr(out, "<script>"));
	free(out);
	CHECK(svg_begin(&s, 10, 10, "") == 0);
	svg_text(&s, 1, 1, "start", 10, "black", "p99 (\xc2\xb5s) \xc2\xa0");
	out = svg_end(&s);
	CHECK(out && strstr(out, ">p99 (&#181;s) ?" "?</text>"));
	free(out);
}

int main(void)
{
	CHECK(mkdtemp(tmpdir));
	test_verdicts();
	test_zero_headline();
	test_partial_counter();
	test_small_and_missing();
	test_counted_none();
	test_comparability();
	test_timing();
	test_aa_split();
	test_bad_inputs();
	test_store_index();
	test_format();
	test_change_ratio_units();
	test_markdown_zero_metrics();
	test_svg_escape();

	/* remove what the tests wrote */
	static const char *const files[] = { "v-a.json", "v-b.json", "s-a.json", "s-b.json", "s-c.json",
					     "c-a.json", "c-b.json", "aa.json", "z-a.json", "z-b.json",
					     "m-a.json", "m-b.json", "cn-a.json", "cn-b.json" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", tmpdir, files[i]);
		unlink(path);
	}
	CHECK_MSG(rmdir(tmpdir) == 0, "%s left files behind", tmpdir);
	printf("ok\n");
	return 0;
}
