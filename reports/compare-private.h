/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the compare-*.c files (compare-text.c); not part of the API. */
#pragma once

#include <stddef.h>

#include "json-util.h"
#include "strbuf.h"
#include "strv.h"

/* The metric/label text as it may appear in outputs: printable ASCII only,
 * at most max bytes (longer text ends in "..."). */
void text_sanitize(const char *in, char *out, size_t size);

/* Display names for the seed-style tables: "pf/s", "latency p99 (ns)". */
void metric_display_name(const char *metric, char *buf, size_t size);
