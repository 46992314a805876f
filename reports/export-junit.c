// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A comparison as JUnit XML, the format GitLab CI and Jenkins show as test
 * reports: a testsuite per window, a testcase per metric; regressed is a
 * failure, insufficient-data and metrics that could not be compared are
 * skipped. The structure is the one of Jenkins' junit-10 schema (a
 * testcase has no properties there, so each metric's figures are the
 * suite's properties, prefixed with the metric's name, and the testcase's
 * system-out). docs/exports.md.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export.h"
#include "export-private.h"

static void xml_text(struct strbuf *b, const char *s)
{
	export_append_text(b, s, EXPORT_ESCAPE_XML);
}

static void property(struct strbuf *b, const char *prefix, const char *name, const char *value)
{
	strbuf_append(b, "      <property name=\"");
	if (prefix) {
		xml_text(b, prefix);
		strbuf_append(b, ".");
	}
	xml_text(b, name);
	strbuf_append(b, "\" value=\"");
	xml_text(b, value);
	strbuf_append(b, "\"/>\n");
}

static void property_number(struct strbuf *b, const char *prefix, const char *name, double v)
{
	char num[EXPORT_NUMBER_MAX];

	export_format_number(v, num);
	property(b, prefix, name, num);
}

static void property_count(struct strbuf *b, const char *prefix, const char *name, size_t n)
{
	char num[24];

	snprintf(num, sizeof(num), "%zu", n);
	property(b, prefix, name, num);
}

/* One side's figures for humans: median (min max), n. */
static void side_figures(struct strbuf *b, const struct compare_result *r, const struct compare_metric *m, size_t s)
{
	char med[48], lo[48], hi[48];

	compare_format_number(m->arm[s].s.median, med, sizeof(med));
	compare_format_number(m->arm[s].s.min, lo, sizeof(lo));
	compare_format_number(m->arm[s].s.max, hi, sizeof(hi));
	strbuf_appendf(b, "%s \"%s\" %s (%s %s)%s%s, n %zu", r->side[s]->role, r->side[s]->label ? r->side[s]->label : "",
		       med, lo, hi, m->unit[0] ? " " : "", m->unit, m->arm[s].n);
}

/* "pf_per_s regressed: baseline "stock" 950,015 (901,000 990,000) 1/s, n 5; patched ...; change +26.3%, p 0.0079 (alpha 0.05, threshold 5%)" */
static void figures(struct strbuf *b, const struct compare_result *r, const struct compare_metric *m)
{
	char p[48], alpha[48], threshold[48];

	strbuf_appendf(b, "%s %s: ", m->name, compare_verdict_name(m->verdict));
	side_figures(b, r, m, 0);
	strbuf_append(b, "; ");
	side_figures(b, r, m, 1);
	if (m->from_zero)
		strbuf_append(b, "; change from 0");
	else if (isfinite(m->pct_change))
		strbuf_appendf(b, "; change %+.1f%%", m->pct_change);
	else
		strbuf_append(b, "; change n/a");
	compare_format_number(m->mwu.p, p, sizeof(p));
	compare_format_number(r->opts.alpha, alpha, sizeof(alpha));
	compare_format_number(m->threshold_pct, threshold, sizeof(threshold));
	strbuf_appendf(b, ", p %s (alpha %s, threshold %s%%)", p, alpha, threshold);
	if (m->verdict == COMPARE_INSUFFICIENT_DATA) {
		char floor_p[48];
		compare_format_number(m->mwu.p_floor, floor_p, sizeof(floor_p));
		strbuf_appendf(b, ": the smallest p %zu vs %zu values can give is %s", m->arm[0].n, m->arm[1].n,
			       floor_p);
	}
}

static void metric_properties(struct strbuf *b, const struct compare_result *r, const struct compare_metric *m)
{
	for (size_t s = 0; s < 2; s++) {
		char prefix[256];
		const struct compare_arm_stats *a = &m->arm[s];

		snprintf(prefix, sizeof(prefix), "%s.%s", m->name, r->side[s]->role);
		property_count(b, prefix, "n", a->n);
		property_number(b, prefix, "median", a->s.median);
		property_number(b, prefix, "min", a->s.min);
		property_number(b, prefix, "max", a->s.max);
	}
	property(b, m->name, "unit", m->unit);
	property_number(b, m->name, "ratio", m->ratio);
	property_number(b, m->name, "pct_change", m->pct_change);
	property_number(b, m->name, "p", m->mwu.p);
	property_number(b, m->name, "threshold_pct", m->threshold_pct);
	property(b, m->name, "verdict", compare_verdict_name(m->verdict));
	if (m->emulated) /* a time, rate or latency measured under TCG: the emulator's */
		property(b, m->name, "timing", "emulated");
}

