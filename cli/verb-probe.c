// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench probe: attach the BPF probes (bpf/) to one QEMU process and
 * print its counters every interval: rates by context, causes of
 * invalidations and remote TLB shootdowns, and at the end the top recorded
 * stacks. Useful alone, and the library's end-to-end test.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "exit-codes.h"
#include "exit-reasons.h"
#include "help-fit.h"
#include "kvm-flavour.h"
#include "macro.h"
#include "parse-number.h"
#include "probe-session.h"
#include "probes.h"
#include "verb-args.h"
#include "verbs.h"

#define DEFAULT_INTERVAL_S 1.0
/* probe's smallest --interval, which its --help and its error name (top's is 50 ms, run's 100 ms) */
#define MIN_INTERVAL_MS 10
#define MAX_INTERVAL_MS 3600000
#define DEFAULT_TOP 5
#define MAX_TOP 100

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: snapbench probe --pid PID [--interval MS] [--count N] [--json] [--backend LIST]\n"
		"                       [--no-attribution] [--other] [--sample-every N] [--max-stacks N] [--top K]\n"
		"\n"
		"Attach snapbench's BPF probes to the QEMU process PID (run as root) and print its KVM and\n"
		"TLB counters every interval until Ctrl-C, --count intervals, or the process exits. Events in\n"
		"PID's threads count as 'target'; events in kernel threads (kswapd, khugepaged, kworkers) as\n"
		"'kthread' (tracepoints cannot tell which VM those hit); events in other processes as 'other',\n"
		"counted by the tracepoints only with --other (the fentry probes, which know the VM, count the\n"
		"target VM's in every context).\n"
		"Invalidations and remote TLB shootdowns are classified into causes. At the end the top\n"
		"recorded kernel stacks are shown.\n"
		"\n"
		"  --pid PID            the QEMU process (or any of its threads)\n"
		"  --interval MS        milliseconds between reports, from %u, or a duration\n"
		"                       with its unit: 500ms, 2s (default %g s)\n"
		"  --count N            stop after N reports\n"
		"  --json               one JSON object per line: probes, then cumulative counts per interval,\n"
		"                       then a summary with top stacks\n"
		"  --backend LIST       allowed backends, comma-separated: fentry,tp_btf,raw_tp,tracepoint\n"
		"                       (default all; tracepoints try tp_btf, then raw_tp, then tracepoint)\n"
		"  --no-attribution     count only, do not classify causes\n"
		"  --other              count other processes' events on the tracepoints too (default: '-',\n"
		"                       null in JSON; each such event then costs a count, not a task check)\n"
		"  --sample-every N     record the kernel stack of 1 in N classified events (default %d, 0: none)\n"
		"  --max-stacks N       distinct stacks kept (default %d)\n"
		"  --top K              stacks shown per kind at the end (default %d)\n"
		"  --test-tracepoint COUNTER=CATEGORY:NAME\n"
		"                       (tests) probe CATEGORY:NAME instead of COUNTER's tracepoint\n"
		"\n"
		"Exit codes: 0 done; 1 failed while running; 2 bad usage; 4 no such process, no KVM VM in it,\n"
		"or the kernel refused every probe; 5 not authorized: not root (no CAP_BPF and CAP_PERFMON).\n",
		MIN_INTERVAL_MS, DEFAULT_INTERVAL_S, SB_PROBE_DEFAULT_SAMPLE_EVERY, SB_PROBE_DEFAULT_MAX_STACKS, DEFAULT_TOP);
}

/* Whether counter ci counts other processes' events: the fentry probes (the target VM's, in every context) or --other. */
static bool other_counted(const struct sb_probes *p, const struct sb_counter_info *ci)
{
	return sb_probes_counts_other(p) || ci->probe->backend == SB_BACKEND_FENTRY;
}

static int parse_uint(const char *opt, const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
	uint64_t u;

	if (parse_uint64(s, min, max, &u, NULL) < 0) {
		verb_error("%s '%s' is not a whole number from %lu to %lu", opt, s, min, max);
		return -EINVAL;
	}
	*v = (unsigned long)u;
	return 0;
}

static int parse_interval(const char *s, uint64_t *ns)
{
	unsigned ms;

	if (verb_parse_interval(s, MIN_INTERVAL_MS, MAX_INTERVAL_MS, &ms) < 0)
		return -EINVAL;
	*ns = (uint64_t)ms * 1000000;
	return 0;
}

