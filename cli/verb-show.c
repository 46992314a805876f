// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench show: one run's summary, or its report as JSON. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "export.h"
#include "json-util.h"
#include "macro.h"
#include "report.h"
#include "timing.h"
#include "verb-args.h"
#include "verbs.h"

#define SHOW_TIMEOUT_MS 300000 /* a whole report with its timelines may be large */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench show ID [--format FMT] [--json] [--timeline] [--kcidb-origin NAME]\n"
		"                      [--socket PATH]\n"
		"       snapbench show --file REPORT [--format FMT] [--json] [--timeline] [--kcidb-origin NAME]\n"
		"\n"
		"Shows run ID: its state, its error if any, each arm's median (min max) per\n"
		"window, and its repetitions. Works for queued, running and finished runs.\n"
		"With --file, shows the report file REPORT (a --local run's DIR/RUN-ID/report.json)\n"
		"without asking snapbenchd.\n"
		"\n"
		"  --format FMT    text (default); json: the run report (snapbench.run/1,\n"
		"                  docs/report-format.md); csv: one row per repetition, window\n"
		"                  and metric; openmetrics or prometheus: the run's figures as\n"
		"                  metrics; kcidb: KCIDB JSON for KernelCI (docs/exports.md)\n"
		"  --json          same as --format json\n"
		"  --timeline      with --json: keep each repetition's timeline (large)\n"
		"  --file          the argument is a report file, read here\n"
		"  --kcidb-origin NAME\n"
		"                  with --format kcidb: the origin of the ids (a-z, 0-9, '_';\n"
		"                  default %s)\n"
		"  --socket PATH   snapbenchd's socket (default $%s, else %s)\n"
		"\n"
		"Exit codes: 0 done, 2 bad flags or no such run, 4 snapbenchd not reachable.\n",
		EXPORT_KCIDB_ORIGIN_DEFAULT, PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

/* An integer field as a count, "-" when it is not one (null: not known). */
static void fmt_json_count(char *buf, size_t len, struct json_object *v)
{
	if (v && json_object_is_type(v, json_type_int))
		snprintf(buf, len, "%" PRId64, json_object_get_int64(v));
	else
		snprintf(buf, len, "-");
}

/*
 * The figures of a repetition's action as the report records them: the
 * snapshot's duration; a dirty-log migration's window, status, passes and
 * steady pass time; a postcopy migration's window, status, the
 * destination's pass, its page requests, the chunk and the pages lost.
 */
static void fmt_rep_action(char *buf, size_t len, struct json_object *report, struct json_object *rep)
{
	struct json_object *mig = client_get(rep, "migration", NULL, NULL), *pc = client_get(rep, "postcopy", NULL, NULL);
	struct json_object *win = client_get(rep, "windows", "migration", NULL);
	char dur[24], a[24], b[24], c[24], d[24];

	struct json_object *numa = client_get(rep, "numa", NULL, NULL);

	if (numa) {
		struct json_object *steady = client_get(rep, "windows", "steady", NULL);
		fmt_json_rate(dur, sizeof(dur), client_get(steady, "duration_s", NULL, NULL));
		fmt_json_count(a, sizeof(a), client_get(steady, "metrics", "numa_kvm_flushes", NULL));
		fmt_json_count(b, sizeof(b), client_get(steady, "metrics", "numa_invalidations", NULL));
		fmt_json_count(c, sizeof(c), client_get(rep, "vm", "pinned_pages", NULL));
		fmt_json_count(d, sizeof(d), client_get(numa, "nodes", NULL, NULL));
		snprintf(buf, len, "steady %s s  KVM flushes for NUMA hinting %s  NUMA-hinting invalidations %s  pinned pages %s  nodes %s",
			 dur, a, b, c, d);
		return;
	}
	if (!mig && !pc && strcmp(report_action_window(report), "migration")) {
		fmt_json_rate(dur, sizeof(dur), client_get(rep, "snapshot", "duration_s", NULL));
		snprintf(buf, len, "snapshot %s s", dur);
		return;
	}
	fmt_json_rate(dur, sizeof(dur), client_get(win, "duration_s", NULL, NULL));
	if (pc) {
		fmt_json_rate(a, sizeof(a), client_get(pc, "pass", "ms", NULL));
		fmt_json_count(b, sizeof(b), client_get(pc, "postcopy_requests", NULL, NULL));
		fmt_json_count(c, sizeof(c), client_get(pc, "chunk_bytes", NULL, NULL));
		fmt_json_count(d, sizeof(d), client_get(pc, "pass", "mismatches", NULL));
		snprintf(buf, len, "migration %s s (%s)  fault pass %s ms  postcopy requests %s  chunk %s B  pages lost %s",
			 dur, client_get_string(pc, "status", "?"), a, b, c, d);
		return;
	}
	struct json_object *passes = client_get(mig, "iterations", NULL, NULL);
	if (passes && json_object_is_type(passes, json_type_array))
		snprintf(a, sizeof(a), "%zu", json_object_array_length(passes));
	else
		snprintf(a, sizeof(a), "-");
	fmt_json_rate(b, sizeof(b), client_get(win, "metrics", "iteration_s", NULL));
	snprintf(buf, len, "migration %s s (%s)  passes %s  pass %s s", dur, client_get_string(mig, "status", "?"), a, b);
}

