// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench run: one benchmark run, submitted to snapbenchd (run-remote.c),
 * or with --local here and now, without the daemon.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "arm-table.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "macro.h"
#include "qemu-binary.h"
#include "run-progress.h"
#include "report.h"
#include "run-remote.h"
#include "runner.h"
#include "spec.h"
#include "verb-args.h"
#include "verbs.h"

static volatile sig_atomic_t cancel_requested;

static void on_signal(int sig)
{
	(void)sig;
	cancel_requested = 1;
}

/* Flags that set one spec field each: --flag VALUE -> spec_set(field, VALUE). */
static const struct {
	const char *flag;
	const char *field;
	const char *arg;
	const char *help;
} field_flags[] = {
	{ "scenario", "scenario", "S", "background-snapshot (default), dirty-log, postcopy-restore, numa-hinting or uffd-restore (docs/scenarios.md)" },
	{ "repetitions", "repetitions", "N", "repetitions per arm (default 5)" },
	{ "description", "description", "TEXT", "free text kept in the report" },
	{ "backend", "vm.backend", "B", "qemu (QEMU started by snapbench, default) or libvirt (a transient domain)" },
	{ "libvirt-uri", "vm.libvirt.uri", "URI", "libvirt backend: the connection (default qemu:///system)" },
	{ "guest-kind", "guest.kind", "KIND", "micro (the built-in guest, default) or linux (through qemu-guest-agent)" },
	{ "disk", "vm.disk", "PATH", "qemu backend, Linux guests: the guest's disk image (opened snapshot=on)" },
	{ "memory", "vm.memory", "SIZE", "guest RAM, e.g. 256M (default 256M)" },
	{ "vcpus", "vm.vcpus", "N", "vCPUs (default 2)" },
	{ "machine", "vm.machine", "TYPE", "QEMU machine type (default pc)" },
	{ "cpu", "vm.cpu", "MODEL", "QEMU -cpu model, or none for QEMU's default" },
	{ "backing", "vm.backing", "KIND", "anon, anon-nothp, hugetlb or memfd (default anon)" },
	{ "hugepage-size", "vm.hugepage_size", "SIZE", "hugetlb page size, 2M or 1G" },
	{ "prealloc", "vm.prealloc", "BOOL", "preallocate guest RAM (default false)" },
	{ "user", "vm.user", "USER", "QEMU drops to this user (-runas; -run-with user= on QEMU 9.1+), or none" },
	{ "accel", "vm.accel", "A", "kvm (default; no /dev/kvm: in a host VM), tcg (here, emulated) or auto" },
	{ "qemu-arg", "vm.extra_args", "ARG", "one more QEMU argument; repeatable" },
	{ "pattern", "guest.pattern", "P", "workers' pattern: write64, read64, rand-set, idle, fault-linear (default write64)" },
	{ "vcpu-pattern", "guest.vcpu_patterns", "N=P", "pattern of vCPU N; repeatable" },
	{ "region", "guest.region", "SIZE|PCT", "workload region: a size or a share of free RAM (default 50%)" },
	{ "page-size", "guest.page_size", "4k|2m", "guest page size (default 4k)" },
	{ "probe-vcpu", "guest.probe.vcpu", "N|none", "vCPU of the latency probe (default 0)" },
	{ "probe-gap", "guest.probe.gap_us", "US", "idle time between probe reads (default 100)" },
	{ "seed", "guest.seed", "N", "rand-set seed (default 1)" },
	{ "clock", "guest.clock", "C", "guest clock: auto, kvmclock, cpuid, pit" },
	{ "telemetry-interval", "guest.telemetry_interval_ms", "MS", "guest telemetry period (default 100)" },
	{ "sink", "snapshot.sink", "file|null", "where the snapshot goes (default file, in the run directory)" },
	{ "keep-snapshot", "snapshot.keep", "BOOL", "keep snapshot files (default false)" },
	{ "max-bandwidth", "snapshot.max_bandwidth", "SIZE", "snapshot bandwidth per second, e.g. 100M, or none" },
	{ "snapshot-timeout", "snapshot.timeout_s", "S", "a snapshot taking longer fails (default 600)" },
	{ "dirty-tracking", "dirty_log.tracking", "bitmap|ring", "dirty-log: KVM's dirty bitmap (default) or dirty ring" },
	{ "dirty-ring-size", "dirty_log.ring_size", "N", "dirty-log: ring entries per vCPU, a power of 2 (default 4096)" },
	{ "iterate", "dirty_log.iterate_s", "S", "dirty-log: how long the migration is held in its passes (default 20)" },
	{ "steady", "numa_hinting.steady_s", "S", "numa-hinting: how long NUMA balancing scans the guest RAM (default 20)" },
	{ "migrate-bandwidth", "dirty_log.max_bandwidth", "SIZE", "dirty-log: QEMU's max-bandwidth while iterating (default 32M)" },
	{ "downtime-limit", "dirty_log.downtime_limit_ms", "MS", "dirty-log: QEMU's downtime-limit while iterating (default 1)" },
	{ "completion", "dirty_log.completion", "cancel|complete", "dirty-log: how the migration ends (default cancel)" },
	{ "warmup", "timing.warmup_s", "S", "warm-up before sampling counts (default 2)" },
	{ "pre", "timing.pre_s", "S", "window before the snapshot or migration (default 5)" },
	{ "post", "timing.post_s", "S", "window after the snapshot or migration ended (default 5)" },
	{ "interval", "timing.interval_ms", "MS", "sample interval, from 100ms to 1m, e.g. 500ms or 2s (default 1s)" },
	{ "knob", "knobs", "NAME=VALUE", "sysctl:NAME, module:M.P or debugfs:PATH for every arm; repeatable" },
	{ "arm", "arms", "LABEL[:KNOB=V,...]", "an arm with its own knobs (and kernel=PATH,modules=DIR, pin); repeatable (interleaved)" },
	{ "kernel", "host_vm.kernel", "PATH", "run every arm in a host VM booting this bzImage (docs/kernel-arms.md)" },
	{ "modules", "host_vm.modules", "DIR", "the kernel's lib/modules/RELEASE (default: beside the image, /lib/modules)" },
	{ "kernel-cmdline", "host_vm.cmdline", "TEXT", "more of the host VM's kernel command line" },
	{ "host-vm-memory", "host_vm.memory", "SIZE", "host VM RAM (default 2G)" },
	{ "host-vm-vcpus", "host_vm.vcpus", "N", "host VM vCPUs (default 2)" },
	{ "host-vm-numa-nodes", "host_vm.numa_nodes", "N", "host VM NUMA nodes, memory and vCPUs split evenly (default 1)" },
	{ "host-vm-accel", "host_vm.accel", "A", "auto (nested KVM, else TCG), kvm or tcg" },
	{ "host-vm-boot-timeout", "host_vm.boot_timeout_s", "S", "QEMU start to the runner inside ready (default 120)" },
};

