// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top: kvm_stat's live table for one QEMU, from the BPF probes
 * (bpf/): every counter and, with attribution, every cause of
 * invalidations and remote shootdowns as a row with its total since the
 * start, its share of its group's total and its current rate. Refreshed
 * every interval: on a terminal the screen is redrawn; elsewhere the
 * tables follow each other; --json prints one object a line.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exit-codes.h"
#include "exit-reasons.h"
#include "json-util.h"
#include "kvm-flavour.h"
#include "macro.h"
#include "parse-number.h"
#include "probe-session.h"
#include "probes.h"
#include "verb-args.h"
#include "verbs.h"

#define TOP_MAX_ROWS (SB_C_MAX + SB_ATTR_MAX * SB_CAUSE_MAX + SB_EXIT_SLOTS)

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench top --pid PID [--interval D] [--count N] [--sort current|total|name]\n"
		"                     [--filter REGEX] [--no-attribution] [--json]\n"
		"\n"
		"kvm_stat's table for one QEMU, from snapbench's BPF probes: each counter\n"
		"(KVM faults, TLB flushes and shootdowns, MMU-notifier invalidations) and each\n"
		"cause of invalidations and remote shootdowns, and each VM exit reason\n"
		"(kvm_exit.REASON, as perf kvm stat names them) as a row: its total since top\n"
		"started, its share of its group's total, its rate over the last interval.\n"
		"On a terminal the screen is redrawn every interval; otherwise the tables\n"
		"follow each other. Counters this host cannot count are listed as such.\n"
		"\n"
		"  --pid PID            the QEMU process (or any of its threads)\n"
		"  --interval D         seconds between refreshes, or a duration with its unit:\n"
		"                       500ms, 2s (default 1)\n"
		"  --count N            stop after N refreshes (default: Ctrl-C, or the process exits)\n"
		"  --sort KEY           current (rate, the default), total or name\n"
		"  --filter REGEX       only the rows whose name matches (POSIX extended), e.g.\n"
		"                       'unmap|tlb'\n"
		"  --no-attribution     counters only, no causes\n"
		"  --json               one JSON object a line per refresh: the rows, and the\n"
		"                       counters unavailable with their reasons\n"
		"\n"
		"Exit codes: 0 done, 1 failed while running, 2 bad usage, 4 no such process,\n"
		"no KVM VM in it or every probe refused, 5 not authorized (run as root).\n");
}

enum sort_key { SORT_CURRENT, SORT_TOTAL, SORT_NAME };

struct top_args {
	struct sb_probe_options opts;
	unsigned long pid;
	unsigned count;
	double interval_s;
	enum sort_key sort;
	const char *filter;
	regex_t re;
	bool json, have_re;
};

static void top_args_done(struct top_args *a)
{
	if (a->have_re)
		regfree(&a->re);
}

