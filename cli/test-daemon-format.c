// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The arm tables of snapbench show and run --local: "median (min max)" as
 * snapbench compare writes it, one time unit per row, columns that line up.
 * The progress line: the time left, and what the run waits for. The run
 * summaries' lines: the medians of the scenario's window, headed by what it
 * is, and the repetitions retried on a fresh host VM.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm-table.h"
#include "check.h"
#include "daemon-format.h"
#include "macro.h"
#include "report.h"

/* The arm's table as show prints it for a report of scenario: the scenario's window in the middle, headed as such. */
static char *table_at(struct json_object *arm, const char *scenario, size_t n_windows, bool emulated, size_t width)
{
	const char *const windows[] = { "pre", report_scenario_window(scenario), "post" };
	const char *const titles[] = { "before (pre)", report_scenario_window_title(scenario), "after (post)" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	print_arm_windows(f, arm, windows, titles, n_windows, emulated, width);
	CHECK(fclose(f) == 0);
	return text;
}

static char *table(struct json_object *arm, const char *scenario, size_t n_windows)
{
	return table_at(arm, scenario, n_windows, false, 0);
}

/* The widest line of text in terminal columns (UTF-8 continuation bytes take none). */
static size_t widest(const char *text)
{
	size_t best = 0, col = 0;

	for (const char *p = text; *p; p++) {
		if (*p == '\n') {
			best = col > best ? col : best;
			col = 0;
		} else if (((unsigned char)*p & 0xc0) != 0x80) {
			col++;
		}
	}
	return col > best ? col : best;
}

/*
 * Within the width: one line a row when it fits, else each row's (min max)
 * on a line of its own (an emulated row says so in the label's column),
 * else each row's label above its figures, else a line per window; always
 * the same full digits (950,015, never 950k); width 0: one line a row.
 */
static void narrow_tables(struct json_object *arm)
{
	static const size_t widths[] = { 0, 120, 80, 50 };

	for (size_t i = 0; i < ARRAY_SIZE(widths); i++) {
		_cleanup_free_ char *t = table_at(arm, "background-snapshot", 3, true, widths[i]);

		CHECK_MSG(widths[i] ? widest(t) <= widths[i] : widest(t) > 120, "%zu: %zu columns:\n%s", widths[i],
			  widest(t), t);
		CHECK_MSG(strstr(t, "950,015") && strstr(t, "(901,000 990,000)") && !strstr(t, "950k"), "%zu:\n%s",
			  widths[i], t);
		for (const char *p = t; (p = strchr(p, '\n')); p++)
			CHECK_MSG(p[-1] != ' ', "%zu: a line ends in a space:\n%s", widths[i], t);
		if (widths[i] == 120)
			CHECK_MSG(strstr(t, "\n  pf/s                  1,220                950,015              1,220\n"
					    "    emulated            (1,200 1,240)        (901,000 990,000)    (1,200 1,240)\n"),
				  "%s", t);
		if (widths[i] == 80)
			CHECK_MSG(strstr(t, "\n  pf/s  emulated\n    1,220                950,015              1,220\n"
					    "    (1,200 1,240)        (901,000 990,000)    (1,200 1,240)\n"), "%s", t);
		static const char stacked[] = "  pf/s  emulated\n    pre       1,220 (1,200 1,240)\n"
					      "    snapshot  950,015 (901,000 990,000)\n    post      1,220 (1,200 1,240)\n";
		if (widths[i] == 50) /* no titles: each line names its window */
			CHECK_MSG(!strncmp(t, stacked, strlen(stacked)), "%s", t);
	}
}

static void progress_line(void)
{
	struct json_object *p = json_tokener_parse(
		"{\"rep\": 1, \"reps\": 4, \"arm\": \"base\", \"step\": \"snapshot\", \"elapsed_s\": 30,"
		" \"fraction\": 0.25, \"pf_per_s\": 120, \"tlb_per_s\": null, \"invalidations_per_s\": 812,"
		" \"guest_ops_per_s\": 1.2e6, \"sample_window\": \"snapshot\", \"snapshot_fraction\": 0.4,"
		" \"waiting_for\": \"query-migrate\", \"waiting_s\": 3.2}");
	char line[256];

	CHECK(p);
	fmt_progress(line, sizeof(line), p);
	/* a quarter done in 30 s: 90 s to go */
	CHECK_MSG(!strncmp(line, "[30.0s  25% ETA 1m30s] rep 2/4 base: snapshot", 44), "%s", line);
	CHECK_MSG(strstr(line, "snapshot 40%  waiting 3 s for QEMU to answer query-migrate"), "%s", line);
	/* too little done to tell, and nothing waited for */
	json_object_object_add(p, "fraction", json_object_new_double(0.01));
	json_object_object_add(p, "waiting_for", NULL);
	fmt_progress(line, sizeof(line), p);
	CHECK_MSG(!strstr(line, "ETA") && !strstr(line, "waiting"), "%s", line);
	json_object_put(p);
}

/*
 * A window's step shows that window's rates once it has a sample, and
 * until then says it waits for one instead of the previous window's
 * figures; a step between windows (stop) names the window of its figures.
 * Plain lines: one when the step begins, one when its first sample is in.
 */
static void progress_window(void)
{
	struct json_object *p = json_tokener_parse(
		"{\"rep\": 0, \"reps\": 1, \"arm\": \"base\", \"step\": \"snapshot\", \"elapsed_s\": 9.2,"
		" \"fraction\": 0.54, \"pf_per_s\": 7, \"tlb_per_s\": 0, \"invalidations_per_s\": 3,"
		" \"guest_ops_per_s\": 118800, \"sample_window\": \"pre\", \"snapshot_fraction\": null}");
	char line[256], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct progress_printer pp;

	CHECK(p && f);
	fmt_progress(line, sizeof(line), p);
	CHECK_MSG(strstr(line, "] rep 1/1 base: snapshot waiting for the first snapshot sample") && !strstr(line, "pf/s") &&
		  !strstr(line, "pre"), "%s", line);
	progress_printer_init(&pp, f);
	progress_printer_update(&pp, NULL, p);
	progress_printer_update(&pp, NULL, p);
	json_object_object_add(p, "sample_window", json_object_new_string("snapshot"));
	json_object_object_add(p, "invalidations_per_s", json_object_new_double(70000));
	json_object_object_add(p, "snapshot_fraction", json_object_new_double(0.1));
	fmt_progress(line, sizeof(line), p);
	CHECK_MSG(strstr(line, "] rep 1/1 base: snapshot pf/s 7  tlb/s 0  inval/s 70,000  ops/s 118,800  snapshot 10%") &&
		  !strstr(line, "waiting"), "%s", line);
	progress_printer_update(&pp, NULL, p);
	json_object_object_add(p, "snapshot_fraction", json_object_new_double(0.5));
	progress_printer_update(&pp, NULL, p);
	CHECK(fflush(f) == 0);
	CHECK_MSG(!strcmp(text, "[9.2s  54% ETA 7.8s] rep 1/1 base: snapshot waiting for the first snapshot sample\n"
				"[9.2s  54% ETA 7.8s] rep 1/1 base: snapshot pf/s 7  tlb/s 0  inval/s 70,000  ops/s 118,800"
				"  snapshot 10%\n"), "%s", text);
	/* between windows: the figures are the last window's, and say so */
	json_object_object_add(p, "step", json_object_new_string("stop"));
	json_object_object_add(p, "sample_window", json_object_new_string("post"));
	fmt_progress(line, sizeof(line), p);
	CHECK_MSG(strstr(line, "base: stop     post: pf/s 7  ") && !strstr(line, "waiting"), "%s", line);
	/* no sample in the repetition yet (vm-start): no figures to name */
	json_object_object_add(p, "step", json_object_new_string("pre"));
	json_object_object_add(p, "sample_window", NULL);
	fmt_progress(line, sizeof(line), p);
	CHECK_MSG(strstr(line, "base: pre      waiting for the first pre sample"), "%s", line);
	CHECK(fclose(f) == 0);
	free(text);
	json_object_put(p);
}

static char *summary_block(const char *json)
{
	struct json_object *sum = json_tokener_parse(json);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(sum && f);
	print_summary_block(f, sum, "");
	CHECK(fclose(f) == 0);
	json_object_put(sum);
	return text;
}

/* The summary's medians are of the scenario's window, headed by what it is; retried repetitions are said so. */
static void summary_lines(void)
{
	static const char head[] = "\"id\": \"20261128T080000Z-0d1001\", \"state\": \"completed\", \"created\": null,"
				   " \"repetitions\": {\"total\": 2, \"completed\": 2, \"failed\": 0}, ";
	char json[1024];

	/* each line whole (the wrapping at 80 columns is checked below) */
	CHECK(setenv("COLUMNS", "200", 1) == 0);
	snprintf(json, sizeof(json), "{%s\"scenario\": \"background-snapshot\", \"retried\": [], \"arms\": [{\"label\": \"base\","
		 " \"snapshot\": {\"pf_per_s\": 1220, \"tlb_per_s\": null, \"invalidations_per_s\": 812,"
		 " \"guest_ops_per_s\": 15100, \"latency_p99_ns\": 29600, \"snapshot_duration_s\": 3}}]}", head);
	_cleanup_free_ char *snap = summary_block(json);
	CHECK_MSG(strstr(snap, "\n  arm base, during the snapshot (medians): pf/s 1,220  tlb/s -  inval/s 812  ops/s 15,100"
			       "  p99 29,600 ns  snapshot 3 s\n"), "%s", snap);
	CHECK_MSG(!strstr(snap, "retried"), "%s", snap);
	/* within 80 columns, wrapped between figures, never within one */
	CHECK(setenv("COLUMNS", "60", 1) == 0);
	_cleanup_free_ char *snap60 = summary_block(json);
	CHECK_MSG(strstr(snap60, "\n  arm base, during the snapshot (medians): pf/s 1,220\n"
				 "      tlb/s -  inval/s 812  ops/s 15,100  p99 29,600 ns\n      snapshot 3 s\n"), "%s", snap60);
	CHECK(setenv("COLUMNS", "200", 1) == 0);

	snprintf(json, sizeof(json), "{%s\"scenario\": \"dirty-log\", \"retried\": [], \"arms\": [{\"label\": \"stock\","
		 " \"migration\": {\"pf_per_s\": null, \"tlb_per_s\": null, \"invalidations_per_s\": 2.95,"
		 " \"guest_ops_per_s\": 15105, \"latency_p99_ns\": 29590, \"migration_duration_s\": 4.065}}]}", head);
	_cleanup_free_ char *dl = summary_block(json);
	CHECK_MSG(strstr(dl, "\n  arm stock, during the migration's passes (medians): pf/s -  tlb/s -  inval/s 2.95"
			     "  ops/s 15,105  p99 29,590 ns  migration 4.065 s\n"), "%s", dl);
	CHECK_MSG(!strstr(dl, "snapshot"), "%s", dl);

	snprintf(json, sizeof(json), "{%s\"scenario\": \"postcopy-restore\", \"arms\": [{\"label\": \"stock\","
		 " \"migration\": {\"migration_duration_s\": 0.6}}],"
		 " \"retried\": [{\"index\": 2, \"arm\": \"stock\", \"after\": \"the host VM went silent\\nconsole: \\u001b[2J\"}]}", head);
	_cleanup_free_ char *pc = summary_block(json);
	CHECK_MSG(strstr(pc, "\n  arm stock, during the postcopy migration (medians): pf/s -  tlb/s -  inval/s -  ops/s -"
			     "  p99 - ns  migration 0.6 s\n"), "%s", pc);
	/* the reason's further lines under its first; terminal controls from the report made harmless */
	CHECK_MSG(strstr(pc, "\n  rep 2 (arm stock): retried on a fresh host VM after: the host VM went silent\n"
			     "                                                       console: ?[2J\n"), "%s", pc);

	snprintf(json, sizeof(json), "{%s\"scenario\": \"uffd-restore\", \"retried\": [], \"arms\": [{\"label\": \"nr8\","
		 " \"fault-in\": {\"pf_per_s\": 5120, \"fault_in_duration_s\": 0.85, \"restore_pf_taken\": 512}}]}", head);
	_cleanup_free_ char *ur = summary_block(json);
	CHECK_MSG(strstr(ur, "\n  arm nr8, during the userfaultfd restore's fault-in (medians): pf/s 5,120  tlb/s -  inval/s -"
			     "  ops/s -  p99 - ns  fault-in 0.85 s  restore pf_taken 512\n"), "%s", ur);
	CHECK_MSG(!strstr(ur, "snapshot"), "%s", ur);
}

/* The scenarios' windows and their headings: one helper for show, run and the summaries. */
static void scenario_windows(void)
{
	CHECK(!strcmp(report_scenario_window(NULL), "snapshot"));
	CHECK(!strcmp(report_scenario_window("background-snapshot"), "snapshot"));
	CHECK(!strcmp(report_scenario_window("dirty-log"), "migration"));
	CHECK(!strcmp(report_scenario_window("postcopy-restore"), "migration"));
	CHECK(!strcmp(report_scenario_window_title("background-snapshot"), "during the snapshot"));
	CHECK(!strcmp(report_scenario_window_title("dirty-log"), "during the migration's passes"));
	CHECK(!strcmp(report_scenario_window_title("postcopy-restore"), "during the postcopy migration"));
}

/* A dirty-log report's table: the migration window in the middle, its passes' rows, no snapshot heading. */
static void dirty_log_table(const char *path)
{
	struct json_object *report = json_object_from_file(path);

	CHECK_MSG(report, "cannot read %s", path);
	CHECK(!strcmp(report_action_window(report), "migration"));
	struct json_object *arm = json_object_array_get_idx(json_object_object_get(report, "arms"), 0);
	_cleanup_free_ char *t = table(arm, "dirty-log", 3);
	CHECK_MSG(strstr(t, "before (pre)  during the migration's passes  after (post)\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  passes                              4\n"), "%s", t);
	CHECK_MSG(!strstr(t, "snapshot"), "%s", t);
	json_object_put(report);
}

/* A uffd-restore report's table: the fault-in window in the middle with the restore's rows, a snapshot's none. */
static void uffd_restore_table(const char *path)
{
	struct json_object *report = json_object_from_file(path);

	CHECK_MSG(report, "cannot read %s", path);
	CHECK(!strcmp(report_action_window(report), "fault-in"));
	struct json_object *arm = json_object_array_get_idx(json_object_object_get(report, "arms"), 1);
	_cleanup_free_ char *t = table(arm, "uffd-restore", 3);
	CHECK_MSG(strstr(t, "before (pre)  during the userfaultfd restore's fault-in  after (post)\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  restore pf_taken                    4,097\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  uffd requests                       32\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  pages lost                          0\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n    SPTEs prefetched                  n/a\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  restore pass                        393ms (390ms 395ms)\n"), "%s", t);
	CHECK_MSG(!strstr(t, "snapshot") && !strstr(t, "uffd-wp"), "%s", t);
	json_object_put(report);
}

/* run --local's summary from the report itself: the retried repetition only, with its reason. */
static void report_retried(const char *path)
{
	static const char want[] = "\n  rep 2 (arm npt): retried on a fresh host VM after: the host VM went silent in the "
				   "snapshot step: no word from the runner inside for 60 s ";
	struct json_object *report = json_object_from_file(path);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK_MSG(report && f, "cannot read %s", path);
	print_report_retried(f, report);
	CHECK(fclose(f) == 0);
	CHECK_MSG(!strncmp(text, want, strlen(want)), "%s", text);
	/* one line: the other repetitions were not retried */
	CHECK_MSG(strchr(text + 1, '\n') == text + len - 1, "%s", text);
	free(text);
	json_object_put(report);
}

int main(int argc, char **argv)
{
	progress_line();
	progress_window();
	scenario_windows();
	summary_lines();
	CHECK_MSG(argc == 5, "usage: test-daemon-format STOCK.json DIRTY-LOG.json KERNEL-RETRIED.json UFFD-RESTORE.json");
	dirty_log_table(argv[2]);
	uffd_restore_table(argv[4]);
	report_retried(argv[3]);
	struct json_object *report = json_object_from_file(argv[1]);
	CHECK_MSG(report, "cannot read %s", argv[1]);
	struct json_object *arm = json_object_array_get_idx(json_object_object_get(report, "arms"), 0);
	_cleanup_free_ char *t = table(arm, "background-snapshot", 2);

	/* the same figures as compare's table of this fixture (reports/testdata/golden/stock-vs-perm.txt.expected) */
	CHECK_MSG(strstr(t, "\n  pf/s                  1,220 (1,200 1,240)            950,015 (901,000 990,000)\n"), "%s", t);
	/* each time figure with its own unit; the median alone when every value is the same */
	CHECK_MSG(strstr(t, "\n  latency p99           19.8\xc2\xb5s (16.9\xc2\xb5s 20.2\xc2\xb5s)         19.8\xc2\xb5s (16.9\xc2\xb5s 20.2\xc2\xb5s)\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  latency p50           340ns (270ns 380ns)            340ns (270ns 380ns)\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  snapshot                                             3s\n"), "%s", t);
	CHECK_MSG(!strstr(t, "["), "%s", t);
	narrow_tables(arm);

	/* run --local and show print an arm alike: its line, then the same table */
	{
		static const char *const windows[] = { "pre", "snapshot" };
		static const char *const titles[] = { "before (pre)", "during the snapshot" };
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		CHECK(f);
		print_arm_summary(f, report, arm, windows, titles, 2);
		CHECK(fclose(f) == 0);
		CHECK_MSG(!strncmp(text, "\narm ", 5) && strstr(text, " repetitions completed; median (min max)\n") &&
				  strstr(text, "\n  pf/s "),
			  "%s", text);
		free(text);
	}

	/* one repetition: the median alone; a missing median: n/a */
	struct json_object *snap = json_object_object_get(json_object_object_get(arm, "windows"), "snapshot");
	struct json_object *pf = json_object_object_get(snap, "pf_per_s");
	json_object_object_add(pf, "n", json_object_new_int(1));
	json_object_object_add(json_object_object_get(snap, "tlb_per_s"), "median", NULL);
	_cleanup_free_ char *t1 = table(arm, "background-snapshot", 3);
	CHECK_MSG(strstr(t1, "\n  pf/s                  1,220 (1,200 1,240)            950,015  "), "%s", t1);
	CHECK_MSG(strstr(t1, "n/a"), "%s", t1);
	json_object_put(report);
	printf("ok\n");
	return 0;
}
