// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * probe-cost: what snapbench's probes cost, measured during a background
 * snapshot of a 1 GiB KVM guest (about 270k kvm_unmap_hva_range events).
 *
 *   probe-cost [--guest-mib N] [ROUNDS [CONFIG...]]   (default 5 rounds, every config; as root)
 *
 * Naming configs runs only those, plus none and minimal (the references).
 * --guest-mib sets the guest's size in MiB (default 1024; about one event per
 * 4 KiB page): a smaller guest suits a host VM under -icount, where the
 * per-event figures are instruction counts, the same every run
 * (docs/probes.md, "Instruction counts").
 *
 * Configurations, run interleaved round after round (none, minimal, ...,
 * none, minimal, ...) so drift hits all alike:
 *   none             no probes
 *   minimal          a tp_btf program bumping one per-CPU counter on
 *                    kvm_unmap_hva_range (bench/minimal.bpf.c): the floor
 *   minimal-fentry   the same on fentry kvm_mmu_notifier_invalidate_range_start:
 *                    the floor of a program there (the trampoline's accounting
 *                    costs more than a tracepoint's); its figure is per run
 *   count            snapbench's probes, counting only (no attribution)
 *   causes           snapbench's probes with causes decided for every event
 *                    and pt_regs from bpf_task_pt_regs() (options
 *                    decision_cache and kfuncs off; 1 in 1024 stacks)
 *   cached           snapbench's probes as shipped: causes, the syscall
 *                    step's decisions cached per CPU (bpf/probes-abi.h),
 *                    pt_regs read without a helper where the kernel has
 *                    bpf_rdonly_cast
 *   stacks           snapbench's probes recording every event's stack
 *   zap_causes       snapbench's probes as shipped plus option zap_causes
 *                    (SPTE zaps by cause: fentry on range_end too)
 *   other            snapbench's probes as shipped, targeting a second,
 *                    idle QEMU: every event of the snapshot is another
 *                    process's ("other" context), what the probes cost
 *                    the host's other VMs
 *   perf             perf stat -a -e on the same tracepoints
 *   bpftrace         bpftrace count() on the same tracepoints
 *   bpftrace-kstack  bpftrace @[kstack] = count() on kvm_unmap_hva_range
 *
 * Per-event cost comes from the kernel's own accounting: with sysctl
 * kernel.bpf_stats_enabled=1 (restored on exit, also on SIGINT/SIGTERM)
 * each program's run_time_ns / run_cnt, read with bpf_obj_get_info_by_fd.
 * Wall time is from starting the snapshot to QEMU's MIGRATION completed
 * event. Prints medians [min max] and ratios.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "clock.h"
#include "minimal.skel.h"
#include "probes.h"
#include "qemu-launch.h"
#include "qmp-commands.h"
#include "qmp.h"
#include "spawn-program.h"
#include "test-sysctl.h"

#define GUEST_MIB 1024
#define GUEST_MIB_MIN 64
#define MAX_ROUNDS 50
#define SNAPSHOT_TIMEOUT_MS 600000
#define STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

enum cfg {
	C_NONE,
	C_MINIMAL,
	C_MINIMAL_FENTRY,
	C_COUNT,
	C_CAUSES,
	C_CACHED,
	C_STACKS,
	C_ZAP_CAUSES,
	C_OTHER,
	C_PERF,
	C_BPFTRACE,
	C_BPFTRACE_KSTACK,
	C_MAX,
};

static const char *const cfg_names[C_MAX] = {
	"none", "minimal", "minimal-fentry", "count", "causes", "cached", "stacks", "zap_causes", "other", "perf", "bpftrace", "bpftrace-kstack",
};

static const char *const cfg_desc[C_MAX] = {
	"no probes",
	"minimal tp_btf per-CPU counter",
	"minimal fentry per-CPU counter",
	"snapbench, counting only",
	"snapbench, causes decided per event",
	"snapbench, causes, cached (default)",
	"snapbench, stack of every event",
	"snapbench as shipped + zap_causes",
	"snapbench as shipped, other process",
	"perf stat -e, same tracepoints",
	"bpftrace count(), same tracepoints",
	"bpftrace @[kstack] = count()",
};

/* The tracepoints snapbench attaches (bpf/probes.c), for perf and bpftrace. */
static const char *const tracepoints[] = {
	"kvm:kvm_unmap_hva_range",    "kvm:kvm_age_hva",          "kvm:kvm_test_age_hva",
	"kvm:kvm_page_fault",         "kvmmmu:fast_page_fault",   "kvmmmu:kvm_mmu_prepare_zap_page",
	"kvmmmu:kvm_tdp_mmu_spte_changed", "kvmmmu:kvm_mmu_set_spte", "kvmmmu:kvm_mmu_split_huge_page",
	"tlb:tlb_flush",              "migrate:mm_migrate_pages_start", "migrate:mm_migrate_pages",
};

struct sample {
	double wall_ms;
	double ns_per_event;   /* the kvm_unmap_hva_range program; < 0: not a BPF config */
	double inval_ns;       /* every program on the invalidation's path, per kvm_unmap_hva_range event */
	uint64_t events;       /* its run_cnt */
	double bpf_ms;         /* all programs of the config, CPU time in BPF */
	uint64_t uffd_wp, stack_walks, classified, reused;
};

static struct sample samples[C_MAX][MAX_ROUNDS];
/* each config's programs in its last interleaved round: where its run time goes */
#define MAX_PROGS 48
static struct sb_prog_stats last_progs[C_MAX][MAX_PROGS];
static size_t n_last_progs[C_MAX];
/* config other's target: a QEMU that takes no snapshot */
static struct test_qemu other_qemu;
static bool cfg_skipped[C_MAX];
static char skip_reason[C_MAX][160];

/* ---- bpf_stats_enabled, restored on every exit path (tests/lib/test-sysctl.h) ---- */

static pid_t helper_pid = -1; /* a running perf or bpftrace */

/* In the signal handler, before the restore: async-signal-safe */
static void kill_helper(void)
{
	if (helper_pid > 0)
		kill(helper_pid, SIGKILL);
}

static void stats_enable(void)
{
	test_sysctl_on_signal(kill_helper);
	test_sysctl_set(STATS_SYSCTL, "1");
}

/* ---- program stats by id (for bpftrace's programs) ---- */

#define MAX_IDS 4096

static size_t prog_ids(__u32 *ids, size_t max)
{
	__u32 id = 0;
	size_t n = 0;

	while (n < max && bpf_prog_get_next_id(id, &id) == 0)
		ids[n++] = id;
	return n;
}

static bool prog_info(__u32 id, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);
	int fd = bpf_prog_get_fd_by_id(id);
	int r;

	if (fd < 0)
		return false;
	memset(info, 0, sizeof(*info));
	r = bpf_obj_get_info_by_fd(fd, info, &len);
	close(fd);
	return r == 0;
}

