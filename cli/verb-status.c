// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench status: the daemon, the run it executes (with progress) and the queue. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "verb-args.h"
#include "verbs.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench status [--socket PATH] [--json]\n"
		"\n"
		"Shows snapbenchd: its version and uptime, the run it executes with its progress,\n"
		"and the queued runs. Anyone who can reach the socket may ask.\n"
		"\n"
		"  --socket PATH   snapbenchd's socket (default $%s, else %s)\n"
		"  --json          print the daemon's reply as JSON (docs/protocol.md, op status)\n"
		"\n"
		"Exit codes: 0 done, 4 snapbenchd not reachable (see snapbench(1)).\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

static const struct daemon_verb_parser parser = {
	.name = "status",
	.usage = usage,
	.positional = ARGS_NONE,
};

static void print_status(struct json_object *reply)
{
	struct json_object *d = client_get(reply, "daemon", NULL, NULL), *cur = client_get(reply, "current", NULL, NULL);
	struct json_object *queue = client_get(reply, "queue", NULL, NULL), *you = client_get(reply, "you", NULL, NULL);
	char up[32];

	fmt_duration(up, sizeof(up), json_object_get_double(client_get(d, "uptime_s", NULL, NULL)));
	printf("snapbenchd %s, pid %d, up %s%s; state in %s\n", client_get_string(d, "version", "?"),
	       json_object_get_int(client_get(d, "pid", NULL, NULL)), up,
	       json_object_get_boolean(client_get(d, "socket_activated", NULL, NULL)) ? ", socket-activated" : "",
	       client_get_string(d, "state_dir", "?"));
	if (json_object_get_boolean(client_get(d, "stopping", NULL, NULL)))
		printf("stopping: the current run is being cancelled; queued runs wait for the next start\n");
	printf("you: uid %d, %s\n", json_object_get_int(client_get(you, "uid", NULL, NULL)),
	       json_object_get_boolean(client_get(you, "may_submit", NULL, NULL))
		       ? "may submit and cancel runs"
		       : "may read (submitting needs root or group membership)");
	if (cur) {
		printf("\nrunning:\n");
		print_summary_block(stdout, cur, "  ");
		if (json_object_get_boolean(client_get(cur, "cancelling", NULL, NULL)))
			printf("    cancelling: the VM is being stopped and knobs restored\n");
	} else {
		printf("\nno run executing\n");
	}
	size_t n = queue ? json_object_array_length(queue) : 0;
	if (n) {
		printf("\nqueued (%zu):\n", n);
		print_summary_header(stdout);
		for (size_t i = 0; i < n; i++)
			print_summary_row(stdout, json_object_array_get_idx(queue, i));
	} else {
		printf("queue empty\n");
	}
}

static int run(const struct daemon_args *a)
{
	_cleanup_json_ struct json_object *reply = NULL;
	int ret;

	ret = client_request("snapbench status", a->socket_path, client_request_new("status", NULL), 0, NULL, &reply);
	if (ret)
		return ret;
	if (a->json)
		client_print_json(reply);
	else
		print_status(reply);
	return EXIT_OK;
}

static int status_main(int argc, char **argv)
{
	struct daemon_args a;
	int r;

	r = daemon_args_parse(&parser, argc, argv, &a, NULL);
	if (r != ARGS_GO_ON)
		return r;
	return run(&a);
}

const struct verb verb_status = {
	.name = "status",
	.summary = "show snapbenchd, the current run's progress and the queue",
	.run = status_main,
};
