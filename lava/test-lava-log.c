// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The YAML flow subset of LAVA's log records, and the report between its
 * markers in a log written here (base64; tests/lava/ builds gzip logs from
 * the report fixtures and imports them with snapbench import-lava).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"
#include "json-util.h"
#include "lava-log.h"
#include "sha256.h"
#include "strbuf.h"
#include "yaml-flow.h"

static struct json_object *parse_ok(const char *text)
{
	struct json_object *o = NULL;
	struct sb_error err = { 0 };
	int r = yaml_flow_parse(text, strlen(text), &o, &err);

	CHECK_MSG(r == 0, "%s: %s", text, err.msg);
	return o;
}

static void parse_bad(const char *text, const char *why)
{
	struct json_object *o = NULL;
	struct sb_error err = { 0 };
	int r = yaml_flow_parse(text, strlen(text), &o, &err);

	CHECK_MSG(r == -EBADMSG && !o && strstr(err.msg, why), "%s: %d %s (expected \"%s\")", text, r, err.msg, why);
}

static void test_yaml_flow(void)
{
	struct json_object *o = parse_ok("{\"dt\": \"2026-12-01T10:00:00.5\", \"lvl\": \"target\", \"msg\": "
					 "\"a\\\"b\\\\c\\x41\\u00e9\\U0001F427\\e\\t\\/\\N\"}");
	CHECK(!strcmp(json_lookup_string(o, "lvl"), "target"));
	CHECK_MSG(!strcmp(json_lookup_string(o, "msg"), "a\"b\\cA\xc3\xa9\xf0\x9f\x90\xa7\x1b\t/\xc2\x85"), "%s",
		  json_lookup_string(o, "msg"));
	json_object_put(o);

	/* a results record: a tagged measurement stays the string it was written as */
	o = parse_ok("{\"case\": \"pf_per_s\", \"definition\": \"0_snapbench\", \"result\": \"pass\", "
		     "\"measurement\": ! \"1234.5\", \"units\": '1/s', extra: [a, 'it''s', !!str 3], empty: }");
	CHECK(!strcmp(json_lookup_string(o, "measurement"), "1234.5"));
	CHECK(!strcmp(json_lookup_string(o, "units"), "1/s"));
	CHECK(!strcmp(json_lookup_string(o, "empty"), ""));
	struct json_object *a = json_lookup(o, "extra");
	CHECK(json_object_array_length(a) == 3);
	CHECK(!strcmp(json_object_get_string(json_object_array_get_idx(a, 1)), "it's"));
	CHECK(!strcmp(json_object_get_string(json_object_array_get_idx(a, 2)), "3"));
	json_object_put(o);

	o = parse_ok("  a plain scalar  ");
	CHECK(!strcmp(json_object_get_string(o), "a plain scalar"));
	json_object_put(o);
	parse_bad("a, b", "text after"); /* "," ends a plain scalar */

	parse_bad("{\"msg\": \"cut off", "closing quote");
	parse_bad("{\"msg\": \"x\"", "closing '}'");
	parse_bad("{\"msg\" \"x\"}", "without ':'");
	parse_bad("{\"msg\": \"\\q\"}", "unknown escape");
	parse_bad("{\"msg\": \"\\ud800\"}", "surrogate");
	parse_bad("{\"msg\": \"x\"} trailing", "text after");
	parse_bad("{a: *alias}", "aliases");
	parse_bad("[[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]", "nested deeper");
}

