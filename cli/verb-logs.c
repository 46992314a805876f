// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench logs: the tail of a run's logs (its worker, its QEMUs). */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "store-read.h"
#include "exit-codes.h"
#include "parse-number.h"
#include "verb-args.h"
#include "verbs.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench logs ID [--bytes N] [--socket PATH] [--store DIR] [--json]\n"
		"\n"
		"Prints the end of run ID's logs: worker.log (what the run engine said), then\n"
		"each repetition's QEMU log, each under a '==> NAME <==' header. When\n"
		"snapbenchd is not running, read from its run store (saying so).\n"
		"\n"
		"  --bytes N       at most N bytes of each file, its end (default 65536, at most\n"
		"                  1048576)\n"
		"  --socket PATH   snapbenchd's socket (default $%s,\n"
		"                  else %s)\n"
		"  --store DIR     the run store to read when snapbenchd is not running\n"
		"                  (default %s)\n"
		"  --json          print the daemon's reply as JSON (docs/protocol.md, op logs)\n"
		"\n"
		"Exit codes: 0 done, 2 bad flags or no such run, 4 snapbenchd not reachable\n"
		"and no run store.\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET, STORE_READ_DEFAULT);
}

struct logs_args {
	struct daemon_args d;
	int64_t bytes; /* -1: the daemon's default */
	const char *store;
};

static int parse_option(int opt, const char *arg, void *userdata)
{
	struct logs_args *a = userdata;

	if (opt == STORE_READ_OPT)
		a->store = arg;
	if (opt == 'b') {
		if (parse_int64(arg, 1, 1 << 20, &a->bytes, NULL) < 0) {
			verb_error("--bytes '%s': expected a number from 1 to 1048576", arg);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static int parse_argv(int argc, char **argv, struct logs_args *a)
{
	static const struct option options[] = {
		{ "bytes", required_argument, NULL, 'b' },
		STORE_READ_OPTION,
		{},
	};
	static const struct daemon_verb_parser parser = {
		.name = "logs",
		.usage = usage,
		.options = options,
		.positional = ARGS_ONE_ID,
		.parse_option = parse_option,
	};

	*a = (struct logs_args){ .bytes = -1 };
	return daemon_args_parse(&parser, argc, argv, &a->d, a);
}

static void print_logs(struct json_object *logs, const char *id)
{
	for (size_t i = 0; logs && i < json_object_array_length(logs); i++) {
		struct json_object *l = json_object_array_get_idx(logs, i);
		const char *text = client_get_string(l, "text", "");
		size_t len = strlen(text);
		printf("%s==> %s <==%s\n", i ? "\n" : "", client_get_string(l, "name", "?"),
		       json_object_get_boolean(client_get(l, "truncated", NULL, NULL)) ? " (its end)" : "");
		fwrite(text, 1, len, stdout);
		if (len && text[len - 1] != '\n')
			putchar('\n');
	}
	if (!logs || !json_object_array_length(logs))
		fprintf(stderr, "snapbench logs: run %s has no logs yet\n", id);
}

/* The logs of run a->d.id read from the store, as the daemon's reply ({"ok": true, "logs": [...]}). */
static int logs_store(const struct logs_args *a, struct store *store, struct json_object **reply)
{
	struct json_object *logs;
	struct sb_error err = {};
	int r;

	r = store_logs(store, a->d.id, a->bytes > 0 ? (size_t)a->bytes : STORE_LOGS_DEFAULT_BYTES, &logs, &err);
	if (r == -ENOENT || r == -EINVAL) {
		verb_error("run %s: no such run in the run store %s ('snapbench list' shows them)", a->d.id,
			   store_runs_dir(store));
		return EXIT_USAGE;
	}
	if (r < 0) {
		verb_error("%s", err.msg);
		return EXIT_FAIL;
	}
	if (!(*reply = json_object_new_object())) {
		json_object_put(logs);
		return EXIT_FAIL;
	}
	json_object_object_add(*reply, "ok", json_object_new_boolean(true));
	json_object_object_add(*reply, "logs", logs);
	return 0;
}

static int run(const struct logs_args *a)
{
	_cleanup_json_ struct json_object *reply = NULL;
	_cleanup_client_ struct client *c = NULL;
	_cleanup_(store_freep) struct store *store = NULL;
	struct json_object *req;
	int ret;

	ret = store_read_connect("snapbench logs", a->d.socket_path, a->store, &c, &store);
	if (ret)
		return ret;
	if (store) {
		ret = logs_store(a, store, &reply);
	} else {
		req = client_request_new("logs", a->d.id);
		if (req && a->bytes > 0)
			json_object_object_add(req, "max_bytes", json_object_new_int64(a->bytes));
		ret = client_request_on(c, "snapbench logs", req, 0, &reply);
	}
	if (ret)
		return ret;
	if (a->d.json)
		client_print_json(reply);
	else
		print_logs(client_get(reply, "logs", NULL, NULL), a->d.id);
	return EXIT_OK;
}

VERB_MAIN(logs_main, struct logs_args)

const struct verb verb_logs = {
	.name = "logs",
	.summary = "print the end of a run's logs (worker, QEMU)",
	.run = logs_main,
};
