// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top: kvm_stat's live table for a QEMU, from the BPF probes
 * (bpf/): every counter and, with attribution, every cause of
 * invalidations and remote shootdowns as a row with its total since the
 * start, its share of its group's total and its current rate; and, as a
 * group of their own, KVM's own cumulative stats (kvm.NAME) from QMP
 * query-stats or libvirt (top-kvm.c). The target is a pid, a QMP socket
 * or a libvirt domain; without one, every VM on the host (top-targets.c),
 * each with its own probes. Refreshed every interval: on a terminal the
 * screen is redrawn; elsewhere the tables follow each other; --json
 * prints one object a line.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exit-codes.h"
#include "clock.h"
#include "fileio.h"
#include "exit-reasons.h"
#include "json-util.h"
#include "kvm-flavour.h"
#include "macro.h"
#include "parse-number.h"
#include "probe-session.h"
#include "probes.h"
#include "qmp.h"
#include "strv.h"
#include "top-kvm.h"
#include "top-targets.h"
#include "verb-args.h"
#include "verbs.h"
#include "vm-libvirt.h"

#define TOP_MAX_ROWS (SB_C_MAX + SB_ATTR_MAX * SB_CAUSE_MAX + SB_EXIT_SLOTS)
/* one probes instance (its own BPF programs) per VM without a target: few VMs are expected */
#define TOP_MAX_VMS 16
/* an explicit --qmp: as long as a busy QEMU may take to greet */
#define QMP_TIMEOUT_MS 5000
/* a socket found on the command line: it may be held by another client, which must not stall top long */
#define QMP_FOUND_TIMEOUT_MS 1000
#define LIBVIRT_URI "qemu:///system"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench top [--pid PID | --qmp SOCKET | --vm NAME] [--no-qmp] [--interval MS] [--count N]\n"
		"                     [--sort current|total|name] [--filter REGEX] [--no-attribution] [--json]\n"
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
		"  --pid PID            the QEMU process (or any of its threads); its KVM stats from\n"
		"                       a QMP socket found on its command line (-qmp unix:PATH,server=on,\n"
		"                       or -chardev socket,path=PATH,server=on with -mon mode=control)\n"
		"  --qmp SOCKET         KVM stats from QEMU's QMP unix socket, and the QEMU from it\n"
		"                       (with --pid: the two must agree); top holds the socket while\n"
		"                       it runs: QEMU serves one QMP client per socket at a time\n"
		"  --vm NAME            the libvirt domain NAME (qemu:///system): its QEMU, and its KVM\n"
		"                       stats through libvirt (no monitor passthrough)\n"
		"  --no-qmp             with --pid: do not look for a QMP socket (BPF rows only)\n"
		"  --interval MS        milliseconds between refreshes, or a duration with its\n"
		"                       unit: 500ms, 2s (default 1s)\n"
		"  --count N            stop after N refreshes (default: Ctrl-C, or the process exits;\n"
		"                       without a target, Ctrl-C)\n"
		"  --sort KEY           current (rate, the default), total or name\n"
		"  --filter REGEX       only the rows whose name matches (POSIX extended), e.g.\n"
		"                       'unmap|tlb'\n"
		"  --no-attribution     counters only, no causes\n"
		"  --json               one JSON object a line per refresh: the rows, and the\n"
		"                       counters unavailable with their reasons; without a target\n"
		"                       the VMs it covers (vms) and those that started or exited\n"
		"                       since the previous object (started, exited)\n"
		"\n"
		"Exit codes: 0 done, 1 failed while running, 2 bad usage (also a --qmp SOCKET that\n"
		"is not QMP, or the QEMU of another pid), 4 no such process, socket or domain, no\n"
		"KVM VM in it (or on this host) or every probe refused, 5 not authorized (run as root).\n",
		TOP_MAX_VMS);
}

enum sort_key { SORT_CURRENT, SORT_TOTAL, SORT_NAME };

struct top_args {
	struct sb_probe_options opts;
	unsigned long pid;
	const char *qmp, *vm;
	unsigned count;
	double interval_s;
	enum sort_key sort;
	const char *filter;
	regex_t re;
	bool json, have_re, no_qmp;
};

enum { OPT_PID = 0x100, OPT_QMP, OPT_VM, OPT_NO_QMP, OPT_INTERVAL, OPT_COUNT, OPT_SORT, OPT_FILTER, OPT_NO_ATTR, OPT_JSON };

static void top_args_done(struct top_args *a)
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
		a->sort = SORT_CURRENT;
	else if (!strcmp(arg, "total"))
		a->sort = SORT_TOTAL;
	else if (!strcmp(arg, "name"))
		a->sort = SORT_NAME;
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

static int parse_argv(int argc, char **argv, struct top_args *a)
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
			if (parse_duration(optarg, 0.001, 0.05, 3600, &a->interval_s, NULL) < 0) {
				verb_error("--interval '%s': give milliseconds from 50 to 3600000, or a duration with its unit "
					   "such as 500ms or 2s", optarg);
				return EXIT_USAGE;
			}
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

struct row {
	char name[96];
	/* "counter", "cause", "exit_reason" or "kvm": %Total is of the row's group (a cause: of its counter's causes) */
	const char *group;
	uint64_t total;    /* since the start */
	double current;    /* per second over the last interval */
	double share;      /* of the group's total, 0..1; < 0: none (a kvm.*_ns duration is no count of events) */
	int64_t value;     /* kvm: the stat as KVM has counted it since the VM started, at the last read; else -1 */
};

