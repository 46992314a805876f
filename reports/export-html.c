// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A comparison as one self-contained HTML page: what the Markdown holds
 * (the tables, the verdict, the warnings, the details), with every plot
 * inline as the SVG compare draws it, and each metric's figures folded in
 * <details>. No script, and nothing to fetch: the style sheet is inline and
 * a Content-Security-Policy forbids any load. docs/exports.md.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare-private.h"
#include "export-html.h"
#include "export-private.h"

/* Report text, escaped for element text and attribute values alike. */
/* Whether the tables have a column for the rows' marks: emulated timing, a metric not judged. */
static bool html_tag_column(const struct compare_result *r)
{
	if (compare_any_tcg(r))
		return true;
	for (size_t i = 0; i < r->n_metrics; i++)
		if (r->metrics[i].unjudged)
			return true;
	return false;
}

static void html_text(struct strbuf *b, const char *s)
{
	export_append_text(b, s, EXPORT_ESCAPE_XML);
}

static const char style[] =
	"body{font-family:sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#222;background:#fff}\n"
	"h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}\n"
	"table{border-collapse:collapse;margin:.6em 0}\n"
	"th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;white-space:nowrap}\n"
	"th{background:#f0f0f0}td.name,th.name,td.text{text-align:left}td.text{white-space:normal}\n"
	"th,td.side,td.ci{white-space:normal}.range{white-space:nowrap}\n"
	".v-regressed{color:#b00020;font-weight:bold}.v-improved{color:#1b7a2f}\n"
	".v-changed{color:#8a5a00}.v-no-change,.v-insufficient-data{color:#555}\n"
	".warnings{border-left:4px solid #d9a400;background:#fff8e1;padding:.4em 1em}\n"
	"details{margin:.4em 0}summary{cursor:pointer}\n"
	"details.metric{border:1px solid #ddd;padding:.3em .8em}\n"
	"pre{background:#f6f6f6;padding:.6em;overflow:auto}\n"
	"svg{max-width:100%;height:auto}\n";

/* "p 0.0079": the table's two significant digits. */
static void format_p(double p, char *buf, size_t size)
{
	if (isfinite(p))
		snprintf(buf, size, "%.2g", p);
	else
		snprintf(buf, size, "n/a");
}

static void verdict_span(struct strbuf *b, enum compare_verdict v)
{
	const char *name = compare_verdict_name(v);

	strbuf_appendf(b, "<span class=\"v-%s\">%s</span>", name, name);
}

static const char *side_title(const struct compare_result *r, size_t s)
{
	return r->opts.aa ? (s ? "B" : "A") : (s ? "patched" : "baseline");
}

static void side_line(struct strbuf *b, const struct compare_side *s)
{
	strbuf_appendf(b, "%s <strong>", s->role);
	html_text(b, s->label ? s->label : "");
	strbuf_appendf(b, "</strong> (%zu repetition%s from %zu run%s)", s->n_reps, s->n_reps == 1 ? "" : "s",
		       s->n_reports, s->n_reports == 1 ? "" : "s");
}

static void sides_paragraph(struct strbuf *b, const struct compare_result *r)
{
	strbuf_append(b, "<p class=\"sides\">");
	if (r->opts.aa) {
		strbuf_append(b, "A/A noise floor of <strong>");
		html_text(b, r->side[0]->label ? r->side[0]->label : "");
		strbuf_appendf(b, "</strong>: %zu repetitions split %s into A (%zu) and B (%zu)",
			       r->side[0]->n_reps + r->side[1]->n_reps,
			       r->opts.aa_split == COMPARE_AA_ALTERNATE ? "alternately" : "in halves",
			       r->side[0]->n_reps, r->side[1]->n_reps);
	} else {
		side_line(b, r->side[0]);
		strbuf_append(b, " vs ");
		side_line(b, r->side[1]);
	}
	strbuf_append(b, ".</p>\n");
}

