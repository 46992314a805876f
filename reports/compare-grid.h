/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compare --grid: the arms of one or more reports named by two parameters
 * (rows and columns), each arm compared with its row's baseline arm by
 * compare_compute(), shown as one table per metric: rows one parameter,
 * columns the other, each cell the change of medians against the row's
 * baseline with its significance (seed 003's table: chunk size by
 * nr_pages). docs/compare.md#grids gives the rules.
 *
 * A parameter NAME of an arm is, in this order of precedence:
 *   - spec.PATH: the report's spec field (rows that are runs of different specs);
 *   - a term NAME-VALUE of the arm's label, terms joined by '+'
 *     ("chunk-512K+nr_pages-8");
 *   - the arm's knob NAME, or the knob whose last part (after the last '.'
 *     or ':') is NAME ("module:kvm.nr_pages" for nr_pages).
 * Each row's baseline is its arm without a column parameter, or with the
 * column value request.baseline when given.
 *
 * Library code: nothing is printed; errors name the input and the fix.
 */
#pragma once

#include "compare.h"

#define COMPARE_GRID_SCHEMA "snapbench.compare-grid/1"
#define COMPARE_GRID_MAX_VALUES 64 /* rows, and columns */

struct compare_grid_request {
	const char *rows;     /* the row parameter's name */
	const char *columns;  /* the column parameter's name */
	const char *baseline; /* the column value of each row's baseline; NULL: the arm without the parameter */
};

struct compare_grid_row {
	char *value;
	char *baseline_label;
	struct compare_side baseline;
};

struct compare_grid_cell {
	char *label;                   /* the arm; NULL: the grid has no arm at this row and column */
	struct compare_side side;      /* its repetitions */
	struct compare_result *result; /* NULL when no arm, or when a side had no completed repetition */
	char *why_empty;               /* that reason, when an arm has no result */
};

struct compare_grid {
	struct compare_grid_request req; /* strings owned by the grid */
	struct compare_options opts;     /* borrowed: keep alive until compare_grid_free() */
	struct compare_grid_row *rows;
	size_t n_rows;
	char **columns;                  /* the column values but the baseline's, in order of first appearance */
	size_t n_columns;
	struct compare_grid_cell *cells; /* n_rows * n_columns, row by row */
	char **warnings;                 /* of every cell, each once; NULL-terminated, may be NULL */
	enum compare_verdict verdict;    /* over every cell, as compare's overall verdict */
	int exit_code;
};

static inline struct compare_grid_cell *compare_grid_cell(const struct compare_grid *g, size_t row, size_t col)
{
	return &g->cells[row * g->n_columns + col];
}

void compare_grid_free(struct compare_grid *g);

/*
 * Places every arm of reports (loaded into pool from paths) on the grid
 * and compares each with its row's baseline. An arm without the row
 * parameter, two arms on one cell, a row without exactly one baseline or a
 * grid without a patched arm is an error naming the arm and the fix. The
 * grid borrows pool and opts.
 */
int compare_grid_compute(struct compare_pool *pool, char *const *paths, size_t n_paths,
			 const struct compare_grid_request *req, const struct compare_options *opts,
			 struct compare_grid **out, struct sb_error *err);

/*
 * One table of the grid: a metric of a window, and where each cell has it
 * (compare_grid_metric(): NULL when that cell has no such metric).
 */
struct compare_grid_table {
	const char *window, *name;       /* borrowed from the first cell that has the metric */
	const struct compare_metric *first;
	bool emulated;                   /* some cell's figure is a time-based one of an emulated side */
	bool all_zero;                   /* 0 in every repetition of every cell */
};

/* The tables in order: by window, then by the cells' metric order (the first cell's first). NULL on ENOMEM. */
struct compare_grid_table *compare_grid_tables(const struct compare_grid *g, size_t *n);
const struct compare_metric *compare_grid_metric(const struct compare_grid *g, size_t row, size_t col,
						 const struct compare_grid_table *t);
/* The row's baseline figures of t: the metric of any cell of the row that has one, or NULL. */
const struct compare_metric *compare_grid_row_baseline(const struct compare_grid *g, size_t row,
						       const struct compare_grid_table *t);

/* The outputs: the text table (ascii: "us" for "µs"), Markdown, JSON text
 * (snapbench.compare-grid/1, reports/schema/compare-grid-1.schema.json). NULL on ENOMEM. */
char *compare_grid_format_text(const struct compare_grid *g, bool ascii);
char *compare_grid_format_markdown(const struct compare_grid *g);
char *compare_grid_json_string(const struct compare_grid *g);