/* One VM top shows: its probes, and KVM's own stats when it has a source for them. */
struct top_vm {
	pid_t pid;
	char name[33];                  /* QEMU's -name, "" if none */
	char prefix[64];                /* "PID:NAME:" before its rows without a target; "" with one */
	struct sb_probes *p;
	struct sb_probe_snapshot first, prev, cur;
	struct libvirt_domain *dom;     /* --vm */
	struct top_kvm *kvm;            /* NULL: no KVM stats, kvm_reason says why ("" when not looked for) */
	struct top_kvm_sample kfirst, kprev, kcur;
	char kvm_reason[SB_ERROR_MAX];
	struct row *rows;
	size_t nrows, nbpf;             /* rows[0, nbpf) from the probes, then the kvm.* rows */
	double since_s;                 /* top's time when it took this VM: its totals are since then */
	bool gone;
};

/* Without a target: a VM top took or dropped since the last refresh it printed. */
struct top_event {
	pid_t pid;
	char name[33];
};

struct top {
	struct top_args *a;
	struct top_vm *vms;             /* TOP_MAX_VMS slots: vms[0, n_vms) in use, in pid order, the rest zero */
	size_t n_vms;
	size_t found;                   /* without a target: the VMs on the host, shown or not */
	bool all;                       /* no target: every VM, the host scanned again every refresh */
	pid_t *refused;                 /* all: running VMs whose probes failed, not tried again */
	size_t n_refused;
	struct top_event added[TOP_MAX_VMS], exited[TOP_MAX_VMS];
	size_t n_added, n_exited;
	uint64_t t0_ns;
};

static uint64_t counter_events(const struct sb_probe_snapshot *s, int c)
{
	uint64_t n = 0;

	for (int x = 0; x < SB_CTX_MAX; x++)
		n += s->c.count[c][x].events;
	return n;
}

static uint64_t cause_events(const struct sb_probe_snapshot *s, int at, int k)
{
	uint64_t n = 0;

	for (int x = 0; x < SB_CTX_MAX; x++)
		n += s->c.cause[at][x][k];
	return n;
}

static size_t filter_rows(const struct top_args *a, struct row *rows, size_t n)
{
	size_t kept = 0;

	if (!a->have_re)
		return n;
	/* the name without the VM's prefix: 'unmap|tlb' works alike on one VM and on all */
	for (size_t i = 0; i < n; i++)
		if (regexec(&a->re, rows[i].name, 0, NULL, 0) == 0)
			rows[kept++] = rows[i];
	return kept;
}

/* The probes' rows between first (the start), prev and cur (the last interval); those the filter takes. */
static size_t make_bpf_rows(struct sb_probes *p, const struct top_args *a, const struct sb_probe_snapshot *first,
			    const struct sb_probe_snapshot *prev, const struct sb_probe_snapshot *cur, struct row *rows)
{
	double dt = (double)(cur->mono_ns - prev->mono_ns) / 1e9;
	uint64_t counters_total = 0;
	size_t n = 0;

	if (dt <= 0)
		dt = 1e-9;
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, c);
		struct row *r = &rows[n];

		if (!ci->available)
			continue;
		snprintf(r->name, sizeof(r->name), "%s", ci->name);
		r->group = "counter";
		r->total = counter_events(cur, c) - counter_events(first, c);
		r->current = (double)(counter_events(cur, c) - counter_events(prev, c)) / dt;
		r->value = -1;
		counters_total += r->total;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		rows[i].share = counters_total ? (double)rows[i].total / (double)counters_total : 0;
	if (sb_probes_attribution(p))
		for (int at = 0; at < SB_ATTR_MAX; at++) {
			uint64_t sum = 0;
			size_t start = n;

			for (int k = 0; k < SB_CAUSE_MAX; k++) {
				uint64_t t = cause_events(cur, at, k) - cause_events(first, at, k);
				struct row *r = &rows[n];

				if (!t)
					continue; /* a cause that never happened is no row (kvm_stat leaves out zeros too) */
				snprintf(r->name, sizeof(r->name), "%s.%s", sb_attr_name(at), sb_cause_name(k));
				r->group = "cause";
				r->total = t;
				r->current = (double)(cause_events(cur, at, k) - cause_events(prev, at, k)) / dt;
				r->value = -1;
				sum += t;
				n++;
			}
			for (size_t i = start; i < n; i++)
				rows[i].share = sum ? (double)rows[i].total / (double)sum : 0;
		}
	/* the target's exits by reason, as perf kvm stat groups them; %Total of its exits */
	if (sb_probes_counter(p, SB_C_KVM_EXIT)->available) {
		enum sb_exit_isa isa = sb_exit_isa_of_module(kvm_flavour_host()->module);
		uint64_t sum = 0;
		size_t start = n;
		char name[64];

		for (unsigned slot = 0; slot < SB_EXIT_SLOTS; slot++) {
			uint64_t t = cur->c.exit_reason[slot] - first->c.exit_reason[slot];
			struct row *r = &rows[n];

			if (!t)
				continue;
			snprintf(r->name, sizeof(r->name), "kvm_exit.%s", sb_exit_slot_name(slot, isa, name, sizeof(name)));
			r->group = "exit_reason";
			r->total = t;
			r->current = (double)(cur->c.exit_reason[slot] - prev->c.exit_reason[slot]) / dt;
			r->value = -1;
			sum += t;
			n++;
		}
		for (size_t i = start; i < n; i++)
			rows[i].share = sum ? (double)rows[i].total / (double)sum : 0;
	}
	return filter_rows(a, rows, n);
}

/* KVM's nanosecond totals (halt_wait_ns ...): shown, but no events to share a total with the counters */
static bool is_duration(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, "_ns");
}