/* The distinct kernel releases of a side, "6.18.0-stock, 6.1.0 (host VM)". */
static void side_kernels(struct strbuf *b, const struct compare_side *s)
{
	for (size_t i = 0, shown = 0; i < s->n_reports; i++) {
		bool vm, vm2, dup = false;
		const char *rel = compare_side_release(s, i, &vm);

		for (size_t j = 0; j < i && rel; j++) {
			const char *o = compare_side_release(s, j, &vm2);
			dup = dup || (o && !strcmp(o, rel) && vm == vm2);
		}
		if (dup)
			continue;
		strbuf_append(b, shown++ ? ", " : "");
		html_text(b, rel ? rel : "unknown");
		strbuf_append(b, vm ? " (host VM)" : "");
	}
}

static void context_paragraphs(struct strbuf *b, const struct compare_result *r)
{
	strbuf_append(b, "<p class=\"kernels\">Kernel: ");
	side_kernels(b, r->side[0]);
	strbuf_append(b, " vs ");
	side_kernels(b, r->side[1]);
	strbuf_append(b, ".</p>\n");
	if (compare_any_tcg(r))
		strbuf_append(b, "<p class=\"emulated\">Timing emulated (TCG): the times, rates and latencies marked "
			      "emulated are QEMU&apos;s emulator&apos;s, the counts the kernel&apos;s own; the ratio "
			      "between arms of one run is what counts.</p>\n");
	strbuf_appendf(b, "<p>Median (min max) per side; the change of medians with its %g%% bootstrap interval; "
		       "two-sided Mann-Whitney U, alpha %g; change threshold %g%%.</p>\n", 100 * (1 - r->opts.alpha),
		       r->opts.alpha, r->opts.threshold_pct);
}

static void metric_name(const struct compare_metric *m, char *buf, size_t size)
{
	struct compare_scale sc = compare_metric_scale(m);

	compare_metric_label(m->name, &sc, buf, size);
}

/* The table row of metrics[i], as the text table writes its cells. */
static void table_row(struct strbuf *b, const struct compare_result *r, size_t i)
{
	const struct compare_metric *m = &r->metrics[i];
	char name[96], side[128], change[32], ci[72], p[24];

	compare_metric_name(m->name, name, sizeof(name));
	strbuf_appendf(b, "<tr data-metric=\"");
	html_text(b, m->name);
	strbuf_appendf(b, "\" data-verdict=\"%s\"><td class=\"name\"><a href=\"#metric-%zu\">", compare_verdict_name(m->verdict), i);
	html_text(b, name);
	strbuf_append(b, "</a></td>");
	for (int s = 0; s < 2; s++) {
		/* the range may go under the median: the table fits a 1200 px window */
		compare_format_side(m, s, false, side, sizeof(side));
		char *range = strstr(side, " (");
		if (range)
			*range++ = '\0';
		strbuf_append(b, "<td class=\"side\">");
		html_text(b, side);
		if (range) {
			strbuf_append(b, " <span class=\"range\">");
			html_text(b, range);
			strbuf_append(b, "</span>");
		}
		strbuf_append(b, "</td>");
	}
	compare_format_change(m, change, sizeof(change));
	compare_format_ci(m, ci, sizeof(ci));
	format_p(m->mwu.p, p, sizeof(p));
	strbuf_appendf(b, "<td>%s</td><td class=\"ci\">%s</td><td>%s</td><td>%zu+%zu</td><td class=\"name\">", change,
		       ci, p, m->arm[0].n, m->arm[1].n);
	verdict_span(b, m->verdict);
	strbuf_append(b, "</td>");
	if (html_tag_column(r))
		strbuf_appendf(b, "<td class=\"name\">%s</td>", compare_metric_tag(m) ? compare_metric_tag(m) : "");
	strbuf_append(b, "</tr>\n");
}

