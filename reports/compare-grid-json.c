// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench.compare-grid/1: reports/schema/compare-grid-1.schema.json. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare-grid.h"
#include "compare-private.h"
#include "json-number.h"

static struct json_object *str(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *strings(char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++)
		json_object_array_add(a, str(v[i]));
	return a;
}

/* One side of an arm: its label, the runs and the number of repetitions used. */
static struct json_object *arm_json(const struct compare_side *s, const char *label)
{
	struct json_object *o = json_object_new_object(), *runs = json_object_new_array();

	for (size_t i = 0; runs && i < s->n_reports; i++)
		json_object_array_add(runs, str(s->reports[i]->id));
	json_object_object_add(o, "label", str(label));
	json_object_object_add(o, "runs", runs);
	json_object_object_add(o, "repetitions", json_object_new_int64((int64_t)s->n_reps));
	return o;
}

static struct json_object *side_stats(const struct compare_arm_stats *a)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "n", json_object_new_int64((int64_t)a->n));
	json_object_object_add(o, "median", json_number_new(a->s.median));
	json_object_object_add(o, "min", json_number_new(a->s.min));
	json_object_object_add(o, "max", json_number_new(a->s.max));
	return o;
}

static struct json_object *cell_json(const struct compare_grid *g, size_t row, size_t col,
				     const struct compare_grid_table *t)
{
	const struct compare_grid_cell *cell = compare_grid_cell(g, row, col);
	const struct compare_metric *m = compare_grid_metric(g, row, col, t);
	struct json_object *o = json_object_new_object();
	char change[40];

	json_object_object_add(o, "row", str(g->rows[row].value));
	json_object_object_add(o, "column", str(g->columns[col]));
	json_object_object_add(o, "label", str(cell->label));
	if (!m) {
		json_object_object_add(o, "verdict", NULL);
		return o;
	}
	compare_format_change(m, change, sizeof(change));
	json_object_object_add(o, "baseline", side_stats(&m->arm[0]));
	json_object_object_add(o, "patched", side_stats(&m->arm[1]));
	json_object_object_add(o, "ratio", json_number_new(m->ratio));
	json_object_object_add(o, "pct_change", json_number_new(m->pct_change));
	json_object_object_add(o, "from_zero", json_object_new_boolean(m->from_zero));
	json_object_object_add(o, "change", str(change));
	json_object_object_add(o, "p", json_number_new(m->mwu.p));
	json_object_object_add(o, "threshold_pct", json_number_new(m->threshold_pct));
	json_object_object_add(o, "emulated", json_object_new_boolean(m->emulated));
	json_object_object_add(o, "verdict", str(compare_verdict_name(m->verdict)));
	return o;
}

static struct json_object *table_json(const struct compare_grid *g, const struct compare_grid_table *t)
{
	struct json_object *o = json_object_new_object(), *cells = json_object_new_array();

	json_object_object_add(o, "window", str(t->window));
	json_object_object_add(o, "metric", str(t->name));
	json_object_object_add(o, "unit", str(t->first->unit));
	json_object_object_add(o, "better", str(compare_better_name(t->first->better)));
	json_object_object_add(o, "emulated", json_object_new_boolean(t->emulated));
	json_object_object_add(o, "all_zero", json_object_new_boolean(t->all_zero));
	for (size_t r = 0; cells && r < g->n_rows; r++)
		for (size_t c = 0; c < g->n_columns; c++)
			if (compare_grid_cell(g, r, c)->label)
				json_object_array_add(cells, cell_json(g, r, c, t));
	json_object_object_add(o, "cells", cells);
	return o;
}

static struct json_object *arms_json(const struct compare_grid *g)
{
	struct json_object *a = json_object_new_array();

	for (size_t r = 0; a && r < g->n_rows; r++) {
		struct json_object *o = arm_json(&g->rows[r].baseline, g->rows[r].baseline_label);
		json_object_object_add(o, "row", str(g->rows[r].value));
		json_object_object_add(o, "column", NULL);
		json_object_array_add(a, o);
		for (size_t c = 0; c < g->n_columns; c++) {
			const struct compare_grid_cell *cell = compare_grid_cell(g, r, c);
			if (!cell->label)
				continue;
			o = arm_json(&cell->side, cell->label);
			json_object_object_add(o, "row", str(g->rows[r].value));
			json_object_object_add(o, "column", str(g->columns[c]));
			json_object_object_add(o, "no_comparison", str(cell->why_empty));
			json_object_array_add(a, o);
		}
	}
	return a;
}

static struct json_object *grid_json(const struct compare_grid *g, const struct compare_grid_table *t, size_t nt)
{
	struct json_object *o = json_object_new_object(), *rows = json_object_new_object(),
			   *cols = json_object_new_object(), *settings = json_object_new_object(),
			   *tables = json_object_new_array();

	json_object_object_add(o, "schema", str(COMPARE_GRID_SCHEMA));
	json_object_object_add(rows, "parameter", str(g->req.rows));
	json_object_object_add(rows, "values", json_object_new_array());
	for (size_t r = 0; r < g->n_rows; r++)
		json_object_array_add(json_lookup(rows, "values"), str(g->rows[r].value));
	json_object_object_add(o, "rows", rows);
	json_object_object_add(cols, "parameter", str(g->req.columns));
	json_object_object_add(cols, "values", strings(g->columns, g->n_columns));
	json_object_object_add(cols, "baseline", str(g->req.baseline));
	json_object_object_add(o, "columns", cols);
	json_object_object_add(o, "arms", arms_json(g));
	json_object_object_add(settings, "alpha", json_number_new(g->opts.alpha));
	json_object_object_add(settings, "threshold_pct", json_number_new(g->opts.threshold_pct));
	json_object_object_add(settings, "test", str("mann-whitney-u"));
	json_object_object_add(o, "settings", settings);
	for (size_t i = 0; tables && i < nt; i++)
		json_object_array_add(tables, table_json(g, &t[i]));
	json_object_object_add(o, "tables", tables);
	json_object_object_add(o, "warnings", strings(g->warnings, strv_length(g->warnings)));
	json_object_object_add(o, "verdict", str(compare_verdict_name(g->verdict)));
	json_object_object_add(o, "exit_code", json_object_new_int(g->exit_code));
	return o;
}

char *compare_grid_json_string(const struct compare_grid *g)
{
	size_t nt;
	_cleanup_free_ struct compare_grid_table *t = compare_grid_tables(g, &nt);
	if (!t)
		return NULL;
	_cleanup_json_ struct json_object *o = grid_json(g, t, nt);
	if (!o)
		return NULL;
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	char *out = NULL;
	if (s && asprintf(&out, "%s\n", s) < 0)
		out = NULL;
	return out;
}
