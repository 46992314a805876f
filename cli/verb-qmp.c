// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench qmp: send one QMP command to a QEMU and print the reply, and/or
 * wait for an event. A thin front for qmp/ (docs/qmp.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exit-codes.h"
#include "help-fit.h"
#include "json-util.h"
#include "macro.h"
#include "parse-number.h"
#include "qmp.h"
#include "verb-args.h"
#include "verbs.h"

#define DEFAULT_TIMEOUT_S 10.0
#define MAX_TIMEOUT_S 86400.0
#define ARGS_MAX_DEPTH 64

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench qmp --socket PATH [--timeout S] [--fd FILE] [--wait-event NAME] [--pretty] [--json]\n"
		"                     [COMMAND [ARGS-JSON]]\n"
		"\n"
		"Send one QMP command to the QEMU listening on PATH (-qmp unix:PATH,server=on,wait=off) and\n"
		"print its return value as JSON on stdout; with --wait-event, then wait for event NAME and print\n"
		"it as one JSON line. COMMAND may be left out when --wait-event is given.\n"
		"\n"
		"  --socket PATH      QEMU's QMP unix socket (one that is not there fails at once)\n"
		"  --timeout S        seconds (or 500ms, 2m) to wait for each step: connect, reply,\n"
		"                     event (default %g)\n"
		"  --fd FILE          open FILE for writing (created, truncated) and pass it with the command\n"
		"                     (for getfd: snapbench qmp --socket S --fd snap.bin getfd '{\"fdname\":\"s\"}')\n"
		"  --wait-event NAME  after the command, wait for event NAME (e.g. MIGRATION, SHUTDOWN)\n"
		"  --pretty           indent the JSON output\n"
		"  --json             accepted for symmetry with the other verbs (the output is JSON anyway);\n"
		"                     an error is then also printed as a JSON object on stdout\n"
		"  ARGS-JSON          the command's arguments as one JSON object, e.g. '{\"target\": \"vm\"}'\n"
		"\n"
		"Examples:\n"
		"  snapbench qmp --socket /run/vm/qmp.sock query-status\n"
		"  snapbench qmp --socket /run/vm/qmp.sock query-stats '{\"target\": \"vcpu\"}'\n"
		"  snapbench qmp --socket /run/vm/qmp.sock --wait-event SHUTDOWN quit\n"
		"\n"
		"Exit codes: 0 done; 1 QEMU answered with an error, or broke the protocol, or the event did not\n"
		"come in time; 2 bad usage; 4 QEMU not reachable (no socket, no answer, connection lost).\n"
		"Errors go to stderr; a QMP error reads \"QMP command 'X' failed: CLASS: desc\".\n",
		DEFAULT_TIMEOUT_S);
}

static int parse_timeout(const char *s, int *ms)
{
	double v;

	/* seconds, or a duration with its unit (500ms, 2m), as every verb's durations */
	if (parse_duration(s, 1, 0, MAX_TIMEOUT_S, &v, NULL) < 0 || v == 0) {
		verb_error("--timeout '%s' is not a number of seconds above 0 and up to %g s, or a duration with its unit "
			   "such as 500ms or 2m", s, MAX_TIMEOUT_S);
		return -EINVAL;
	}
	/* Round up: --timeout 0.0001 still waits a millisecond. */
	*ms = (int)(v * 1000.0);
	if (*ms < v * 1000.0)
		(*ms)++;
	return 0;
}

static int parse_args_json(const char *text, struct json_object **ret)
{
	struct json_parse_info info;
	struct json_object *obj = NULL;
	int r;

	r = json_parse_text(text, strlen(text), ARGS_MAX_DEPTH, JSON_PARSE_STRICT, &obj, &info);
	if (r == -ENOMEM)
		return -ENOMEM;
	if (r < 0 || !json_object_is_type(obj, json_type_object)) {
		verb_error("ARGS-JSON '%s' is not a JSON object (%s); give the arguments as one object, "
			"e.g. '{\"target\": \"vm\"}'",
			text, r < 0 ? info.reason : "wrong type");
		json_object_put(obj);
		return -EINVAL;
	}
	*ret = obj;
	return 0;
}

/* Library errnos -> the command's exit codes (cli/exit-codes.h). */
static int exit_code_for(int r)
{
	switch (r) {
	case -EINVAL:
	case -ENAMETOOLONG:
		return EXIT_USAGE;
	case -ETIMEDOUT:
	case -ENOENT:
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -ENOTCONN:
	case -EACCES:
	case -EPERM:
		return EXIT_UNAVAILABLE;
	default:
		return EXIT_FAIL;
	}
}

static void print_json(struct json_object *o, bool pretty)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE | (pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN);

	/* A null return (never from QEMU, but possible) prints as null. */
	printf("%s\n", o ? json_object_to_json_string_ext(o, flags) : "null");
	fflush(stdout);
}

static void print_event(const struct qmp_event *e, bool pretty)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return;
	json_object_object_add(o, "event", json_object_new_string(e->name));
	if (e->data)
		json_object_object_add(o, "data", json_object_get(e->data));
	if (e->qemu_time_us >= 0) {
		struct json_object *ts = json_object_new_object();

		json_object_object_add(ts, "seconds", json_object_new_int64(e->qemu_time_us / 1000000));
		json_object_object_add(ts, "microseconds", json_object_new_int64(e->qemu_time_us % 1000000));
		json_object_object_add(o, "timestamp", ts);
	}
	print_json(o, pretty);
	json_object_put(o);
}

struct qmp_args {
	const char *socket_path, *fd_file, *wait_event, *command;
	struct json_object *args; /* the command's arguments, or NULL; the caller puts it */
	int timeout_ms;
	bool pretty;
};

