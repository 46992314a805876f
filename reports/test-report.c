// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The report model: window summaries (rates, percentiles, unavailable
 * metrics), arm statistics, timeline totals, ids and times, and reading a
 * report back. When a schema path is given (argv[1], argv[2] = validator),
 * the written report is also validated against the JSON Schema.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fileio.h"
#include "json-util.h"
#include "macro.h"
#include "report.h"
#include "test-json.h"
#include "test-tmp.h"
#include "test-validate.h"

static const char full_spec[] =
	"{\"scenario\": \"background-snapshot\", \"repetitions\": 3,"
	" \"vm\": {\"backend\": \"qemu\", \"memory\": 268435456, \"vcpus\": 2, \"machine\": \"pc\","
	"  \"cpu\": null, \"backing\": \"anon\", \"hugepage_size\": null, \"prealloc\": false, \"user\": null,"
	"  \"extra_args\": []},"
	" \"guest\": {\"kind\": \"micro\", \"pattern\": \"write64\", \"vcpu_patterns\": {}, \"region\": \"50%\","
	"  \"page_size\": \"4k\", \"probe\": {\"vcpu\": 0, \"gap_us\": 100}, \"seed\": 1, \"clock\": \"auto\","
	"  \"telemetry_interval_ms\": 100},"
	" \"snapshot\": {\"sink\": \"null\", \"keep\": false, \"max_bandwidth\": null, \"timeout_s\": 60},"
	" \"timing\": {\"warmup_s\": 1, \"pre_s\": 2, \"post_s\": 2, \"interval_ms\": 1000},"
	" \"bpf\": {\"enabled\": true}, \"knobs\": {},"
	" \"arms\": [{\"label\": \"stock\", \"knobs\": {\"sysctl:kernel.numa_balancing\": \"0\"}}]}";

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-6 * (fabs(a) + fabs(b) + 1);
}

static void test_percentile(void)
{
	double lo[] = { 100, 200, 300, 400 }, wi[] = { 100, 100, 100, 100 };
	struct report_hist_layout l = { 4, lo, wi };
	uint64_t c[] = { 50, 49, 0, 1 }, z[] = { 0, 0, 0, 0 };

	/* p50: target 50 of 100 -> end of bucket 0 */
	CHECK(near(report_hist_percentile(&l, c, 0.5), 200));
	/* p25: halfway through bucket 0 */
	CHECK(near(report_hist_percentile(&l, c, 0.25), 150));
	/* p99: target 99 -> end of bucket 1 */
	CHECK(near(report_hist_percentile(&l, c, 0.99), 300));
	/* p99.9: target 99.9 -> inside bucket 3 */
	CHECK(near(report_hist_percentile(&l, c, 0.999), 490));
	CHECK(near(report_hist_percentile(&l, c, 1.0), 500));
	CHECK(isnan(report_hist_percentile(&l, z, 0.5)));
}

/* The kernel's own letters (kernel/panic.c), one per set bit, in bit order. */
static void test_taint_flags(void)
{
	char buf[REPORT_TAINT_FLAGS_LEN];

	CHECK(!strcmp(report_taint_flags(0, buf), ""));
	CHECK(!strcmp(report_taint_flags(512, buf), "W"));
	CHECK(!strcmp(report_taint_flags(512 | 128 | 16384, buf), "DWL"));
	CHECK(!strcmp(report_taint_flags(8192 | 4096, buf), "OE"));
	CHECK(!strcmp(report_taint_flags(1LL << 18, buf), "N"));
	CHECK(!strcmp(report_taint_flags(1LL << 19 | 1, buf), "P?"));
	CHECK(strlen(report_taint_flags(INT64_MAX, buf)) == 63);
	CHECK(!strncmp(buf, "PFSRMBUDAWCIOELKXTN?", 20) && buf[62] == '?');
}

static void test_ids(void)
{
	char id[REPORT_ID_MAX], t[32];

	/* 2026-11-30T03:45:12Z */
	report_make_id(1796010312ULL * 1000000000ULL, 0x3f9c2a, id);
	CHECK_MSG(!strcmp(id, "20261130T034512Z-3f9c2a"), "%s", id);
	CHECK(report_id_valid(id));
	CHECK(!report_id_valid("20261130T034512Z-3f9c2"));
	CHECK(!report_id_valid("../../etc/passwd"));
	CHECK(!report_id_valid("20261130T034512Z-3F9C2A"));
	CHECK(!report_id_valid(NULL));
	report_format_time(1796010312ULL * 1000000000ULL + 999, t);
	CHECK_MSG(!strcmp(t, "2026-11-30T03:45:12Z"), "%s", t);
}

