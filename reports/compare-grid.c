// SPDX-License-Identifier: GPL-2.0-or-later
/* compare --grid: arms placed by two parameters, each compared with its row's baseline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compare-grid.h"
#include "compare-private.h"

/* The arms of one cell (or one row's baseline): one label, in one or more reports. */
struct arm_group {
	char *row, *col; /* col NULL: a baseline */
	const char *label; /* points into a report */
	const struct compare_report **reports;
	size_t n_reports;
};

struct placement {
	struct arm_group *g;
	size_t n;
};

static void placement_done(struct placement *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->g[i].row);
		free(p->g[i].col);
		free(p->g[i].reports);
	}
	free(p->g);
}

void compare_grid_free(struct compare_grid *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_rows; i++) {
		free(g->rows[i].value);
		free(g->rows[i].baseline_label);
		compare_side_done(&g->rows[i].baseline);
	}
	for (size_t i = 0; g->cells && i < g->n_rows * g->n_columns; i++) {
		free(g->cells[i].label);
		compare_result_free(g->cells[i].result);
		compare_side_done(&g->cells[i].side);
		free(g->cells[i].why_empty);
	}
	free(g->rows);
	free(g->cells);
	strv_free(g->columns);
	strv_free(g->warnings);
	free((char *)g->req.rows);
	free((char *)g->req.columns);
	free((char *)g->req.baseline);
	free(g);
}

/* A spec field's value as text: a string as it is, anything else as compact JSON; NULL when absent. */
static char *spec_value(struct json_object *root, const char *dotted)
{
	char buf[256], *save = NULL;
	struct json_object *o = root;

	snprintf(buf, sizeof(buf), "%s", dotted);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_lookup(o, k);
	if (!o)
		return NULL;
	if (json_object_is_type(o, json_type_string))
		return strdup(json_object_get_string(o));
	return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* The term NAME-VALUE of a label whose terms are joined by '+'; NULL when none. */
static char *label_value(const char *label, const char *name)
{
	size_t nl = strlen(name);

	for (const char *t = label; t && *t;) {
		const char *end = strchr(t, '+');
		size_t len = end ? (size_t)(end - t) : strlen(t);
		if (len > nl + 1 && !strncmp(t, name, nl) && t[nl] == '-')
			return strndup(t + nl + 1, len - nl - 1);
		t = end ? end + 1 : NULL;
	}
	return NULL;
}

/* The arm's knob NAME, or the knob whose part after its last '.' or ':' is NAME; NULL when none. */
static char *knob_value(struct json_object *arm, const char *name)
{
	struct json_object *knobs = json_lookup(arm, "knobs");

	if (!knobs || !json_object_is_type(knobs, json_type_object))
		return NULL;
	json_object_object_foreach(knobs, key, val)
	{
		const char *dot = strrchr(key, '.'), *colon = strrchr(key, ':');
		const char *last = dot && (!colon || dot > colon) ? dot + 1 : colon ? colon + 1 : key;
		if ((!strcmp(key, name) || !strcmp(last, name)) && json_object_is_type(val, json_type_string))
			return strdup(json_object_get_string(val));
	}
	return NULL;
}

/* The field NAME of the spec's arm of that label (arms[].chunk), as spec_value() writes it; NULL when none. */
static char *spec_arm_value(struct json_object *root, const char *label, const char *name)
{
	struct json_object *arms = json_lookup(json_lookup(root, "spec"), "arms");

	if (!label || !strcmp(name, "label") || !strcmp(name, "knobs") || !arms ||
	    !json_object_is_type(arms, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(arms); i++) {
		struct json_object *a = json_object_array_get_idx(arms, i);
		const char *l = json_lookup_string(a, "label");
		if (l && !strcmp(l, label))
			return json_lookup(a, name) ? spec_value(a, name) : NULL;
	}
	return NULL;
}

/* The parameter name of an arm (docs/compare.md#grids); NULL when the arm has none (errno 0) or on ENOMEM. */
static char *arm_param(const struct compare_report *rep, struct json_object *arm, const char *name)
{
	char *v;

	errno = 0;
	if (!strncmp(name, "spec.", 5))
		return spec_value(json_lookup(rep->root, "spec"), name + 5);
	v = label_value(json_lookup_string(arm, "label"), name);
	if (!v && errno != ENOMEM)
		v = knob_value(arm, name);
	return v || errno == ENOMEM ? v : spec_arm_value(rep->root, json_lookup_string(arm, "label"), name);
}

static struct arm_group *find_group(struct placement *p, const char *row, const char *col)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->g[i].row, row) && (col ? p->g[i].col && !strcmp(p->g[i].col, col) : !p->g[i].col))
			return &p->g[i];
	return NULL;
}

