// SPDX-License-Identifier: GPL-2.0-or-later
/* The comparison as text: a seed-style table and Markdown for CI comments. */
#include <math.h>
#include <stdarg.h>
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

	if (!compare_figure_printable(v)) {
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

/* v > 0 as a factor: "3.80x", "14,400x"; below 1 as one over it, "1/3.80x". */
static void format_factor(double v, char *buf, size_t size);

void compare_format_change(const struct compare_metric *m, char *buf, size_t size)
{
	if (m->from_zero) {
		snprintf(buf, size, "from 0");
		return;
	}
	if (isnan(m->pct_change) || !isfinite(m->ratio)) {
		snprintf(buf, size, "n/a");
		return;
	}
	if (m->ratio == 0) {
		snprintf(buf, size, "-100%%");
		return;
	}
	if (m->ratio > 0 && (m->ratio > 2 || m->ratio < 0.5)) {
		/* orders of magnitude read as a factor: "+1439900.0%" says less than "14,400x" */
		format_factor(m->ratio, buf, size);
		return;
	}
	if (fabs(m->pct_change) < 0.05) {
		snprintf(buf, size, "0.0%%");
		return;
	}
	snprintf(buf, size, "%+.1f%%", m->pct_change);
}

/* One bound of the interval in the form of the change of m. */
static void format_bound(const struct compare_metric *m, double ratio, char *buf, size_t size)
{
	if (!isfinite(ratio)) {
		snprintf(buf, size, "n/a");
	} else if (m->ratio > 0 && (m->ratio > 2 || m->ratio < 0.5)) {
		if (ratio > 0)
			format_factor(ratio, buf, size);
		else
			snprintf(buf, size, "0x"); /* resamples whose patched median is 0 */
	} else {
		double pct = (ratio - 1) * 100;
		snprintf(buf, size, "%+.1f%%", fabs(pct) < 0.05 ? 0.0 : pct);
		if (fabs(pct) < 0.05)
			snprintf(buf, size, "0.0%%");
	}
}

void compare_format_ci(const struct compare_metric *m, char *buf, size_t size)
{
	char lo[40], hi[40];

	if (!m->have_ci || m->from_zero || !isfinite(m->ci.low) || !isfinite(m->ci.high)) {
		snprintf(buf, size, "%s", "");
		return;
	}
	format_bound(m, m->ci.low, lo, sizeof(lo));
	format_bound(m, m->ci.high, hi, sizeof(hi));
	snprintf(buf, size, "[%s %s]", lo, hi);
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

static void format_factor(double v, char *buf, size_t size)
{
	char n[40];

	if (v >= 1) {
		format_sig3(v, n, sizeof(n));
		snprintf(buf, size, "%sx", n);
	} else {
		format_sig3(1.0 / v, n, sizeof(n));
		snprintf(buf, size, "1/%sx", n);
	}
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

/* ---- figures ---- */

void compare_format_value(const struct compare_metric *m, double v, bool ascii, char *buf, size_t size)
{
	struct compare_scale sc = compare_time_scale(m->name, m->unit, fabs(v));
	char n[48];

	if (!sc.unit || !isfinite(v) || v == 0) {
		compare_format_number(v, buf, size);
		return;
	}
	/* each figure in its own unit: a row's 1.2 ms and 1.1 µs read as they are */
	compare_format_number(v * sc.mult, n, sizeof(n));
	snprintf(buf, size, "%s%s", n, ascii && !strcmp(sc.unit, "\xc2\xb5s") ? "us" : sc.unit);
}

/* A side's median, and "(min max)" or "" when min == max. */
static void side_parts(const struct compare_metric *m, int s, bool ascii, char *med, size_t med_size, char *range,
		       size_t range_size)
{
	const struct stats_summary *st = &m->arm[s].s;
	char lo[48], hi[48];

	compare_format_value(m, st->median, ascii, med, med_size);
	range[0] = '\0';
	if (st->min == st->max || !isfinite(st->min) || !isfinite(st->max))
		return;
	compare_format_value(m, st->min, ascii, lo, sizeof(lo));
	compare_format_value(m, st->max, ascii, hi, sizeof(hi));
	snprintf(range, range_size, "(%s %s)", lo, hi);
}

void compare_format_side(const struct compare_metric *m, int side, bool ascii, char *buf, size_t size)
{
	char med[48], range[100];

	side_parts(m, side, ascii, med, sizeof(med), range, sizeof(range));
	snprintf(buf, size, "%s%s%s", med, range[0] ? " " : "", range);
}

struct cells {
	char name[96];
	char med[2][48];
	char range[2][100];
	char change[32];
	char ci[72];
	char p[24];
	char n[32];
	const char *verdict;
	const char *tag; /* compare_metric_tag(): emulated, fixed count, or NULL */
};

static void fill_cells(const struct compare_metric *m, bool ascii, struct cells *c)
{
	compare_metric_name(m->name, c->name, sizeof(c->name));
	for (int s = 0; s < 2; s++)
		side_parts(m, s, ascii, c->med[s], sizeof(c->med[s]), c->range[s], sizeof(c->range[s]));
	compare_format_change(m, c->change, sizeof(c->change));
	compare_format_ci(m, c->ci, sizeof(c->ci));
	format_p(m->mwu.p, c->p, sizeof(c->p));
	snprintf(c->n, sizeof(c->n), "%zu+%zu", m->arm[0].n, m->arm[1].n);
	c->verdict = compare_verdict_name(m->verdict);
	c->tag = compare_metric_tag(m);
}

static void append_padded(struct strbuf *b, const char *s, size_t width)
{
	size_t w = compare_text_width(s);

	strbuf_append(b, s);
	strbuf_append_repeat(b, ' ', width > w ? width - w : 0);
}

static void append_right(struct strbuf *b, const char *s, size_t width)
{
	size_t w = compare_text_width(s);

	strbuf_append_repeat(b, ' ', width > w ? width - w : 0);
	strbuf_append(b, s);
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

/* ---- prose: wrapped at the width ---- */

/*
 * Appends text (one paragraph, no newline) wrapped at width columns: the
 * first line after first (already counted in col), the others indented by
 * indent spaces; a word longer than a line stays whole. width 0: one line.
 */
static void append_wrapped(struct strbuf *b, const char *text, size_t col, size_t indent, size_t width)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " "), w = 0;
		for (size_t i = 0; i < word; i++)
			w += ((unsigned char)p[i] & 0xc0) != 0x80;
		if (width && col > indent && col + 1 + w > width) {
			strbuf_append(b, "\n");
			strbuf_append_repeat(b, ' ', indent);
			col = indent;
		} else if (p != text) {
			strbuf_append(b, " ");
			col++;
		}
		strbuf_append_mem(b, p, word);
		col += w;
		p += word;
		while (*p == ' ')
			p++;
	}
	strbuf_append(b, "\n");
}

_printf_(5, 6) static void prose(struct strbuf *b, size_t width, const char *first, size_t indent, const char *fmt, ...)
{
	_cleanup_free_ char *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0) {
		text = NULL;
		b->oom = true;
	}
	va_end(ap);
	if (!text)
		return;
	strbuf_append(b, first);
	append_wrapped(b, text, compare_text_width(first), indent, width);
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

static void sides_text(struct strbuf *b, const struct compare_result *r, bool markdown)
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
}