static int parse_argv(int argc, char **argv, struct top_args *a)
{
	enum { OPT_PID = 0x100, OPT_INTERVAL, OPT_COUNT, OPT_SORT, OPT_FILTER, OPT_NO_ATTR, OPT_JSON };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, OPT_PID },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "no-attribution", no_argument, NULL, OPT_NO_ATTR },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t pid;
	int opt;

	*a = (struct top_args){ .interval_s = 1 };
	sb_probe_options_init(&a->opts);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_PID:
			if (parse_uint64(optarg, 1, 0x7fffffff, &pid, NULL) < 0) {
				verb_error("--pid '%s' is not a whole number from 1 to 2147483647", optarg);
				return EXIT_USAGE;
			}
			a->pid = (unsigned long)pid;
			break;
		case OPT_INTERVAL:
			if (parse_duration(optarg, 1, 0.05, 3600, &a->interval_s, NULL) < 0) {
				verb_error("--interval '%s': give seconds from 0.05 to 3600, or a duration with its unit "
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
			if (!strcmp(optarg, "current"))
				a->sort = SORT_CURRENT;
			else if (!strcmp(optarg, "total"))
				a->sort = SORT_TOTAL;
			else if (!strcmp(optarg, "name"))
				a->sort = SORT_NAME;
			else {
				verb_error("--sort %s: use current, total or name", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_FILTER: {
			int k;
			char why[128];

			if (a->have_re)
				regfree(&a->re);
			a->have_re = false;
			k = regcomp(&a->re, optarg, REG_EXTENDED | REG_NOSUB);
			if (k != 0) {
				regerror(k, &a->re, why, sizeof(why));
				verb_error("--filter '%s': not a regular expression: %s", optarg, why);
				return EXIT_USAGE;
			}
			a->have_re = true;
			a->filter = optarg;
			break;
		}
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
	if (!a->pid) {
		verb_error("--pid is required: the pid of a QEMU running with -accel kvm");
		return EXIT_USAGE;
	}
	return ARGS_GO_ON;
}

struct row {
	char name[96];
	/* "counter", "cause" or "exit_reason": %Total is of the row's group (a cause: of its counter's causes) */
	const char *group;
	uint64_t total;    /* since the start */
	double current;    /* per second over the last interval */
	double share;      /* of the group's total, 0..1 */
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

/* The rows between first (the start), prev and cur (the last interval); those the filter takes. */
static size_t make_rows(struct sb_probes *p, const struct top_args *a, const struct sb_probe_snapshot *first,
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
			sum += t;
			n++;
		}
		for (size_t i = start; i < n; i++)
			rows[i].share = sum ? (double)rows[i].total / (double)sum : 0;
	}
	if (a->have_re) {
		size_t kept = 0;
		for (size_t i = 0; i < n; i++)
			if (regexec(&a->re, rows[i].name, 0, NULL, 0) == 0)
				rows[kept++] = rows[i];
		n = kept;
	}
	return n;
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

static void print_text(struct sb_probes *p, const struct top_args *a, const struct row *rows, size_t n,
		       double elapsed_s, bool tty, unsigned refresh)
{
	if (tty)
		fputs("\033[H\033[2J", stdout); /* home, clear */
	else if (refresh)
		printf("\n");
	printf("snapbench top: pid %d (%s), %.1f s%s%s%s\n", (int)sb_probes_target(p), sb_probes_target_comm(p),
	       elapsed_s, a->filter ? ", filter '" : "", a->filter ? a->filter : "", a->filter ? "'" : "");
	printf(" %-40s %14s %7s %12s\n", "Event", "Total", "%Total", "CurAvg/s");
	for (size_t i = 0; i < n; i++)
		printf(" %-40s %14llu %6.1f%% %12.0f\n", rows[i].name, (unsigned long long)rows[i].total,
		       rows[i].share * 100, rows[i].current);
	if (!n)
		printf(" (no events%s)\n", a->filter ? " that match" : "");
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, c);
		if (!ci->available && (!a->have_re || regexec(&a->re, ci->name, 0, NULL, 0) == 0))
			printf(" %-40s unavailable: %s\n", ci->name, ci->probe ? ci->probe->reason : "no probe");
	}
}

static int print_json(struct sb_probes *p, const struct row *rows, size_t n, double elapsed_s)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();
	struct json_object *arr = json_object_new_array(), *unavail = json_object_new_object();

	if (!o || !arr || !unavail) {
		json_object_put(arr);
		json_object_put(unavail);
		return -ENOMEM;
	}
	json_object_object_add(o, "pid", json_object_new_int((int)sb_probes_target(p)));
	json_object_object_add(o, "t_s", json_object_new_double(elapsed_s));
	json_object_object_add(o, "rows", arr);
	json_object_object_add(o, "unavailable", unavail);
	for (size_t i = 0; i < n; i++) {
		struct json_object *r = json_object_new_object();
		json_object_object_add(r, "name", json_object_new_string(rows[i].name));
		json_object_object_add(r, "group", json_object_new_string(rows[i].group));
		json_object_object_add(r, "total", json_object_new_int64((int64_t)rows[i].total));
		json_object_object_add(r, "share", json_object_new_double(rows[i].share));
		json_object_object_add(r, "current_per_s", json_object_new_double(rows[i].current));
		json_object_array_add(arr, r);
	}
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, c);
		if (!ci->available)
			json_object_object_add(unavail, ci->name,
					       json_object_new_string(ci->probe ? ci->probe->reason : "no probe"));
	}
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}

static int run(struct top_args *a)
{
	_cleanup_sb_probes_ struct sb_probes *p = NULL;
	struct sb_probe_snapshot first, prev, cur;
	struct sb_error err = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct row *rows = NULL;
	bool tty = isatty(STDOUT_FILENO) && !a->json;
	int r = probe_session_open((pid_t)a->pid, &a->opts, &p), ret = EXIT_OK;

	if (r != EXIT_OK)
		return r;
	rows = calloc(TOP_MAX_ROWS, sizeof(*rows));
	if (!rows) {
		verb_error("out of memory");
		return EXIT_FAIL;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (sb_probes_read(p, &first, &err) < 0) {
		verb_error("%s", err.msg);
		free(rows);
		return EXIT_FAIL;
	}
	prev = first;
	sort_by = a->sort;
	for (unsigned n = 0; !stop_requested && (!a->count || n < a->count); n++) {
		for (int left = (int)(a->interval_s * 1000); left > 0 && !stop_requested; left -= 50)
			poll(NULL, 0, left < 50 ? left : 50);
		if (stop_requested)
			break;
		if (sb_probes_read(p, &cur, &err) < 0) {
			verb_error("%s", err.msg);
			ret = EXIT_FAIL;
			break;
		}
		size_t nrows = make_rows(p, a, &first, &prev, &cur, rows);
		double elapsed = (double)(cur.mono_ns - first.mono_ns) / 1e9;
		qsort(rows, nrows, sizeof(*rows), cmp_rows);
		if (a->json) {
			if (print_json(p, rows, nrows, elapsed) < 0) {
				verb_error("out of memory");
				ret = EXIT_FAIL;
				break;
			}
		} else {
			print_text(p, a, rows, nrows, elapsed, tty, n);
		}
		fflush(stdout);
		prev = cur;
		if (!probe_session_target_alive(sb_probes_target(p))) {
			fprintf(stderr, "snapbench top: pid %d exited\n", (int)sb_probes_target(p));
			break;
		}
	}
	free(rows);
	return ret;
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
