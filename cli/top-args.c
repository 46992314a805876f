// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top's options: the target (--pid, --qmp or --vm, and which
 * exclude each other), the interval and count, the sort and filter, and
 * its --help.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "exit-codes.h"
#include "parse-number.h"
#include "top.h"
#include "verb-args.h"

/* top's smallest --interval, which its --help and its error name (probe's is 10 ms, run's 100 ms) */
#define TOP_MIN_INTERVAL_MS 50

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench top [--pid PID | --qmp SOCKET | --vm NAME] [--no-qmp]\n"
		"                     [--interval MS] [--count N] [--sort current|total|name]\n"
		"                     [--filter REGEX] [--no-attribution] [--json]\n"
		"\n"
		"kvm_stat's table for a QEMU, from snapbench's BPF probes: each counter\n"
		"(KVM faults, TLB flushes and shootdowns, MMU-notifier invalidations) and each\n"
		"cause of invalidations and remote shootdowns, and each VM exit reason\n"
		"(kvm_exit.REASON, as perf kvm stat names them) as a row: its total since top\n"
		"started, its share of its group's total, its rate over the last interval.\n"
		"Next to them, as their own group, KVM's own cumulative stats (kvm.NAME, the\n"
		"vCPUs' summed) from QMP query-stats or, for a libvirt domain, from libvirt.\n"
		"Without a target: every process on this host that holds a KVM VM, at most %d,\n"
		"its rows prefixed PID:NAME: (NAME from -name), BPF rows only; the host is\n"
		"scanned again every interval: a VM that starts comes in, one that exits leaves,\n"
		"and a line says so; with none yet, top waits for one (exit 4 after --count\n"
		"refreshes without one).\n"
		"On a terminal the screen is redrawn every interval; otherwise the tables\n"
		"follow each other. Counters this host cannot count are listed as such.\n"
		"\n"
		"  --pid PID          the QEMU process (or any of its threads); its KVM stats\n"
		"                     from a QMP socket found on its command line (-qmp\n"
		"                     unix:PATH,server=on, or -chardev socket,path=PATH,\n"
		"                     server=on with -mon mode=control)\n"
		"  --qmp SOCKET       KVM stats from QEMU's QMP unix socket, and the QEMU from\n"
		"                     it (with --pid: the two must agree); top holds the\n"
		"                     socket while it runs: QEMU serves one QMP client per\n"
		"                     socket at a time\n"
		"  --vm NAME          the libvirt domain NAME (qemu:///system): its QEMU, and\n"
		"                     its KVM stats through libvirt (no monitor passthrough)\n"
		"  --no-qmp           with --pid: do not look for a QMP socket (BPF rows only)\n"
		"  --interval MS      milliseconds between refreshes, from %u, or a duration\n"
		"                     with its unit: 500ms, 2s (default 1s)\n"
		"  --count N          stop after N refreshes (default: Ctrl-C, or the process\n"
		"                     exits; without a target, Ctrl-C)\n"
		"  --sort KEY         current (rate, the default), total or name\n"
		"  --filter REGEX     only the rows whose name matches (POSIX extended), e.g.\n"
		"                     'unmap|tlb'\n"
		"  --no-attribution   counters only, no causes\n"
		"  --json             one JSON object a line per refresh: the rows, and the\n"
		"                     counters unavailable with their reasons; without a\n"
		"                     target the VMs it covers (vms) and those that started\n"
		"                     or exited since the previous object (started, exited)\n"
		"\n"
		"Exit codes: 0 done, 1 failed while running, 2 bad usage (also a --qmp SOCKET\n"
		"that is not QMP, or the QEMU of another pid), 4 no such process, socket or\n"
		"domain, no KVM VM in it (or on this host) or every probe refused, 5 not\n"
		"authorized (run as root).\n",
		TOP_MAX_VMS, TOP_MIN_INTERVAL_MS);
}

enum { OPT_PID = 0x100, OPT_QMP, OPT_VM, OPT_NO_QMP, OPT_INTERVAL, OPT_COUNT, OPT_SORT, OPT_FILTER, OPT_NO_ATTR, OPT_JSON };

void top_args_done(struct top_args *a)
{
	if (a->have_re)
		regfree(&a->re);
}