static void print_report(struct json_object *report)
{
	const char *scenario = client_get_string(client_get(report, "spec", NULL, NULL), "scenario", NULL);
	const char *const windows[] = { "pre", report_action_window(report), "post" };
	const char *const titles[] = { "before (pre)", report_scenario_window_title(scenario), "after (post)" };
	struct json_object *arms = client_get(report, "arms", NULL, NULL), *reps = client_get(report, "repetitions", NULL, NULL);

	struct report_timing run_timing;
	report_timing_of(report, NULL, &run_timing);
	if (run_timing.emulated) {
		client_terminal_sanitize(run_timing.why, strlen(run_timing.why));
		printf("\ntiming emulated (%s): the times, rates and latencies marked emulated are QEMU's emulator's, "
		       "the counts the kernel's own\n", run_timing.why);
	}
	if (client_get(report, "partial", NULL, NULL)) /* docs/report-format.md: what is not known is null */
		printf("\npartial report (from %s): %s\n", client_get_string(client_get(report, "partial", NULL, NULL),
									    "source", "?"),
		       client_get_string(client_get(report, "error", NULL, NULL), "message", "-"));

	for (size_t a = 0; arms && a < json_object_array_length(arms); a++) {
		struct json_object *arm = json_object_array_get_idx(arms, a);
		printf("\narm %s: %d of %d repetitions completed; median (min max)\n", client_get_string(arm, "label", "?"),
		       json_object_get_int(client_get(arm, "repetitions", "completed", NULL)),
		       json_object_get_int(client_get(arm, "repetitions", "total", NULL)));
		struct report_timing timing;
		report_timing_of(report, client_get_string(arm, "label", NULL), &timing);
		print_arm_windows(stdout, arm, windows, titles, ARRAY_SIZE(windows), timing.emulated);
		print_unavailable(stdout, report, arm);
	}
	if (reps && json_object_array_length(reps)) {
		printf("\nrepetitions:\n");
		for (size_t i = 0; i < json_object_array_length(reps); i++) {
			struct json_object *rep = json_object_array_get_idx(reps, i);
			const char *msg = client_get_string(client_get(rep, "error", NULL, NULL), "message", NULL);
			struct json_object *retried = client_get(rep, "host_vm", "retried_after", NULL);
			char action[256];

			fmt_rep_action(action, sizeof(action), report, rep);
			printf("  %3d %-12s %-10s %s%s%s%s\n", json_object_get_int(client_get(rep, "index", NULL, NULL)),
			       client_get_string(rep, "arm", "?"), client_get_string(rep, "state", "?"), action,
			       /* why is in the summary above (print_summary_block) */
			       json_object_is_type(retried, json_type_string) ? "  (retried on a fresh host VM)" : "",
			       msg ? ": " : "", msg ? msg : "");
		}
	}
}