/* A log whose console prints report (with the markers as given) between LAVA's own records. */
static char *log_with(const char *report, const char *begin_extra, int lines_delta, bool cut, bool corrupt)
{
	struct strbuf b = {};
	struct sha256 s;
	char hex[65];
	size_t n = strlen(report);
	char *enc = malloc(base64_encoded_len(n) + 1);
	size_t enc_len, lines = 0;

	CHECK(enc);
	base64_encode(report, n, enc);
	enc_len = strlen(enc);
	sha256_init(&s);
	sha256_update(&s, report, n);
	sha256_hex(&s, hex);
	if (corrupt)
		enc[4] = enc[4] == 'A' ? 'B' : 'A';
	strbuf_append(&b, "- {\"dt\": \"2026-12-01T10:00:00\", \"lvl\": \"info\", \"msg\": \"start: 0 validate\"}\n");
	strbuf_appendf(&b, "- {\"dt\": \"2026-12-01T10:00:01\", \"lvl\": \"target\", \"msg\": \"%s v=1 id=r-1 bytes=%zu "
		       "sha256=%s encoding=base64%s\"}\n", LAVA_REPORT_BEGIN, n, hex, begin_extra);
	for (size_t i = 0; i < enc_len; i += 8, lines++) {
		if (cut && i >= enc_len / 2) {
			free(enc);
			return strbuf_steal(&b);
		}
		strbuf_appendf(&b, "- {\"dt\": \"2026-12-01T10:00:02\", \"lvl\": \"target\", \"msg\": \"%.8s\"}\n", enc + i);
		if (i == 8) /* the kernel's printk between two lines */
			strbuf_append(&b, "- {\"dt\": \"x\", \"lvl\": \"target\", \"msg\": \"[   12.5] kvm: loaded\"}\n");
	}
	strbuf_appendf(&b, "- {\"dt\": \"2026-12-01T10:00:03\", \"lvl\": \"target\", \"msg\": \"%s v=1 id=r-1 lines=%zu\\r\"}\n",
		       LAVA_REPORT_END, lines + (size_t)lines_delta);
	strbuf_append(&b, "- {\"dt\": \"2026-12-01T10:00:04\", \"lvl\": \"results\", \"msg\": {\"case\": \"job\", \"result\": \"pass\"}}\n");
	free(enc);
	return strbuf_steal(&b);
}

static int parse_log(const char *text, struct lava_log *log, struct sb_error *err)
{
	return lava_log_parse("job.log", text, strlen(text), log, err);
}

static void test_log(void)
{
	static const char report[] = "{\"schema\": \"snapbench.run/1\", \"id\": \"r-1\", \"note\": \"a report\"}\n";
	struct lava_log log = { 0 };
	struct sb_error err = { 0 };
	char *text = log_with(report, " job=1234 device=qemu-01 device_type=qemu", 0, false, false);

	CHECK_MSG(parse_log(text, &log, &err) == 0, "%s", err.msg);
	CHECK(log.n_reports == 1 && log.n_records > 5);
	CHECK(log.reports[0].len == strlen(report) && !memcmp(log.reports[0].data, report, strlen(report)));
	CHECK(!strcmp(log.reports[0].id, "r-1") && !strcmp(log.reports[0].job, "1234") &&
	      !strcmp(log.reports[0].device, "qemu-01") && !strcmp(log.reports[0].device_type, "qemu"));
	CHECK(log.reports[0].line == 2);
	lava_log_done(&log);
	free(text);

	text = log_with(report, "", 0, false, false); /* no LAVA fields in the marker */
	CHECK_MSG(parse_log(text, &log, &err) == 0 && !log.reports[0].job, "%s", err.msg);
	lava_log_done(&log);
	free(text);

	text = log_with(report, "", 0, true, false);
	CHECK_MSG(parse_log(text, &log, &err) == -EBADMSG && strstr(err.msg, "cut off") && !log.reports, "%s", err.msg);
	free(text);

	text = log_with(report, "", -1, false, false);
	CHECK_MSG(parse_log(text, &log, &err) == -EBADMSG && strstr(err.msg, "lines were lost"), "%s", err.msg);
	free(text);

	text = log_with(report, "", 0, false, true);
	CHECK_MSG(parse_log(text, &log, &err) == -EBADMSG && strstr(err.msg, "SHA-256"), "%s", err.msg);
	free(text);

	CHECK(parse_log("- {\"lvl\": \"target\", \"msg\": \"hello\"}\n", &log, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "no SNAPBENCH-REPORT-BEGIN among its 1 console lines"), "%s", err.msg);
	CHECK(parse_log("- {\"lvl\": \"target\", \"msg\": \"hello\n- {\"lvl\": 1}\n", &log, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "job.log:1: not a LAVA log record"), "%s", err.msg);
	/* a last record cut off mid-line ends the log: here, before any report */
	CHECK(parse_log("- {\"lvl\": \"target\", \"msg\": \"hel", &log, &err) == -ENOENT);
	CHECK(parse_log("- {\"lvl\": \"target\", \"msg\": \"SNAPBENCH-REPORT-END v=1 id=r-1 lines=0\"}\n", &log, &err) ==
	      -EBADMSG);
	CHECK_MSG(strstr(err.msg, "without its SNAPBENCH-REPORT-BEGIN"), "%s", err.msg);
	CHECK(parse_log("- {\"lvl\": \"target\", \"msg\": \"SNAPBENCH-REPORT-BEGIN v=1 id=../x bytes=3 sha256=00 "
			"encoding=base64\"}\n", &log, &err) == -EBADMSG);
	CHECK_MSG(strstr(err.msg, "id=../x is not a run id"), "%s", err.msg);
}