/* One repetition: 1 warmup row, 2 pre, 2 snapshot, 2 post rows of 1 s. */
static void fill_rep(struct report *r, struct report_rep *rep, uint64_t pf_snap, bool complete)
{
	static const double lo[] = { 256, 320, 384 }, wi[] = { 64, 64, 64 };
	static const enum report_window wins[] = { REPORT_WINDOW_WARMUP, REPORT_WINDOW_PRE, REPORT_WINDOW_PRE,
						   REPORT_WINDOW_SNAPSHOT, REPORT_WINDOW_SNAPSHOT,
						   REPORT_WINDOW_POST, REPORT_WINDOW_POST };
	struct report_row *row;

	CHECK(report_rep_set_hist_layout(rep, 3, lo, wi) == 0);
	rep->memory_bytes = 256u << 20;
	rep->vcpus = 2;
	rep->pid = 4242;
	CHECK(report_error_set(&rep->error, NULL, NULL) == 0);
	for (size_t i = 0; i < 7; i++) {
		bool snap = wins[i] == REPORT_WINDOW_SNAPSHOT;
		CHECK(report_rep_append_row(rep, 1.0 + (double)i, 1.0, wins[i], &row) == 0);
		CHECK(report_row_set(rep, row, "kvm.pf_taken", snap ? pf_snap : 2) == 0);
		CHECK(report_row_set(rep, row, "bpf.invalidations", snap ? 1000 : 0) == 0);
		/* a cause counter that shows up only from the snapshot on */
		if (snap || i > 4)
			CHECK(report_row_set(rep, row, "bpf.invalidations.uffd-wp", snap ? 990 : 0) == 0);
		CHECK(report_row_set(rep, row, "guest.ops", 100) == 0);
		/* the fentry probe's invalidations by cause, event and flag, seen from the snapshot on */
		if (snap || i > 4) {
			CHECK(report_row_set(rep, row, "bpf.mn_invalidate.uffd-wp.event.protection_vma", snap ? 990 : 0) == 0);
			CHECK(report_row_set(rep, row, "bpf.mn_invalidate.uffd-wp.flag.perm_upgrade", snap ? 495 : 0) == 0);
		}
		if (wins[i] != REPORT_WINDOW_WARMUP) {
			CHECK(report_row_add_hist(rep, row, 0, 98) == 0);
			CHECK(report_row_add_hist(rep, row, 2, 1) == 0);
			CHECK(report_row_add_hist(rep, row, 2, 1) == 0); /* merges */
			CHECK(report_row_add_hist(rep, row, 1, 1) == -EINVAL); /* out of order */
			CHECK(report_row_add_hist(rep, row, 3, 1) == -ERANGE);
		}
		if (snap) {
			row->has_migration = true;
			snprintf(row->migration.status, sizeof(row->migration.status), "%s",
				 i == 4 ? "completed" : "active");
			row->migration.transferred = i == 4 ? 268435456 : 1000;
			row->migration.pages_per_s = 32768;
			row->migration.dirty_pages_rate = -1;
		}
	}
	rep->snapshot.status = complete ? REPORT_SNAPSHOT_COMPLETED : REPORT_SNAPSHOT_FAILED;
	rep->snapshot.started_s = 3;
	rep->snapshot.duration_s = 2;
	rep->snapshot.pages = 65536;
	rep->snapshot.bytes = 268435456;
	rep->state = complete ? REPORT_REP_COMPLETED : REPORT_REP_FAILED;
	if (!complete)
		CHECK(report_error_set(&rep->error, "rep 2 snapshot", "QEMU died") == 0);
	rep->finished_ns = rep->started_ns + 7000000000ULL;
	(void)r;
}

