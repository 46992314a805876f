// SPDX-License-Identifier: GPL-2.0-or-later
/* The comparison as text: a seed-style table and Markdown for CI comments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare-private.h"

static void strip_zeros(char *s)
{
	char *dot = strchr(s, '.');

	if (!dot || strchr(s, 'e'))
		return;
	char *end = s + strlen(s) - 1;
	while (end > dot && *end == '0')
		*end-- = '\0';
	if (end == dot)
		*end = '\0';
}

static void group_thousands(const char *digits, char *out, size_t size)
{
	size_t len = strlen(digits), j = 0;
	const char *p = digits;

	if (*p == '-') {
		if (j + 1 < size)
			out[j++] = '-';
		p++;
		len--;
	}
	for (size_t i = 0; i < len && j + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			out[j++] = ',';
		out[j++] = p[i];
	}
	out[j] = '\0';
}

void compare_format_number(double v, char *buf, size_t size)
{
	char tmp[64];

	if (!isfinite(v)) {
		snprintf(buf, size, "n/a");
		return;
	}
	if (v == 0.0)
		v = 0.0; /* no "-0" */
	if (fabs(v) >= 1e15) {
		snprintf(buf, size, "%.3g", v);
		return;
	}
	if (v == floor(v) || fabs(v) >= 100) {
		snprintf(tmp, sizeof(tmp), "%.0f", round(v));
		group_thousands(tmp, buf, size);
		return;
	}
	if (fabs(v) >= 10)
		snprintf(tmp, sizeof(tmp), "%.1f", v);
	else if (fabs(v) >= 1)
		snprintf(tmp, sizeof(tmp), "%.2f", v);
	else
		snprintf(tmp, sizeof(tmp), "%.2g", v);
	strip_zeros(tmp);
	snprintf(buf, size, "%s", tmp);
}

void compare_format_median_range(double median, double min, double max, char *buf, size_t size)
{
	char med[32], lo[32], hi[32];

	compare_format_number(median, med, sizeof(med));
	compare_format_number(min, lo, sizeof(lo));
	compare_format_number(max, hi, sizeof(hi));
	snprintf(buf, size, "%s (%s %s)", med, lo, hi);
}

void compare_format_change(const struct compare_metric *m, char *buf, size_t size)
{
	int decimals = 1;

	if (m->from_zero) {
		snprintf(buf, size, "from 0");
		return;
	}
	if (isnan(m->pct_change)) {
		snprintf(buf, size, "n/a");
		return;
	}
	if (fabs(m->pct_change) < 0.05) {
		snprintf(buf, size, "0.0%%");
		return;
	}
	/* -99.99% is not -100%: that would say the patched median is 0 */
	while (decimals < 6 && m->ratio > 0 &&
	       round(m->pct_change * pow(10, decimals)) <= -100 * pow(10, decimals))
		decimals++;
	snprintf(buf, size, "%+.*f%%", decimals, m->pct_change);
}

/* v > 0 to three significant digits: "14,400", "380", "3.80", "0.263". */
static void format_sig3(double v, char *buf, size_t size)
{
	char tmp[40];

	if (v >= 1e15) {
		snprintf(tmp, sizeof(tmp), "%.3g", v);
	} else if (v >= 1000) {
		double p = pow(10, floor(log10(v)) - 2);
		snprintf(tmp, sizeof(tmp), "%.0f", round(v / p) * p);
	} else if (v >= 99.95) {
		snprintf(tmp, sizeof(tmp), "%.0f", v);
	} else if (v >= 9.995) {
		snprintf(tmp, sizeof(tmp), "%.1f", v);
	} else if (v >= 0.9995) {
		snprintf(tmp, sizeof(tmp), "%.2f", v);
	} else {
		snprintf(tmp, sizeof(tmp), "%.3f", v);
	}
	if (v >= 99.95 && v < 1e15)
		group_thousands(tmp, buf, size);
	else
		snprintf(buf, size, "%s", tmp);
}

