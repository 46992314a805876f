/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text output of the verbs that talk to snapbenchd: rates, run summaries
 * (docs/protocol.md "run summary"), live progress (a bar on a terminal,
 * plain lines otherwise), wrapped prose and fields; the per-window tables
 * of reports are arm-table.h's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json_object;

/* "1,234,567", "45,600" (1,000 and more: full digits grouped, as the tables write them), "812", "0.985", "-" for null/NAN */
void fmt_rate(char *buf, size_t len, double v);
/* the number of a JSON value as a rate, "-" for null */
void fmt_json_rate(char *buf, size_t len, struct json_object *v);
/* "1h02m", "3m05s", "12.3s" */
void fmt_duration(char *buf, size_t len, double s);

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
/*
 * head then text, a line of prose, wrapped at spaces to width columns (a
 * word longer than the line stays whole); the lines after the first are
 * indented four columns past head's own indent. For $COLUMNS and a terminal.
 */
void print_wrapped(FILE *out, const char *head, const char *text, size_t width);
/* The same with the lines after the first indented indent columns (a --help table's second column). */
void print_wrapped_at(FILE *out, const char *head, const char *text, size_t width, size_t indent);

/*
 * head then text's fields (parts apart by two spaces: "passes 4  pass 1.01 s")
 * wrapped at width columns between fields, never within one; the lines after
 * the first indented indent columns.
 */
void print_fields(FILE *out, const char *head, const char *text, size_t width, size_t indent);

/*
 * The runs of `snapbench list` and status's queue (an array of run
 * summaries), a line each under a header: ID STATE SCENARIO LABELS REPS
 * CREATED, each column as wide as its widest cell. Wider than width (0: any
 * width), CREATED is left out: the time is in the run ID snapbenchd gives.
 * `--json` has every field.
 */
void print_summary_table(FILE *out, struct json_object *runs, size_t width);

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
