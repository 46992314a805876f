// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The postcopy-restore scenario for real: a postcopy migration of the micro
 * guest to a destination QEMU on this host, whose guest then touches its
 * 128 MiB region once, linearly. Every report validates. Cases:
 *
 *   e2e             2 repetitions, reads, the background push throttled to
 *                   64 MiB/s: each records the pass's time over
 *                   all 32768 pages, postcopy-requests > 0, no page lost
 *                   (every page held what the source's guest wrote), the
 *                   migration completed; compare's defaults lead with the
 *                   pass time; nothing is left behind
 *
 * Every pass (e2e, write, hugetlb) also has its first-touch histogram: a
 * count per page touched, log2 buckets in order, none longer than the pass,
 * their lower bounds adding up to no more than the pass's time (the
 * touches tile it), the percentiles in order within it.
 *   write           the pass writes (an exchange per page): no page lost
 *   hugetlb         guest RAM on 2 MiB hugetlb pages (reserved by the
 *                   sysctl:vm.nr_hugepages knob): the chunk is 2 MiB;
 *                   compare of a 4 KiB run against it names both chunks
 *   dest-fails      the destination QEMU does not start: the repetition
 *                   fails in prepare with QEMU's words, the run stops, no
 *                   QEMU is left
 *   no-hugepages    hugetlb with huge pages for the source only: the
 *                   destination cannot start, the repetition says so
 *   uffd-refused    QEMU as an unprivileged user without userfaultfd (the
 *                   knob sysctl:vm.unprivileged_userfaultfd=0 for the run):
 *                   preflight says so; without preflight the destination
 *                   refuses postcopy-ram in QEMU's words, the run stops
 *   preempt         postcopy-preempt (over a unix socket: an fd is one
 *                   connection, preempt opens a second), the push throttled
 *                   to 64 MiB/s, 2 repetitions: on QEMU 8.0 and later both
 *                   complete with every page found; QEMU 7.x is refused in
 *                   preflight naming postcopy-preempt, the version that
 *                   fixed it and the spec field; no socket directory and no
 *                   QEMU is left (run-postcopy-preempt-refused on Debian
 *                   12's 7.2, run-postcopy-preempt in the qemu10 tier)
 *
 * argv[3] (optional) runs one case only; argv[4] is snapbench, for
 * `snapbench compare` of the e2e report (its defaults for these runs).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "macro.h"
#include "run-test.h"
#include "runner.h"
#include "spec.h"

static const char *snapbench_exe;

/* Does the JSON array of strings a hold s? */
static bool strv_json_has(struct json_object *a, const char *s)
{
	for (size_t i = 0; a && i < json_object_array_length(a); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s))
			return true;
	return false;
}


