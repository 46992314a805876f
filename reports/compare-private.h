/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the compare-*.c files (compare-text.c); not part of the API. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "json-util.h"
#include "strbuf.h"
#include "strv.h"

/* The metric/label text as it may appear in outputs: printable ASCII only,
 * at most max bytes (longer text ends in "..."). */
void text_sanitize(const char *in, char *out, size_t size);

struct compare_side;
/* A kernel arm's "kernel" object in report root (docs/kernel-arms.md), or NULL: the arm ran on the report's host. */
struct json_object *compare_arm_kernel(struct json_object *root, const char *label);
/* The kernel release side s's report i ran on: its arm's host VM kernel (*host_vm true), else the host's. */
const char *compare_side_release(const struct compare_side *s, size_t i, bool *host_vm);

struct compare_result;
/* Whether a side's timing is emulated (TCG at some layer, reports/timing.h): the tables then say so. */
bool compare_any_tcg(const struct compare_result *r);