void compare_format_ratio(const struct compare_metric *m, char *buf, size_t size)
{
	char n[64];

	if (m->from_zero || !isfinite(m->ratio)) {
		snprintf(buf, size, "n/a");
	} else if (m->ratio == 0) {
		snprintf(buf, size, "0x");
	} else if (m->ratio < 0) {
		snprintf(buf, size, "%.3gx", m->ratio);
	} else if (m->ratio >= 0.1) {
		format_sig3(m->ratio, n, sizeof(n));
		snprintf(buf, size, "%sx", n);
	} else {
		/* a fall by orders of magnitude reads as one over the factor */
		format_sig3(1.0 / m->ratio, n, sizeof(n));
		snprintf(buf, size, "1/%sx", n);
	}
}

static void format_p(double p, char *buf, size_t size)
{
	if (!isfinite(p))
		snprintf(buf, size, "n/a");
	else
		snprintf(buf, size, "%.2g", p);
}

struct cells {
	char name[96];
	char med[2][32];
	char range[2][72];
	char change[24];
	char ratio[72];
	char p[24];
	const char *verdict;
};

static void fill_cells(const struct compare_metric *m, struct cells *c)
{
	char lo[32], hi[32];
	struct compare_scale sc = compare_metric_scale(m);

	compare_metric_label(m->name, &sc, c->name, sizeof(c->name));
	for (int s = 0; s < 2; s++) {
		compare_format_number(m->arm[s].s.median * sc.mult, c->med[s], sizeof(c->med[s]));
		compare_format_number(m->arm[s].s.min * sc.mult, lo, sizeof(lo));
		compare_format_number(m->arm[s].s.max * sc.mult, hi, sizeof(hi));
		snprintf(c->range[s], sizeof(c->range[s]), "(%s %s)", lo, hi);
	}
	compare_format_change(m, c->change, sizeof(c->change));
	compare_format_ratio(m, c->ratio, sizeof(c->ratio));
	format_p(m->mwu.p, c->p, sizeof(c->p));
	c->verdict = compare_verdict_name(m->verdict);
}

static void append_padded(struct strbuf *b, const char *s, size_t width)
{
	size_t w = compare_text_width(s);

	strbuf_append(b, s);
	strbuf_append_repeat(b, ' ', width > w ? width - w : 0);
}

bool compare_metric_all_zero(const struct compare_metric *m)
{
	for (int s = 0; s < 2; s++) {
		if (!m->arm[s].n)
			return false;
		for (size_t i = 0; i < m->arm[s].n; i++)
			if (m->arm[s].values[i] != 0.0)
				return false;
	}
	return true;
}

bool compare_metric_shown(const struct compare_result *r, size_t i)
{
	return r->opts.show_all || !compare_metric_all_zero(&r->metrics[i]);
}

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

static void side_summary(struct strbuf *b, const struct compare_side *s, bool markdown)
{
	char label[80];

	text_sanitize(s->label, label, sizeof(label));
	strbuf_appendf(b, "%s %s%s%s (%zu repetition%s from %zu run%s)", s->role, markdown ? "**" : "\"", label,
		    markdown ? "**" : "\"", s->n_reps, s->n_reps == 1 ? "" : "s", s->n_reports,
		    s->n_reports == 1 ? "" : "s");
}

static void kernels(struct strbuf *b, const struct compare_side *s)
{
	char k[128];

	for (size_t i = 0, shown = 0; i < s->n_reports; i++) {
		bool vm, vm2;
		const char *rel = compare_side_release(s, i, &vm);
		bool dup = false;
		for (size_t j = 0; j < i && rel; j++) {
			const char *o = compare_side_release(s, j, &vm2);
			dup = dup || (o && !strcmp(o, rel) && vm == vm2);
		}
		if (dup)
			continue;
		text_sanitize(rel ? rel : "unknown", k, sizeof(k));
		strbuf_appendf(b, "%s%s%s", shown++ ? ", " : "", k, vm ? " (host VM)" : "");
	}
}

static void sides_line(struct strbuf *b, const struct compare_result *r, bool markdown)
{
	if (r->opts.aa) {
		char label[80];
		text_sanitize(r->side[0]->label, label, sizeof(label));
		strbuf_appendf(b, "A/A noise floor of %s%s%s: %zu repetitions split %s into A (%zu) and B (%zu)",
			    markdown ? "**" : "\"", label, markdown ? "**" : "\"",
			    r->side[0]->n_reps + r->side[1]->n_reps,
			    r->opts.aa_split == COMPARE_AA_ALTERNATE ? "alternately" : "in halves", r->side[0]->n_reps,
			    r->side[1]->n_reps);
	} else {
		side_summary(b, r->side[0], markdown);
		strbuf_append(b, " vs ");
		side_summary(b, r->side[1], markdown);
	}
	strbuf_append(b, markdown ? ".\n" : "\n");
}