/* The kvm.* rows of v, as kvm_stat shows them: those that counted something since the start. */
static size_t make_kvm_rows(struct top_vm *v, const struct top_args *a, struct row *rows)
{
	double dt = (double)(v->kcur.mono_ns - v->kprev.mono_ns) / 1e9;
	uint64_t sum = 0;
	size_t n = 0;

	if (!v->kvm)
		return 0;
	if (dt <= 0)
		dt = 1e-9;
	for (size_t i = 0; i < top_kvm_count(v->kvm); i++) {
		int64_t f = v->kfirst.values[i], c = v->kcur.values[i], p = v->kprev.values[i];
		struct row *r = &rows[n];

		/* a stat missing from a read, or a counter gone back (none should), makes no row */
		if (f < 0 || c <= f)
			continue;
		snprintf(r->name, sizeof(r->name), "%s", top_kvm_name(v->kvm, i));
		r->group = "kvm";
		r->total = (uint64_t)(c - f);
		r->current = p >= 0 && c >= p ? (double)(c - p) / dt : 0;
		r->value = c;
		if (!is_duration(r->name))
			sum += r->total;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		rows[i].share = is_duration(rows[i].name) ? -1 : sum ? (double)rows[i].total / (double)sum : 0;
	return filter_rows(a, rows, n);
}

static enum sort_key sort_by;

static int cmp_rows(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	switch (sort_by) {
	case SORT_TOTAL:
		if (a->total != b->total)
			return a->total < b->total ? 1 : -1;
		break;
	case SORT_CURRENT:
		if (a->current != b->current)
			return a->current < b->current ? 1 : -1;
		if (a->total != b->total)
			return a->total < b->total ? 1 : -1;
		break;
	case SORT_NAME:
		break;
	}
	return strcmp(a->name, b->name);
}

/* v's rows for this refresh: the probes' sorted, then KVM's sorted, a group of their own */
static void make_rows(struct top_vm *v, const struct top_args *a)
{
	v->nbpf = make_bpf_rows(v->p, a, &v->first, &v->prev, &v->cur, v->rows);
	v->nrows = v->nbpf + make_kvm_rows(v, a, v->rows + v->nbpf);
	qsort(v->rows, v->nbpf, sizeof(*v->rows), cmp_rows);
	qsort(v->rows + v->nbpf, v->nrows - v->nbpf, sizeof(*v->rows), cmp_rows);
}

static bool filter_takes(const struct top_args *a, const char *name)
{
	return !a->have_re || regexec(&a->re, name, 0, NULL, 0) == 0;
}

static void print_text(const struct top *t, double elapsed_s, bool tty, unsigned refresh)
{
	const struct top_args *a = t->a;
	const struct top_vm *first = NULL;
	int width = 40;
	size_t live = 0, shown = 0;
	char name[160];

	for (size_t i = 0; i < t->n_vms; i++) {
		const struct top_vm *v = &t->vms[i];

		if (v->gone)
			continue;
		if (!first)
			first = v;
		live++;
		for (size_t k = 0; k < v->nrows; k++) {
			int w = (int)(strlen(v->prefix) + strlen(v->rows[k].name));
			if (w > width)
				width = w;
		}
	}
	if (!first && !t->all)
		return;
	if (tty)
		fputs("\033[H\033[2J", stdout); /* home, clear */
	else if (refresh)
		printf("\n");
	if (!t->all)
		printf("snapbench top: pid %d (%s), %.1f s", (int)first->pid, sb_probes_target_comm(first->p), elapsed_s);
	else if (t->found > t->n_vms)
		printf("snapbench top: %zu VMs (of the %zu on this host: at most %d shown), %.1f s", live, t->found,
		       TOP_MAX_VMS, elapsed_s);
	else
		printf("snapbench top: %zu VM%s, %.1f s", live, live == 1 ? "" : "s", elapsed_s);
	if (a->filter)
		printf(", filter '%s'", a->filter);
	if (!t->all && first->kvm)
		printf(", KVM stats from %s", top_kvm_source(first->kvm));
	printf("\n");
	/* the host as scanned for this refresh: what left it and what joined since the last table */
	for (size_t i = 0; i < t->n_exited; i++)
		printf(" pid %d%s%s%s exited: its rows are gone\n", (int)t->exited[i].pid, t->exited[i].name[0] ? " (" : "",
		       t->exited[i].name, t->exited[i].name[0] ? ")" : "");
	for (size_t i = 0; i < t->n_added; i++)
		printf(" pid %d%s%s%s started: its rows count from now\n", (int)t->added[i].pid,
		       t->added[i].name[0] ? " (" : "", t->added[i].name, t->added[i].name[0] ? ")" : "");
	if (!first) {
		printf(" (no process on this host holds a KVM VM now: top takes the next that starts)\n");
		return;
	}
	printf(" %-*s %14s %7s %12s\n", width, "Event", "Total", "%Total", "CurAvg/s");
	for (size_t i = 0; i < t->n_vms; i++) {
		const struct top_vm *v = &t->vms[i];

		if (v->gone)
			continue;
		for (size_t k = 0; k < v->nrows; k++) {
			const struct row *r = &v->rows[k];
			char share[16] = "      -";

			snprintf(name, sizeof(name), "%s%s", v->prefix, r->name);
			if (r->share >= 0)
				snprintf(share, sizeof(share), "%6.1f%%", r->share * 100);
			printf(" %-*s %14llu %7s %12.0f\n", width, name, (unsigned long long)r->total, share, r->current);
			shown++;
		}
	}
	if (!shown)
		printf(" (no events%s)\n", a->filter ? " that match" : "");
	/* the probes are the host's: what one VM's cannot count, none's can */
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(first->p, c);
		if (!ci->available && filter_takes(a, ci->name))
			printf(" %-*s unavailable: %s\n", width, ci->name, ci->probe ? ci->probe->reason : "no probe");
	}
	if (!t->all && !first->kvm && first->kvm_reason[0] && filter_takes(a, "kvm."))
		printf(" %-*s unavailable: %s\n", width, "kvm.*", first->kvm_reason);
}

