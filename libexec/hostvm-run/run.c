// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench-hostvm-run: the run engine inside a host VM (docs/kernel-arms.md).
 * The host VM's init runs it in the 9p root with the progress port on fd 3
 * (SNAPBENCH_HOSTVM_PORT_FD). It runs the spec the outer runner wrote (one
 * arm, one repetition) with runner_execute() into --output, the results
 * share, and sends one JSON object a line on the port:
 *
 *   {"event":"ready","t_s":5.1}                   the runner is up (boot time ends)
 *   {"event":"progress","step":"pre",...}         the run engine's progress
 *   {"event":"alive","t_s":12.0}                  every HOSTVM_HEARTBEAT_S while it runs
 *   {"event":"done","status":0,"message":""}      the run ended
 *
 * The heartbeat comes from a thread of its own, so it stops only when the
 * host VM's kernel does (a soft lockup of the whole VM was seen under TCG):
 * the outer runner kills a host VM that stays silent
 * (runner/hostvm-rep/hostvm-rep.c).
 *
 * With --boot-only it sends ready and done and exits (bench/hostvm-boot).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostvm-rep.h"
#include "macro.h"
#include "mkdir-p.h"
#include "runner.h"
#include "spec.h"

static int port = -1;
static pthread_mutex_t port_lock = PTHREAD_MUTEX_INITIALIZER;

static void send_obj(struct json_object *o)
{
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(text);

	pthread_mutex_lock(&port_lock);
	if (port >= 0 && (write(port, text, len) != (ssize_t)len || write(port, "\n", 1) != 1))
		port = -1; /* the outer runner went away: run on, the report still lands in the share */
	pthread_mutex_unlock(&port_lock);
	json_object_put(o);
}

/* the run engine's own progress, as every reader of it decodes it (run-progress.h), as event "progress" */
static void on_progress(const struct runner_progress *p, void *userdata)
{
	struct json_object *o = run_progress_to_json(p);

	(void)userdata;
	if (!o)
		return;
	json_object_object_add(o, "event", json_object_new_string("progress"));
	send_obj(o);
}

static void event(const char *name, int status, const char *message)
{
	struct json_object *o = json_object_new_object();
	struct timespec ts;

	if (!o)
		return;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	json_object_object_add(o, "event", json_object_new_string(name));
	json_object_object_add(o, "t_s", json_object_new_double((double)ts.tv_sec + (double)ts.tv_nsec / 1e9));
	json_object_object_add(o, "status", json_object_new_int(status));
	json_object_object_add(o, "message", json_object_new_string(message ? message : ""));
	send_obj(o);
}

static void *heartbeat(void *arg)
{
	(void)arg;
	for (;;) {
		sleep(HOSTVM_HEARTBEAT_S);
		event("alive", 0, NULL);
	}
	return NULL;
}

struct args {
	const char *spec_file, *output, *state_dir, *guest, *qemu;
	bool boot_only;
};

/* 0, or the exit code of bad usage. */
static int parse_argv(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "spec", required_argument, NULL, 's' },   { "output", required_argument, NULL, 'o' },
		{ "state-dir", required_argument, NULL, 'd' }, { "guest-image", required_argument, NULL, 'g' },
		{ "qemu", required_argument, NULL, 'q' },   { "boot-only", no_argument, NULL, 'b' },
		{},
	};
	int c;

	*a = (struct args){};
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': a->spec_file = optarg; break;
		case 'o': a->output = optarg; break;
		case 'd': a->state_dir = optarg; break;
		case 'g': a->guest = optarg; break;
		case 'q': a->qemu = optarg; break;
		case 'b': a->boot_only = true; break;
		default:
			fprintf(stderr, "usage: %s --spec FILE --output DIR [--state-dir DIR] [--guest-image P] [--qemu P]\n",
				argv[0]);
			return 2;
		}
	}
	return 0;
}

/* The run of a->spec_file, its report in a->output; each step said on the port. */
static int run(const struct args *a)
{
	struct run_spec spec;
	struct sb_error err = {};
	char report_path[4096];
	int k;

	if (!a->spec_file || !a->output) {
		event("done", 2, "snapbench-hostvm-run: --spec and --output are required");
		return 2;
	}
	if (spec_init(&spec) < 0)
		return 1;
	if (spec_apply_file(&spec, a->spec_file, &err) < 0) {
		event("done", 2, err.msg);
		spec_done(&spec);
		return 2;
	}
	if (a->state_dir && mkdir_p(a->state_dir, 0700) < 0) {
		event("done", 1, "snapbench-hostvm-run: cannot create the state directory");
		spec_done(&spec);
		return 1;
	}
	event("ready", 0, NULL);
	pthread_t hb;
	if (pthread_create(&hb, NULL, heartbeat, NULL) == 0)
		pthread_detach(hb);
	struct runner_options ro = {
		.run_dir = a->output,
		.state_dir = a->state_dir,
		/*
		 * the state directory is a tmpfs in the host VM: a snapshot file that is
		 * not kept goes there rather than over the 9p results share, which
		 * under TCG moved 256 MiB at about 160 pages a second
		 */
		.scratch_dir = a->state_dir,
		.qemu_binary = a->qemu,
		.guest_image = a->guest,
		.knobs_wait_ms = -1,
		/* an emulated host VM on a busy machine: QEMU's main loop can stall for long */
		.qmp_timeout_ms = 180000,
		.progress = on_progress,
	};
	k = runner_execute(&spec, &ro, report_path, &err);
	event("done", k, k < 0 ? err.msg : "");
	if (k < 0)
		fprintf(stderr, "snapbench-hostvm-run: %s\n", err.msg);
	spec_done(&spec);
	return k < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *fd_env = getenv("SNAPBENCH_HOSTVM_PORT_FD");
	struct args a;
	int r = parse_argv(argc, argv, &a);

	if (r != 0)
		return r;
	if (fd_env)
		port = atoi(fd_env);
	if (a.boot_only) {
		/* the host VM's boot benchmark: up, and done */
		event("ready", 0, NULL);
		event("done", 0, "");
		return 0;
	}
	return run(&a);
}