enum {
	OPT_SPEC = 1000,
	OPT_OUTPUT,
	OPT_QEMU,
	OPT_GUEST_IMAGE,
	OPT_NO_PREFLIGHT,
	OPT_NO_BPF,
	OPT_NO_HOST_VM,
	OPT_LABEL,
	OPT_STATE_DIR,
	OPT_PRINT_SPEC,
	OPT_QUIET,
	OPT_LOCAL,
	OPT_WAIT,
	OPT_FIELD = 2000,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench run [--spec FILE] [FLAGS] [--wait] [--json]\n"
		"       snapbench run --local [--spec FILE] [FLAGS] [--output DIR] [--json]\n"
		"\n"
		"Runs the benchmark: arms x repetitions of the spec's scenario (field scenario,\n"
		"--scenario): background-snapshot (the default; windows pre, snapshot, post),\n"
		"dirty-log or postcopy-restore (windows pre, migration, post), numa-hinting\n"
		"(windows pre, steady, post), uffd-restore (windows pre, fault-in, post;\n"
		"docs/scenarios.md).\n"
		"Flags override the spec file field by field (docs/running.md lists every field).\n"
		"\n"
		"By default the run is submitted to snapbenchd, which queues it and keeps its\n"
		"report in its state directory; snapbench prints the run id (--wait: follows\n"
		"the run and exits with its outcome). With --local it runs here and now,\n"
		"without the daemon, and writes DIR/RUN-ID/report.json.\n"
		"\n"
		"  --spec FILE           the run spec (JSON)\n"
		"  --wait                follow the run to its end (progress on stderr; Ctrl-C\n"
		"                        cancels it)\n"
		"  --socket PATH         snapbenchd's socket (default $SNAPBENCH_SOCKET, else\n"
		"                        /run/snapbench/snapbenchd.sock)\n"
		"  --local               run here, without the daemon (options marked --local:\n"
		"                        only then)\n"
		"  --output DIR          --local: results directory\n"
		"                        (default %s)\n"
		"  --label LABEL         label of the single arm (default \"default\")\n",
		runner_default_results_dir());
	for (size_t i = 0; i < ARRAY_SIZE(field_flags); i++) {
		char left[64];
		snprintf(left, sizeof(left), "  --%s %s", field_flags[i].flag, field_flags[i].arg);
		snprintf(left + strlen(left), sizeof(left) - strlen(left), "%*s", strlen(left) < 24 ? (int)(24 - strlen(left)) : 1, "");
		print_wrapped_at(out, left, field_flags[i].help, 80, 24); /* --help fits 80 columns */
	}
	fprintf(out,
		"  --no-bpf              no BPF probes (their counters are reported unavailable)\n"
		"  --no-host-vm          without a usable /dev/kvm, refuse instead of running in\n"
		"                        a host VM (spec host_vm.fallback false)\n"
		"  --qemu PATH           --local: QEMU binary (default: the spec's vm.qemu, else\n"
		"                        " QEMU_DEFAULT_BINARY " in PATH)\n"
		"  --guest-image PATH    --local: micro guest image (default: the build's, else\n"
		"                        installed)\n"
		"  --state-dir DIR       --local: knob journal and lock (default: the results\n"
		"                        directory)\n"
		"  --no-preflight        --local: run even when preflight checks fail\n"
		"  --print-spec          print the validated spec as JSON and exit\n"
		"  --json                print the outcome as JSON on stdout (progress stays on\n"
		"                        stderr)\n"
		"  -q, --quiet           no progress\n"
		"\n"
		"MS and S take a number in that unit, or a duration with its unit: 500ms, 2s, 1m.\n"
		"\n"
		"Exit codes: 0 completed (without --wait: queued), 1 the run failed, 2 bad spec\n"
		"or flags, 4 preflight failed (--local: a missing host feature; the message says\n"
		"how to fix it) or snapbenchd not reachable, 5 not authorized to submit,\n"
		"6 cancelled (SIGINT/SIGTERM: the VM is stopped and knobs are restored first).\n");
}