static int parse_test_tracepoint(const char *s, struct sb_probe_options *o)
{
	const char *eq = strchr(s, '=');

	if (eq) {
		for (int c = 0; c < SB_C_MAX; c++) {
			const char *name = sb_counter_name((enum sb_counter)c);

			if (strlen(name) == (size_t)(eq - s) && !strncmp(s, name, (size_t)(eq - s))) {
				o->test_counter = (enum sb_counter)c;
				o->test_tracepoint = eq + 1;
				return 0;
			}
		}
	}
	verb_error("--test-tracepoint '%s': write COUNTER=CATEGORY:NAME with a tracepoint counter, "
		"e.g. age_hva=kvm:kvm_no_such_event", s);
	return -EINVAL;
}

/* ---- text output ---- */

static void print_probes_text(struct sb_probes *p)
{
	printf("target: pid %d (%s)\n", (int)sb_probes_target(p), sb_probes_target_comm(p));
	for (size_t i = 0; i < sb_probes_probe_count(p); i++) {
		const struct sb_probe_info *pi = sb_probes_probe(p, i);

		if (pi->available) /* with its note, if any (e.g. "attached but not self-tested (...)") */
			printf("  %-48s %-10s (%s)%s%s\n", pi->name, sb_backend_name(pi->backend), pi->role,
			       pi->reason[0] ? ": " : "", pi->reason);
		else
			printf("  %-48s UNAVAILABLE: %s\n", pi->name, pi->reason);
	}
	printf("attribution: %s\n\n", sb_probes_attribution(p) ? "on" : "off");
}

/*
 * The counters between two snapshots: rates per second for an interval,
 * or (totals) the events themselves over the whole session, with its mean
 * rate beside them.
 */
static void print_delta_text(struct sb_probes *p, const struct sb_probe_snapshot *prev,
			     const struct sb_probe_snapshot *cur, uint64_t t0, bool totals)
{
	double dt = (double)(cur->mono_ns - prev->mono_ns) / 1e9;
	double per; /* divisor of a count: 1 for totals, else the interval */
	bool header = false;

	if (dt <= 0)
		dt = 1e-9;
	per = totals ? 1 : dt;
	if (totals)
		printf("=== totals over the whole session: %.2f s ===\n", dt);
	else
		printf("--- %.2f s (interval %.2f s) ---\n", (double)(cur->mono_ns - t0) / 1e9, dt);
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, c);
		const struct sb_count *a = cur->c.count[c], *b = prev->c.count[c];
		uint64_t total = 0;

		if (!ci->available)
			continue;
		for (int x = 0; x < SB_CTX_MAX; x++)
			total += a[x].events - b[x].events;
		if (!total)
			continue;
		if (!header) {
			if (totals)
				printf("%-24s %12s %12s %12s %14s %12s\n", "counter", "target", "kthread", "other",
				       "target pages", "all/s");
			else
				printf("%-24s %12s %12s %12s %14s\n", "counter", "target/s", "kthread/s", "other/s",
				       "target pages/s");
			header = true;
		}
		printf("%-24s %12.0f %12.0f", ci->name, (double)(a[0].events - b[0].events) / per,
		       (double)(a[1].events - b[1].events) / per);
		if (other_counted(p, ci))
			printf(" %12.0f", (double)(a[2].events - b[2].events) / per);
		else
			printf(" %12s", "-"); /* not counted: --other */
		if (ci->pages_label)
			printf(" %14.0f", (double)(a[0].pages - b[0].pages) / per);
		else if (totals)
			printf(" %14s", "-"); /* no pages to this event */
		if (totals)
			printf(" %12.1f", (double)total / dt);
		if (ci->detail_label)
			printf("   %s: %llu", ci->detail_label,
			       (unsigned long long)(a[0].detail - b[0].detail + a[1].detail - b[1].detail));
		printf("\n");
	}
	if (!header)
		printf("(no events)\n");
	if (!sb_probes_attribution(p))
		return;
	for (int at = 0; at < SB_ATTR_MAX; at++)
		for (int x = 0; x < SB_CTX_OTHER; x++) {
			uint64_t sum = 0;

			for (int k = 0; k < SB_CAUSE_MAX; k++)
				sum += cur->c.cause[at][x][k] - prev->c.cause[at][x][k];
			if (!sum)
				continue;
			printf("causes of %s (%s):", sb_attr_name(at), sb_ctx_name(x));
			for (int k = 0; k < SB_CAUSE_MAX; k++) {
				uint64_t d = cur->c.cause[at][x][k] - prev->c.cause[at][x][k];

				if (d)
					printf(" %s %llu (%.1f%%)", sb_cause_name(k), (unsigned long long)d,
					       100.0 * (double)d / (double)sum);
			}
			printf("\n");
		}
}

