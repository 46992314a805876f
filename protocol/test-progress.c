// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test: run progress from the worker to clients. progress_to_json()
 * writes every field (null when not measured), progress_sanitize() keeps
 * the known ones with their types and drops the rest, and sample_window,
 * the window of the rates, travels with them.
 */
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "progress.h"
#include "run-progress.h"
#include "test-json.h"

/* worker -> pipe -> daemon: what a client gets for p */
static struct json_object *round_trip(const struct runner_progress *p)
{
	struct json_object *o = progress_to_json(p), *in, *out;

	CHECK(o);
	in = json_tokener_parse(json_object_to_json_string(o));
	CHECK(in);
	out = progress_sanitize(in);
	CHECK(out);
	json_object_put(o);
	json_object_put(in);
	return out;
}

static void test_step_start_carries_previous_window(void)
{
	struct runner_progress p = {
		.rep = 1, .reps = 3, .arm = "base", .step = "post", .elapsed_s = 12.5, .fraction = 0.4,
		.pf_per_s = 1, .tlb_per_s = 2, .invalidations_per_s = 66200, .guest_ops_per_s = 1.2e6,
		.sample_window = "snapshot", .snapshot_fraction = NAN,
	};
	struct json_object *o = round_trip(&p);

	CHECK(!strcmp(jstr(o, "step"), "post"));
	CHECK(!strcmp(jstr(o, "sample_window"), "snapshot"));
	CHECK(json_object_get_double(jget(o, "invalidations_per_s")) == 66200);
	CHECK(jnull(o, "snapshot_fraction"));
	json_object_put(o);
}

static void test_waiting_for_qemu(void)
{
	struct runner_progress p = {
		.rep = 0, .reps = 1, .arm = "a", .step = "snapshot", .pf_per_s = NAN, .tlb_per_s = NAN,
		.invalidations_per_s = NAN, .guest_ops_per_s = NAN, .snapshot_fraction = 0.3,
		.waiting_for = "query-migrate", .waiting_s = 3.5,
	};
	struct json_object *o = round_trip(&p);

	CHECK(!strcmp(jstr(o, "waiting_for"), "query-migrate"));
	CHECK(json_object_get_double(jget(o, "waiting_s")) == 3.5);
	json_object_put(o);
	p.waiting_for = NULL;
	p.waiting_s = NAN;
	o = round_trip(&p);
	CHECK(jnull(o, "waiting_for") && jnull(o, "waiting_s"));
	json_object_put(o);
}

static void test_no_sample_yet(void)
{
	struct runner_progress p = {
		.rep = 0, .reps = 1, .arm = "a", .step = "vm-start", .pf_per_s = NAN, .tlb_per_s = NAN,
		.invalidations_per_s = NAN, .guest_ops_per_s = NAN, .snapshot_fraction = NAN,
	};
	struct json_object *o = round_trip(&p);

	CHECK(jnull(o, "sample_window"));
	CHECK(jnull(o, "pf_per_s") && jnull(o, "guest_ops_per_s"));
	CHECK(json_object_get_int(jget(o, "reps")) == 1);
	json_object_put(o);
}

static void test_sanitize_drops_junk(void)
{
	struct json_object *in = json_tokener_parse(
		"{\"rep\": -4, \"step\": 7, \"sample_window\": [\"pre\"], \"pf_per_s\": \"many\", \"extra\": true,"
		" \"arm\": \"0123456789012345678901234567890123456789012345678901234567890123456789\"}");
	struct json_object *o;

	CHECK(in);
	o = progress_sanitize(in);
	CHECK(o);
	CHECK(json_object_get_int(jget(o, "rep")) == 0);
	CHECK(jnull(o, "step") && jnull(o, "sample_window") && jnull(o, "pf_per_s") && jnull(o, "arm"));
	CHECK(!json_object_object_get_ex(o, "extra", NULL));
	json_object_put(o);
	json_object_put(in);
}

int main(void)
{
	test_step_start_carries_previous_window();
	test_no_sample_yet();
	test_waiting_for_qemu();
	test_sanitize_drops_junk();
	return 0;
}