/* lava-run prints its records without the "- " of a server's job log; a DUT's kernel panic is named. */
static void test_lava_run_and_panic(void)
{
	static const char report[] = "{\"schema\": \"snapbench.run/1\", \"id\": \"r-1\"}\n";
	static const char panic[] = "- {\"lvl\": \"target\", \"msg\": \"[   20.1] Kernel panic - not syncing: sysrq "
				    "triggered crash\\e[0m\"}\n";
	struct sb_error err = { 0 };
	struct lava_log log = { 0 };
	struct strbuf b = {};
	char *text = log_with(report, "", 0, false, false), *bare;

	/* every record without its "- ": the same report */
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		if (!strncmp(p, "- ", 2))
			p += 2;
		strbuf_append_mem(&b, p, (size_t)(nl - p) + 1);
		p = nl + 1;
	}
	bare = strbuf_steal(&b);
	CHECK_MSG(parse_log(bare, &log, &err) == 0 && log.n_reports == 1 && log.n_records == log.n_target + 2, "%s",
		  err.msg);
	lava_log_done(&log);
	free(bare);
	free(text);

	/* cut off by a panic inside the report */
	text = log_with(report, "", 0, true, false);
	strbuf_append(&b, text);
	strbuf_append(&b, panic);
	bare = strbuf_steal(&b);
	CHECK(parse_log(bare, &log, &err) == -EBADMSG && !log.reports);
	CHECK_MSG(strstr(err.msg, "the DUT's kernel panicked inside the report of run r-1 that began at line 2") &&
		  strstr(err.msg, "Kernel panic - not syncing: sysrq triggered crash?[0m;") &&
		  strstr(err.msg, "did not come back"), "%s", err.msg);
	free(bare);
	free(text);

	/* a panic before any report */
	CHECK(parse_log(panic, &log, &err) == -ENOENT);
	CHECK_MSG(strstr(err.msg, "no SNAPBENCH-REPORT-BEGIN: the DUT's kernel panicked before it printed one (line 1"),
		  "%s", err.msg);
}