#define TIMING_TEXT                                                                                             \
	"Timing emulated (TCG): the times, rates and latencies marked emulated are QEMU's emulator's, the counts " \
	"the kernel's own; the ratio between arms of one run is what counts."

/* The paragraphs before the tables: sides, kernels, timing, method (each a line of Markdown, or wrapped text). */
static void context_lines(struct strbuf *b, const struct compare_result *r, bool markdown, size_t width)
{
	_cleanup_strbuf_ struct strbuf sides = {}, kern = {};
	const char *end = markdown ? ".\n\n" : "";

	sides_text(&sides, r, markdown);
	strbuf_append(&kern, "Kernel: ");
	kernels(&kern, r->side[0]);
	strbuf_append(&kern, " vs ");
	kernels(&kern, r->side[1]);
	if (sides.oom || kern.oom) {
		b->oom = true;
		return;
	}
	if (markdown) {
		strbuf_appendf(b, "%s.\n\n%s%s", sides.s, kern.s, end);
		if (compare_any_tcg(r))
			strbuf_appendf(b, "%s\n\n", TIMING_TEXT);
		strbuf_appendf(b, "Median (min max) per side; the change of medians with its %g%% bootstrap interval; "
			       "two-sided Mann-Whitney U, alpha %g; change threshold %g%%.\n",
			       100 * (1 - r->opts.alpha), r->opts.alpha, r->opts.threshold_pct);
		return;
	}
	prose(b, width, "", 0, "%s", sides.s);
	prose(b, width, "", 2, "%s", kern.s);
	if (compare_any_tcg(r))
		prose(b, width, "", 0, "%s", TIMING_TEXT);
	prose(b, width, "", 0, "Median (min max) per side; the change of medians with its %g%% bootstrap interval; "
	      "two-sided Mann-Whitney U, alpha %g; change threshold %g%%.", 100 * (1 - r->opts.alpha), r->opts.alpha,
	      r->opts.threshold_pct);
}

