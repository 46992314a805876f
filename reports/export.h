/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Exports: a run report or a comparison in the formats other tools read.
 *
 *   - CSV (RFC 4180: a header row, CRLF line ends, fields quoted when they
 *     hold a comma or a quote): export_report_csv() one row per repetition x
 *     window x metric, export_compare_csv() one row per metric x side;
 *   - JUnit XML (export_compare_junit()): one testcase per window and
 *     metric, for the test report views of GitLab CI and Jenkins;
 *   - OpenMetrics and the Prometheus text format (export_report_metrics());
 *   - KCIDB JSON, the I/O schema of KernelCI's results database
 *     (export_report_kcidb(), export_compare_kcidb()).
 *
 * docs/exports.md describes the columns, elements and metric names. The
 * report functions take the report as JSON (snapbench.run/1, as
 * report_read() or snapbenchd's show returns it); the compare ones a
 * computed struct compare_result. Text a report controls (labels, metric
 * names, reasons) is written as valid UTF-8 without controls: each control
 * character and each byte that is not UTF-8 becomes '?'. Library code:
 * nothing is printed; the functions return the text (the caller frees it),
 * or NULL on out-of-memory.
 */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

#include "compare.h"
#include "error.h"

/* Returns 0 with *ret set, -ENOMEM, or -EINVAL (err names what is wrong)
 * when report is not a run report object. */
int export_report_csv(struct json_object *report, char **ret, struct sb_error *err);

char *export_compare_csv(const struct compare_result *r);
char *export_compare_junit(const struct compare_result *r);

enum export_metrics_dialect {
	EXPORT_OPENMETRICS,   /* OpenMetrics 1.0 text: counter families without _total, # UNIT, # EOF */
	EXPORT_PROMETHEUS,    /* the Prometheus text format 0.0.4 (promtool, node_exporter's textfile collector) */
};

/* The run's figures as metrics (docs/exports.md); 0, -ENOMEM or -EINVAL as export_report_csv(). */
int export_report_metrics(struct json_object *report, enum export_metrics_dialect dialect, char **ret,
			  struct sb_error *err);

/*
 * snapbenchd's metrics file for node_exporter's textfile collector (the
 * Prometheus format): runs by state, the queue's length, and the newest
 * completed run of each arm label with its headline medians. summaries are
 * the run summaries snapbenchd's list returns (docs/protocol.md), oldest
 * first. 0, -ENOMEM, or -EINVAL when summaries is not an array.
 */
int export_service_metrics(struct json_object *summaries, size_t queue_length, char **ret, struct sb_error *err);

/*
 * KCIDB: the KCIDB I/O schema version 5.3 (reports/schema/kcidb/), what
 * kcidb-submit takes. origin names the submitting CI system in every id
 * (export_kcidb_origin_valid(); EXPORT_KCIDB_ORIGIN_DEFAULT unless the user
 * gives another).
 */
#define EXPORT_KCIDB_MAJOR 5
#define EXPORT_KCIDB_MINOR 3
#define EXPORT_KCIDB_ORIGIN_DEFAULT "snapbench"

/* Whether origin is a KCIDB origin: one or more of a-z, 0-9 and '_'. */
bool export_kcidb_origin_valid(const char *origin);

/* A run: per arm a checkout and a build (the kernel it ran on), per
 * repetition a test (DONE, ERROR, MISS) and per repetition, window and
 * metric a test with the figure (DONE) or the reason it is missing (SKIP).
 * 0, -ENOMEM, or -EINVAL as export_report_csv() or for an invalid origin. */
int export_report_kcidb(struct json_object *report, const char *origin, char **ret, struct sb_error *err);

/* A comparison: per side a checkout and a build, a test of the overall
 * verdict and one per compared metric (PASS, FAIL for regressed, SKIP for
 * insufficient-data) and per metric not compared (SKIP). NULL on
 * out-of-memory or an invalid origin (the caller checks it first). */
char *export_compare_kcidb(const struct compare_result *r, const char *origin);