static void window_section(struct strbuf *b, const struct compare_result *r, const char *win)
{
	size_t rows = 0, shown = 0, left_out = 0;

	strbuf_append(b, "<h2 id=\"section-window-");
	html_text(b, win);
	strbuf_append(b, "\">Window ");
	html_text(b, win);
	strbuf_append(b, "</h2>\n");
	for (size_t i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].window, win)) {
			rows++;
			shown += compare_metric_shown(r, i);
		}
	if (!rows) {
		strbuf_append(b, "<p>No metric had values on both sides.</p>\n");
		return;
	}
	if (shown) {
		strbuf_append(b, "<table class=\"metrics\" data-window=\"");
		html_text(b, win);
		strbuf_appendf(b, "\">\n<thead><tr><th class=\"name\">metric</th><th>%s median (min max)</th>"
			       "<th>%s median (min max)</th><th>change</th><th>%g%% CI</th><th>p</th><th>n</th>"
			       "<th class=\"name\">verdict</th>%s</tr></thead>\n<tbody>\n", side_title(r, 0),
			       side_title(r, 1), 100 * (1 - r->opts.alpha),
			       html_tag_column(r) ? "<th class=\"name\">timing</th>" : "");
		for (size_t i = 0; i < r->n_metrics; i++)
			if (!strcmp(r->metrics[i].window, win) && compare_metric_shown(r, i))
				table_row(b, r, i);
		strbuf_append(b, "</tbody>\n</table>\n");
	}
	for (size_t i = 0; i < r->n_metrics; i++) {
		char name[96];
		if (strcmp(r->metrics[i].window, win) || compare_metric_shown(r, i))
			continue;
		metric_name(&r->metrics[i], name, sizeof(name));
		strbuf_append(b, left_out++ ? ", " : "<p class=\"left-out\">Left out, 0 in every repetition of both "
			      "sides (<code>--all</code> keeps them): ");
		html_text(b, name);
	}
	if (left_out)
		strbuf_append(b, ".</p>\n");
}

static void warnings_section(struct strbuf *b, const struct compare_result *r)
{
	if (!r->warnings || !r->warnings[0])
		return;
	strbuf_append(b, "<section class=\"warnings\">\n<h2 id=\"section-warnings\">Warnings</h2>\n<ul>\n");
	for (size_t i = 0; r->warnings[i]; i++) {
		strbuf_append(b, "<li>");
		html_text(b, r->warnings[i]);
		strbuf_append(b, "</li>\n");
	}
	strbuf_append(b, "</ul>\n</section>\n");
}

/*
 * An SVG of compare's inline: without its XML declaration (HTML has none
 * inside a body), each id prefixed with id_prefix and its ordinal, so that
 * ids stay unique across plots (and within the timeline, whose panels each
 * have a "y-axis").
 */
static void inline_svg(struct strbuf *b, const char *svg, const char *id_prefix)
{
	const char *p = svg;
	size_t n = 0;

	if (!strncmp(p, "<?xml", 5)) {
		const char *end = strstr(p, "?>");
		p = end ? end + 2 : p;
		p += *p == '\n';
	}
	for (const char *q; (q = strstr(p, " id=\"")); p = q + 5) {
		strbuf_append_mem(b, p, (size_t)(q - p) + 5);
		strbuf_appendf(b, "%s%zu-", id_prefix, ++n);
	}
	strbuf_append(b, p);
}

static void figure_row(struct strbuf *b, const char *what, const char *v0, const char *v1)
{
	strbuf_appendf(b, "<tr><th class=\"name\">%s</th><td>%s</td><td>%s</td></tr>\n", what, v0, v1);
}

static void figure_row_numbers(struct strbuf *b, const char *what, double v0, double v1)
{
	char a[48], c[48];

	compare_format_number(v0, a, sizeof(a));
	compare_format_number(v1, c, sizeof(c));
	figure_row(b, what, a, c);
}