static void notes_and_skipped(struct strbuf *b, const struct compare_result *r, bool markdown, size_t width)
{
	const char *bullet = markdown ? "- " : "  ";
	size_t n_notes = 0;

	for (size_t i = 0; i < r->n_metrics; i++)
		n_notes += strv_length(r->metrics[i].notes);
	if (n_notes) {
		strbuf_append(b, markdown ? "\n**Notes**\n\n" : "\nNotes:\n");
		for (size_t i = 0; i < r->n_metrics; i++) {
			char name[96];
			compare_metric_name(r->metrics[i].name, name, sizeof(name));
			for (size_t j = 0; r->metrics[i].notes && r->metrics[i].notes[j]; j++)
				prose(b, markdown ? 0 : width, bullet, 4, "%s%s%s: %s", name,
				      r->opts.n_windows > 1 ? ", window " : "",
				      r->opts.n_windows > 1 ? r->metrics[i].window : "", r->metrics[i].notes[j]);
		}
	}
	if (r->n_skipped) {
		strbuf_append(b, markdown ? "\n**Skipped**\n\n" : "\nSkipped:\n");
		for (size_t i = 0; i < r->n_skipped; i++) {
			char name[96], reason[300];
			text_sanitize(r->skipped[i].name, name, sizeof(name));
			text_sanitize(r->skipped[i].reason, reason, sizeof(reason));
			prose(b, markdown ? 0 : width, bullet, 4, "%s (window %s): %s", name, r->skipped[i].window, reason);
		}
	}
}

static void warnings_section(struct strbuf *b, const struct compare_result *r, bool markdown, size_t width)
{
	if (!r->warnings)
		return;
	strbuf_append(b, markdown ? "\n**Warnings**\n\n" : "\nWarnings:\n");
	for (size_t i = 0; r->warnings[i]; i++) {
		char w[1200];
		text_sanitize(r->warnings[i], w, sizeof(w));
		prose(b, markdown ? 0 : width, markdown ? "- " : "  ", 4, "%s", w);
	}
}

/* The metrics of window win left out (0 everywhere) on one line, the same words in every format; false when none. */
static bool left_out_line(struct strbuf *b, const struct compare_result *r, const char *win, bool markdown,
			  size_t width)
{
	_cleanup_strbuf_ struct strbuf names = {};
	size_t n = 0;

	for (size_t i = 0; i < r->n_metrics; i++) {
		if (strcmp(r->metrics[i].window, win) || compare_metric_shown(r, i))
			continue;
		char name[96];
		compare_metric_name(r->metrics[i].name, name, sizeof(name));
		strbuf_append(&names, n++ ? ", " : "");
		if (markdown) { /* escaped below, with the rest of the cell text */
			for (const char *p = name; *p; p++)
				strbuf_appendf(&names, strchr("\\`*_[]<>|#", *p) ? "\\%c" : "%c", *p);
		} else {
			strbuf_append(&names, name);
		}
	}
	if (!n)
		return false;
	if (names.oom) {
		b->oom = true;
		return false;
	}
	prose(b, markdown ? 0 : width, markdown ? "\n" : "  ", 2,
	      "Left out, 0 in every repetition of both sides (%s keeps them): %s.", markdown ? "`--all`" : "--all",
	      names.s);
	return true;
}

