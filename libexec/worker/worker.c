// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench-worker: executes one queued run for snapbenchd, in its own
 * process, so a crash in the run engine or in a library it uses cannot take
 * the daemon down, and the daemon stays single-threaded.
 *
 *   snapbench-worker --run-dir DIR --knobs-dir DIR --progress-fd N --parent-pid PID
 *                    [--qemu PATH]
 *
 * It reads DIR/spec.json, calls runner_execute() and writes one progress
 * line (daemon/progress.h) per progress callback to fd N. SIGTERM or SIGINT
 * cancel the run cleanly (VM stopped, knobs restored, report "cancelled").
 * The parent-death signal is SIGHUP: when the daemon dies the run is stopped
 * the same way, and the report is then marked failed, "interrupted", as the
 * daemon would mark it at its next start. Exit status: 0 completed, 1
 * failed, 2 bad invocation or spec, 6 cancelled (cli/exit-codes.h values).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "parse-number.h"
#include "run-progress.h"
#include "protocol.h"
#include "run-dir.h"
#include "runner.h"
#include "spec.h"
#include "store.h"

enum {
	WORKER_EXIT_COMPLETED = 0,
	WORKER_EXIT_FAILED = 1,
	WORKER_EXIT_USAGE = 2,
	WORKER_EXIT_CANCELLED = 6,
};

static volatile sig_atomic_t cancel_flag;
static volatile sig_atomic_t parent_died;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		parent_died = 1;
	cancel_flag = 1;
}

struct progress_sink {
	int fd;
	unsigned dropped;
};

/* Progress is advisory: a full pipe drops the line rather than stall the run. */
static void on_progress(const struct runner_progress *p, void *userdata)
{
	struct progress_sink *sink = userdata;
	struct json_object *o = run_progress_to_json(p);
	_cleanup_free_ char *line = NULL;
	size_t len;

	if (!o)
		return;
	if (protocol_serialize(o, &line, &len) == 0 && len <= RUN_PROGRESS_MAX_LINE) {
		ssize_t n = write(sink->fd, line, len);
		/* a pipe write of at most PIPE_BUF bytes is all or nothing */
		if (n < 0)
			sink->dropped++;
	}
	json_object_put(o);
}

/* When the run was submitted: "created" of the queued report the daemon wrote (0 if unknown). */
static uint64_t submitted_ns(const char *run_dir)
{
	char path[PATH_MAX];
	struct json_object *report, *v;
	struct sb_error err = {};
	struct tm tm = {};
	uint64_t ns = 0;

	snprintf(path, sizeof(path), "%s/%s", run_dir, RUN_DIR_REPORT);
	if (report_read(path, &report, &err) < 0)
		return 0;
	if (json_object_object_get_ex(report, "created", &v) && json_object_is_type(v, json_type_string)) {
		const char *end = strptime(json_object_get_string(v), "%Y-%m-%dT%H:%M:%SZ", &tm);
		time_t t = end && !*end ? timegm(&tm) : (time_t)-1;
		if (t > 0)
			ns = (uint64_t)t * 1000000000ull;
	}
	json_object_put(report);
	return ns;
}

static _Noreturn void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: snapbench-worker --run-dir DIR --knobs-dir DIR --progress-fd N --parent-pid PID [--qemu PATH]\n"
		"Executes the run in DIR/spec.json for snapbenchd; not meant to be started by hand.\n");
	exit(code);
}

struct worker_args {
	const char *run_dir, *knobs_dir, *qemu;
	int progress_fd;
	pid_t parent;
};