static void postcopy_spec(struct run_spec *spec, const char *reps)
{
	struct sb_error err = {};

	run_test_spec_init(spec);
	CHECK(spec_set(spec, "scenario", "postcopy-restore", NULL, &err) == 0);
	CHECK(spec_set(spec, "repetitions", reps, NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.memory", "256M", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.vcpus", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.pattern", "fault-linear", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.region", "128M", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.probe.vcpu", "null", NULL, &err) == 0);
	CHECK(spec_set(spec, "postcopy.timeout_s", "60", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.warmup_s", "0", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.pre_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.post_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.interval_ms", "250", NULL, &err) == 0);
	CHECK_MSG(spec_validate(spec, &err) == 0, "%s", err.msg);
}

/* The pass's first-touch histogram (postcopy.pass.touch_hist): a count per page, in range, in order. */
static void check_touch_hist(struct json_object *rep, int i)
{
	struct json_object *lo = jget(rep, "postcopy/pass/touch_hist/bucket_ns");
	struct json_object *wi = jget(rep, "postcopy/pass/touch_hist/width_ns");
	struct json_object *cnt = jget(rep, "postcopy/pass/touch_hist/counts");
	double pass_ns = jnum(rep, "postcopy/pass/ms") * 1e6, pages = jnum(rep, "postcopy/pass/pages");
	double sum = 0, least = 0, end = 0, slow = 0, p50, p99, top;
	size_t n;

	CHECK_MSG(lo && wi && cnt, "rep %d: no postcopy.pass.touch_hist", i);
	n = json_object_array_length(cnt);
	CHECK(n >= 1 && n <= 40 && json_object_array_length(lo) == n && json_object_array_length(wi) == n);
	for (size_t k = 0; k < n; k++) {
		double l = json_object_get_double(json_object_array_get_idx(lo, k));
		double w = json_object_get_double(json_object_array_get_idx(wi, k));
		double c = json_object_get_double(json_object_array_get_idx(cnt, k));

		CHECK_MSG(c >= 1 && l >= 0 && w > 0, "rep %d bucket %zu: [%g +%g) x %g", i, k, l, w, c);
		/* log2 buckets: each as wide as its lower bound, but the first */
		CHECK_MSG(l == 0 || fabs(w - l) <= 1e-6 * l, "rep %d bucket %zu: [%g +%g) is not a log2 bucket", i, k, l, w);
		CHECK_MSG(l >= end * (1 - 1e-9), "rep %d bucket %zu starts at %g, inside the one below (ends %g)", i, k, l, end);
		CHECK_MSG(l <= pass_ns, "rep %d: a touch of at least %g ns in a pass of %g ns", i, l, pass_ns);
		sum += c;
		least += c * l;
		if (l >= 1000)
			slow += c;
		end = l + w;
	}
	CHECK_MSG(sum == pages, "rep %d: the touch histogram counts %.0f touches of %.0f pages", i, sum, pages);
	/* each vCPU's touches tile its pass, which is at most the slowest's */
	CHECK_MSG(least <= pass_ns * jnum(rep, "postcopy/pass/vcpus") * (1 + 1e-6),
		  "rep %d: the touches take at least %g ns, the pass %g ns", i, least, pass_ns);
	p50 = jnum(rep, "postcopy/pass/touch_p50_ns");
	p99 = jnum(rep, "postcopy/pass/touch_p99_ns");
	top = jnum(rep, "postcopy/pass/touch_max_bucket_ns");
	CHECK_MSG(p50 <= p99 && p99 <= top && fabs(top - end) <= 1e-6 * end, "rep %d: p50 %g p99 %g top %g (end %g)", i, p50,
		  p99, top, end);
	printf("rep %d: touches p50 %.0f ns, p99 %.0f ns, all under %.0f ns; %.0f of %.0f took 1 us or more, in %zu buckets\n",
	       i, p50, p99, top, slow, pages, n);
}

/* A repetition whose pass ran over the whole region and found every page. */
static void check_pass(struct json_object *r, int i, const char *access, double chunk)
{
	char p[96];
	struct json_object *rep = jp(r, (snprintf(p, sizeof(p), "repetitions/%d", i), p));

	CHECK(!strcmp(jstr(rep, "state"), "completed"));
	CHECK(!strcmp(jstr(rep, "postcopy/status"), "completed"));
	CHECK(jnull(rep, "postcopy/error"));
	CHECK(!strcmp(jstr(rep, "postcopy/access"), access));
	CHECK(jnum(rep, "postcopy/chunk_bytes") == chunk);
	CHECK(jnum(rep, "postcopy/pass/ms") > 0);
	CHECK(jnum(rep, "postcopy/pass/vcpus") == 1);
	CHECK(jnum(rep, "postcopy/pass/pages") == 32768);
	CHECK(jnum(rep, "postcopy/pass/bytes") == 128 << 20);
	CHECK(jnum(rep, "postcopy/pass/mismatches") == 0);
	CHECK(jnull(rep, "postcopy/pass/first_mismatch"));
	check_touch_hist(rep, i);
	CHECK(jnum(rep, "postcopy/started_s") < jnum(rep, "postcopy/switchover_s"));
	CHECK(jnum(rep, "postcopy/switchover_s") <= jnum(rep, "postcopy/pass_started_s"));
	CHECK(jnum(rep, "windows/migration/metrics/fault_pass_ms") == jnum(rep, "postcopy/pass/ms"));
	CHECK(jnum(rep, "windows/migration/metrics/fault_mismatches") == 0);
	CHECK(jnum(rep, "windows/migration/metrics/postcopy_chunk_bytes") == chunk);
	/* the probes followed the guest to the destination where they run at all */
	if (jp(r, "probes/bpf.invalidations") && jtrue(r, "probes/bpf.invalidations/available"))
		CHECK(jtrue(rep, "postcopy/probes_on_destination"));
	printf("rep %d: pass %.1f ms over %.0f pages, %.0f postcopy requests, chunk %.0f B\n", i,
	       jnum(rep, "postcopy/pass/ms"), jnum(rep, "postcopy/pass/pages"), jnum(rep, "postcopy/postcopy_requests"),
	       chunk);
}

static void test_e2e(void)
{
	struct run_spec spec;
	char run_dir[PATH_MAX];
	struct runner_options opts = { .run_dir = run_dir };
	struct sb_error err = {};
	struct json_object *r;
	int k;

	snprintf(run_dir, sizeof(run_dir), "%s/20261201T000000Z-0c0e2e", test_tmpdir("postcopy-e2e"));
	postcopy_spec(&spec, "2");
	/*
	 * QEMU pushes the pages in address order, the order the pass touches
	 * them: unthrottled, the push stays ahead of the guest and it asks for
	 * almost nothing (0 to 40 requests here). At 64 MiB/s the guest
	 * outruns the push and asks for hundreds.
	 */
	CHECK(spec_set(&spec, "postcopy.background_bandwidth", "64M", NULL, &err) == 0);
	k = run_test_run("postcopy-e2e", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	CHECK(!strcmp(jstr(r, "state"), "completed"));
	CHECK(!strcmp(jstr(r, "spec/scenario"), "postcopy-restore"));
	CHECK(jnum(r, "arms/0/repetitions/completed") == 2);
	run_test_expect_shape("run-postcopy-e2e");
	for (int i = 0; i < 2; i++) {
		char p[96];
		check_pass(r, i, "read", 4096);
		CHECK(jnum(r, (snprintf(p, sizeof(p), "repetitions/%d/postcopy/postcopy_requests", i), p)) > 0);
	}
	CHECK(jnum(r, "arms/0/windows/migration/fault_pass_ms/n") == 2);
	if (snapbench_exe) {
		char out[PATH_MAX + 32], errp[PATH_MAX + 64], rp[PATH_MAX + 32];
		struct json_object *c;
		snprintf(rp, sizeof(rp), "%s/report.json", run_dir);
		snprintf(out, sizeof(out), "%s/compare.json", test_tmpdir("postcopy-compare"));
		snprintf(errp, sizeof(errp), "%s.err", out);
		char *argv[] = { (char *)snapbench_exe, "compare", "--aa", "label=default", "--json", rp, NULL };
		k = run_test_spawn(argv, out, errp);
		CHECK_MSG(k == 0, "snapbench compare exited %d: %s", k, run_test_read_file(errp));
		c = json_tokener_parse(run_test_read_file(out));
		CHECK(c);
		CHECK(!strcmp(jstr(c, "settings/windows/0"), "migration"));
		CHECK(!strcmp(jstr(c, "settings/metrics/0"), "fault_pass_ms"));
		CHECK(!strcmp(jstr(c, "settings/metrics/1"), "postcopy_chunk_bytes"));
		CHECK(!strcmp(jstr(c, "metrics/0/metric"), "fault_pass_ms"));
		json_object_put(c);
	}
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void test_write(void)
{
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;
	int k;

	postcopy_spec(&spec, "1");
	CHECK(spec_set(&spec, "postcopy.access", "write", NULL, &err) == 0);
	k = run_test_run("postcopy-write", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	check_pass(r, 0, "write", 4096);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void hugetlb_spec(struct run_spec *spec, const char *pages)
{
	struct sb_error err = {};
	char knob[64];

	postcopy_spec(spec, "1");
	snprintf(knob, sizeof(knob), "sysctl:vm.nr_hugepages=%s", pages);
	CHECK(spec_set(spec, "vm.backing", "hugetlb", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.hugepage_size", "2M", NULL, &err) == 0);
	CHECK(spec_set(spec, "knobs", knob, NULL, &err) == 0);
	CHECK_MSG(spec_validate(spec, &err) == 0, "%s", err.msg);
}

static void test_hugetlb(void)
{
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;
	int k;

	char run_2m[PATH_MAX], run_4k[PATH_MAX];
	struct runner_options o4k = { .run_dir = run_4k };

	opts.run_dir = run_2m;
	snprintf(run_2m, sizeof(run_2m), "%s/20261201T000000Z-0c2000", test_tmpdir("postcopy-hugetlb"));
	hugetlb_spec(&spec, "300"); /* 128 pages each for the source and the destination */
	k = run_test_run("postcopy-hugetlb", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	check_pass(r, 0, "read", 2 << 20);
	CHECK(!strcmp(jstr(r, "repetitions/0/postcopy/backing"), "hugetlb"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);

	/* a 4 KiB run beside it: compare names the chunk sizes, 4 KiB against 2 MiB */
	snprintf(run_4k, sizeof(run_4k), "%s/20261201T000000Z-0c0004", test_tmpdir("postcopy-4k"));
	postcopy_spec(&spec, "1");
	k = run_test_run("postcopy-4k", &spec, &o4k, &r, &err);
	CHECK_MSG(k == 0, "the 4 KiB run failed: %s", err.msg);
	json_object_put(r);
	spec_done(&spec);
	if (snapbench_exe) {
		char out[PATH_MAX + 32], errp[PATH_MAX + 64], r4[PATH_MAX + 32], r2[PATH_MAX + 32];
		struct json_object *c, *chunk = NULL;

		snprintf(r4, sizeof(r4), "%s/report.json", run_4k);
		snprintf(r2, sizeof(r2), "%s/report.json", run_2m);
		snprintf(out, sizeof(out), "%s/compare.json", test_tmpdir("postcopy-chunks"));
		snprintf(errp, sizeof(errp), "%s.err", out);
		char *argv[] = { (char *)snapbench_exe, "compare", "--json", r4, r2, NULL };
		k = run_test_spawn(argv, out, errp);
		CHECK_MSG(k == 0 || k == 3, "snapbench compare exited %d: %s", k, run_test_read_file(errp));
		c = json_tokener_parse(run_test_read_file(out));
		CHECK(c);
		CHECK(!strcmp(jstr(c, "settings/metrics/0"), "fault_pass_ms"));
		for (size_t i = 0; i < json_object_array_length(jget(c, "metrics")); i++) {
			struct json_object *m = json_object_array_get_idx(jget(c, "metrics"), i);
			if (!strcmp(jstr(m, "metric"), "postcopy_chunk_bytes"))
				chunk = m;
		}
		CHECK_MSG(chunk, "compare has no postcopy_chunk_bytes row");
		CHECK_MSG(jnum(chunk, "baseline/median") == 4096 && jnum(chunk, "patched/median") == 2 << 20,
			  "chunk sizes %g vs %g", jnum(chunk, "baseline/median"), jnum(chunk, "patched/median"));
		printf("compare: chunk %g B vs %g B, fault_pass_ms %g vs %g\n", jnum(chunk, "baseline/median"),
		       jnum(chunk, "patched/median"), jnum(c, "metrics/0/baseline/median"), jnum(c, "metrics/0/patched/median"));
		json_object_put(c);
	}
}

static void test_no_hugepages(void)
{
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;

	hugetlb_spec(&spec, "150"); /* the source's 128, not the destination's */
	CHECK(run_test_run("postcopy-no-hugepages", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 prepare"));
	printf("error: %s\n", jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "destination QEMU did not start"));
	CHECK(strstr(jstr(r, "repetitions/0/postcopy/error"), "destination"));
	CHECK(jnull(r, "repetitions/0/postcopy/pass"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void test_dest_fails(void)
{
	struct run_spec spec;
	struct runner_options opts = { .dest_qemu_binary = "/bin/false" };
	struct sb_error err = {};
	struct json_object *r;

	postcopy_spec(&spec, "2");
	CHECK(run_test_run("postcopy-dest-fails", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(json_object_array_length(jp(r, "repetitions")) == 1); /* the next would fail alike: the run stopped */
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 prepare"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "/bin/false"));
	CHECK(strstr(jstr(r, "repetitions/0/postcopy/error"), "destination QEMU did not start"));
	CHECK(!strcmp(jstr(r, "repetitions/0/postcopy/status"), "not-started"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

#define UFFD_SYSCTL "/proc/sys/vm/unprivileged_userfaultfd"
static long uffd_original = -1;

static void restore_uffd(void)
{
	run_test_restore_sysctl(UFFD_SYSCTL, uffd_original);
}

static void test_uffd_refused(void)
{
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;

	if (access(UFFD_SYSCTL, F_OK) < 0)
		SKIP_TEST("%s", UFFD_SYSCTL);
	uffd_original = run_test_sysctl_locked(UFFD_SYSCTL);
	CHECK(uffd_original >= 0);
	test_at_exit(restore_uffd);

	postcopy_spec(&spec, "2");
	CHECK(spec_set(&spec, "vm.user", "nobody", NULL, &err) == 0);
	CHECK(spec_set(&spec, "knobs", "sysctl:vm.unprivileged_userfaultfd=0", NULL, &err) == 0);
	CHECK(run_test_run("postcopy-uffd-refused", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "error/phase"), "preflight"));
	CHECK_MSG(strstr(jstr(r, "error/message"), "postcopy needs userfaultfd") &&
			  strstr(jstr(r, "error/message"), "sysctl:vm.unprivileged_userfaultfd=1"),
		  "%s", jstr(r, "error/message"));
	json_object_put(r);

	opts = (struct runner_options){ .skip_preflight = true };
	CHECK(run_test_run("postcopy-uffd-refused-nopf", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(json_object_array_length(jp(r, "repetitions")) == 1); /* the run stopped: it would fail alike */
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 prepare"));
	printf("uffd-refused: %s\n", jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "postcopy refused"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "sysctl:vm.unprivileged_userfaultfd=1"));
	CHECK(strstr(jstr(r, "repetitions/0/postcopy/error"), "postcopy refused"));
	CHECK(jnull(r, "repetitions/0/postcopy/pass"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
	CHECK(run_test_sysctl_locked(UFFD_SYSCTL) == uffd_original);
}

/* RUN_DIR holds no mig-* socket directory: the destination's went with it */
static void expect_no_socket_dir(const char *run_dir)
{
	DIR *d = opendir(run_dir);
	struct dirent *e;

	CHECK(d);
	while ((e = readdir(d)))
		CHECK_MSG(strncmp(e->d_name, "mig-", 4), "%s/%s is left behind", run_dir, e->d_name);
	closedir(d);
}

static int qemu_major(struct json_object *r)
{
	const char *v = jstr(r, "host/qemu/version");

	CHECK_MSG(v, "the report names no QEMU version");
	return atoi(v);
}

/*
 * postcopy-preempt over a unix socket (an fd is one connection; preempt
 * opens a second): QEMU 8.0 and later complete it, 7.x is refused in
 * preflight, naming the feature and the release that fixed it.
 */
static void test_preempt(void)
{
	struct run_spec spec;
	char run_dir[PATH_MAX];
	struct runner_options opts = { .run_dir = run_dir };
	struct sb_error err = {};
	struct json_object *r;
	uint64_t t0 = mono_ns();
	int k;

	snprintf(run_dir, sizeof(run_dir), "%s/run", test_tmpdir("postcopy-preempt"));
	postcopy_spec(&spec, "2");
	CHECK(spec_set(&spec, "postcopy.preempt", "true", NULL, &err) == 0);
	/* the guest outruns the throttled push: its requests are what preempt serves first */
	CHECK(spec_set(&spec, "postcopy.background_bandwidth", "64M", NULL, &err) == 0);
	k = run_test_run("postcopy-preempt", &spec, &opts, &r, &err);
	if (qemu_major(r) < 8) {
		printf("preflight: %s\n", err.msg);
		CHECK(k < 0);
		CHECK(!strcmp(jstr(r, "state"), "failed"));
		CHECK(!strcmp(jstr(r, "error/phase"), "preflight"));
		CHECK(json_object_array_length(jp(r, "repetitions")) == 0);
		CHECK_MSG(strstr(err.msg, "postcopy-preempt") && strstr(err.msg, "QEMU 8.0 or later") &&
				  strstr(err.msg, "spec.postcopy.preempt") && strstr(err.msg, jstr(r, "host/qemu/version")),
			  "%s", err.msg);
		/* the capability is there: the refusal is for its 7.x form */
		CHECK(strv_json_has(jp(r, "host/qemu/features"), "postcopy-preempt"));
	} else {
		CHECK_MSG(k == 0, "the run failed: %s", err.msg);
		CHECK(!strcmp(jstr(r, "state"), "completed"));
		CHECK(strv_json_has(jp(r, "host/qemu/features"), "postcopy-preempt"));
		for (int i = 0; i < 2; i++) {
			char p[96];

			check_pass(r, i, "read", 4096);
			CHECK(jtrue(r, (snprintf(p, sizeof(p), "repetitions/%d/postcopy/preempt", i), p)));
			CHECK(jnum(r, (snprintf(p, sizeof(p), "repetitions/%d/postcopy/postcopy_requests", i), p)) > 0);
		}
		printf("preempt: 2 repetitions completed in %.1f s\n", (double)(mono_ns() - t0) / 1e9);
	}
	expect_no_socket_dir(run_dir);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "e2e", test_e2e },
		{ "write", test_write },
		{ "hugetlb", test_hugetlb },
		{ "dest-fails", test_dest_fails },
		{ "no-hugepages", test_no_hugepages },
		{ "uffd-refused", test_uffd_refused },
		{ "preempt", test_preempt },
	};

	run_test_init(argc, argv);
	run_test_require_root();
	snapbench_exe = argc > 4 ? argv[4] : NULL;
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 3 ? argv[3] : NULL);
	return 0;
}
