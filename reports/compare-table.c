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

static void format_change(const struct compare_metric *m, char *buf, size_t size)
{
	if (m->from_zero)
		snprintf(buf, size, "from 0");
	else if (isnan(m->pct_change))
		snprintf(buf, size, "n/a");
	else if (fabs(m->pct_change) < 0.05)
		snprintf(buf, size, "0.0%%");
	else
		snprintf(buf, size, "%+.1f%%", m->pct_change);
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
	char p[24];
	const char *verdict;
};

static void fill_cells(const struct compare_metric *m, struct cells *c)
{
	char lo[32], hi[32];

	metric_display_name(m->name, c->name, sizeof(c->name));
	for (int s = 0; s < 2; s++) {
		compare_format_number(m->arm[s].s.median, c->med[s], sizeof(c->med[s]));
		compare_format_number(m->arm[s].s.min, lo, sizeof(lo));
		compare_format_number(m->arm[s].s.max, hi, sizeof(hi));
		snprintf(c->range[s], sizeof(c->range[s]), "(%s %s)", lo, hi);
	}
	format_change(m, c->change, sizeof(c->change));
	format_p(m->mwu.p, c->p, sizeof(c->p));
	c->verdict = compare_verdict_name(m->verdict);
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

/* Whether any repetition of the comparison ran in a host VM under TCG. */
static bool any_tcg(const struct compare_result *r)
{
	for (int sd = 0; sd < 2; sd++)
		for (size_t i = 0; i < r->side[sd]->n_reports; i++) {
			struct json_object *k = compare_arm_kernel(r->side[sd]->reports[i]->root, r->side[sd]->label);
			const char *accel = json_lookup_string(json_lookup(k, "host_vm"), "accel");
			if (accel && !strcmp(accel, "tcg"))
				return true;
		}
	return false;
}

static void header(struct strbuf *b, const struct compare_result *r, bool markdown)
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
	strbuf_append(b, markdown ? ".\n\n" : "\n");
	strbuf_append(b, "Kernel: ");
	kernels(b, r->side[0]);
	strbuf_append(b, " vs ");
	kernels(b, r->side[1]);
	strbuf_appendf(b, "%s", markdown ? ".\n\n" : "\n");
	if (any_tcg(r))
		strbuf_appendf(b, "Host VMs under TCG (emulated CPU): absolute figures are not bare metal's; the ratio between arms of one run is what counts.%s",
			    markdown ? "\n\n" : "\n");
	strbuf_appendf(b, "Median (min max) per arm; two-sided Mann-Whitney U, alpha %g; change threshold %g%%.\n",
		    r->opts.alpha, r->opts.threshold_pct);
}

