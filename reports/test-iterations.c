// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A dirty-log repetition's passes, derived from its migration window's rows
 * (iterations.c): rows go to the pass under way at their start, pages sent
 * and left dirty per pass, counters summed per pass equal the window's, the
 * migration window's metrics (steady passes only, clear-log unavailable with
 * the probe's reason), the JSON, and a kernel arm's import getting the same
 * passes back. argv[1], argv[2] (validator, schema): the report validates.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report.h"
#include "test-json.h"
#include "test-tmp.h"
#include "test-validate.h"

static const char dirty_spec[] =
	"{\"scenario\": \"dirty-log\", \"repetitions\": 1,"
	" \"vm\": {\"backend\": \"qemu\", \"memory\": 268435456, \"vcpus\": 2, \"machine\": \"pc\","
	"  \"cpu\": null, \"backing\": \"anon\", \"hugepage_size\": null, \"prealloc\": false, \"user\": null,"
	"  \"extra_args\": []},"
	" \"guest\": {\"kind\": \"micro\", \"pattern\": \"rand-set\", \"vcpu_patterns\": {}, \"region\": 67108864,"
	"  \"page_size\": \"4k\", \"probe\": {\"vcpu\": 0, \"gap_us\": 100}, \"seed\": 1, \"clock\": \"auto\","
	"  \"telemetry_interval_ms\": 100},"
	" \"snapshot\": {\"sink\": \"file\", \"keep\": false, \"max_bandwidth\": null, \"timeout_s\": 600},"
	" \"dirty_log\": {\"tracking\": \"bitmap\", \"ring_size\": 4096, \"iterate_s\": 4, \"max_bandwidth\": 67108864,"
	"  \"downtime_limit_ms\": 1, \"completion\": \"cancel\"},"
	" \"timing\": {\"warmup_s\": 0, \"pre_s\": 1, \"post_s\": 1, \"interval_ms\": 1000},"
	" \"bpf\": {\"enabled\": true}, \"knobs\": {},"
	" \"arms\": [{\"label\": \"stock\", \"knobs\": {}}]}";

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-6 * (fabs(a) + fabs(b) + 1);
}

/*
 * pre 1 row; migration rows (sync count, pages sent so far, remaining bytes)
 * as sampled at their ends; post 1 row. Pass 1 (bulk, 65536 pages) ends at
 * migration row 2 (whose end reading is already pass 2's), pass 2 sends
 * 10000, pass 3 sends 8000, pass 4 sends 3000 and still has 4096 pages
 * queued at its last reading before the cancel (the last row has no RAM
 * figures: QEMU reports none once cancelled).
 */
static const struct {
	bool fig;
	uint64_t sync, pages, remaining;
	uint64_t flushes, clear_ns;
} mig_rows[] = {
	{ true, 1, 30000, 1u << 27, 5, 100 },
	{ true, 1, 60000, 1u << 26, 5, 100 },
	{ true, 2, 65536, 10000 * 4096ull, 7, 900 }, /* the sample taken at MIGRATION_PASS 2 */
	{ true, 2, 70536, 5000 * 4096ull, 3, 0 },
	{ true, 3, 75536, 8000 * 4096ull, 4, 800 },
	{ true, 3, 79536, 4000 * 4096ull, 2, 0 },
	{ true, 4, 83536, 7096 * 4096ull, 6, 700 },
	{ true, 4, 86536, 4096 * 4096ull, 1, 0 },
	{ false, 0, 0, 0, 0, 0 },
};