/* ---- the text table ---- */

struct table_widths {
	size_t name, med[2], range[2], side[2], change, ci, p, n, verdict;
	size_t tag;      /* the widest tag, 0: no tag column */
	char ci_title[24]; /* "[95% CI]" */
};

static void measure(const struct compare_result *r, const char *win, const struct cells *cells,
		    struct table_widths *w)
{
	*w = (struct table_widths){ .name = strlen("metric"), .change = strlen("change"), .p = 1, .n = 1,
				    .verdict = strlen("verdict") };
	snprintf(w->ci_title, sizeof(w->ci_title), "[%g%% CI]", 100 * (1 - r->opts.alpha));
	for (size_t i = 0; i < r->n_metrics; i++) {
		if (strcmp(r->metrics[i].window, win) || !compare_metric_shown(r, i))
			continue;
		const struct cells *c = &cells[i];
		w->name = max_sz(w->name, compare_text_width(c->name));
		for (int s = 0; s < 2; s++) {
			w->med[s] = max_sz(w->med[s], compare_text_width(c->med[s]));
			w->range[s] = max_sz(w->range[s], compare_text_width(c->range[s]));
		}
		w->change = max_sz(w->change, strlen(c->change));
		if (c->ci[0])
			w->ci = max_sz(w->ci, max_sz(strlen(c->ci), strlen(w->ci_title)));
		w->p = max_sz(w->p, strlen(c->p));
		w->n = max_sz(w->n, strlen(c->n));
		w->verdict = max_sz(w->verdict, strlen(c->verdict));
		if (c->tag)
			w->tag = max_sz(w->tag, strlen(c->tag));
	}
	const char *title[2] = { r->opts.aa ? "A" : "baseline", r->opts.aa ? "B" : "patched" };
	for (int s = 0; s < 2; s++)
		w->side[s] = max_sz(w->med[s] + (w->range[s] ? 1 + w->range[s] : 0), strlen(title[s]));
}

/* "  950,015 (901,000 990,000)": the median right-aligned, the range after it, padded to the column. */
static void side_cell(struct strbuf *b, const struct cells *c, const struct table_widths *w, int s, bool pad)
{
	size_t len = w->med[s] + (c->range[s][0] ? 1 + compare_text_width(c->range[s]) : 0);

	append_right(b, c->med[s], w->med[s]);
	if (c->range[s][0]) {
		strbuf_append(b, " ");
		strbuf_append(b, c->range[s]);
	}
	if (pad)
		strbuf_append_repeat(b, ' ', w->side[s] > len ? w->side[s] - len : 0);
}

/* The change, its interval, p, n and the verdict (and the timing), as the wide line ends and the narrow second line is. */
static void verdict_cells(struct strbuf *b, const struct cells *c, const struct table_widths *w)
{
	append_right(b, c->change, w->change);
	if (w->ci) {
		strbuf_append(b, " ");
		append_padded(b, c->ci, w->ci);
	}
	strbuf_append(b, "  ");
	append_right(b, c->p, w->p);
	strbuf_append(b, "  ");
	append_right(b, c->n, w->n);
	strbuf_append(b, "  ");
	if (c->tag) {
		append_padded(b, c->verdict, w->verdict);
		strbuf_append(b, "  ");
		strbuf_append(b, c->tag);
	} else {
		strbuf_append(b, c->verdict);
	}
}