/* v's rows, its unavailable counters and its KVM stats' source into o */
static int vm_json(const struct top_vm *v, const char *no_kvm_reason, struct json_object *o)
{
	struct json_object *arr = json_object_new_array(), *unavail = json_object_new_object();
	struct json_object *kvm = json_object_new_object();

	if (!arr || !unavail || !kvm) {
		json_object_put(arr);
		json_object_put(unavail);
		json_object_put(kvm);
		return -ENOMEM;
	}
	json_object_object_add(o, "rows", arr);
	json_object_object_add(o, "unavailable", unavail);
	json_object_object_add(o, "kvm", kvm);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct row *row = &v->rows[i];
		struct json_object *r = json_object_new_object();

		json_object_object_add(r, "name", json_object_new_string(row->name));
		json_object_object_add(r, "group", json_object_new_string(row->group));
		json_object_object_add(r, "total", json_object_new_int64((int64_t)row->total));
		json_object_object_add(r, "share", row->share >= 0 ? json_object_new_double(row->share) : NULL);
		json_object_object_add(r, "current_per_s", json_object_new_double(row->current));
		if (row->value >= 0)
			json_object_object_add(r, "value", json_object_new_int64(row->value));
		json_object_array_add(arr, r);
	}
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(v->p, c);
		if (!ci->available)
			json_object_object_add(unavail, ci->name,
					       json_object_new_string(ci->probe ? ci->probe->reason : "no probe"));
	}
	json_object_object_add(kvm, "source", v->kvm ? json_object_new_string(top_kvm_source(v->kvm)) : NULL);
	if (v->kvm)
		json_object_object_add(kvm, "reason", NULL);
	else
		json_object_object_add(kvm, "reason",
				       json_object_new_string(v->kvm_reason[0] ? v->kvm_reason : no_kvm_reason));
	return 0;
}

/* The VMs that left or joined since the last object, as name: [{"pid", "name"}] in o */
static int events_json(const struct top_event *ev, size_t n, const char *name, struct json_object *o)
{
	struct json_object *arr = json_object_new_array();

	if (!arr)
		return -ENOMEM;
	json_object_object_add(o, name, arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_new_object();

		if (!e || json_object_array_add(arr, e) < 0) {
			json_object_put(e);
			return -ENOMEM;
		}
		json_object_object_add(e, "pid", json_object_new_int((int)ev[i].pid));
		json_object_object_add(e, "name", ev[i].name[0] ? json_object_new_string(ev[i].name) : NULL);
	}
	return 0;
}

static int print_json(const struct top *t, double elapsed_s)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	struct json_object *vms = NULL;
	static const char *const none = "top without a target shows the probes' rows only: give --pid, --qmp or --vm";
	static const char *const off = "--no-qmp";

	if (!o)
		return -ENOMEM;
	if (!t->all) {
		const struct top_vm *v = &t->vms[0];

		json_object_object_add(o, "pid", json_object_new_int((int)v->pid));
		json_object_object_add(o, "t_s", json_object_new_double(elapsed_s));
		if (vm_json(v, off, o) < 0)
			return -ENOMEM;
	} else {
		vms = json_object_new_array();
		if (!vms)
			return -ENOMEM;
		json_object_object_add(o, "t_s", json_object_new_double(elapsed_s));
		json_object_object_add(o, "vms_found", json_object_new_int64((int64_t)t->found));
		json_object_object_add(o, "vms", vms);
		if (events_json(t->exited, t->n_exited, "exited", o) < 0 ||
		    events_json(t->added, t->n_added, "started", o) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < t->n_vms; i++) {
			const struct top_vm *v = &t->vms[i];
			struct json_object *vo;

			if (v->gone)
				continue;
			vo = json_object_new_object();
			if (!vo || json_object_array_add(vms, vo) < 0) {
				json_object_put(vo);
				return -ENOMEM;
			}
			json_object_object_add(vo, "pid", json_object_new_int((int)v->pid));
			json_object_object_add(vo, "name", v->name[0] ? json_object_new_string(v->name) : NULL);
			json_object_object_add(vo, "comm", json_object_new_string(sb_probes_target_comm(v->p)));
			json_object_object_add(vo, "since_s", json_object_new_double(v->since_s));
			if (vm_json(v, none, vo) < 0)
				return -ENOMEM;
		}
	}
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}

static void drop_kvm(struct top_vm *v, const char *why)
{
	snprintf(v->kvm_reason, sizeof(v->kvm_reason), "%s", why);
	top_kvm_free(v->kvm);
	v->kvm = NULL;
}

/* Takes kvm as v's source of KVM stats, with its first read; on failure v has none and says why. */
static void take_kvm(struct top_vm *v, struct top_kvm *kvm)
{
	struct sb_error err = { 0 };

	v->kvm = kvm;
	if (top_kvm_sample_alloc(kvm, &v->kfirst) < 0 || top_kvm_sample_alloc(kvm, &v->kprev) < 0 ||
	    top_kvm_sample_alloc(kvm, &v->kcur) < 0) {
		drop_kvm(v, "out of memory");
		return;
	}
	if (top_kvm_read(kvm, &v->kfirst, &err) < 0) {
		drop_kvm(v, err.msg);
		return;
	}
	v->kprev.mono_ns = v->kfirst.mono_ns;
	memcpy(v->kprev.values, v->kfirst.values, top_kvm_count(kvm) * sizeof(*v->kprev.values));
}

