// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the report loader and everything compare does with
 * what it loaded: the input is one report.json (a two-arm run, as the seed
 * corpus holds), read from a memfd the way compare reads a file. Loaded, its
 * two arms selected, compared (every default metric, no bootstrap: its cost
 * is per metric, not per input byte) and formatted as a table, Markdown,
 * JSON and each plot (the HTML export draws the timeline and the metrics it
 * shows; the target the others). Any file must end in a clean error or
 * output, never a crash, a leak or a hang. The exports (CSV, JUnit XML, HTML,
 * KCIDB; the report's own CSV, metrics and KCIDB) of the same comparison and
 * report too.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true && meson compile -C build-fuzz
 *   build-fuzz/reports/fuzz-compare -max_total_time=60 -dict=reports/fuzz-compare.dict reports/fuzz-corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compare.h"
#include "export.h"
#include "export-html.h"

#define MAX_INPUT (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void report_exports(struct json_object *report)
{
	struct sb_error err = { 0 };
	char *text = NULL;

	if (export_report_csv(report, &text, &err) == 0)
		free(text);
	text = NULL;
	if (export_report_metrics(report, EXPORT_OPENMETRICS, &text, &err) == 0)
		free(text);
	text = NULL;
	if (export_report_kcidb(report, EXPORT_KCIDB_ORIGIN_DEFAULT, &text, &err) == 0)
		free(text);
}

static void outputs(const struct compare_result *res)
{
	free(export_compare_csv(res));
	free(export_compare_junit(res));
	free(export_compare_kcidb(res, EXPORT_KCIDB_ORIGIN_DEFAULT));
	/* draws the timeline and the plot of every metric compare_metric_shown() */
	free(export_compare_html(res));

	free(compare_format_table(res, NULL));
	free(compare_format_markdown(res, 0));
	free(compare_json_string(res));
	for (size_t i = 0; i < res->n_metrics; i++) {
		if (!compare_metric_shown(res, i)) /* the plots the HTML page leaves out */
			free(compare_plot_metric_svg(res, i));
		free(compare_plot_file_name(&res->metrics[i]));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct compare_pool pool = { 0 };
	struct compare_side baseline = { 0 }, patched = { 0 };
	struct compare_options opts;
	struct compare_result *res = NULL;
	struct sb_error err = { 0 };
	char path[64];
	int fd;

	if (size > MAX_INPUT)
		return 0;
	fd = memfd_create("fuzz-report", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size > 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	compare_options_init(&opts);
	opts.bootstrap_iterations = 0;
	opts.force = true; /* incomparable sides are compared anyway: more of the code runs */
	if (compare_select_two_arms(&pool, path, &baseline, &patched, &err) == 0) {
		report_exports(pool.reports[0]->root);
		if (compare_compute(&baseline, &patched, &opts, &res, &err) == 0) {
			outputs(res);
			compare_result_free(res);
		}
	}
	compare_side_done(&baseline);
	compare_side_done(&patched);
	compare_pool_done(&pool);
	close(fd);
	return 0;
}