enum show_format { SHOW_TEXT, SHOW_JSON, SHOW_CSV, SHOW_OPENMETRICS, SHOW_PROMETHEUS, SHOW_KCIDB, _SHOW_FORMAT_MAX };

static const char *const show_format_names[_SHOW_FORMAT_MAX] = {
	[SHOW_TEXT] = "text",
	[SHOW_JSON] = "json",
	[SHOW_CSV] = "csv",
	[SHOW_OPENMETRICS] = "openmetrics",
	[SHOW_PROMETHEUS] = "prometheus",
	[SHOW_KCIDB] = "kcidb",
};

struct show_args {
	struct daemon_args d;
	bool timeline, file;
	enum show_format format;
	bool format_given;
	const char *kcidb_origin;
};

enum { OPT_FORMAT = 0x100, OPT_KCIDB_ORIGIN };

static int parse_option(int opt, const char *arg, void *userdata)
{
	struct show_args *a = userdata;

	if (opt == OPT_KCIDB_ORIGIN) {
		if (!export_kcidb_origin_valid(arg)) {
			verb_error("--kcidb-origin %s: use lowercase letters, digits and '_' "
				"(e.g. %s)", arg, EXPORT_KCIDB_ORIGIN_DEFAULT);
			return EXIT_USAGE;
		}
		a->kcidb_origin = arg;
		return 0;
	}
	assert(opt == OPT_FORMAT);
	for (size_t f = 0; f < _SHOW_FORMAT_MAX; f++)
		if (!strcmp(arg, show_format_names[f])) {
			a->format = (enum show_format)f;
			a->format_given = true;
			return 0;
		}
	verb_error("--format %s: unknown format; use text, json, csv, openmetrics, prometheus or kcidb", arg);
	return EXIT_USAGE;
}