/* the run engine's progress, printed as snapbenchd's clients print it */
static void on_progress(const struct runner_progress *p, void *userdata)
{
	_cleanup_json_ struct json_object *o = run_progress_to_json(p);

	progress_printer_update(userdata, NULL, o);
}

static void print_summary(struct json_object *report, const char *path)
{
	struct json_object *arms = client_get(report, "arms", NULL, NULL);
	struct json_object *err = client_get(report, "error", "message", NULL);
	const char *w = report_action_window(report);
	const char *const windows[] = { "pre", w };
	const char *sc = client_get_string(client_get(report, "spec", NULL, NULL), "scenario", NULL);
	const char *const titles[] = { "before (pre)", report_scenario_window_title(sc) };

	printf("run %s %s\n", client_get_string(report, "id", NULL), client_get_string(report, "state", NULL));
	if (err)
		print_lines_under(stdout, "  error: ", client_terminal_text(err));
	for (size_t a = 0; a < json_object_array_length(arms); a++)
		print_arm_summary(stdout, report, json_object_array_get_idx(arms, a), windows, titles, ARRAY_SIZE(windows));
	print_report_retried(stdout, report);
	printf("\nreport: %s\n", path);
}

static void print_json(struct json_object *report, const char *path)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();

	if (!o)
		return;
	json_object_object_add(o, "id", json_object_get(client_get(report, "id", NULL, NULL)));
	json_object_object_add(o, "state", json_object_get(client_get(report, "state", NULL, NULL)));
	json_object_object_add(o, "report", json_object_new_string(path));
	json_object_object_add(o, "error", json_object_get(client_get(report, "error", NULL, NULL)));
	json_object_object_add(o, "arms", json_object_get(client_get(report, "arms", NULL, NULL)));
	client_print_json(o);
}

