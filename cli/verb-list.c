// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench list: the runs in snapbenchd's results store, filtered. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "macro.h"
#include "parse-number.h"
#include "report.h"
#include "store-read.h"
#include "verb-args.h"
#include "verbs.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench list [--label L] [--scenario S] [--state S] [--limit N]\n"
		"                      [--socket PATH] [--store DIR] [--json]\n"
		"\n"
		"Lists the runs snapbenchd knows, oldest first: queued, running and finished,\n"
		"also those of earlier boots (the store survives reboots). When snapbenchd is\n"
		"not running, the runs of its run store, read here (saying so).\n"
		"\n"
		"  --label L       runs with an arm labelled L\n"
		"  --scenario S    runs of scenario S (background-snapshot)\n"
		"  --state S       queued, running, completed, failed or cancelled\n"
		"  --limit N       only the newest N that match\n"
		"  --socket PATH   snapbenchd's socket (default $%s,\n"
		"                  else %s)\n"
		"  --store DIR     the run store to read when snapbenchd is not running\n"
		"                  (default %s)\n"
		"  --json          print the runs' summaries as a JSON array (docs/protocol.md)\n"
		"\n"
		"Exit codes: 0 done (also when nothing matches), 2 bad flags, 4 snapbenchd not\n"
		"reachable and no run store.\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET, STORE_READ_DEFAULT);
}

struct list_args {
	struct daemon_args d;
	const char *label, *scenario, *state, *store;
	int64_t limit; /* 0: all */
};

static int parse_option(int opt, const char *arg, void *userdata)
{
	struct list_args *a = userdata;
	int64_t n;

	switch (opt) {
	case 'l':
		a->label = arg;
		break;
	case 'S':
		a->scenario = arg;
		break;
	case 't':
		a->state = arg;
		break;
	case STORE_READ_OPT:
		a->store = arg;
		break;
	case 'n':
		if (parse_int64(arg, 1, 1000000, &n, NULL) < 0) {
			verb_error("--limit '%s': expected a number from 1 to 1000000", arg);
			return EXIT_USAGE;
		}
		a->limit = n;
		break;
	}
	return 0;
}

static int parse_argv(int argc, char **argv, struct list_args *a)
{
	static const struct option options[] = {
		{ "label", required_argument, NULL, 'l' },
		{ "scenario", required_argument, NULL, 'S' },
		{ "state", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'n' },
		STORE_READ_OPTION,
		{},
	};
	static const struct daemon_verb_parser parser = {
		.name = "list",
		.usage = usage,
		.options = options,
		.shortopts = "n:",
		.positional = ARGS_NONE,
		.parse_option = parse_option,
	};

	*a = (struct list_args){};
	return daemon_args_parse(&parser, argc, argv, &a->d, a);
}

static struct json_object *list_request(const struct list_args *a)
{
	_cleanup_json_ struct json_object *req = client_request_new("list", NULL);

	if (!req)
		return NULL;
	if (a->label)
		json_object_object_add(req, "label", json_object_new_string(a->label));
	if (a->scenario)
		json_object_object_add(req, "scenario", json_object_new_string(a->scenario));
	if (a->state)
		json_object_object_add(req, "state", json_object_new_string(a->state));
	if (a->limit)
		json_object_object_add(req, "limit", json_object_new_int64(a->limit));
	return TAKE_PTR(req);
}

/* The runs of the store read here, filtered as snapbenchd's list filters them; 0 or an exit code. */
static int list_store(const struct list_args *a, struct store *store, struct json_object **runs)
{
	struct store_filter f = { .label = a->label, .scenario = a->scenario, .state = -1,
				  .limit = (unsigned long long)a->limit };
	struct sb_error err = {};

	if (a->state && (f.state = report_state_from_string(a->state)) < 0) {
		verb_error("--state %s: use queued, running, completed, failed or cancelled", a->state);
		return EXIT_USAGE;
	}
	if (store_list(store, &f, runs, &err) < 0) {
		verb_error("%s", err.msg);
		return EXIT_FAIL;
	}
	return 0;
}

static int run(const struct list_args *a)
{
	_cleanup_json_ struct json_object *reply = NULL, *stored = NULL;
	_cleanup_client_ struct client *c = NULL;
	_cleanup_(store_freep) struct store *store = NULL;
	struct json_object *req, *runs;
	int ret;

	ret = store_read_connect("snapbench list", a->d.socket_path, a->store, &c, &store);
	if (ret)
		return ret;
	if (store) {
		ret = list_store(a, store, &stored);
		if (ret)
			return ret;
		runs = stored;
	} else {
		if (!(req = list_request(a)))
			return EXIT_FAIL;
		ret = client_request_on(c, "snapbench list", req, 0, &reply);
		if (ret)
			return ret;
		runs = client_get(reply, "runs", NULL, NULL);
	}
	if (a->d.json) {
		client_print_json(runs);
	} else if (runs && json_object_array_length(runs)) {
		print_summary_table(stdout, runs, output_width());
	} else {
		fprintf(stderr, "snapbench list: no runs match\n");
	}
	return EXIT_OK;
}

VERB_MAIN(list_main, struct list_args)

const struct verb verb_list = {
	.name = "list",
	.summary = "list runs (filter by label, scenario, state)",
	.run = list_main,
};
