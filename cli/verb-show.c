// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench show: one run's summary, or its report as JSON. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "compare.h"
#include "arm-table.h"
#include "daemon-format.h"
#include "store-read.h"
#include "exit-codes.h"
#include "export.h"
#include "json-util.h"
#include "macro.h"
#include "report.h"
#include "run-dir.h"
#include "strbuf.h"
#include "timing.h"
#include "verb-args.h"
#include "verbs.h"

#define SHOW_TIMEOUT_MS 300000 /* a whole report with its timelines may be large */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench show ID|REPORT [--format FMT] [--json] [--timeline]\n"
		"                      [--kcidb-origin NAME] [--socket PATH] [--store DIR]\n"
		"\n"
		"Shows a run: its id and state, scenario, kernel(s), QEMU and accelerator, its\n"
		"error if any, each arm's median (min max) per window, and its repetitions.\n"
		"ID asks snapbenchd (queued, running and finished runs); REPORT, a report file\n"
		"or a run directory (a --local run's DIR/RUN-ID), is read here without it.\n"
		"When snapbenchd is not running, ID is read from its run store (saying so).\n"
		"\n"
		"  --format FMT    text (default); json: the run report (snapbench.run/1,\n"
		"                  docs/report-format.md); csv: one row per repetition, window\n"
		"                  and metric; openmetrics or prometheus: the run's figures as\n"
		"                  metrics; kcidb: KCIDB JSON for KernelCI (docs/exports.md)\n"
		"  --json          same as --format json\n"
		"  --timeline      with --json: keep each repetition's timeline (large)\n"
		"  --file          the argument is a report file even if it reads like a run id\n"
		"  --kcidb-origin NAME\n"
		"                  with --format kcidb: the origin of the ids (a-z, 0-9, '_';\n"
		"                  default %s)\n"
		"  --socket PATH   snapbenchd's socket (default $%s,\n"
		"                  else %s)\n"
		"  --store DIR     the run store to read when snapbenchd is not running\n"
		"                  (default %s)\n"
		"\n"
		"Exit codes: 0 done, 2 bad flags or no such run, 4 snapbenchd not reachable\n"
		"and no run store.\n",
		EXPORT_KCIDB_ORIGIN_DEFAULT, PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET, STORE_READ_DEFAULT);
}

