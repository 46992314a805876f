// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The probes on a real QEMU during a real background snapshot (seed 000's
 * scenario): a 512 MiB KVM guest idling in its firmware, probes attached
 * to QEMU's pid, a background snapshot through qmp/ into a file.
 *
 *  - invalidations that reached KVM in QEMU's context are at least the
 *    guest pages written out (QEMU unprotects every page it saves with
 *    UFFDIO_WRITEPROTECT), and more than 90% are attributed to uffd-wp;
 *  - the backend in use is reported for every counter;
 *  - KVM's own stats (query-stats) against the probes, in windows where
 *    the guest is paused so both see the same events: kvm_page_fault
 *    events >= pf_taken (KVM traces MMIO faults that pf_taken skips), and,
 *    where fentry works, kvm_remote_flush (in every context) ==
 *    remote_tlb_flush_requests;
 *  - where fentry works, the invalidations by cause, event and flag: each
 *    cause's events and flag values sum to its invalidations, and the
 *    flag bits counted per cause are the ones counted per context.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe-test.h"
#include "qemu-launch.h"
#include "qmp-commands.h"
#include "qmp.h"

#define CONNECT_TIMEOUT_MS 30000
#define SNAPSHOT_TIMEOUT_MS 600000
#define GUEST_MIB 512

struct kvm_stats {
	int64_t pf_taken, pf_fixed, pf_emulate, pf_spurious, pf_fast;
	int64_t remote_tlb_flush, remote_tlb_flush_requests;
};

static int64_t stat_or(const struct qmp_stat_set *s, const char *name)
{
	int64_t v = -1;

	if (qmp_stat_set_get(s, name, &v) < 0)
		return -1;
	return v;
}

static void read_kvm_stats(struct qmp_client *c, struct kvm_stats *k)
{
	struct qmp_vcpu_stats vs = { 0 };
	struct qmp_stat_set vm = { 0 };
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_query_stats_vcpu(c, NULL, &vs, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_query_stats_vm(c, NULL, &vm, &err) == 0, "%s", err.msg);
	k->pf_taken = stat_or(&vs.sum, "pf_taken");
	k->pf_fixed = stat_or(&vs.sum, "pf_fixed");
	k->pf_emulate = stat_or(&vs.sum, "pf_emulate");
	k->pf_spurious = stat_or(&vs.sum, "pf_spurious");
	k->pf_fast = stat_or(&vs.sum, "pf_fast");
	k->remote_tlb_flush = stat_or(&vm, "remote_tlb_flush");
	k->remote_tlb_flush_requests = stat_or(&vm, "remote_tlb_flush_requests");
	qmp_vcpu_stats_clear(&vs);
	qmp_stat_set_clear(&vm);
}

static void vm_pause(struct qmp_client *c, bool stop)
{
	struct sb_error err = { 0 };

	CHECK_MSG(qmp_execute(c, stop ? "stop" : "cont", NULL, -1, 30000, NULL, &err) == 0, "%s", err.msg);
}

/*
 * QEMU with its firmware in its idle loop, the monitor connected. A nested
 * guest under TCG's emulated SVM (the host VM without /dev/kvm) can stop in
 * its first seconds with "KVM internal error. Suberror: 3" (an exit while an
 * event was being delivered, QEMU's emulation of SVM, not the kernel under
 * test; seen once on 7.2 in CI): QEMU is started again once, saying so,
 * before any probe is attached. A second such stop fails the test.
 */
