// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The classifier, exactly, on invalidations this test makes itself: the
 * test process holds a KVM VM (selfvm.h), attaches the probes to itself and
 * then runs one kind of operation per phase. Every kvm_unmap_hva_range
 * event of a phase must be counted in the target context and classified
 * into that phase's cause, decided the way the phase expects (syscall
 * context, or a stack walk for work done in task_work). Another process
 * with its own VM (vm-churn) must count as "other", never as the target.
 *
 * Usage: test-probe-causes PATH-TO-VM-CHURN
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe-test.h"
#include "selfvm.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define PAGE 4096ul
#define HUGE_2M (2ul << 20)

extern char **environ;

static struct sb_probes *probes;
static struct self_vm vm;
static struct sb_probe_snapshot before;

static void phase_begin(void)
{
	probes_read(probes, &before);
}

/*
 * All of the phase's target-context invalidations have cause `cause`,
 * decided by `how`; at least min of them. Returns the count.
 */
static __u64 phase_end(const char *name, enum sb_cause cause, enum sb_how how, __u64 min)
{
	struct sb_probe_snapshot after, d;
	__u64 events, classified;

	probes_read(probes, &after);
	snap_delta(&before, &after, &d);
	events = d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events;
	classified = cause_sum(&d, SB_ATTR_UNMAP, SB_CTX_TARGET);
	printf("%-22s %6llu invalidations, %6llu %s, decided by syscall %llu stack %llu\n", name,
	       (unsigned long long)events, (unsigned long long)d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][cause],
	       sb_cause_name(cause), (unsigned long long)d.c.how[SB_ATTR_UNMAP][SB_HOW_SYSCALL],
	       (unsigned long long)d.c.how[SB_ATTR_UNMAP][SB_HOW_STACK]);
	CHECK_MSG(events >= min, "%s: %llu invalidations, expected at least %llu", name,
		  (unsigned long long)events, (unsigned long long)min);
	CHECK_MSG(classified == events, "%s: %llu of %llu events classified", name, (unsigned long long)classified,
		  (unsigned long long)events);
	CHECK_MSG(d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][cause] == events,
		  "%s: only %llu of %llu invalidations classified as %s", name,
		  (unsigned long long)d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][cause], (unsigned long long)events,
		  sb_cause_name(cause));
	CHECK_MSG(d.c.how[SB_ATTR_UNMAP][how] == events, "%s: %llu of %llu decided the expected way", name,
		  (unsigned long long)d.c.how[SB_ATTR_UNMAP][how], (unsigned long long)events);
	return events;
}

static void phase_mprotect(void)
{
	phase_begin();
	for (int i = 0; i < 50; i++) {
		CHECK(mprotect(vm.mem, 16 * PAGE, PROT_READ) == 0);
		CHECK(mprotect(vm.mem, 16 * PAGE, PROT_READ | PROT_WRITE) == 0);
		vm.mem[0]++;
	}
	phase_end("mprotect", SB_CAUSE_MPROTECT, SB_HOW_SYSCALL, 100);
	CHECK(stack_has_frame(probes, SB_ATTR_UNMAP, SB_CAUSE_MPROTECT, true, "do_mprotect_pkey"));
}

static void phase_madvise_dontneed(void)
{
	phase_begin();
	for (int i = 0; i < 40; i++) {
		vm.mem[PAGE * 20] = 1;
		CHECK(madvise(vm.mem + PAGE * 20, PAGE, MADV_DONTNEED) == 0);
	}
	phase_end("madvise(DONTNEED)", SB_CAUSE_MUNMAP_MADVISE, SB_HOW_SYSCALL, 40);
}

static void phase_munmap_mremap(void)
{
	char *a, *b;

	phase_begin();
	for (int i = 0; i < 10; i++) {
		a = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(a != MAP_FAILED);
		memset(a, 1, 16 * PAGE);
		b = mremap(a, 16 * PAGE, 32 * PAGE, MREMAP_MAYMOVE);
		CHECK(b != MAP_FAILED);
		CHECK(munmap(b, 32 * PAGE) == 0);
	}
	phase_end("munmap/mremap", SB_CAUSE_MUNMAP_MADVISE, SB_HOW_SYSCALL, 10);
}

static int uffd_open_wp(char *addr, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .range = { (unsigned long)addr, len }, .mode = UFFDIO_REGISTER_MODE_WP };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		SKIP_TEST("userfaultfd (%s)", strerror(errno));
	CHECK_MSG(ioctl(fd, UFFDIO_API, &api) == 0, "UFFDIO_API: %s", strerror(errno));
	if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0)
		SKIP_TEST("userfaultfd write-protect on anonymous memory (%s)", strerror(errno));
	return fd;
}