static int group_add(struct placement *p, const struct compare_report *rep, const char *label, char **row,
		     char **col, struct sb_error *err)
{
	struct arm_group *g = find_group(p, *row, *col);

	if (g && strcmp(g->label, label)) {
		char a[80], b[80];
		text_sanitize(g->label, a, sizeof(a));
		text_sanitize(label, b, sizeof(b));
		return sb_error_set(err, -EINVAL, "--grid: arms '%s' and '%s' (run %s) are both on row %s, column %s: "
				    "give each cell one arm (one label; runs of the same label pool)", a, b, rep->id,
				    *row, *col ? *col : "(baseline)");
	}
	if (!g) {
		struct arm_group *nv = realloc(p->g, (p->n + 1) * sizeof(*nv));
		if (!nv)
			return sb_error_set(err, -ENOMEM, "out of memory");
		p->g = nv;
		g = &p->g[p->n++];
		*g = (struct arm_group){ .row = TAKE_PTR(*row), .col = TAKE_PTR(*col), .label = label };
	}
	const struct compare_report **nr = realloc(g->reports, (g->n_reports + 1) * sizeof(*nr));
	if (!nr)
		return sb_error_set(err, -ENOMEM, "out of memory");
	g->reports = nr;
	g->reports[g->n_reports++] = rep;
	return 0;
}

/* One arm of a report onto its cell, or its row's baseline. */
static int place_arm(struct placement *p, const struct compare_report *rep, struct json_object *arm,
		     const struct compare_grid_request *req, struct sb_error *err)
{
	const char *label = json_lookup_string(arm, "label");
	_cleanup_free_ char *row = arm_param(rep, arm, req->rows);
	if (!row && errno == ENOMEM)
		return sb_error_set(err, -ENOMEM, "out of memory");
	_cleanup_free_ char *col = arm_param(rep, arm, req->columns);
	if (!col && errno == ENOMEM)
		return sb_error_set(err, -ENOMEM, "out of memory");
	char shown[80];

	text_sanitize(label, shown, sizeof(shown));
	if (!row)
		return sb_error_set(err, -EINVAL, "--grid %s,%s: arm '%s' of run %s has no %s: name it in the label "
				    "(terms NAME-VALUE joined by '+', as in chunk-512K+nr_pages-8), in its knobs, as its "
				    "field in the spec (arms[].NAME), or read it from the spec (spec.FIELD) "
				    "(docs/compare.md#grids)", req->rows, req->columns, shown,
				    rep->id, req->rows);
	if (req->baseline && !col)
		return sb_error_set(err, -EINVAL, "--grid %s,%s: arm '%s' of run %s has no %s, and --grid-baseline %s "
				    "names the baseline by it: give every arm a %s, or drop --grid-baseline to make "
				    "the arm without one its row's baseline", req->rows, req->columns, shown, rep->id,
				    req->columns, req->baseline, req->columns);
	if (req->baseline && !strcmp(col, req->baseline)) {
		free(col);
		col = NULL;
	}
	return group_add(p, rep, label, &row, &col, err);
}

static int value_index(char ***values, size_t *n, const char *v, size_t *idx, struct sb_error *err)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*values)[i], v)) {
			*idx = i;
			return 0;
		}
	if (*n >= COMPARE_GRID_MAX_VALUES)
		return sb_error_set(err, -E2BIG, "--grid: more than %d values of one parameter", COMPARE_GRID_MAX_VALUES);
	if (strv_push(values, v) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	*idx = (*n)++;
	return 0;
}

/* The rows (each with its baseline) and the columns the arms make, in order of first appearance. */
static int lay_out(struct compare_grid *g, const struct placement *p, struct sb_error *err)
{
	_cleanup_strv_free_ char **rows = NULL;
	size_t n_rows = 0, idx;
	int r;

	for (size_t i = 0; i < p->n; i++) {
		if ((r = value_index(&rows, &n_rows, p->g[i].row, &idx, err)) < 0)
			return r;
		if (p->g[i].col && (r = value_index(&g->columns, &g->n_columns, p->g[i].col, &idx, err)) < 0)
			return r;
	}
	if (!g->n_columns)
		return sb_error_set(err, -EINVAL, "--grid %s,%s: every arm is a baseline (none has a %s%s%s): the "
				    "grid needs patched arms", g->req.rows, g->req.columns, g->req.columns,
				    g->req.baseline ? " other than " : "", g->req.baseline ? g->req.baseline : "");
	g->rows = calloc(n_rows, sizeof(*g->rows));
	g->cells = calloc(n_rows * g->n_columns, sizeof(*g->cells));
	if (!g->rows || !g->cells)
		return sb_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n_rows; i++) /* all moved first: the strv ends at its first NULL */
		g->rows[g->n_rows++].value = TAKE_PTR(rows[i]);
	for (size_t i = 0; i < n_rows; i++) {
		const struct arm_group *b = find_group((struct placement *)p, g->rows[i].value, NULL);
		if (!b)
			return sb_error_set(err, -EINVAL, "--grid %s,%s: row %s has no baseline: give it an arm %s "
					    "(no %s)%s", g->req.rows, g->req.columns, g->rows[i].value,
					    g->req.baseline ? "whose column is the --grid-baseline value" :
					    "without a column parameter", g->req.columns,
					    g->req.baseline ? "" : ", or name the baseline's column value with --grid-baseline");
	}
	return 0;
}