static void notes_section(struct strbuf *b, const struct compare_result *r, bool markdown)
{
	const char *bullet = markdown ? "- " : "  ";
	size_t n_notes = 0;

	for (size_t i = 0; i < r->n_metrics; i++)
		n_notes += strv_length(r->metrics[i].notes);
	if (n_notes) {
		strbuf_append(b, markdown ? "\n**Notes**\n\n" : "\nNotes:\n");
		for (size_t i = 0; i < r->n_metrics; i++) {
			char name[96];
			metric_display_name(r->metrics[i].name, name, sizeof(name));
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
	if (r->warnings) {
		strbuf_append(b, markdown ? "\n**Warnings**\n\n" : "\nWarnings:\n");
		for (size_t i = 0; r->warnings[i]; i++) {
			char w[1200];
			text_sanitize(r->warnings[i], w, sizeof(w));
			strbuf_appendf(b, "%s%s\n", bullet, w);
		}
	}
}

char *compare_format_table(const struct compare_result *r)
{
	struct strbuf b = { 0 };
	_cleanup_free_ struct cells *cells = calloc(r->n_metrics ? r->n_metrics : 1, sizeof(*cells));

	if (!cells)
		return NULL;
	for (size_t i = 0; i < r->n_metrics; i++)
		fill_cells(&r->metrics[i], &cells[i]);

	header(&b, r, false);
	for (size_t w = 0; w < r->opts.n_windows; w++) {
		const char *win = r->opts.windows[w];
		size_t wname = strlen("metric"), wmed[2] = { 0 }, wrange[2] = { 0 };
		size_t wchange = strlen("change"), wp = 1, wverdict = strlen("verdict"), rows = 0;

		for (size_t i = 0; i < r->n_metrics; i++) {
			if (strcmp(r->metrics[i].window, win))
				continue;
			const struct cells *c = &cells[i];
			rows++;
			wname = max_sz(wname, strlen(c->name));
			for (int s = 0; s < 2; s++) {
				wmed[s] = max_sz(wmed[s], strlen(c->med[s]));
				wrange[s] = max_sz(wrange[s], strlen(c->range[s]));
			}
			wchange = max_sz(wchange, strlen(c->change));
			wp = max_sz(wp, strlen(c->p));
			wverdict = max_sz(wverdict, strlen(c->verdict));
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

		strbuf_appendf(&b, "\n  %-*s  %-*s  %-*s  %*s  %*s  %s\n", (int)wname, "metric", (int)wcol[0], title[0],
			    (int)wcol[1], title[1], (int)wchange, "change", (int)wp, "p", "verdict");
		strbuf_append(&b, "  ");
		strbuf_append_repeat(&b, '-', wname + wcol[0] + wcol[1] + wchange + wp + wverdict + 10);
		strbuf_append(&b, "\n");
		for (size_t i = 0; i < r->n_metrics; i++) {
			if (strcmp(r->metrics[i].window, win))
				continue;
			const struct cells *c = &cells[i];
			char col[2][128];
			for (int s = 0; s < 2; s++)
				snprintf(col[s], sizeof(col[s]), "%*s %-*s", (int)wmed[s], c->med[s], (int)wrange[s],
					 c->range[s]);
			strbuf_appendf(&b, "  %-*s  %-*s  %-*s  %*s  %*s  %s\n", (int)wname, c->name, (int)wcol[0], col[0],
				    (int)wcol[1], col[1], (int)wchange, c->change, (int)wp, c->p, c->verdict);
		}
	}
	strbuf_appendf(&b, "\nVerdict: %s (exit code %d).\n", compare_verdict_name(r->verdict), r->exit_code);
	notes_section(&b, r, false);
	return strbuf_steal(&b);
}

/* Markdown table cells: escape what would change the table or the emphasis. */
static void md_cell(struct strbuf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\`*_[]<>|#", *s))
			strbuf_appendf(b, "\\%c", *s);
		else
			strbuf_appendf(b, "%c", (*s >= 0x20 && *s < 0x7f) ? *s : '?');
	}
}

char *compare_format_markdown(const struct compare_result *r)
{
	struct strbuf b = { 0 };

	strbuf_appendf(&b, "### snapbench compare: %s\n\n", compare_verdict_name(r->verdict));
	header(&b, r, true);
	for (size_t w = 0; w < r->opts.n_windows; w++) {
		const char *win = r->opts.windows[w];
		strbuf_appendf(&b, "\n#### Window %s\n\n", win);
		strbuf_appendf(&b, "| metric | %s median (min max) | %s median (min max) | change | p | verdict |\n",
			    r->opts.aa ? "A" : "baseline", r->opts.aa ? "B" : "patched");
		strbuf_append(&b, "|:--|--:|--:|--:|--:|:--|\n");
		size_t rows = 0;
		for (size_t i = 0; i < r->n_metrics; i++) {
			if (strcmp(r->metrics[i].window, win))
				continue;
			struct cells c;
			fill_cells(&r->metrics[i], &c);
			rows++;
			strbuf_append(&b, "| ");
			md_cell(&b, c.name);
			strbuf_appendf(&b, " | %s %s | %s %s | %s | %s | %s%s%s |\n", c.med[0], c.range[0], c.med[1],
				    c.range[1], c.change, c.p, r->metrics[i].verdict == COMPARE_REGRESSED ? "**" : "",
				    c.verdict, r->metrics[i].verdict == COMPARE_REGRESSED ? "**" : "");
		}
		if (!rows)
			strbuf_append(&b, "| (no metric had values on both sides) | | | | | |\n");
	}
	strbuf_appendf(&b, "\nVerdict: **%s** (exit code %d).\n", compare_verdict_name(r->verdict), r->exit_code);
	notes_section(&b, r, true);
	return strbuf_steal(&b);
}
