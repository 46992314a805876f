// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The exports' text rules (reports/export-text.c): what a report's strings
 * become in CSV, XML and OpenMetrics labels, including the bytes JSON
 * fixtures cannot carry (invalid UTF-8), and the number format. The
 * formats themselves are read back by real parsers in tests/exports/.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "export.h"
#include "export-private.h"

static char *text(const char *s, enum export_escape e)
{
	struct strbuf b = {};

	export_append_text(&b, s, e);
	return strbuf_steal(&b);
}

#define CHECK_TEXT(in, e, want)                                                            \
	do {                                                                               \
		_cleanup_free_ char *got_ = text(in, e);                                   \
		CHECK_MSG(got_ && !strcmp(got_, want), "%s -> \"%s\", expected \"%s\"", #in, \
			  got_ ? got_ : "(null)", want);                                   \
		/* the exports' shortcut: unchanged exactly when the text comes out as it went in */ \
		CHECK_MSG(export_text_unchanged(in, e) == !strcmp(want, (in) ? (in) : ""), \
			  "export_text_unchanged(%s) is wrong", #in);                      \
	} while (0)

static void test_text(void)
{
	CHECK_TEXT("plain", EXPORT_ESCAPE_NONE, "plain");
	CHECK_TEXT("<plain>", EXPORT_ESCAPE_NONE, "<plain>");
	CHECK_TEXT("a \"b\"", EXPORT_ESCAPE_XML, "a &quot;b&quot;");
	CHECK_TEXT("runs of text, then \x01 one control", EXPORT_ESCAPE_LABEL, "runs of text, then ? one control");
	CHECK_TEXT("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7", EXPORT_ESCAPE_NONE, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7");
	/* C0, DEL and C1 (CSI as U+009B) controls, tab and newline included */
	CHECK_TEXT("a\x1b[2J\tb\nc\x7f" "d\xc2\x9b" "e", EXPORT_ESCAPE_NONE, "a?[2J?b?c?d?e");
	/* not UTF-8: a stray continuation byte, a truncated sequence, an overlong '/', a surrogate, past U+10FFFF */
	CHECK_TEXT("x\x80y", EXPORT_ESCAPE_NONE, "x?y");
	CHECK_TEXT("x\xe2\x82", EXPORT_ESCAPE_NONE, "x??");
	CHECK_TEXT("\xc0\xaf", EXPORT_ESCAPE_NONE, "??");
	CHECK_TEXT("\xed\xa0\x80", EXPORT_ESCAPE_NONE, "???");
	CHECK_TEXT("\xf4\x90\x80\x80", EXPORT_ESCAPE_NONE, "????");
	CHECK_TEXT("<a href=\"x\">&'</a>", EXPORT_ESCAPE_XML, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
	CHECK_TEXT("a\\b\"c", EXPORT_ESCAPE_LABEL, "a\\\\b\\\"c");
	CHECK_TEXT("", EXPORT_ESCAPE_XML, "");
	CHECK_TEXT(NULL, EXPORT_ESCAPE_XML, "");
}

static void check_row(const char *const *fields, size_t n, const char *want)
{
	struct strbuf b = {};
	_cleanup_free_ char *got = NULL;

	export_append_csv_row(&b, fields, n);
	got = strbuf_steal(&b);
	CHECK_MSG(got && !strcmp(got, want), "CSV row \"%s\", expected \"%s\"", got ? got : "(null)", want);
}

static void test_csv(void)
{
	check_row((const char *const[]){ "a", "", "1.5" }, 3, "a,,1.5\r\n");
	check_row((const char *const[]){ "x,y", "say \"hi\"", " lead", "trail ", "in side" }, 5,
		  "\"x,y\",\"say \"\"hi\"\"\",\" lead\",\"trail \",in side\r\n");
	check_row((const char *const[]){ "\"" }, 1, "\"\"\"\"\r\n");
	/* a newline is a control: '?', so a record is always one line */
	check_row((const char *const[]){ "two\r\nlines", NULL }, 2, "two??lines,\r\n");
}

static void check_number(double v, const char *want)
{
	char buf[EXPORT_NUMBER_MAX];

	export_format_number(v, buf);
	CHECK_MSG(!strcmp(buf, want), "%.17g -> \"%s\", expected \"%s\"", v, buf, want);
}

static void test_numbers(void)
{
	check_number(950015, "950015");
	check_number(0.1, "0.1");
	check_number(-0.0, "0");
	check_number(1.0 / 3, "0.3333333333333333");
	check_number(16885 / 1e9, "1.6885e-05");
	check_number(1e20, "1e+20");
	check_number(-2.5, "-2.5");
	check_number(NAN, "");
	check_number(INFINITY, "");
}

/* the shortest "%.*g" that reads back as v, searched from 1 digit up */
static void shortest_g(double v, char buf[static EXPORT_NUMBER_MAX])
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, EXPORT_NUMBER_MAX, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static uint64_t next_random(uint64_t *state)
{
	/* xorshift64: the same sequence on every run, so a failure repeats */
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static void check_shortest(double v)
{
	char got[EXPORT_NUMBER_MAX], want[EXPORT_NUMBER_MAX];

	if (!isfinite(v) || (v == floor(v) && fabs(v) < 1e15))
		return; /* not the search's case */
	export_format_number(v, got);
	shortest_g(v, want);
	CHECK_MSG(!strcmp(got, want), "%a -> \"%s\", the shortest is \"%s\"", v, got, want);
}

/*
 * The format starts its search at 15 digits; its output must be what the
 * search from 1 digit finds, for any double: random bit patterns, short
 * decimals (those the search from 1 stops early on, as reports write 10
 * digits), ratios, and the edges of the range.
 */
static void test_numbers_shortest(void)
{
	static const double edges[] = { DBL_MIN, DBL_MAX, DBL_TRUE_MIN, DBL_EPSILON, 1e15 + 0.5,
					 1e15, 9.999999999999999e14, 0.1 + 0.2, 5e-324, 1e-5, 1e-4,
					 123456789012345.6, 0.3, 2.675, 1e21, 1e22, 1e23,
					 DBL_MIN * 0.999, DBL_MIN * 1.001, 1e-310 };
	uint64_t state = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		check_shortest(edges[i]);
		check_shortest(-edges[i]);
	}
	for (int i = 0; i < 60000; i++) {
		uint64_t bits = next_random(&state);
		double v;

		memcpy(&v, &bits, sizeof(v));
		check_shortest(v);
		/* a decimal of 1 to 17 digits, 10^-30 to 10^30 */
		int digits = 1 + (int)(next_random(&state) % 17);
		double mantissa = (double)(next_random(&state) % 100000000000000000ull) /
				  pow(10, 17 - digits);
		v = floor(mantissa) * pow(10, (int)(next_random(&state) % 61) - 30 - digits);
		check_shortest(v);
		check_shortest((double)(next_random(&state) % 1000000 + 1) /
			       (double)(next_random(&state) % 1000 + 1));
	}
}

static void test_not_a_report(void)
{
	struct sb_error err = { 0 };
	char *out = (char *)"untouched";
	struct json_object *arr = json_object_new_array();
	struct json_object *bad = json_tokener_parse("{\"id\": \"r\", \"repetitions\": {}}");

	CHECK(export_report_csv(arr, &out, &err) == -EINVAL && strstr(err.msg, "not a run report"));
	CHECK(export_report_metrics(arr, EXPORT_OPENMETRICS, &out, &err) == -EINVAL);
	CHECK(export_report_csv(bad, &out, &err) == -EINVAL && strstr(err.msg, "not an array"));
	CHECK(!strcmp(out, "untouched")); /* out-parameters are left alone on failure */
	json_object_put(arr);
	json_object_put(bad);
}

static void test_empty_run(void)
{
	struct sb_error err = { 0 };
	struct json_object *queued = json_tokener_parse("{\"id\": \"r1\", \"state\": \"queued\", \"repetitions\": []}");
	_cleanup_free_ char *csv = NULL, *om = NULL, *prom = NULL;

	CHECK(export_report_csv(queued, &csv, &err) == 0);
	CHECK(!strcmp(csv, "run,arm,repetition,state,window,metric,unit,value,unavailable,emulated\r\n"));
	CHECK(export_report_metrics(queued, EXPORT_OPENMETRICS, &om, &err) == 0);
	CHECK_MSG(!strcmp(om, "# HELP snapbench_run the run: its id, state, scenario and timing (emulated under TCG: its times, rates and latencies are the emulator's)\n"
			      "# TYPE snapbench_run info\n"
			      "snapbench_run_info{run=\"r1\",state=\"queued\",scenario=\"\",timing=\"native\"} 1\n"
			      "# EOF\n"), "%s", om);
	CHECK(export_report_metrics(queued, EXPORT_PROMETHEUS, &prom, &err) == 0);
	CHECK_MSG(!strcmp(prom, "# HELP snapbench_run_info the run: its id, state, scenario and timing (emulated under TCG: its times, rates and latencies are the emulator's)\n"
				"# TYPE snapbench_run_info gauge\n"
				"snapbench_run_info{run=\"r1\",state=\"queued\",scenario=\"\",timing=\"native\"} 1\n"), "%s", prom);
	json_object_put(queued);
}

/* A metric named like one of the exports' own families does not get mixed into it. */
static void test_name_clash(void)
{
	struct sb_error err = { 0 };
	struct json_object *report = json_tokener_parse(
		"{\"id\": \"r1\", \"state\": \"completed\", \"repetitions\": [{\"index\": 0, \"arm\": \"a\", "
		"\"state\": \"completed\", \"windows\": {\"pre\": {\"metrics\": {\"run\": 5, \"pf_per_s\": 7}}}}]}");
	_cleanup_free_ char *om = NULL;

	CHECK(report);
	CHECK(export_report_metrics(report, EXPORT_OPENMETRICS, &om, &err) == 0);
	CHECK_MSG(!strstr(om, "snapbench_run_info{arm") && !strstr(om, "# TYPE snapbench_run gauge"), "%s", om);
	CHECK_MSG(strstr(om, "snapbench_pf_per_second{run=\"r1\",arm=\"a\",rep=\"0\",window=\"pre\"} 7\n"), "%s", om);
	json_object_put(report);
}

/* KCIDB: origins the schema takes, test paths from names no path may hold, the errors. */
static void test_kcidb(void)
{
	struct sb_error err = { 0 };
	struct json_object *report = json_tokener_parse(
		"{\"id\": \"r1\", \"state\": \"completed\", \"spec\": {\"scenario\": \"bg snap\"}, "
		"\"repetitions\": [{\"index\": 0, \"arm\": \"a\\u001bb\", \"state\": \"cancelled\", "
		"\"started\": \"2026-11-02T10:00:00Z\", \"windows\": {\"pre\": {\"start_s\": 1.25, "
		"\"duration_s\": 3, \"metrics\": {\"x/y..z\": 7, \"gone\": null}, \"unavailable\": {\"gone\": \"no probe\"}}}}]}");
	_cleanup_free_ char *out = NULL, *bad = NULL;
	struct json_object *doc, *tests, *t;

	CHECK(export_kcidb_origin_valid("snapbench") && export_kcidb_origin_valid("lab_2"));
	CHECK(!export_kcidb_origin_valid("") && !export_kcidb_origin_valid(NULL) && !export_kcidb_origin_valid("Lab") &&
	      !export_kcidb_origin_valid("a:b") && !export_kcidb_origin_valid("a-b"));
	CHECK(report);
	CHECK(export_report_kcidb(report, "Lab", &bad, &err) == -EINVAL && !bad && strstr(err.msg, "\"Lab\""));
	CHECK(export_report_kcidb(report, "lab", &out, &err) == 0);
	doc = json_tokener_parse(out);
	CHECK_MSG(doc, "%s", out);
	tests = json_object_object_get(doc, "tests");
	CHECK(json_object_array_length(tests) == 3);
	t = json_object_array_get_idx(tests, 0); /* the repetition: cancelled is MISS */
	CHECK(!strcmp(json_object_get_string(json_object_object_get(t, "path")), "snapbench.bg_snap"));
	CHECK(!strcmp(json_object_get_string(json_object_object_get(t, "status")), "MISS"));
	CHECK(!strcmp(json_object_get_string(json_object_object_get(t, "build_id")), "lab:r1/a?b"));
	t = json_object_array_get_idx(tests, 1);
	CHECK_MSG(!strcmp(json_object_get_string(json_object_object_get(t, "path")), "snapbench.bg_snap.pre.x_y._.z"),
		  "%s", json_object_get_string(json_object_object_get(t, "path")));
	CHECK(!strcmp(json_object_get_string(json_object_object_get(t, "id")), "lab:r1/0/pre/x/y..z"));
	CHECK(!strcmp(json_object_get_string(json_object_object_get(t, "start_time")), "2026-11-02T10:00:01.250Z"));
	CHECK(!json_object_object_get(json_object_object_get(t, "number"), "unit")); /* no metric_info */
	t = json_object_array_get_idx(tests, 2);
	CHECK(!strcmp(json_object_get_string(json_object_object_get(t, "status")), "SKIP"));
	CHECK(!strcmp(json_object_get_string(json_object_object_get(t, "comment")), "no probe"));
	CHECK(!json_object_object_get(t, "number"));
	json_object_put(doc);
	json_object_put(report);

	report = json_tokener_parse("[1]");
	CHECK(export_report_kcidb(report, "lab", &bad, &err) == -EINVAL && !bad);
	json_object_put(report);
}

/* Seconds from nanoseconds: the report's digits with the point moved; ns counters named in seconds; every series with its run. */
static void test_seconds(void)
{
	static const struct {
		double v;
		int pow10;
		const char *want;
	} cases[] = {
		{ 11771.44704, 9, "0.00001177144704" }, { 16885, 9, "0.000016885" }, { 1500, 9, "1.5e-06" },
		{ 1.5, 9, "1.5e-09" },                   { 2.5e9, 9, "2.5" },           { 4065, 3, "4.065" },
		{ 120, 3, "0.12" },                      { 1e18, 3, "1e+15" },          { -340, 9, "-3.4e-07" },
		{ 0, 9, "0" },                           { 12504.34832, 9, "0.00001250434832" },
		{ 123456789, 3, "123456.789" },          { 7, 0, "7" },
	};
	char buf[EXPORT_NUMBER_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		export_format_scaled(cases[i].v, cases[i].pow10, buf);
		CHECK_MSG(!strcmp(buf, cases[i].want), "%.17g / 1e%d -> %s, want %s", cases[i].v, cases[i].pow10, buf,
			  cases[i].want);
	}

	struct sb_error err = { 0 };
	_cleanup_free_ char *prom = NULL;
	struct json_object *report = json_tokener_parse(
		"{\"id\": \"r1\", \"state\": \"completed\", \"repetitions\": [{\"index\": 0, \"arm\": \"a\", "
		"\"state\": \"completed\", \"totals\": {\"kvm.halt_poll_success_ns\": 11771.44704, "
		"\"bpf.clear_dirty_log_ns\": 1500, \"kvm.pf_taken\": 7}}]}");
	CHECK(report && export_report_metrics(report, EXPORT_PROMETHEUS, &prom, &err) == 0);
	CHECK_MSG(strstr(prom, "# TYPE snapbench_kvm_halt_poll_success_seconds_total counter\n"
			       "snapbench_kvm_halt_poll_success_seconds_total{run=\"r1\",arm=\"a\",rep=\"0\"} "
			       "0.00001177144704\n") &&
		  strstr(prom, "snapbench_bpf_clear_dirty_log_seconds_total{run=\"r1\",arm=\"a\",rep=\"0\"} 1.5e-06\n") &&
		  strstr(prom, "snapbench_kvm_pf_taken_total{run=\"r1\",arm=\"a\",rep=\"0\"} 7\n") && !strstr(prom, "_ns_total"),
		  "%s", prom);
	json_object_put(report);
}

int main(void)
{
	test_text();
	test_csv();
	test_numbers();
	test_numbers_shortest();
	test_not_a_report();
	test_empty_run();
	test_seconds();
	test_name_clash();
	test_kcidb();
	return 0;
}
