// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vcpu-event-cost: what the vCPU event counters cost (kvm:kvm_exit,
 * kvm:kvm_inj_virq on by default; kvm:kvm_emulate_insn opt-in), measured on
 * the micro guest (2 vCPUs: the latency probe on vCPU 0, write64 on vCPU 1).
 *
 *   vcpu-event-cost [ROUNDS [SECONDS]]    (defaults 5 and 3; run as root)
 *
 * Configurations, interleaved round after round so drift hits all alike:
 *   none        no probes
 *   default     snapbench's probes as shipped (exit counters on)
 *   emulation   the same plus the emulation counter
 *
 * Per window: the guest's write64 operations per second (telemetry), and
 * for the probe configurations each vCPU event program's events per second
 * and cost per event from the kernel's own accounting
 * (kernel.bpf_stats_enabled=1, restored on exit, also on SIGINT/SIGTERM:
 * run_time_ns / run_cnt). Prints medians [min max].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "guest-vm.h"
#include "probes.h"
#include "test-sysctl.h"

#define MAX_ROUNDS 50
#define TIMEOUT_MS 120000
#define STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"
#define WORKER_VCPU 1

enum cfg { C_NONE, C_DEFAULT, C_EMULATION, C_MAX };
static const char *const cfg_names[C_MAX] = { "none", "default", "emulation" };

/* the programs whose cost is reported, by name suffix */
enum prog { P_EXIT, P_VIRQ, P_EMUL, P_MAX };
static const char *const prog_names[P_MAX] = { "kvm_exit", "kvm_inj_virq", "kvm_emulate_insn" };

struct sample {
	double ops_per_s;
	double events_per_s[P_MAX];
	double ns_per_event[P_MAX]; /* < 0: no event */
	double bpf_ms_per_s;        /* every program of the config */
};

static struct sample samples[C_MAX][MAX_ROUNDS];

/* ---- one window ---- */

/* The worker's cumulative operation count at the next telemetry sample. */
static uint64_t next_ops(struct test_guest *g, uint64_t *at_ns)
{
	const struct guest_record *r = test_guest_expect(g, GUEST_RECORD_SAMPLE, TIMEOUT_MS);

	*at_ns = mono_ns();
	return r->sample.ops[WORKER_VCPU];
}