/* --pid, --qmp or --vm: the target. */
static int set_target(struct top_args *a, int opt, const char *arg)
{
	uint64_t pid;

	switch (opt) {
	case OPT_PID:
		if (parse_uint64(arg, 1, 0x7fffffff, &pid, NULL) < 0) {
			verb_error("--pid '%s' is not a whole number from 1 to 2147483647", arg);
			return EXIT_USAGE;
		}
		a->pid = (unsigned long)pid;
		return ARGS_GO_ON;
	case OPT_QMP:
		if (!*arg) {
			verb_error("--qmp needs the path of QEMU's QMP socket (-qmp unix:PATH,server=on,wait=off)");
			return EXIT_USAGE;
		}
		a->qmp = arg;
		return ARGS_GO_ON;
	default:
		if (!*arg) {
			verb_error("--vm needs a libvirt domain's name ('virsh list' lists the running ones)");
			return EXIT_USAGE;
		}
		a->vm = arg;
		return ARGS_GO_ON;
	}
}

static int set_sort(struct top_args *a, const char *arg)
{
	if (!strcmp(arg, "current"))
		a->sort = TOP_SORT_CURRENT;
	else if (!strcmp(arg, "total"))
		a->sort = TOP_SORT_TOTAL;
	else if (!strcmp(arg, "name"))
		a->sort = TOP_SORT_NAME;
	else {
		verb_error("--sort %s: use current, total or name", arg);
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

/* --filter: the last one given wins. */
static int set_filter(struct top_args *a, const char *arg)
{
	char why[128];
	int k;

	if (a->have_re)
		regfree(&a->re);
	a->have_re = false;
	k = regcomp(&a->re, arg, REG_EXTENDED | REG_NOSUB);
	if (k != 0) {
		regerror(k, &a->re, why, sizeof(why));
		verb_error("--filter '%s': not a regular expression: %s", arg, why);
		return EXIT_USAGE;
	}
	a->have_re = true;
	a->filter = arg;
	return ARGS_GO_ON;
}

/* The target options that exclude each other. */
static int check_targets(const struct top_args *a)
{
	if (a->vm && a->pid) {
		verb_error("--pid and --vm both name the QEMU: give one (--vm finds the domain's pid itself)");
		return EXIT_USAGE;
	}
	if (a->vm && a->qmp) {
		verb_error("--qmp and --vm: a libvirt domain's KVM stats come through libvirt; drop --qmp");
		return EXIT_USAGE;
	}
	if (a->no_qmp && (a->qmp || a->vm)) {
		verb_error("--no-qmp is for --pid alone: it stops top looking for a QMP socket; drop it or %s",
			   a->qmp ? "--qmp" : "--vm");
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

int top_parse_argv(int argc, char **argv, struct top_args *a)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, OPT_PID },
		{ "qmp", required_argument, NULL, OPT_QMP },
		{ "vm", required_argument, NULL, OPT_VM },
		{ "no-qmp", no_argument, NULL, OPT_NO_QMP },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "no-attribution", no_argument, NULL, OPT_NO_ATTR },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned ms;
	int opt, r;

	*a = (struct top_args){ .interval_s = 1 };
	sb_probe_options_init(&a->opts);
	a->opts.count_other = true; /* top shows every context's events (and, without a target, every VM's) */
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_PID:
		case OPT_QMP:
		case OPT_VM:
			r = set_target(a, opt, optarg);
			if (r != ARGS_GO_ON)
				return r;
			break;
		case OPT_NO_QMP:
			a->no_qmp = true;
			break;
		case OPT_INTERVAL:
			if (verb_parse_interval(optarg, TOP_MIN_INTERVAL_MS, 3600000, &ms) < 0)
				return EXIT_USAGE;
			a->interval_s = ms / 1000.0;
			break;
		case OPT_COUNT:
			if (parse_unsigned(optarg, 1, 100000000, &a->count, NULL) < 0) {
				verb_error("--count '%s': expected a number from 1 to 100000000", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SORT:
			r = set_sort(a, optarg);
			if (r != ARGS_GO_ON)
				return r;
			break;
		case OPT_FILTER:
			r = set_filter(a, optarg);
			if (r != ARGS_GO_ON)
				return r;
			break;
		case OPT_NO_ATTR:
			a->opts.attribution = false;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			verb_option_error("top", opt, argv, longopts);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		verb_error("unexpected argument '%s'; try 'snapbench top --help'", argv[optind]);
		return EXIT_USAGE;
	}
	return check_targets(a);
}
