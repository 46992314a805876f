// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test: the results store. Runs are created queued with a spec the
 * worker can read back, summaries follow report changes, list filters,
 * ending a run keeps its partial timeline, logs are tails, ids are checked;
 * a partial report (no spec) is read and listed under its arms' labels.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "run-dir.h"
#include "spec.h"
#include "store.h"
#include "test-json.h"
#include "test-tmp.h"

static struct json_object *make_spec(const char *arm1, const char *arm2, unsigned reps)
{
	struct run_spec spec;
	struct sb_error err = {};
	struct json_object *j;
	char buf[16];

	CHECK(spec_init(&spec) == 0);
	if (arm1)
		CHECK_MSG(spec_add_arm(&spec, arm1, "--arm", &err) == 0, "%s", err.msg);
	if (arm2)
		CHECK_MSG(spec_add_arm(&spec, arm2, "--arm", &err) == 0, "%s", err.msg);
	snprintf(buf, sizeof(buf), "%u", reps);
	CHECK_MSG(spec_set(&spec, "repetitions", buf, "--repetitions", &err) == 0, "%s", err.msg);
	CHECK(spec_validate(&spec, &err) == 0);
	CHECK(spec_to_json(&spec, &j) == 0);
	spec_done(&spec);
	return j;
}

static void write_text(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, text, len) == (ssize_t)len);
	close(fd);
}

static void test_create_and_summary(struct store *s, char ids[3][REPORT_ID_MAX])
{
	struct sb_error err = {};
	struct json_object *spec, *sum, *report, *v;
	char path[4096];

	spec = make_spec("base", "thp:sysctl:kernel.numa_balancing=0", 3);
	CHECK_MSG(store_create_run(s, spec, ids[0], &err) == 0, "%s", err.msg);
	json_object_put(spec);
	spec = make_spec("base", NULL, 1);
	CHECK(store_create_run(s, spec, ids[1], &err) == 0);
	json_object_put(spec);
	spec = make_spec("patched", NULL, 2);
	CHECK(store_create_run(s, spec, ids[2], &err) == 0);
	json_object_put(spec);
	CHECK(report_id_valid(ids[0]) && strcmp(ids[0], ids[1]) && strcmp(ids[1], ids[2]));

	/* the report reads back through the reports/ reader, queued, with its spec */
	CHECK(store_read_report(s, ids[0], &report, &err) == 0);
	CHECK(!strcmp(jstr(report, "state"), "queued"));
	CHECK(!strcmp(jstr(report, "id"), ids[0]));
	CHECK(jp(report, "started") == NULL && jp(report, "finished") == NULL);
	json_object_put(report);

	/* the worker's spec file validates */
	struct run_spec back;
	CHECK(spec_init(&back) == 0);
	snprintf(path, sizeof(path), "%s/%s/%s", store_runs_dir(s), ids[0], RUN_DIR_SPEC);
	CHECK_MSG(spec_apply_file(&back, path, &err) == 0, "%s", err.msg);
	CHECK(spec_validate(&back, &err) == 0);
	CHECK(back.n_arms == 2 && back.repetitions == 3);
	spec_done(&back);

	CHECK(store_summary(s, ids[0], &sum, &err) == 0);
	CHECK(!strcmp(jstr(sum, "state"), "queued"));
	CHECK(!strcmp(jstr(sum, "scenario"), "background-snapshot"));
	v = jp(sum, "labels");
	CHECK(json_object_array_length(v) == 2);
	CHECK(!strcmp(json_object_get_string(json_object_array_get_idx(v, 1)), "thp"));
	CHECK(json_object_get_int(jp(sum, "repetitions/total")) == 6);
	json_object_put(sum);

	/* bad and unknown ids */
	CHECK(store_summary(s, "../../etc/passwd", &sum, &err) == -EINVAL);
	CHECK(strstr(err.msg, "not a run id"));
	CHECK(store_summary(s, "20200101T000000Z-000000", &sum, &err) == -ENOENT);
	CHECK(strstr(err.msg, "no such run"));
	CHECK(store_read_report(s, "20200101T000000Z-000000", &sum, &err) == -ENOENT);
}

