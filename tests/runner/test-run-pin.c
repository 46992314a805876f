// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * arms[].pin: the guest RAM long-term pinned, as an assigned device pins it
 * (runner/scenario/guest-pin.h). Two arms over a memfd-backed guest, one pinning:
 *
 *   - the pinned arm's repetition records vm.pinned_pages = guest RAM / 4 KiB;
 *   - the kernel counted those pins: /proc/vmstat nr_foll_pin_acquired grew
 *     by at least that many over the run and nr_foll_pin_released by as
 *     many, so none is left (the unpinned arm records none);
 *   - pin without a memfd backing is refused by the spec, naming the fix.
 *
 * The numa-hinting scenario on this host (docs/scenarios.md): its steady
 * window between pre and post, the guest placed on the host's nodes, the
 * guest RAM's policy switched for the window (mbind on the memfd), the
 * seed 002 counts in every window, measured or unavailable with the
 * reason (never a silent 0), kernel.numa_balancing restored after the run;
 * and with kernel.numa_balancing=0 the repetition fails naming the knob.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "macro.h"
#include "run-test.h"
#include "runner.h"
#include "spec.h"

#define GUEST "64M"
#define GUEST_PAGES ((64ull << 20) / 4096)

static long long vmstat(const char *name)
{
	const char *text = run_test_read_file("/proc/vmstat");
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return atoll(l + n + 1);
	CHECK_MSG(false, "/proc/vmstat has no %s (a kernel before 5.8)", name);
	return -1;
}

static void pin_spec(struct run_spec *spec, const char *backing)
{
	struct sb_error err = {};

	run_test_spec_init(spec);
	CHECK(spec_set(spec, "repetitions", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.memory", GUEST, NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.backing", backing, NULL, &err) == 0);
	CHECK(spec_set(spec, "snapshot.sink", "null", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.warmup_s", "0", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.pre_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.post_s", "1", NULL, &err) == 0);
	CHECK_MSG(spec_add_arm(spec, "pinned:pin", "--arm", &err) == 0, "%s", err.msg);
	CHECK_MSG(spec_add_arm(spec, "unpinned", "--arm", &err) == 0, "%s", err.msg);
}

static void test_pin(void)
{
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;
	long long acq0, rel0, acq, rel;
	int k;

	pin_spec(&spec, "memfd");
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);
	acq0 = vmstat("nr_foll_pin_acquired");
	rel0 = vmstat("nr_foll_pin_released");
	k = run_test_run("pin", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	acq = vmstat("nr_foll_pin_acquired") - acq0;
	rel = vmstat("nr_foll_pin_released") - rel0;
	CHECK(!strcmp(jstr(r, "repetitions/0/arm"), "pinned") && !strcmp(jstr(r, "repetitions/1/arm"), "unpinned"));
	CHECK_MSG(jnum(r, "repetitions/0/vm/pinned_pages") == (double)GUEST_PAGES, "pinned_pages %g, want %llu",
		  jnum(r, "repetitions/0/vm/pinned_pages"), (unsigned long long)GUEST_PAGES);
	CHECK_MSG(!jp(r, "repetitions/1/vm/pinned_pages"), "the unpinned arm records pinned pages");
	CHECK(jp(r, "spec/arms/0/pin") && json_object_get_boolean(jp(r, "spec/arms/0/pin")));
	/* the kernel's own count of FOLL_PIN pins: ours, and whatever else pinned meanwhile */
	CHECK_MSG(acq >= (long long)GUEST_PAGES, "nr_foll_pin_acquired grew by %lld over the run, want >= %llu", acq,
		  (unsigned long long)GUEST_PAGES);
	CHECK_MSG(rel >= (long long)GUEST_PAGES, "nr_foll_pin_released grew by %lld, want >= %llu: pins left behind", rel,
		  (unsigned long long)GUEST_PAGES);
	printf("pinned %llu pages; nr_foll_pin_acquired +%lld, released +%lld over the run\n",
	       (unsigned long long)GUEST_PAGES, acq, rel);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);

	/* pin needs a memfd it can map */
	pin_spec(&spec, "anon");
	CHECK(spec_validate(&spec, &err) < 0);
	printf("anon + pin: %s\n", err.msg);
	CHECK(strstr(err.msg, "spec.arms[0].pin") && strstr(err.msg, "\"memfd\""));
	spec_done(&spec);
}