static void window(struct test_guest *g, enum cfg cfg, int seconds, struct sample *s)
{
	struct sb_prog_stats *st = NULL;
	struct sb_probe_options o;
	struct sb_probes *p = NULL;
	struct sb_error err = { 0 };
	uint64_t ops0, ops1, t0, t1, target;
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	if (cfg != C_NONE) {
		sb_probe_options_init(&o);
		o.emulation_counter = cfg == C_EMULATION;
		CHECK_MSG(sb_probes_open(g->pid, &o, &p, &err) == 0, "%s", err.msg);
		CHECK_MSG(sb_probes_attach(p, &err) == 0, "%s", err.msg);
	}
	ops0 = next_ops(g, &t0);
	target = t0 + (uint64_t)seconds * NSEC_PER_SEC;
	do
		ops1 = next_ops(g, &t1);
	while (t1 < target);
	s->ops_per_s = (double)(ops1 - ops0) / ((double)(t1 - t0) / 1e9);
	for (int k = 0; k < P_MAX; k++)
		s->ns_per_event[k] = -1;
	if (!p)
		return;
	CHECK_MSG(sb_probes_prog_stats(p, &st, &n, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++) {
		double secs = (double)(t1 - t0) / 1e9; /* the probes ran a little longer: an upper bound */

		s->bpf_ms_per_s += (double)st[i].run_time_ns / 1e6 / secs;
		for (int k = 0; k < P_MAX; k++) {
			size_t len = strlen(st[i].name), pl = strlen(prog_names[k]);

			if (len < pl || strcmp(st[i].name + len - pl, prog_names[k]) || !st[i].run_cnt)
				continue;
			s->events_per_s[k] = (double)st[i].run_cnt / secs;
			s->ns_per_event[k] = (double)st[i].run_time_ns / (double)st[i].run_cnt;
		}
	}
	free(st);
	sb_probes_close(p);
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct summary {
	double median, min, max;
};

static struct summary summarize(const double *v, int n)
{
	double tmp[MAX_ROUNDS];
	struct summary s;

	memcpy(tmp, v, sizeof(double) * (size_t)n);
	qsort(tmp, (size_t)n, sizeof(double), cmp_double);
	s.min = tmp[0];
	s.max = tmp[n - 1];
	s.median = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	return s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, seconds = argc > 2 ? atoi(argv[2]) : 3;
	struct guest_params gp;
	struct test_guest g;
	struct summary none_ops;
	double v[MAX_ROUNDS];

	CHECK_MSG(rounds >= 1 && rounds <= MAX_ROUNDS, "ROUNDS: 1 to %d", MAX_ROUNDS);
	CHECK_MSG(seconds >= 1 && seconds <= 60, "SECONDS: 1 to 60");
	if (geteuid() != 0)
		SKIP_TEST("root (BPF, sysctl)");
	guest_params_init(&gp, 2);
	gp.region_bytes = 16u << 20;
	test_guest_start(&g, 128, &gp, NULL, false);
	/* kernel.bpf_stats_enabled=1, restored on every exit path; after the launcher's handlers, so ours run first */
	test_sysctl_set(STATS_SYSCTL, "1");
	test_guest_expect(&g, GUEST_RECORD_HELLO, TIMEOUT_MS);
	window(&g, C_NONE, 1, &samples[C_NONE][0]); /* warm-up, unmeasured */

	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < C_MAX; k++) {
			struct sample *s = &samples[k][r];

			window(&g, (enum cfg)k, seconds, s);
			fprintf(stderr, "round %d %-10s %10.0f ops/s", r + 1, cfg_names[k], s->ops_per_s);
			for (int q = 0; q < P_MAX; q++)
				if (s->ns_per_event[q] >= 0)
					fprintf(stderr, "  %s %.0f/s %.1f ns", prog_names[q], s->events_per_s[q],
						s->ns_per_event[q]);
			fprintf(stderr, "\n");
		}

	printf("vcpu-event-cost: micro guest (write64 on vCPU %d, probe on vCPU 0), %d rounds of %d s interleaved; "
	       "median [min max]\n\n",
	       WORKER_VCPU, rounds, seconds);
	for (int r = 0; r < rounds; r++)
		v[r] = samples[C_NONE][r].ops_per_s;
	none_ops = summarize(v, rounds);
	printf("%-10s %14s %23s %8s %16s\n", "config", "guest ops/s", "[min max]", "vs none", "BPF CPU ms/s");
	for (int k = 0; k < C_MAX; k++) {
		struct summary o, b;

		for (int r = 0; r < rounds; r++)
			v[r] = samples[k][r].ops_per_s;
		o = summarize(v, rounds);
		for (int r = 0; r < rounds; r++)
			v[r] = samples[k][r].bpf_ms_per_s;
		b = summarize(v, rounds);
		printf("%-10s %14.0f   [%9.0f %9.0f] %8.3f %16.1f\n", cfg_names[k], o.median, o.min, o.max,
		       o.median / none_ops.median, b.median);
	}
	printf("\nper program (run_time_ns / run_cnt)\n%-10s %-18s %14s %10s %19s\n", "config", "program", "events/s",
	       "ns/event", "[min max]");
	for (int k = C_DEFAULT; k < C_MAX; k++)
		for (int q = 0; q < P_MAX; q++) {
			double ev[MAX_ROUNDS];
			int m = 0;

			for (int r = 0; r < rounds; r++)
				if (samples[k][r].ns_per_event[q] >= 0) {
					v[m] = samples[k][r].ns_per_event[q];
					ev[m++] = samples[k][r].events_per_s[q];
				}
			if (!m) {
				printf("%-10s %-18s %14s %10s\n", cfg_names[k], prog_names[q], "0",
				       k == C_DEFAULT && q == P_EMUL ? "(off)" : "-");
				continue;
			}
			struct summary c = summarize(v, m), e = summarize(ev, m);
			printf("%-10s %-18s %14.0f %10.1f   [%6.1f %6.1f]\n", cfg_names[k], prog_names[q], e.median,
			       c.median, c.min, c.max);
		}

	test_guest_stop(&g);
	CHECK_MSG(test_sysctl_restore(), "could not restore kernel.bpf_stats_enabled=%s", test_sysctl_saved(STATS_SYSCTL));
	return 0;
}