static void test_list(struct store *s, char ids[3][REPORT_ID_MAX])
{
	struct sb_error err = {};
	struct json_object *list;
	struct store_filter f = { .state = -1 };

	CHECK(store_list(s, &f, &list, &err) == 0);
	CHECK(json_object_array_length(list) == 3);
	/* oldest first */
	for (int i = 0; i < 2; i++)
		CHECK(strcmp(jstr(json_object_array_get_idx(list, i), "id"), jstr(json_object_array_get_idx(list, i + 1), "id")) < 0);
	json_object_put(list);

	f.label = "base";
	CHECK(store_list(s, &f, &list, &err) == 0);
	CHECK(json_object_array_length(list) == 2);
	json_object_put(list);

	f.label = NULL;
	f.limit = 1;
	CHECK(store_list(s, &f, &list, &err) == 0);
	CHECK(json_object_array_length(list) == 1);
	/* the newest */
	const char *newest = ids[0];
	for (int i = 1; i < 3; i++)
		if (strcmp(ids[i], newest) > 0)
			newest = ids[i];
	CHECK(!strcmp(jstr(json_object_array_get_idx(list, 0), "id"), newest));
	json_object_put(list);

	f.limit = 0;
	f.scenario = "dirty-log";
	CHECK(store_list(s, &f, &list, &err) == 0);
	CHECK(json_object_array_length(list) == 0);
	json_object_put(list);

	char(*q)[REPORT_ID_MAX];
	size_t n;
	CHECK(store_ids_in_state(s, REPORT_QUEUED, &q, &n, &err) == 0);
	CHECK(n == 3);
	free(q);
}

/* A report as the run engine leaves it when killed mid-repetition. */
static void write_running_report(struct store *s, const char *id, enum report_rep_state last, enum report_state state)
{
	struct report *r;
	struct report_rep *rep;
	struct report_row *row;
	struct sb_error err = {};
	char path[4096];

	CHECK(report_new(id, realtime_ns(), &r) == 0);
	report_set_spec(r, make_spec("base", NULL, 2));
	r->started_ns = realtime_ns();
	r->state = state;
	CHECK(report_add_arm(r, "base", NULL, 2) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(report_add_rep(r, 0, realtime_ns(), &rep) == 0);
		CHECK(report_rep_append_row(rep, 1.0, 1.0, REPORT_WINDOW_PRE, &row) == 0);
		CHECK(report_row_set(rep, row, "kvm.pf_taken", 10 + (uint64_t)i) == 0);
		rep->state = i == 0 ? REPORT_REP_COMPLETED : last;
		if (i == 0)
			rep->finished_ns = realtime_ns();
	}
	snprintf(path, sizeof(path), "%s/%s/%s", store_runs_dir(s), id, RUN_DIR_REPORT);
	CHECK_MSG(report_write(r, path, &err) == 0, "%s", err.msg);
	report_free(r);
}