/* The kernels, TCG and the test's settings. */
static void context_lines(struct strbuf *b, const struct compare_result *r, bool markdown)
{
	strbuf_append(b, "Kernel: ");
	kernels(b, r->side[0]);
	strbuf_append(b, " vs ");
	kernels(b, r->side[1]);
	strbuf_appendf(b, "%s", markdown ? ".\n\n" : "\n");
	if (compare_any_tcg(r))
		strbuf_appendf(b, "Timing emulated (TCG): the times, rates and latencies marked emulated are QEMU's emulator's, the counts the kernel's own; the ratio between arms of one run is what counts.%s",
			    markdown ? "\n\n" : "\n");
	strbuf_appendf(b, "Median (min max) per arm; two-sided Mann-Whitney U, alpha %g; change threshold %g%%.\n",
		    r->opts.alpha, r->opts.threshold_pct);
}

static void header(struct strbuf *b, const struct compare_result *r)
{
	sides_line(b, r, false);
	context_lines(b, r, false);
}

static void notes_and_skipped(struct strbuf *b, const struct compare_result *r, bool markdown)
{
	const char *bullet = markdown ? "- " : "  ";
	size_t n_notes = 0;

	for (size_t i = 0; i < r->n_metrics; i++)
		n_notes += strv_length(r->metrics[i].notes);
	if (n_notes) {
		strbuf_append(b, markdown ? "\n**Notes**\n\n" : "\nNotes:\n");
		for (size_t i = 0; i < r->n_metrics; i++) {
			char name[96];
			struct compare_scale sc = compare_metric_scale(&r->metrics[i]);
			compare_metric_label(r->metrics[i].name, &sc, name, sizeof(name));
			for (size_t j = 0; r->metrics[i].notes && r->metrics[i].notes[j]; j++)
				strbuf_appendf(b, "%s%s%s%s: %s\n", bullet, name, r->opts.n_windows > 1 ? ", window " : "",
					    r->opts.n_windows > 1 ? r->metrics[i].window : "", r->metrics[i].notes[j]);
		}
	}
	if (r->n_skipped) {
		strbuf_append(b, markdown ? "\n**Skipped**\n\n" : "\nSkipped:\n");
		for (size_t i = 0; i < r->n_skipped; i++) {
			char name[96], reason[300];
			text_sanitize(r->skipped[i].name, name, sizeof(name));
			text_sanitize(r->skipped[i].reason, reason, sizeof(reason));
			strbuf_appendf(b, "%s%s (window %s): %s\n", bullet, name, r->skipped[i].window, reason);
		}
	}
}

static void warnings_section(struct strbuf *b, const struct compare_result *r, bool markdown)
{
	if (!r->warnings)
		return;
	strbuf_append(b, markdown ? "\n**Warnings**\n\n" : "\nWarnings:\n");
	for (size_t i = 0; r->warnings[i]; i++) {
		char w[1200];
		text_sanitize(r->warnings[i], w, sizeof(w));
		strbuf_appendf(b, "%s%s\n", markdown ? "- " : "  ", w);
	}
}

static void notes_section(struct strbuf *b, const struct compare_result *r)
{
	notes_and_skipped(b, r, false);
	warnings_section(b, r, false);
}

