// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dirty-log scenario for real: a precopy migration of the micro guest
 * to a destination QEMU on this host, held in its passes. Every report
 * validates (validate-report.py also checks that the passes' counters sum
 * to the migration window's). Cases:
 *
 *   e2e             2 repetitions of a 256 MiB guest writing its region:
 *                   each has at least 3 passes with durations and dirty
 *                   pages, the per-pass figures sum to the window's, the
 *                   migration was cancelled as asked, clear-log time is
 *                   unavailable with the reason where fentry is refused (or
 *                   measured where it is not), nothing is left behind
 *   complete        completion "complete": the migration completes, the
 *                   source is resumed and the post window sees the guest run
 *   ring            KVM's dirty ring (-accel kvm,dirty-ring-size=N) on both
 *                   QEMUs: the passes go on as with the bitmap
 *   dest-fails      the destination QEMU does not start: the repetition
 *                   fails in prepare with QEMU's words, the run stops, no
 *                   QEMU is left
 *   migration-fails the destination is killed mid-migration: the repetition
 *                   fails with the migration's error and the destination's
 *                   end, no QEMU is left
 *
 * argv[3] (optional) runs one case only; argv[4] is snapbench, for
 * `snapbench compare` of the e2e report (its defaults for dirty-log runs).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "macro.h"
#include "run-test.h"
#include "runner.h"
#include "spec.h"
#include "test-accel.h"

static const char *snapbench_exe;

static void dirty_spec(struct run_spec *spec, const char *reps, const char *iterate_s)
{
	struct sb_error err = {};

	run_test_spec_init(spec);
	CHECK(spec_set(spec, "scenario", "dirty-log", NULL, &err) == 0);
	CHECK(spec_set(spec, "repetitions", reps, NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.memory", "256M", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.vcpus", "2", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.pattern", "rand-set", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.region", "64M", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.probe.vcpu", "0", NULL, &err) == 0);
	CHECK(spec_set(spec, "dirty_log.iterate_s", iterate_s, NULL, &err) == 0);
	CHECK(spec_set(spec, "dirty_log.max_bandwidth", "64M", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.warmup_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.pre_s", "2", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.post_s", "2", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.interval_ms", "250", NULL, &err) == 0);
	CHECK_MSG(spec_validate(spec, &err) == 0, "%s", err.msg);
}

static double migration_window_sum(struct json_object *rep, const char *counter)
{
	struct json_object *tl = jp(rep, "timeline");
	double sum = 0;

	for (size_t i = 0; i < json_object_array_length(tl); i++) {
		struct json_object *row = json_object_array_get_idx(tl, i), *v;
		if (strcmp(jstr(row, "window"), "migration"))
			continue;
		if (json_object_object_get_ex(jp(row, "counters"), counter, &v))
			sum += json_object_get_double(v);
	}
	return sum;
}

/* Prints the passes and checks what every completed repetition must show. */
static void check_passes(struct json_object *r, int i, size_t min_passes)
{
	char p[96];
	struct json_object *rep = jp(r, (snprintf(p, sizeof(p), "repetitions/%d", i), p));
	struct json_object *its = jp(rep, "migration/iterations");
	size_t n = json_object_array_length(its), with_dirty = 0;
	double dur = 0, flushes = 0, pf = 0;
	bool kvm = run_test_kvm_counted(r); /* TCG: no KVM counters per pass (hostvm-dirty-log has them) */

	CHECK(rep && its);
	CHECK_MSG(!strcmp(jstr(rep, "state"), "completed"), "rep %d %s: %s", i, jstr(rep, "state"),
		  jstr(rep, "error/message"));
	printf("rep %d: %zu passes in %.2f s of migration window (status %s)\n", i, n,
	       jnum(rep, "windows/migration/duration_s"), jstr(rep, "migration/status"));
	for (size_t k = 0; k < n; k++) {
		struct json_object *it = json_object_array_get_idx(its, k);
		printf("  pass %.0f: %.2f s, %s, sent %.0f pages, dirtied %s", jnum(it, "pass"), jnum(it, "duration_s"),
		       json_object_get_boolean(jp(it, "complete")) ? "complete" : "cut", jnum(it, "pages_sent"),
		       jnull(it, "dirty_pages") ? "?" : json_object_to_json_string(jp(it, "dirty_pages")));
		if (kvm)
			printf(", remote_tlb_flush %.0f, pf_taken %.0f, pf_fast %.0f", jnum(it, "counters/kvm.remote_tlb_flush"),
			       jnum(it, "counters/kvm.pf_taken"), jnum(it, "counters/kvm.pf_fast"));
		printf("\n");
		CHECK(jnum(it, "duration_s") > 0);
		CHECK(k == 0 || jnum(it, "pass") > jnum(json_object_array_get_idx(its, k - 1), "pass"));
		/* 0 is possible: a completion's last pass may find nothing left to send */
		if (!jnull(it, "dirty_pages") && jnum(it, "dirty_pages") > 0)
			with_dirty++;
		dur += jnum(it, "duration_s");
		if (kvm) {
			flushes += jnum(it, "counters/kvm.remote_tlb_flush");
			pf += jnum(it, "counters/kvm.pf_taken");
		}
	}
	CHECK_MSG(n >= min_passes, "rep %d: %zu passes, expected at least %zu", i, n, min_passes);
	CHECK_MSG(with_dirty >= min_passes - 1, "rep %d: only %zu passes know their dirty pages", i, with_dirty);
	/* the bulk pass sends all of RAM (zero pages as duplicates) */
	CHECK(jnum(its, "0/pages_sent") >= 65536 * 0.9);
	/* the passes sum to the window */
	CHECK(fabs(dur - jnum(rep, "windows/migration/duration_s")) < 1e-6 * (dur + 1));
	if (kvm) {
		CHECK(flushes == migration_window_sum(rep, "kvm.remote_tlb_flush"));
		CHECK(pf == migration_window_sum(rep, "kvm.pf_taken"));
	}
	CHECK(jnum(rep, "windows/migration/metrics/iterations") == (double)n);
	CHECK(jnum(rep, "windows/migration/metrics/dirty_pages_per_s") > 0);
	CHECK(jnum(rep, "windows/migration/metrics/guest_ops_per_s") > 0);
	CHECK_MSG(jnum(rep, "windows/post/metrics/guest_ops_per_s") > 0, "post window: %s",
		  json_object_to_json_string(jp(rep, "windows/post")));
	CHECK(jnum(rep, "migration/destination/pid") > 0);
	CHECK(jnum(rep, "migration/iterating_s") >= jnum(r, "spec/dirty_log/iterate_s") - 0.01);
}

/* clear-log time: unavailable with the probe's reason, or measured */
static void check_clear_log(struct json_object *r, int i)
{
	char p[96];
	struct json_object *rep = jp(r, (snprintf(p, sizeof(p), "repetitions/%d", i), p));

	if (json_object_get_boolean(jp(r, "probes/bpf.clear_dirty_log_ns/available"))) {
		printf("rep %d: clear-log %.0f ns per pass, %.0f calls in the window\n", i,
		       jnum(rep, "windows/migration/metrics/clear_log_ns_per_iteration"),
		       migration_window_sum(rep, "bpf.clear_dirty_log"));
		CHECK(migration_window_sum(rep, "bpf.clear_dirty_log") + migration_window_sum(rep, "bpf.get_dirty_log") > 0);
		CHECK(jnum(rep, "windows/migration/metrics/clear_log_ns_per_iteration") > 0);
	} else {
		const char *why = jstr(rep, "windows/migration/unavailable/clear_log_ns_per_iteration");
		printf("rep %d: clear-log time unavailable: %s\n", i, why ? why : "(no reason!)");
		CHECK(jnull(rep, "windows/migration/metrics/clear_log_ns_per_iteration"));
		CHECK(why && *why);
		CHECK(!strcmp(why, jstr(r, "probes/bpf.clear_dirty_log_ns/reason")));
	}
}

static void test_e2e(void)
{
	struct run_spec spec;
	char run_dir[PATH_MAX];
	struct runner_options opts = { .run_dir = run_dir };
	struct sb_error err = {};
	struct json_object *r;
	int k;

	snprintf(run_dir, sizeof(run_dir), "%s/20261201T000000Z-d1e2e0", test_tmpdir("dirty-log-e2e"));
	dirty_spec(&spec, "2", "12");
	k = run_test_run("dirty-log-e2e", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	CHECK(!strcmp(jstr(r, "state"), "completed"));
	CHECK(!strcmp(jstr(r, "spec/scenario"), "dirty-log"));
	CHECK(jnum(r, "arms/0/repetitions/completed") == 2);
	for (int i = 0; i < 2; i++) {
		char p[96];
		struct json_object *rep = jp(r, (snprintf(p, sizeof(p), "repetitions/%d", i), p));
		check_passes(r, i, 3);
		check_clear_log(r, i);
		CHECK(!strcmp(jstr(rep, "migration/status"), "cancelled"));
		CHECK(!strcmp(jstr(rep, "migration/completion"), "cancel"));
		CHECK(jnull(rep, "migration/error"));
		CHECK(!strcmp(jstr(rep, "snapshot/status"), "not-started"));
		CHECK(!jp(rep, "windows/snapshot"));
	}
	CHECK(jnum(r, "arms/0/windows/migration/iterations/n") == 2);
	/* compare's defaults for a dirty-log run: the migration window, led by the seed's figures */
	if (snapbench_exe) {
		char out[PATH_MAX + 32], errp[PATH_MAX + 64], rp[PATH_MAX + 32];
		struct json_object *c;
		snprintf(rp, sizeof(rp), "%s/report.json", run_dir);
		snprintf(out, sizeof(out), "%s/compare.json", test_tmpdir("dirty-log-compare"));
		snprintf(errp, sizeof(errp), "%s.err", out);
		char *argv[] = { (char *)snapbench_exe, "compare", "--aa", "label=default", "--json", rp, NULL };
		k = run_test_spawn(argv, out, errp);
		CHECK_MSG(k == 0, "snapbench compare exited %d: %s", k, run_test_read_file(errp));
		c = json_tokener_parse(run_test_read_file(out));
		CHECK(c);
		CHECK(!strcmp(jstr(c, "settings/windows/0"), "migration"));
		CHECK(!strcmp(jstr(c, "settings/metrics/0"), "clear_log_ns_per_iteration"));
		CHECK(!strcmp(jstr(c, "settings/metrics/1"), "tlb_per_iteration"));
		CHECK(!strcmp(jstr(c, "metrics/0/window"), "migration"));
		printf("compare --aa: %zu metrics, the first %s\n", json_object_array_length(jp(c, "metrics")),
		       jstr(c, "metrics/0/metric"));
		json_object_put(c);
	}
	CHECK(jnum(r, "arms/0/windows/migration/dirty_pages_per_s/n") == 2);
	CHECK(jnum(r, "arms/0/windows/migration/guest_ops_per_s/n") == 2);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void test_complete(void)
{
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;
	int k;

	dirty_spec(&spec, "1", "8");
	CHECK(spec_set(&spec, "dirty_log.completion", "complete", NULL, &err) == 0);
	k = run_test_run("dirty-log-complete", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	check_passes(r, 0, 2);
	CHECK(!strcmp(jstr(r, "repetitions/0/migration/status"), "completed"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void test_ring(void)
{
	struct run_spec spec;
	struct runner_options opts = {};
	struct sb_error err = {};
	struct json_object *r;
	bool accel = false;
	int k;

	/* 10 s: without /dev/kvm this runs in a TCG host VM (realkvm-run-dirty-log-ring), whose bulk pass took 7 s */
	dirty_spec(&spec, "1", "10");
	CHECK(spec_set(&spec, "dirty_log.tracking", "ring", NULL, &err) == 0);
	CHECK(spec_set(&spec, "dirty_log.ring_size", "4096", NULL, &err) == 0);
	if (!test_kvm()) {
		/* the ring is KVM's: under TCG the spec is refused before anything starts (realkvm-run-dirty-log-ring runs it) */
		CHECK(spec_validate(&spec, &err) < 0);
		CHECK_MSG(strstr(err.msg, "the dirty ring is KVM's"), "%s", err.msg);
		printf("TCG: %s\n", err.msg);
		spec_done(&spec);
		return;
	}
	k = run_test_run("dirty-log-ring", &spec, &opts, &r, &err);
	CHECK_MSG(k == 0, "the run failed: %s", err.msg);
	check_passes(r, 0, 2); /* the bulk pass and one from the ring at least */
	for (size_t i = 0; i < json_object_array_length(jp(r, "repetitions/0/vm/argv")); i++)
		accel |= !strcmp(json_object_get_string(json_object_array_get_idx(jp(r, "repetitions/0/vm/argv"), i)),
				 "kvm,dirty-ring-size=4096");
	CHECK(accel);
	CHECK(!strcmp(jstr(r, "repetitions/0/migration/tracking"), "ring"));
	CHECK(jnum(r, "repetitions/0/migration/ring_size") == 4096);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void test_dest_fails(void)
{
	struct run_spec spec;
	/* a QEMU that exits at once: what a broken destination build or a refused option looks like */
	struct runner_options opts = { .dest_qemu_binary = "/bin/false" };
	struct sb_error err = {};
	struct json_object *r;

	dirty_spec(&spec, "2", "5");
	CHECK(run_test_run("dirty-log-dest-fails", &spec, &opts, &r, &err) < 0);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(json_object_array_length(jp(r, "repetitions")) == 1); /* the next would fail alike: the run stopped */
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 prepare"));
	printf("error: %s\n", jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "destination QEMU did not start"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "/bin/false"));
	CHECK(strstr(jstr(r, "repetitions/0/migration/error"), "destination"));
	CHECK(strstr(jstr(r, "error/message"), "the next repetitions would fail the same way"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static const char *kill_run_dir;
static bool killed;
static unsigned migration_samples;

static void kill_dest(const struct runner_progress *p, void *userdata)
{
	char path[PATH_MAX];
	long pid;
	FILE *f;

	(void)userdata;
	/* a few samples into the migration: in its passes, not in its setup */
	if (killed || strcmp(p->step, "migration") || !p->sample_window || strcmp(p->sample_window, "migration") ||
	    ++migration_samples < 8)
		return;
	snprintf(path, sizeof(path), "%s/qemu-dest.pid", kill_run_dir);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fscanf(f, "%ld", &pid) == 1 && pid > 1) {
		printf("killing the destination QEMU, pid %ld\n", pid);
		killed = kill((pid_t)pid, SIGKILL) == 0;
	}
	fclose(f);
}

static void test_migration_fails(void)
{
	struct run_spec spec;
	char run_dir[PATH_MAX];
	struct runner_options opts = { .progress = kill_dest };
	struct sb_error err = {};
	struct json_object *r;

	snprintf(run_dir, sizeof(run_dir), "%s/20261201T000000Z-d10c11", test_tmpdir("dirty-log-kill"));
	kill_run_dir = run_dir;
	opts.run_dir = run_dir;
	dirty_spec(&spec, "1", "20");
	CHECK(run_test_run("dirty-log-migration-fails", &spec, &opts, &r, &err) < 0);
	CHECK(killed);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/state"), "failed"));
	CHECK(!strcmp(jstr(r, "repetitions/0/error/phase"), "rep 0 migration"));
	run_test_expect_shape("run-dirty-log-migration-fails");
	printf("error: %s\n", jstr(r, "repetitions/0/error/message"));
	CHECK(strstr(jstr(r, "repetitions/0/error/message"), "destination") ||
	      strstr(jstr(r, "repetitions/0/error/message"), "migration failed"));
	CHECK(jstr(r, "repetitions/0/migration/destination/exit"));
	CHECK(strstr(jstr(r, "repetitions/0/migration/destination/exit"), "signal 9"));
	/* what the window measured before the failure is kept */
	CHECK(json_object_array_length(jp(r, "repetitions/0/migration/iterations")) >= 1);
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "e2e", test_e2e },
		{ "complete", test_complete },
		{ "ring", test_ring },
		{ "dest-fails", test_dest_fails },
		{ "migration-fails", test_migration_fails },
	};

	run_test_init(argc, argv);
	run_test_require_root();
	snapbench_exe = argc > 4 ? argv[4] : NULL;
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 3 ? argv[3] : NULL);
	return 0;
}