static void testcase_open(struct strbuf *b, const char *window, const char *name)
{
	strbuf_append(b, "    <testcase name=\"");
	xml_text(b, name);
	strbuf_append(b, "\" classname=\"snapbench.compare.");
	xml_text(b, window);
	strbuf_append(b, "\" time=\"0\">\n");
}

static void metric_testcase(struct strbuf *b, const struct compare_result *r, const struct compare_metric *m)
{
	_cleanup_strbuf_ struct strbuf msg = {};
	_cleanup_free_ char *text = NULL;

	figures(&msg, r, m);
	text = strbuf_steal(&msg);
	if (!text) {
		b->oom = true;
		return;
	}
	testcase_open(b, m->window, m->name);
	if (m->verdict == COMPARE_REGRESSED || m->verdict == COMPARE_INSUFFICIENT_DATA) {
		bool failed = m->verdict == COMPARE_REGRESSED;
		strbuf_appendf(b, "      <%s type=\"%s\" message=\"", failed ? "failure" : "skipped",
			       compare_verdict_name(m->verdict));
		xml_text(b, text);
		strbuf_append(b, "\"/>\n");
	}
	strbuf_append(b, "      <system-out>");
	xml_text(b, text);
	for (size_t i = 0; m->notes && m->notes[i]; i++) {
		strbuf_append(b, "\n");
		xml_text(b, m->notes[i]);
	}
	strbuf_append(b, "</system-out>\n    </testcase>\n");
}

static void suite_properties(struct strbuf *b, const struct compare_result *r)
{
	property(b, NULL, "mode", r->opts.aa ? "aa" : "compare");
	for (size_t s = 0; s < 2; s++) {
		property(b, r->side[s]->role, "label", r->side[s]->label ? r->side[s]->label : "");
		property(b, r->side[s]->role, "selector", r->side[s]->selector ? r->side[s]->selector : "");
		property_count(b, r->side[s]->role, "repetitions", r->side[s]->n_reps);
	}
	property_number(b, NULL, "alpha", r->opts.alpha);
	property_number(b, NULL, "threshold_pct", r->opts.threshold_pct);
	property(b, NULL, "verdict", compare_verdict_name(r->verdict));
	property_count(b, NULL, "exit_code", (size_t)r->exit_code);
}

char *export_compare_junit(const struct compare_result *r)
{
	_cleanup_strbuf_ struct strbuf b = {};
	size_t tests = r->n_metrics + r->n_skipped, failures = 0;

	for (size_t i = 0; i < r->n_metrics; i++)
		failures += r->metrics[i].verdict == COMPARE_REGRESSED;
	strbuf_append(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	strbuf_appendf(&b, "<testsuites name=\"snapbench compare\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n",
		       tests, failures);
	for (size_t w = 0; w < r->opts.n_windows; w++) {
		const char *window = r->opts.windows[w];
		size_t n = 0, failed = 0, skipped = 0;

		for (size_t i = 0; i < r->n_metrics; i++) {
			if (strcmp(r->metrics[i].window, window))
				continue;
			n++;
			failed += r->metrics[i].verdict == COMPARE_REGRESSED;
			skipped += r->metrics[i].verdict == COMPARE_INSUFFICIENT_DATA;
		}
		for (size_t i = 0; i < r->n_skipped; i++)
			if (!strcmp(r->skipped[i].window, window))
				n++, skipped++;
		strbuf_append(&b, "  <testsuite name=\"snapbench compare ");
		xml_text(&b, window);
		strbuf_appendf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"0\">\n", n,
			       failed, skipped);
		strbuf_append(&b, "    <properties>\n");
		suite_properties(&b, r);
		for (size_t i = 0; i < r->n_metrics; i++)
			if (!strcmp(r->metrics[i].window, window))
				metric_properties(&b, r, &r->metrics[i]);
		strbuf_append(&b, "    </properties>\n");
		for (size_t i = 0; i < r->n_metrics; i++)
			if (!strcmp(r->metrics[i].window, window))
				metric_testcase(&b, r, &r->metrics[i]);
		for (size_t i = 0; i < r->n_skipped; i++) {
			const struct compare_skipped *sk = &r->skipped[i];
			if (strcmp(sk->window, window))
				continue;
			testcase_open(&b, window, sk->name);
			strbuf_append(&b, "      <skipped type=\"not-compared\" message=\"");
			xml_text(&b, sk->reason);
			strbuf_append(&b, "\"/>\n    </testcase>\n");
		}
		strbuf_append(&b, "  </testsuite>\n");
	}
	strbuf_append(&b, "</testsuites>\n");
	return strbuf_steal(&b);
}
