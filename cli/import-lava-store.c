// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An imported run written into the results store: its report and its
 * origin.json (where it came from: the log, the LAVA job, device and
 * device type), made whole in a temporary directory, then renamed into
 * place, so that the store never holds half a run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic-file.h"
#include "import-lava.h"
#include "json-util.h"
#include "macro.h"
#include "report.h"
#include "run-dir.h"

struct json_object *import_lava_string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* origin.json: where the run came from; a partial run has no report's encoding or checksum. */
static char *origin_json(const struct import_lava_args *a, const struct lava_report *r, bool partial)
{
	_cleanup_json_ struct json_object *o = json_object_new_object(), *lava = json_object_new_object();
	struct timespec ts;
	char now[32];
	const char *text;

	if (!o || !lava)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	report_format_time((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, now);
	json_object_object_add(o, "schema", json_object_new_string("snapbench.origin/1"));
	json_object_object_add(o, "source", json_object_new_string("lava"));
	json_object_object_add(o, "imported", json_object_new_string(now));
	json_object_object_add(o, "log", json_object_new_string(a->log));
	json_object_object_add(o, "log_line", json_object_new_int64((int64_t)r->line));
	json_object_object_add(o, "encoding", import_lava_string_or_null(partial ? NULL : r->encoding));
	json_object_object_add(o, "report_sha256", import_lava_string_or_null(partial ? NULL : r->sha256));
	json_object_object_add(lava, "job_id", import_lava_string_or_null(a->job ? a->job : r->job));
	json_object_object_add(lava, "device", import_lava_string_or_null(a->device ? a->device : r->device));
	json_object_object_add(lava, "device_type", import_lava_string_or_null(a->device_type ? a->device_type : r->device_type));
	json_object_object_add(o, "lava", json_object_get(lava));
	if (partial)
		json_object_object_add(o, "partial", json_object_new_boolean(true));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	char *out = NULL;
	return text && asprintf(&out, "%s\n", text) >= 0 ? out : NULL;
}

void import_lava_remove_run(const char *dir)
{
	_cleanup_free_ char *report = NULL, *origin = NULL;

	if (asprintf(&report, "%s/%s", dir, RUN_DIR_REPORT) >= 0)
		unlink(report);
	if (asprintf(&origin, "%s/%s", dir, RUN_DIR_ORIGIN) >= 0)
		unlink(origin);
	rmdir(dir);
}

int import_lava_write_run(const struct import_lava_args *a, const struct lava_report *r, bool partial, struct sb_error *err)
{
	_cleanup_free_ char *tmp = NULL, *dest = NULL, *report = NULL, *origin = NULL, *origin_text = NULL;
	int ret;

	if (asprintf(&tmp, "%s/.import-%s.XXXXXX", a->store, r->id) < 0 || asprintf(&dest, "%s/%s", a->store, r->id) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (!mkdtemp(tmp))
		return sb_error_set(err, -errno, "%s: cannot create a directory in the store: %s", a->store, strerror(errno));
	if (asprintf(&report, "%s/%s", tmp, RUN_DIR_REPORT) < 0 || asprintf(&origin, "%s/%s", tmp, RUN_DIR_ORIGIN) < 0 ||
	    !(origin_text = origin_json(a, r, partial))) {
		rmdir(tmp);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	if ((ret = atomic_file_write(report, r->data, r->len, 0644, err)) < 0 ||
	    (ret = atomic_file_write(origin, origin_text, strlen(origin_text), 0644, err)) < 0) {
		import_lava_remove_run(tmp);
		return ret;
	}
	if (chmod(tmp, 0755) < 0 || rename(tmp, dest) < 0) {
		ret = -errno;
		import_lava_remove_run(tmp);
		return sb_error_set(err, ret, "%s: cannot move the imported run into place: %s", dest,
				    ret == -EEXIST || ret == -ENOTEMPTY ? "a run of that id is already in the store"
									: strerror(-ret));
	}
	return 0;
}