static void test_report(const char *validator, const char *schema)
{
	_cleanup_report_ struct report *r = NULL;
	struct report_rep *rep;
	struct json_object *j = NULL, *back = NULL, *v;
	struct sb_error err = {};
	const char *dir;
	char path[300];
	int arm;

	CHECK(report_new("20261130T034512Z-3f9c2a", 1796010312ULL * 1000000000ULL, &r) == 0);
	r->started_ns = r->created_ns;
	report_set_spec(r, json_tokener_parse(full_spec));
	CHECK(r->spec);
	CHECK(report_set_probe(r, "kvm.pf_taken", true, "query-stats vcpu pf_taken (summed)", "qmp", NULL) == 0);
	CHECK(report_set_probe(r, "kvm.remote_tlb_flush", false, NULL, NULL, "KVM does not export it") == 0);
	CHECK(report_set_probe(r, "bpf.invalidations", true, "kvm:kvm_unmap_hva_range", "tp_btf", NULL) == 0);
	CHECK(report_set_probe(r, "guest.ops", true, "micro guest telemetry", "guest", NULL) == 0);
	CHECK(report_set_probe(r, "guest.probe_reads", true, "micro guest telemetry", "guest", NULL) == 0);
	CHECK(report_set_probe(r, "bad", false, NULL, NULL, NULL) == -EINVAL);
	/* the self-check's mark (selfcheck.h), written and valid against the schema */
	((struct report_probe *)report_find_probe(r, "bpf.invalidations"))->partial =
		strdup("repetition 1: bpf.invalidations counted 9 of the 10 invalidations");
	arm = report_add_arm(r, "stock", json_tokener_parse("{\"sysctl:kernel.numa_balancing\": \"0\"}"), 3);
	CHECK(arm == 0);

	/* three repetitions: two complete (pf 10/s and 30/s in the snapshot), one failed */
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	fill_rep(r, rep, 10, true);
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	fill_rep(r, rep, 30, true);
	rep->snapshot.throttle_rate = 8 << 20; /* spec.snapshot.max_bandwidth, applied by the sink */
	rep->snapshot.throttle_burst = 419430;
	rep->snapshot.throttle_bytes = 268500000;
	rep->snapshot.throttle_waited_s = 1.5;
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	fill_rep(r, rep, 1000, false);
	CHECK(report_add_rep(r, 7, r->created_ns, &rep) == -EINVAL);

	r->usage.set = true;
	r->usage.cpu_user_s = 0.25;
	r->usage.wall_s = 10;
	r->usage.samples = 21;
	r->usage.cpu_system_s = 0.5;
	r->usage.cpu_s[REPORT_CPU_BPF_LOAD] = 0.25;
	r->usage.cpu_s[REPORT_CPU_SAMPLE_KVM] = 0.125;
	r->usage.wakeups = 100;
	CHECK(report_to_json(r, &j, &err) == 0);
	CHECK(near(jnum(j, "runner/samples"), 21) && near(jnum(j, "runner/cpu_user_s"), 0.25));
	/* the split, and the rest of user + system as other_s */
	CHECK(near(jnum(j, "runner/cpu/bpf_load_s"), 0.25) && near(jnum(j, "runner/cpu/sample_kvm_s"), 0.125));
	CHECK(near(jnum(j, "runner/cpu/report_s"), 0) && near(jnum(j, "runner/cpu/other_s"), 0.375));
	CHECK(near(jnum(j, "runner/wakeups"), 100) && near(jnum(j, "runner/telemetry_reads"), 0));

	/* per-window summaries */
	CHECK(near(jnum(j, "repetitions/0/windows/pre/duration_s"), 2));
	CHECK(near(jnum(j, "repetitions/0/windows/pre/start_s"), 1));
	CHECK(near(jnum(j, "repetitions/0/windows/pre/metrics/pf_per_s"), 2));
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/pf_per_s"), 10));
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/invalidations_per_s"), 1000));
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/invalidations_per_s.uffd-wp"), 990));
	CHECK(near(jnum(j, "repetitions/0/windows/pre/metrics/invalidations_per_s.uffd-wp"), 0));
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/guest_ops_per_s"), 100));
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/snapshot_duration_s"), 2));
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/snapshot_pages_per_s"), 32768));
	CHECK(!jp(j, "repetitions/0/windows/pre/metrics/snapshot_duration_s"));
	/* counts over the window, in every scenario: pf_taken's 2 rows, the invalidations by cause, event and flag */
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/pf_taken"), 20));
	CHECK(near(jnum(j, "repetitions/0/windows/pre/metrics/pf_taken"), 4));
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/mn_invalidations.uffd-wp.event.protection_vma"), 1980));
	CHECK(near(jnum(j, "repetitions/0/windows/snapshot/metrics/mn_invalidations.uffd-wp.flag.perm_upgrade"), 990));
	CHECK(near(jnum(j, "repetitions/0/windows/post/metrics/mn_invalidations.uffd-wp.flag.perm_upgrade"), 0));
	CHECK(near(jnum(j, "repetitions/0/windows/pre/metrics/mn_invalidations.uffd-wp.flag.perm_upgrade"), 0));
	CHECK(json_object_object_get_ex(jp(j, "repetitions/0/windows/pre/metrics"), "remote_tlb_flushes", &v) && !v);
	CHECK(!jp(j, "repetitions/0/windows/pre/metrics/tdp_sptes_zapped"));
	CHECK(!strcmp(json_object_get_string(jp(j, "metric_info/pf_taken/unit")), "1"));
	/* 200 reads: 196 in bucket 0, 4 in bucket 2 -> p50 in bucket 0, p99 in bucket 2 */
	CHECK(near(jnum(j, "repetitions/0/windows/pre/metrics/latency_samples"), 200));
	CHECK(near(jnum(j, "repetitions/0/windows/pre/metrics/latency_p50_ns"), 256 + 64 * 100.0 / 196));
	CHECK(near(jnum(j, "repetitions/0/windows/pre/metrics/latency_p99_ns"), 384 + 64 * 2.0 / 4));
	CHECK(near(jnum(j, "repetitions/0/windows/pre/metrics/latency_max_ns"), 448));
	/* unavailable: null and named with the probe's reason */
	CHECK(json_object_object_get_ex(jp(j, "repetitions/0/windows/pre/metrics"), "tlb_per_s", &v) && !v);
	CHECK(!strcmp(json_object_get_string(jp(j, "repetitions/0/windows/pre/unavailable/tlb_per_s")),
		      "KVM does not export it"));
	/* metrics whose counter was never probed are not in the report */
	CHECK(!jp(j, "repetitions/0/windows/pre/metrics/exits_per_s"));
	/* how the bandwidth limit was applied: not at all, or by the sink */
	CHECK(json_object_object_get_ex(jp(j, "repetitions/0/snapshot"), "throttle", &v) && !v);
	CHECK(!strcmp(json_object_get_string(jp(j, "repetitions/1/snapshot/throttle/by")), "sink"));
	CHECK(near(jnum(j, "repetitions/1/snapshot/throttle/rate"), 8 << 20));
	CHECK(near(jnum(j, "repetitions/1/snapshot/throttle/burst"), 419430));
	CHECK(near(jnum(j, "repetitions/1/snapshot/throttle/bytes"), 268500000));
	CHECK(near(jnum(j, "repetitions/1/snapshot/throttle/waited_s"), 1.5));
	/* the failed rep's snapshot metrics are unavailable */
	CHECK(jp(j, "repetitions/2/windows/snapshot/unavailable/snapshot_duration_s"));
	CHECK(!strcmp(json_object_get_string(jp(j, "repetitions/2/error/phase")), "rep 2 snapshot"));

	/* arm statistics over completed repetitions only */
	CHECK(near(jnum(j, "arms/0/repetitions/completed"), 2));
	CHECK(near(jnum(j, "arms/0/repetitions/failed"), 1));
	CHECK(near(jnum(j, "arms/0/repetitions/total"), 3));
	CHECK(near(jnum(j, "arms/0/windows/snapshot/pf_per_s/n"), 2));
	CHECK(near(jnum(j, "arms/0/windows/snapshot/pf_per_s/median"), 20));
	CHECK(near(jnum(j, "arms/0/windows/snapshot/pf_per_s/min"), 10));
	CHECK(near(jnum(j, "arms/0/windows/snapshot/pf_per_s/max"), 30));
	CHECK(near(jnum(j, "arms/0/windows/snapshot/pf_per_s/values/1"), 30));
	CHECK(near(jnum(j, "arms/0/windows/snapshot/tlb_per_s/n"), 0));
	CHECK(json_object_object_get_ex(jp(j, "arms/0/windows/snapshot/tlb_per_s"), "median", &v) && !v);
	CHECK(jp(j, "metric_info/invalidations_per_s.uffd-wp/unit"));
	CHECK(!strcmp(json_object_get_string(jp(j, "metric_info/guest_ops_per_s/better")), "higher"));

	/* timeline: dense counters (a counter that appeared late is 0 before), totals are the sums */
	CHECK(near(jnum(j, "repetitions/0/timeline/0/counters/bpf.invalidations.uffd-wp"), 0));
	CHECK(!jp(j, "repetitions/0/timeline/0/latency_hist"));
	CHECK(near(jnum(j, "repetitions/0/timeline/1/latency_hist/counts/1"), 2));
	CHECK(near(jnum(j, "repetitions/0/totals/kvm.pf_taken"), 2 * 5 + 10 * 2));
	CHECK(near(jnum(j, "repetitions/0/totals/bpf.invalidations.uffd-wp"), 1980));
	CHECK(!strcmp(json_object_get_string(jp(j, "repetitions/0/timeline/4/migration/status")), "completed"));
	CHECK(!jp(j, "repetitions/0/timeline/4/migration/dirty_pages_rate"));

	/* write, read back, validate */
	dir = test_tmpdir("report");
	snprintf(path, sizeof(path), "%s/report.json", dir);
	CHECK_MSG(report_write(r, path, &err) == 0, "%s", err.msg);
	CHECK_MSG(report_read(path, &back, &err) == 0, "%s", err.msg);
	CHECK(report_json_state(back) == REPORT_RUNNING);
	CHECK(near(jnum(back, "arms/0/windows/snapshot/pf_per_s/median"), 20));
	json_object_put(back);
	if (validator) {
		int rc = test_validate_report(validator, schema, path);
		CHECK_MSG(rc == 0, "schema validation of %s failed (%d)", path, rc);
	}

	/* reading garbage gives errors naming the file */
	FILE *f = fopen(path, "w");
	CHECK(f);
	fputs("{\"schema\": \"snapbench.compare/1\"}", f);
	fclose(f);
	CHECK(report_read(path, &back, &err) == -EPROTO);
	CHECK(strstr(err.msg, path) && strstr(err.msg, "snapbench.run/1"));
	f = fopen(path, "w");
	CHECK(f);
	fputs("{\"schema\": \"snapbench.run/1\", ", f);
	fclose(f);
	CHECK(report_read(path, &back, &err) == -EBADMSG);
	f = fopen(path, "w");
	CHECK(f);
	fputs("{} {}", f);
	fclose(f);
	CHECK(report_read(path, &back, &err) == -EBADMSG);
	CHECK(report_read(dir, &back, &err) == -EINVAL);
	json_object_put(j);
}

