/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text output of the verbs that talk to snapbenchd: rates, run summaries
 * (docs/protocol.md "run summary"), live progress (a bar on a terminal,
 * plain lines otherwise), the per-window tables of reports (also for
 * `snapbench run --local`).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json_object;

/* "1.23M", "45.6k", "812", "-" for null/NAN */
void fmt_rate(char *buf, size_t len, double v);
/* the number of a JSON value as a rate, "-" for null */
void fmt_json_rate(char *buf, size_t len, struct json_object *v);
/* "1h02m", "3m05s", "12.3s" */
void fmt_duration(char *buf, size_t len, double s);

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
 * rates and latencies end in "emulated". It fits width columns as compare's
 * table does: full digits when they fit, else numbers of 10,000 and more as
 * 950k, 1.00M, else each row's (min max) on a line under its median; width
 * 0: full digits, however wide.
 */
void print_arm_windows(FILE *out, struct json_object *arm, const char *const *windows, const char *const *titles,
		       size_t n_windows, bool emulated, size_t width);

/*
 * The width text tables on stdout fit: $COLUMNS when set (what a shell
 * exports, and what a script sets for a fixed width), else the terminal's,
 * else 80: tables are pasted into mail and cover letters.
 */
size_t output_width(void);

/* Whether the terminal's characters are not UTF-8 (LC_ALL=C): then "µs" is written "us". */
bool output_ascii(void);

/*
 * "[41.2s  31%] rep 2/6 base: snapshot pf/s 12  tlb/s 3  inval/s 812  ops/s 1.2M  snapshot 40%";
 * a window's step without a sample of its own yet: "... base: snapshot waiting for the first snapshot
 * sample"; between windows the rates are preceded by theirs: "... base: stop     post: pf/s 12 ..."
 */
void fmt_progress(char *buf, size_t len, struct json_object *progress);

struct progress_printer {
	FILE *out;
	bool tty;
	bool drawn;           /* a bar is on the current line */
	char last_key[96];    /* rep and step of the last plain line */
	bool placement_shown; /* the run's placement line (progress "placement") was printed */
};

void progress_printer_init(struct progress_printer *p, FILE *out);
/*
 * A progress event: redraws the bar, or prints a line ("run line"; run may be NULL) when the step changed
 * or, in a window's step, when its first sample came in.
 */
void progress_printer_update(struct progress_printer *p, const char *run, struct json_object *progress);
/* A line of its own (clears the bar first). */
void progress_printer_note(struct progress_printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Leaves the bar's line. */
void progress_printer_done(struct progress_printer *p);

/*
 * head, then text; each further line of text (a run's preflight failures,
 * one per line) under the first, indented as far as head is long.
 */
void print_lines_under(FILE *out, const char *head, const char *text);

/* One line of `snapbench list`: ID STATE SCENARIO LABELS REPS CREATED */
void print_summary_header(FILE *out);
void print_summary_row(FILE *out, struct json_object *summary);

/*
 * The several lines of a summary (status, show, run --wait): state, error,
 * arms' headline figures in the scenario's window, repetitions retried on a
 * fresh host VM, progress.
 */
void print_summary_block(FILE *out, struct json_object *summary, const char *indent);
/* The same without its first line ("run ID: STATE"), for show, which puts the run's context after that line. */
void print_summary_details(FILE *out, struct json_object *summary, const char *indent);

/* "INDENT  rep 2 (arm patched): retried on a fresh host VM after: AFTER" (host_vm.retried_after) */
void print_rep_retried(FILE *out, const char *indent, int index, const char *arm, const char *after);
/* The same for each repetition of a report that has host_vm.retried_after, after an empty line (run --local). */
void print_report_retried(FILE *out, struct json_object *report);

/* The window of a report's scenario (report_scenario_window() of spec.scenario): "migration" or "snapshot". */
const char *report_action_window(struct json_object *report);

/* After an arm's table: the reason each n/a row of the scenario's window is unavailable (from the report's repetitions). */
void print_unavailable(FILE *out, struct json_object *report, struct json_object *arm);