static void fill(struct report *r, struct report_rep *rep)
{
	struct report_row *row;
	double t = 1;

	rep->memory_bytes = 256u << 20;
	rep->vcpus = 2;
	rep->pid = 4242;
	rep->state = REPORT_REP_COMPLETED;
	rep->migration.set = true;
	snprintf(rep->migration.status, sizeof(rep->migration.status), "cancelled");
	snprintf(rep->migration.completion, sizeof(rep->migration.completion), "cancel");
	snprintf(rep->migration.tracking, sizeof(rep->migration.tracking), "bitmap");
	rep->migration.started_s = 2;
	rep->migration.iterating_s = 4;
	rep->migration.max_bandwidth = 64u << 20;
	rep->migration.downtime_limit_ms = 1;
	rep->migration.page_size = 4096;
	rep->migration.dest.pid = 4343;
	CHECK(report_rep_append_row(rep, t, 1, REPORT_WINDOW_PRE, &row) == 0);
	CHECK(report_row_set(rep, row, "kvm.remote_tlb_flush", 1) == 0);
	CHECK(report_row_set(rep, row, "bpf.clear_dirty_log_ns", 0) == 0);
	for (size_t i = 0; i < sizeof(mig_rows) / sizeof(mig_rows[0]); i++) {
		t += 0.5;
		CHECK(report_rep_append_row(rep, t, 0.5, REPORT_WINDOW_MIGRATION, &row) == 0);
		CHECK(report_row_set(rep, row, "kvm.remote_tlb_flush", mig_rows[i].flushes) == 0);
		CHECK(report_row_set(rep, row, "bpf.clear_dirty_log_ns", mig_rows[i].clear_ns) == 0);
		row->has_migration = true;
		snprintf(row->migration.status, sizeof(row->migration.status), mig_rows[i].fig ? "active" : "cancelled");
		row->migration.dirty_pages_rate = -1;
		row->migration.remaining = mig_rows[i].remaining;
		row->migration.precopy = mig_rows[i].fig;
		row->migration.dirty_sync_count = mig_rows[i].sync;
		row->migration.pages = mig_rows[i].pages;
	}
	t += 1;
	CHECK(report_rep_append_row(rep, t, 1, REPORT_WINDOW_POST, &row) == 0);
	CHECK(report_row_set(rep, row, "kvm.remote_tlb_flush", 2) == 0);
	(void)r;
}