struct run_args {
	struct daemon_args d; /* --socket, --json */
	struct run_spec spec; /* the spec file, then the flags over it */
	bool spec_ready;      /* spec_init() done: run_args_done() frees it */
	const char *spec_file, *output, *qemu, *guest_image, *label, *state_dir;
	bool no_preflight, print_spec, quiet, local, wait;
};

static void run_args_done(struct run_args *a)
{
	if (a->spec_ready)
		spec_done(&a->spec);
}

static int parse_field_flag(struct run_args *a, size_t i, const char *arg)
{
	struct sb_error err = {};
	char flag[64], value[16];
	unsigned ms;

	snprintf(flag, sizeof(flag), "--%s", field_flags[i].flag);
	/* --interval as top's and probe's, with the spec's bounds (its field is in whole ms) */
	if (!strcmp(field_flags[i].field, "timing.interval_ms")) {
		if (verb_parse_interval(arg, SPEC_INTERVAL_MIN_MS, SPEC_INTERVAL_MAX_MS, &ms) < 0)
			return EXIT_USAGE;
		snprintf(value, sizeof(value), "%u", ms);
		arg = value;
	}
	if (spec_set(&a->spec, field_flags[i].field, arg, flag, &err) < 0) {
		verb_error("%s", err.msg);
		return EXIT_USAGE;
	}
	return 0;
}

static int parse_option(int opt, const char *arg, void *userdata)
{
	struct run_args *a = userdata;
	struct sb_error err = {};

	switch (opt) {
	case OPT_SPEC:
		break; /* applied before the flags */
	case 'o':
	case OPT_OUTPUT:
		a->output = arg;
		break;
	case OPT_QEMU:
		a->qemu = arg;
		break;
	case OPT_GUEST_IMAGE:
		a->guest_image = arg;
		break;
	case OPT_NO_PREFLIGHT:
		a->no_preflight = true;
		break;
	case OPT_NO_BPF:
		a->spec.bpf.enabled = false;
		break;
	case OPT_NO_HOST_VM:
		a->spec.host_vm.fallback = false;
		break;
	case OPT_LABEL:
		a->label = arg;
		break;
	case OPT_STATE_DIR:
		a->state_dir = arg;
		break;
	case OPT_PRINT_SPEC:
		a->print_spec = true;
		break;
	case 'q':
	case OPT_QUIET:
		a->quiet = true;
		break;
	case OPT_LOCAL:
		a->local = true;
		break;
	case OPT_WAIT:
		a->wait = true;
		break;
	case 'n':
		if (spec_set(&a->spec, "repetitions", arg, "-n", &err) < 0) {
			verb_error("%s", err.msg);
			return EXIT_USAGE;
		}
		break;
	default:
		if (opt >= OPT_FIELD && opt < OPT_FIELD + (int)ARRAY_SIZE(field_flags))
			return parse_field_flag(a, (size_t)(opt - OPT_FIELD), arg);
		verb_error("see 'snapbench run --help'");
		return EXIT_USAGE;
	}
	return 0;
}

