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

/* One CSV field (RFC 4180): quoted, quotes doubled, when it holds a comma,
 * a quote or a leading or trailing space; text as export_append_text(). */
void export_append_csv_field(struct strbuf *b, const char *s);
/* The fields of one CSV record and its CRLF. */
void export_append_csv_row(struct strbuf *b, const char *const *fields, size_t n);

/* v in the shortest form that reads back to the same double ("0.1", "950015",
 * "1e+20"); "" for NAN and infinities. */
#define EXPORT_NUMBER_MAX 40
void export_format_number(double v, char buf[static EXPORT_NUMBER_MAX]);

/* A run report's id and its repetitions (NULL when it has none yet); -EINVAL
 * (err says why) when report is not a run report object. */
int export_report_parts(struct json_object *report, const char **id, struct json_object **reps,
			struct sb_error *err);

/* metric_info's unit of name, else of its base name before the '.' (per-cause
 * metrics: invalidations_per_s.uffd-wp), else "". */
const char *export_metric_unit(struct json_object *report, const char *name);