static void print_stacks_text(struct sb_probes *p, size_t top)
{
	for (int at = 0; at < SB_ATTR_MAX; at++)
		for (int sampled = 0; sampled <= 1; sampled++) {
			struct sb_stack *st = NULL;
			struct sb_error err = { 0 };
			size_t n = 0;

			if (sb_probes_top_stacks(p, at, -1, sampled, top, &st, &n, &err) < 0) {
				verb_error("%s", err.msg);
				return;
			}
			if (!n)
				continue;
			printf("\ntop %s stacks of %s (%s):\n", sampled ? "sampled" : "stack-classified",
			       sb_attr_name(at),
			       sampled ? "count = samples" : "count = events whose cause needed the stack");
			for (size_t i = 0; i < n; i++) {
				printf("  %llu x %s, %s\n", (unsigned long long)st[i].count, sb_cause_name(st[i].cause),
				       sb_ctx_name(st[i].ctx));
				for (size_t f = 0; f < st[i].nr; f++)
					printf("      %s\n", st[i].frames[f].symbol);
			}
			free(st);
		}
}

/* ---- JSON output ---- */

static void emit(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(o);
}

static struct json_object *json_u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

/* Seconds with millisecond resolution, printed as such (not 17 digits). */
static struct json_object *json_seconds(uint64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", (double)ns / 1e9);
	return json_object_new_double_s((double)ns / 1e9, buf);
}

static void emit_probes_json(struct sb_probes *p)
{
	struct json_object *o = json_object_new_object(), *probes = json_object_new_array(),
			   *counters = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string("probes"));
	json_object_object_add(o, "pid", json_object_new_int(sb_probes_target(p)));
	json_object_object_add(o, "comm", json_object_new_string(sb_probes_target_comm(p)));
	json_object_object_add(o, "attribution", json_object_new_boolean(sb_probes_attribution(p)));
	for (size_t i = 0; i < sb_probes_probe_count(p); i++) {
		const struct sb_probe_info *pi = sb_probes_probe(p, i);
		struct json_object *j = json_object_new_object();

		json_object_object_add(j, "name", json_object_new_string(pi->name));
		json_object_object_add(j, "role", json_object_new_string(pi->role));
		json_object_object_add(j, "available", json_object_new_boolean(pi->available));
		json_object_object_add(j, "backend", json_object_new_string(sb_backend_name(pi->backend)));
		json_object_object_add(j, "reason", json_object_new_string(pi->reason));
		json_object_array_add(probes, j);
	}
	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, c);
		struct json_object *j = json_object_new_object();

		json_object_object_add(j, "available", json_object_new_boolean(ci->available));
		json_object_object_add(j, "probe", json_object_new_string(ci->probe->name));
		json_object_object_add(j, "backend", json_object_new_string(sb_backend_name(ci->probe->backend)));
		/* false: its "other" counts are null (--other) */
		json_object_object_add(j, "other_counted", json_object_new_boolean(other_counted(p, ci)));
		json_object_object_add(counters, ci->name, j);
	}
	json_object_object_add(o, "probes", probes);
	json_object_object_add(o, "counters", counters);
	emit(o);
}

static struct json_object *counts_json(struct sb_probes *p, const struct sb_probe_snapshot *s)
{
	struct json_object *counters = json_object_new_object();

	for (int c = 0; c < SB_C_MAX; c++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, c);
		struct json_object *j;

		if (!ci->available) {
			json_object_object_add(counters, ci->name, NULL); /* unavailable, never 0 */
			continue;
		}
		j = json_object_new_object();
		for (int x = 0; x < SB_CTX_MAX; x++) {
			struct json_object *cx;

			if (x == SB_CTX_OTHER && !other_counted(p, ci)) {
				json_object_object_add(j, sb_ctx_name(x), NULL); /* not counted (--other), never 0 */
				continue;
			}
			cx = json_object_new_object();
			json_object_object_add(cx, "events", json_u64(s->c.count[c][x].events));
			if (ci->pages_label)
				json_object_object_add(cx, ci->pages_label, json_u64(s->c.count[c][x].pages));
			if (ci->detail_label)
				json_object_object_add(cx, ci->detail_label, json_u64(s->c.count[c][x].detail));
			json_object_object_add(j, sb_ctx_name(x), cx);
		}
		json_object_object_add(counters, ci->name, j);
	}
	return counters;
}

