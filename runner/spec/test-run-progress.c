// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test: run progress and its codec. run_progress_to_json() writes
 * every field (null when not measured), run_progress_from_json() and
 * run_progress_sanitize() keep the known ones with their types and bounds
 * and drop the rest, and sample_window, the window of the rates, travels
 * with them.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "run-progress.h"
#include "test-json.h"

/* worker -> pipe -> daemon (or host VM -> port -> runner): what a reader gets for p */
static struct json_object *round_trip(const struct runner_progress *p)
{
	struct json_object *o = run_progress_to_json(p), *in, *out;

	CHECK(o);
	in = json_tokener_parse(json_object_to_json_string(o));
	CHECK(in);
	out = run_progress_sanitize(in);
	CHECK(out);
	json_object_put(o);
	json_object_put(in);
	return out;
}

static void test_step_start_carries_previous_window(void)
{
	struct runner_progress p = {
		.rep = 1, .reps = 3, .arm = "base", .step = "post", .elapsed_s = 12.5, .fraction = 0.4,
		.rates = { .pf_per_s = 1, .tlb_per_s = 2, .invalidations_per_s = 66200, .guest_ops_per_s = 1.2e6 },
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
		.rep = 0, .reps = 1, .arm = "a", .step = "snapshot", .rates = RUN_RATES_NONE, .snapshot_fraction = 0.3,
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
		.rep = 0, .reps = 1, .arm = "a", .step = "vm-start", .rates = RUN_RATES_NONE, .snapshot_fraction = NAN,
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
	o = run_progress_sanitize(in);
	CHECK(o);
	CHECK(json_object_get_int(jget(o, "rep")) == 0);
	CHECK(jnull(o, "step") && jnull(o, "sample_window") && jnull(o, "pf_per_s") && jnull(o, "arm"));
	CHECK(!json_object_object_get_ex(o, "extra", NULL));
	json_object_put(o);
	json_object_put(in);
}

/* a host VM's port line decoded: the strings bounded, the rates as sent, a long placement kept whole */
static void test_decode(void)
{
	char placement[400];
	struct runner_progress p = {
		.rep = 2, .reps = 4, .arm = "patched", .step = "snapshot", .rates = RUN_RATES_NONE,
		.sample_window = "pre", .snapshot_fraction = 0.5, .waiting_s = NAN, .placement = placement,
	};
	struct run_progress_buf b;
	struct json_object *o, *bad;

	memset(placement, 'x', sizeof(placement) - 1);
	placement[sizeof(placement) - 1] = '\0';
	p.rates.invalidations_per_s = 7064;
	o = run_progress_to_json(&p);
	CHECK(o && run_progress_from_json(o, &b) == 0);
	CHECK(b.p.rep == 2 && b.p.reps == 4 && !strcmp(b.p.arm, "patched") && !strcmp(b.p.step, "snapshot"));
	CHECK(b.p.rates.invalidations_per_s == 7064 && isnan(b.p.rates.pf_per_s));
	CHECK(!strcmp(b.p.sample_window, "pre") && b.p.snapshot_fraction == 0.5 && !b.p.waiting_for);
	CHECK(b.p.placement && strlen(b.p.placement) == sizeof(placement) - 1);
	json_object_put(o);
	bad = json_object_new_array();
	CHECK(run_progress_from_json(bad, &b) == -EINVAL);
	json_object_put(bad);
}

int main(void)
{
	test_decode();
	test_step_start_carries_previous_window();
	test_no_sample_yet();
	test_waiting_for_qemu();
	test_sanitize_drops_junk();
	return 0;
}
