// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The arm tables of snapbench show and run --local: "median (min max)" as
 * snapbench compare writes it, one time unit per row, columns that line up.
 * The progress line: the time left, and what the run waits for.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "daemon-format.h"
#include "macro.h"

static char *table(struct json_object *arm, size_t n_windows)
{
	static const char *const windows[] = { "pre", "snapshot", "post" };
	static const char *const titles[] = { "before (pre)", "during the snapshot", "after (post)" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f);
	print_arm_windows(f, arm, windows, titles, n_windows);
	CHECK(fclose(f) == 0);
	return text;
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

int main(int argc, char **argv)
{
	progress_line();
	CHECK_MSG(argc == 2, "usage: test-daemon-format STOCK.json");
	struct json_object *report = json_object_from_file(argv[1]);
	CHECK_MSG(report, "cannot read %s", argv[1]);
	struct json_object *arm = json_object_array_get_idx(json_object_object_get(report, "arms"), 0);
	_cleanup_free_ char *t = table(arm, 2);

	/* the same figures as compare's table of this fixture (reports/testdata/golden/stock-vs-perm.txt.expected) */
	CHECK_MSG(strstr(t, "\n  pf/s                  1,220 (1,200 1,240)            950,015 (901,000 990,000)\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  latency p99 (\xc2\xb5s)      19.8 (16.9 20.2)               19.8 (16.9 20.2)\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  latency p50 (ns)      340 (270 380)                  340 (270 380)\n"), "%s", t);
	CHECK_MSG(strstr(t, "\n  snapshot (s)                                         3 (3 3)\n"), "%s", t);
	CHECK_MSG(!strstr(t, "["), "%s", t);

	/* one repetition: the median alone; a missing median: n/a */
	struct json_object *snap = json_object_object_get(json_object_object_get(arm, "windows"), "snapshot");
	struct json_object *pf = json_object_object_get(snap, "pf_per_s");
	json_object_object_add(pf, "n", json_object_new_int(1));
	json_object_object_add(json_object_object_get(snap, "tlb_per_s"), "median", NULL);
	_cleanup_free_ char *t1 = table(arm, 3);
	CHECK_MSG(strstr(t1, "\n  pf/s                  1,220 (1,200 1,240)            950,015  "), "%s", t1);
	CHECK_MSG(strstr(t1, "n/a"), "%s", t1);
	json_object_put(report);
	printf("ok\n");
	return 0;
}