/* Fills *ret, or exits with usage (WORKER_EXIT_USAGE). */
static void parse_argv(int argc, char **argv, struct worker_args *ret)
{
	static const struct option options[] = {
		{ "run-dir", required_argument, NULL, 'r' },
		{ "knobs-dir", required_argument, NULL, 'k' },
		{ "progress-fd", required_argument, NULL, 'p' },
		{ "parent-pid", required_argument, NULL, 'P' },
		{ "qemu", required_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *run_dir = NULL, *knobs_dir = NULL, *qemu = NULL;
	struct progress_sink sink = { .fd = -1 };
	long parent = 0;
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		int64_t v;
		switch (c) {
		case 'r':
			run_dir = optarg;
			break;
		case 'k':
			knobs_dir = optarg;
			break;
		case 'p':
			if (parse_int64(optarg, 3, INT_MAX, &v, NULL) < 0)
				usage(WORKER_EXIT_USAGE);
			sink.fd = (int)v;
			break;
		case 'P':
			if (parse_int64(optarg, 2, LONG_MAX, &v, NULL) < 0)
				usage(WORKER_EXIT_USAGE);
			parent = (long)v;
			break;
		case 'q':
			qemu = optarg;
			break;
		case 'h':
			usage(0);
		default:
			usage(WORKER_EXIT_USAGE);
		}
	}
	if (!run_dir || !knobs_dir || sink.fd < 0 || !parent || optind != argc)
		usage(WORKER_EXIT_USAGE);
	*ret = (struct worker_args){
		.run_dir = run_dir, .knobs_dir = knobs_dir, .qemu = qemu, .progress_fd = sink.fd, .parent = (pid_t)parent
	};
}

/* Signals (cancel, the parent's death) and the progress fd; 0 or the exit code. */
static int setup_process(const struct worker_args *a)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* the daemon set this before exec too; set again in case exec cleared it, then
	 * check the parent did not die before it took effect */
	if (prctl(PR_SET_PDEATHSIG, SIGHUP) < 0) {
		fprintf(stderr, "snapbench-worker: PR_SET_PDEATHSIG: %s\n", strerror(errno));
		return WORKER_EXIT_FAILED;
	}
	if (getppid() != a->parent)
		on_signal(SIGHUP);
	if (fcntl(a->progress_fd, F_SETFL, fcntl(a->progress_fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    fcntl(a->progress_fd, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "snapbench-worker: --progress-fd %d: %s\n", a->progress_fd, strerror(errno));
		return WORKER_EXIT_USAGE;
	}
	return 0;
}

/* RUN_DIR/spec.json, validated into *spec; a bad one fails the run. 0 or the exit code. */
static int load_spec(const char *run_dir, struct run_spec *spec)
{
	char spec_path[PATH_MAX];
	struct sb_error err = {};
	int r;

	snprintf(spec_path, sizeof(spec_path), "%s/%s", run_dir, RUN_DIR_SPEC);
	if (spec_init(spec) < 0) {
		fprintf(stderr, "snapbench-worker: out of memory\n");
		return WORKER_EXIT_FAILED;
	}
	r = spec_apply_file(spec, spec_path, &err);
	if (r >= 0)
		r = spec_validate(spec, &err);
	if (r < 0) {
		struct sb_error e2 = {};
		fprintf(stderr, "snapbench-worker: %s\n", err.msg);
		store_end_run(run_dir, REPORT_FAILED, "spec", err.msg, 0, &e2);
		spec_done(spec);
		return WORKER_EXIT_USAGE;
	}
	return 0;
}

static int run(const struct worker_args *a)
{
	const char *run_dir = a->run_dir;
	struct progress_sink sink = { .fd = a->progress_fd };
	struct run_spec spec;
	struct sb_error err = {};
	char report_path[PATH_MAX];
	int r;

	r = setup_process(a);
	if (r)
		return r;
	r = load_spec(run_dir, &spec);
	if (r)
		return r;

	struct runner_options opts = {
		.run_dir = run_dir,
		.state_dir = a->knobs_dir,
		.qemu_binary = spec.vm.qemu ? NULL : a->qemu, /* snapbenchd's --qemu is the default; a spec's vm.qemu wins */
		.cancel = &cancel_flag,
		.progress = on_progress,
		.userdata = &sink,
		.created_ns = submitted_ns(run_dir),
	};
	fprintf(stderr, "snapbench-worker: run %s: starting (%u repetitions)\n", run_dir,
		spec_total_repetitions(&spec));
	r = runner_execute(&spec, &opts, report_path, &err);
	spec_done(&spec);

	if (parent_died) {
		struct sb_error e2 = {};
		/* the run was stopped because snapbenchd went away: that is an interruption,
		 * not a user's cancel, and the report says so */
		if (store_end_run_interrupted(run_dir, &e2) < 0)
			fprintf(stderr, "snapbench-worker: %s\n", e2.msg);
		fprintf(stderr, "snapbench-worker: run %s: interrupted (snapbenchd exited)\n", run_dir);
		return WORKER_EXIT_FAILED;
	}
	if (sink.dropped)
		fprintf(stderr, "snapbench-worker: %u progress lines dropped (the daemon read slowly)\n", sink.dropped);
	if (r == -ECANCELED) {
		fprintf(stderr, "snapbench-worker: run %s: cancelled\n", run_dir);
		return WORKER_EXIT_CANCELLED;
	}
	if (r < 0) {
		fprintf(stderr, "snapbench-worker: run %s: failed: %s\n", run_dir, err.msg);
		return WORKER_EXIT_FAILED;
	}
	fprintf(stderr, "snapbench-worker: run %s: completed\n", run_dir);
	return WORKER_EXIT_COMPLETED;
}

int main(int argc, char **argv)
{
	struct worker_args a;

	parse_argv(argc, argv, &a);
	return run(&a);
}
