/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the export-*.c files (export-text.c); not part of the API. */
#pragma once

#include <stddef.h>

#include "error.h"
#include "strbuf.h"

struct json_object;

/* How export_append_text() escapes what it appends. */
enum export_escape {
	EXPORT_ESCAPE_NONE,
	EXPORT_ESCAPE_XML,   /* & < > " ' as entities: element text and attribute values */
	EXPORT_ESCAPE_LABEL, /* \ and " backslashed: an OpenMetrics label value */
};

/*
 * Appends s as exports write text: valid UTF-8 as it is, each control (C0,
 * DEL, C1) and each byte that does not belong to a valid UTF-8 sequence as
 * '?', then escaped as e asks. NULL appends nothing.
 */
void export_append_text(struct strbuf *b, const char *s, enum export_escape e);
/* Whether export_append_text() would append s as it is (true for NULL). */
bool export_text_unchanged(const char *s, enum export_escape e);

/* One CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma,
 * a quote or a leading or trailing space; text as export_append_text(). */
void export_append_csv_field(struct strbuf *b, const char *s);
/* The fields of one CSV record and its CRLF. */
void export_append_csv_row(struct strbuf *b, const char *const *fields, size_t n);

/* v in the shortest form that reads back to the same double ("0.1", "950015",
 * "1e+20"); "" for NAN and infinities. */
#define EXPORT_NUMBER_MAX 40
void export_format_number(double v, char buf[static EXPORT_NUMBER_MAX]);
/* v / 10^pow10 from v's shortest decimal, the point moved: 11771.44704 ns is "0.00001177144704" s, not the
 * division's 1.1771447039999998e-05 (fixed from 1e-5 to below 1e15, else "1.5e-07"). */
void export_format_scaled(double v, int pow10, char buf[static EXPORT_NUMBER_MAX]);

/* A run report's id and its repetitions (NULL when it has none yet); -EINVAL
 * (err says why) when report is not a run report object. */
int export_report_parts(struct json_object *report, const char **id, struct json_object **reps,
			struct sb_error *err);

/* metric_info's unit of name, else of its base name before the '.' (per-cause
 * metrics: invalidations_per_s.uffd-wp), else "". */
const char *export_metric_unit(struct json_object *report, const char *name);

/* The windows a run report's repetitions are summarised in, in order: pre,
 * the scenario's own window (report_scenario_window() of spec.scenario:
 * snapshot, or migration for dirty-log and postcopy-restore), post. */
#define EXPORT_REPORT_WINDOWS 3
void export_report_windows(struct json_object *report, const char *windows[static EXPORT_REPORT_WINDOWS]);

/*
 * A figure the report records of a repetition beside the window summary
 * (docs/exports.md): each dirty-log pass's fields and counters
 * (repetitions[].migration.iterations[]) and the postcopy switch-over's and
 * destination pass's (repetitions[].postcopy), which belong to the
 * migration window; the userfaultfd restore's pass, handler and KVM counts
 * (repetitions[].uffd_restore), which belong to the fault-in window.
 */
struct export_rep_figure {
	const char *name;      /* as the CSV's metric: "pass.2.duration_s", "pass.2.counters.kvm.pf_taken",
				* "postcopy.switchover_s", "postcopy.pass.ms", "uffd_restore.kvm.pf_taken" */
	const char *group;     /* "pass", "postcopy" or "uffd_restore" */
	const char *window;    /* the window it belongs to: "migration" or "fault-in" */
	long long pass;        /* group pass: QEMU's dirty-sync-count of the pass; else -1 */
	const char *field;     /* name after the group (and pass): "duration_s", "counters.kvm.pf_taken", "pass.ms" */
	const char *counter;   /* a pass's counter ("kvm.pf_taken"), else NULL */
	const char *unit;      /* "s", "ms", "1/s", "B", "ns" or "1" */
	double value;          /* NAN: not known, unavailable says why */
	const char *unavailable;
	double start_s, duration_s; /* the span it covers: the pass's, else its window's; NAN: not known */
};

/* Calls fn for each such figure of repetition rep of report that belongs to
 * window, in the report's order (passes in order, each pass's fields, then
 * its counters); none for a window or repetition that has none. */
void export_rep_figures(struct json_object *report, struct json_object *rep, const char *window,
			void (*fn)(const struct export_rep_figure *f, void *userdata), void *userdata);