static void verdict_titles(struct strbuf *b, const struct table_widths *w)
{
	append_right(b, "change", w->change);
	if (w->ci) {
		strbuf_append(b, " ");
		append_padded(b, w->ci_title, w->ci);
	}
	strbuf_append(b, "  ");
	append_right(b, "p", w->p);
	strbuf_append(b, "  ");
	append_right(b, "n", w->n);
	strbuf_append(b, "  ");
	if (w->tag) {
		append_padded(b, "verdict", w->verdict);
		strbuf_append(b, "  timing");
	} else {
		strbuf_append(b, "verdict");
	}
}

static size_t verdict_width(const struct table_widths *w)
{
	return w->change + (w->ci ? 1 + w->ci : 0) + 2 + w->p + 2 + w->n + 2 + w->verdict +
	       (w->tag ? 2 + max_sz(w->tag, strlen("timing")) : 0);
}

/* The rows of one window, one line per metric. */
static void window_wide(struct strbuf *b, const struct compare_result *r, const char *win, const struct cells *cells,
			const struct table_widths *w)
{
	const char *title[2] = { r->opts.aa ? "A" : "baseline", r->opts.aa ? "B" : "patched" };

	strbuf_append(b, "\n  ");
	append_padded(b, "metric", w->name);
	for (int s = 0; s < 2; s++) {
		strbuf_append(b, "  ");
		append_padded(b, title[s], w->side[s]);
	}
	strbuf_append(b, "  ");
	verdict_titles(b, w);
	strbuf_append(b, "\n  ");
	strbuf_append_repeat(b, '-', w->name + 2 + w->side[0] + 2 + w->side[1] + 2 + verdict_width(w));
	strbuf_append(b, "\n");
	for (size_t i = 0; i < r->n_metrics; i++) {
		if (strcmp(r->metrics[i].window, win) || !compare_metric_shown(r, i))
			continue;
		strbuf_append(b, "  ");
		append_padded(b, cells[i].name, w->name);
		for (int s = 0; s < 2; s++) {
			strbuf_append(b, "  ");
			side_cell(b, &cells[i], w, s, true);
		}
		strbuf_append(b, "  ");
		verdict_cells(b, &cells[i], w);
		strbuf_append(b, "\n");
	}
}

enum table_layout { LAYOUT_WIDE, LAYOUT_NARROW, LAYOUT_NARROW_ALONE, LAYOUT_STACKED };

/* The title of each side as the stacked layout's lines start: "baseline  ", "patched   " (A/A: "A  ", "B  "). */
static void side_title(struct strbuf *b, const struct compare_result *r, int s)
{
	const char *title[2] = { r->opts.aa ? "A" : "baseline", r->opts.aa ? "B" : "patched" };

	append_padded(b, title[s], strlen(title[0]) + 2);
}

/* The narrow layouts' head: the columns' titles over two or three lines, a rule under them. */
static void narrow_head(struct strbuf *b, const struct compare_result *r, const struct table_widths *w,
			enum table_layout l, size_t rule)
{
	const char *title[2] = { r->opts.aa ? "A" : "baseline", r->opts.aa ? "B" : "patched" };

	strbuf_append(b, "\n  ");
	append_padded(b, "metric", l == LAYOUT_NARROW ? w->name : 0);
	if (l != LAYOUT_NARROW)
		strbuf_append(b, "\n  ");
	strbuf_append(b, "  ");
	if (l == LAYOUT_STACKED) {
		strbuf_appendf(b, "%s / %s: median (min max)", title[0], title[1]);
	} else {
		append_padded(b, title[0], w->side[0]);
		strbuf_append(b, "  ");
		strbuf_append(b, title[1]);
	}
	strbuf_append(b, "\n    ");
	verdict_titles(b, w);
	strbuf_append(b, "\n  ");
	strbuf_append_repeat(b, '-', rule);
	strbuf_append(b, "\n");
}

/*
 * Two lines per metric: the name and both sides, then, indented, the change,
 * its interval, p, n and the verdict. LAYOUT_NARROW_ALONE: the name on a line
 * of its own (names too long for the sides to follow them); LAYOUT_STACKED:
 * then each side on a line of its own (sides too wide to share one).
 */