static struct qmp_client *start_settled(struct test_qemu *q)
{
	for (int attempt = 0;; attempt++) {
		struct qmp_client *c = NULL;
		struct qmp_status st = { 0 };
		struct sb_error err = { 0 };

		test_qemu_start(q, GUEST_MIB, 1, NULL);
		CHECK_MSG(qmp_connect(q->qmp_path, CONNECT_TIMEOUT_MS, NULL, &c, &err) == 0, "%s", err.msg);
		qmp_client_set_command_timeout(c, 60000);
		/* let the firmware reach its idle loop */
		sleep(2);
		CHECK_MSG(qmp_query_status(c, &st, &err) == 0, "%s", err.msg);
		if (strcmp(st.status, "internal-error") || attempt > 0) {
			CHECK_MSG(st.running, "QEMU is %s before the test began (its log follows)", st.status);
			return c;
		}
		printf("QEMU stopped in its firmware with a KVM internal error (nested SVM emulation); "
		       "starting it again once. Its log began:\n");
		test_qemu_print_log(q, stdout, 3);
		qmp_client_free(c);
		test_qemu_stop(q);
	}
}

/*
 * The invalidations by cause, event and flag (sb_counts.mn_cause_*): each
 * cause's events and its flag values sum to its count of invalidations
 * (the classified ones to the cause counter, the rest to what is left),
 * and the flag bits counted from the values are the per-context bit
 * counters' exactly. Printed by cause, as a report has them.
 */
static void check_mn_causes(struct sb_probes *p, const struct sb_counts *c, __u64 mn)
{
	__u64 classified = 0, bits_by_cause[SB_MN_FLAG_VALUE_BITS] = { 0 };

	for (unsigned ci = 0; ci <= SB_CAUSE_MAX; ci++) {
		__u64 by_event = 0, by_value = 0, want;

		for (unsigned e = 0; e < SB_MN_EVENTS; e++)
			by_event += c->mn_cause_event[ci][e];
		for (unsigned v = 0; v < SB_MN_FLAG_VALUES; v++)
			by_value += c->mn_cause_flags[ci][v];
		for (unsigned b = 0; b < SB_MN_FLAG_VALUE_BITS; b++)
			bits_by_cause[b] += sb_mn_cause_flag_bit(c, ci, b);
		if (ci < SB_CAUSE_MAX) {
			want = c->cause[SB_ATTR_MN_INVALIDATE][SB_CTX_TARGET][ci] + c->cause[SB_ATTR_MN_INVALIDATE][SB_CTX_KTHREAD][ci];
			classified += want;
		} else {
			want = mn - classified;
		}
		if (by_event) {
			printf("mn_invalidate %s:", ci < SB_CAUSE_MAX ? sb_cause_name(ci) : "unclassified");
			for (unsigned e = 0; e < SB_MN_EVENTS; e++)
				if (c->mn_cause_event[ci][e])
					printf(" %s %llu", sb_probes_mn_event_name(p, e), (unsigned long long)c->mn_cause_event[ci][e]);
			for (unsigned b = 0; b < SB_MN_FLAG_VALUE_BITS; b++)
				if (sb_mn_cause_flag_bit(c, ci, b))
					printf(" flag %s %llu", sb_probes_mn_flag_name(p, b),
					       (unsigned long long)sb_mn_cause_flag_bit(c, ci, b));
			printf("\n");
		}
		CHECK_MSG(by_event == want && by_value == want, "cause %u: %llu invalidations by event, %llu by flags, %llu counted",
			  ci, (unsigned long long)by_event, (unsigned long long)by_value, (unsigned long long)want);
	}
	for (unsigned b = 0; b < SB_MN_FLAG_VALUE_BITS; b++) {
		__u64 by_ctx = c->mn_flag[0][b] + c->mn_flag[1][b] + c->mn_flag[2][b];
		CHECK_MSG(bits_by_cause[b] == by_ctx, "flag bit %u: %llu by cause, %llu by context", b,
			  (unsigned long long)bits_by_cause[b], (unsigned long long)by_ctx);
	}
}

