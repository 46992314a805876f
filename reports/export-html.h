/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A comparison as one self-contained HTML page (docs/exports.md): the
 * tables with ratio and verdict per metric, the verdict, the warnings, each
 * metric's plot inline (the SVG compare_plot_metric_svg() draws) with its
 * figures folded in <details>, the timeline, the kernels and the settings.
 * No script, no style sheet, font or image fetched: a browser shows it from
 * a CI artifact or a mail attachment as it is. Text a report controls is
 * written as export_append_text() writes it, HTML-escaped.
 */
#pragma once

#include "compare.h"

/* The page (the caller frees it), or NULL on out-of-memory. */
char *export_compare_html(const struct compare_result *r);