static int parse_argv(int argc, char **argv, struct show_args *a)
{
	static const struct verb_flag flags[] = {
		{ "timeline", offsetof(struct show_args, timeline) },
		{ "file", offsetof(struct show_args, file) },
		{},
	};
	static const struct option options[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "kcidb-origin", required_argument, NULL, OPT_KCIDB_ORIGIN },
		{},
	};
	static const struct daemon_verb_parser parser = {
		.name = "show",
		.usage = usage,
		.flags = flags,
		.options = options,
		.positional = ARGS_ONE_ID,
		.parse_option = parse_option,
	};
	int r;

	*a = (struct show_args){};
	r = daemon_args_parse(&parser, argc, argv, &a->d, a);
	if (r != ARGS_GO_ON)
		return r;
	if (a->d.json && a->format_given && a->format != SHOW_JSON) {
		verb_error("--json and --format %s ask for two formats; give one", show_format_names[a->format]);
		return EXIT_USAGE;
	}
	if (a->d.json)
		a->format = SHOW_JSON;
	if (a->timeline && a->format != SHOW_JSON) {
		verb_error("--timeline goes with --json");
		return EXIT_USAGE;
	}
	if (a->kcidb_origin && a->format != SHOW_KCIDB) {
		verb_error("--kcidb-origin goes with --format kcidb");
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

/* The report as CSV, metrics or KCIDB on stdout; an exit code. */
static int print_export(const struct show_args *a, enum show_format format, struct json_object *report)
{
	_cleanup_free_ char *text = NULL;
	struct sb_error err = { 0 };
	int r;

	if (format == SHOW_CSV)
		r = export_report_csv(report, &text, &err);
	else if (format == SHOW_KCIDB)
		r = export_report_kcidb(report, a->kcidb_origin ? a->kcidb_origin : EXPORT_KCIDB_ORIGIN_DEFAULT, &text,
					&err);
	else
		r = export_report_metrics(report, format == SHOW_OPENMETRICS ? EXPORT_OPENMETRICS : EXPORT_PROMETHEUS,
					  &text, &err);
	if (r < 0) {
		verb_error("%s", err.msg);
		return EXIT_FAIL; /* snapbenchd's reply, not the user's input, is at fault */
	}
	if (fputs(text, stdout) < 0 || fflush(stdout) != 0) {
		verb_error("cannot write to stdout: %s", strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/*
 * A report written before "accel" whose kernel arms' host VMs ran under TCG
 * gets the accel object derived from them (docs/report-format.md#accelerators),
 * so that --json says the timing of every report alike.
 */
static void add_derived_accel(struct json_object *report)
{
	struct report_timing timing;
	struct json_object *accel;

	if (!report || json_lookup(report, "accel"))
		return;
	report_timing_of(report, NULL, &timing);
	if (!timing.emulated || !(accel = json_object_new_object()))
		return;
	char reason[400];
	snprintf(reason, sizeof(reason), "derived from arms[].kernel.host_vm.accel (a report written before accel): %s",
		 timing.why);
	json_object_object_add(accel, "guest", json_object_new_string("kvm"));
	json_object_object_add(accel, "host_vm", json_object_new_string("tcg"));
	json_object_object_add(accel, "timing", json_object_new_string("emulated"));
	json_object_object_add(accel, "reason", json_object_new_string(reason));
	json_object_object_add(report, "accel", accel);
}

/* show --file: the report file read here, as snapbenchd's show would give it (no timelines unless asked) */
static int run_file(const struct show_args *a)
{
	_cleanup_json_ struct json_object *report = NULL;
	struct sb_error err = {};
	struct json_object *reps;

	if (report_read(a->d.id, &report, &err) < 0) {
		verb_error("%s", err.msg);
		return EXIT_USAGE;
	}
	reps = json_lookup(report, "repetitions");
	for (size_t i = 0; !a->timeline && reps && json_object_is_type(reps, json_type_array) &&
			   i < json_object_array_length(reps); i++) {
		struct json_object *rep = json_object_array_get_idx(reps, i);
		if (json_object_is_type(rep, json_type_object))
			json_object_object_del(rep, "timeline");
	}
	if (a->format == SHOW_CSV || a->format == SHOW_OPENMETRICS || a->format == SHOW_PROMETHEUS ||
	    a->format == SHOW_KCIDB)
		return print_export(a, a->format, report);
	if (a->format == SHOW_JSON) {
		add_derived_accel(report);
		client_print_json(report);
	} else {
		print_report(report);
		printf("\nreport: %s\n", a->d.id);
	}
	return EXIT_OK;
}

static int run(const struct show_args *a)
{
	_cleanup_json_ struct json_object *reply = NULL;
	struct json_object *req;
	int ret;

	if (a->file)
		return run_file(a);
	req = client_request_new("show", a->d.id);
	if (req && a->timeline)
		json_object_object_add(req, "timeline", json_object_new_boolean(true));
	ret = client_request("snapbench show", a->d.socket_path, req, SHOW_TIMEOUT_MS, NULL, &reply);
	if (ret)
		return ret;
	if (a->format == SHOW_CSV || a->format == SHOW_OPENMETRICS || a->format == SHOW_PROMETHEUS ||
	    a->format == SHOW_KCIDB)
		return print_export(a, a->format, client_get(reply, "report", NULL, NULL));
	if (a->format == SHOW_JSON) {
		add_derived_accel(client_get(reply, "report", NULL, NULL));
		client_print_json(client_get(reply, "report", NULL, NULL));
	} else {
		print_summary_block(stdout, client_get(reply, "run", NULL, NULL), "");
		print_report(client_get(reply, "report", NULL, NULL));
		printf("\nreport: %s\n", client_get_string(reply, "path", "-"));
	}
	return EXIT_OK;
}

VERB_MAIN(show_main, struct show_args)

const struct verb verb_show = {
	.name = "show",
	.summary = "show one run: summary and figures, or its report as JSON",
	.run = show_main,
};