/* Each side's statistics and values, in the unit of the table. */
static void side_figures(struct strbuf *b, const struct compare_result *r, const struct compare_metric *m,
			 const struct compare_scale *sc)
{
	const struct compare_arm_stats *a = m->arm;
	char n[2][24], missing[2][24];

	strbuf_append(b, "<table class=\"figures\">\n<thead><tr><th class=\"name\">");
	html_text(b, sc->unit ? sc->unit : m->unit);
	strbuf_append(b, "</th><th>");
	html_text(b, side_title(r, 0));
	strbuf_append(b, " <span class=\"label\">");
	html_text(b, r->side[0]->label ? r->side[0]->label : "");
	strbuf_append(b, "</span></th><th>");
	html_text(b, side_title(r, 1));
	strbuf_append(b, " <span class=\"label\">");
	html_text(b, r->side[1]->label ? r->side[1]->label : "");
	strbuf_append(b, "</span></th></tr></thead>\n<tbody>\n");
	for (size_t s = 0; s < 2; s++) {
		snprintf(n[s], sizeof(n[s]), "%zu", a[s].n);
		snprintf(missing[s], sizeof(missing[s]), "%zu", a[s].n_missing);
	}
	figure_row(b, "n", n[0], n[1]);
	figure_row(b, "missing", missing[0], missing[1]);
	figure_row_numbers(b, "median", a[0].s.median * sc->mult, a[1].s.median * sc->mult);
	figure_row_numbers(b, "min", a[0].s.min * sc->mult, a[1].s.min * sc->mult);
	figure_row_numbers(b, "max", a[0].s.max * sc->mult, a[1].s.max * sc->mult);
	figure_row_numbers(b, "mean", a[0].s.mean * sc->mult, a[1].s.mean * sc->mult);
	figure_row_numbers(b, "stddev", a[0].s.stddev * sc->mult, a[1].s.stddev * sc->mult);
	figure_row_numbers(b, "cv", a[0].s.cv, a[1].s.cv);
	strbuf_append(b, "<tr><th class=\"name\">values</th>");
	for (size_t s = 0; s < 2; s++) {
		strbuf_append(b, "<td class=\"text\">");
		for (size_t i = 0; i < a[s].n; i++) {
			char v[48];
			compare_format_number(a[s].values[i] * sc->mult, v, sizeof(v));
			strbuf_appendf(b, "%s%s", i ? " " : "", v);
		}
		strbuf_append(b, "</td>");
	}
	strbuf_append(b, "</tr>\n</tbody>\n</table>\n");
}

static void test_figures(struct strbuf *b, const struct compare_result *r, const struct compare_metric *m)
{
	char change[32], ratio[72], p[24], floor_p[24], u[48], thr[48];

	compare_format_change(m, change, sizeof(change));
	compare_format_ratio(m, ratio, sizeof(ratio));
	format_p(m->mwu.p, p, sizeof(p));
	snprintf(floor_p, sizeof(floor_p), "%.3g", m->mwu.p_floor);
	compare_format_number(m->mwu.u1, u, sizeof(u));
	compare_format_number(m->threshold_pct, thr, sizeof(thr));
	strbuf_appendf(b, "<p>Change %s, ratio %s; Mann-Whitney U %s (%s%s), p %s (the smallest these sizes can "
		       "give: %s), alpha %g, threshold %s%%; verdict ", change, ratio, u,
		       m->mwu.method == STATS_MWU_EXACT ? "exact" : "normal approximation",
		       m->mwu.ties ? ", ties" : "", p, floor_p, r->opts.alpha, thr);
	verdict_span(b, m->verdict);
	strbuf_append(b, ".");
	char ci[72];
	compare_format_ci(m, ci, sizeof(ci));
	if (m->have_ci && ci[0]) /* in the change's own notation, as the table has it */
		strbuf_appendf(b, " Bootstrap %g%% interval of the change: %s (%u of %u resamples).",
			       m->ci.confidence * 100, ci, m->ci.used, m->ci.iterations);
	strbuf_append(b, "</p>\n");
}