char *compare_format_table(const struct compare_result *r)
{
	struct strbuf b = { 0 };
	_cleanup_free_ struct cells *cells = calloc(r->n_metrics ? r->n_metrics : 1, sizeof(*cells));

	if (!cells)
		return NULL;
	for (size_t i = 0; i < r->n_metrics; i++)
		fill_cells(&r->metrics[i], &cells[i]);

	header(&b, r);
	for (size_t w = 0; w < r->opts.n_windows; w++) {
		const char *win = r->opts.windows[w];
		size_t wname = strlen("metric"), wmed[2] = { 0 }, wrange[2] = { 0 };
		size_t wchange = strlen("change"), wratio = strlen("ratio"), wp = 1, wverdict = strlen("verdict"), rows = 0;
		bool emulated = false;

		for (size_t i = 0; i < r->n_metrics; i++) {
			if (strcmp(r->metrics[i].window, win))
				continue;
			const struct cells *c = &cells[i];
			rows++;
			wname = max_sz(wname, compare_text_width(c->name));
			for (int s = 0; s < 2; s++) {
				wmed[s] = max_sz(wmed[s], strlen(c->med[s]));
				wrange[s] = max_sz(wrange[s], strlen(c->range[s]));
			}
			wchange = max_sz(wchange, strlen(c->change));
			wratio = max_sz(wratio, strlen(c->ratio));
			wp = max_sz(wp, strlen(c->p));
			wverdict = max_sz(wverdict, strlen(c->verdict));
			emulated |= r->metrics[i].emulated;
		}
		strbuf_appendf(&b, "\nWindow %s:\n", win);
		if (!rows) {
			strbuf_append(&b, "  (no metric had values on both sides)\n");
			continue;
		}
		size_t wcol[2];
		const char *title[2] = { r->opts.aa ? "A" : "baseline", r->opts.aa ? "B" : "patched" };
		for (int s = 0; s < 2; s++)
			wcol[s] = max_sz(wmed[s] + 1 + wrange[s], strlen(title[s]));

		strbuf_appendf(&b, "\n  %-*s  %-*s  %-*s  %*s  %*s  %*s  %-*s%s\n", (int)wname, "metric", (int)wcol[0],
			    title[0], (int)wcol[1], title[1], (int)wchange, "change", (int)wratio, "ratio", (int)wp, "p",
			    emulated ? (int)wverdict : 0, "verdict", emulated ? "  timing" : "");
		strbuf_append(&b, "  ");
		strbuf_append_repeat(&b, '-', wname + wcol[0] + wcol[1] + wchange + wratio + wp + wverdict + 12 +
						  (emulated ? strlen("  emulated") : 0));
		strbuf_append(&b, "\n");
		for (size_t i = 0; i < r->n_metrics; i++) {
			if (strcmp(r->metrics[i].window, win))
				continue;
			const struct cells *c = &cells[i];
			char col[2][128];
			for (int s = 0; s < 2; s++)
				snprintf(col[s], sizeof(col[s]), "%*s %-*s", (int)wmed[s], c->med[s], (int)wrange[s],
					 c->range[s]);
			strbuf_append(&b, "  ");
			append_padded(&b, c->name, wname);
			bool emul = r->metrics[i].emulated;
			strbuf_appendf(&b, "  %-*s  %-*s  %*s  %*s  %*s  %-*s%s\n", (int)wcol[0], col[0], (int)wcol[1], col[1],
				    (int)wchange, c->change, (int)wratio, c->ratio, (int)wp, c->p, emul ? (int)wverdict : 0,
				    c->verdict, emul ? "  emulated" : "");
		}
	}
	strbuf_appendf(&b, "\nVerdict: %s (exit code %d).\n", compare_verdict_name(r->verdict), r->exit_code);
	notes_section(&b, r);
	return strbuf_steal(&b);
}

/* Markdown table cells: escape what would change the table or the emphasis;
 * the unit "µs" stays, other bytes outside printable ASCII become '?'. */
