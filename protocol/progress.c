// SPDX-License-Identifier: GPL-2.0-or-later
/* Run progress on the worker pipe and in replies. */
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "macro.h"
#include "progress.h"
#include "run-progress.h"

static struct json_object *number_or_null(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

struct json_object *progress_to_json(const struct runner_progress *p)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "rep", json_object_new_int64(p->rep));
	json_object_object_add(o, "reps", json_object_new_int64(p->reps));
	json_object_object_add(o, "arm", p->arm ? json_object_new_string(p->arm) : NULL);
	json_object_object_add(o, "step", p->step ? json_object_new_string(p->step) : NULL);
	json_object_object_add(o, "elapsed_s", number_or_null(p->elapsed_s));
	json_object_object_add(o, "rep_elapsed_s", number_or_null(p->rep_elapsed_s));
	json_object_object_add(o, "fraction", number_or_null(p->fraction));
	json_object_object_add(o, "pf_per_s", number_or_null(p->pf_per_s));
	json_object_object_add(o, "tlb_per_s", number_or_null(p->tlb_per_s));
	json_object_object_add(o, "invalidations_per_s", number_or_null(p->invalidations_per_s));
	json_object_object_add(o, "guest_ops_per_s", number_or_null(p->guest_ops_per_s));
	json_object_object_add(o, "sample_window", p->sample_window ? json_object_new_string(p->sample_window) : NULL);
	json_object_object_add(o, "snapshot_fraction", number_or_null(p->snapshot_fraction));
	json_object_object_add(o, "waiting_for", p->waiting_for ? json_object_new_string(p->waiting_for) : NULL);
	json_object_object_add(o, "waiting_s", number_or_null(p->waiting_s));
	json_object_object_add(o, "placement", p->placement ? json_object_new_string(p->placement) : NULL);
	return o;
}

static const char *const int_fields[] = { "rep", "reps" };
static const char *const string_fields[] = { "arm", "step", "sample_window", "waiting_for" };
static const char *const number_fields[] = {
	"elapsed_s", "rep_elapsed_s", "fraction", "pf_per_s", "tlb_per_s", "invalidations_per_s",
	"guest_ops_per_s", "snapshot_fraction", "waiting_s",
};

struct json_object *progress_sanitize(struct json_object *in)
{
	struct json_object *o, *v;

	if (!json_object_is_type(in, json_type_object))
		return NULL;
	o = json_object_new_object();
	if (!o)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(int_fields); i++) {
		int64_t n = 0;
		if (json_object_object_get_ex(in, int_fields[i], &v) && json_object_is_type(v, json_type_int))
			n = json_object_get_int64(v);
		if (n < 0 || n > 1000000)
			n = 0;
		json_object_object_add(o, int_fields[i], json_object_new_int64(n));
	}
	for (size_t i = 0; i < ARRAY_SIZE(string_fields); i++) {
		struct json_object *s = NULL;
		if (json_object_object_get_ex(in, string_fields[i], &v) && json_object_is_type(v, json_type_string) &&
		    json_object_get_string_len(v) <= 64)
			s = json_object_new_string(json_object_get_string(v));
		json_object_object_add(o, string_fields[i], s);
	}
	for (size_t i = 0; i < ARRAY_SIZE(number_fields); i++) {
		struct json_object *d = NULL;
		if (json_object_object_get_ex(in, number_fields[i], &v) &&
		    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
			double x = json_object_get_double(v);
			if (isfinite(x))
				d = json_object_new_double(x);
		}
		json_object_object_add(o, number_fields[i], d);
	}
	/* one line of text (runner/placement.h), longer than the fields above */
	struct json_object *pl = NULL;
	if (json_object_object_get_ex(in, "placement", &v) && json_object_is_type(v, json_type_string) &&
	    json_object_get_string_len(v) <= PROGRESS_PLACEMENT_MAX)
		pl = json_object_new_string(json_object_get_string(v));
	json_object_object_add(o, "placement", pl);
	return o;
}
