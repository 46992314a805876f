// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench show: one run's summary, or its report as JSON. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "macro.h"
#include "verbs.h"

#define SHOW_TIMEOUT_MS 300000 /* a whole report with its timelines may be large */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench show ID [--json] [--timeline] [--socket PATH]\n"
		"\n"
		"Shows run ID: its state, its error if any, each arm's median [min max] per\n"
		"window, and its repetitions. Works for queued, running and finished runs.\n"
		"\n"
		"  --json          print the run report (snapbench.run/1, docs/report-format.md)\n"
		"  --timeline      with --json: keep each repetition's timeline (large)\n"
		"  --socket PATH   snapbenchd's socket (default $%s, else %s)\n"
		"\n"
		"Exit codes: 0 done, 2 bad flags or no such run, 4 snapbenchd not reachable.\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

static void fmt_stat(struct json_object *st, char *buf, size_t len)
{
	struct json_object *med = client_get(st, "median", NULL, NULL);
	char a[24], b[24], c[24];

	if (!st || !med) {
		snprintf(buf, len, "%s", st ? "n/a" : "");
		return;
	}
	fmt_json_rate(a, sizeof(a), med);
	fmt_json_rate(b, sizeof(b), client_get(st, "min", NULL, NULL));
	fmt_json_rate(c, sizeof(c), client_get(st, "max", NULL, NULL));
	if (json_object_get_int(client_get(st, "n", NULL, NULL)) > 1)
		snprintf(buf, len, "%s [%s %s]", a, b, c);
	else
		snprintf(buf, len, "%s", a);
}

static void print_report(struct json_object *report)
{
	static const struct {
		const char *metric, *label;
	} rows[] = {
		{ "pf_per_s", "pf/s" },
		{ "tlb_per_s", "tlb/s" },
		{ "invalidations_per_s", "invalidations/s" },
		{ "invalidations_per_s.uffd-wp", "  of which uffd-wp" },
		{ "guest_ops_per_s", "guest ops/s" },
		{ "latency_p50_ns", "latency p50 (ns)" },
		{ "latency_p99_ns", "latency p99 (ns)" },
		{ "latency_p999_ns", "latency p99.9 (ns)" },
		{ "snapshot_duration_s", "snapshot (s)" },
		{ "snapshot_pages_per_s", "snapshot pages/s" },
	};
	static const char *const windows[] = { "pre", "snapshot", "post" };
	struct json_object *arms = client_get(report, "arms", NULL, NULL), *reps = client_get(report, "repetitions", NULL, NULL);

	for (size_t a = 0; arms && a < json_object_array_length(arms); a++) {
		struct json_object *arm = json_object_array_get_idx(arms, a);
		printf("\narm %s: %d of %d repetitions completed; median [min max]\n", client_get_string(arm, "label", "?"),
		       json_object_get_int(client_get(arm, "repetitions", "completed", NULL)),
		       json_object_get_int(client_get(arm, "repetitions", "total", NULL)));
		printf("  %-20s %-26s %-26s %s\n", "", "before (pre)", "during the snapshot", "after (post)");
		for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
			char cell[3][80];
			bool any = false;
			for (size_t w = 0; w < ARRAY_SIZE(windows); w++) {
				struct json_object *st = client_get(arm, "windows", windows[w], rows[i].metric);
				any |= st != NULL;
				fmt_stat(st, cell[w], sizeof(cell[w]));
			}
			if (any)
				printf("  %-20s %-26s %-26s %s\n", rows[i].label, cell[0], cell[1], cell[2]);
		}
	}
	if (reps && json_object_array_length(reps)) {
		printf("\nrepetitions:\n");
		for (size_t i = 0; i < json_object_array_length(reps); i++) {
			struct json_object *rep = json_object_array_get_idx(reps, i);
			const char *msg = client_get_string(client_get(rep, "error", NULL, NULL), "message", NULL);
			char dur[24];
			fmt_json_rate(dur, sizeof(dur), client_get(rep, "snapshot", "duration_s", NULL));
			printf("  %3d %-12s %-10s snapshot %s s%s%s\n", json_object_get_int(client_get(rep, "index", NULL, NULL)),
			       client_get_string(rep, "arm", "?"), client_get_string(rep, "state", "?"), dur,
			       msg ? ": " : "", msg ? msg : "");
		}
	}
}

static int show_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "timeline", no_argument, NULL, 't' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_client_ struct client *c = NULL;
	struct json_object *req = NULL, *reply = NULL;
	struct sb_error err = {};
	const char *socket_path = NULL, *code, *msg;
	bool json = false, timeline = false;
	int opt, r, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 't':
			timeline = true;
			break;
		case 's':
			socket_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "snapbench show: give one run ID ('snapbench list' shows them); see 'snapbench show --help'\n");
		return EXIT_USAGE;
	}
	if (timeline && !json) {
		fprintf(stderr, "snapbench show: --timeline goes with --json\n");
		return EXIT_USAGE;
	}

	req = json_object_new_object();
	if (!req)
		return EXIT_FAIL;
	json_object_object_add(req, "op", json_object_new_string("show"));
	json_object_object_add(req, "run", json_object_new_string(argv[optind]));
	if (timeline)
		json_object_object_add(req, "timeline", json_object_new_boolean(true));
	r = client_connect(socket_path, &c, &err);
	if (r >= 0)
		r = client_call(c, req, SHOW_TIMEOUT_MS, &reply, &err);
	if (r < 0) {
		fprintf(stderr, "snapbench show: %s\n", err.msg);
		ret = client_exit_code_errno(r);
		goto out;
	}
	msg = client_reply_error(reply, &code);
	if (msg) {
		fprintf(stderr, "snapbench show: %s\n", msg);
		ret = client_exit_code(code);
		goto out;
	}
	if (json) {
		client_print_json(client_get(reply, "report", NULL, NULL));
	} else {
		struct json_object *sum = client_get(reply, "run", NULL, NULL);
		print_summary_block(stdout, sum, "");
		if (client_get(sum, "progress", NULL, NULL)) {
			char line[256];
			fmt_progress(line, sizeof(line), client_get(sum, "progress", NULL, NULL));
			printf("  progress: %s\n", line);
		}
		print_report(client_get(reply, "report", NULL, NULL));
		printf("\nreport: %s\n", client_get_string(reply, "path", "-"));
	}
	ret = EXIT_OK;
out:
	json_object_put(req);
	json_object_put(reply);
	return ret;
}

const struct verb verb_show = {
	.name = "show",
	.summary = "show one run: summary and figures, or its report as JSON",
	.run = show_main,
};
