// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench run: one benchmark run, submitted to snapbenchd (run-remote.c),
 * or with --local here and now, without the daemon.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "daemon-format.h"
#include "exit-codes.h"
#include "macro.h"
#include "progress.h"
#include "report.h"
#include "run-remote.h"
#include "runner.h"
#include "spec.h"
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
	{ "backing", "vm.backing", "KIND", "anon, anon-nothp or hugetlb (default anon)" },
	{ "hugepage-size", "vm.hugepage_size", "SIZE", "hugetlb page size, 2M or 1G" },
	{ "prealloc", "vm.prealloc", "BOOL", "preallocate guest RAM (default false)" },
	{ "user", "vm.user", "USER", "QEMU drops to this user (-runas), or none" },
	{ "qemu-arg", "vm.extra_args", "ARG", "one more QEMU argument; repeatable" },
	{ "pattern", "guest.pattern", "P", "workers' pattern: write64, read64, rand-set, idle (default write64)" },
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
	{ "warmup", "timing.warmup_s", "S", "warm-up before sampling counts (default 2)" },
	{ "pre", "timing.pre_s", "S", "window before the snapshot (default 5)" },
	{ "post", "timing.post_s", "S", "window after the snapshot (default 5)" },
	{ "interval", "timing.interval_ms", "MS", "sample interval, 100 to 60000 (default 1000)" },
	{ "knob", "knobs", "NAME=VALUE", "sysctl:NAME or module:M.P for every arm; repeatable" },
	{ "arm", "arms", "LABEL[:KNOB=V,...]", "an arm with its own knobs (and kernel=PATH,modules=DIR); repeatable (interleaved)" },
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
	OPT_JSON,
	OPT_QEMU,
	OPT_GUEST_IMAGE,
	OPT_NO_PREFLIGHT,
	OPT_NO_BPF,
	OPT_LABEL,
	OPT_STATE_DIR,
	OPT_PRINT_SPEC,
	OPT_QUIET,
	OPT_LOCAL,
	OPT_WAIT,
	OPT_SOCKET,
	OPT_HELP,
	OPT_FIELD = 2000,
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench run [--spec FILE] [FLAGS] [--wait] [--json]\n"
		"       snapbench run --local [--spec FILE] [FLAGS] [--output DIR] [--json]\n"
		"\n"
		"Runs the benchmark: arms x repetitions of the background-snapshot scenario\n"
		"with the built-in micro guest. Flags override the spec file field by field\n"
		"(docs/running.md lists every field).\n"
		"\n"
		"By default the run is submitted to snapbenchd, which queues it and keeps its\n"
		"report in its state directory; snapbench prints the run id (--wait: follows\n"
		"the run and exits with its outcome). With --local it runs here and now,\n"
		"without the daemon, and writes DIR/RUN-ID/report.json.\n"
		"\n"
		"  --spec FILE           the run spec (JSON)\n"
		"  --wait                follow the run to its end (progress on stderr; Ctrl-C cancels it)\n"
		"  --socket PATH         snapbenchd's socket (default $SNAPBENCH_SOCKET, else\n"
		"                        /run/snapbench/snapbenchd.sock)\n"
		"  --local               run here, without the daemon (options marked --local: only then)\n"
		"  --output DIR          --local: results directory (default %s)\n"
		"  --label LABEL         label of the single arm (default \"default\")\n",
		runner_default_results_dir());
	for (size_t i = 0; i < ARRAY_SIZE(field_flags); i++) {
		char left[64];
		snprintf(left, sizeof(left), "--%s %s", field_flags[i].flag, field_flags[i].arg);
		fprintf(out, "  %-21s %s\n", left, field_flags[i].help);
	}
	fprintf(out,
		"  --no-bpf              no BPF probes (their counters are reported unavailable)\n"
		"  --qemu PATH           --local: QEMU binary (default qemu-system-x86_64 in PATH)\n"
		"  --guest-image PATH    --local: micro guest image (default: the build's, else installed)\n"
		"  --state-dir DIR       --local: knob journal and lock (default: the results directory)\n"
		"  --no-preflight        --local: run even when preflight checks fail\n"
		"  --print-spec          print the validated spec as JSON and exit\n"
		"  --json                print the outcome as JSON on stdout (progress stays on stderr)\n"
		"  -q, --quiet           no progress\n"
		"\n"
		"Exit codes: 0 completed (without --wait: queued), 1 the run failed, 2 bad spec\n"
		"or flags, 4 preflight failed (--local: a missing host feature; the message says\n"
		"how to fix it) or snapbenchd not reachable, 5 not authorized to submit,\n"
		"6 cancelled (SIGINT/SIGTERM: the VM is stopped and knobs are restored first).\n");
}