/* The exit code for a --qmp SOCKET that top cannot use, having said why. */
static int qmp_failed(const char *path, int r, const struct sb_error *err)
{
	switch (r) {
	case -ENOENT:
		verb_error("--qmp %s: no such socket: give the path of a running QEMU's -qmp unix:PATH,server=on socket",
			   path);
		return EXIT_UNAVAILABLE;
	case -ENOTSOCK:
		verb_error("--qmp %s is not a socket: give the path of QEMU's -qmp unix:PATH,server=on socket", path);
		return EXIT_USAGE;
	case -EBADMSG:
	case -EPROTO:
	case -EMSGSIZE:
		verb_error("--qmp %s is not a QMP socket (%s): give the path of QEMU's -qmp unix:PATH,server=on socket",
			   path, err->msg);
		return EXIT_USAGE;
	case -EINVAL:
	case -ENAMETOOLONG:
		verb_error("--qmp %s: %s", path, err->msg);
		return EXIT_USAGE;
	case -ETIMEDOUT:
		verb_error("--qmp %s: %s (or it is no QMP socket)", path, err->msg);
		return EXIT_UNAVAILABLE;
	default:
		verb_error("--qmp %s: %s", path, err->msg);
		return EXIT_UNAVAILABLE;
	}
}

/* --qmp: the socket, and the QEMU behind it (with --pid: the same one). */
static int open_qmp(const struct top_args *a, struct top_vm *v)
{
	struct qmp_client *c = NULL;
	struct top_kvm *kvm = NULL;
	struct sb_error err = { 0 };
	pid_t pid;
	int r;

	r = top_qmp_connect(a->qmp, QMP_TIMEOUT_MS, &c, &err);
	if (r < 0)
		return qmp_failed(a->qmp, r, &err);
	r = top_qmp_pid(c, &pid, &err);
	if (r < 0) {
		verb_error("--qmp %s: %s", a->qmp, err.msg);
		qmp_client_free(c);
		return r == -ESRCH ? EXIT_UNAVAILABLE : EXIT_FAIL;
	}
	if (a->pid) {
		pid_t want = top_tgid_of((pid_t)a->pid);

		if (want <= 0) {
			verb_error("--pid %lu: no such process", a->pid);
			qmp_client_free(c);
			return EXIT_UNAVAILABLE;
		}
		if (want != pid) {
			verb_error("--qmp %s is the QMP socket of QEMU pid %d, not of --pid %lu: give that QEMU's socket, or drop --pid",
				   a->qmp, (int)pid, a->pid);
			qmp_client_free(c);
			return EXIT_USAGE;
		}
	}
	v->pid = pid;
	r = top_kvm_open_qmp(c, a->qmp, &kvm, &err);
	if (r < 0) {
		verb_message("--qmp %s: no KVM stats, the probes' rows only: %s", a->qmp, err.msg);
		snprintf(v->kvm_reason, sizeof(v->kvm_reason), "%s", err.msg);
	} else {
		take_kvm(v, kvm);
	}
	return EXIT_OK;
}

/* A socket path from QEMU's command line as we can reach it: a relative one is QEMU's working directory's. */
static int qemu_path(pid_t pid, const char *path, char *buf, size_t size)
{
	char link[64], cwd[4096];
	ssize_t n;

	if (path[0] == '/')
		return snprintf(buf, size, "%s", path) < (int)size ? 0 : -ENAMETOOLONG;
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0)
		return -errno;
	cwd[n] = '\0';
	return snprintf(buf, size, "%s/%s", cwd, path) < (int)size ? 0 : -ENAMETOOLONG;
}

