// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench list: the runs in snapbenchd's results store, filtered. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "parse-number.h"
#include "verbs.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench list [--label L] [--scenario S] [--state S] [--limit N] [--socket PATH] [--json]\n"
		"\n"
		"Lists the runs snapbenchd knows, oldest first: queued, running and finished,\n"
		"also those of earlier boots (the store survives reboots).\n"
		"\n"
		"  --label L       runs with an arm labelled L\n"
		"  --scenario S    runs of scenario S (background-snapshot)\n"
		"  --state S       queued, running, completed, failed or cancelled\n"
		"  --limit N       only the newest N that match\n"
		"  --socket PATH   snapbenchd's socket (default $%s, else %s)\n"
		"  --json          print the runs' summaries as a JSON array (docs/protocol.md)\n"
		"\n"
		"Exit codes: 0 done (also when nothing matches), 2 bad flags, 4 snapbenchd not reachable.\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

static int list_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "label", required_argument, NULL, 'l' },
		{ "scenario", required_argument, NULL, 'S' },
		{ "state", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'n' },
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_json_ struct json_object *req = client_request_new("list", NULL), *reply = NULL;
	struct json_object *runs;
	const char *socket_path = NULL;
	bool json = false;
	int opt, ret;

	if (!req)
		return EXIT_FAIL;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hn:", options, NULL)) >= 0) {
		int64_t n;
		switch (opt) {
		case 'l':
			json_object_object_add(req, "label", json_object_new_string(optarg));
			break;
		case 'S':
			json_object_object_add(req, "scenario", json_object_new_string(optarg));
			break;
		case 't':
			json_object_object_add(req, "state", json_object_new_string(optarg));
			break;
		case 'n':
			if (parse_int64(optarg, 1, 1000000, &n, NULL) < 0) {
				fprintf(stderr, "snapbench list: --limit '%s': expected a number from 1 to 1000000\n", optarg);
				return EXIT_USAGE;
			}
			json_object_object_add(req, "limit", json_object_new_int64(n));
			break;
		case 's':
			socket_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "snapbench list: unexpected argument '%s'; see 'snapbench list --help'\n", argv[optind]);
		return EXIT_USAGE;
	}
	ret = client_request("snapbench list", socket_path, TAKE_PTR(req), 0, NULL, &reply);
	if (ret)
		return ret;
	runs = client_get(reply, "runs", NULL, NULL);
	if (json) {
		client_print_json(runs);
	} else if (runs && json_object_array_length(runs)) {
		print_summary_header(stdout);
		for (size_t i = 0; i < json_object_array_length(runs); i++)
			print_summary_row(stdout, json_object_array_get_idx(runs, i));
	} else {
		fprintf(stderr, "snapbench list: no runs match\n");
	}
	return EXIT_OK;
}

const struct verb verb_list = {
	.name = "list",
	.summary = "list runs (filter by label, scenario, state)",
	.run = list_main,
};