/* the run engine's progress, printed as snapbenchd's clients print it */
static void on_progress(const struct runner_progress *p, void *userdata)
{
	_cleanup_json_ struct json_object *o = progress_to_json(p);

	progress_printer_update(userdata, NULL, o);
}

static void print_summary(struct json_object *report, const char *path)
{
	struct json_object *arms = client_get(report, "arms", NULL, NULL);
	struct json_object *err = client_get(report, "error", "message", NULL);
	char pre[96], snap[96];

	printf("run %s %s\n", json_object_get_string(client_get(report, "id", NULL, NULL)),
	       json_object_get_string(client_get(report, "state", NULL, NULL)));
	if (err)
		printf("  error: %s\n", json_object_get_string(err));
	for (size_t a = 0; a < json_object_array_length(arms); a++) {
		struct json_object *arm = json_object_array_get_idx(arms, a);
		printf("\narm %s: %d of %d repetitions completed, median [min max]\n",
		       json_object_get_string(client_get(arm, "label", NULL, NULL)),
		       json_object_get_int(client_get(arm, "repetitions", "completed", NULL)),
		       json_object_get_int(client_get(arm, "repetitions", "total", NULL)));
		printf("  %-20s %-28s %s\n", "", "before (pre)", "during the snapshot");
		for (size_t i = 0; i < n_metric_rows; i++) {
			struct json_object *p = client_get(arm, "windows", "pre", metric_rows[i].metric);
			struct json_object *s = client_get(arm, "windows", "snapshot", metric_rows[i].metric);
			if (!p && !s)
				continue;
			fmt_stat(p, pre, sizeof(pre));
			fmt_stat(s, snap, sizeof(snap));
			printf("  %-20s %-28s %s\n", metric_rows[i].label, pre, s ? snap : "n/a");
		}
	}
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

static int run_main(int argc, char **argv)
{
	struct option *longopts;
	struct run_spec spec;
	struct sb_error err = {};
	const char *spec_file = NULL, *output = NULL, *qemu = NULL, *guest_image = NULL, *label = NULL,
		   *state_dir = NULL;
	bool json = false, no_preflight = false, print_spec = false, quiet = false, local = false, wait = false;
	const char *socket_path = NULL;
	size_t n_opts = ARRAY_SIZE(field_flags) + 16, k = 0;
	int c, r, ret;

	/* the spec file comes first, whatever the flags' order, so flags override it */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--spec") && i + 1 < argc)
			spec_file = argv[i + 1];
		else if (!strncmp(argv[i], "--spec=", 7))
			spec_file = argv[i] + 7;
	}
	if (spec_init(&spec) < 0) {
		fprintf(stderr, "snapbench run: out of memory\n");
		return EXIT_FAIL;
	}
	if (spec_file && spec_apply_file(&spec, spec_file, &err) < 0) {
		fprintf(stderr, "snapbench run: %s\n", err.msg);
		spec_done(&spec);
		return EXIT_USAGE;
	}

	longopts = calloc(n_opts, sizeof(*longopts));
	if (!longopts) {
		spec_done(&spec);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(field_flags); i++)
		longopts[k++] = (struct option){ field_flags[i].flag, required_argument, NULL, OPT_FIELD + (int)i };
	longopts[k++] = (struct option){ "spec", required_argument, NULL, OPT_SPEC };
	longopts[k++] = (struct option){ "output", required_argument, NULL, OPT_OUTPUT };
	longopts[k++] = (struct option){ "json", no_argument, NULL, OPT_JSON };
	longopts[k++] = (struct option){ "qemu", required_argument, NULL, OPT_QEMU };
	longopts[k++] = (struct option){ "guest-image", required_argument, NULL, OPT_GUEST_IMAGE };
	longopts[k++] = (struct option){ "no-preflight", no_argument, NULL, OPT_NO_PREFLIGHT };
	longopts[k++] = (struct option){ "no-bpf", no_argument, NULL, OPT_NO_BPF };
	longopts[k++] = (struct option){ "label", required_argument, NULL, OPT_LABEL };
	longopts[k++] = (struct option){ "state-dir", required_argument, NULL, OPT_STATE_DIR };
	longopts[k++] = (struct option){ "print-spec", no_argument, NULL, OPT_PRINT_SPEC };
	longopts[k++] = (struct option){ "quiet", no_argument, NULL, OPT_QUIET };
	longopts[k++] = (struct option){ "local", no_argument, NULL, OPT_LOCAL };
	longopts[k++] = (struct option){ "wait", no_argument, NULL, OPT_WAIT };
	longopts[k++] = (struct option){ "socket", required_argument, NULL, OPT_SOCKET };
	longopts[k++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	longopts[k] = (struct option){ 0 };

	ret = EXIT_USAGE;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hqn:o:", longopts, NULL)) != -1) {
		char flag[64];
		switch (c) {
		case OPT_SPEC:
			break; /* applied above */
		case 'o':
		case OPT_OUTPUT:
			output = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_QEMU:
			qemu = optarg;
			break;
		case OPT_GUEST_IMAGE:
			guest_image = optarg;
			break;
		case OPT_NO_PREFLIGHT:
			no_preflight = true;
			break;
		case OPT_NO_BPF:
			spec.bpf.enabled = false;
			break;
		case OPT_LABEL:
			label = optarg;
			break;
		case OPT_STATE_DIR:
			state_dir = optarg;
			break;
		case OPT_PRINT_SPEC:
			print_spec = true;
			break;
		case 'q':
		case OPT_QUIET:
			quiet = true;
			break;
		case OPT_LOCAL:
			local = true;
			break;
		case OPT_WAIT:
			wait = true;
			break;
		case OPT_SOCKET:
			socket_path = optarg;
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			ret = EXIT_OK;
			goto out;
		case 'n':
			if (spec_set(&spec, "repetitions", optarg, "-n", &err) < 0) {
				fprintf(stderr, "snapbench run: %s\n", err.msg);
				goto out;
			}
			break;
		default:
			if (c >= OPT_FIELD && c < OPT_FIELD + (int)ARRAY_SIZE(field_flags)) {
				snprintf(flag, sizeof(flag), "--%s", field_flags[c - OPT_FIELD].flag);
				if (spec_set(&spec, field_flags[c - OPT_FIELD].field, optarg, flag, &err) < 0) {
					fprintf(stderr, "snapbench run: %s\n", err.msg);
					goto out;
				}
				break;
			}
			fprintf(stderr, "snapbench run: see 'snapbench run --help'\n");
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "snapbench run: unexpected argument '%s'; see 'snapbench run --help'\n", argv[optind]);
		goto out;
	}
	if (label) {
		if (spec.n_arms != 1) {
			fprintf(stderr, "snapbench run: --label names the single arm, but the spec has %zu arms; give each --arm its label\n",
				spec.n_arms);
			goto out;
		}
		if (!spec_label_valid(label)) {
			fprintf(stderr, "snapbench run: --label: '%s' is not a label; use 1-64 letters, digits, '.', '_', '+' or '-'\n",
				label);
			goto out;
		}
		char *l = strdup(label);
		if (!l)
			goto out;
		free(spec.arms[0].label);
		spec.arms[0].label = l;
	}
	if (spec_validate(&spec, &err) < 0) {
		fprintf(stderr, "snapbench run: %s%s%s\n", spec_file ? spec_file : "", spec_file ? ": " : "", err.msg);
		goto out;
	}
	if (print_spec) {
		_cleanup_json_ struct json_object *j = NULL;
		if (spec_to_json(&spec, &j) < 0) {
			ret = EXIT_FAIL;
			goto out;
		}
		client_print_json(j);
		ret = EXIT_OK;
		goto out;
	}

	if (!local) {
		const char *local_only = output ? "--output" : qemu ? "--qemu" : guest_image ? "--guest-image"
				       : state_dir ? "--state-dir" : no_preflight ? "--no-preflight" : NULL;
		if (local_only) {
			fprintf(stderr, "snapbench run: %s applies to --local runs; snapbenchd keeps runs in its state directory and uses its own settings (see snapbenchd(8))\n",
				local_only);
			goto out;
		}
		struct remote_run_options ro = { .socket_path = socket_path, .wait = wait, .json = json, .quiet = quiet };
		ret = remote_run(&spec, &ro);
		goto out;
	}
	if (wait || socket_path) {
		fprintf(stderr, "snapbench run: %s is for runs through snapbenchd; a --local run always runs to its end\n",
			wait ? "--wait" : "--socket");
		goto out;
	}

	/* the run directory: RESULTS/RUN-ID */
	char id[REPORT_ID_MAX], run_dir[PATH_MAX], report_path[PATH_MAX];
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint32_t)mono_ns();
	report_make_id(realtime_ns(), rnd, id);
	if (!output)
		output = runner_default_results_dir();
	if ((size_t)snprintf(run_dir, sizeof(run_dir), "%s/%s", output, id) >= sizeof(run_dir)) {
		fprintf(stderr, "snapbench run: --output: path too long\n");
		goto out;
	}

	struct progress_printer pp;
	progress_printer_init(&pp, stderr);
	struct runner_options opts = {
		.run_dir = run_dir,
		.state_dir = state_dir ? state_dir : output,
		.run_id = id,
		.qemu_binary = qemu,
		.guest_image = guest_image,
		.skip_preflight = no_preflight,
		.cancel = &cancel_requested,
		.progress = quiet ? NULL : on_progress,
		.userdata = &pp,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (!quiet)
		fprintf(stderr, "snapbench run: %s, %u repetition(s) x %zu arm(s), results in %s\n", id,
			spec.repetitions, spec.n_arms, run_dir);
	r = runner_execute(&spec, &opts, report_path, &err);
	progress_printer_done(&pp);

	struct json_object *report = NULL;
	struct sb_error rerr = {};
	if (report_read(report_path, &report, &rerr) < 0) {
		/* no report: the run directory itself was unusable */
		fprintf(stderr, "snapbench run: %s\n", *err.msg ? err.msg : rerr.msg);
		ret = EXIT_FAIL;
		goto out;
	}
	if (json)
		print_json(report, report_path);
	else
		print_summary(report, report_path);
	if (r < 0) /* also with --json: stdout is for the JSON, the reason goes to stderr */
		fprintf(stderr, "snapbench run: %s\n", err.msg);

	struct json_object *phase = client_get(report, "error", "phase", NULL);
	if (r == 0)
		ret = EXIT_OK;
	else if (r == -ECANCELED)
		ret = EXIT_CANCELLED;
	else if (phase && !strcmp(json_object_get_string(phase), "preflight"))
		ret = EXIT_UNAVAILABLE;
	else
		ret = EXIT_FAIL;
	json_object_put(report);
out:
	free(longopts);
	spec_done(&spec);
	return ret;
}

const struct verb verb_run = {
	.name = "run",
	.summary = "run the benchmark through snapbenchd (or --local, here)",
	.run = run_main,
};