/* rep.postcopy: written, its four metrics in the migration window (and no pass metrics), read back by report_rep_import() */
static void test_postcopy(const char *validator, const char *schema)
{
	_cleanup_report_ struct report *r = NULL, *r2 = NULL;
	struct report_rep *rep, *rep2;
	struct json_object *j = NULL, *j2 = NULL;
	struct sb_error err = {};
	struct report_row *row;

	CHECK(report_new("20261201T120000Z-0c0c0c", 1796010312ULL * 1000000000ULL, &r) == 0);
	report_set_spec(r, json_tokener_parse(full_spec));
	CHECK(report_add_arm(r, "default", NULL, 1) == 0);
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	for (int i = 0; i < 3; i++) {
		CHECK(report_rep_append_row(rep, 1.0 + i, 1.0, i == 0 ? REPORT_WINDOW_PRE : i == 1 ? REPORT_WINDOW_MIGRATION : REPORT_WINDOW_POST,
					    &row) == 0);
		CHECK(report_row_set(rep, row, "guest.ops", 0) == 0);
	}
	rep->postcopy = (struct report_postcopy){
		.set = true, .status = "completed", .started_s = 1.2, .switchover_s = 1.3, .pass_started_s = 1.31,
		.access = "read", .backing = "hugetlb", .chunk_bytes = 2 << 20, .pass_ns = 433.5e6, .pass_vcpus = 1,
		.pass_pages = 32768, .pass_bytes = 128 << 20, .mismatches = 2, .first_mismatch = 0x300000,
		.postcopy_requests = 7, .probes_on_destination = true, .dest = { .pid = 99 },
	};
	rep->postcopy.dest.log = strdup("/tmp/qemu-rep0-dest.log");
	/* the touches: 32704 of 40 to 80 ns, 64 of 12.8 to 25.6 us (a 2.5 GHz TSC's buckets 6 and 15) */
	rep->postcopy.n_touch = 2;
	rep->postcopy.touch_lower_ns[0] = 25.6;
	rep->postcopy.touch_width_ns[0] = 25.6;
	rep->postcopy.touch_count[0] = 32704;
	rep->postcopy.touch_lower_ns[1] = 13107.2;
	rep->postcopy.touch_width_ns[1] = 13107.2;
	rep->postcopy.touch_count[1] = 64;
	rep->state = REPORT_REP_COMPLETED;
	CHECK(report_to_json(r, &j, &err) == 0);
	CHECK(near(jnum(j, "repetitions/0/postcopy/pass/ms"), 433.5));
	CHECK(json_object_array_length(jp(j, "repetitions/0/postcopy/pass/touch_hist/counts")) == 2);
	CHECK(near(jnum(j, "repetitions/0/postcopy/pass/touch_hist/counts/1"), 64));
	CHECK(near(jnum(j, "repetitions/0/postcopy/pass/touch_hist/bucket_ns/1"), 13107.2));
	CHECK(near(jnum(j, "repetitions/0/postcopy/pass/touch_hist/width_ns/0"), 25.6));
	/* the median inside the fast bucket (rank 16384 of its 32704), p99 and the top in the slow one */
	CHECK(near(jnum(j, "repetitions/0/postcopy/pass/touch_p50_ns"), 25.6 + 25.6 * 16384 / 32704));
	CHECK(jnum(j, "repetitions/0/postcopy/pass/touch_p99_ns") > 25.6 && jnum(j, "repetitions/0/postcopy/pass/touch_p99_ns") <= 51.2);
	CHECK(near(jnum(j, "repetitions/0/postcopy/pass/touch_max_bucket_ns"), 26214.4));
	CHECK(near(jnum(j, "repetitions/0/postcopy/pass/first_mismatch"), 0x300000));
	CHECK(near(jnum(j, "repetitions/0/postcopy/chunk_bytes"), 2 << 20));
	CHECK(!strcmp(json_object_get_string(jp(j, "repetitions/0/postcopy/backing")), "hugetlb"));
	CHECK(near(jnum(j, "repetitions/0/windows/migration/metrics/fault_pass_ms"), 433.5));
	CHECK(near(jnum(j, "repetitions/0/windows/migration/metrics/postcopy_requests"), 7));
	CHECK(near(jnum(j, "repetitions/0/windows/migration/metrics/fault_mismatches"), 2));
	CHECK(near(jnum(j, "repetitions/0/windows/migration/metrics/postcopy_chunk_bytes"), 2 << 20));
	CHECK(!jp(j, "repetitions/0/windows/migration/metrics/iterations"));
	CHECK(!jp(j, "repetitions/0/windows/pre/metrics/fault_pass_ms"));
	CHECK(!jp(j, "repetitions/0/migration"));
	if (validator) {
		char path[4096];
		int rc;

		snprintf(path, sizeof(path), "%s/report.json", test_tmpdir("report-postcopy"));
		CHECK_MSG(report_write(r, path, &err) == 0, "%s", err.msg);
		rc = test_validate_report(validator, schema, path);
		CHECK_MSG(rc == 0, "schema validation of %s failed (%d)", path, rc);
	}

	/* read back as a kernel arm's repetition is: the same JSON again */
	CHECK(report_new("20261201T120001Z-0c0c0d", 1796010312ULL * 1000000000ULL, &r2) == 0);
	CHECK(report_add_arm(r2, "default", NULL, 1) == 0);
	CHECK(report_add_rep(r2, 0, r2->created_ns, &rep2) == 0);
	CHECK_MSG(report_rep_import(r2, rep2, j, 0, &err) == 0, "%s", err.msg);
	CHECK(rep2->postcopy.set && rep2->postcopy.pass_vcpus == 1 && rep2->postcopy.mismatches == 2);
	CHECK(near(rep2->postcopy.pass_ns, 433.5e6) && rep2->postcopy.postcopy_requests == 7);
	CHECK(rep2->postcopy.probes_on_destination && !strcmp(rep2->postcopy.dest.log, "/tmp/qemu-rep0-dest.log"));
	CHECK(rep2->postcopy.n_touch == 2 && rep2->postcopy.touch_count[0] == 32704 &&
	      near(rep2->postcopy.touch_lower_ns[1], 13107.2));
	CHECK(report_to_json(r2, &j2, &err) == 0);
	CHECK(!strcmp(json_object_to_json_string(jp(j, "repetitions/0/postcopy")),
		      json_object_to_json_string(jp(j2, "repetitions/0/postcopy"))));
	json_object_put(j);
	json_object_put(j2);
}

