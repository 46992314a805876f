/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A run report that came back through a LAVA job's console log
 * (docs/lava.md). The DUT prints it between two marker lines,
 *
 *   SNAPBENCH-REPORT-BEGIN v=1 id=RUN_ID bytes=N sha256=HEX encoding=gzip+base64 [job=ID] [device=NAME] [device_type=TYPE]
 *   H4sIAAAAAAAAA+2d... (base64, any line length)
 *   SNAPBENCH-REPORT-END v=1 id=RUN_ID lines=K
 *
 * bytes and sha256 are those of report.json itself (after decoding and
 * decompressing), encoding is gzip+base64 or base64, lines the number of
 * base64 lines between the markers. lava-run and a LAVA server write the
 * console's lines as "target" records of the job log, one YAML flow record a
 * line (yaml-flow.h); lava_log_parse() finds every report in them, and
 * refuses the whole log when one is cut off, has lost or gained lines, or
 * does not decode to its length and checksum.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define LAVA_REPORT_BEGIN "SNAPBENCH-REPORT-BEGIN"
#define LAVA_REPORT_END "SNAPBENCH-REPORT-END"
#define LAVA_REPORT_MAX_BYTES (256u << 20) /* one decoded report */
#define LAVA_LOG_MAX_BYTES (1024u << 20)   /* a whole log */
#define LAVA_MAX_REPORTS 64

struct lava_report {
	char *id;              /* the run id the markers name */
	char *data;            /* report.json as the DUT wrote it (NUL-terminated; len excludes it) */
	size_t len;
	char sha256[65];
	char *encoding;        /* "gzip+base64" or "base64" */
	char *job, *device, *device_type; /* what the BEGIN marker says of the LAVA job, or NULL */
	size_t line;           /* the log line of the BEGIN marker, 1-based */
};

struct lava_log {
	struct lava_report *reports;
	size_t n_reports;
	size_t n_records;      /* records read */
	size_t n_target;       /* console lines among them */
};

/*
 * Reads a LAVA job log (text, len bytes). A record is a line "- " then a
 * flow node (a LAVA server's job log) or a flow mapping "{...}" alone
 * (lava-run's standard output); other lines are skipped. A record that does
 * not parse is refused, unless it is the last line and the text does not
 * end in a newline (a log cut off mid-record ends there). Returns 0 with
 * *out filled (at least one report), -EBADMSG or -ENOENT (no report) with
 * err naming the log line and the fault (and the DUT's kernel panic, when
 * its console shows one where the report should be), or -ENOMEM. *out is
 * set only on success; name is the log's name for messages.
 */
int lava_log_parse(const char *name, const char *text, size_t len, struct lava_log *out, struct sb_error *err);

void lava_log_done(struct lava_log *log);

/*
 * A job's test cases, for when its report did not come back (snapbench
 * import-lava --partial, docs/lava.md). lava-test-case writes each as a
 * "results" record, {"case", "definition", "result", ["set"],
 * ["measurement", "units"]}; LAVA's own cases have definition "lava" and are
 * not among them, but the job's result record ({"case": "job", "definition":
 * "lava", "result", ["error_msg", "error_type"]}) is kept apart. All are the
 * strings the records hold.
 */
struct lava_case {
	char *definition;      /* the test definition, e.g. "0_snapbench" */
	char *set;             /* the test set (lava-test-set), or NULL */
	char *name;            /* the case */
	char *result;          /* pass, fail, skip, unknown, as LAVA wrote it */
	char *measurement, *units; /* or NULL */
	size_t line;           /* log line, 1-based */
};

struct lava_cases {
	struct lava_case *cases;
	size_t n_cases;
	char *job_result, *job_error_msg, *job_error_type; /* the job's result record, or NULL */
	/* the first SNAPBENCH-REPORT-BEGIN marker's fields (NULL where it has none, or there is none) */
	char *begin_id, *begin_job, *begin_device, *begin_device_type;
	size_t begin_line;     /* its log line, 0 without one */
	bool begin_ended;      /* a SNAPBENCH-REPORT-END of that id followed it */
	size_t n_begin_ids;    /* distinct run ids among the BEGIN markers */
	size_t n_records;      /* records read */
	size_t n_unreadable;   /* lines that looked like records but did not parse (a damaged or cut log) */
};

#define LAVA_MAX_CASES 100000

/*
 * Reads the test cases of a LAVA job log (the records as lava_log_parse()
 * reads them) and what the report markers say, whatever became of the
 * report: a record that does not parse is counted and skipped, a marker is
 * not checked beyond its fields. Returns 0 with *out filled (possibly with
 * no case), -E2BIG (more than LAVA_MAX_CASES) or -ENOMEM; *out is set only
 * on success.
 */
int lava_log_cases(const char *name, const char *text, size_t len, struct lava_cases *out, struct sb_error *err);

void lava_cases_done(struct lava_cases *c);
