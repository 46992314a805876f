// SPDX-License-Identifier: GPL-2.0-or-later
/* snapbench status: the daemon, the run it executes (with progress) and the queue. */
#include <json-c/json.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "parse-number.h"
#include "verb-args.h"
#include "verbs.h"

/* status --watch's smallest --interval, which its --help and its error name */
#define STATUS_MIN_INTERVAL_MS 100

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench status [--watch [--interval MS] [--count N]] [--socket PATH]\n"
		"                        [--json]\n"
		"\n"
		"Shows snapbenchd: its version and uptime, the run it executes with its progress,\n"
		"and the queued runs. Anyone who can reach the socket may ask.\n"
		"\n"
		"  --watch         ask again every interval until Ctrl-C: on a terminal the\n"
		"                  screen is redrawn, otherwise each status follows the last\n"
		"                  under a line with the time (--json: one object a line)\n"
		"  --interval MS   with --watch: milliseconds between asks, from %u, or a\n"
		"                  duration with its unit: 500ms, 2s (default 2s)\n"
		"  --count N       with --watch: stop after N statuses\n"
		"  --socket PATH   snapbenchd's socket (default $%s,\n"
		"                  else %s)\n"
		"  --json          print the daemon's reply as JSON (docs/protocol.md, op status)\n"
		"\n"
		"Exit codes: 0 done, 2 bad flags, 4 snapbenchd not reachable (see snapbench(1)).\n",
		STATUS_MIN_INTERVAL_MS, PROTOCOL_SOCKET_ENV, PROTOCOL_DEFAULT_SOCKET);
}

struct status_args {
	struct daemon_args d;
	bool watch;
	double interval_s;
	bool interval_given;
	unsigned count; /* 0: until Ctrl-C */
};

enum { OPT_INTERVAL = 0x100, OPT_COUNT };

static int parse_option(int opt, const char *arg, void *userdata)
{
	struct status_args *a = userdata;
	unsigned ms;

	switch (opt) {
	case OPT_INTERVAL:
		if (verb_parse_interval(arg, STATUS_MIN_INTERVAL_MS, 3600000, &ms) < 0)
			return EXIT_USAGE;
		a->interval_s = ms / 1000.0;
		a->interval_given = true;
		break;
	case OPT_COUNT:
		if (parse_unsigned(arg, 1, 1000000, &a->count, NULL) < 0) {
			verb_error("--count '%s': expected a number from 1 to 1000000", arg);
			return EXIT_USAGE;
		}
		break;
	}
	return 0;
}

static int parse_argv(int argc, char **argv, struct status_args *a)
{
	static const struct verb_flag flags[] = {
		{ "watch", offsetof(struct status_args, watch) },
		{},
	};
	static const struct option options[] = {
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "count", required_argument, NULL, OPT_COUNT },
		{},
	};
	static const struct daemon_verb_parser parser = {
		.name = "status",
		.usage = usage,
		.flags = flags,
		.options = options,
		.positional = ARGS_NONE,
		.parse_option = parse_option,
	};
	int r;

	*a = (struct status_args){ .interval_s = 2 };
	r = daemon_args_parse(&parser, argc, argv, &a->d, a);
	if (r != ARGS_GO_ON)
		return r;
	if (!a->watch && (a->count || a->interval_given)) {
		verb_error("--interval and --count go with --watch");
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

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
		print_summary_table(stdout, queue, output_width());
	} else {
		printf("queue empty\n");
	}
}

/* line: the JSON on one line (--watch --json: one object a line) */
static int show_once(const struct daemon_args *a, bool line)
{
	_cleanup_json_ struct json_object *reply = NULL;
	int ret;

	ret = client_request("snapbench status", a->socket_path, client_request_new("status", NULL), 0, NULL, &reply);
	if (ret)
		return ret;
	if (a->json && line)
		printf("%s\n", json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (a->json)
		client_print_json(reply);
	else
		print_status(reply);
	return EXIT_OK;
}

static volatile sig_atomic_t watch_stop;

static void on_watch_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

/* kvm_stat's way: ask, show, wait; a terminal is redrawn, anything else gets one status after another. */
static int watch(const struct status_args *a)
{
	struct sigaction sa = { .sa_handler = on_watch_signal };
	bool tty = isatty(STDOUT_FILENO) && !a->d.json;
	int ret = EXIT_OK;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (unsigned n = 0; !watch_stop && (!a->count || n < a->count); n++) {
		if (n > 0) {
			/* the wait, cut short by Ctrl-C */
			for (int left = (int)(a->interval_s * 1000); left > 0 && !watch_stop; left -= 100)
				poll(NULL, 0, left < 100 ? left : 100);
			if (watch_stop)
				break;
		}
		if (tty) {
			fputs("\033[H\033[2J", stdout); /* home, clear */
		} else if (!a->d.json) {
			char when[32];
			time_t now = time(NULL);
			struct tm tm;
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
			printf("%s--- %s ---\n", n ? "\n" : "", when);
		}
		ret = show_once(&a->d, true);
		fflush(stdout);
		if (ret != EXIT_OK)
			break;
	}
	return ret;
}

static int run(const struct status_args *a)
{
	return a->watch ? watch(a) : show_once(&a->d, false);
}

VERB_MAIN(status_main, struct status_args)

const struct verb verb_status = {
	.name = "status",
	.summary = "show snapbenchd, the current run's progress and the queue",
	.run = status_main,
};
