// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench.compare/1: reports/schema/compare-1.schema.json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare-private.h"
#include "timing.h"

/* Numbers in their shortest form that reads back to the same double, so the
 * output is stable and free of noise digits like 0.33333333333333331. */
static struct json_object *num(double d)
{
	char buf[40];

	if (!isfinite(d))
		return NULL; /* JSON null */
	if (d == floor(d) && fabs(d) < 1e15)
		return json_object_new_double_s(d, (snprintf(buf, sizeof(buf), "%.0f", d), buf));
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return json_object_new_double_s(d, buf);
}

static struct json_object *str(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *strv(char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++)
		json_object_array_add(a, str(v[i]));
	return a;
}

static void add(struct json_object *o, const char *k, struct json_object *v)
{
	json_object_object_add(o, k, v);
}

static struct json_object *side_json(const struct compare_side *s)
{
	struct json_object *o = json_object_new_object(), *reports = json_object_new_array();

	add(o, "role", str(s->role));
	add(o, "selector", str(s->selector));
	add(o, "label", str(s->label));
	add(o, "repetitions", json_object_new_int64((int64_t)s->n_reps));
	for (size_t i = 0; i < s->n_reports; i++) {
		const struct compare_report *rep = s->reports[i];
		struct json_object *r = json_object_new_object(), *idx = json_object_new_array();
		bool host_vm = false;
		const char *release = compare_side_release(s, i, &host_vm);

		add(r, "id", str(rep->id));
		add(r, "path", str(rep->path));
		add(r, "state", str(rep->state));
		add(r, "kernel_release", str(release));
		if (host_vm)
			add(r, "host_vm", json_object_new_boolean(true));
		struct report_timing t;
		report_timing_of(rep->root, s->label, &t);
		add(r, "timing", str(t.emulated ? "emulated" : "native"));
		for (size_t j = 0; j < s->n_reps; j++)
			if (s->reps[j].report == rep)
				json_object_array_add(idx, json_object_new_int64(s->reps[j].index));
		add(r, "repetitions", idx);
		json_object_array_add(reports, r);
	}
	add(o, "reports", reports);
	add(o, "notes", strv(s->notes, strv_length(s->notes)));
	return o;
}

static struct json_object *arm_json(const struct compare_arm_stats *a)
{
	struct json_object *o = json_object_new_object(), *vals = json_object_new_array();

	add(o, "n", json_object_new_int64((int64_t)a->n));
	add(o, "missing", json_object_new_int64((int64_t)a->n_missing));
	add(o, "median", num(a->s.median));
	add(o, "min", num(a->s.min));
	add(o, "max", num(a->s.max));
	add(o, "mean", num(a->s.mean));
	add(o, "stddev", num(a->s.stddev));
	add(o, "cv", num(a->s.cv));
	for (size_t i = 0; i < a->n; i++)
		json_object_array_add(vals, num(a->values[i]));
	add(o, "values", vals);
	return o;
}

static struct json_object *metric_json(const struct compare_result *r, const struct compare_metric *m)
{
	struct json_object *o = json_object_new_object(), *test = json_object_new_object();

	add(o, "window", str(m->window));
	add(o, "metric", str(m->name));
	add(o, "unit", str(m->unit));
	add(o, "better", str(compare_better_name(m->better)));
	add(o, "baseline", arm_json(&m->arm[0]));
	add(o, "patched", arm_json(&m->arm[1]));
	add(o, "ratio", num(m->ratio));
	add(o, "pct_change", num(m->pct_change));
	add(o, "from_zero", json_object_new_boolean(m->from_zero));
	add(o, "emulated", json_object_new_boolean(m->emulated));
	if (m->unjudged)
		add(o, "not_judged", str(m->unjudged));
	if (m->count_of_rate)
		add(o, "count_of_rate", json_object_new_boolean(true));

	add(test, "name", str("mann-whitney-u"));
	add(test, "method", str(m->mwu.method == STATS_MWU_EXACT ? "exact" : "normal"));
	add(test, "u", num(m->mwu.u1));
	add(test, "p", num(m->mwu.p));
	add(test, "p_floor", num(m->mwu.p_floor));
	add(test, "ties", json_object_new_boolean(m->mwu.ties));
	add(o, "test", test);

