// SPDX-License-Identifier: GPL-2.0-or-later
/* Run progress and its one JSON codec (run-progress.h). */
#include "run-progress.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"

static struct json_object *number_or_null(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static struct json_object *string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

struct json_object *run_progress_to_json(const struct runner_progress *p)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "rep", json_object_new_int64(p->rep));
	json_object_object_add(o, "reps", json_object_new_int64(p->reps));
	json_object_object_add(o, "arm", string_or_null(p->arm));
	json_object_object_add(o, "step", string_or_null(p->step));
	json_object_object_add(o, "elapsed_s", number_or_null(p->elapsed_s));
	json_object_object_add(o, "rep_elapsed_s", number_or_null(p->rep_elapsed_s));
	json_object_object_add(o, "fraction", number_or_null(p->fraction));
	json_object_object_add(o, "pf_per_s", number_or_null(p->rates.pf_per_s));
	json_object_object_add(o, "tlb_per_s", number_or_null(p->rates.tlb_per_s));
	json_object_object_add(o, "invalidations_per_s", number_or_null(p->rates.invalidations_per_s));
	json_object_object_add(o, "guest_ops_per_s", number_or_null(p->rates.guest_ops_per_s));
	json_object_object_add(o, "sample_window", string_or_null(p->sample_window));
	json_object_object_add(o, "snapshot_fraction", number_or_null(p->snapshot_fraction));
	json_object_object_add(o, "waiting_for", string_or_null(p->waiting_for));
	json_object_object_add(o, "waiting_s", number_or_null(p->waiting_s));
	json_object_object_add(o, "placement", string_or_null(p->placement));
	return o;
}

static unsigned get_count(struct json_object *in, const char *key)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(in, key, &v) || !json_object_is_type(v, json_type_int))
		return 0;
	n = json_object_get_int64(v);
	return n < 0 || n > 1000000 ? 0 : (unsigned)n;
}

static double get_number(struct json_object *in, const char *key)
{
	struct json_object *v;
	double x;

	if (!json_object_object_get_ex(in, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return NAN;
	x = json_object_get_double(v);
	return isfinite(x) ? x : NAN;
}

/* key's string into buf (size: its bound + 1); NULL when missing, not a string or longer than the bound */
static const char *get_string(struct json_object *in, const char *key, char *buf, size_t size)
{
	struct json_object *v;

	if (!json_object_object_get_ex(in, key, &v) || !json_object_is_type(v, json_type_string) ||
	    (size_t)json_object_get_string_len(v) >= size)
		return NULL;
	snprintf(buf, size, "%s", json_object_get_string(v));
	return buf;
}

int run_progress_from_json(struct json_object *in, struct run_progress_buf *out)
{
	struct runner_progress *p = &out->p;

	if (!json_object_is_type(in, json_type_object))
		return -EINVAL;
	*p = (struct runner_progress){
		.rep = get_count(in, "rep"),
		.reps = get_count(in, "reps"),
		.arm = get_string(in, "arm", out->arm, sizeof(out->arm)),
		.step = get_string(in, "step", out->step, sizeof(out->step)),
		.elapsed_s = get_number(in, "elapsed_s"),
		.rep_elapsed_s = get_number(in, "rep_elapsed_s"),
		.fraction = get_number(in, "fraction"),
		.rates = {
			.pf_per_s = get_number(in, "pf_per_s"),
			.tlb_per_s = get_number(in, "tlb_per_s"),
			.invalidations_per_s = get_number(in, "invalidations_per_s"),
			.guest_ops_per_s = get_number(in, "guest_ops_per_s"),
		},
		.sample_window = get_string(in, "sample_window", out->sample_window, sizeof(out->sample_window)),
		.snapshot_fraction = get_number(in, "snapshot_fraction"),
		.waiting_for = get_string(in, "waiting_for", out->waiting_for, sizeof(out->waiting_for)),
		.waiting_s = get_number(in, "waiting_s"),
		.placement = get_string(in, "placement", out->placement, sizeof(out->placement)),
	};
	return 0;
}

struct json_object *run_progress_sanitize(struct json_object *in)
{
	struct run_progress_buf b;

	if (run_progress_from_json(in, &b) < 0)
		return NULL;
	return run_progress_to_json(&b.p);
}
