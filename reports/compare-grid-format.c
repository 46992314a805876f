// SPDX-License-Identifier: GPL-2.0-or-later
/* compare --grid's outputs: the text table, Markdown and snapbench.compare-grid/1 JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare-grid.h"
#include "compare-private.h"
#include "json-number.h"

/* A cell's mark: significant (a verdict beyond no-change), too few values for one, or none. */
static const char *cell_mark(const struct compare_metric *m)
{
	switch (m->verdict) {
	case COMPARE_IMPROVED:
	case COMPARE_REGRESSED:
	case COMPARE_CHANGED:
		return "*";
	case COMPARE_INSUFFICIENT_DATA:
		return "?";
	case COMPARE_NO_CHANGE:
		break;
	}
	return " ";
}

static const char *better_text(enum compare_better b)
{
	return b == COMPARE_BETTER_LOWER ? "lower is better" : b == COMPARE_BETTER_HIGHER ? "higher is better" : "no direction";
}

/* What the cell of row, column shows of table t in text: "-36.0% *", "-" (no arm), "n/a" (no figure). */
static void text_cell(const struct compare_grid *g, size_t row, size_t col, const struct compare_grid_table *t,
		      char *buf, size_t size)
{
	const struct compare_metric *m = compare_grid_metric(g, row, col, t);
	char change[40];

	if (!compare_grid_cell(g, row, col)->label) {
		snprintf(buf, size, "-  ");
		return;
	}
	if (!m) {
		snprintf(buf, size, "n/a  ");
		return;
	}
	compare_format_change(m, change, sizeof(change));
	snprintf(buf, size, "%s %s", change, cell_mark(m));
}

static void text_baseline(const struct compare_grid *g, size_t row, const struct compare_grid_table *t, bool ascii,
			  char *buf, size_t size)
{
	const struct compare_metric *m = compare_grid_row_baseline(g, row, t);

	if (m)
		compare_format_value(m, m->arm[0].s.median, ascii, buf, size);
	else
		snprintf(buf, size, "n/a");
}

/* Ends a line of a table: without the padding its last cell left. */
static void end_line(struct strbuf *b)
{
	while (!b->oom && b->len && b->s[b->len - 1] == ' ')
		b->s[--b->len] = '\0';
	strbuf_append(b, "\n");
}

/* text as lines of at most width columns, broken at spaces (a longer word keeps its line); the caller wrote
 * indent columns before it, and the lines after the first are indented as much. */
static void append_wrapped(struct strbuf *b, const char *text, size_t width, size_t indent)
{
	size_t col = indent;
	bool first = true;

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, " \n");
		if (!first && col + 1 + len > width) {
			strbuf_append(b, "\n");
			strbuf_append_repeat(b, ' ', indent);
			col = indent;
		} else if (!first) {
			strbuf_append(b, " ");
			col++;
		}
		strbuf_append_mem(b, p, len);
		col += len;
		first = false;
		p += len;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	strbuf_append(b, "\n");
}

static void pad(struct strbuf *b, const char *s, size_t width, bool right)
{
	size_t w = compare_text_width(s);

	if (right)
		strbuf_append_repeat(b, ' ', width > w ? width - w : 0);
	strbuf_append(b, s);
	if (!right)
		strbuf_append_repeat(b, ' ', width > w ? width - w : 0);
}

#define CELL_MAX 64

static void text_table(struct strbuf *b, const struct compare_grid *g, const struct compare_grid_table *t, bool ascii)
{
	char name[96], row_name[80], cell[CELL_MAX], v[80];
	size_t w_row = compare_text_width(g->req.rows), w_base = strlen("baseline");
	size_t w_col[COMPARE_GRID_MAX_VALUES];

	compare_metric_name(t->name, name, sizeof(name));
	strbuf_appendf(b, "\n%s in %s (%s)%s\n", name, t->window, better_text(t->first->better),
		       t->emulated ? ", emulated (TCG)" : "");
	for (size_t r = 0; r < g->n_rows; r++) {
		text_sanitize(g->rows[r].value, row_name, sizeof(row_name));
		w_row = w_row > strlen(row_name) ? w_row : strlen(row_name);
		text_baseline(g, r, t, ascii, v, sizeof(v));
		w_base = w_base > compare_text_width(v) ? w_base : compare_text_width(v);
	}
	for (size_t c = 0; c < g->n_columns; c++) {
		text_sanitize(g->columns[c], v, sizeof(v));
		w_col[c] = strlen(v) + 2; /* the title over the change, its mark's column beside it */
		for (size_t r = 0; r < g->n_rows; r++) {
			text_cell(g, r, c, t, cell, sizeof(cell));
			w_col[c] = w_col[c] > strlen(cell) ? w_col[c] : strlen(cell);
		}
	}
	text_sanitize(g->req.rows, row_name, sizeof(row_name));
	pad(b, row_name, w_row, false);
	strbuf_append(b, "  ");
	pad(b, "baseline", w_base, true);
	for (size_t c = 0; c < g->n_columns; c++) {
		text_sanitize(g->columns[c], v, sizeof(v));
		strbuf_append(b, "  ");
		pad(b, v, w_col[c] - 2, true);
		strbuf_append(b, "  ");
	}
	end_line(b);
	for (size_t r = 0; r < g->n_rows; r++) {
		text_sanitize(g->rows[r].value, row_name, sizeof(row_name));
		pad(b, row_name, w_row, false);
		strbuf_append(b, "  ");
		text_baseline(g, r, t, ascii, v, sizeof(v));
		pad(b, v, w_base, true);
		for (size_t c = 0; c < g->n_columns; c++) {
			text_cell(g, r, c, t, cell, sizeof(cell));
			strbuf_append(b, "  ");
			pad(b, cell, w_col[c], true);
		}
		end_line(b);
	}
}