static void metric_details(struct strbuf *b, const struct compare_result *r, size_t i)
{
	const struct compare_metric *m = &r->metrics[i];
	struct compare_scale sc = compare_metric_scale(m);
	char name[96], change[32], prefix[32];

	compare_metric_label(m->name, &sc, name, sizeof(name));
	compare_format_change(m, change, sizeof(change));
	/* open where something happened; no-change and insufficient-data folded */
	bool open = m->verdict == COMPARE_REGRESSED || m->verdict == COMPARE_IMPROVED || m->verdict == COMPARE_CHANGED;
	strbuf_appendf(b, "<details class=\"metric\" id=\"metric-%zu\"%s>\n<summary>", i, open ? " open" : "");
	html_text(b, name);
	strbuf_append(b, ", window ");
	html_text(b, m->window);
	strbuf_append(b, ": ");
	verdict_span(b, m->verdict);
	strbuf_appendf(b, " (%s)</summary>\n<p><code>", change);
	html_text(b, m->name);
	strbuf_append(b, "</code>, ");
	html_text(b, m->unit[0] ? m->unit : "no unit");
	strbuf_appendf(b, ", better %s.</p>\n", compare_better_name(m->better));

	_cleanup_free_ char *svg = compare_plot_metric_svg(r, i);
	if (!svg) {
		b->oom = true;
		return;
	}
	snprintf(prefix, sizeof(prefix), "metric-%zu-", i);
	inline_svg(b, svg, prefix);
	side_figures(b, r, m, &sc);
	test_figures(b, r, m);
	if (m->notes && m->notes[0]) {
		strbuf_append(b, "<ul class=\"notes\">\n");
		for (size_t j = 0; m->notes[j]; j++) {
			strbuf_append(b, "<li>");
			html_text(b, m->notes[j]);
			strbuf_append(b, "</li>\n");
		}
		strbuf_append(b, "</ul>\n");
	}
	strbuf_append(b, "</details>\n");
}

static void plots_section(struct strbuf *b, const struct compare_result *r)
{
	size_t shown = 0;

	for (size_t i = 0; i < r->n_metrics; i++)
		shown += compare_metric_shown(r, i);
	if (shown) {
		strbuf_append(b, "<h2 id=\"section-metrics\">Metrics</h2>\n");
		for (size_t i = 0; i < r->n_metrics; i++)
			if (compare_metric_shown(r, i))
				metric_details(b, r, i);
	}
	const char *why = NULL;
	char win[64];
	_cleanup_free_ char *timeline = compare_plot_timeline_svg(r, &why);
	/* named as the plot names it: a dirty-log run's window is its migration */
	compare_timeline_window(r, win, sizeof(win));
	strbuf_append(b, "<h2 id=\"section-timeline\">Timeline</h2>\n");
	if (timeline) {
		strbuf_appendf(b, "<p>The rates through the %s window, every repetition of each side (bold: the one "
			       "whose pf/s is nearest its side&apos;s median).</p>\n", win);
		inline_svg(b, timeline, "timeline-");
	} else {
		strbuf_appendf(b, "<p>No timeline of the %s window: ", win);
		html_text(b, why ? why : "unknown reason");
		strbuf_append(b, ".</p>\n");
	}
}

static void kv_row(struct strbuf *b, const char *key, const char *value)
{
	strbuf_appendf(b, "<tr><th class=\"name\">%s</th><td class=\"text\">", key);
	html_text(b, value ? value : "");
	strbuf_append(b, "</td></tr>\n");
}

/* Per run of each side: where it ran, on which kernel. */
static void kernels_table(struct strbuf *b, const struct compare_result *r)
{
	strbuf_append(b, "<h3>Kernels and hosts</h3>\n<table class=\"kernels\">\n<thead><tr><th class=\"name\">side</th>"
		      "<th class=\"name\">run</th><th class=\"name\">state</th><th class=\"name\">kernel</th>"
		      "<th class=\"name\">version</th><th class=\"name\">build id</th><th class=\"name\">host</th>"
		      "<th class=\"name\">QEMU</th></tr></thead>\n<tbody>\n");
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < r->side[s]->n_reports; i++) {
			const struct compare_report *rep = r->side[s]->reports[i];
			struct json_object *host = json_lookup(rep->root, "host");
			struct json_object *k = compare_arm_kernel(rep->root, r->side[s]->label);
			const char *cells[] = {
				rep->id,
				rep->state,
				k ? json_lookup_string(k, "release") : json_lookup_string(host, "kernel_release"),
				k ? json_lookup_string(k, "version") : json_lookup_string(host, "kernel_version"),
				k ? json_lookup_string(k, "build_id") : NULL,
				json_lookup_string(host, "cpu_model"),
				json_lookup_string(json_lookup(host, "qemu"), "version"),
			};
			strbuf_append(b, "<tr><td class=\"text\">");
			html_text(b, r->side[s]->role);
			strbuf_append(b, " <strong>");
			html_text(b, r->side[s]->label ? r->side[s]->label : "");
			strbuf_append(b, "</strong></td>");
			for (size_t c = 0; c < ARRAY_SIZE(cells); c++) {
				strbuf_append(b, "<td class=\"text\">");
				html_text(b, cells[c] ? cells[c] : "");
				if (c == 2 && k)
					strbuf_append(b, " (host VM)");
				strbuf_append(b, "</td>");
			}
			strbuf_append(b, "</tr>\n");
		}
	strbuf_append(b, "</tbody>\n</table>\n");
}