/* rep.uffd_restore: written, its metrics in the fault-in window (pf_prefetched unavailable, naming the patch), read back */
static void test_uffd_restore(const char *validator, const char *schema)
{
	_cleanup_report_ struct report *r = NULL, *r2 = NULL;
	struct report_rep *rep, *rep2;
	struct json_object *j = NULL, *j2 = NULL;
	struct sb_error err = {};
	struct report_row *row;

	CHECK(report_new("20261201T120000Z-0c0c0e", 1796010312ULL * 1000000000ULL, &r) == 0);
	report_set_spec(r, json_tokener_parse(full_spec));
	CHECK(report_add_arm(r, "default", NULL, 1) == 0);
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	for (int i = 0; i < 3; i++) {
		CHECK(report_rep_append_row(rep, 1.0 + i, 1.0, i == 0 ? REPORT_WINDOW_PRE : i == 1 ? REPORT_WINDOW_FAULT_IN : REPORT_WINDOW_POST,
					    &row) == 0);
		CHECK(report_row_set(rep, row, "guest.ops", 0) == 0);
	}
	rep->uffd_restore = (struct report_uffd_restore){
		.set = true, .region_bytes = 16 << 20, .chunk_bytes = 512 << 10, .pages = 4096, .access = "read",
		.pass_ms = 308.4, .uffd_requests = 32, .uffd_woken = 0, .uffd_bytes = 16 << 20, .mismatches = 0,
		.pf_taken = 4097, .pf_fixed = 4097, .pf_spurious = 0, .pf_prefetched = -1, .exit_status = 0,
	};
	rep->state = REPORT_REP_COMPLETED;
	CHECK(report_to_json(r, &j, &err) == 0);
	CHECK(near(jnum(j, "repetitions/0/windows/fault-in/metrics/restore_pass_ms"), 308.4));
	CHECK(near(jnum(j, "repetitions/0/windows/fault-in/metrics/restore_pf_taken"), 4097));
	CHECK(near(jnum(j, "repetitions/0/windows/fault-in/metrics/uffd_requests"), 32));
	CHECK(near(jnum(j, "repetitions/0/windows/fault-in/metrics/restore_chunk_bytes"), 512 << 10));
	CHECK(json_object_get_type(jp(j, "repetitions/0/windows/fault-in/metrics/restore_pf_prefetched")) == json_type_null);
	CHECK(strstr(json_object_get_string(jp(j, "repetitions/0/windows/fault-in/unavailable/restore_pf_prefetched")),
		     "seed 003"));
	CHECK(json_object_get_type(jp(j, "repetitions/0/uffd_restore/kvm/pf_prefetched")) == json_type_null);
	CHECK(!jp(j, "repetitions/0/windows/pre/metrics/restore_pass_ms"));
	CHECK(!jp(j, "repetitions/0/postcopy"));
	if (validator) {
		char path[4096];
		int rc;

		snprintf(path, sizeof(path), "%s/report.json", test_tmpdir("report-uffd-restore"));
		CHECK_MSG(report_write(r, path, &err) == 0, "%s", err.msg);
		rc = test_validate_report(validator, schema, path);
		CHECK_MSG(rc == 0, "schema validation of %s failed (%d)", path, rc);
	}
	/* a host VM's PVM-like KVM: the restore's fault counts are unavailable with the reason */
	rep->uffd_restore.kvm_unavailable = strdup("PVM has no guest page-fault path");
	CHECK(report_to_json(r, &j2, &err) == 0);
	CHECK(!strcmp(json_object_get_string(jp(j2, "repetitions/0/windows/fault-in/unavailable/restore_pf_fixed")),
		      "PVM has no guest page-fault path"));
	CHECK(near(jnum(j2, "repetitions/0/windows/fault-in/metrics/uffd_requests"), 32));
	json_object_put(j2);
	j2 = NULL;

	/* read back as a kernel arm's repetition is: the same JSON again */
	CHECK(report_new("20261201T120001Z-0c0c0f", 1796010312ULL * 1000000000ULL, &r2) == 0);
	CHECK(report_add_arm(r2, "default", NULL, 1) == 0);
	CHECK(report_add_rep(r2, 0, r2->created_ns, &rep2) == 0);
	CHECK_MSG(report_rep_import(r2, rep2, j, 0, &err) == 0, "%s", err.msg);
	CHECK(rep2->uffd_restore.set && rep2->uffd_restore.uffd_requests == 32 && rep2->uffd_restore.pf_prefetched == -1);
	CHECK(report_to_json(r2, &j2, &err) == 0);
	CHECK(!strcmp(json_object_to_json_string(jp(j, "repetitions/0/uffd_restore")),
		      json_object_to_json_string(jp(j2, "repetitions/0/uffd_restore"))));
	json_object_put(j);
	json_object_put(j2);
}

