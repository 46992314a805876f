/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapbench import-lava's rooms: the verb (verb-import-lava.c: options,
 * the log read, its reports checked and imported), a run written into the
 * store with its origin (import-lava-store.c), and the run rebuilt from
 * the job's test cases with --partial (import-lava-partial.c). The verb
 * calls the other two, the partial rebuild the store's writer.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "lava-log.h"

struct import_lava_args {
	const char *store, *job, *device, *device_type, *log;
	bool json, partial;
};

/* STORE/ID made whole (report and origin.json) in a temp directory beside it, then renamed into place. */
int import_lava_write_run(const struct import_lava_args *a, const struct lava_report *r, bool partial,
			  struct sb_error *err);
/* Removes a run directory an import made (its two files, then it). */
void import_lava_remove_run(const char *dir);
/* s as a JSON string, or JSON null for NULL */
struct json_object *import_lava_string_or_null(const char *s);

/*
 * --partial after lava_log_parse() refused the log (reason): the run the
 * job's test cases give, written as a partial report. An exit code,
 * having said why.
 */
int import_lava_partial(const struct import_lava_args *a, const char *text, size_t len, const char *reason);