static void reason_add(char *reason, size_t size, const char *fmt, ...) _printf_(3, 4);
static void reason_add(char *reason, size_t size, const char *fmt, ...)
{
	size_t n = strlen(reason);
	va_list ap;

	if (n && n + 2 < size) {
		strcpy(reason + n, "; ");
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(reason + n, size - n, fmt, ap);
	va_end(ap);
}

/*
 * --pid alone: KVM's stats from a QMP socket QEMU's command line names.
 * Each is taken only once it proves to be this QEMU's (query-cpus-fast),
 * since a command line can name any path; libvirt's monitor is left alone.
 */
static void find_qmp(struct top_vm *v)
{
	_cleanup_strv_free_ char **argv = NULL, **paths = NULL;
	char path[4096 + 128];
	bool libvirt = false;
	int r;

	r = proc_cmdline(v->pid, PROC_CMDLINE_MAX, &argv);
	if (r < 0) {
		snprintf(v->kvm_reason, sizeof(v->kvm_reason), "cannot read QEMU's command line: %s", strerror(-r));
		return;
	}
	if (top_qmp_sockets(argv, &paths, &libvirt) < 0) {
		snprintf(v->kvm_reason, sizeof(v->kvm_reason), "out of memory");
		return;
	}
	for (size_t i = 0; paths[i]; i++) {
		struct qmp_client *c = NULL;
		struct top_kvm *kvm = NULL;
		struct sb_error err = { 0 };
		pid_t pid;

		if (qemu_path(v->pid, paths[i], path, sizeof(path)) < 0) {
			reason_add(v->kvm_reason, sizeof(v->kvm_reason), "%s: cannot resolve it", paths[i]);
			continue;
		}
		r = top_qmp_connect(path, QMP_FOUND_TIMEOUT_MS, &c, &err);
		if (r >= 0)
			r = top_qmp_pid(c, &pid, &err);
		if (r >= 0 && pid != v->pid)
			r = sb_error_set(&err, -ESRCH, "%s serves QEMU pid %d, not this one", path, (int)pid);
		if (r < 0) {
			qmp_client_free(c);
			reason_add(v->kvm_reason, sizeof(v->kvm_reason), "%s", err.msg);
			continue;
		}
		r = top_kvm_open_qmp(c, path, &kvm, &err);
		if (r < 0) {
			/* this QEMU's own answer: another of its sockets would give the same */
			snprintf(v->kvm_reason, sizeof(v->kvm_reason), "%s", err.msg);
			return;
		}
		v->kvm_reason[0] = '\0';
		verb_message("KVM stats from QMP socket %s (on QEMU's command line); top holds it while it runs, "
			     "as QEMU serves one QMP client per socket (--no-qmp leaves it alone)",
			     path);
		take_kvm(v, kvm);
		return;
	}
	if (v->kvm_reason[0])
		return;
	if (libvirt) {
		char name[sizeof(v->name)];

		top_qemu_name(argv, name, sizeof(name));
		snprintf(v->kvm_reason, sizeof(v->kvm_reason),
			 "QEMU's QMP monitor is libvirt's: give --vm %s (its domain) for KVM's stats through libvirt",
			 name[0] ? name : "NAME");
	}
	else
		snprintf(v->kvm_reason, sizeof(v->kvm_reason),
			 "no QMP socket on QEMU's command line (-qmp unix:PATH,server=on): give --qmp SOCKET");
}

/* --vm: the domain's QEMU (its KVM stats come once its probes are open). */
static int open_domain(const struct top_args *a, struct top_vm *v)
{
	struct sb_error err = { 0 };
	int r;

	r = libvirt_domain_open(LIBVIRT_URI, a->vm, &v->dom, &err);
	if (r < 0) {
		verb_error("--vm %s: %s", a->vm, err.msg);
		switch (r) {
		case -EINVAL:
			return EXIT_USAGE;
		case -EACCES:
		case -EPERM:
			return EXIT_DENIED;
		default:
			return EXIT_UNAVAILABLE;
		}
	}
	v->pid = libvirt_domain_pid(v->dom);
	return EXIT_OK;
}

static void domain_kvm(const struct top_args *a, struct top_vm *v)
{
	struct top_kvm *kvm = NULL;
	struct sb_error err = { 0 };

	if (top_kvm_open_libvirt(v->dom, &kvm, &err) < 0) {
		verb_message("--vm %s: no KVM stats, the probes' rows only: %s", a->vm, err.msg);
		snprintf(v->kvm_reason, sizeof(v->kvm_reason), "%s", err.msg);
		return;
	}
	take_kvm(v, kvm);
}

static void vm_clear(struct top_vm *v)
{
	sb_probes_close(v->p);
	top_kvm_free(v->kvm);
	libvirt_domain_close(v->dom);
	free(v->kfirst.values);
	free(v->kprev.values);
	free(v->kcur.values);
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

/* v's probes are open: its rows' room and its first read, the start of its totals; -errno with err set. */
static int vm_start(struct top_vm *v, double since_s, struct sb_error *err)
{
	v->rows = calloc(TOP_MAX_ROWS + (v->kvm ? top_kvm_count(v->kvm) : 0), sizeof(*v->rows));
	if (!v->rows)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (sb_probes_read(v->p, &v->first, err) < 0)
		return -EIO;
	v->prev = v->cur = v->first;
	v->since_s = since_s;
	return 0;
}

static int cmp_vm_pid(const void *x, const void *y)
{
	pid_t a = ((const struct top_vm *)x)->pid, b = ((const struct top_vm *)y)->pid;

	return a < b ? -1 : a > b;
}

static int cmp_pid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;

	return a < b ? -1 : a > b;
}

static bool pid_in(const pid_t *pids, size_t n, pid_t pid)
{
	return n && bsearch(&pid, pids, n, sizeof(*pids), cmp_pid);
}

/* Takes the VM pid into the next free slot, its probes open and first read; the exit code, err saying why. */
static int add_vm(struct top *t, pid_t pid, double since_s, struct sb_error *err)
{
	struct top_vm *v = &t->vms[t->n_vms];
	_cleanup_strv_free_ char **argv = NULL;
	int r;

	v->pid = pid;
	if (proc_cmdline(pid, PROC_CMDLINE_MAX, &argv) == 0)
		top_qemu_name(argv, v->name, sizeof(v->name));
	snprintf(v->prefix, sizeof(v->prefix), "%d:%s%s", (int)pid, v->name, v->name[0] ? ":" : "");
	r = probe_session_attach(pid, &t->a->opts, &v->p, err);
	if (r == EXIT_OK && vm_start(v, since_s, err) < 0)
		r = EXIT_FAIL;
	if (r != EXIT_OK) {
		vm_clear(v);
		return r;
	}
	t->n_vms++;
	return EXIT_OK;
}

static void event_add(struct top_event *ev, size_t *n, const struct top_vm *v)
{
	ev[*n].pid = v->pid;
	snprintf(ev[*n].name, sizeof(ev[*n].name), "%s", v->name);
	(*n)++;
}

/*
 * No target: the host scanned again. The VMs whose process no longer
 * holds a KVM VM leave (their probes closed), and so do those whose reads
 * failed; the VMs that started since come in, the lowest pids first, while
 * fewer than the cap are shown; a VM that refused its probes is not tried
 * again while it runs. What left and came is kept for the next refresh.
 * The exit code of the first VM that could not be probed in *first_fail.
 */
static int rescan(struct top *t, double since_s, int *first_fail)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0, kept = 0;
	int r;

	r = top_find_vms(getpid(), &pids, &n);
	if (r < 0) {
		verb_error("cannot read /proc: %s", strerror(-r));
		return EXIT_FAIL;
	}
	t->found = n;
	/* the refused that still run stay refused, the rest are forgotten: the list never outgrows the host's VMs */
	for (size_t i = 0; i < t->n_refused; i++)
		if (pid_in(pids, n, t->refused[i]))
			t->refused[kept++] = t->refused[i];
	t->n_refused = kept;
	if (n > kept) {
		pid_t *p = realloc(t->refused, n * sizeof(*p));

		if (!p) {
			verb_error("out of memory");
			return EXIT_FAIL;
		}
		t->refused = p;
	}
	for (size_t i = 0; i < t->n_vms;) {
		struct top_vm *v = &t->vms[i];
		bool running = pid_in(pids, n, v->pid);

		if (running && !v->gone) {
			i++;
			continue;
		}
		if (!running)
			event_add(t->exited, &t->n_exited, v);
		else
			t->refused[t->n_refused++] = v->pid; /* its probes failed while it runs: once is enough */
		vm_clear(v);
		memmove(v, v + 1, (t->n_vms - i - 1) * sizeof(*v));
		t->n_vms--;
		memset(&t->vms[t->n_vms], 0, sizeof(*v));
	}
	for (size_t i = 0; i < n && t->n_vms < TOP_MAX_VMS; i++) {
		struct sb_error err = { 0 };
		bool shown = false;

		for (size_t k = 0; k < t->n_vms && !shown; k++)
			shown = t->vms[k].pid == pids[i];
		for (size_t k = 0; k < t->n_refused && !shown; k++)
			shown = t->refused[k] == pids[i];
		if (shown)
			continue;
		r = add_vm(t, pids[i], since_s, &err);
		if (r != EXIT_OK) {
			/* one VM that went away or refuses the probes does not hide the others */
			verb_message("pid %d left out: %s", (int)pids[i], err.msg);
			if (*first_fail == EXIT_OK)
				*first_fail = r;
			t->refused[t->n_refused++] = pids[i];
			continue;
		}
		if (t->t0_ns) {
			struct top_vm *v = &t->vms[t->n_vms - 1];

			event_add(t->added, &t->n_added, v);
			make_rows(v, t->a); /* all zero until its next read, but the VM is in the table from now */
		}
	}
	qsort(t->vms, t->n_vms, sizeof(*t->vms), cmp_vm_pid);
	return EXIT_OK;
}