static void settings_table(struct strbuf *b, const struct compare_result *r)
{
	char buf[64];

	strbuf_append(b, "<h3>Settings</h3>\n<table class=\"settings\">\n<tbody>\n");
	kv_row(b, "mode", r->opts.aa ? (r->opts.aa_split == COMPARE_AA_ALTERNATE ? "A/A, alternate" : "A/A, halves")
				      : "compare");
	for (size_t s = 0; s < 2; s++) {
		char key[32];
		snprintf(key, sizeof(key), "%s selector", side_title(r, s));
		kv_row(b, key, r->side[s]->selector);
	}
	snprintf(buf, sizeof(buf), "%g", r->opts.alpha);
	kv_row(b, "alpha", buf);
	snprintf(buf, sizeof(buf), "%g%%", r->opts.threshold_pct);
	kv_row(b, "threshold", buf);
	for (size_t i = 0; i < r->opts.n_thresholds; i++) {
		snprintf(buf, sizeof(buf), "%g%%", r->opts.thresholds[i].pct);
		strbuf_append(b, "<tr><th class=\"name\">threshold of ");
		html_text(b, r->opts.thresholds[i].pattern);
		strbuf_appendf(b, "</th><td class=\"text\">%s</td></tr>\n", buf);
	}
	strbuf_append(b, "<tr><th class=\"name\">windows</th><td class=\"text\">");
	for (size_t i = 0; i < r->opts.n_windows; i++) {
		strbuf_append(b, i ? ", " : "");
		html_text(b, r->opts.windows[i]);
	}
	strbuf_append(b, "</td></tr>\n<tr><th class=\"name\">metrics asked</th><td class=\"text\">");
	for (size_t i = 0; i < r->opts.n_metrics; i++) {
		strbuf_append(b, i ? ", " : "");
		html_text(b, r->opts.metrics[i]);
	}
	strbuf_append(b, "</td></tr>\n");
	kv_row(b, "test", "two-sided Mann-Whitney U (exact up to 100 values)");
	snprintf(buf, sizeof(buf), "%u iterations, seed %#llx", r->opts.bootstrap_iterations,
		 (unsigned long long)r->opts.bootstrap_seed);
	kv_row(b, "bootstrap", buf);
	kv_row(b, "force", r->opts.force ? "yes" : "no");
	strbuf_append(b, "</tbody>\n</table>\n");
}

/* Multi-line text for a <pre>: each line as html_text() writes it. */
static void html_lines(struct strbuf *b, const char *s)
{
	for (const char *nl; s; s = nl ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		_cleanup_free_ char *line = nl ? strndup(s, (size_t)(nl - s)) : strdup(s);
		if (!line) {
			b->oom = true;
			return;
		}
		html_text(b, line);
		if (nl)
			strbuf_append(b, "\n");
	}
}

/* Whether a spec field holds bytes (vm.memory, guest.region, vm.hugepage_size, ...vm_bytes): written in KiB/MiB/GiB too. */
static bool spec_field_bytes(const char *key)
{
	static const char *const names[] = { "memory", "region", "hugepage_size", "chunk_bytes", "max_bandwidth",
					     "probe_region", "size" };
	const char *last = strrchr(key, '.');

	last = last ? last + 1 : key;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(last, names[i]))
			return true;
	return false;
}