/* ---- helpers: perf and bpftrace as children, argv only ---- */

/* argv (found in PATH) started with its stdout and stderr on a pipe, whose read end goes to *out_fd */
static int spawn(char *const argv[], int *out_fd)
{
	int pipefd[2], r;

	CHECK(pipe2(pipefd, O_CLOEXEC) == 0);
	const struct spawn_fd fds[] = { { pipefd[1], 1 }, { pipefd[1], 2 } };
	r = spawn_start(&(struct spawn_options){ .argv = argv, .fds = fds, .n_fds = ARRAY_SIZE(fds) }, &helper_pid, NULL);
	close(pipefd[1]);
	if (r < 0) {
		helper_pid = -1;
		close(pipefd[0]);
		return r;
	}
	*out_fd = pipefd[0];
	return 0;
}

/* Read the child's output until it contains want (or timeout); keeps the tail in buf. */
static bool wait_output(int fd, const char *want, int timeout_ms, char *buf, size_t size)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	size_t len = strlen(buf);

	while (!strstr(buf, want)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, ms_until(deadline)) <= 0)
			return false;
		if (len + 1 >= size) {
			memmove(buf, buf + size / 2, len - size / 2 + 1);
			len -= size / 2;
		}
		n = read(fd, buf + len, size - len - 1);
		if (n <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
	}
	return true;
}

static void stop_helper(int out_fd)
{
	char buf[4096];
	int status;

	if (helper_pid <= 0)
		return;
	kill(helper_pid, SIGINT);
	/* drain (bpftrace prints its maps on exit) */
	if (out_fd >= 0)
		while (read(out_fd, buf, sizeof(buf)) > 0)
			;
	waitpid(helper_pid, &status, 0);
	helper_pid = -1;
	if (out_fd >= 0)
		close(out_fd);
}