static struct json_object *causes_json(const struct sb_probe_snapshot *s)
{
	struct json_object *causes = json_object_new_object();

	for (int at = 0; at < SB_ATTR_MAX; at++) {
		struct json_object *ja = json_object_new_object(), *how = json_object_new_object();
		static const char *const how_names[SB_HOW_MAX] = { "kthread", "marker", "task_flag",
								   "syscall", "stack",  "stack_none" };

		for (int x = 0; x < SB_CTX_OTHER; x++) {
			struct json_object *jx = json_object_new_object();

			for (int k = 0; k < SB_CAUSE_MAX; k++)
				json_object_object_add(jx, sb_cause_name(k), json_u64(s->c.cause[at][x][k]));
			json_object_object_add(ja, sb_ctx_name(x), jx);
		}
		for (int h = 0; h < SB_HOW_MAX; h++)
			json_object_object_add(how, how_names[h], json_u64(s->c.how[at][h]));
		json_object_object_add(ja, "decided_by", how);
		/* of decided_by.syscall: the last decision on the CPU reused (bpf/probes-abi.h) */
		json_object_object_add(ja, "reused", json_u64(s->c.reused[at]));
		json_object_object_add(causes, sb_attr_name(at), ja);
	}
	return causes;
}

static void emit_interval_json(struct sb_probes *p, const struct sb_probe_snapshot *s, uint64_t t0)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string("counts"));
	json_object_object_add(o, "t", json_seconds(s->mono_ns - t0));
	json_object_object_add(o, "counters", counts_json(p, s));
	if (sb_probes_attribution(p))
		json_object_object_add(o, "causes", causes_json(s));
	emit(o);
}

/* the target VM's exits by reason, as perf kvm stat names them; only reasons seen */
static struct json_object *exit_reasons_json(const struct sb_probe_snapshot *s)
{
	enum sb_exit_isa isa = sb_exit_isa_of_module(kvm_flavour_host()->module);
	struct json_object *o = json_object_new_object();
	char name[64];

	for (unsigned slot = 0; slot < SB_EXIT_SLOTS; slot++)
		if (s->c.exit_reason[slot])
			json_object_object_add(o, sb_exit_slot_name(slot, isa, name, sizeof(name)),
					       json_u64(s->c.exit_reason[slot]));
	return o;
}

static int emit_summary_json(struct sb_probes *p, const struct sb_probe_snapshot *s, uint64_t t0, size_t top)
{
	struct json_object *o = json_object_new_object(), *stacks = json_object_new_array(),
			   *mn = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string("summary"));
	json_object_object_add(o, "t", json_seconds(s->mono_ns - t0));
	json_object_object_add(o, "counters", counts_json(p, s));
	if (sb_probes_attribution(p))
		json_object_object_add(o, "causes", causes_json(s));
	if (sb_probes_counter(p, SB_C_MN_INVALIDATE)->available) {
		struct json_object *ev = json_object_new_object(), *fl = json_object_new_object();

		for (unsigned e = 0; e < SB_MN_EVENTS; e++) {
			uint64_t v = s->c.mn_event[0][e] + s->c.mn_event[1][e] + s->c.mn_event[2][e];

			if (v)
				json_object_object_add(ev, sb_probes_mn_event_name(p, e), json_u64(v));
		}
		for (unsigned b = 0; b < SB_MN_FLAG_BITS; b++) {
			uint64_t v = s->c.mn_flag[0][b] + s->c.mn_flag[1][b] + s->c.mn_flag[2][b];

			if (v)
				json_object_object_add(fl, sb_probes_mn_flag_name(p, b), json_u64(v));
		}
		json_object_object_add(mn, "events", ev);
		json_object_object_add(mn, "flags", fl);
	}
	json_object_object_add(o, "mn_invalidate", mn);
	if (sb_probes_counter(p, SB_C_KVM_EXIT)->available)
		json_object_object_add(o, "kvm_exit_reasons", exit_reasons_json(s));
	for (int at = 0; at < SB_ATTR_MAX; at++)
		for (int sampled = 0; sampled <= 1; sampled++) {
			struct sb_stack *st = NULL;
			struct sb_error err = { 0 };
			size_t n = 0;
			int r = sb_probes_top_stacks(p, at, -1, sampled, top, &st, &n, &err);

			if (r < 0) {
				verb_error("%s", err.msg);
				json_object_put(o);
				json_object_put(stacks);
				return r;
			}
			for (size_t i = 0; i < n; i++) {
				struct json_object *j = json_object_new_object(), *fr = json_object_new_array();

				json_object_object_add(j, "of", json_object_new_string(sb_attr_name(at)));
				json_object_object_add(j, "sampled", json_object_new_boolean(sampled));
				json_object_object_add(j, "cause", json_object_new_string(sb_cause_name(st[i].cause)));
				json_object_object_add(j, "context", json_object_new_string(sb_ctx_name(st[i].ctx)));
				json_object_object_add(j, "count", json_u64(st[i].count));
				for (size_t f = 0; f < st[i].nr; f++)
					json_object_array_add(fr, json_object_new_string(st[i].frames[f].symbol));
				json_object_object_add(j, "frames", fr);
				json_object_array_add(stacks, j);
			}
			free(st);
		}
	json_object_object_add(o, "top_stacks", stacks);
	emit(o);
	return 0;
}

