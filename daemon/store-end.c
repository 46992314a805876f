// SPDX-License-Identifier: GPL-2.0-or-later
/* Ending a run its worker did not end: the report's final state, error and repetitions. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "atomic-file.h"
#include "clock.h"
#include "run-dir.h"
#include "macro.h"
#include "store.h"
#include "store-private.h"

static bool state_is_final(const char *s)
{
	return s && (!strcmp(s, "completed") || !strcmp(s, "failed") || !strcmp(s, "cancelled"));
}

static struct json_object *error_object(const char *phase, const char *message)
{
	struct json_object *e = json_object_new_object();

	if (!e)
		return NULL;
	json_object_object_add(e, "message", json_object_new_string(message));
	json_object_object_add(e, "phase", json_object_new_string(phase));
	return e;
}

int store_end_report(struct json_object *report, enum report_state state, const char *phase,
		     const char *message, unsigned flags)
{
	bool override = flags & STORE_END_OVERRIDE_CANCELLED;
	struct json_object *v = store_get(report, "state"), *reps, *arms;
	const char *final = report_state_to_string(state);
	const char *rep_final = state == REPORT_CANCELLED ? "cancelled" : "failed";
	char now[32];

	if (json_object_is_type(v, json_type_string) && state_is_final(json_object_get_string(v)) &&
	    !(override && !strcmp(json_object_get_string(v), "cancelled")))
		return 0;
	report_format_time(realtime_ns(), now);
	json_object_object_add(report, "state", json_object_new_string(final));
	json_object_object_add(report, "error", error_object(phase, message));
	if (!store_get(report, "finished"))
		json_object_object_add(report, "finished", json_object_new_string(now));

	reps = store_get(report, "repetitions");
	for (size_t i = 0; json_object_is_type(reps, json_type_array) && i < json_object_array_length(reps); i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		struct json_object *rs = store_get(rep, "state"), *snap = store_get(rep, "snapshot");

		bool cut;

		if (!json_object_is_type(rs, json_type_string))
			continue;
		cut = override && !strcmp(json_object_get_string(rs), "cancelled");
		if (strcmp(json_object_get_string(rs), "running") && !cut)
			continue;
		json_object_object_add(rep, "state", json_object_new_string(rep_final));
		if (!store_get(rep, "error") || cut)
			json_object_object_add(rep, "error", error_object(phase, message));
		if (!store_get(rep, "finished"))
			json_object_object_add(rep, "finished", json_object_new_string(now));
		v = store_get(snap, "status");
		if (json_object_is_type(v, json_type_string) &&
		    (!strcmp(json_object_get_string(v), "active") || (cut && !strcmp(json_object_get_string(v), "cancelled"))))
			json_object_object_add(snap, "status", json_object_new_string(rep_final));
	}

	/* each arm's failed count follows its repetitions */
	arms = store_get(report, "arms");
	for (size_t i = 0; json_object_is_type(arms, json_type_array) && i < json_object_array_length(arms); i++) {
		struct json_object *arm = json_object_array_get_idx(arms, i);
		struct json_object *label = store_get(arm, "label"), *counts = store_get(arm, "repetitions");
		int64_t failed = 0;

		if (!json_object_is_type(label, json_type_string) || !json_object_is_type(counts, json_type_object))
			continue;
		for (size_t k = 0; json_object_is_type(reps, json_type_array) && k < json_object_array_length(reps);
		     k++) {
			struct json_object *rep = json_object_array_get_idx(reps, k);
			struct json_object *ra = store_get(rep, "arm"), *rs = store_get(rep, "state");
			if (json_object_is_type(ra, json_type_string) && json_object_is_type(rs, json_type_string) &&
			    !strcmp(json_object_get_string(ra), json_object_get_string(label)) &&
			    !strcmp(json_object_get_string(rs), "failed"))
				failed++;
		}
		json_object_object_add(counts, "failed", json_object_new_int64(failed));
	}
	return 1;
}

int store_end_run(const char *run_dir, enum report_state state, const char *phase, const char *message,
		  unsigned flags, struct sb_error *err)
{
	char path[4096];
	struct json_object *report;
	int r;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", run_dir, RUN_DIR_REPORT) >= sizeof(path))
		return sb_error_set(err, -ENAMETOOLONG, "path too long");
	r = report_read(path, &report, err);
	if (r < 0)
		return r;
	r = store_end_report(report, state, phase, message, flags);
	if (r > 0) {
		size_t n;
		const char *text = json_object_to_json_string_length(report, JSON_C_TO_STRING_PRETTY |
								     JSON_C_TO_STRING_SPACED |
								     JSON_C_TO_STRING_NOSLASHESCAPE, &n);
		_cleanup_free_ char *buf = text ? malloc(n + 1) : NULL;

		if (!buf) {
			json_object_put(report);
			return sb_error_set(err, -ENOMEM, "out of memory");
		}
		memcpy(buf, text, n);
		buf[n] = '\n';
		int k = atomic_file_write(path, buf, n + 1, 0644, err);
		if (k < 0)
			r = k;
	}
	json_object_put(report);
	return r;
}

int store_end_run_interrupted(const char *run_dir, struct sb_error *err)
{
	return store_end_run(run_dir, REPORT_FAILED, STORE_INTERRUPTED_PHASE,
			     "interrupted: snapbenchd stopped while the run was executing (killed, crashed or the host went down); "
			     "the report keeps what was measured until then; submit the run again",
			     STORE_END_OVERRIDE_CANCELLED, err);
}