/* The test cases of a job whose report was cut off: what import-lava --partial rebuilds a run from. */
static void test_cases(void)
{
	static const char report[] = "{\"schema\": \"snapbench.run/1\", \"id\": \"r-1\"}\n";
	static const char cases[] =
		/* LAVA's own action: not one of the job's test cases */
		"- {\"lvl\": \"results\", \"msg\": {\"case\": \"validate\", \"definition\": \"lava\", \"result\": \"pass\"}}\n"
		"- {\"lvl\": \"results\", \"msg\": {\"case\": \"preflight\", \"definition\": \"0_snapbench\", "
		"\"endtc\": ! \"619\", \"result\": \"pass\", \"starttc\": ! \"619\"}}\n"
		"{\"dt\": \"x\", \"lvl\": \"results\", \"msg\": {\"case\": \"rep0.snapshot.pf_per_s\", \"definition\": "
		"\"0_snapbench\", \"measurement\": ! \"1.592895798\", \"result\": \"pass\", \"set\": \"dut\", "
		"\"units\": \"1/s\"}}\n"
		"- {\"lvl\": \"results\", \"msg\": {\"case\": \"rep0.snapshot.tlb_per_s\", \"definition\": \"0_snapbench\", "
		"\"result\": \"skip\", \"set\": \"dut\"}}\n"
		"- {\"lvl\": \"results\", \"msg\": {\"case\": \"rep0.snap\n" /* a damaged record: counted, skipped */
		"- {\"lvl\": \"results\", \"msg\": \"not a case\"}\n";
	static const char job[] = "- {\"lvl\": \"results\", \"msg\": {\"case\": \"job\", \"definition\": \"lava\", "
				  "\"error_msg\": \"lava-test-shell timed out after 600 seconds\", \"error_type\": "
				  "\"Job\", \"result\": \"fail\"}}\n";
	struct lava_cases c = { 0 };
	struct sb_error err = { 0 };
	struct strbuf b = {};
	char *text = log_with(report, " job=4801 device=qemu-01 device_type=a/b", 0, true, false);

	strbuf_append(&b, cases);
	strbuf_append(&b, text);
	strbuf_append(&b, job);
	free(text);
	text = strbuf_steal(&b);
	CHECK_MSG(lava_log_cases("job.log", text, strlen(text), &c, &err) == 0, "%s", err.msg);
	CHECK_MSG(c.n_cases == 3 && c.n_unreadable == 1, "%zu cases, %zu unreadable", c.n_cases, c.n_unreadable);
	CHECK(!strcmp(c.cases[0].name, "preflight") && !c.cases[0].set && !c.cases[0].measurement &&
	      !strcmp(c.cases[0].result, "pass") && !strcmp(c.cases[0].definition, "0_snapbench") && c.cases[0].line == 2);
	CHECK(!strcmp(c.cases[1].name, "rep0.snapshot.pf_per_s") && !strcmp(c.cases[1].set, "dut") &&
	      !strcmp(c.cases[1].measurement, "1.592895798") && !strcmp(c.cases[1].units, "1/s"));
	CHECK(!strcmp(c.cases[2].result, "skip") && !c.cases[2].measurement && !c.cases[2].units);
	CHECK(!strcmp(c.job_result, "fail") && !strcmp(c.job_error_msg, "lava-test-shell timed out after 600 seconds") &&
	      !strcmp(c.job_error_type, "Job"));
	/* the cut report's marker: its run and job, not a device type lava_log_parse() would refuse */
	CHECK(!strcmp(c.begin_id, "r-1") && !strcmp(c.begin_job, "4801") && !strcmp(c.begin_device, "qemu-01") &&
	      !c.begin_device_type && c.begin_line == 8 && !c.begin_ended && c.n_begin_ids == 1);
	lava_cases_done(&c);
	lava_cases_done(&c); /* done twice, and on NULL */
	lava_cases_done(NULL);
	free(text);

	/* a whole report: its marker ended; no test cases (and its job record names no definition) */
	text = log_with(report, "", 0, false, false);
	CHECK(lava_log_cases("job.log", text, strlen(text), &c, &err) == 0);
	CHECK(c.n_cases == 0 && c.begin_ended && !c.begin_job && !c.job_result);
	lava_cases_done(&c);
	free(text);
}

int main(void)
{
	test_yaml_flow();
	test_log();
	test_lava_run_and_panic();
	test_cases();
	return 0;
}
