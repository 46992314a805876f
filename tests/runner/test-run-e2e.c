// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * End to end, for real: 2 repetitions of a 256 MiB, 2-vCPU micro guest
 * (vCPU 0 the latency probe, vCPU 1 write64) with BPF probes, a background
 * snapshot to a file, and a sysctl knob set for the run. The report
 * validates; it has per-window summaries; the snapshot completed; the
 * invalidations of the snapshot window are mostly uffd-wp; timeline rows
 * sum to the totals; KVM's and BPF's counts of the same event agree; the
 * knob was in effect during the run and restored after; nothing is left
 * behind.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "run-test.h"
#include "runner.h"
#include "spec.h"
#include "test-accel.h"

#define KNOB_FILE "/proc/sys/kernel/printk_ratelimit"

static long knob_original, knob_during = -1;

static void on_progress(const struct runner_progress *p, void *userdata)
{
	(void)userdata;
	if (!strcmp(p->step, "pre"))
		knob_during = run_test_sysctl(KNOB_FILE);
}

static void restore_knob(void)
{
	/* only if the runner failed to: the test then fails anyway */
	run_test_restore_sysctl(KNOB_FILE, knob_original);
}

static double window_sum(struct json_object *rep, const char *window, const char *counter)
{
	struct json_object *tl = jp(rep, "timeline");
	double sum = 0;

	for (size_t i = 0; i < json_object_array_length(tl); i++) {
		struct json_object *row = json_object_array_get_idx(tl, i), *v;
		if (strcmp(jstr(row, "window"), window))
			continue;
		v = jp(row, "counters");
		if (json_object_object_get_ex(v, counter, &v))
			sum += json_object_get_double(v);
	}
	return sum;
}