static int add_warnings(struct compare_grid *g, char *const *w, const char *prefix)
{
	for (size_t i = 0; w && w[i]; i++) {
		_cleanup_free_ char *s = NULL;
		if (asprintf(&s, "%s%s", prefix, w[i]) < 0)
			return -ENOMEM;
		if (!strv_contains(g->warnings, s) && strv_push(&g->warnings, s) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A side that cannot be compared (its runs failed): an empty cell with the reason, not the grid's end. */
static int cell_empty(struct compare_grid *g, struct compare_grid_cell *c, const char *where, const char *why)
{
	char *w = NULL;

	if (!(c->why_empty = strdup(why)) || asprintf(&w, "%s: no comparison: %s", where, why) < 0)
		return -ENOMEM;
	return strv_consume(&g->warnings, w);
}

static int compute_row(struct compare_grid *g, size_t row, const struct placement *p, struct sb_error *err)
{
	struct compare_grid_row *rw = &g->rows[row];
	const struct arm_group *b = find_group((struct placement *)p, rw->value, NULL);
	char where[160];
	int r;

	if (!(rw->baseline_label = strdup(b->label)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = compare_select_arm("baseline", b->label, b->reports, b->n_reports, &rw->baseline, err);
	if (r == -ENODATA) { /* the row's baseline failed: its cells stay empty, named */
		for (size_t c = 0; c < g->n_columns; c++) {
			const struct arm_group *a = find_group((struct placement *)p, rw->value, g->columns[c]);
			snprintf(where, sizeof(where), "%s %s, %s %s", g->req.rows, rw->value, g->req.columns, g->columns[c]);
			if (a && (!(compare_grid_cell(g, row, c)->label = strdup(a->label)) ||
				  cell_empty(g, compare_grid_cell(g, row, c), where, err->msg) < 0))
				return sb_error_set(err, -ENOMEM, "out of memory");
		}
		return 0;
	}
	if (r < 0)
		return r;
	for (size_t c = 0; c < g->n_columns; c++) {
		struct compare_grid_cell *cell = compare_grid_cell(g, row, c);
		const struct arm_group *a = find_group((struct placement *)p, rw->value, g->columns[c]);
		if (!a)
			continue;
		snprintf(where, sizeof(where), "%s %s, %s %s", g->req.rows, rw->value, g->req.columns, g->columns[c]);
		if (!(cell->label = strdup(a->label)))
			return sb_error_set(err, -ENOMEM, "out of memory");
		r = compare_select_arm("patched", a->label, a->reports, a->n_reports, &cell->side, err);
		if (r >= 0)
			r = compare_compute(&rw->baseline, &cell->side, &g->opts, &cell->result, err);
		if (r == -ENODATA) {
			if (cell_empty(g, cell, where, err->msg) < 0)
				return sb_error_set(err, -ENOMEM, "out of memory");
			continue;
		}
		if (r < 0)
			return sb_error_prefix(err, "%s (arm %s)", where, a->label);
		if (add_warnings(g, cell->result->warnings, "") < 0)
			return sb_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

static enum compare_verdict grid_verdict(const struct compare_grid *g)
{
	enum compare_verdict v = COMPARE_INSUFFICIENT_DATA;

	for (size_t i = 0; i < g->n_rows * g->n_columns; i++) {
		const struct compare_result *r = g->cells[i].result;
		if (!r)
			continue;
		if (r->verdict == COMPARE_REGRESSED)
			return COMPARE_REGRESSED;
		if (r->verdict == COMPARE_IMPROVED || (r->verdict == COMPARE_NO_CHANGE && v == COMPARE_INSUFFICIENT_DATA))
			v = r->verdict;
	}
	return v;
}

static int place_reports(struct placement *p, struct compare_pool *pool, char *const *paths, size_t n_paths,
			 const struct compare_grid_request *req, struct sb_error *err)
{
	int r;

	if (!n_paths)
		return sb_error_set(err, -EINVAL, "--grid: give the reports whose arms make the grid");
	for (size_t i = 0; i < n_paths; i++) {
		struct compare_report *rep;
		r = compare_pool_load(pool, paths[i], &rep, err);
		if (r < 0)
			return r;
		struct json_object *arms = json_lookup(rep->root, "arms");
		for (size_t a = 0; a < json_object_array_length(arms); a++)
			if ((r = place_arm(p, rep, json_object_array_get_idx(arms, a), req, err)) < 0)
				return r;
	}
	return 0;
}

int compare_grid_compute(struct compare_pool *pool, char *const *paths, size_t n_paths,
			 const struct compare_grid_request *req, const struct compare_options *opts,
			 struct compare_grid **out, struct sb_error *err)
{
	struct placement p = { 0 };
	struct compare_grid *g;
	int r;

	if (!req->rows || !*req->rows || !req->columns || !*req->columns || !strcmp(req->rows, req->columns))
		return sb_error_set(err, -EINVAL, "--grid ROWS,COLUMNS: name two different parameters, e.g. "
				    "--grid chunk,nr_pages");
	if (opts->aa)
		return sb_error_set(err, -EINVAL, "--grid compares each arm with its row's baseline; drop --aa");
	g = calloc(1, sizeof(*g));
	if (!g)
		return sb_error_set(err, -ENOMEM, "out of memory");
	g->opts = *opts;
	g->req.rows = strdup(req->rows);
	g->req.columns = strdup(req->columns);
	g->req.baseline = req->baseline ? strdup(req->baseline) : NULL;
	if (!g->req.rows || !g->req.columns || (req->baseline && !g->req.baseline)) {
		r = sb_error_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	r = place_reports(&p, pool, paths, n_paths, req, err);
	if (r >= 0)
		r = lay_out(g, &p, err);
	for (size_t i = 0; r >= 0 && i < g->n_rows; i++)
		r = compute_row(g, i, &p, err);
	if (r < 0)
		goto fail;
	g->verdict = grid_verdict(g);
	g->exit_code = g->verdict == COMPARE_REGRESSED ? COMPARE_EXIT_REGRESSION : COMPARE_EXIT_OK;
	placement_done(&p);
	*out = g;
	return 0;
fail:
	placement_done(&p);
	compare_grid_free(g);
	return r;
}

/* ---- the tables ---- */

const struct compare_metric *compare_grid_metric(const struct compare_grid *g, size_t row, size_t col,
						 const struct compare_grid_table *t)
{
	const struct compare_result *r = compare_grid_cell(g, row, col)->result;

	for (size_t i = 0; r && i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].window, t->window) && !strcmp(r->metrics[i].name, t->name))
			return &r->metrics[i];
	return NULL;
}

const struct compare_metric *compare_grid_row_baseline(const struct compare_grid *g, size_t row,
						       const struct compare_grid_table *t)
{
	for (size_t c = 0; c < g->n_columns; c++) {
		const struct compare_metric *m = compare_grid_metric(g, row, c, t);
		if (m)
			return m;
	}
	return NULL;
}

static bool has_table(const struct compare_grid_table *t, size_t n, const struct compare_metric *m)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].window, m->window) && !strcmp(t[i].name, m->name))
			return true;
	return false;
}

struct compare_grid_table *compare_grid_tables(const struct compare_grid *g, size_t *n)
{
	struct compare_grid_table *t = NULL;
	size_t nt = 0;

	for (size_t i = 0; i < g->n_rows * g->n_columns; i++) {
		const struct compare_result *r = g->cells[i].result;
		for (size_t k = 0; r && k < r->n_metrics; k++) {
			if (has_table(t, nt, &r->metrics[k]))
				continue;
			struct compare_grid_table *nv = realloc(t, (nt + 1) * sizeof(*nv));
			if (!nv) {
				free(t);
				return NULL;
			}
			t = nv;
			t[nt++] = (struct compare_grid_table){ .window = r->metrics[k].window, .name = r->metrics[k].name,
								.first = &r->metrics[k] };
		}
	}
	for (size_t i = 0; i < nt; i++) {
		t[i].all_zero = true;
		for (size_t row = 0; row < g->n_rows; row++)
			for (size_t c = 0; c < g->n_columns; c++) {
				const struct compare_metric *m = compare_grid_metric(g, row, c, &t[i]);
				if (!m)
					continue;
				t[i].emulated |= m->emulated;
				t[i].all_zero &= compare_metric_all_zero(m);
			}
	}
	*n = nt;
	return t ? t : calloc(1, sizeof(*t));
}