static void uffd_wp(int fd, char *addr, size_t len, bool on)
{
	struct uffdio_writeprotect wp = { .range = { (unsigned long)addr, len },
					  .mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0 };

	CHECK_MSG(ioctl(fd, UFFDIO_WRITEPROTECT, &wp) == 0, "UFFDIO_WRITEPROTECT: %s", strerror(errno));
}

/* What a background snapshot does: write-protect, then unprotect page by page. */
static void phase_uffd_wp(void)
{
	char *r = vm.mem + HUGE_2M;
	struct uffdio_range unreg = { (unsigned long)r, HUGE_2M / 2 };
	int fd = uffd_open_wp(r, HUGE_2M / 2);
	__u64 n;

	phase_begin();
	uffd_wp(fd, r, HUGE_2M / 2, true);
	for (size_t off = 0; off < 64 * PAGE; off += PAGE)
		uffd_wp(fd, r + off, PAGE, false);
	CHECK(ioctl(fd, UFFDIO_UNREGISTER, &unreg) == 0);
	n = phase_end("uffd-wp (ioctl)", SB_CAUSE_UFFD_WP, SB_HOW_SYSCALL, 65);
	close(fd);
	(void)n;
}

/*
 * close() of a still-registered userfaultfd: the file's release runs as
 * task_work on the way back to user space, after the syscall returned, and
 * drops the write protection. Only a stack walk (userfaultfd_release) can
 * tell its cause.
 */
static void phase_uffd_release(void)
{
	char *r = vm.mem + HUGE_2M + HUGE_2M / 2;
	int fd = uffd_open_wp(r, HUGE_2M / 2);

	uffd_wp(fd, r, HUGE_2M / 2, true);
	phase_begin();
	close(fd);
	phase_end("uffd release (task_work)", SB_CAUSE_UFFD_WP, SB_HOW_STACK, 1);
	CHECK(stack_has_frame(probes, SB_ATTR_UNMAP, SB_CAUSE_UFFD_WP, false, "userfaultfd_release"));
}

static void phase_collapse(void)
{
	char *raw = mmap(NULL, 2 * HUGE_2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a = (char *)(((unsigned long)raw + HUGE_2M - 1) & ~(HUGE_2M - 1));

	CHECK(raw != MAP_FAILED);
	CHECK(madvise(a, HUGE_2M, MADV_NOHUGEPAGE) == 0);
	memset(a, 3, HUGE_2M); /* small pages */
	CHECK(madvise(a, HUGE_2M, MADV_HUGEPAGE) == 0);
	phase_begin();
	if (madvise(a, HUGE_2M, MADV_COLLAPSE) < 0) {
		printf("MADV_COLLAPSE: %s: thp phase not checked\n", strerror(errno));
		munmap(raw, 2 * HUGE_2M);
		return;
	}
	phase_end("madvise(COLLAPSE)", SB_CAUSE_THP, SB_HOW_SYSCALL, 1);
	CHECK(munmap(raw, 2 * HUGE_2M) == 0);
}

/* Another process with its own VM: "other", never the target. */
static void phase_other_process(const char *churn)
{
	char *argv[] = { (char *)churn, "mprotect", "100", NULL };
	struct sb_probe_snapshot after, d;
	pid_t child;
	int status;

	phase_begin();
	CHECK_MSG(posix_spawn(&child, churn, NULL, NULL, argv, environ) == 0, "cannot run %s", churn);
	CHECK(waitpid(child, &status, 0) == child);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed: status %d", churn, status);
	probes_read(probes, &after);
	snap_delta(&before, &after, &d);
	printf("%-22s %6llu invalidations in another process, %llu in the target\n", "other process",
	       (unsigned long long)d.c.count[SB_C_UNMAP_HVA][SB_CTX_OTHER].events,
	       (unsigned long long)d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events);
	CHECK(d.c.count[SB_C_UNMAP_HVA][SB_CTX_OTHER].events >= 200);
	/* the child's 200 mprotects never count for the target; posix_spawn's own
	 * child stack is unmapped in the target (munmap) */
	CHECK(d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_MPROTECT] == 0);
	CHECK(d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events ==
	      d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_MUNMAP_MADVISE]);
	CHECK(d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events <= 2);
}

static void cleanup(void)
{
	sb_probes_close(probes);
	probes = NULL;
	self_vm_destroy(&vm);
}

int main(int argc, char **argv)
{
	struct sb_probe_options o;

	CHECK_MSG(argc == 2, "usage: test-probe-causes PATH-TO-VM-CHURN");
	self_vm_create(&vm, 4 * HUGE_2M);
	sb_probe_options_init(&o);
	o.stack_sample_every = 1; /* record every stack: the checks look for frames */
	probes = probes_start(getpid(), &o);
	atexit(cleanup);

	phase_mprotect();
	phase_madvise_dontneed();
	phase_munmap_mremap();
	phase_uffd_wp();
	phase_uffd_release();
	phase_collapse();
	phase_other_process(argv[1]);
	printf("ok\n");
	return 0;
}