static void test_end(struct store *s, char ids[3][REPORT_ID_MAX])
{
	struct sb_error err = {};
	struct json_object *report, *sum, *reps, *rep;
	char run_dir[4096];

	/* a summary is cached, and refreshed when the report changes */
	CHECK(store_summary(s, ids[1], &sum, &err) == 0);
	CHECK(!strcmp(jstr(sum, "state"), "queued"));
	json_object_put(sum);

	write_running_report(s, ids[1], REPORT_REP_RUNNING, REPORT_RUNNING);
	CHECK(store_summary(s, ids[1], &sum, &err) == 0);
	CHECK(!strcmp(jstr(sum, "state"), "running"));
	json_object_put(sum);

	CHECK(store_run_dir(s, ids[1], run_dir, sizeof(run_dir)) == 0);
	CHECK_MSG(store_end_run_interrupted(run_dir, &err) == 1, "%s", err.msg);
	CHECK(store_read_report(s, ids[1], &report, &err) == 0);
	CHECK(!strcmp(jstr(report, "state"), "failed"));
	CHECK(!strcmp(jstr(report, "error/phase"), STORE_INTERRUPTED_PHASE));
	CHECK(strstr(jstr(report, "error/message"), "interrupted"));
	CHECK(jstr(report, "finished"));
	reps = jp(report, "repetitions");
	CHECK(json_object_array_length(reps) == 2);
	rep = json_object_array_get_idx(reps, 0);
	CHECK(!strcmp(jstr(rep, "state"), "completed")); /* untouched */
	rep = json_object_array_get_idx(reps, 1);
	CHECK(!strcmp(jstr(rep, "state"), "failed"));
	CHECK(json_object_array_length(jp(rep, "timeline")) == 1); /* the partial timeline stays */
	CHECK(json_object_get_int(jp(report, "arms/0/repetitions/failed")) == 1);
	json_object_put(report);

	CHECK(store_summary(s, ids[1], &sum, &err) == 0);
	CHECK(!strcmp(jstr(sum, "state"), "failed"));
	json_object_put(sum);

	/* a final report is left alone */
	CHECK(store_end_run(run_dir, REPORT_CANCELLED, "x", "y", 0, &err) == 0);

	/* a run the worker cancelled because its daemon died becomes interrupted */
	write_running_report(s, ids[1], REPORT_REP_CANCELLED, REPORT_CANCELLED);
	CHECK(store_end_run(run_dir, REPORT_FAILED, "x", "y", 0, &err) == 0);
	CHECK(store_end_run_interrupted(run_dir, &err) == 1);
	CHECK(store_read_report(s, ids[1], &report, &err) == 0);
	CHECK(!strcmp(jstr(report, "state"), "failed"));
	rep = json_object_array_get_idx(jp(report, "repetitions"), 1);
	CHECK(!strcmp(jstr(rep, "state"), "failed"));
	CHECK(!strcmp(jstr(rep, "error/phase"), STORE_INTERRUPTED_PHASE));
	json_object_put(report);

	/* cancelling a queued run */
	CHECK(store_run_dir(s, ids[2], run_dir, sizeof(run_dir)) == 0);
	CHECK(store_end_run(run_dir, REPORT_CANCELLED, "queued", "cancelled by uid 0 before it started", 0, &err) == 1);
	CHECK(store_summary(s, ids[2], &sum, &err) == 0);
	CHECK(!strcmp(jstr(sum, "state"), "cancelled"));
	CHECK(!strcmp(jstr(sum, "error/message"), "cancelled by uid 0 before it started"));
	json_object_put(sum);

	struct store_filter f = { .state = REPORT_CANCELLED };
	struct json_object *list;
	CHECK(store_list(s, &f, &list, &err) == 0);
	CHECK(json_object_array_length(list) == 1);
	json_object_put(list);
}

static void test_strip(struct store *s, char ids[3][REPORT_ID_MAX])
{
	struct sb_error err = {};
	struct json_object *report;

	CHECK(store_read_report(s, ids[1], &report, &err) == 0);
	store_strip_timelines(report);
	CHECK(jp(report, "repetitions/1/timeline") == NULL);
	CHECK(jp(report, "repetitions/1/state") != NULL);
	json_object_put(report);
}

static void test_logs(struct store *s, char ids[3][REPORT_ID_MAX])
{
	struct sb_error err = {};
	struct json_object *logs, *e;
	char path[4096], big[5000];

	CHECK(store_logs(s, ids[0], 1024, &logs, &err) == 0);
	CHECK(json_object_array_length(logs) == 0);
	json_object_put(logs);

	memset(big, 'a', sizeof(big));
	memcpy(big + sizeof(big) - 6, "\xff" "tail", 5);
	big[sizeof(big) - 1] = '\n';
	snprintf(path, sizeof(path), "%s/%s/%s", store_runs_dir(s), ids[0], RUN_DIR_WORKER_LOG);
	write_text(path, big, sizeof(big));
	snprintf(path, sizeof(path), "%s/%s/qemu-rep1-base.log", store_runs_dir(s), ids[0]);
	write_text(path, "second\n", 7);
	snprintf(path, sizeof(path), "%s/%s/qemu-rep0-base.log", store_runs_dir(s), ids[0]);
	write_text(path, "first\n", 6);
	snprintf(path, sizeof(path), "%s/%s/snapshot.bin", store_runs_dir(s), ids[0]);
	write_text(path, "not a log", 9);

	CHECK(store_logs(s, ids[0], 1024, &logs, &err) == 0);
	CHECK(json_object_array_length(logs) == 3);
	e = json_object_array_get_idx(logs, 0);
	CHECK(!strcmp(jstr(e, "name"), RUN_DIR_WORKER_LOG));
	CHECK(json_object_get_int(jp(e, "bytes")) == (int)sizeof(big));
	CHECK(json_object_get_boolean(jp(e, "truncated")));
	CHECK(strlen(jstr(e, "text")) == 1024);
	CHECK(strstr(jstr(e, "text"), "?tail\n"));
	CHECK(!strcmp(jstr(json_object_array_get_idx(logs, 1), "name"), "qemu-rep0-base.log"));
	CHECK(!strcmp(jstr(json_object_array_get_idx(logs, 1), "text"), "first\n"));
	CHECK(!json_object_get_boolean(jp(json_object_array_get_idx(logs, 1), "truncated")));
	CHECK(!strcmp(jstr(json_object_array_get_idx(logs, 2), "name"), "qemu-rep1-base.log"));
	json_object_put(logs);

	CHECK(store_logs(s, "20200101T000000Z-000000", 1024, &logs, &err) == -ENOENT);
	CHECK(store_logs(s, "..", 1024, &logs, &err) == -EINVAL);
}