/* What report_to_json() prints, as report_write() writes it. */
static void check_written_as_built(const struct report *r, const char *path)
{
	_cleanup_json_ struct json_object *j = NULL;
	_cleanup_free_ char *file = NULL;
	struct sb_error err = {};
	size_t len = 0, jlen = 0;
	const char *text;

	CHECK_MSG(report_write(r, path, &err) == 0, "%s", err.msg);
	CHECK_MSG(read_full_file(path, 64u << 20, &file, &len, &err) == 0, "%s", err.msg);
	CHECK(report_to_json(r, &j, &err) == 0);
	text = json_object_to_json_string_length(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &jlen);
	CHECK_MSG(len == jlen + 1 && !memcmp(file, text, jlen) && file[jlen] == '\n',
		  "report_write() wrote %zu bytes, report_to_json() prints %zu", len, jlen);
}

/*
 * report_write() renders each row once and reuses the text in later
 * writes: the file stays what the report prints, as rows are appended,
 * while the last one still grows, and when a counter first seen late adds
 * a 0 to every earlier row.
 */
static void test_rows_text(void)
{
	const char *dir = test_tmpdir("report-rows");
	struct report *r = NULL;
	struct report_rep *rep;
	struct report_row *row;
	char path[4096];

	snprintf(path, sizeof(path), "%s/report.json", dir);
	CHECK(report_new("20250101-000000-rows", 1700000000000000000ULL, &r) == 0);
	CHECK(report_add_arm(r, "stock", NULL, 1) == 0);
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	check_written_as_built(r, path);
	for (unsigned i = 0; i < 12; i++) {
		CHECK(report_rep_append_row(rep, 0.1 * i, 0.1, i < 6 ? REPORT_WINDOW_PRE : REPORT_WINDOW_POST, &row) == 0);
		CHECK(report_row_set(rep, row, "kvm.pf_taken", 3 * i) == 0);
		check_written_as_built(r, path);
		/* the row as it is being filled, then a counter the earlier rows never had */
		CHECK(report_row_set(rep, row, "guest.ops", 1000 + i) == 0);
		if (i == 7)
			CHECK(report_row_set(rep, row, "bpf.invalidations", 5) == 0);
		check_written_as_built(r, path);
	}
	/* many rows between two writes: the rendered rows' array grows while the report is built */
	for (unsigned i = 0; i < 150; i++) {
		CHECK(report_rep_append_row(rep, 2 + 0.1 * i, 0.1, REPORT_WINDOW_POST, &row) == 0);
		CHECK(report_row_set(rep, row, "kvm.pf_taken", i) == 0);
	}
	check_written_as_built(r, path);
	report_free(r);
}

