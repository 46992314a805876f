/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-window tables of a report's arms, as snapbench show and
 * snapbench run --local print them, and why a row of the scenario's window
 * is n/a.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json_object;

/* The rows of the per-window tables of a report's arms: metric (key in an arm's windows) and label. */
struct metric_row {
	const char *metric, *label;
	const char *window; /* shown only in a table that has this window (the scenario's own rows); NULL: any */
};
extern const struct metric_row metric_rows[];
extern const size_t n_metric_rows;

/*
 * An arm's table over windows (at most 3; titles head the columns): a row
 * per metric_rows entry any window has, each cell the window's "median (min
 * max)" as snapbench compare writes it (the median alone for one
 * repetition), time metrics in one unit per row (ns, µs, ms or s). With
 * emulated (the arm ran under TCG, reports/timing.h), the rows of times,
 * rates and latencies end in "emulated". It fits width columns in the
 * first layout that does (arm_layouts[]): one line a row; the titles
 * wrapped; each row's (min max) under its median; its label above; a line
 * per window. Always full digits (950,015), as compare writes them; width
 * 0: one line a row, however wide.
 */
void print_arm_windows(FILE *out, struct json_object *arm, const char *const *windows, const char *const *titles,
		       size_t n_windows, bool emulated, size_t width);

/*
 * An arm of a run's report as snapbench run --local ends and snapbench show
 * prints it: "arm LABEL: N of M repetitions completed; median (min max)",
 * its table over windows (print_arm_windows(), emulated when the report's
 * timing says so, output_width() wide) and what it could not count
 * (print_unavailable()).
 */
void print_arm_summary(FILE *out, struct json_object *report, struct json_object *arm, const char *const *windows,
		       const char *const *titles, size_t n_windows);

/* The window of a report's scenario (report_scenario_window() of spec.scenario): "migration" or "snapshot". */
const char *report_action_window(struct json_object *report);

/* After an arm's table: the reason each n/a row of the scenario's window is unavailable (from the report's repetitions). */
void print_unavailable(FILE *out, struct json_object *report, struct json_object *arm);