/* ---- one snapshot ---- */

static double snapshot_ms(struct qmp_client *c, struct test_qemu *q)
{
	struct sb_error err = { 0 };
	char path[256];
	uint64_t t0;
	int fd;

	fd = open(test_qemu_path(q, "snapshot.bin", path, sizeof(path)), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		  0600);
	CHECK(fd >= 0);
	t0 = mono_ns();
	CHECK_MSG(qmp_snapshot_background_start(c, fd, &err) == 0, "%s", err.msg);
	close(fd);
	CHECK_MSG(qmp_wait_migration(c, QMP_MIGRATION_COMPLETED, SNAPSHOT_TIMEOUT_MS, NULL, &err) == 0, "%s",
		  err.msg);
	return (double)(mono_ns() - t0) / 1e6;
}

/* The probe options of one of snapbench's configs. */
static void ours_options(enum cfg cfg, struct sb_probe_options *o)
{
	sb_probe_options_init(o);
	if (cfg == C_COUNT)
		o->attribution = false;
	if (cfg == C_CAUSES) {
		o->decision_cache = false;
		o->kfuncs = false;
	}
	if (cfg == C_STACKS)
		o->stack_sample_every = 1;
	if (cfg == C_ZAP_CAUSES)
		o->zap_causes = true;
}

/*
 * One of our BPF configs (minimal or snapbench's) attached to the QEMU: the
 * interleaved rounds attach one per snapshot, the pairs two.
 */
struct side {
	enum cfg cfg;
	struct minimal_bpf *minimal;
	struct sb_probes *ours;
};

static void side_attach(struct test_qemu *q, struct side *sd)
{
	struct sb_probe_options o;
	struct sb_error err = { 0 };

	if (sd->cfg == C_MINIMAL || sd->cfg == C_MINIMAL_FENTRY) {
		sd->minimal = minimal_bpf__open();
		CHECK_MSG(sd->minimal, "cannot open the minimal program: %s", strerror(errno));
		if (sd->cfg == C_MINIMAL_FENTRY) {
			bpf_program__set_autoload(sd->minimal->progs.minimal_unmap, false);
			bpf_program__set_autoload(sd->minimal->progs.minimal_fentry, true);
		}
		CHECK_MSG(minimal_bpf__load(sd->minimal) == 0, "cannot load the minimal program: %s", strerror(errno));
		CHECK(minimal_bpf__attach(sd->minimal) == 0);
		return;
	}
	ours_options(sd->cfg, &o);
	CHECK_MSG(sb_probes_open(sd->cfg == C_OTHER ? other_qemu.pid : q->pid, &o, &sd->ours, &err) == 0, "%s",
		  err.msg);
	CHECK_MSG(sb_probes_attach(sd->ours, &err) == 0, "%s", err.msg);
}

/*
 * Whether a program of ours runs on every invalidation of the measured
 * kind: kvm_unmap_hva_range's and the fentry programs on
 * kvm_mmu_notifier_invalidate_range_start and _end, which KVM's notifier
 * runs once per invalidation around that tracepoint. What the host pays
 * per invalidation is their sum, not the tracepoint's program alone.
 */
static bool on_invalidation(const char *prog)
{
	return strstr(prog, "kvm_unmap_hva_range") || strstr(prog, "kvm_mmu_notifier_invalidate_range_start") ||
	       strstr(prog, "kvm_mmu_notifier_invalidate_range_end");
}

