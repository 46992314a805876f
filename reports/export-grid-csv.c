// SPDX-License-Identifier: GPL-2.0-or-later
/* compare --grid as CSV: the figures of every cell of every table, for a spreadsheet or a plot. */
#include <stdio.h>
#include <stdlib.h>

#include "export-grid.h"
#include "export-private.h"

static void cell_row(struct strbuf *b, const struct compare_grid *g, size_t row, size_t col,
		     const struct compare_grid_table *t)
{
	const struct compare_grid_cell *cell = compare_grid_cell(g, row, col);
	const struct compare_metric *m = compare_grid_metric(g, row, col, t);
	char n[2][24] = { "", "" }, med[2][EXPORT_NUMBER_MAX] = { "", "" }, ratio[EXPORT_NUMBER_MAX] = "",
	     pct[EXPORT_NUMBER_MAX] = "", p[EXPORT_NUMBER_MAX] = "", threshold[EXPORT_NUMBER_MAX] = "";

	if (m) {
		for (int s = 0; s < 2; s++) {
			snprintf(n[s], sizeof(n[s]), "%zu", m->arm[s].n);
			export_format_number(m->arm[s].s.median, med[s]);
		}
		export_format_number(m->ratio, ratio);
		export_format_number(m->pct_change, pct);
		export_format_number(m->mwu.p, p);
		export_format_number(m->threshold_pct, threshold);
	}
	const char *fields[] = { t->window, t->name, t->first->unit, compare_better_name(t->first->better),
				 g->rows[row].value, g->columns[col], g->rows[row].baseline_label, cell->label,
				 n[0], med[0], n[1], med[1], ratio, pct,
				 m ? (m->from_zero ? "true" : "false") : "", p, threshold,
				 m ? compare_verdict_name(m->verdict) : "", m ? (m->emulated ? "true" : "false") : "" };
	export_append_csv_row(b, fields, ARRAY_SIZE(fields));
}

char *export_compare_grid_csv(const struct compare_grid *g)
{
	_cleanup_strbuf_ struct strbuf b = {};
	size_t nt;
	_cleanup_free_ struct compare_grid_table *t = compare_grid_tables(g, &nt);
	char row_h[96], col_h[96];

	if (!t)
		return NULL;
	/* the parameters name their columns: a spreadsheet's pivot reads them as they are */
	snprintf(row_h, sizeof(row_h), "row:%s", g->req.rows);
	snprintf(col_h, sizeof(col_h), "column:%s", g->req.columns);
	const char *header[] = { "window", "metric", "unit", "better", row_h, col_h, "baseline_label", "label",
				 "baseline_n", "baseline_median", "patched_n", "patched_median", "ratio",
				 "pct_change", "from_zero", "p", "threshold_pct", "verdict", "emulated" };
	export_append_csv_row(&b, header, ARRAY_SIZE(header));
	for (size_t i = 0; i < nt; i++)
		for (size_t r = 0; r < g->n_rows; r++)
			for (size_t c = 0; c < g->n_columns; c++)
				if (compare_grid_cell(g, r, c)->label)
					cell_row(&b, g, r, c, &t[i]);
	return strbuf_steal(&b);
}
