/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapbench compare --grid: the CLI side of reports/compare-grid.h (docs/compare.md#grids). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"

struct compare_grid_cli {
	const char *grid;          /* "ROWS,COLUMNS" as given */
	const char *baseline;      /* --grid-baseline, or NULL */
	const char *format;        /* text, json, markdown or csv */
	const char *output;        /* --output DIR, or NULL */
	bool quiet;
	char *const *reports;      /* the positional reports */
	size_t n_reports;
};

/* Runs the grid comparison and writes its outputs; an exit code of cli/exit-codes.h. */
int compare_grid_verb(const struct compare_grid_cli *c, const struct compare_options *o);