static void window_narrow(struct strbuf *b, const struct compare_result *r, const char *win, const struct cells *cells,
			  const struct table_widths *w, enum table_layout l, size_t width)
{
	size_t lead = l == LAYOUT_NARROW ? 2 + w->name + 2 : 4;
	size_t line1 = l == LAYOUT_STACKED ? 4 + strlen(r->opts.aa ? "A" : "baseline") + 2 + max_sz(w->side[0], w->side[1])
					   : lead + w->side[0] + 2 + w->side[1];
	size_t rule = max_sz(line1, 4 + verdict_width(w)) - 2;

	if (width && rule + 2 > width)
		rule = width - 2;
	narrow_head(b, r, w, l, rule);
	for (size_t i = 0; i < r->n_metrics; i++) {
		if (strcmp(r->metrics[i].window, win) || !compare_metric_shown(r, i))
			continue;
		strbuf_append(b, "  ");
		if (l != LAYOUT_NARROW) {
			strbuf_append(b, cells[i].name);
			strbuf_append(b, "\n    ");
		} else {
			append_padded(b, cells[i].name, w->name);
			strbuf_append(b, "  ");
		}
		for (int s = 0; s < 2; s++) {
			if (l == LAYOUT_STACKED)
				side_title(b, r, s);
			side_cell(b, &cells[i], w, s, s == 0 && l != LAYOUT_STACKED);
			strbuf_append(b, s == 0 && l != LAYOUT_STACKED ? "  " : "\n    ");
		}
		verdict_cells(b, &cells[i], w);
		strbuf_append(b, "\n");
	}
}

static size_t layout_width(const struct compare_result *r, const struct table_widths *w, enum table_layout l)
{
	size_t verdicts = 4 + verdict_width(w);

	if (l == LAYOUT_WIDE)
		return 2 + w->name + 2 + w->side[0] + 2 + w->side[1] + 2 + verdict_width(w);
	if (l == LAYOUT_NARROW)
		return max_sz(2 + w->name + 2 + w->side[0] + 2 + w->side[1], verdicts);
	if (l == LAYOUT_NARROW_ALONE)
		return max_sz(4 + w->side[0] + 2 + w->side[1], max_sz(2 + w->name, verdicts));
	return max_sz(4 + strlen(r->opts.aa ? "A" : "baseline") + 2 + max_sz(w->side[0], w->side[1]),
		      max_sz(2 + w->name, verdicts));
}

/*
 * One window's table in the first layout that fits: wide; narrow; the names
 * alone; each side alone. Always full digits: a figure reads the same in
 * every layout and format (950,015, never 950k in one and 950,015 in another).
 */
static int table_window(struct strbuf *b, const struct compare_result *r, const char *win, const struct cells *cells,
			const struct compare_text_options *o, size_t width)
{
	struct table_widths w;
	enum table_layout l = LAYOUT_WIDE;

	measure(r, win, cells, &w);
	if (o->wide || layout_width(r, &w, LAYOUT_WIDE) <= width) {
		window_wide(b, r, win, cells, &w);
		return 0;
	}
	while (l < LAYOUT_STACKED && layout_width(r, &w, ++l) > width)
		;
	window_narrow(b, r, win, cells, &w, l, width);
	return 0;
}