/*
 * No VM on the host yet: as the help says, a VM that starts comes in, so wait
 * for one, scanning every interval, saying once why there is none (and when
 * this host has no /dev/kvm, that none can start until KVM is there). Gives
 * up with exit 4 after --count intervals; Ctrl-C ends it with 0.
 */
static int wait_for_vm(struct top *t, int *first_fail)
{
	char kvm[160] = "";
	int r;

	if (access("/dev/kvm", F_OK) < 0)
		snprintf(kvm, sizeof(kvm), "; /dev/kvm: %s: no KVM VM can start here until KVM is loaded (modprobe kvm_amd "
			 "or kvm_intel, or nested virtualization for this VM)", strerror(errno));
	verb_message("no process on this host holds a KVM VM yet (an fd on anon_inode:kvm-vm)%s; waiting for one, "
		     "scanning every %g s (Ctrl-C stops; or give --pid, --qmp or --vm)", kvm, t->a->interval_s);
	for (unsigned n = 0; !stop_requested && (!t->a->count || n < t->a->count); n++) {
		for (int left = (int)(t->a->interval_s * 1000); left > 0 && !stop_requested; left -= 50)
			poll(NULL, 0, left < 50 ? left : 50);
		if (stop_requested)
			break;
		r = rescan(t, 0, first_fail);
		if (r != EXIT_OK || t->found)
			return r;
	}
	if (stop_requested)
		return EXIT_OK;
	verb_error("no process on this host held a KVM VM (an fd on anon_inode:kvm-vm) in %u refresh%s%s: start one, or "
		   "give --pid, --qmp or --vm", t->a->count, t->a->count == 1 ? "" : "es", kvm);
	return EXIT_UNAVAILABLE;
}

/* No target: every VM on the host up to the cap, each with its own probes. */
static int open_all(struct top *t)
{
	int first_fail = EXIT_OK, r;

	r = rescan(t, 0, &first_fail);
	if (r != EXIT_OK)
		return r;
	if (!t->found) {
		r = wait_for_vm(t, &first_fail);
		if (r != EXIT_OK || !t->found)
			return r;
	}
	if (t->found > TOP_MAX_VMS)
		verb_message("%zu processes hold a KVM VM: showing the %d with the lowest pids; give --pid for another",
			     t->found, TOP_MAX_VMS);
	if (!t->n_vms) {
		verb_error("none of the %zu VMs on this host could be probed (see above)", t->found);
		return first_fail;
	}
	return EXIT_OK;
}