struct probe_args {
	struct sb_probe_options opts;
	uint64_t interval_ns;
	unsigned long pid, count, top;
	bool json;
};

static const struct option probe_longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'c' },
	{ "json", no_argument, NULL, 'j' },
	{ "backend", required_argument, NULL, 'b' },
	{ "no-attribution", no_argument, NULL, 'A' },
	{ "other", no_argument, NULL, 'O' },
	{ "sample-every", required_argument, NULL, 's' },
	{ "max-stacks", required_argument, NULL, 'm' },
	{ "top", required_argument, NULL, 't' },
	{ "test-tracepoint", required_argument, NULL, 'T' },
	{ "help", no_argument, NULL, 'h' },
	{}
};

/* An option of the probes themselves (--backend, --no-attribution, --other, --sample-every, --max-stacks, --test-tracepoint). */
static int set_probe_option(int opt, const char *arg, struct sb_probe_options *opts)
{
	struct sb_error err = { 0 };
	unsigned long v;

	switch (opt) {
	case 'b':
		if (sb_backend_mask_parse(arg, &opts->backends, &err) < 0) {
			verb_error("--backend: %s", err.msg);
			return -EINVAL;
		}
		return 0;
	case 'A':
		opts->attribution = false;
		return 0;
	case 'O':
		opts->count_other = true;
		return 0;
	case 's':
		if (parse_uint("--sample-every", arg, 0, 1u << 30, &v) < 0)
			return -EINVAL;
		opts->stack_sample_every = (unsigned)v;
		return 0;
	case 'm':
		if (parse_uint("--max-stacks", arg, 1, SB_PROBE_MAX_STACKS, &v) < 0)
			return -EINVAL;
		opts->max_stacks = (unsigned)v;
		return 0;
	default:
		return parse_test_tracepoint(arg, opts) < 0 ? -EINVAL : 0;
	}
}

