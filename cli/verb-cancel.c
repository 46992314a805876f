// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench cancel: cancel a queued or running run. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "run-remote.h"
#include "verbs.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench cancel ID [--wait] [--socket PATH] [--json]\n"
		"\n"
		"Cancels run ID. A queued run is cancelled at once; a running one stops cleanly:\n"
		"the VM is stopped, knobs are restored and the report is marked cancelled (with\n"
		"what was measured until then). Root and members of snapbenchd's group may cancel.\n"
		"\n"
		"  --wait          return once the run has ended\n"
		"  --socket PATH   snapbenchd's socket (default $%s, else %s)\n"
		"  --json          print the run's summary as JSON\n"
		"\n"
		"Exit codes: 0 cancelled (or cancelling, without --wait), 1 the run had already\n"
		"ended, 2 bad flags or no such run, 4 snapbenchd not reachable, 5 not authorized.\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

static int cancel_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "wait", no_argument, NULL, 'w' },
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_client_ struct client *c = NULL;
	_cleanup_json_ struct json_object *reply = NULL, *final = NULL;
	const char *socket_path = NULL, *id;
	bool json = false, wait = false, cancelling;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (opt) {
		case 'w':
			wait = true;
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
	if (optind + 1 != argc) {
		fprintf(stderr, "snapbench cancel: give one run ID ('snapbench list' shows them); see 'snapbench cancel --help'\n");
		return EXIT_USAGE;
	}
	id = argv[optind];
	ret = client_request("snapbench cancel", socket_path, client_request_new("cancel", id), 0, &c, &reply);
	if (ret)
		return ret;
	cancelling = json_object_get_boolean(client_get(reply, "cancelling", NULL, NULL));
	if (wait && cancelling) {
		ret = remote_follow(c, "snapbench cancel", socket_path, id, true, false, &final);
		if (ret != EXIT_OK)
			return ret;
	} else {
		final = json_object_get(client_get(reply, "run", NULL, NULL));
	}
	if (json)
		client_print_json(final);
	else if (cancelling && !wait)
		printf("run %s: cancelling; the VM is being stopped and knobs restored ('snapbench status' shows when it is done)\n",
		       id);
	else
		printf("run %s: %s\n", id, client_get_string(final, "state", "?"));
	return EXIT_OK;
}

const struct verb verb_cancel = {
	.name = "cancel",
	.summary = "cancel a queued or running run",
	.run = cancel_main,
};
