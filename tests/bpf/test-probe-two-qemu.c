// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Two QEMUs at once, each with its own probes attached: a background
 * snapshot of one must not leak into the other's target counts. It shows
 * up in the other's "other" context instead (events in another process),
 * which is how the filter is seen to work rather than to count nothing:
 * one probe set counts other processes (option count_other), the other
 * does not (the default) and must count none of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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
#define GUEST_MIB 256

struct vm {
	struct test_qemu q;
	struct qmp_client *c;
	struct sb_probes *p;
	const char *name;
};

static void snapshot(struct vm *v, struct qmp_migration_info *mi)
{
	struct sb_error err = { 0 };
	char path[256];
	int fd;

	fd = open(test_qemu_path(&v->q, "snapshot.bin", path, sizeof(path)), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		  0600);
	CHECK(fd >= 0);
	CHECK_MSG(qmp_snapshot_background_start(v->c, fd, &err) == 0, "%s: %s", v->name, err.msg);
	close(fd);
	CHECK_MSG(qmp_wait_migration(v->c, QMP_MIGRATION_COMPLETED, SNAPSHOT_TIMEOUT_MS, NULL, &err) == 0, "%s: %s",
		  v->name, err.msg);
	CHECK_MSG(qmp_query_migrate(v->c, mi, &err) == 0, "%s", err.msg);
}

/*
 * Snapshot `snap` while both are probed; check both views. again: snap was
 * snapshotted before, and a second snapshot write-protects fewer ranges than
 * it writes pages (those still untouched since the first).
 */
static void round_trip(struct vm *snap, struct vm *idle, bool again)
{
	struct sb_probe_snapshot a0, a1, b0, b1, ds, di;
	struct qmp_migration_info mi = { 0 };
	__u64 pages;

	probes_read(snap->p, &a0);
	probes_read(idle->p, &b0);
	snapshot(snap, &mi);
	probes_read(snap->p, &a1);
	probes_read(idle->p, &b1);
	snap_delta(&a0, &a1, &ds);
	snap_delta(&b0, &b1, &di);
	pages = (__u64)(mi.ram_normal + mi.ram_duplicate);
	printf("snapshot of %s (%llu pages): %s sees %llu in its target, %s sees %llu in its target and %llu in "
	       "other processes\n",
	       snap->name, (unsigned long long)pages, snap->name,
	       (unsigned long long)ds.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events, idle->name,
	       (unsigned long long)di.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events,
	       (unsigned long long)di.c.count[SB_C_UNMAP_HVA][SB_CTX_OTHER].events);
	CHECK(ds.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events >= (again ? pages / 2 : pages));
	CHECK(ds.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_UFFD_WP] >= (again ? pages / 2 : pages));
	/* the idle QEMU's own target counts see none of it */
	CHECK_MSG(di.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_UFFD_WP] == 0,
		  "%s counted %llu uffd-wp invalidations of %s", idle->name,
		  (unsigned long long)di.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_UFFD_WP], snap->name);
	CHECK(di.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events * 100 < pages);
	/* ... and sees it as another process's, where it counts them; the default leaves at the task check */
	if (sb_probes_counts_other(idle->p))
		CHECK(di.c.count[SB_C_UNMAP_HVA][SB_CTX_OTHER].events >= (again ? pages / 2 : pages));
	else
		CHECK_MSG(di.c.count[SB_C_UNMAP_HVA][SB_CTX_OTHER].events == 0,
			  "%s counts no other process's events, yet counted %llu", idle->name,
			  (unsigned long long)di.c.count[SB_C_UNMAP_HVA][SB_CTX_OTHER].events);
	qmp_migration_info_clear(&mi);
}

int main(void)
{
	struct vm a = { .name = "QEMU A" }, b = { .name = "QEMU B" };
	struct sb_error err = { 0 };

	if (geteuid() != 0)
		SKIP_TEST("root (BPF probes)");
	test_qemu_start(&a.q, GUEST_MIB, 1, NULL);
	test_qemu_start(&b.q, GUEST_MIB, 1, NULL);
	CHECK_MSG(qmp_connect(a.q.qmp_path, CONNECT_TIMEOUT_MS, NULL, &a.c, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_connect(b.q.qmp_path, CONNECT_TIMEOUT_MS, NULL, &b.c, &err) == 0, "%s", err.msg);
	struct sb_probe_options other;

	sb_probe_options_init(&other);
	other.count_other = true;
	a.p = probes_start(a.q.pid, &other);
	b.p = probes_start(b.q.pid, NULL);
	CHECK(sb_probes_counts_other(a.p) && !sb_probes_counts_other(b.p));
	sleep(1);

	round_trip(&b, &a, false);
	round_trip(&a, &b, false);

	/* one load serves the next process (the run engine's next repetition): swap the targets */
	CHECK_MSG(sb_probes_retarget(a.p, b.q.pid, &err) == 0, "%s", err.msg);
	CHECK_MSG(sb_probes_retarget(b.p, a.q.pid, &err) == 0, "%s", err.msg);
	struct sb_probes *t = a.p;
	a.p = b.p;
	b.p = t;
	CHECK(sb_probes_target(a.p) == a.q.pid && sb_probes_target(b.p) == b.q.pid);
	round_trip(&b, &a, true);
	round_trip(&a, &b, true);
	/* a process without a KVM VM is refused, and the target stays */
	CHECK(sb_probes_retarget(a.p, getpid(), &err) == -ENODEV && sb_probes_target(a.p) == a.q.pid);
	printf("retargeted probes count the new target's events alone; a process without a VM refused: %s\n", err.msg);

	sb_probes_close(a.p);
	sb_probes_close(b.p);
	qmp_client_free(a.c);
	qmp_client_free(b.c);
	test_qemu_stop(&a.q);
	test_qemu_stop(&b.q);
	printf("ok\n");
	return 0;
}