int main(int argc, char **argv)
{
	struct run_spec spec;
	struct sb_error err = {};
	char run_dir[PATH_MAX], knob[64], path[PATH_MAX + 32];
	struct json_object *r;
	int k;

	run_test_init(argc, argv);
	run_test_require_root();
	/* under the host-wide knob lock: no run on this host has the knob changed right now */
	knob_original = run_test_sysctl_locked(KNOB_FILE);
	CHECK(knob_original >= 0);
	test_at_exit(restore_knob);

	snprintf(run_dir, sizeof(run_dir), "%s/20261130T000000Z-e2e000", test_tmpdir("e2e"));
	run_test_spec_init(&spec);
	CHECK(spec_set(&spec, "repetitions", "2", NULL, &err) == 0);
	CHECK(spec_set(&spec, "vm.memory", "256M", NULL, &err) == 0);
	CHECK(spec_set(&spec, "vm.vcpus", "2", NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.pattern", "write64", NULL, &err) == 0);
	CHECK(spec_set(&spec, "guest.probe.vcpu", "0", NULL, &err) == 0);
	CHECK(spec_set(&spec, "snapshot.sink", "file", NULL, &err) == 0);
	CHECK(spec_set(&spec, "timing.warmup_s", "1", NULL, &err) == 0);
	CHECK(spec_set(&spec, "timing.pre_s", "3", NULL, &err) == 0);
	CHECK(spec_set(&spec, "timing.post_s", "3", NULL, &err) == 0);
	CHECK(spec_set(&spec, "timing.interval_ms", "250", NULL, &err) == 0);
	snprintf(knob, sizeof(knob), "sysctl:kernel.printk_ratelimit=%ld", knob_original + 3);
	CHECK(spec_set(&spec, "knobs", knob, NULL, &err) == 0);
	CHECK(spec_add_arm(&spec, "stock", "--arm", &err) == 0);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);

	struct runner_options opts = {
		.run_dir = run_dir,
		.progress = on_progress,
	};
	k = run_test_run("e2e", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	CHECK(!strcmp(jstr(r, "state"), "completed"));
	run_test_expect_shape("run-e2e");
	CHECK(jnull(r, "error"));
	CHECK(!strcmp(jstr(r, "id"), "20261130T000000Z-e2e000"));
	CHECK(jnum(r, "arms/0/repetitions/completed") == 2);
	CHECK(jnum(r, "arms/0/repetitions/failed") == 0);
	CHECK(jnum(r, "spec/vm/memory") == 256 << 20);
	CHECK(jstr(r, "host/qemu/version") && jstr(r, "host/kernel_release"));
	CHECK(!strcmp(jstr(r, "arms/0/knobs/sysctl:kernel.printk_ratelimit"), knob + strlen("sysctl:kernel.printk_ratelimit=")));

	/* the knob was set during the run and is back now */
	CHECK_MSG(knob_during == knob_original + 3, "the knob read %ld during the run, expected %ld", knob_during,
		  knob_original + 3);
	CHECK_MSG(run_test_sysctl_locked(KNOB_FILE) == knob_original, "the knob was not restored");

	for (int i = 0; i < 2; i++) {
		char p[64];
		struct json_object *rep = jp(r, (snprintf(p, sizeof(p), "repetitions/%d", i), p));
		double inval, uffd, pf_kvm, pf_bpf;

		CHECK(rep);
		CHECK(!strcmp(jstr(rep, "state"), "completed"));
		CHECK(!strcmp(jstr(rep, "snapshot/status"), "completed"));
		CHECK(jnum(rep, "snapshot/duration_s") > 0);
		/* every page of a 256 MiB guest is written out (zero pages count as duplicates) */
		CHECK_MSG(jnum(rep, "snapshot/pages") >= 65536 * 0.95, "%.0f pages", jnum(rep, "snapshot/pages"));
		CHECK(jnum(rep, "snapshot/file_bytes") > (1 << 20));
		CHECK(!jp(rep, "snapshot/path")); /* not kept */
		for (const char *const *w = (const char *const[]){ "pre", "snapshot", "post", NULL }; *w; w++) {
			snprintf(p, sizeof(p), "windows/%s/duration_s", *w);
			CHECK_MSG(jnum(rep, p) > 0, "rep %d has no %s window", i, *w);
			snprintf(p, sizeof(p), "windows/%s/metrics/guest_ops_per_s", *w);
			CHECK_MSG(jnum(rep, p) > 0, "no guest progress in rep %d's %s window", i, *w);
			snprintf(p, sizeof(p), "windows/%s/metrics/latency_p99_ns", *w);
			CHECK_MSG(jnum(rep, p) > 0, "no probe latency in rep %d's %s window", i, *w);
		}
		/* the window lasts its length (a slow last sample on a loaded host may add to it, never take away) */
		CHECK(jnum(rep, "windows/pre/duration_s") >= 2.99);
		CHECK(jnull(rep, "vm/exit")); /* stopped by us, cleanly */
		if (!run_test_kvm_counted(r))
			continue; /* TCG: hostvm-e2e counts these under the host VM's KVM */
		/* invalidations during the snapshot, mostly uffd-wp */
		inval = window_sum(rep, "snapshot", "bpf.invalidations");
		uffd = window_sum(rep, "snapshot", "bpf.invalidations.uffd-wp");
		printf("rep %d: snapshot %.2f s, %.0f invalidations, %.0f uffd-wp (%.1f%%), %.0f in pre\n", i,
		       jnum(rep, "snapshot/duration_s"), inval, uffd, inval ? 100 * uffd / inval : 0,
		       window_sum(rep, "pre", "bpf.invalidations"));
		CHECK_MSG(inval > 1000, "only %.0f invalidations during the snapshot", inval);
		CHECK_MSG(uffd >= 0.9 * inval, "uffd-wp is %.0f of %.0f invalidations", uffd, inval);
		CHECK(jnum(rep, "windows/snapshot/metrics/invalidations_per_s.uffd-wp") >=
		      0.9 * jnum(rep, "windows/snapshot/metrics/invalidations_per_s"));
		/* the same event from KVM's stats and from BPF (kvm:kvm_page_fault): they agree */
		pf_kvm = jnum(rep, "totals/kvm.pf_taken");
		pf_bpf = jnum(rep, "totals/bpf.page_fault");
		printf("rep %d: pf_taken %.0f (query-stats), kvm_page_fault %.0f (BPF)\n", i, pf_kvm, pf_bpf);
		CHECK_MSG(fabs(pf_kvm - pf_bpf) <= fmax(16, 0.1 * fmax(pf_kvm, pf_bpf)),
			  "pf_taken %.0f vs kvm:kvm_page_fault %.0f", pf_kvm, pf_bpf);
		/* the timeline sums to the totals (validate-report.py checks every counter) */
		CHECK(window_sum(rep, "warmup", "bpf.invalidations") + window_sum(rep, "pre", "bpf.invalidations") +
			      inval + window_sum(rep, "post", "bpf.invalidations") ==
		      jnum(rep, "totals/bpf.invalidations"));
	}
	if (test_kvm())
		CHECK(jnum(r, "arms/0/windows/snapshot/invalidations_per_s/n") == 2);

	/* nothing left behind: QEMU gone, pid file and snapshot files removed */
	run_test_expect_no_qemu(r);
	snprintf(path, sizeof(path), "%s/qemu.pid", run_dir);
	CHECK(access(path, F_OK) < 0);
	snprintf(path, sizeof(path), "%s/snapshot-rep0.bin", run_dir);
	CHECK(access(path, F_OK) < 0);
	json_object_put(r);
	spec_done(&spec);
	return 0;
}