static const struct option qmp_longopts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "timeout", required_argument, NULL, 't' },
	{ "fd", required_argument, NULL, 'f' },
	{ "wait-event", required_argument, NULL, 'w' },
	{ "pretty", no_argument, NULL, 'p' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* COMMAND and ARGS-JSON after the options, and what the options ask of them; a->args set only on success. */
static int parse_command(int argc, char **argv, struct qmp_args *a)
{
	struct json_object *args = NULL;

	if (!a->socket_path) {
		verb_error("--socket PATH is required: the path of QEMU's -qmp unix socket");
		return EXIT_USAGE;
	}
	if (optind < argc)
		a->command = argv[optind++];
	if (!a->command && !a->wait_event) {
		verb_error("give a COMMAND (e.g. query-status), --wait-event NAME, or both");
		return EXIT_USAGE;
	}
	if (a->command && !a->command[0]) {
		verb_error("COMMAND is empty; name a QMP command, e.g. query-status");
		return EXIT_USAGE;
	}
	if (optind < argc) {
		if (parse_args_json(argv[optind++], &args) < 0)
			return EXIT_USAGE;
	}
	if (optind < argc) {
		verb_error("unexpected argument '%s'; ARGS-JSON is a single JSON object", argv[optind]);
		json_object_put(args);
		return EXIT_USAGE;
	}
	if (a->fd_file && !a->command) {
		verb_error("--fd needs a COMMAND to pass the file with (e.g. getfd)");
		json_object_put(args);
		return EXIT_USAGE;
	}
	if (a->wait_event && !a->wait_event[0]) {
		verb_error("--wait-event needs an event name, e.g. SHUTDOWN");
		json_object_put(args);
		return EXIT_USAGE;
	}
	a->args = args;
	return ARGS_GO_ON;
}

/* Fills *ret (its args taken) and returns ARGS_GO_ON, else the exit code to stop with. */
static int parse_argv(int argc, char **argv, struct qmp_args *ret)
{
	struct qmp_args a = { .timeout_ms = (int)(DEFAULT_TIMEOUT_S * 1000) };
	int opt, r;

	optind = 1;
	opterr = 0; /* verb_option_error() says what is wrong */
	while ((opt = getopt_long(argc, argv, ":h", qmp_longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			a.socket_path = optarg;
			break;
		case 't':
			if (parse_timeout(optarg, &a.timeout_ms) < 0)
				return EXIT_USAGE;
			break;
		case 'f':
			a.fd_file = optarg;
			break;
		case 'w':
			a.wait_event = optarg;
			break;
		case 'p':
			a.pretty = true;
			break;
		case 'j':
			break; /* the output is JSON already */
		case 'h':
			help_print(stdout, usage);
			return EXIT_OK;
		default:
			verb_option_error("qmp", opt, argv, qmp_longopts);
			return EXIT_USAGE;
		}
	}
	r = parse_command(argc, argv, &a);
	if (r != ARGS_GO_ON)
		return r;
	*ret = a;
	return ARGS_GO_ON;
}

/* Takes a->args. */
static int run(struct qmp_args *a)
{
	_cleanup_qmp_client_ struct qmp_client *c = NULL;
	_cleanup_close_ int fd = -1;
	const char *socket_path = a->socket_path, *fd_file = a->fd_file, *wait_event = a->wait_event,
		   *command = a->command;
	struct json_object *args = TAKE_PTR(a->args), *ret = NULL;
	struct sb_error err = { 0 };
	int timeout_ms = a->timeout_ms, r;
	bool pretty = a->pretty;

	if (fd_file) {
		fd = open(fd_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd < 0) {
			verb_error("--fd %s: cannot open it for writing: %s", fd_file, strerror(errno));
			json_object_put(args);
			return EXIT_USAGE;
		}
	}

	/* a path that names nothing is a typo, not a QEMU still starting: said at once, not after --timeout */
	struct stat st;
	if (stat(socket_path, &st) < 0) {
		r = errno == ENOTDIR ? -ENOENT : -errno;
		verb_error("--socket %s: %s; is QEMU running with -qmp unix:%s,server=on,wait=off?", socket_path,
			   strerror(-r), socket_path);
		json_object_put(args);
		return exit_code_for(r);
	}
	if (!S_ISSOCK(st.st_mode)) {
		verb_error("--socket %s: not a socket; give the path of QEMU's -qmp unix:PATH,server=on,wait=off",
			   socket_path);
		json_object_put(args);
		return EXIT_USAGE;
	}
	r = qmp_connect(socket_path, timeout_ms, NULL, &c, &err);
	if (r < 0) {
		verb_error("%s", err.msg);
		json_object_put(args);
		return exit_code_for(r);
	}

	if (command) {
		r = qmp_execute(c, command, args, fd, timeout_ms, &ret, &err);
		json_object_put(args);
		if (r < 0) {
			verb_error("%s", err.msg);
			return exit_code_for(r);
		}
		print_json(ret, pretty);
		json_object_put(ret);
	}

	if (wait_event) {
		_cleanup_qmp_event_ struct qmp_event *e = NULL;

		r = qmp_wait_event(c, wait_event, timeout_ms, &e, &err);
		if (r < 0) {
			verb_error("%s", err.msg);
			return r == -ETIMEDOUT ? EXIT_FAIL : exit_code_for(r);
		}
		print_event(e, pretty);
	}
	return EXIT_OK;
}

VERB_MAIN(qmp_main, struct qmp_args)

const struct verb verb_qmp = {
	.name = "qmp",
	.summary = "send a QMP command to a QEMU, print the reply; wait for QMP events",
	.run = qmp_main,
};