/* One spec field's value as a reader takes it: 268435456 bytes as "256 MiB", 1000 in a _ms field as "1000 ms". */
static void spec_value(struct strbuf *b, const char *key, struct json_object *v)
{
	size_t len = strlen(key);

	if (json_object_is_type(v, json_type_int) && spec_field_bytes(key) && json_object_get_int64(v) >= 1024) {
		static const char *const units[] = { "TiB", "GiB", "MiB", "KiB" };
		int64_t n = json_object_get_int64(v);
		for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
			int64_t m = (int64_t)1 << (10 * (ARRAY_SIZE(units) - i));
			if (n >= m) {
				strbuf_appendf(b, "%.4g %s (%" PRId64 " bytes)", (double)n / (double)m, units[i], n);
				return;
			}
		}
	}
	if (json_object_is_type(v, json_type_string)) {
		html_text(b, json_object_get_string(v));
		return;
	}
	html_text(b, v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
		       : "null");
	if (json_is_number(v)) {
		const char *unit = len > 3 && !strcmp(key + len - 3, "_ms") ? " ms"
				   : len > 3 && !strcmp(key + len - 3, "_us") ? " µs"
				   : len > 2 && !strcmp(key + len - 2, "_s") ? " s" : "";
		strbuf_append(b, unit);
	}
}

/* The spec as rows "vm.memory | 256 MiB", objects walked (at most 8 deep), arrays and leaves as values. */
static void spec_rows(struct strbuf *b, struct json_object *o, const char *prefix, int depth)
{
	if (!json_object_is_type(o, json_type_object) || depth > 8)
		return;
	json_object_object_foreach(o, key, v) {
		_cleanup_free_ char *path = NULL;
		if (asprintf(&path, "%s%s%s", prefix, *prefix ? "." : "", key) < 0) {
			b->oom = true;
			return;
		}
		if (json_object_is_type(v, json_type_object) && json_object_object_length(v)) {
			spec_rows(b, v, path, depth + 1);
			continue;
		}
		strbuf_append(b, "<tr><th class=\"name\">");
		html_text(b, path);
		strbuf_append(b, "</th><td class=\"text\">");
		spec_value(b, path, v);
		strbuf_append(b, "</td></tr>\n");
	}
}

/* The run spec of each side's first run, as JSON (the comparable parts are the same on both); once
 * when both sides come from one run. */
static void specs(struct strbuf *b, const struct compare_result *r)
{
	for (size_t s = 0; s < 2; s++) {
		if (!r->side[s]->n_reports || (s == 1 && r->side[0]->n_reports &&
					       r->side[0]->reports[0] == r->side[1]->reports[0]))
			continue;
		const struct compare_report *rep = r->side[s]->reports[0];
		struct json_object *spec = json_lookup(rep->root, "spec");
		strbuf_append(b, "<details class=\"spec\"><summary>Run spec of ");
		html_text(b, rep->id);
		strbuf_append(b, " (");
		html_text(b, s == 0 && rep == r->side[1]->reports[0] ? "both sides" : side_title(r, s));
		strbuf_append(b, ")</summary>\n<table class=\"spec\">\n<tbody>\n");
		spec_rows(b, spec, "", 0);
		strbuf_append(b, "</tbody>\n</table>\n<details class=\"spec-json\"><summary>as JSON</summary>\n<pre>");
		html_lines(b, spec ? json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
									JSON_C_TO_STRING_NOSLASHESCAPE) : "(none)");
		strbuf_append(b, "</pre>\n</details>\n</details>\n");
	}
}

static void differences(struct strbuf *b, const struct compare_result *r)
{
	if (!r->n_diffs)
		return;
	strbuf_append(b, "<h3>Compared with --force although these differ</h3>\n<ul>\n");
	for (size_t i = 0; i < r->n_diffs; i++) {
		const struct compare_difference *d = &r->diffs[i];
		const char *parts[] = { d->field, " (", d->where, "): ", d->value_a, " in ", d->report_a, ", ",
					d->value_b, " in ", d->report_b };
		strbuf_append(b, "<li>");
		for (size_t j = 0; j < ARRAY_SIZE(parts); j++)
			html_text(b, parts[j]);
		strbuf_append(b, "</li>\n");
	}
	strbuf_append(b, "</ul>\n");
}

