/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the compare-*.c files; not part of the API. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "macro.h"

/* A growable string buffer; on allocation failure it latches oom and
 * further appends do nothing, so callers check once at the end. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

_printf_(2, 3) void sbuf_printf(struct sbuf *b, const char *fmt, ...);
void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap);
void sbuf_puts(struct sbuf *b, const char *s);
void sbuf_putc_n(struct sbuf *b, char c, size_t n);
/* Returns the string (caller frees), or NULL and frees it after an OOM. */
char *sbuf_steal(struct sbuf *b);

/* Appends a copy of s to a NULL-free string vector; -ENOMEM on failure. */
int strv_push(char ***v, size_t *n, const char *s);
_printf_(3, 4) int strv_pushf(char ***v, size_t *n, const char *fmt, ...);
/* Sorts by strcmp(). */
void strv_sort(char **v, size_t n);
void strv_free(char **v, size_t n);

/* JSON field access that tells missing from null from the wrong type. */
struct json_object *json_get(struct json_object *o, const char *key);
const char *json_get_string(struct json_object *o, const char *key);
bool json_is_number(struct json_object *o);

/* The metric/label text as it may appear in outputs: printable ASCII only,
 * at most max bytes (longer text ends in "..."). */
void text_sanitize(const char *in, char *out, size_t size);

/* Display names for the seed-style tables: "pf/s", "latency p99 (ns)". */
void metric_display_name(const char *metric, char *buf, size_t size);
