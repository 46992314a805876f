// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench cancel: cancel a queued or running run. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "run-remote.h"
#include "verb-args.h"
#include "verbs.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench cancel ID [--wait] [--socket PATH] [--json]\n"
		"\n"
		"Cancels run ID. A queued run is cancelled at once; a running one stops cleanly:\n"
		"the VM is stopped, knobs are restored and the report is marked cancelled (with\n"
		"what was measured until then). Root and members of snapbenchd's group may\n"
		"cancel.\n"
		"\n"
		"  --wait          return once the run has ended\n"
		"  --socket PATH   snapbenchd's socket (default $%s,\n"
		"                  else %s)\n"
		"  --json          print the run's summary as JSON\n"
		"\n"
		"Exit codes: 0 cancelled (or cancelling, without --wait), 1 the run had already\n"
		"ended, 2 bad flags or no such run, 4 snapbenchd not reachable, 5 not authorized.\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

struct cancel_args {
	struct daemon_args d;
	bool wait;
};

static int parse_argv(int argc, char **argv, struct cancel_args *a)
{
	static const struct verb_flag flags[] = {
		{ "wait", offsetof(struct cancel_args, wait) },
		{},
	};
	static const struct daemon_verb_parser parser = {
		.name = "cancel",
		.usage = usage,
		.flags = flags,
		.positional = ARGS_ONE_ID,
	};

	*a = (struct cancel_args){};
	return daemon_args_parse(&parser, argc, argv, &a->d, a);
}

static int run(const struct cancel_args *a)
{
	_cleanup_client_ struct client *c = NULL;
	_cleanup_json_ struct json_object *reply = NULL, *final = NULL;
	const char *id = a->d.id;
	bool cancelling;
	int ret;

	ret = client_request("snapbench cancel", a->d.socket_path, client_request_new("cancel", id), 0, &c, &reply);
	if (ret)
		return ret;
	cancelling = json_object_get_boolean(client_get(reply, "cancelling", NULL, NULL));
	if (a->wait && cancelling) {
		ret = remote_follow(c, "snapbench cancel", a->d.socket_path, id, true, false, &final);
		if (ret != EXIT_OK)
			return ret;
	} else {
		final = json_object_get(client_get(reply, "run", NULL, NULL));
	}
	if (a->d.json)
		client_print_json(final);
	else if (cancelling && !a->wait)
		printf("run %s: cancelling; the VM is being stopped and knobs restored ('snapbench status' shows when it is done)\n",
		       id);
	else
		printf("run %s: %s\n", id, client_get_string(final, "state", "?"));
	return EXIT_OK;
}

VERB_MAIN(cancel_main, struct cancel_args)

const struct verb verb_cancel = {
	.name = "cancel",
	.summary = "cancel a queued or running run",
	.run = cancel_main,
};