/* The side's figures after the snapshot into s (all but wall_ms); closes it. */
static void side_measure(struct side *sd, struct sample *s)
{
	struct sb_error err = { 0 };

	s->ns_per_event = -1;
	if (sd->minimal) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		CHECK(bpf_obj_get_info_by_fd(bpf_program__fd(sd->cfg == C_MINIMAL_FENTRY ? sd->minimal->progs.minimal_fentry
										      : sd->minimal->progs.minimal_unmap),
					     &info, &len) == 0);
		s->events = info.run_cnt;
		if (info.run_cnt)
			s->ns_per_event = (double)info.run_time_ns / (double)info.run_cnt;
		s->bpf_ms = (double)info.run_time_ns / 1e6;
		s->inval_ns = s->ns_per_event;
		minimal_bpf__destroy(sd->minimal);
		sd->minimal = NULL;
		return;
	}
	struct sb_prog_stats *st = NULL;
	struct sb_probe_snapshot snap;
	uint64_t total_ns = 0, inval_total = 0;
	size_t n = 0;

	CHECK_MSG(sb_probes_prog_stats(sd->ours, &st, &n, &err) == 0, "%s", err.msg);
	CHECK_MSG(sb_probes_read(sd->ours, &snap, &err) == 0, "%s", err.msg);
	n_last_progs[sd->cfg] = 0;
	for (size_t i = 0; i < n; i++) {
		if (st[i].run_cnt && n_last_progs[sd->cfg] < MAX_PROGS)
			last_progs[sd->cfg][n_last_progs[sd->cfg]++] = st[i];
		total_ns += st[i].run_time_ns;
		if (on_invalidation(st[i].name))
			inval_total += st[i].run_time_ns;
		if (strstr(st[i].name, "kvm_unmap_hva_range") && st[i].run_cnt) {
			s->events = st[i].run_cnt;
			s->ns_per_event = (double)st[i].run_time_ns / (double)st[i].run_cnt;
		}
	}
	s->bpf_ms = (double)total_ns / 1e6;
	s->inval_ns = s->events ? (double)inval_total / (double)s->events : 0;
	s->uffd_wp = snap.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_UFFD_WP];
	s->classified = 0;
	for (int k = 0; k < SB_CAUSE_MAX; k++)
		s->classified += snap.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][k];
	s->stack_walks = snap.c.how[SB_ATTR_UNMAP][SB_HOW_STACK] + snap.c.how[SB_ATTR_UNMAP][SB_HOW_STACK_NONE];
	s->reused = snap.c.reused[SB_ATTR_UNMAP];
	free(st);
	sb_probes_close(sd->ours);
	sd->ours = NULL;
}

/* A BPF config alone on one snapshot. */
static void run_bpf(struct qmp_client *c, struct test_qemu *q, enum cfg cfg, struct sample *s)
{
	struct side sd = { .cfg = cfg };

	side_attach(q, &sd);
	s->wall_ms = snapshot_ms(c, q);
	side_measure(&sd, s);
}

static void run_perf(struct qmp_client *c, struct test_qemu *q, struct sample *s)
{
	char events[1024] = "";
	/* no workload: perf stat -a counts until SIGINT */
	char *argv[] = { "perf", "stat", "-a", "-e", events, NULL };
	int fd;

	for (size_t i = 0; i < ARRAY_SIZE(tracepoints); i++)
		snprintf(events + strlen(events), sizeof(events) - strlen(events), "%s%s", i ? "," : "",
			 tracepoints[i]);
	if (spawn(argv, &fd) < 0) {
		cfg_skipped[C_PERF] = true;
		snprintf(skip_reason[C_PERF], sizeof(skip_reason[C_PERF]), "perf not found (install linux-perf)");
		return;
	}
	usleep(1500 * 1000); /* perf opens its events */
	s->wall_ms = snapshot_ms(c, q);
	s->ns_per_event = -1;
	stop_helper(fd);
}

