// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel threads' invalidations attributed to their VM. A tracepoint
 * (kvm:kvm_unmap_hva_range) firing in khugepaged cannot tell which VM's
 * notifier it is in, so every VM's probes count it as a kernel-thread
 * event; fentry on kvm_mmu_notifier_invalidate_range_start gets the
 * notifier and from it the struct kvm (kvm->userspace_pid), so it counts
 * only its own VM's.
 *
 * Two QEMUs idling in SeaBIOS, each with its own probes, their memory
 * (guest RAM, heap, stacks) faulted in 4 KiB pages while transparent huge
 * pages are off. Then THP goes on with khugepaged scanning fast:
 *  - A's ranges are collapsed (MMU_NOTIFY_CLEAR in a kernel thread; the
 *    notifier is per mm, so QEMU's heap counts as well as guest RAM);
 *  - B was started with PR_SET_THP_DISABLE (inherited through exec), so
 *    khugepaged skips its mm and nothing of B is collapsed.
 * Then, over the window:
 *  - A's fentry counts kernel-thread invalidations (> 0), all of cause thp;
 *  - B's fentry counts none;
 *  - both probe sets' tracepoint counts the same kernel-thread events (the
 *    tracepoint cannot tell), equal to A's fentry + B's: on kernels where
 *    kvm_mmu_notifier_invalidate_range_start traces kvm_unmap_hva_range
 *    unconditionally (6.1's kvm_main.c), the two count the same calls.
 *
 * Needs fentry on kvm.ko (a host VM with Debian's kernel: the realkvm tier);
 * it fails, naming the probe's reason, where fentry is refused. THP knobs
 * are put back at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "clock.h"
#include "probe-test.h"
#include "qemu-launch.h"
#include "qmp.h"
#include "test-sysctl.h"

#define GUEST_MIB 128
#define THP "/sys/kernel/mm/transparent_hugepage/"
#define KHUGEPAGED THP "khugepaged/"
#define COLLAPSE_TIMEOUT_S 120
#define CONNECT_TIMEOUT_MS 60000

static unsigned long read_ulong(const char *path)
{
	char buf[64] = "";
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK_MSG(fd >= 0, "cannot read %s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	CHECK(n > 0);
	return strtoul(buf, NULL, 10);
}

struct view {
	__u64 tp_kthread;      /* kvm:kvm_unmap_hva_range in kernel threads (any VM) */
	__u64 fentry_kthread;  /* fentry invalidate_range_start, this VM's, in kernel threads */
	__u64 fentry_thp;      /* ... of cause thp */
	__u64 fentry_target;   /* ... in the VM's own threads */
};

static struct view view_of(const struct sb_probe_snapshot *d)
{
	return (struct view){
		.tp_kthread = d->c.count[SB_C_UNMAP_HVA][SB_CTX_KTHREAD].events,
		.fentry_kthread = d->c.count[SB_C_MN_INVALIDATE][SB_CTX_KTHREAD].events,
		.fentry_thp = d->c.cause[SB_ATTR_MN_INVALIDATE][SB_CTX_KTHREAD][SB_CAUSE_THP],
		.fentry_target = d->c.count[SB_C_MN_INVALIDATE][SB_CTX_TARGET].events,
	};
}

static struct sb_probes *probes_fentry(pid_t pid, const char *name)
{
	struct sb_probes *p = probes_start(pid, NULL);
	const struct sb_counter_info *ci = sb_probes_counter(p, SB_C_MN_INVALIDATE);

	CHECK_MSG(ci && ci->available,
		  "%s: fentry on kvm_mmu_notifier_invalidate_range_start is unavailable (%s): this test needs a "
		  "kernel that allows fentry on kvm.ko (the realkvm tier's host VM)",
		  name, ci && ci->probe ? ci->probe->reason : "no such counter");
	return p;
}

/* a RAM block that is not plugged, preallocated: QEMU touches every page of it */
static void add_ram_block(struct qmp_client *c, const char *name)
{
	struct json_object *args = json_object_new_object();
	struct sb_error err = { 0 };
	int r;

	json_object_object_add(args, "qom-type", json_object_new_string("memory-backend-ram"));
	json_object_object_add(args, "id", json_object_new_string("khugepaged-kick"));
	json_object_object_add(args, "size", json_object_new_int64(4 << 20));
	json_object_object_add(args, "prealloc", json_object_new_boolean(true));
	r = qmp_execute(c, "object-add", args, -1, 30000, NULL, &err);
	json_object_put(args);
	CHECK_MSG(r == 0, "%s: object-add memory-backend-ram: %s", name, err.msg);
}

int main(void)
{
	struct sb_probe_snapshot a0, a1, b0, b1, da, db;
	struct qmp_client *ca = NULL, *cb = NULL;
	struct sb_error err = { 0 };
	struct test_qemu a, b;
	struct sb_probes *pa, *pb;
	unsigned long scans0;
	uint64_t deadline;
	struct view va, vb;

	if (geteuid() != 0)
		SKIP_TEST("root (BPF probes, THP knobs)");
	if (access(KHUGEPAGED "pages_to_scan", W_OK) != 0)
		SKIP_TEST("transparent huge pages with khugepaged (CONFIG_TRANSPARENT_HUGEPAGE): %s", strerror(errno));

	/* both fault their memory in 4 KiB pages; khugepaged is stopped meanwhile */
	test_sysctl_set(THP "enabled", "never");
	test_sysctl_set(KHUGEPAGED "scan_sleep_millisecs", "10");
	test_sysctl_set(KHUGEPAGED "alloc_sleep_millisecs", "10");
	test_sysctl_set(KHUGEPAGED "pages_to_scan", "4096");
	test_qemu_start(&a, GUEST_MIB, 1, NULL);
	CHECK_MSG(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0, "PR_SET_THP_DISABLE: %s", strerror(errno));
	test_qemu_start(&b, GUEST_MIB, 1, NULL); /* inherits it: khugepaged skips B's mm */
	CHECK(prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0) == 0);
	test_sysctl_install_signal_handlers();
	/* QMP answers once the machine (and its KVM VM) exists */
	CHECK_MSG(qmp_connect(a.qmp_path, CONNECT_TIMEOUT_MS, NULL, &ca, &err) == 0, "QEMU A: %s", err.msg);
	CHECK_MSG(qmp_connect(b.qmp_path, CONNECT_TIMEOUT_MS, NULL, &cb, &err) == 0, "QEMU B: %s", err.msg);
	pa = probes_fentry(a.pid, "QEMU A");
	pb = probes_fentry(b.pid, "QEMU B");
	sleep(3); /* SeaBIOS runs and idles: its pages are present and young */
	probes_read(pa, &a0);
	probes_read(pb, &b0);

	/*
	 * THP on: khugepaged starts, but it scans only the mms registered with
	 * it, and memory faulted while THP was off registered none (nor, on
	 * 6.1, does a later MADV_HUGEPAGE alone: seen here). A huge page
	 * fault does: a new RAM block, preallocated, faults A's in; B's faults
	 * stay 4 KiB (THP disabled). Then two full scans, or the deadline.
	 */
	scans0 = read_ulong(KHUGEPAGED "full_scans");
	test_sysctl_set(THP "enabled", "always");
	add_ram_block(ca, "QEMU A");
	add_ram_block(cb, "QEMU B");
	deadline = mono_ns() + (uint64_t)COLLAPSE_TIMEOUT_S * NSEC_PER_SEC;
	while (read_ulong(KHUGEPAGED "full_scans") < scans0 + 2 && mono_ns() < deadline)
		usleep(200 * 1000);
	/* khugepaged stopped again before the reads, so both probe sets see the same events */
	test_sysctl_set(THP "enabled", "never");
	sleep(1);
	probes_read(pa, &a1);
	probes_read(pb, &b1);
	printf("khugepaged: %lu full scans, %lu pages collapsed in all\n", read_ulong(KHUGEPAGED "full_scans") - scans0,
	       read_ulong(KHUGEPAGED "pages_collapsed"));
	snap_delta(&a0, &a1, &da);
	snap_delta(&b0, &b1, &db);
	va = view_of(&da);
	vb = view_of(&db);
	printf("QEMU A:                  fentry kernel-thread invalidations %llu (thp %llu), own threads %llu; "
	       "tracepoint kernel-thread %llu\n",
	       (unsigned long long)va.fentry_kthread, (unsigned long long)va.fentry_thp,
	       (unsigned long long)va.fentry_target, (unsigned long long)va.tp_kthread);
	printf("QEMU B (THP disabled):   fentry kernel-thread invalidations %llu (thp %llu), own threads %llu; "
	       "tracepoint kernel-thread %llu\n",
	       (unsigned long long)vb.fentry_kthread, (unsigned long long)vb.fentry_thp,
	       (unsigned long long)vb.fentry_target, (unsigned long long)vb.tp_kthread);

	CHECK_MSG(va.fentry_kthread > 0, "khugepaged collapsed nothing of QEMU A in %d s: the test proved nothing",
		  COLLAPSE_TIMEOUT_S);
	CHECK_MSG(va.fentry_thp == va.fentry_kthread, "QEMU A: %llu of %llu kernel-thread invalidations not of cause thp",
		  (unsigned long long)(va.fentry_kthread - va.fentry_thp), (unsigned long long)va.fentry_kthread);
	CHECK_MSG(vb.fentry_kthread == 0, "QEMU B's probes counted %llu kernel-thread invalidations: none was of its VM",
		  (unsigned long long)vb.fentry_kthread);
	/* the tracepoint cannot tell: both see every kernel thread's invalidation */
	CHECK_MSG(va.tp_kthread == vb.tp_kthread, "the tracepoint's kernel-thread counts differ: %llu vs %llu",
		  (unsigned long long)va.tp_kthread, (unsigned long long)vb.tp_kthread);
	CHECK_MSG(va.tp_kthread == va.fentry_kthread + vb.fentry_kthread,
		  "tracepoint kernel-thread invalidations %llu != fentry A %llu + fentry B %llu",
		  (unsigned long long)va.tp_kthread, (unsigned long long)va.fentry_kthread,
		  (unsigned long long)vb.fentry_kthread);

	sb_probes_close(pa);
	sb_probes_close(pb);
	qmp_client_free(ca);
	qmp_client_free(cb);
	test_qemu_stop(&b);
	test_qemu_stop(&a);
	CHECK_MSG(test_sysctl_restore(), "the THP knobs were not all put back");
	printf("ok\n");
	return 0;
}
