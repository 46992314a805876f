// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NUMA hinting with kernel.numa_balancing=1 (restored afterwards, also
 * when a check fails or meson's timeout sends SIGTERM). The test holds the
 * host-wide knob lock (runner/knobs.h) from before it reads the original
 * value until it has restored it, so no snapbench run on this host changes
 * the sysctl meanwhile, nor takes our 1 for its original.
 *
 * NUMA hinting's scanner (task_numa_work) runs as task_work when a task
 * that has used enough CPU returns to user space, and change_prot_numa()
 * makes the task's memory PROT_NONE through the MMU notifier: KVM sees one
 * invalidation per scanned range, in the task's context but outside any
 * syscall, so only a stack walk can name the cause.
 *
 *  1. Deterministic: this test holds a KVM VM and burns CPU touching its
 *     memory in user space. Either the scanner runs within 20 s and every
 *     invalidation of that window is classified numa-hinting, decided by a
 *     stack walk through task_numa_work/change_prot_numa; or the kernel
 *     says (tracepoint sched:sched_skip_cpuset_numa, counted for this
 *     process with perf) that it skipped the scan because the task's
 *     cpuset allows a single node, and then there must be no numa-hinting
 *     event at all. The kernel takes that shortcut whenever any non-root
 *     cpuset exists (libvirt creates one for its VMs) on a one-node
 *     machine like this one. (One node also means hinting faults find
 *     pages on the right node: nothing migrates.)
 *  2. Observed: a QEMU guest, for 15 s. Its vCPU threads spend their CPU
 *     in KVM_RUN and seldom return to user space, so the scanner seldom
 *     runs in QEMU here; whatever it shows is printed and must be
 *     classified consistently.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "knobs.h"
#include "probe-test.h"
#include "qemu-launch.h"
#include "qmp.h"
#include "selfvm.h"
#include "test-sysctl.h"

#define SYSCTL "/proc/sys/kernel/numa_balancing"

static int knob_lock = -1;

/* At exit: restored first, then the lock goes (on a signal the kernel drops it when we die). */
static void unlock_when_restored(void)
{
	if (test_sysctl_restore()) {
		knobs_host_unlock(knob_lock);
		knob_lock = -1;
	}
}

static void enable_numa_balancing(void)
{
	struct knobs_options o = { .run_id = "test probe-numa", .wait_ms = 10 * 60 * 1000 };
	struct sb_error err = { 0 };

	if (access(SYSCTL, F_OK) < 0)
		SKIP_TEST("kernel.numa_balancing (CONFIG_NUMA_BALANCING)");
	CHECK_MSG(knobs_host_lock(&o, &knob_lock, &err) == 0, "%s", err.msg);
	atexit(unlock_when_restored); /* before test_sysctl_set()'s restore: runs after it */
	test_sysctl_set(SYSCTL, "1");
}

/* Count sched:sched_skip_cpuset_numa for this process (perf, no BPF); -1 if the kernel lacks it. */
static int open_skip_counter(void)
{
	struct perf_event_attr attr = { 0 };
	char path[128];
	unsigned long long id;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/sched/sched_skip_cpuset_numa/id");
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%llu", &id) != 1) {
		fclose(f);
		return -1;
	}
	fclose(f);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	CHECK_MSG(fd >= 0, "perf_event_open(sched_skip_cpuset_numa): %s", strerror(errno));
	return fd;
}

static unsigned long long read_counter(int fd)
{
	unsigned long long v = 0;

	if (fd >= 0)
		CHECK(read(fd, &v, sizeof(v)) == sizeof(v));
	return v;
}