/* A hint that names the counter is taken; a wrong or past-the-end one falls back to the search, adding new names once. */
static void test_counter_hint(void)
{
	struct report *r = NULL;
	struct report_rep *rep;

	CHECK(report_new("20250101-000000-hint", 1700000000000000000ULL, &r) == 0);
	CHECK(report_add_arm(r, "stock", NULL, 1) == 0);
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	CHECK(report_rep_counter_hint(rep, "a", 0) == 0);
	CHECK(report_rep_counter_hint(rep, "b", 1) == 1);
	CHECK(report_rep_counter_hint(rep, "c", 99) == 2);
	CHECK(report_rep_counter_hint(rep, "a", 2) == 0); /* a wrong hint */
	CHECK(report_rep_counter_hint(rep, "b", 1) == 1);
	CHECK(report_rep_counter_hint(rep, "c", 2) == 2);
	CHECK(report_rep_counter_hint(rep, "d", 3) == 3);
	CHECK(report_rep_counter(rep, "d") == 3 && rep->n_counters == 4);
	report_free(r);
}

int main(int argc, char **argv)
{
	test_counter_hint();
	test_rows_text();
	test_percentile();
	test_ids();
	test_taint_flags();
	test_report(argc > 2 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL);
	test_postcopy(argc > 2 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL);
	test_uffd_restore(argc > 2 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL);
	return 0;
}