/* The spec file comes first, whatever the flags' order, so flags override it. */
static int load_spec_file(int argc, char **argv, struct run_args *a)
{
	struct sb_error err = {};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--spec") && i + 1 < argc)
			a->spec_file = argv[i + 1];
		else if (!strncmp(argv[i], "--spec=", 7))
			a->spec_file = argv[i] + 7;
	}
	if (spec_init(&a->spec) < 0) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	a->spec_ready = true;
	if (a->spec_file && spec_apply_file(&a->spec, a->spec_file, &err) < 0) {
		verb_error("%s", err.msg);
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

static int apply_label(struct run_args *a)
{
	char *l;

	if (a->spec.n_arms != 1) {
		verb_error("--label names the single arm, but the spec has %zu arms; give each --arm its label",
			a->spec.n_arms);
		return EXIT_USAGE;
	}
	if (!spec_label_valid(a->label)) {
		verb_error("--label: '%s' is not a label; use 1-64 letters, digits, '.', '_', '+' or '-'", a->label);
		return EXIT_USAGE;
	}
	l = strdup(a->label);
	if (!l)
		return EXIT_USAGE;
	free(a->spec.arms[0].label);
	a->spec.arms[0].label = l;
	return ARGS_GO_ON;
}

/* Fills *a (run_args_done() frees it, also on failure); ARGS_GO_ON or an exit code. */
static int parse_argv(int argc, char **argv, struct run_args *a)
{
	struct option options[ARRAY_SIZE(field_flags) + 14];
	struct daemon_verb_parser parser = {
		.name = "run",
		.usage = usage,
		.options = options,
		.shortopts = "qn:o:",
		.positional = ARGS_NONE,
		.parse_option = parse_option,
	};
	struct sb_error err = {};
	size_t k = 0;
	int r;

	*a = (struct run_args){};
	r = load_spec_file(argc, argv, a);
	if (r != ARGS_GO_ON)
		return r;

	for (size_t i = 0; i < ARRAY_SIZE(field_flags); i++)
		options[k++] = (struct option){ field_flags[i].flag, required_argument, NULL, OPT_FIELD + (int)i };
	options[k++] = (struct option){ "spec", required_argument, NULL, OPT_SPEC };
	options[k++] = (struct option){ "output", required_argument, NULL, OPT_OUTPUT };
	options[k++] = (struct option){ "qemu", required_argument, NULL, OPT_QEMU };
	options[k++] = (struct option){ "guest-image", required_argument, NULL, OPT_GUEST_IMAGE };
	options[k++] = (struct option){ "no-preflight", no_argument, NULL, OPT_NO_PREFLIGHT };
	options[k++] = (struct option){ "no-bpf", no_argument, NULL, OPT_NO_BPF };
	options[k++] = (struct option){ "no-host-vm", no_argument, NULL, OPT_NO_HOST_VM };
	options[k++] = (struct option){ "label", required_argument, NULL, OPT_LABEL };
	options[k++] = (struct option){ "state-dir", required_argument, NULL, OPT_STATE_DIR };
	options[k++] = (struct option){ "print-spec", no_argument, NULL, OPT_PRINT_SPEC };
	options[k++] = (struct option){ "quiet", no_argument, NULL, OPT_QUIET };
	options[k++] = (struct option){ "local", no_argument, NULL, OPT_LOCAL };
	options[k++] = (struct option){ "wait", no_argument, NULL, OPT_WAIT };
	options[k] = (struct option){ 0 };

	r = daemon_args_parse(&parser, argc, argv, &a->d, a);
	if (r != ARGS_GO_ON)
		return r;
	if (a->label) {
		r = apply_label(a);
		if (r != ARGS_GO_ON)
			return r;
	}
	if (spec_validate(&a->spec, &err) < 0) {
		verb_error("%s%s%s", a->spec_file ? a->spec_file : "", a->spec_file ? ": " : "", err.msg);
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

/* The flags of one mode given in the other; ARGS_GO_ON or EXIT_USAGE. */
static int check_mode(const struct run_args *a)
{
	if (!a->local) {
		const char *local_only = a->output ? "--output" : a->qemu ? "--qemu" : a->guest_image ? "--guest-image"
				       : a->state_dir ? "--state-dir" : a->no_preflight ? "--no-preflight" : NULL;
		if (local_only) {
			verb_error("%s applies to --local runs; snapbenchd keeps runs in its state directory and uses its own settings (see snapbenchd(8))",
				local_only);
			return EXIT_USAGE;
		}
		return ARGS_GO_ON;
	}
	if (a->wait || a->d.socket_path) {
		verb_error("%s is for runs through snapbenchd; a --local run always runs to its end",
			a->wait ? "--wait" : "--socket");
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

static void install_cancel_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The exit code of a finished --local run: r from runner_execute(), its report. */
static int local_exit_code(int r, struct json_object *report)
{
	struct json_object *phase = client_get(report, "error", "phase", NULL);

	if (r == 0)
		return EXIT_OK;
	if (r == -ECANCELED)
		return EXIT_CANCELLED;
	if (phase && !strcmp(json_object_get_string(phase), "preflight"))
		return EXIT_UNAVAILABLE;
	return EXIT_FAIL;
}

/* The run here and now: RESULTS/RUN-ID/report.json, the outcome on stdout. */
static int run_local(const struct run_args *a)
{
	_cleanup_json_ struct json_object *report = NULL;
	char id[REPORT_ID_MAX], run_dir[PATH_MAX], report_path[PATH_MAX];
	const char *output = a->output ? a->output : runner_default_results_dir();
	struct sb_error err = {}, rerr = {};
	struct progress_printer pp;
	int r;

	report_new_id(realtime_ns(), id);
	if ((size_t)snprintf(run_dir, sizeof(run_dir), "%s/%s", output, id) >= sizeof(run_dir)) {
		verb_error("--output: path too long");
		return EXIT_USAGE;
	}

	progress_printer_init(&pp, stderr);
	struct runner_options opts = {
		.run_dir = run_dir,
		.state_dir = a->state_dir ? a->state_dir : output,
		.run_id = id,
		.qemu_binary = a->qemu,
		.guest_image = a->guest_image,
		.skip_preflight = a->no_preflight,
		.cancel = &cancel_requested,
		.progress = a->quiet ? NULL : on_progress,
		.userdata = &pp,
	};
	install_cancel_handlers();

	if (!a->quiet)
		fprintf(stderr, "snapbench run: %s, %u repetition(s) x %zu arm(s), results in %s\n", id,
			a->spec.repetitions, a->spec.n_arms, run_dir);
	r = runner_execute(&a->spec, &opts, report_path, &err);
	progress_printer_done(&pp);

	if (report_read(report_path, &report, &rerr) < 0) {
		/* no report: the run directory itself was unusable */
		verb_error("%s", *err.msg ? err.msg : rerr.msg);
		return EXIT_FAIL;
	}
	if (a->d.json)
		print_json(report, report_path);
	else
		print_summary(report, report_path);
	/*
	 * also with --json: stdout is for the JSON, the reason goes to stderr, one line per
	 * preflight failure; not kept as an error: the outcome on stdout has it
	 */
	if (r < 0)
		verb_message("%s", err.msg);
	return local_exit_code(r, report);
}

static int run(const struct run_args *a)
{
	int r;

	if (a->print_spec) {
		_cleanup_json_ struct json_object *j = NULL;
		if (spec_to_json(&a->spec, &j) < 0)
			return EXIT_FAIL;
		client_print_json(j);
		return EXIT_OK;
	}
	r = check_mode(a);
	if (r != ARGS_GO_ON)
		return r;
	if (!a->local) {
		struct remote_run_options ro = {
			.socket_path = a->d.socket_path, .wait = a->wait, .json = a->d.json, .quiet = a->quiet
		};
		return remote_run(&a->spec, &ro);
	}
	return run_local(a);
}

static int run_main(int argc, char **argv)
{
	struct run_args a;
	int r;

	r = parse_argv(argc, argv, &a);
	if (r == ARGS_GO_ON)
		r = run(&a);
	run_args_done(&a);
	return r;
}

const struct verb verb_run = {
	.name = "run",
	.summary = "run the benchmark through snapbenchd (or --local, here)",
	.run = run_main,
};