static void self_scan(void)
{
	struct self_vm vm;
	struct sb_probe_options o;
	struct sb_probes *p;
	struct sb_probe_snapshot s0, s, d;
	uint64_t t0, cpu0, wall_cap;
	__u64 numa = 0;
	int skip_fd = open_skip_counter();
	unsigned long long skips = 0;

	self_vm_create(&vm, 64u << 20);
	sb_probe_options_init(&o);
	o.stack_sample_every = 1;
	p = probes_start(getpid(), &o);
	probes_read(p, &s0);
	/*
	 * 20 s of this process's CPU from here (the scanner runs on CPU time
	 * used; a slow host VM gives the process less of it per second), and
	 * at most 120 s of wall time.
	 */
	t0 = mono_ns();
	cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	wall_cap = t0 + 120 * NSEC_PER_SEC;
	while (clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0 < 20 * NSEC_PER_SEC && mono_ns() < wall_cap) {
		uint64_t until = mono_ns() + 250 * NSEC_PER_MSEC;

		while (mono_ns() < until)
			for (size_t off = 0; off < vm.size; off += 4096)
				vm.mem[off]++;
		probes_read(p, &s);
		numa = s.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_NUMA_HINTING] -
		       s0.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_NUMA_HINTING];
		skips = read_counter(skip_fd);
		if (numa || skips)
			break;
	}
	/* one more slice: a scan pass may span several task_work runs */
	for (uint64_t until = mono_ns() + 500 * NSEC_PER_MSEC; mono_ns() < until;)
		for (size_t off = 0; off < vm.size; off += 4096)
			vm.mem[off]++;
	probes_read(p, &s);
	snap_delta(&s0, &s, &d);
	skips = read_counter(skip_fd);
	numa = d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_NUMA_HINTING];
	printf("busy process: after %.1f s (%.1f s of CPU): %llu invalidations, %llu numa-hinting, decided by stack "
	       "%llu; the kernel skipped %llu scans for a single-node cpuset\n",
	       (double)(s.mono_ns - t0) / 1e9, (double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / 1e9,
	       (unsigned long long)d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events,
	       (unsigned long long)numa, (unsigned long long)d.c.how[SB_ATTR_UNMAP][SB_HOW_STACK], skips);
	if (skip_fd >= 0)
		close(skip_fd);
	if (skips > 0 && numa == 0) {
		printf("NUMA hinting scans are skipped here: a non-root cpuset exists and this task's cpuset "
		       "allows one node\n");
		CHECK(d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events == 0);
		sb_probes_close(p);
		self_vm_destroy(&vm);
		return;
	}
	CHECK_MSG(numa > 0, "no NUMA-hinting invalidation in 20 s of CPU (or 120 s) with kernel.numa_balancing=1, and the "
			    "kernel reported no cpuset skip either");
	CHECK(numa == d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events);
	CHECK(d.c.how[SB_ATTR_UNMAP][SB_HOW_STACK] == numa);
	CHECK(stack_has_frame(p, SB_ATTR_UNMAP, SB_CAUSE_NUMA_HINTING, false, "task_numa_work") ||
	      stack_has_frame(p, SB_ATTR_UNMAP, SB_CAUSE_NUMA_HINTING, false, "change_prot_numa"));
	sb_probes_close(p);
	self_vm_destroy(&vm);
}

static void print_top_stack(struct sb_probes *p, enum sb_cause cause)
{
	struct sb_error err = { 0 };
	struct sb_stack *st = NULL;
	size_t n = 0;

	CHECK_MSG(sb_probes_top_stacks(p, SB_ATTR_UNMAP, cause, false, 1, &st, &n, &err) == 0, "%s", err.msg);
	if (n) {
		printf("  top %s stack (%llu events):\n", sb_cause_name(cause), (unsigned long long)st[0].count);
		for (size_t f = 0; f < st[0].nr; f++)
			printf("    %s\n", st[0].frames[f].symbol);
	}
	free(st);
}

static void qemu_observe(void)
{
	struct test_qemu q;
	struct sb_probes *p;
	struct sb_probe_snapshot s0, s1, d;
	__u64 events;

	struct qmp_client *c = NULL;
	struct sb_error err = { 0 };

	test_qemu_start(&q, 512, 2, NULL);
	test_sysctl_install_signal_handlers(); /* restore numa_balancing first, then qemu-launch's cleanup */
	/* QEMU is up (and its VM created) once QMP answers */
	CHECK_MSG(qmp_connect(q.qmp_path, 30000, NULL, &c, &err) == 0, "%s", err.msg);
	p = probes_start(q.pid, NULL);
	probes_read(p, &s0);
	sleep(15);
	probes_read(p, &s1);
	snap_delta(&s0, &s1, &d);
	events = d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events;
	printf("QEMU, 15 s: %llu invalidations in its context, numa-hinting %llu, migration %llu; kernel threads %llu; "
	       "page faults %llu\n",
	       (unsigned long long)events,
	       (unsigned long long)d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_NUMA_HINTING],
	       (unsigned long long)d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_MIGRATION],
	       (unsigned long long)d.c.count[SB_C_UNMAP_HVA][SB_CTX_KTHREAD].events,
	       (unsigned long long)d.c.count[SB_C_PAGE_FAULT][SB_CTX_TARGET].events);
	for (int k = 0; k < SB_CAUSE_MAX; k++)
		if (d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][k])
			printf("  %-15s %llu\n", sb_cause_name(k),
			       (unsigned long long)d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][k]);
	print_top_stack(p, SB_CAUSE_OTHER);
	print_top_stack(p, SB_CAUSE_NUMA_HINTING);
	CHECK(cause_sum(&d, SB_ATTR_UNMAP, SB_CTX_TARGET) == events);
	/* NUMA hinting is only ever named from a stack walk */
	CHECK(d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_NUMA_HINTING] <=
	      d.c.how[SB_ATTR_UNMAP][SB_HOW_STACK]);
	sb_probes_close(p);
	qmp_client_free(c);
	test_qemu_stop(&q);
}

int main(void)
{
	if (geteuid() != 0)
		SKIP_TEST("root (BPF probes, sysctl)");
	if (access("/dev/kvm", R_OK | W_OK) < 0)
		SKIP_TEST("/dev/kvm");
	enable_numa_balancing();
	self_scan();
	qemu_observe();
	CHECK_MSG(test_sysctl_restore(), "could not restore kernel.numa_balancing=%s", test_sysctl_saved(SYSCTL));
	unlock_when_restored();
	printf("ok\n");
	return 0;
}