static void test_unreadable(struct store *s)
{
	struct sb_error err = {};
	struct json_object *list, *e = NULL;
	struct store_filter f = { .state = -1 };
	const char *id = "20200101T000000Z-0000ff";
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", store_runs_dir(s), id);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/%s/%s", store_runs_dir(s), id, RUN_DIR_REPORT);
	write_text(path, "{ truncated", 11);
	/* a directory that is no run is ignored */
	snprintf(path, sizeof(path), "%s/not-a-run", store_runs_dir(s));
	CHECK(mkdir(path, 0755) == 0);

	CHECK(store_list(s, &f, &list, &err) == 0);
	CHECK(json_object_array_length(list) == 4);
	for (size_t i = 0; i < json_object_array_length(list); i++)
		if (!strcmp(jstr(json_object_array_get_idx(list, i), "id"), id))
			e = json_object_array_get_idx(list, i);
	CHECK(e && jp(e, "state") == NULL && strstr(jstr(e, "problem"), "not valid JSON"));
	json_object_put(list);
}

/* A partial report (docs/report-format.md) in the store: read for show, summarized for list, its labels its arms'. */
static void test_partial(struct store *s)
{
	static const char report[] =
		"{\"schema\": \"snapbench.run/1\", \"id\": \"20200101T000000Z-0000aa\", \"state\": \"failed\", "
		"\"error\": {\"message\": \"rebuilt from the LAVA job's test cases\", \"phase\": \"lava\"}, "
		"\"partial\": {\"source\": \"lava\", \"reason\": \"cut off\", \"job_result\": null, \"job_error\": null, "
		"\"preflight\": \"pass\", \"run\": null, \"test_cases\": 1, \"unreadable_records\": 0}, "
		"\"created\": null, \"started\": null, \"finished\": null, \"spec\": null, \"host\": null, \"probes\": {}, "
		"\"metric_info\": {\"pf_per_s\": {\"unit\": \"1/s\", \"better\": \"lower\", \"description\": \"x\"}}, "
		"\"arms\": [{\"label\": \"dut\", \"knobs\": null, \"repetitions\": {\"total\": 1, \"completed\": 1, "
		"\"failed\": 0}, \"windows\": {\"snapshot\": {\"pf_per_s\": {\"n\": 1, \"median\": 2.5, \"min\": 2.5, "
		"\"max\": 2.5, \"values\": [2.5]}}}}], "
		"\"repetitions\": [{\"index\": 0, \"arm\": \"dut\", \"state\": \"completed\", \"error\": null, "
		"\"started\": null, \"finished\": null, \"vm\": null, \"guest\": null, \"snapshot\": null, \"windows\": "
		"{\"snapshot\": {\"start_s\": null, \"duration_s\": null, \"metrics\": {\"pf_per_s\": 2.5}, "
		"\"unavailable\": {}}}, \"timeline\": [], \"totals\": {}}]}\n";
	const char *id = "20200101T000000Z-0000aa";
	struct json_object *got = NULL, *sum = NULL;
	struct sb_error err = {};
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", store_runs_dir(s), id);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/%s/%s", store_runs_dir(s), id, RUN_DIR_REPORT);
	write_text(path, report, strlen(report));
	CHECK_MSG(store_read_report(s, id, &got, &err) == 0, "%s", err.msg);
	CHECK(jp(got, "spec") == NULL && jp(got, "partial") != NULL);
	json_object_put(got);
	CHECK_MSG(store_summary(s, id, &sum, &err) == 0, "%s", err.msg);
	CHECK(!strcmp(jstr(sum, "state"), "failed") && jp(sum, "problem") == NULL && jp(sum, "created") == NULL);
	CHECK(json_object_array_length(jp(sum, "labels")) == 1 &&
	      !strcmp(json_object_get_string(json_object_array_get_idx(jp(sum, "labels"), 0)), "dut"));
	json_object_put(sum);

	/* without its marker a null spec is a damaged report */
	static const char *const marker = "\"partial\": {";
	char *whole = strdup(report), *m = strstr(whole, marker);
	CHECK(whole && m);
	memcpy(m, "\"partia_\":", 10);
	write_text(path, whole, strlen(whole));
	free(whole);
	CHECK(store_read_report(s, id, &got, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "field \"created\" must be string"), "%s", err.msg);
}