static int open_one(struct top *t)
{
	const struct top_args *a = t->a;
	struct top_vm *v = &t->vms[0];
	struct sb_error err = { 0 };
	int r = EXIT_OK;

	if (a->vm)
		r = open_domain(a, v);
	else if (a->qmp)
		r = open_qmp(a, v);
	else
		v->pid = (pid_t)a->pid;
	if (r != EXIT_OK)
		return r;
	t->n_vms = 1;
	r = probe_session_attach(v->pid, &a->opts, &v->p, &err);
	if (r != EXIT_OK) {
		verb_error("%s", err.msg);
		return r;
	}
	/* the process is now known to hold a KVM VM: only then look for its QMP socket */
	v->pid = sb_probes_target(v->p);
	if (a->vm)
		domain_kvm(a, v);
	else if (!a->qmp && !a->no_qmp)
		find_qmp(v);
	return EXIT_OK;
}

static void top_free(struct top *t)
{
	for (size_t i = 0; t->vms && i < TOP_MAX_VMS; i++)
		vm_clear(&t->vms[i]);
	free(t->vms);
	free(t->refused);
}

/* One refresh's reads of v; false when v can no longer be read (it is then gone). */
static bool read_vm(struct top *t, struct top_vm *v, int *ret)
{
	struct sb_error err = { 0 };

	if (sb_probes_read(v->p, &v->cur, &err) < 0) {
		if (!t->all) {
			verb_error("%s", err.msg);
			*ret = EXIT_FAIL;
		} else {
			verb_message("pid %d: %s; left out from now", (int)v->pid, err.msg);
		}
		v->gone = true;
		return false;
	}
	if (v->kvm && top_kvm_read(v->kvm, &v->kcur, &err) < 0) {
		/* QEMU exiting closes its socket first: that is said below as the process exits */
		if (probe_session_target_alive(v->pid))
			verb_message("pid %d: KVM stats lost, the probes' rows only from now: %s", (int)v->pid, err.msg);
		drop_kvm(v, err.msg);
	}
	make_rows(v, t->a);
	return true;
}

/* One refresh, as JSON or a table; EXIT_OK or EXIT_FAIL. */
static int print_refresh(struct top *t, double elapsed, bool tty, unsigned n)
{
	if (t->a->json) {
		if (print_json(t, elapsed) < 0) {
			verb_error("out of memory");
			return EXIT_FAIL;
		}
	} else {
		print_text(t, elapsed, tty, n);
	}
	fflush(stdout);
	return EXIT_OK;
}

/* This interval's reads become the previous ones; a target that exited is gone. Returns the VMs still live. */
static size_t next_interval(struct top *t)
{
	size_t live = 0;

	for (size_t i = 0; i < t->n_vms; i++) {
		struct top_vm *v = &t->vms[i];

		if (v->gone)
			continue;
		v->prev = v->cur;
		if (v->kvm) {
			v->kprev.mono_ns = v->kcur.mono_ns;
			memcpy(v->kprev.values, v->kcur.values, top_kvm_count(v->kvm) * sizeof(*v->kprev.values));
		}
		if (!t->all && !probe_session_target_alive(sb_probes_target(v->p))) {
			fprintf(stderr, "snapbench top: pid %d exited\n", (int)sb_probes_target(v->p));
			v->gone = true;
			continue;
		}
		live++;
	}
	return live;
}

static int run(struct top_args *a)
{
	struct top t = { .a = a, .all = !a->pid && !a->qmp && !a->vm };
	struct sb_error err = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	bool tty = isatty(STDOUT_FILENO) && !a->json;
	int r, ret = EXIT_OK;

	r = probe_session_check_privileges();
	if (r != EXIT_OK)
		return r;
	t.vms = calloc(TOP_MAX_VMS, sizeof(*t.vms));
	if (!t.vms) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	r = t.all ? open_all(&t) : open_one(&t);
	if (r != EXIT_OK || (t.all && !t.found)) /* stopped while waiting for a VM */
		goto out;
	/* no target: open_all() has read each VM it took */
	if (!t.all && vm_start(&t.vms[0], 0, &err) < 0) {
		verb_error("%s", err.msg);
		r = EXIT_FAIL;
		goto out;
	}
	t.t0_ns = mono_ns();
	sort_by = a->sort;
	for (unsigned n = 0; !stop_requested && (!a->count || n < a->count); n++) {
		size_t live = 0;

		for (int left = (int)(a->interval_s * 1000); left > 0 && !stop_requested; left -= 50)
			poll(NULL, 0, left < 50 ? left : 50);
		if (stop_requested)
			break;
		for (size_t i = 0; i < t.n_vms; i++)
			if (!t.vms[i].gone)
				live += read_vm(&t, &t.vms[i], &ret);
		if (ret != EXIT_OK || (!live && !t.all))
			break;
		double elapsed = (double)(mono_ns() - t.t0_ns) / 1e9;
		/* no target: the VMs that exited leave, those started since come in (an empty host is watched on) */
		if (t.all) {
			int refused = EXIT_OK;

			ret = rescan(&t, elapsed, &refused);
			if (ret != EXIT_OK)
				break;
		}
		ret = print_refresh(&t, elapsed, tty, n);
		if (ret != EXIT_OK)
			break;
		t.n_added = t.n_exited = 0;
		if (!next_interval(&t) && !t.all)
			break;
	}
	r = ret;
out:
	top_free(&t);
	return r;
}

static int top_main(int argc, char **argv)
{
	struct top_args a;
	int r = parse_argv(argc, argv, &a);

	if (r == ARGS_GO_ON)
		r = run(&a);
	top_args_done(&a);
	return r;
}

const struct verb verb_top = {
	.name = "top",
	.summary = "kvm_stat's live table of a QEMU's KVM and MMU-notifier counters and their causes (BPF)",
	.run = top_main,
};
