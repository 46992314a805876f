// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench show: one run's summary, or its report as JSON. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "macro.h"
#include "verb-args.h"
#include "verbs.h"

#define SHOW_TIMEOUT_MS 300000 /* a whole report with its timelines may be large */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench show ID [--json] [--timeline] [--socket PATH]\n"
		"\n"
		"Shows run ID: its state, its error if any, each arm's median (min max) per\n"
		"window, and its repetitions. Works for queued, running and finished runs.\n"
		"\n"
		"  --json          print the run report (snapbench.run/1, docs/report-format.md)\n"
		"  --timeline      with --json: keep each repetition's timeline (large)\n"
		"  --socket PATH   snapbenchd's socket (default $%s, else %s)\n"
		"\n"
		"Exit codes: 0 done, 2 bad flags or no such run, 4 snapbenchd not reachable.\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

static void print_report(struct json_object *report)
{
	static const char *const windows[] = { "pre", "snapshot", "post" };
	static const char *const titles[] = { "before (pre)", "during the snapshot", "after (post)" };
	struct json_object *arms = client_get(report, "arms", NULL, NULL), *reps = client_get(report, "repetitions", NULL, NULL);

	for (size_t a = 0; arms && a < json_object_array_length(arms); a++) {
		struct json_object *arm = json_object_array_get_idx(arms, a);
		printf("\narm %s: %d of %d repetitions completed; median (min max)\n", client_get_string(arm, "label", "?"),
		       json_object_get_int(client_get(arm, "repetitions", "completed", NULL)),
		       json_object_get_int(client_get(arm, "repetitions", "total", NULL)));
		print_arm_windows(stdout, arm, windows, titles, ARRAY_SIZE(windows));
		print_unavailable(stdout, report, arm);
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

struct show_args {
	struct daemon_args d;
	bool timeline;
};

static int parse_argv(int argc, char **argv, struct show_args *a)
{
	static const struct verb_flag flags[] = {
		{ "timeline", offsetof(struct show_args, timeline) },
		{},
	};
	static const struct daemon_verb_parser parser = {
		.name = "show",
		.usage = usage,
		.flags = flags,
		.positional = ARGS_ONE_ID,
	};
	int r;

	*a = (struct show_args){};
	r = daemon_args_parse(&parser, argc, argv, &a->d, a);
	if (r != ARGS_GO_ON)
		return r;
	if (a->timeline && !a->d.json) {
		fprintf(stderr, "snapbench show: --timeline goes with --json\n");
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

static int run(const struct show_args *a)
{
	_cleanup_json_ struct json_object *reply = NULL;
	struct json_object *req;
	int ret;

	req = client_request_new("show", a->d.id);
	if (req && a->timeline)
		json_object_object_add(req, "timeline", json_object_new_boolean(true));
	ret = client_request("snapbench show", a->d.socket_path, req, SHOW_TIMEOUT_MS, NULL, &reply);
	if (ret)
		return ret;
	if (a->d.json) {
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