/* "5+5", or "4+5 to 5+5" when the cells differ: the repetitions behind each cell. */
static void reps_range(const struct compare_grid *g, char *buf, size_t size)
{
	size_t lo[2] = { SIZE_MAX, SIZE_MAX }, hi[2] = { 0, 0 };

	for (size_t r = 0; r < g->n_rows; r++)
		for (size_t c = 0; c < g->n_columns; c++) {
			const struct compare_grid_cell *cell = compare_grid_cell(g, r, c);
			if (!cell->result)
				continue;
			size_t n[2] = { g->rows[r].baseline.n_reps, cell->side.n_reps };
			for (int s = 0; s < 2; s++) {
				lo[s] = n[s] < lo[s] ? n[s] : lo[s];
				hi[s] = n[s] > hi[s] ? n[s] : hi[s];
			}
		}
	if (lo[0] == SIZE_MAX)
		snprintf(buf, size, "none");
	else if (lo[0] == hi[0] && lo[1] == hi[1])
		snprintf(buf, size, "%zu+%zu", lo[0], lo[1]);
	else
		snprintf(buf, size, "%zu+%zu to %zu+%zu", lo[0], lo[1], hi[0], hi[1]);
}

static void legend(struct strbuf *b, const struct compare_grid *g, bool markdown)
{
	char cols[80], base[80] = "", reps[64];

	text_sanitize(g->req.columns, cols, sizeof(cols));
	if (g->req.baseline)
		text_sanitize(g->req.baseline, base, sizeof(base));
	reps_range(g, reps, sizeof(reps));
	_cleanup_strbuf_ struct strbuf l = {};
	strbuf_appendf(&l, "Each cell: the change of medians against its row's baseline (the arm %s %s%s%s); %s: "
		       "significant (two-sided Mann-Whitney U, p <= %g, and beyond the %g%% threshold)%s; "
		       "repetitions per cell (baseline+patched): %s.\n",
		       g->req.baseline ? "whose" : "without", cols, g->req.baseline ? " is " : "", base,
		       markdown ? "bold" : "*", g->opts.alpha, g->opts.threshold_pct,
		       markdown ? ", p beside it" : "; ?: too few repetitions for a verdict; -: no arm", reps);
	if (l.oom) {
		b->oom = true;
		return;
	}
	if (markdown)
		strbuf_append(b, l.s);
	else
		append_wrapped(b, l.s, COMPARE_TEXT_WIDTH_DEFAULT, 0);
}

static void left_out(struct strbuf *b, const struct compare_grid_table *t, size_t nt, bool show_all, bool markdown)
{
	_cleanup_strbuf_ struct strbuf l = {};
	size_t shown = 0;
	char name[96];

	for (size_t i = 0; i < nt && !show_all; i++) {
		if (!t[i].all_zero)
			continue;
		compare_metric_name(t[i].name, name, sizeof(name));
		strbuf_appendf(&l, "%s%s in %s", shown++ ? ", " : "Left out, 0 in every repetition of every cell "
			       "(--all keeps them): ", name, t[i].window);
	}
	if (!shown)
		return;
	strbuf_append(&l, ".");
	if (l.oom) {
		b->oom = true;
		return;
	}
	strbuf_append(b, "\n");
	append_wrapped(b, l.s, markdown ? SIZE_MAX : COMPARE_TEXT_WIDTH_DEFAULT, 0);
}