int main(int argc, char **argv)
{
	_cleanup_report_ struct report *r = NULL, *outer = NULL;
	struct report_rep *rep, *imp;
	struct report_iteration *it = NULL, *it2 = NULL;
	struct json_object *j = NULL;
	struct sb_error err = {};
	size_t n = 0, n2 = 0;
	char path[300];

	CHECK(report_new("20261201T000000Z-d1e7a0", 1796083200ULL * 1000000000ULL, &r) == 0);
	report_set_spec(r, json_tokener_parse(dirty_spec));
	CHECK(report_add_arm(r, "stock", NULL, 1) == 0);
	CHECK(report_set_probe(r, "kvm.remote_tlb_flush", true, "query-stats vm remote_tlb_flush", "qmp", NULL) == 0);
	CHECK(report_set_probe(r, "bpf.clear_dirty_log_ns", false, NULL, NULL,
			       "fentry: attaching is not permitted here (EPERM)") == 0);
	CHECK(report_add_rep(r, 0, r->created_ns, &rep) == 0);
	fill(r, rep);

	CHECK(report_rep_iterations(rep, &it, &n) == 0);
	CHECK_MSG(n == 4, "%zu passes", n);
	/* rows: pass 1 = migration rows 0-2, pass 2 = rows 3-4, pass 3 = rows 5-6, pass 4 = rows 7-8 */
	CHECK(it[0].pass == 1 && it[0].n_rows == 3 && it[0].first_row == 1);
	CHECK(it[1].pass == 2 && it[1].n_rows == 2);
	CHECK(it[2].pass == 3 && it[2].n_rows == 2);
	CHECK(it[3].pass == 4 && it[3].n_rows == 2 && !it[3].complete);
	CHECK(it[0].complete && it[1].complete && it[2].complete);
	CHECK(near(it[0].start_s, 1) && near(it[0].duration_s, 1.5));
	CHECK(it[0].pages_sent == 65536);
	CHECK(it[1].pages_sent == 10000 && it[2].pages_sent == 8000);
	CHECK(it[3].pages_sent == 86536 - 83536); /* the cancelled row reports no pages: the last known */
	CHECK(it[0].dirty_pages == 10000 && it[1].dirty_pages == 8000);
	/* the last pass sent 3000 and had 4096 pages still queued when it was cut */
	CHECK_MSG(it[2].dirty_pages == 3000 + 4096, "%lld", (long long)it[2].dirty_pages);
	CHECK(it[3].dirty_pages < 0);

	CHECK(report_to_json(r, &j, &err) == 0);
	CHECK(json_object_array_length(jp(j, "repetitions/0/migration/iterations")) == 4);
	CHECK(near(jnum(j, "repetitions/0/migration/iterations/1/counters/kvm.remote_tlb_flush"), 3 + 4));
	CHECK(near(jnum(j, "repetitions/0/migration/iterations/0/counters/kvm.remote_tlb_flush"), 17));
	CHECK(jnull(j, "repetitions/0/migration/iterations/3/dirty_pages"));
	CHECK(near(jnum(j, "repetitions/0/migration/iterations/0/dirty_pages_per_s"), 10000 / 1.5));
	CHECK(!strcmp(jstr(j, "repetitions/0/migration/status"), "cancelled"));
	CHECK(jnull(j, "repetitions/0/migration/ring_size"));
	/* window metrics: steady passes 2 and 3 (pass 1 is the bulk one, pass 4 was cut) */
	CHECK(near(jnum(j, "repetitions/0/windows/migration/metrics/iterations"), 4));
	CHECK(near(jnum(j, "repetitions/0/windows/migration/metrics/tlb_per_iteration"), (7.0 + 8.0) / 2));
	CHECK(near(jnum(j, "repetitions/0/windows/migration/metrics/iteration_s"), 1.0));
	CHECK(near(jnum(j, "repetitions/0/windows/migration/metrics/dirty_pages_per_s"),
		   (10000.0 + 8000 + 7096) / (1.5 + 1 + 1)));
	CHECK(jnull(j, "repetitions/0/windows/migration/metrics/clear_log_ns_per_iteration"));
	CHECK(!strcmp(jstr(j, "repetitions/0/windows/migration/unavailable/clear_log_ns_per_iteration"),
		      "fentry: attaching is not permitted here (EPERM)"));
	CHECK(!jp(j, "repetitions/0/windows/snapshot"));
	CHECK(!jp(j, "repetitions/0/windows/migration/metrics/snapshot_duration_s"));
	CHECK(!jp(j, "repetitions/0/windows/pre/metrics/iterations"));
	CHECK(near(jnum(j, "arms/0/windows/migration/tlb_per_iteration/median"), 7.5));
	CHECK(!strcmp(jstr(j, "metric_info/clear_log_ns_per_iteration/unit"), "ns"));

	/* written and validated (the validator checks the passes sum to the window) */
	snprintf(path, sizeof(path), "%s/report.json", test_tmpdir("iterations"));
	CHECK_MSG(report_write(r, path, &err) == 0, "%s", err.msg);
	if (argc > 2) {
		int rc = test_validate_report(argv[1], argv[2], path);
		CHECK_MSG(rc == 0, "schema validation of %s failed (%d)", path, rc);
	}

	/* a kernel arm's repetition comes back with the same passes and the migration's record */
	CHECK(report_new("20261201T000001Z-d1e7a1", 1796083201ULL * 1000000000ULL, &outer) == 0);
	CHECK(report_add_arm(outer, "stock", NULL, 1) == 0);
	CHECK(report_add_rep(outer, 0, outer->created_ns, &imp) == 0);
	CHECK_MSG(report_rep_import(outer, imp, j, 0, &err) == 0, "%s", err.msg);
	CHECK(imp->migration.set && !strcmp(imp->migration.status, "cancelled") && imp->migration.dest.pid == 4343);
	CHECK(report_rep_iterations(imp, &it2, &n2) == 0);
	CHECK(n2 == n);
	for (size_t i = 0; i < n; i++)
		CHECK(it2[i].pass == it[i].pass && it2[i].n_rows == it[i].n_rows && it2[i].pages_sent == it[i].pages_sent &&
		      it2[i].dirty_pages == it[i].dirty_pages);
	free(it);
	free(it2);
	json_object_put(j);
	printf("ok\n");
	return 0;
}