char *compare_format_table(const struct compare_result *r, const struct compare_text_options *opts)
{
	const struct compare_text_options o = opts ? *opts : (struct compare_text_options){ 0 };
	size_t width = o.width ? o.width : COMPARE_TEXT_WIDTH_DEFAULT;
	struct strbuf b = { 0 };
	_cleanup_free_ struct cells *cells = calloc(r->n_metrics ? r->n_metrics : 1, sizeof(*cells));

	if (!cells)
		return NULL;
	for (size_t i = 0; i < r->n_metrics; i++)
		fill_cells(&r->metrics[i], o.ascii, &cells[i]);

	context_lines(&b, r, false, width);
	for (size_t w = 0; w < r->opts.n_windows; w++) {
		const char *win = r->opts.windows[w];
		size_t rows = 0, shown = 0;

		for (size_t i = 0; i < r->n_metrics; i++)
			if (!strcmp(r->metrics[i].window, win)) {
				rows++;
				shown += compare_metric_shown(r, i);
			}
		strbuf_appendf(&b, "\nWindow %s:\n", win);
		if (!rows) {
			strbuf_append(&b, "  (no metric had values on both sides)\n");
			continue;
		}
		if (shown)
			table_window(&b, r, win, cells, &o, width);
		else
			strbuf_append(&b, "\n");
		left_out_line(&b, r, win, false, width); /* under the table: the metrics 0 everywhere */
	}
	strbuf_appendf(&b, "\nVerdict: %s (exit code %d).\n", compare_verdict_name(r->verdict), r->exit_code);
	notes_and_skipped(&b, r, false, width);
	warnings_section(&b, r, false, width);
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
		left_out_line(b, r, win, true, 0);
		return;
	}
	bool emulated = false;
	for (size_t i = 0; i < r->n_metrics; i++)
		emulated |= !strcmp(r->metrics[i].window, win) && compare_metric_shown(r, i) &&
			    compare_metric_tag(&r->metrics[i]);
	strbuf_appendf(b, "| metric | %s median (min max) | %s median (min max) | change | %g%% CI | p | n | verdict |%s\n",
		       r->opts.aa ? "A" : "baseline", r->opts.aa ? "B" : "patched", 100 * (1 - r->opts.alpha),
		       emulated ? " timing |" : "");
	strbuf_appendf(b, "|:--|--:|--:|--:|--:|--:|--:|:--|%s\n", emulated ? ":--|" : "");
	for (size_t i = 0; i < r->n_metrics; i++) {
		if (strcmp(r->metrics[i].window, win) || !compare_metric_shown(r, i))
			continue;
		struct cells c;
		bool bold = r->metrics[i].verdict == COMPARE_REGRESSED;
		fill_cells(&r->metrics[i], false, &c);
		strbuf_append(b, "| ");
		md_cell(b, c.name);
		strbuf_append(b, " | ");
		for (int s = 0; s < 2; s++) {
			md_cell(b, c.med[s]);
			if (c.range[s][0]) {
				strbuf_append(b, " ");
				md_cell(b, c.range[s]);
			}
			strbuf_append(b, " | ");
		}
		strbuf_appendf(b, "%s | %s | %s | %s | %s%s%s |", c.change, c.ci, c.p, c.n, bold ? "**" : "", c.verdict,
			       bold ? "**" : "");
		if (emulated)
			strbuf_appendf(b, " %s |", c.tag ? c.tag : "");
		strbuf_append(b, "\n");
	}
	if (!rows)
		strbuf_append(b, "| (no metric had values on both sides) | | | | | | | |\n");
	left_out_line(b, r, win, true, 0);
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
			if (!file) {
				b->oom = true;
				return;
			}
			compare_metric_name(r->metrics[i].name, name, sizeof(name));
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
	/* the kernels and the timing up front: what a reader of the comment must not miss */
	context_lines(&b, r, true, 0);
	for (size_t w = 0; w < r->opts.n_windows; w++)
		md_window(&b, r, r->opts.windows[w]);
	strbuf_appendf(&b, "\nVerdict: **%s** (exit code %d).\n", compare_verdict_name(r->verdict), r->exit_code);
	warnings_section(&b, r, true, 0);
	md_plots(&b, r, flags);
	if (r->n_skipped || r->metrics) {
		_cleanup_strbuf_ struct strbuf details = {};
		notes_and_skipped(&details, r, true, 0);
		if (details.oom)
			b.oom = true;
		else if (details.s)
			strbuf_appendf(&b, "\n<details>\n<summary>Notes and skipped metrics</summary>\n%s\n</details>\n",
				       details.s);
	}
	return strbuf_steal(&b);
}