static void warnings_text(struct strbuf *b, const struct compare_grid *g, bool markdown)
{
	char w[600];

	if (!g->warnings)
		return;
	strbuf_append(b, markdown ? "\n### Warnings\n\n" : "\nWarnings:\n");
	for (size_t i = 0; g->warnings[i]; i++) {
		text_sanitize(g->warnings[i], w, sizeof(w));
		strbuf_append(b, markdown ? "- " : "  - ");
		append_wrapped(b, w, markdown ? SIZE_MAX : COMPARE_TEXT_WIDTH_DEFAULT, markdown ? 0 : 4);
	}
}

static void heading(struct strbuf *b, const struct compare_grid *g, bool markdown)
{
	char rows[80], cols[80];

	text_sanitize(g->req.rows, rows, sizeof(rows));
	text_sanitize(g->req.columns, cols, sizeof(cols));
	strbuf_appendf(b, "%sGrid: rows %s, columns %s (%zu x %zu); verdict %s\n%s", markdown ? "## " : "", rows, cols,
		       g->n_rows, g->n_columns, compare_verdict_name(g->verdict), markdown ? "\n" : "");
	legend(b, g, markdown);
}

char *compare_grid_format_text(const struct compare_grid *g, bool ascii)
{
	_cleanup_strbuf_ struct strbuf b = {};
	size_t nt;
	_cleanup_free_ struct compare_grid_table *t = compare_grid_tables(g, &nt);

	if (!t)
		return NULL;
	heading(&b, g, false);
	for (size_t i = 0; i < nt; i++)
		if (!t[i].all_zero || g->opts.show_all)
			text_table(&b, g, &t[i], ascii);
	left_out(&b, t, nt, g->opts.show_all, false);
	warnings_text(&b, g, false);
	return strbuf_steal(&b);
}

/* ---- Markdown ---- */

static void md_text(struct strbuf *b, const char *s)
{
	char clean[200];

	text_sanitize(s, clean, sizeof(clean));
	for (const char *p = clean; *p; p++) {
		if (strchr("|*_`<>[]\\", *p))
			strbuf_append(b, "\\");
		strbuf_append_mem(b, p, 1);
	}
}

static void md_cell(struct strbuf *b, const struct compare_grid *g, size_t row, size_t col,
		    const struct compare_grid_table *t)
{
	const struct compare_metric *m = compare_grid_metric(g, row, col, t);
	char change[40];

	strbuf_append(b, " | ");
	if (!compare_grid_cell(g, row, col)->label) {
		strbuf_append(b, "-");
		return;
	}
	if (!m) {
		strbuf_append(b, "n/a");
		return;
	}
	compare_format_change(m, change, sizeof(change));
	bool sig = cell_mark(m)[0] == '*';
	strbuf_appendf(b, "%s%s%s (p %.2g%s)", sig ? "**" : "", change, sig ? "**" : "", m->mwu.p,
		       m->verdict == COMPARE_INSUFFICIENT_DATA ? ", too few" : "");
}

static void md_table(struct strbuf *b, const struct compare_grid *g, const struct compare_grid_table *t)
{
	char name[96], v[160];

	compare_metric_name(t->name, name, sizeof(name));
	strbuf_append(b, "\n### ");
	md_text(b, name);
	strbuf_appendf(b, " in %s (%s%s)\n\n| ", t->window, better_text(t->first->better),
		       t->emulated ? "; emulated (TCG)" : "");
	md_text(b, g->req.rows);
	strbuf_append(b, " | baseline");
	for (size_t c = 0; c < g->n_columns; c++) {
		strbuf_append(b, " | ");
		md_text(b, g->columns[c]);
	}
	strbuf_append(b, " |\n|---|---:");
	for (size_t c = 0; c < g->n_columns; c++)
		strbuf_append(b, "|---:");
	strbuf_append(b, "|\n");
	for (size_t r = 0; r < g->n_rows; r++) {
		const struct compare_metric *bm = compare_grid_row_baseline(g, r, t);
		strbuf_append(b, "| ");
		md_text(b, g->rows[r].value);
		strbuf_append(b, " | ");
		if (bm)
			compare_format_side(bm, 0, false, v, sizeof(v));
		md_text(b, bm ? v : "n/a");
		for (size_t c = 0; c < g->n_columns; c++)
			md_cell(b, g, r, c, t);
		strbuf_append(b, " |\n");
	}
}

char *compare_grid_format_markdown(const struct compare_grid *g)
{
	_cleanup_strbuf_ struct strbuf b = {};
	size_t nt;
	_cleanup_free_ struct compare_grid_table *t = compare_grid_tables(g, &nt);

	if (!t)
		return NULL;
	heading(&b, g, true);
	for (size_t i = 0; i < nt; i++)
		if (!t[i].all_zero || g->opts.show_all)
			md_table(&b, g, &t[i]);
	left_out(&b, t, nt, g->opts.show_all, true);
	warnings_text(&b, g, true);
	return strbuf_steal(&b);
}