/* uffd-restore: its window's medians under "fault-in", with its duration and seed 003's count, no snapshot's */
static void test_summary_uffd_restore(struct store *s)
{
	struct sb_error err = {};
	struct json_object *spec, *sum, *v, *report;
	struct run_spec ur;
	char ur_id[REPORT_ID_MAX], path[4096];

	CHECK(spec_init(&ur) == 0);
	CHECK_MSG(spec_set(&ur, "scenario", "uffd-restore", "--scenario", &err) == 0, "%s", err.msg);
	CHECK_MSG(spec_validate(&ur, &err) == 0, "%s", err.msg);
	CHECK(spec_to_json(&ur, &spec) == 0);
	spec_done(&ur);
	CHECK_MSG(store_create_run(s, spec, ur_id, &err) == 0, "%s", err.msg);
	json_object_put(spec);
	/* the run ended: an arm with the window's statistics, two completed repetitions with its duration */
	CHECK_MSG(store_read_report(s, ur_id, &report, &err) == 0, "%s", err.msg);
	json_object_object_add(report, "state", json_object_new_string("completed"));
	json_object_object_add(report, "arms",
			       json_tokener_parse("[{\"label\": \"default\", \"knobs\": null, \"repetitions\": {\"total\": 2,"
						  " \"completed\": 2, \"failed\": 0}, \"windows\": {\"fault-in\": {\"restore_pf_taken\":"
						  " {\"n\": 2, \"median\": 512, \"min\": 510, \"max\": 514, \"values\": [510, 514]}}}}]"));
	json_object_object_add(report, "repetitions", json_object_new_array());
	for (int i = 0; i < 2; i++) {
		char rep[512];
		snprintf(rep, sizeof(rep),
			 "{\"index\": %d, \"arm\": \"default\", \"state\": \"completed\", \"error\": null, \"started\": null,"
			 " \"finished\": null, \"vm\": null, \"guest\": null, \"snapshot\": null, \"windows\": {\"fault-in\":"
			 " {\"start_s\": 1, \"duration_s\": %s, \"metrics\": {}, \"unavailable\": {}}}, \"timeline\": [],"
			 " \"totals\": {}}",
			 i, i ? "0.9" : "0.8");
		json_object_array_add(json_object_object_get(report, "repetitions"), json_tokener_parse(rep));
	}
	CHECK(store_run_dir(s, ur_id, path, sizeof(path)) == 0);
	strncat(path, "/" RUN_DIR_REPORT, sizeof(path) - strlen(path) - 1);
	CHECK(json_object_to_file_ext(path, report, JSON_C_TO_STRING_PLAIN) == 0);
	json_object_put(report);
	CHECK_MSG(store_summary(s, ur_id, &sum, &err) == 0, "%s", err.msg);
	v = json_object_array_get_idx(jp(sum, "arms"), 0);
	CHECK_MSG(v && json_object_get_double(jp(v, "fault-in/fault_in_duration_s")) > 0.849 &&
			  json_object_get_double(jp(v, "fault-in/fault_in_duration_s")) < 0.851 &&
			  json_object_get_int(jp(v, "fault-in/restore_pf_taken")) == 512 &&
			  !json_object_object_get_ex(jp(v, "fault-in"), "snapshot_duration_s", NULL) && !jp(v, "snapshot"),
		  "%s", json_object_to_json_string(sum));
	json_object_put(sum);
}

int main(void)
{
	struct store *s;
	struct sb_error err = {};
	char ids[3][REPORT_ID_MAX];

	CHECK_MSG(store_open(test_tmpdir("store"), &s, &err) == 0, "%s", err.msg);
	test_create_and_summary(s, ids);
	test_list(s, ids);
	test_end(s, ids);
	test_strip(s, ids);
	test_logs(s, ids);
	test_unreadable(s);
	test_partial(s);
	test_summary_uffd_restore(s);
	store_free(s);
	return 0;
}