static const char *const numa_counts[] = {
	"numa_kvm_flushes", "numa_sptes_zapped", "numa_invalidations", "numa_invalidated_pages", "numa_tlb_shootdowns",
	"refaults", "numa_pte_updates", "numa_hint_faults", "numa_hint_faults_local", "numa_pages_migrated",
};

static void numa_spec(struct run_spec *spec, const char *balancing)
{
	struct sb_error err = {};
	char knob[64];

	pin_spec(spec, "memfd");
	snprintf(knob, sizeof(knob), "sysctl:kernel.numa_balancing=%s", balancing);
	CHECK(spec_set(spec, "scenario", "numa-hinting", NULL, &err) == 0);
	CHECK(spec_set(spec, "numa_hinting.steady_s", "3", NULL, &err) == 0);
	CHECK(spec_set(spec, "knobs", knob, NULL, &err) == 0);
	CHECK_MSG(spec_validate(spec, &err) == 0, "%s", err.msg);
}

static void test_numa(void)
{
	_cleanup_free_ char *before = strdup(run_test_read_file("/proc/sys/kernel/numa_balancing"));
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;
	char path[128];
	int k;

	numa_spec(&spec, "1");
	k = run_test_run("numa", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	run_test_expect_shape("run-numa-hinting");
	for (int i = 0; i < 2; i++) {
		const char *arm = jstr(r, i ? "repetitions/1/arm" : "repetitions/0/arm");
		double nodes;

		snprintf(path, sizeof(path), "repetitions/%d/numa/nodes", i);
		nodes = jnum(r, path);
		CHECK_MSG(nodes >= 1, "%s: numa.nodes %g", arm, nodes);
		snprintf(path, sizeof(path), "repetitions/%d/numa/vcpu_nodes", i);
		CHECK_MSG(jp(r, path) && json_object_array_length(jp(r, path)) == 2, "%s: vcpu_nodes", arm);
		snprintf(path, sizeof(path), "repetitions/%d/numa/steady_ended_s", i);
		CHECK_MSG(jnum(r, path) > 0, "%s: the steady window did not end with the policy switched back", arm);
		snprintf(path, sizeof(path), "repetitions/%d/windows/steady/duration_s", i);
		CHECK_MSG(jnum(r, path) >= 2.5, "%s: steady window of %g s", arm, jnum(r, path));
		printf("%s: %g node(s), steady %.1f s:", arm, nodes, jnum(r, path));
		for (size_t m = 0; m < ARRAY_SIZE(numa_counts); m++) {
			const char *w[] = { "pre", "steady", "post" };
			for (size_t j = 0; j < ARRAY_SIZE(w); j++) {
				struct json_object *v, *why;
				snprintf(path, sizeof(path), "repetitions/%d/windows/%s/metrics/%s", i, w[j], numa_counts[m]);
				v = jp(r, path);
				snprintf(path, sizeof(path), "repetitions/%d/windows/%s/unavailable/%s", i, w[j], numa_counts[m]);
				why = jp(r, path);
				/* a number, or null with the reason */
				CHECK_MSG((v && json_object_is_type(v, json_type_double)) ||
					  (v && json_object_is_type(v, json_type_int)) ||
					  (!v && why && json_object_get_string_len(why) > 0),
					  "%s: %s in %s is neither measured nor unavailable with a reason", arm, numa_counts[m], w[j]);
				if (j == 1)
					printf(" %s %s", numa_counts[m], v ? json_object_get_string(v) : "unavailable");
			}
		}
		printf("\n");
	}
	CHECK(!strcmp(run_test_read_file("/proc/sys/kernel/numa_balancing"), before));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);

	/* NUMA balancing off: nothing would scan the guest RAM, and the repetition says which knob to add */
	numa_spec(&spec, "0");
	k = run_test_run("numa-off", &spec, &opts, &r, &err);
	CHECK_MSG(k < 0 && r, "a numa-hinting run with kernel.numa_balancing=0 did not fail");
	printf("numa_balancing=0: %s\n", jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "sysctl:kernel.numa_balancing=1"));
	CHECK(!strcmp(run_test_read_file("/proc/sys/kernel/numa_balancing"), before));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "pin", test_pin },
		{ "numa", test_numa },
	};

	run_test_init(argc, argv);
	run_test_require_root();
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 3 ? argv[3] : NULL);
	return 0;
}