int main(void)
{
	struct test_qemu q;
	struct qmp_client *c = NULL;
	struct sb_probes *p;
	struct sb_probe_snapshot s0, s1, d;
	struct kvm_stats k0, k1;
	struct qmp_migration_info mi = { 0 };
	struct sb_error err = { 0 };
	char path[256];
	__u64 events, uffd, written;
	int fd;

	if (geteuid() != 0)
		SKIP_TEST("root (BPF probes)");
	c = start_settled(&q);
	p = probes_start(q.pid, NULL);
	for (int i = 0; i < SB_C_MAX; i++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, i);

		CHECK(ci->probe && ci->probe->name);
		CHECK(ci->available == (ci->probe->backend != SB_BACKEND_NONE));
		printf("%-22s %-48s %s\n", ci->name, ci->probe->name,
		       ci->available ? sb_backend_name(ci->probe->backend) : "unavailable");
	}
	CHECK(sb_probes_counter(p, SB_C_UNMAP_HVA)->available);
	CHECK(sb_probes_counter(p, SB_C_PAGE_FAULT)->available);

	vm_pause(c, true);
	probes_read(p, &s0);
	read_kvm_stats(c, &k0);
	vm_pause(c, false);

	fd = open(test_qemu_path(&q, "snapshot.bin", path, sizeof(path)), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		  0600);
	CHECK(fd >= 0);
	CHECK_MSG(qmp_snapshot_background_start(c, fd, &err) == 0, "%s", err.msg);
	close(fd);
	CHECK_MSG(qmp_wait_migration(c, QMP_MIGRATION_COMPLETED, SNAPSHOT_TIMEOUT_MS, NULL, &err) == 0, "%s",
		  err.msg);
	CHECK_MSG(qmp_query_migrate(c, &mi, &err) == 0, "%s", err.msg);

	vm_pause(c, true);
	probes_read(p, &s1);
	read_kvm_stats(c, &k1);
	snap_delta(&s0, &s1, &d);

	written = (__u64)(mi.ram_normal + mi.ram_duplicate);
	events = d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events;
	uffd = d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_UFFD_WP];
	printf("snapshot: %lld ms, %lld normal + %lld zero pages written, ram total %lld bytes\n",
	       (long long)mi.total_time_ms, (long long)mi.ram_normal, (long long)mi.ram_duplicate,
	       (long long)mi.ram_total);
	printf("kvm_unmap_hva_range in QEMU: %llu events, %llu pages; uffd-wp %llu (%.2f%%); kernel threads %llu; "
	       "other processes %llu\n",
	       (unsigned long long)events, (unsigned long long)d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].pages,
	       (unsigned long long)uffd, events ? 100.0 * (double)uffd / (double)events : 0.0,
	       (unsigned long long)d.c.count[SB_C_UNMAP_HVA][SB_CTX_KTHREAD].events,
	       (unsigned long long)d.c.count[SB_C_UNMAP_HVA][SB_CTX_OTHER].events);
	for (int k = 0; k < SB_CAUSE_MAX; k++)
		if (d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][k])
			printf("  cause %-15s %llu\n", sb_cause_name(k),
			       (unsigned long long)d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][k]);
	printf("  decided by: syscall %llu, stack %llu, stack without match %llu\n",
	       (unsigned long long)d.c.how[SB_ATTR_UNMAP][SB_HOW_SYSCALL],
	       (unsigned long long)d.c.how[SB_ATTR_UNMAP][SB_HOW_STACK],
	       (unsigned long long)d.c.how[SB_ATTR_UNMAP][SB_HOW_STACK_NONE]);

	CHECK_MSG(mi.ram_normal >= 0 && mi.ram_duplicate >= 0 && written >= (GUEST_MIB << 20) / 4096 / 2,
		  "query-migrate reports %lld + %lld pages", (long long)mi.ram_normal, (long long)mi.ram_duplicate);
	CHECK_MSG(events >= written, "%llu invalidations < %llu pages written out", (unsigned long long)events,
		  (unsigned long long)written);
	CHECK_MSG(uffd * 10 > events * 9, "only %llu of %llu invalidations attributed to uffd-wp",
		  (unsigned long long)uffd, (unsigned long long)events);
	CHECK(cause_sum(&d, SB_ATTR_UNMAP, SB_CTX_TARGET) == events);

	/* KVM's stats against the probes, same paused windows */
	printf("guest page faults: kvm_page_fault %llu (write %llu); query-stats pf_taken %lld pf_fixed %lld "
	       "pf_emulate %lld pf_spurious %lld pf_fast %lld\n",
	       (unsigned long long)d.c.count[SB_C_PAGE_FAULT][SB_CTX_TARGET].events,
	       (unsigned long long)d.c.count[SB_C_PAGE_FAULT][SB_CTX_TARGET].detail,
	       (long long)(k1.pf_taken - k0.pf_taken), (long long)(k1.pf_fixed - k0.pf_fixed),
	       (long long)(k1.pf_emulate - k0.pf_emulate), (long long)(k1.pf_spurious - k0.pf_spurious),
	       (long long)(k1.pf_fast - k0.pf_fast));
	printf("fast_page_fault %llu (fixed %llu); tdp_spte_changed %llu (zapped %llu); zap_page %llu\n",
	       (unsigned long long)d.c.count[SB_C_FAST_PF][SB_CTX_TARGET].events,
	       (unsigned long long)d.c.count[SB_C_FAST_PF][SB_CTX_TARGET].detail,
	       (unsigned long long)(d.c.count[SB_C_TDP_SPTE][SB_CTX_TARGET].events),
	       (unsigned long long)(d.c.count[SB_C_TDP_SPTE][SB_CTX_TARGET].detail),
	       (unsigned long long)d.c.count[SB_C_ZAP_PAGE][SB_CTX_TARGET].events);
	printf("remote TLB: query-stats remote_tlb_flush %lld, requests %lld; host tlb_send_ipi in QEMU %llu\n",
	       (long long)(k1.remote_tlb_flush - k0.remote_tlb_flush),
	       (long long)(k1.remote_tlb_flush_requests - k0.remote_tlb_flush_requests),
	       (unsigned long long)d.c.count[SB_C_TLB_SEND_IPI][SB_CTX_TARGET].events);
	CHECK_MSG(k0.pf_taken >= 0 && k1.pf_taken >= 0, "query-stats has no pf_taken");
	/* every pf_taken goes through the traced exit handler; MMIO faults are traced but not counted */
	CHECK_MSG(d.c.count[SB_C_PAGE_FAULT][SB_CTX_TARGET].events >= (__u64)(k1.pf_taken - k0.pf_taken),
		  "kvm_page_fault %llu < pf_taken %lld",
		  (unsigned long long)d.c.count[SB_C_PAGE_FAULT][SB_CTX_TARGET].events,
		  (long long)(k1.pf_taken - k0.pf_taken));
	if (sb_probes_counter(p, SB_C_KVM_FLUSH)->available) {
		__u64 bpf = d.c.count[SB_C_KVM_FLUSH][SB_CTX_TARGET].events +
			    d.c.count[SB_C_KVM_FLUSH][SB_CTX_KTHREAD].events +
			    d.c.count[SB_C_KVM_FLUSH][SB_CTX_OTHER].events;

		/*
		 * kvm_flush_remote_tlbs() bumps remote_tlb_flush_requests on entry
		 * and remote_tlb_flush only when a flush was done (the arch hook or
		 * a vCPU was kicked); the counter counts its KVM_REQ_TLB_FLUSH
		 * request where every one passes (docs/probes.md), in every
		 * context: requests == counted, flushes <= counted.
		 */
		printf("%s (BTF of %s): %llu requests\n", sb_probes_counter(p, SB_C_KVM_FLUSH)->probe->name,
		       sb_probes_counter(p, SB_C_KVM_FLUSH)->probe->btf, (unsigned long long)bpf);
		CHECK_MSG(bpf == (__u64)(k1.remote_tlb_flush_requests - k0.remote_tlb_flush_requests),
			  "kvm_remote_flush %llu != remote_tlb_flush_requests %lld", (unsigned long long)bpf,
			  (long long)(k1.remote_tlb_flush_requests - k0.remote_tlb_flush_requests));
		CHECK_MSG((__u64)(k1.remote_tlb_flush - k0.remote_tlb_flush) <= bpf,
			  "remote_tlb_flush %lld > kvm_remote_flush requests %llu",
			  (long long)(k1.remote_tlb_flush - k0.remote_tlb_flush), (unsigned long long)bpf);
	} else {
		printf("kvm_remote_flush unavailable: %s\n", sb_probes_counter(p, SB_C_KVM_FLUSH)->probe->reason);
	}

	/*
	 * fentry on kvm_mmu_notifier_invalidate_range_start (from kvm.ko's BTF on
	 * distribution kernels): the kernel traces kvm_unmap_hva_range at that
	 * function's start, so both count the same calls; by event type, the
	 * uffd-wp write-protect and unprotect of a background snapshot are
	 * mostly MMU_NOTIFY_PROTECTION_VMA.
	 */
	if (sb_probes_counter(p, SB_C_MN_INVALIDATE)->available) {
		__u64 mn = 0, unmap = 0, by_event = 0, protection = 0;

		for (int x = 0; x < SB_CTX_MAX; x++) {
			mn += d.c.count[SB_C_MN_INVALIDATE][x].events;
			unmap += d.c.count[SB_C_UNMAP_HVA][x].events;
			for (unsigned e = 0; e < SB_MN_EVENTS; e++) {
				by_event += d.c.mn_event[x][e];
				if (!strcmp(sb_probes_mn_event_name(p, e), "MMU_NOTIFY_PROTECTION_VMA"))
					protection += d.c.mn_event[x][e];
			}
		}
		printf("mn_invalidate (fentry, %s): %llu events; kvm_unmap_hva_range %llu; by event:",
		       sb_probes_counter(p, SB_C_MN_INVALIDATE)->probe->btf, (unsigned long long)mn,
		       (unsigned long long)unmap);
		for (unsigned e = 0; e < SB_MN_EVENTS; e++) {
			__u64 v = d.c.mn_event[0][e] + d.c.mn_event[1][e] + d.c.mn_event[2][e];
			if (v)
				printf(" %s %llu", sb_probes_mn_event_name(p, e), (unsigned long long)v);
		}
		printf("\n");
		CHECK_MSG(mn == unmap, "kvm_mmu_notifier_invalidate_range_start (fentry) %llu != kvm_unmap_hva_range %llu",
			  (unsigned long long)mn, (unsigned long long)unmap);
		CHECK_MSG(by_event == mn, "events by type sum to %llu of %llu", (unsigned long long)by_event,
			  (unsigned long long)mn);
		/*
		 * Protection changes come from uffd-wp (and the test's few
		 * mprotect calls); the uffd-wp ioctls also send some
		 * MMU_NOTIFY_CLEAR (265 of 131,336 on Debian's 6.1 in a host VM).
		 */
		__u64 mprot = d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_MPROTECT];
		CHECK_MSG(protection <= uffd + mprot && protection >= uffd * 9 / 10,
			  "MMU_NOTIFY_PROTECTION_VMA %llu for %llu uffd-wp and %llu mprotect invalidations",
			  (unsigned long long)protection, (unsigned long long)uffd, (unsigned long long)mprot);
		check_mn_causes(p, &d.c, mn);
	} else {
		printf("mn_invalidate unavailable: %s\n", sb_probes_counter(p, SB_C_MN_INVALIDATE)->probe->reason);
	}

	qmp_migration_info_clear(&mi);
	sb_probes_close(p);
	qmp_client_free(c);
	test_qemu_stop(&q);
	printf("ok\n");
	return 0;
}