/* Fills *ret; returns ARGS_GO_ON, or the exit code to stop with. */
static int parse_argv(int argc, char **argv, struct probe_args *ret)
{
	struct sb_probe_options opts;
	uint64_t interval_ns = (uint64_t)(DEFAULT_INTERVAL_S * 1e9);
	unsigned long pid = 0, count = 0, top = DEFAULT_TOP;
	bool json = false;
	int opt;

	sb_probe_options_init(&opts);
	optind = 1;
	opterr = 0; /* verb_option_error() says what is wrong */
	while ((opt = getopt_long(argc, argv, ":h", probe_longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_uint("--pid", optarg, 1, 0x7fffffff, &pid) < 0)
				return EXIT_USAGE;
			break;
		case 'i':
			if (parse_interval(optarg, &interval_ns) < 0)
				return EXIT_USAGE;
			break;
		case 'c':
			if (parse_uint("--count", optarg, 1, 100000000, &count) < 0)
				return EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'b':
		case 'A':
		case 'O':
		case 's':
		case 'm':
		case 'T':
			if (set_probe_option(opt, optarg, &opts) < 0)
				return EXIT_USAGE;
			break;
		case 't':
			if (parse_uint("--top", optarg, 0, MAX_TOP, &top) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			help_print(stdout, usage);
			return EXIT_OK;
		default:
			verb_option_error("probe", opt, argv, probe_longopts);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		verb_error("unexpected argument '%s'; try 'snapbench probe --help'", argv[optind]);
		return EXIT_USAGE;
	}
	if (!pid) {
		verb_error("--pid is required: the pid of a QEMU running with -accel kvm");
		return EXIT_USAGE;
	}
	*ret = (struct probe_args){
		.opts = opts,
		.interval_ns = interval_ns,
		.pid = pid,
		.count = count,
		.top = top,
		.json = json,
	};
	return ARGS_GO_ON;
}

/*
 * cur less first, counter by counter: what the session counted. The probes
 * count from attach, which includes the loader's own fentry self-test (its
 * VM's events are counted as the target's for the moment: bpf/probes.c).
 */
static void since_first(const struct sb_probe_snapshot *first, struct sb_probe_snapshot *cur)
{
	_Static_assert(sizeof(struct sb_counts) % sizeof(__u64) == 0, "struct sb_counts is not all __u64");
	const __u64 *a = (const __u64 *)&first->c;
	__u64 *b = (__u64 *)&cur->c;

	for (size_t i = 0; i < sizeof(struct sb_counts) / sizeof(__u64); i++)
		b[i] -= a[i];
}

/*
 * Samples every interval until count, a signal or the target's exit: *first
 * gets the snapshot the session starts from, *prev the last one read, *t0
 * the first's time. EXIT_OK or the exit code.
 */
static int sample_loop(struct sb_probes *p, const struct probe_args *a, struct sb_probe_snapshot *first,
		       struct sb_probe_snapshot *prev, uint64_t *t0)
{
	struct sb_probe_snapshot cur;
	struct sb_error err = { 0 };
	uint64_t next;
	bool target_gone = false;
	int r;

	r = sb_probes_read(p, prev, &err);
	if (r < 0) {
		verb_error("%s", err.msg);
		return EXIT_FAIL;
	}
	*first = *prev;
	*t0 = prev->mono_ns;
	next = *t0 + a->interval_ns;
	for (unsigned long n = 0; !stop_requested && (!a->count || n < a->count); n++) {
		while (!stop_requested && mono_ns() < next)
			poll(NULL, 0, ms_until(next) > 0 ? ms_until(next) : 1);
		next += a->interval_ns;
		r = sb_probes_read(p, &cur, &err);
		if (r < 0) {
			verb_error("%s", err.msg);
			return EXIT_FAIL;
		}
		if (a->json) {
			struct sb_probe_snapshot since = cur;
			since_first(first, &since);
			emit_interval_json(p, &since, *t0);
		}
		else
			print_delta_text(p, prev, &cur, *t0, false);
		fflush(stdout);
		*prev = cur;
		if (!probe_session_target_alive(sb_probes_target(p))) {
			target_gone = true;
			break;
		}
	}
	if (target_gone)
		fprintf(stderr, "snapbench probe: pid %d exited\n", (int)sb_probes_target(p));
	return EXIT_OK;
}

static int run(struct probe_args *a)
{
	_cleanup_sb_probes_ struct sb_probes *p = NULL;
	struct sb_probe_snapshot first, prev;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t t0;
	int r;

	r = probe_session_open((pid_t)a->pid, &a->opts, &p);
	if (r != EXIT_OK)
		return r;
	if (a->json)
		emit_probes_json(p);
	else
		print_probes_text(p);
	fflush(stdout);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	r = sample_loop(p, a, &first, &prev, &t0);
	if (r != EXIT_OK)
		return r;
	if (a->json) {
		since_first(&first, &prev);
		if (emit_summary_json(p, &prev, t0, a->top) < 0)
			return EXIT_FAIL;
	} else {
		printf("\n");
		print_delta_text(p, &first, &prev, t0, true);
		if (a->top)
			print_stacks_text(p, a->top);
	}
	return EXIT_OK;
}

VERB_MAIN(probe_main, struct probe_args)

const struct verb verb_probe = {
	.name = "probe",
	.summary = "count KVM faults, TLB flushes and MMU-notifier invalidations of a QEMU (BPF)",
	.run = probe_main,
};