	if (m->have_ci) {
		struct json_object *ci = json_object_new_object();
		add(ci, "name", str("bootstrap-median-ratio"));
		add(ci, "confidence", num(m->ci.confidence));
		add(ci, "low", num(m->ci.low));
		add(ci, "high", num(m->ci.high));
		add(ci, "iterations", json_object_new_int64(m->ci.iterations));
		add(ci, "used", json_object_new_int64(m->ci.used));
		char seed[24];
		snprintf(seed, sizeof(seed), "0x%016llx", (unsigned long long)m->ci.seed);
		add(ci, "seed", str(seed));
		add(o, "ci", ci);
	} else {
		add(o, "ci", NULL);
	}
	add(o, "threshold_pct", num(m->threshold_pct));
	add(o, "alpha", num(r->opts.alpha));
	add(o, "verdict", str(compare_verdict_name(m->verdict)));
	add(o, "notes", strv(m->notes, strv_length(m->notes)));
	return o;
}

struct json_object *compare_to_json(const struct compare_result *r)
{
	struct json_object *o = json_object_new_object();
	struct json_object *inputs = json_object_new_object(), *settings = json_object_new_object();
	struct json_object *diffs = json_object_new_array(), *metrics = json_object_new_array();
	struct json_object *skipped = json_object_new_array(), *thresholds = json_object_new_object();

	if (!o || !inputs || !settings || !diffs || !metrics || !skipped || !thresholds) {
		json_object_put(o);
		json_object_put(inputs);
		json_object_put(settings);
		json_object_put(diffs);
		json_object_put(metrics);
		json_object_put(skipped);
		json_object_put(thresholds);
		return NULL;
	}

	add(o, "schema", str(COMPARE_SCHEMA));
	add(o, "mode", str(r->opts.aa ? "aa" : "compare"));
	add(inputs, "baseline", side_json(r->side[0]));
	add(inputs, "patched", side_json(r->side[1]));
	if (r->opts.aa)
		add(inputs, "aa_split", str(r->opts.aa_split == COMPARE_AA_ALTERNATE ? "alternate" : "halves"));
	add(o, "inputs", inputs);

	add(settings, "alpha", num(r->opts.alpha));
	add(settings, "threshold_pct", num(r->opts.threshold_pct));
	for (size_t i = 0; i < r->opts.n_thresholds; i++)
		add(thresholds, r->opts.thresholds[i].pattern, num(r->opts.thresholds[i].pct));
	add(settings, "metric_thresholds", thresholds);
	add(settings, "windows", strv(r->opts.windows, r->opts.n_windows));
	add(settings, "metrics", strv(r->opts.metrics, r->opts.n_metrics));
	add(settings, "test", str("mann-whitney-u"));
	add(settings, "exact_max_n", json_object_new_int64(STATS_MWU_EXACT_MAX));
	struct json_object *boot = json_object_new_object();
	add(boot, "iterations", json_object_new_int64(r->opts.bootstrap_iterations));
	char seed[24];
	snprintf(seed, sizeof(seed), "0x%016llx", (unsigned long long)r->opts.bootstrap_seed);
	add(boot, "seed", str(seed));
	add(boot, "confidence", num(1.0 - r->opts.alpha));
	add(settings, "bootstrap", boot);
	add(settings, "force", json_object_new_boolean(r->opts.force));
	add(o, "settings", settings);

	struct json_object *comp = json_object_new_object();
	add(comp, "comparable", json_object_new_boolean(r->n_diffs == 0));
	for (size_t i = 0; i < r->n_diffs; i++) {
		const struct compare_difference *d = &r->diffs[i];
		struct json_object *e = json_object_new_object();
		add(e, "field", str(d->field));
		add(e, "where", str(d->where));
		add(e, "value_a", str(d->value_a));
		add(e, "run_a", str(d->report_a));
		add(e, "value_b", str(d->value_b));
		add(e, "run_b", str(d->report_b));
		json_object_array_add(diffs, e);
	}
	add(comp, "differences", diffs);
	add(o, "comparability", comp);

	for (size_t i = 0; i < r->n_metrics; i++)
		json_object_array_add(metrics, metric_json(r, &r->metrics[i]));
	add(o, "metrics", metrics);
	for (size_t i = 0; i < r->n_skipped; i++) {
		struct json_object *e = json_object_new_object();
		add(e, "window", str(r->skipped[i].window));
		add(e, "metric", str(r->skipped[i].name));
		add(e, "reason", str(r->skipped[i].reason));
		add(e, "recurs", json_object_new_boolean(r->skipped[i].recurs));
		json_object_array_add(skipped, e);
	}
	add(o, "skipped", skipped);
	add(o, "warnings", strv(r->warnings, strv_length(r->warnings)));
	add(o, "verdict", str(compare_verdict_name(r->verdict)));
	add(o, "exit_code", json_object_new_int(r->exit_code));
	return o;
}

char *compare_json_string(const struct compare_result *r)
{
	struct json_object *o = compare_to_json(r);
	char *s = NULL;

	if (!o)
		return NULL;
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								     JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text && asprintf(&s, "%s\n", text) < 0)
		s = NULL;
	json_object_put(o);
	return s;
}
