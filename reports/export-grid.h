/* SPDX-License-Identifier: GPL-2.0-or-later */
/* compare --grid as CSV (docs/compare.md#grids): one row per table (window x metric) x cell. */
#pragma once

#include "compare-grid.h"

/* RFC 4180 with CRLF, numbers in their shortest form; NULL on ENOMEM. */
char *export_compare_grid_csv(const struct compare_grid *g);