/* An integer field as a count, grouped as the tables write numbers (32,768); "-" when it is not one (null: not known). */
static void fmt_json_count(char *buf, size_t len, struct json_object *v)
{
	if (v && json_object_is_type(v, json_type_int))
		compare_format_number((double)json_object_get_int64(v), buf, len);
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

/* "6.1.0-57-amd64 (host VM)": the kernel arm's host VM kernel, else the host's. */
static void arm_kernel(char *buf, size_t len, struct json_object *report, struct json_object *arm)
{
	struct json_object *k = client_get(arm, "kernel", NULL, NULL);

	if (k && json_object_is_type(k, json_type_object))
		snprintf(buf, len, "%s (host VM)", client_get_string(k, "release", "?"));
	else
		snprintf(buf, len, "%s", client_get_string(client_get(report, "host", NULL, NULL), "kernel_release", "?"));
}

/* What ran the guest, layer by layer, and what it means for the times (reports/timing.h). */
static void print_accelerator(struct json_object *report)
{
	struct json_object *accel = client_get(report, "accel", NULL, NULL), *arms = client_get(report, "arms", NULL, NULL);
	struct report_timing timing;

	report_timing_of(report, NULL, &timing);
	if (accel) {
		const char *host_vm = client_get_string(accel, "host_vm", NULL);
		char head[128];
		snprintf(head, sizeof(head), "  accelerator: guest %s%s%s: ", client_get_string(accel, "guest", "?"),
			 host_vm ? ", host VMs " : "", host_vm ? host_vm : "");
		print_wrapped(stdout, head, client_get_string(accel, "reason", "-"), output_width());
	} else {
		/* a report written before accel: its kernel arms' host VMs say theirs */
		const char *vm_accel = NULL, *why = NULL;
		for (size_t i = 0; arms && json_object_is_type(arms, json_type_array) && i < json_object_array_length(arms); i++) {
			struct json_object *hv = client_get(json_object_array_get_idx(arms, i), "kernel", "host_vm", NULL);
			if (hv && (!vm_accel || !strcmp(client_get_string(hv, "accel", ""), "tcg"))) {
				vm_accel = client_get_string(hv, "accel", "?");
				why = client_get_string(hv, "accel_reason", NULL);
			}
		}
		if (vm_accel) {
			_cleanup_free_ char *text = NULL;
			if (asprintf(&text, "host VMs %s%s%s (arms[].kernel.host_vm; the report has no accel)", vm_accel,
				     why ? ": " : "", why ? why : "") < 0)
				text = NULL;
			print_wrapped(stdout, "  accelerator: ", text ? text : vm_accel, output_width());
		}
		else
			print_wrapped(stdout, "  accelerator: ", "not recorded (a report written before accel)",
				      output_width());
	}
	if (timing.emulated)
		print_wrapped(stdout, "  timing emulated: ", "the rows marked emulated (times, rates, latencies) are "
			      "QEMU's emulator's, the counts the kernel's own", output_width());
	else
		printf("  timing native\n");
}

/*
 * What the run is, after its "run ID: STATE" line: the scenario and arms,
 * the kernel(s) they ran on, QEMU, and the accelerator of every layer.
 */
static void print_report_context(struct json_object *report)
{
	struct json_object *arms = client_get(report, "arms", NULL, NULL), *host = client_get(report, "host", NULL, NULL);
	size_t n = arms && json_object_is_type(arms, json_type_array) ? json_object_array_length(arms) : 0;
	char first[160] = "", k[160];
	bool same = true;

	int reps = json_object_get_int(client_get(report, "spec", "repetitions", NULL));
	_cleanup_strbuf_ struct strbuf line = {};

	strbuf_appendf(&line, "%zu arm%s (", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		strbuf_appendf(&line, "%s%s", i ? ", " : "", client_get_string(json_object_array_get_idx(arms, i), "label", "?"));
	strbuf_appendf(&line, ") x %d repetition%s", reps, reps == 1 ? "" : "s");
	snprintf(k, sizeof(k), "  scenario %s: ", client_get_string(client_get(report, "spec", NULL, NULL), "scenario", "?"));
	print_wrapped(stdout, k, line.oom ? "?" : line.s, output_width());
	for (size_t i = 0; i < n; i++) {
		arm_kernel(k, sizeof(k), report, json_object_array_get_idx(arms, i));
		if (!i)
			snprintf(first, sizeof(first), "%s", k);
		same &= !strcmp(first, k);
	}
	struct json_object *host_vm = client_get(report, "host_vm", NULL, NULL);
	const char *auto_kernel = client_get_string(host_vm, "kernel_source", NULL);
	if (auto_kernel && !client_get(json_object_array_get_idx(arms, 0), "kernel", NULL, NULL)) {
		/* the run went into host VMs booting a kernel of snapbench's choosing (host_vm.kernel auto) */
		_cleanup_free_ char *text = NULL;
		if (asprintf(&text, "%s in the host VMs (this host's %s)", auto_kernel,
			     client_get_string(host, "kernel_release", "?")) < 0)
			text = NULL;
		print_wrapped(stdout, "  kernel ", text ? text : auto_kernel, output_width());
	} else if (same) {
		printf("  kernel %s\n", n ? first : client_get_string(host, "kernel_release", "?"));
	} else {
		_cleanup_strbuf_ struct strbuf kernels = {};
		for (size_t i = 0; i < n; i++) {
			struct json_object *arm = json_object_array_get_idx(arms, i);
			arm_kernel(k, sizeof(k), report, arm);
			strbuf_appendf(&kernels, "%s%s %s", i ? ", " : "", client_get_string(arm, "label", "?"), k);
		}
		print_wrapped(stdout, "  kernels: ", kernels.oom ? "?" : kernels.s, output_width());
	}
	struct json_object *qemu = client_get(host, "qemu", NULL, NULL);
	const char *pkg = client_get_string(qemu, "package", NULL);
	snprintf(k, sizeof(k), "%s%s%s%s", client_get_string(qemu, "version", "?"), pkg ? " (" : "", pkg ? pkg : "",
		 pkg ? ")" : "");
	print_wrapped(stdout, "  QEMU ", k, output_width());
	print_accelerator(report);
}

/* A file's head as snapbenchd's summary has it: the times, the repetitions, the error. */
static void print_file_summary(struct json_object *report)
{
	struct json_object *reps = client_get(report, "repetitions", NULL, NULL);
	size_t n = reps && json_object_is_type(reps, json_type_array) ? json_object_array_length(reps) : 0, done = 0,
	       failed = 0;
	const char *msg = client_get_string(client_get(report, "error", NULL, NULL), "message", NULL);

	for (size_t i = 0; i < n; i++) {
		const char *st = client_get_string(json_object_array_get_idx(reps, i), "state", "");
		done += !strcmp(st, "completed");
		failed += !strcmp(st, "failed");
	}
	const char *desc = client_get_string(client_get(report, "spec", NULL, NULL), "description", NULL);
	if (desc)
		print_wrapped(stdout, "  description: ", desc, output_width());
	_cleanup_free_ char *times = NULL;
	if (asprintf(&times, "%s, started %s, finished %s", client_get_string(report, "created", "-"),
		     client_get_string(report, "started", "-"), client_get_string(report, "finished", "-")) < 0)
		times = NULL;
	print_wrapped(stdout, "  created ", times ? times : "-", output_width());
	printf("  repetitions: %zu of %zu completed, %zu failed\n", done, n, failed);
	for (const char *l = msg; l && *l;) { /* each line of it (preflight's, one a failure) wrapped under the first */
		size_t len = strcspn(l, "\n");
		_cleanup_free_ char *line = strndup(l, len);
		print_wrapped_at(stdout, l == msg ? "  error: " : "         ", line ? line : "?", output_width(), 9);
		l += len + (l[len] == '\n');
	}
}

static void print_report(struct json_object *report)
{
	const char *scenario = client_get_string(client_get(report, "spec", NULL, NULL), "scenario", NULL);
	const char *const windows[] = { "pre", report_action_window(report), "post" };
	const char *const titles[] = { "before (pre)", report_scenario_window_title(scenario), "after (post)" };
	struct json_object *arms = client_get(report, "arms", NULL, NULL), *reps = client_get(report, "repetitions", NULL, NULL);

	if (client_get(report, "partial", NULL, NULL)) { /* docs/report-format.md: what is not known is null */
		char head[128];
		snprintf(head, sizeof(head), "\npartial report (from %s): ",
			 client_get_string(client_get(report, "partial", NULL, NULL), "source", "?"));
		print_wrapped_at(stdout, head, client_get_string(client_get(report, "error", NULL, NULL), "message", "-"),
				 output_width() + 1, 4); /* + 1: head's newline takes no column */
	}

	for (size_t a = 0; arms && a < json_object_array_length(arms); a++)
		print_arm_summary(stdout, report, json_object_array_get_idx(arms, a), windows, titles, ARRAY_SIZE(windows));
	if (reps && json_object_array_length(reps)) {
		printf("\nrepetitions:\n");
		for (size_t i = 0; i < json_object_array_length(reps); i++) {
			struct json_object *rep = json_object_array_get_idx(reps, i);
			const char *msg = client_get_string(client_get(rep, "error", NULL, NULL), "message", NULL);
			struct json_object *retried = client_get(rep, "host_vm", "retried_after", NULL);
			char action[256], head[160];
			_cleanup_free_ char *text = NULL;

			fmt_rep_action(action, sizeof(action), report, rep);
			snprintf(head, sizeof(head), "  %3d %-12s %-10s ", json_object_get_int(client_get(rep, "index", NULL, NULL)),
				 client_get_string(rep, "arm", "?"), client_get_string(rep, "state", "?"));
			if (asprintf(&text, "%s%s%s%s", action,
				     /* why is in the summary above (print_summary_block) */
				     json_object_is_type(retried, json_type_string) ? "  (retried on a fresh host VM)" : "",
				     msg ? ": " : "", msg ? msg : "") < 0)
				text = NULL;
			/* a field at a time, within the width: the later lines under the arm's name */
			print_fields(stdout, head, text ? text : action, output_width(), 8);
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
	const char *store;
};

enum { OPT_FORMAT = 0x100, OPT_KCIDB_ORIGIN };

static int parse_option(int opt, const char *arg, void *userdata)
{
	struct show_args *a = userdata;

	if (opt == STORE_READ_OPT) {
		a->store = arg;
		return 0;
	}
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
		STORE_READ_OPTION,
		{},
	};
	static const struct daemon_verb_parser parser = {
		.name = "show",
		.usage = usage,
		.flags = flags,
		.options = options,
		.positional = ARGS_ONE_ID,
		.positional_what = "one run ID ('snapbench list' shows them) or report file",
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
	if (format == SHOW_KCIDB) { /* a document that can outgrow the report: its size said on stderr */
		char size[32];
		compare_format_number((double)strlen(text), size, sizeof(size));
		verb_message("KCIDB JSON of %s bytes written", size);
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

/*
 * show PATH (or --file PATH, or a run of the store read without snapbenchd):
 * the report file read here, as snapbenchd's show would give it (no
 * timelines unless asked)
 */
static int run_file(const struct show_args *a, const char *path)
{
	_cleanup_json_ struct json_object *report = NULL;
	_cleanup_free_ char *in_dir = NULL;
	struct sb_error err = {};
	struct json_object *reps;
	struct stat st;

	/* a run directory (DIR/RUN-ID, as run --local writes it) holds its report.json */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&in_dir, "%s/%s", path, RUN_DIR_REPORT) < 0) {
			in_dir = NULL;
			verb_error("out of memory");
			return EXIT_FAIL;
		}
		path = in_dir;
	}
	if (report_read(path, &report, &err) < 0) {
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
		if (client_terminal_escape_tree(report) < 0) { /* a label's newline must not forge a line */
			verb_error("out of memory");
			return EXIT_FAIL;
		}
		printf("run %s: %s\n", client_get_string(report, "id", "?"), client_get_string(report, "state", "?"));
		print_report_context(report);
		print_file_summary(report);
		print_report(report);
		printf("\nreport: %s\n", path);
	}
	return EXIT_OK;
}

/*
 * Whether show's argument is a report to read here rather than a run id to
 * ask snapbenchd about: --file, anything that names a file or directory, and
 * anything with a '/' or ending in .json (a path whose file is missing is
 * then said so, not looked up as a run).
 */
static bool argument_is_file(const struct show_args *a)
{
	size_t len = strlen(a->d.id);

	if (a->file || strchr(a->d.id, '/') || (len > 5 && !strcmp(a->d.id + len - 5, ".json")))
		return true;
	return access(a->d.id, F_OK) == 0 || !report_id_valid(a->d.id);
}

/* show ID with no snapbenchd: the run's report.json in the store, or exit 2 when the store has no such run */
static int run_from_store(const struct show_args *a, struct store *store)
{
	char dir[4096], path[4200];

	if (store_run_dir(store, a->d.id, dir, sizeof(dir)) < 0 ||
	    snprintf(path, sizeof(path), "%s/%s", dir, RUN_DIR_REPORT) >= (int)sizeof(path)) {
		verb_error("run %s: not a run id", a->d.id);
		return EXIT_USAGE;
	}
	if (access(path, F_OK) < 0) {
		verb_error("run %s: no such run in the run store %s ('snapbench list' shows them)", a->d.id,
			   store_runs_dir(store));
		return EXIT_USAGE;
	}
	return run_file(a, path);
}

static int run(const struct show_args *a)
{
	_cleanup_json_ struct json_object *reply = NULL;
	_cleanup_client_ struct client *c = NULL;
	_cleanup_(store_freep) struct store *store = NULL;
	struct json_object *req;
	int ret;

	if (argument_is_file(a))
		return run_file(a, a->d.id);
	ret = store_read_connect("snapbench show", a->d.socket_path, a->store, &c, &store);
	if (ret)
		return ret;
	if (store)
		return run_from_store(a, store);
	req = client_request_new("show", a->d.id);
	if (req && a->timeline)
		json_object_object_add(req, "timeline", json_object_new_boolean(true));
	ret = client_request_on(c, "snapbench show", req, SHOW_TIMEOUT_MS, &reply);
	if (ret)
		return ret;
	if (a->format == SHOW_CSV || a->format == SHOW_OPENMETRICS || a->format == SHOW_PROMETHEUS ||
	    a->format == SHOW_KCIDB)
		return print_export(a, a->format, client_get(reply, "report", NULL, NULL));
	if (a->format == SHOW_JSON) {
		add_derived_accel(client_get(reply, "report", NULL, NULL));
		client_print_json(client_get(reply, "report", NULL, NULL));
	} else {
		struct json_object *sum = client_get(reply, "run", NULL, NULL);
		if (client_terminal_escape_tree(reply) < 0) { /* a label's newline must not forge a line */
			verb_error("out of memory");
			return EXIT_FAIL;
		}
		printf("run %s: %s\n", client_get_string(sum, "id", "?"), client_get_string(sum, "state", "?"));
		print_report_context(client_get(reply, "report", NULL, NULL));
		print_summary_details(stdout, sum, "");
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