static void run_bpftrace(struct qmp_client *c, struct test_qemu *q, enum cfg cfg, struct sample *s)
{
	char script[2048] = "";
	char *argv[] = { "bpftrace", "-e", script, NULL };
	static __u32 before[MAX_IDS], after[MAX_IDS];
	size_t nb, na;
	char out[8192] = "";
	int fd;

	if (cfg == C_BPFTRACE) {
		for (size_t i = 0; i < ARRAY_SIZE(tracepoints); i++)
			snprintf(script + strlen(script), sizeof(script) - strlen(script), "%stracepoint:%s",
				 i ? "," : "", tracepoints[i]);
		snprintf(script + strlen(script), sizeof(script) - strlen(script), " { @[probe] = count(); }");
	} else {
		snprintf(script, sizeof(script), "tracepoint:kvm:kvm_unmap_hva_range { @[kstack] = count(); }");
	}
	nb = prog_ids(before, MAX_IDS);
	if (spawn(argv, &fd) < 0) {
		cfg_skipped[cfg] = true;
		snprintf(skip_reason[cfg], sizeof(skip_reason[cfg]), "bpftrace not found (install bpftrace)");
		return;
	}
	if (!wait_output(fd, "Attaching", 60000, out, sizeof(out))) {
		stop_helper(fd);
		CHECK_MSG(false, "bpftrace did not attach: %s", out);
	}
	usleep(500 * 1000);
	s->wall_ms = snapshot_ms(c, q);
	/* bpftrace's programs: the ids that appeared; the hot one is kvm_unmap_hva_range's */
	na = prog_ids(after, MAX_IDS);
	s->ns_per_event = -1;
	s->bpf_ms = 0;
	for (size_t i = 0; i < na; i++) {
		struct bpf_prog_info info;
		bool old = false;

		for (size_t j = 0; j < nb && !old; j++)
			old = before[j] == after[i];
		if (old || !prog_info(after[i], &info) || !info.run_cnt)
			continue;
		s->bpf_ms += (double)info.run_time_ns / 1e6;
		if (info.run_cnt > s->events) {
			s->events = info.run_cnt;
			s->ns_per_event = (double)info.run_time_ns / (double)info.run_cnt;
		}
	}
	stop_helper(fd);
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

static struct summary summarize(double *v, int n)
{
	struct summary s;
	double tmp[MAX_ROUNDS];

	memcpy(tmp, v, sizeof(double) * (size_t)n);
	qsort(tmp, (size_t)n, sizeof(double), cmp_double);
	s.min = tmp[0];
	s.max = tmp[n - 1];
	s.median = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	return s;
}

/* One round of config k into samples[k][r], its figures on stderr. */
static void run_round(struct qmp_client *c, struct test_qemu *q, int r, int k)
{
	struct sample *s = &samples[k][r];

	memset(s, 0, sizeof(*s));
	switch (k) {
	case C_NONE:
		s->wall_ms = snapshot_ms(c, q);
		s->ns_per_event = -1;
		break;
	case C_MINIMAL:
	case C_MINIMAL_FENTRY:
	case C_COUNT:
	case C_CAUSES:
	case C_CACHED:
	case C_STACKS:
	case C_ZAP_CAUSES:
	case C_OTHER:
		run_bpf(c, q, k, s);
		break;
	case C_PERF:
		run_perf(c, q, s);
		break;
	default:
		run_bpftrace(c, q, k, s);
		break;
	}
	fprintf(stderr, "round %d %-16s %8.1f ms", r + 1, cfg_names[k], s->wall_ms);
	if (s->ns_per_event >= 0)
		fprintf(stderr, "  %7.1f ns/event over %llu events", s->ns_per_event, (unsigned long long)s->events);
	fprintf(stderr, "\n");
}

/* The snapshot's wall time per config against none. */
static void print_wall_table(int rounds)
{
	double v[MAX_ROUNDS];
	struct summary none_wall;

	for (int r = 0; r < rounds; r++)
		v[r] = samples[C_NONE][r].wall_ms;
	none_wall = summarize(v, rounds);
	printf("%-18s %-36s %10s %19s %8s\n", "config", "", "wall ms", "[min max]", "vs none");
	for (int k = 0; k < C_MAX; k++) {
		struct summary w;

		if (cfg_skipped[k]) {
			printf("%-18s %-36s skipped: %s\n", cfg_names[k], cfg_desc[k], skip_reason[k]);
			continue;
		}
		for (int r = 0; r < rounds; r++)
			v[r] = samples[k][r].wall_ms;
		w = summarize(v, rounds);
		printf("%-18s %-36s %10.0f   [%6.0f %6.0f] %8.3f\n", cfg_names[k], cfg_desc[k], w.median, w.min, w.max,
		       w.median / none_wall.median);
	}
}

/* The per-event cost of each config that has one, against the minimal program. */
static void print_cost_table(int rounds)
{
	double v[MAX_ROUNDS];
	struct summary min_cost;

	printf("\nper-event cost of the kvm_unmap_hva_range program (run_time_ns / run_cnt); all: every program\n"
	       "of the config, its run time per kvm_unmap_hva_range event\n");
	printf("%-18s %10s %19s %11s %14s %12s %10s\n", "config", "ns/event", "[min max]", "vs minimal", "events/snap",
	       "BPF ms/snap", "all/event");
	for (int r = 0; r < rounds; r++)
		v[r] = samples[C_MINIMAL][r].ns_per_event;
	min_cost = summarize(v, rounds);
	for (int k = 0; k < C_MAX; k++) {
		struct summary cst, ms;
		double ev[MAX_ROUNDS];

		if (cfg_skipped[k] || samples[k][0].ns_per_event < 0)
			continue;
		for (int r = 0; r < rounds; r++) {
			v[r] = samples[k][r].ns_per_event;
			ev[r] = (double)samples[k][r].events;
		}
		cst = summarize(v, rounds);
		for (int r = 0; r < rounds; r++)
			v[r] = samples[k][r].bpf_ms;
		ms = summarize(v, rounds);
		printf("%-18s %10.1f   [%6.1f %6.1f] %11.2f %14.0f %12.1f %10.1f\n", cfg_names[k], cst.median, cst.min,
		       cst.max, cst.median / min_cost.median, summarize(ev, rounds).median, ms.median,
		       ms.median * 1e6 / summarize(ev, rounds).median);
	}
}

/* Every program that ran in the last round of count, cached and other: runs, ns a run, ns per kvm_unmap_hva_range event. */
static void print_prog_tables(int rounds)
{
	static const enum cfg which[] = { C_COUNT, C_CACHED, C_OTHER };

	for (size_t w = 0; w < sizeof(which) / sizeof(which[0]); w++) {
		enum cfg k = which[w];
		double events = (double)samples[k][rounds - 1].events;

		if (cfg_skipped[k] || !n_last_progs[k] || events <= 0)
			continue;
		printf("\nconfig %s, last round: each program that ran, per kvm_unmap_hva_range event (%.0f events)\n",
		       cfg_names[k], events);
		printf("%-48s %10s %10s %12s\n", "program", "runs", "ns/run", "ns/event");
		for (size_t i = 0; i < n_last_progs[k]; i++) {
			const struct sb_prog_stats *p = &last_progs[k][i];

			printf("%-48s %10llu %10.1f %12.1f\n", p->name, (unsigned long long)p->run_cnt,
			       (double)p->run_time_ns / (double)p->run_cnt, (double)p->run_time_ns / events);
		}
	}
}

/*
 * The cost targets, per event against the floor (the minimal program):
 * the kvm_unmap_hva_range program alone, counting at most 1.3x, the
 * shipped probes (causes) at most 2.0x; and every program that runs per
 * invalidation summed (on_invalidation()), counting at most 2.0x, the
 * shipped probes at most 3.0x. In config other, where every event is
 * another process's, no program of the shipped set costing more a run than
 * the floor costs an event.
 */
static void print_target(const char *what, double m, double floor_ns, double max)
{
	double ratio = m / floor_ns;

	printf(" %-13s %8.1f %6.2fx  ", what, m, ratio);
	if (max > 0)
		printf("<= %.1fx: %-8s", max, ratio <= max + 0.005 ? "met" : "NOT met");
	else
		printf("%-17s", "");
}

static void print_targets(int rounds)
{
	static const struct {
		enum cfg k;
		double max, all_max; /* 0: no target */
	} targets[] = { { C_COUNT, 1.3, 2.0 }, { C_CACHED, 2.0, 3.0 }, { C_OTHER, 1.0, 0 } };
	double v[MAX_ROUNDS];
	double floor_ns, fentry_floor = 0;

	if (cfg_skipped[C_MINIMAL] || samples[C_MINIMAL][0].ns_per_event < 0)
		return;
	for (int r = 0; r < rounds; r++)
		v[r] = samples[C_MINIMAL][r].ns_per_event;
	floor_ns = summarize(v, rounds).median;
	printf("\ntargets, per kvm_unmap_hva_range event against the floor (%.1f): medians of the interleaved rounds;\n"
	       "program: kvm_unmap_hva_range's alone; per inval: every program that runs per invalidation\n"
	       "(kvm_unmap_hva_range's, fentry on kvm_mmu_notifier_invalidate_range_start and _end)\n",
	       floor_ns);
	for (size_t t = 0; t < ARRAY_SIZE(targets); t++) {
		enum cfg k = targets[t].k;

		if (cfg_skipped[k] || samples[k][0].ns_per_event < 0)
			continue;
		printf("%-14s", cfg_names[k]);
		for (int r = 0; r < rounds; r++)
			v[r] = samples[k][r].ns_per_event;
		print_target("program", summarize(v, rounds).median, floor_ns, targets[t].max);
		for (int r = 0; r < rounds; r++)
			v[r] = samples[k][r].inval_ns;
		print_target("per inval", summarize(v, rounds).median, floor_ns, targets[t].all_max);
		printf("\n");
	}
	if (cfg_skipped[C_OTHER] || !n_last_progs[C_OTHER])
		return;
	if (!cfg_skipped[C_MINIMAL_FENTRY] && samples[C_MINIMAL_FENTRY][0].ns_per_event >= 0) {
		for (int r = 0; r < rounds; r++)
			v[r] = samples[C_MINIMAL_FENTRY][r].ns_per_event;
		fentry_floor = summarize(v, rounds).median;
	}
	printf("config other, last round: each program a run (every context it ran in: mostly the other process's "
	       "events,\nkernel threads' too), against the floor's event%s\n",
	       fentry_floor > 0 ? "; fentry programs also against minimal-fentry's run" : "");
	for (size_t i = 0; i < n_last_progs[C_OTHER]; i++) {
		const struct sb_prog_stats *p = &last_progs[C_OTHER][i];
		double per_run = (double)p->run_time_ns / (double)p->run_cnt;

		printf("%-48s %10.1f %8.2fx   target <= 1.0x: %-8s", p->name, per_run, per_run / floor_ns,
		       per_run <= floor_ns * 1.005 ? "met" : "NOT met");
		if (fentry_floor > 0 && !strncmp(p->name, "fentry", 6))
			printf(" %6.2fx minimal-fentry", per_run / fentry_floor);
		printf("\n");
	}
}

/* ---- paired: a config and the minimal program on the same snapshot ---- */

/*
 * Interleaved rounds see different moments of a shared machine; a pair
 * sees the same one. Both programs run on every event of one snapshot, one
 * after the other, and the one attached first runs first; it also pays
 * first for the event's cold cache lines. So each pair is measured in both
 * orders and the ratio is the geometric mean of the two, which cancels a
 * cost of the position that multiplies.
 */

/* One snapshot with first and then second attached; their ns per event. */
static void pair_once(struct qmp_client *c, struct test_qemu *q, enum cfg first, enum cfg second, double *ns_first,
		      double *ns_second)
{
	struct side a = { .cfg = first }, b = { .cfg = second };
	struct sample sa = { 0 }, sb = { 0 };

	side_attach(q, &a);
	side_attach(q, &b);
	snapshot_ms(c, q);
	side_measure(&a, &sa);
	side_measure(&b, &sb);
	CHECK_MSG(sa.ns_per_event > 0 && sb.ns_per_event > 0, "%s or %s: its kvm_unmap_hva_range program did not run",
		  cfg_names[first], cfg_names[second]);
	*ns_first = sa.ns_per_event;
	*ns_second = sb.ns_per_event;
}

static double pair_ratio[C_MAX][MAX_ROUNDS], pair_ns[C_MAX][MAX_ROUNDS], pair_min_ns[C_MAX][MAX_ROUNDS];

/* Round r of config k paired with minimal, in both orders. */
static void run_pair(struct qmp_client *c, struct test_qemu *q, int r, enum cfg k)
{
	double m1, k1, k2, m2;

	pair_once(c, q, C_MINIMAL, k, &m1, &k1);
	pair_once(c, q, k, C_MINIMAL, &k2, &m2);
	pair_ratio[k][r] = sqrt((k1 / m1) * (k2 / m2));
	pair_ns[k][r] = (k1 + k2) / 2;
	pair_min_ns[k][r] = (m1 + m2) / 2;
	fprintf(stderr, "round %d pair %-11s minimal first %.1f/%.1f ns, %s first %.1f/%.1f ns: %.3fx\n", r + 1,
		cfg_names[k], m1, k1, cfg_names[k], k2, m2, pair_ratio[k][r]);
}

static bool pairable(enum cfg k)
{
	return k == C_COUNT || k == C_CAUSES || k == C_CACHED;
}

static void print_pair_table(int rounds)
{
	printf("\npaired with the minimal program on the same snapshots, both orders (geometric mean of the two)\n");
	printf("%-18s %12s %19s %12s %12s\n", "config", "vs minimal", "[min max]", "ns/event", "minimal ns");
	for (int k = 0; k < C_MAX; k++) {
		struct summary rt, ns, mn;

		if (cfg_skipped[k] || !pairable(k))
			continue;
		rt = summarize(pair_ratio[k], rounds);
		ns = summarize(pair_ns[k], rounds);
		mn = summarize(pair_min_ns[k], rounds);
		printf("%-18s %12.3f   [%6.3f %6.3f] %12.1f %12.1f\n", cfg_names[k], rt.median, rt.min, rt.max, ns.median,
		       mn.median);
	}
}

/* CONFIG arguments: run only those and the references none and minimal. */
static void select_configs(int n, char **names)
{
	bool want[C_MAX] = { [C_NONE] = true, [C_MINIMAL] = true };

	if (n <= 0)
		return;
	for (int i = 0; i < n; i++) {
		int k = 0;

		while (k < C_MAX && strcmp(names[i], cfg_names[k]))
			k++;
		CHECK_MSG(k < C_MAX, "unknown config '%s': see the list at the top of bench/probe-cost.c", names[i]);
		want[k] = true;
	}
	for (int k = 0; k < C_MAX; k++)
		if (!want[k]) {
			cfg_skipped[k] = true;
			snprintf(skip_reason[k], sizeof(skip_reason[k]), "not selected");
		}
}

int main(int argc, char **argv)
{
	struct test_qemu q;
	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };
	int rounds, guest_mib = GUEST_MIB;

	if (argc > 2 && !strcmp(argv[1], "--guest-mib")) {
		char *end = NULL;
		long v = strtol(argv[2], &end, 10);

		CHECK_MSG(*argv[2] && !*end && v >= GUEST_MIB_MIN && v <= 65536, "--guest-mib '%s': %d to 65536 MiB",
			  argv[2], GUEST_MIB_MIN);
		guest_mib = (int)v;
		argc -= 2;
		argv += 2;
	}
	rounds = argc > 1 ? atoi(argv[1]) : 5;

	CHECK_MSG(rounds >= 1 && rounds <= MAX_ROUNDS, "ROUNDS: 1 to %d", MAX_ROUNDS);
	select_configs(argc - 2, argv + 2);
	if (geteuid() != 0)
		SKIP_TEST("root (BPF, sysctl)");
	stats_enable();
	test_qemu_start(&q, guest_mib, 1, NULL);
	if (!cfg_skipped[C_OTHER])
		test_qemu_start(&other_qemu, GUEST_MIB_MIN, 1, NULL);
	test_sysctl_install_signal_handlers(); /* ours first, then qemu-launch's */
	CHECK_MSG(qmp_connect(q.qmp_path, 30000, NULL, &c, &err) == 0, "%s", err.msg);
	qmp_client_set_command_timeout(c, 60000);
	sleep(2);
	/* one unmeasured snapshot: first-touch effects in QEMU and the page cache */
	snapshot_ms(c, &q);

	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < C_MAX; k++)
			if (!cfg_skipped[k])
				run_round(c, &q, r, k);
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < C_MAX; k++)
			if (!cfg_skipped[k] && pairable(k))
				run_pair(c, &q, r, k);

	printf("probe-cost: background snapshot of a %d MiB guest, %d rounds interleaved; median [min max]\n",
	       guest_mib, rounds);
	printf("host: %ld CPUs online; kernel.bpf_stats_enabled=1 during the run\n\n", sysconf(_SC_NPROCESSORS_ONLN));
	print_wall_table(rounds);
	print_cost_table(rounds);
	print_pair_table(rounds);
	print_prog_tables(rounds);
	print_targets(rounds);
	for (int k = C_CAUSES; k <= C_CACHED; k++) {
		const struct sample *l = &samples[k][rounds - 1];

		if (cfg_skipped[k])
			continue;
		printf("%sclassifier (config %s, last round): %llu of %llu invalidations uffd-wp, %llu needed a stack walk, "
		       "%llu syscall decisions reused\n",
		       k == C_CAUSES || cfg_skipped[C_CAUSES] ? "\n" : "", cfg_names[k], (unsigned long long)l->uffd_wp,
		       (unsigned long long)l->classified, (unsigned long long)l->stack_walks,
		       (unsigned long long)l->reused);
	}

	qmp_client_free(c);
	test_qemu_stop(&q);
	if (!cfg_skipped[C_OTHER])
		test_qemu_stop(&other_qemu);
	CHECK_MSG(test_sysctl_restore(), "could not restore kernel.bpf_stats_enabled=%s", test_sysctl_saved(STATS_SYSCTL));
	return 0;
}
