// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench logs: the tail of a run's logs (its worker, its QEMUs). */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "exit-codes.h"
#include "parse-number.h"
#include "verbs.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench logs ID [--bytes N] [--socket PATH] [--json]\n"
		"\n"
		"Prints the end of run ID's logs: worker.log (what the run engine said), then\n"
		"each repetition's QEMU log, each under a '==> NAME <==' header.\n"
		"\n"
		"  --bytes N       at most N bytes of each file, its end (default 65536, at most 1048576)\n"
		"  --socket PATH   snapbenchd's socket (default $%s, else %s)\n"
		"  --json          print the daemon's reply as JSON (docs/protocol.md, op logs)\n"
		"\n"
		"Exit codes: 0 done, 2 bad flags or no such run, 4 snapbenchd not reachable.\n",
		PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

static int logs_main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "bytes", required_argument, NULL, 'b' },
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_json_ struct json_object *reply = NULL;
	struct json_object *req, *logs;
	const char *socket_path = NULL;
	int64_t bytes = -1;
	bool json = false;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (opt) {
		case 'b':
			if (parse_int64(optarg, 1, 1 << 20, &bytes, NULL) < 0) {
				fprintf(stderr, "snapbench logs: --bytes '%s': expected a number from 1 to 1048576\n", optarg);
				return EXIT_USAGE;
			}
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
		fprintf(stderr, "snapbench logs: give one run ID ('snapbench list' shows them); see 'snapbench logs --help'\n");
		return EXIT_USAGE;
	}
	req = client_request_new("logs", argv[optind]);
	if (req && bytes > 0)
		json_object_object_add(req, "max_bytes", json_object_new_int64(bytes));
	ret = client_request("snapbench logs", socket_path, req, 0, NULL, &reply);
	if (ret)
		return ret;
	if (json) {
		client_print_json(reply);
	} else {
		logs = client_get(reply, "logs", NULL, NULL);
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
			fprintf(stderr, "snapbench logs: run %s has no logs yet\n", argv[optind]);
	}
	return EXIT_OK;
}

const struct verb verb_logs = {
	.name = "logs",
	.summary = "print the end of a run's logs (worker, QEMU)",
	.run = logs_main,
};