static void notes_and_skipped(struct strbuf *b, const struct compare_result *r)
{
	size_t n_notes = 0;

	for (size_t i = 0; i < r->n_metrics; i++)
		n_notes += strv_length(r->metrics[i].notes);
	if (n_notes) {
		strbuf_append(b, "<h3>Notes</h3>\n<ul>\n");
		for (size_t i = 0; i < r->n_metrics; i++) {
			char name[96];
			metric_name(&r->metrics[i], name, sizeof(name));
			for (size_t j = 0; r->metrics[i].notes && r->metrics[i].notes[j]; j++) {
				strbuf_append(b, "<li>");
				html_text(b, name);
				strbuf_append(b, ", window ");
				html_text(b, r->metrics[i].window);
				strbuf_append(b, ": ");
				html_text(b, r->metrics[i].notes[j]);
				strbuf_append(b, "</li>\n");
			}
		}
		strbuf_append(b, "</ul>\n");
	}
	if (r->n_skipped) {
		strbuf_append(b, "<h3>Skipped</h3>\n<ul>\n");
		for (size_t i = 0; i < r->n_skipped; i++) {
			strbuf_append(b, "<li data-metric=\"");
			html_text(b, r->skipped[i].name);
			strbuf_append(b, "\"><code>");
			html_text(b, r->skipped[i].name);
			strbuf_append(b, "</code> (window ");
			html_text(b, r->skipped[i].window);
			strbuf_append(b, "): ");
			html_text(b, r->skipped[i].reason);
			strbuf_append(b, "</li>\n");
		}
		strbuf_append(b, "</ul>\n");
	}
}

char *export_compare_html(const struct compare_result *r)
{
	_cleanup_strbuf_ struct strbuf b = {};
	const char *verdict = compare_verdict_name(r->verdict);

	strbuf_append(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'unsafe-inline'\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
	strbuf_appendf(&b, "<meta name=\"generator\" content=\"snapbench compare\">\n<title>snapbench compare: %s (",
		       verdict);
	html_text(&b, r->side[0]->label ? r->side[0]->label : "");
	strbuf_append(&b, " vs ");
	html_text(&b, r->side[1]->label ? r->side[1]->label : "");
	strbuf_appendf(&b, ")</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
	strbuf_append(&b, "<h1>snapbench compare: ");
	verdict_span(&b, r->verdict);
	strbuf_append(&b, "</h1>\n");
	sides_paragraph(&b, r);
	context_paragraphs(&b, r);
	/* the sections, each with its anchor, for a link to the part that matters */
	strbuf_append(&b, "<nav class=\"sections\">");
	for (size_t w = 0; w < r->opts.n_windows; w++) {
		strbuf_append(&b, "<a href=\"#section-window-");
		html_text(&b, r->opts.windows[w]);
		strbuf_append(&b, "\">window ");
		html_text(&b, r->opts.windows[w]);
		strbuf_append(&b, "</a> · ");
	}
	if (r->warnings && r->warnings[0])
		strbuf_append(&b, "<a href=\"#section-warnings\">warnings</a> · ");
	for (size_t i = 0; i < r->n_metrics; i++)
		if (compare_metric_shown(r, i)) {
			strbuf_append(&b, "<a href=\"#section-metrics\">metrics</a> · ");
			break;
		}
	strbuf_append(&b, "<a href=\"#section-timeline\">timeline</a> · <a href=\"#section-details\">details</a></nav>\n");
	for (size_t w = 0; w < r->opts.n_windows; w++)
		window_section(&b, r, r->opts.windows[w]);
	strbuf_appendf(&b, "<p class=\"verdict\">Verdict: <strong class=\"v-%s\">%s</strong> (exit code %d).</p>\n",
		       verdict, verdict, r->exit_code);
	warnings_section(&b, r);
	plots_section(&b, r);
	strbuf_append(&b, "<details class=\"details\" id=\"section-details\">\n<summary>Details: kernels, settings, notes</summary>\n");
	kernels_table(&b, r);
	settings_table(&b, r);
	specs(&b, r);
	differences(&b, r);
	notes_and_skipped(&b, r);
	strbuf_append(&b, "</details>\n</body>\n</html>\n");
	return strbuf_steal(&b);
}