static void md_cell(struct strbuf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\`*_[]<>|#", *s))
			strbuf_appendf(b, "\\%c", *s);
		else if ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] == 0xb5)
			strbuf_append(b, "\xc2\xb5"), s++;
		else
			strbuf_appendf(b, "%c", (*s >= 0x20 && *s < 0x7f) ? *s : '?');
	}
}

/* The metrics of window win left out (0 everywhere): "tlb/s, pf/s"; false when none. */
static bool md_left_out(struct strbuf *b, const struct compare_result *r, const char *win)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_metrics; i++) {
		if (strcmp(r->metrics[i].window, win) || compare_metric_shown(r, i))
			continue;
		char name[96];
		struct compare_scale sc = compare_metric_scale(&r->metrics[i]);
		compare_metric_label(r->metrics[i].name, &sc, name, sizeof(name));
		strbuf_append(b, n++ ? ", " : "\nLeft out, 0 in every repetition of both sides (`--all` keeps them): ");
		md_cell(b, name);
	}
	if (n)
		strbuf_append(b, ".\n");
	return n;
}

static void md_window(struct strbuf *b, const struct compare_result *r, const char *win)
{
	size_t rows = 0, shown = 0;

	strbuf_appendf(b, "\n#### Window %s\n\n", win);
	for (size_t i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].window, win)) {
			rows++;
			shown += compare_metric_shown(r, i);
		}
	if (rows && !shown) {
		md_left_out(b, r, win);
		return;
	}
	bool emulated = false;
	for (size_t i = 0; i < r->n_metrics; i++)
		emulated |= !strcmp(r->metrics[i].window, win) && compare_metric_shown(r, i) && r->metrics[i].emulated;
	strbuf_appendf(b, "| metric | %s median (min max) | %s median (min max) | change | ratio | p | verdict |%s\n",
		    r->opts.aa ? "A" : "baseline", r->opts.aa ? "B" : "patched", emulated ? " timing |" : "");
	strbuf_appendf(b, "|:--|--:|--:|--:|--:|--:|:--|%s\n", emulated ? ":--|" : "");
	for (size_t i = 0; i < r->n_metrics; i++) {
		if (strcmp(r->metrics[i].window, win) || !compare_metric_shown(r, i))
			continue;
		struct cells c;
		bool bold = r->metrics[i].verdict == COMPARE_REGRESSED;
		fill_cells(&r->metrics[i], &c);
		strbuf_append(b, "| ");
		md_cell(b, c.name);
		strbuf_appendf(b, " | %s %s | %s %s | %s | %s | %s | %s%s%s |%s\n", c.med[0], c.range[0], c.med[1],
			    c.range[1], c.change, c.ratio, c.p, bold ? "**" : "", c.verdict, bold ? "**" : "",
			    !emulated ? "" : r->metrics[i].emulated ? " emulated |" : " |");
	}
	if (!rows)
		strbuf_append(b, "| (no metric had values on both sides) | | | | | | |\n");
	md_left_out(b, r, win);
}

/* Links to the plots written beside compare.md. */
static void md_plots(struct strbuf *b, const struct compare_result *r, unsigned flags)
{
	if (!(flags & (COMPARE_MD_PLOTS | COMPARE_MD_TIMELINE)))
		return;
	strbuf_append(b, "\n**Plots**\n\n");
	for (size_t w = 0; (flags & COMPARE_MD_PLOTS) && w < r->opts.n_windows; w++) {
		const char *win = r->opts.windows[w];
		size_t n = 0;
		for (size_t i = 0; i < r->n_metrics; i++) {
			if (strcmp(r->metrics[i].window, win) || !compare_metric_shown(r, i))
				continue;
			_cleanup_free_ char *file = compare_plot_file_name(&r->metrics[i]);
			char name[96];
			struct compare_scale sc = compare_metric_scale(&r->metrics[i]);
			if (!file) {
				b->oom = true;
				return;
			}
			compare_metric_label(r->metrics[i].name, &sc, name, sizeof(name));
			strbuf_appendf(b, "%s", n++ ? ", [" : "- window ");
			if (n == 1)
				strbuf_appendf(b, "%s: [", win);
			md_cell(b, name);
			strbuf_appendf(b, "](%s)", file);
		}
		if (n)
			strbuf_append(b, "\n");
	}
	if (flags & COMPARE_MD_TIMELINE) {
		char win[64];
		compare_timeline_window(r, win, sizeof(win));
		strbuf_appendf(b, "- [timeline](timeline.svg): the rates through the %s window, one repetition per side\n",
			       win);
	}
}

char *compare_format_markdown(const struct compare_result *r, unsigned flags)
{
	struct strbuf b = { 0 };

	strbuf_appendf(&b, "### snapbench compare: %s\n\n", compare_verdict_name(r->verdict));
	sides_line(&b, r, true);
	for (size_t w = 0; w < r->opts.n_windows; w++)
		md_window(&b, r, r->opts.windows[w]);
	strbuf_appendf(&b, "\nVerdict: **%s** (exit code %d).\n", compare_verdict_name(r->verdict), r->exit_code);
	warnings_section(&b, r, true);
	md_plots(&b, r, flags);
	strbuf_append(&b, "\n<details>\n<summary>Details</summary>\n\n");
	context_lines(&b, r, true);
	notes_and_skipped(&b, r, true);
	strbuf_append(&b, "\n</details>\n");
	return strbuf_steal(&b);
}
