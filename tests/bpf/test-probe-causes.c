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
 * A second probe set with the decision cache off (option decision_cache)
 * and pt_regs read by the helper (option kfuncs off) watches the same
 * events: per phase, its target counts per cause, its pages per cause and
 * its syscall decisions must equal the first set's, which must have reused
 * its decisions over a run of the same syscall (both sets must have
 * loaded the same probes); where the kernel has
 * bpf_rdonly_cast the first set reads pt_regs without the helper, and
 * every event's pt_regs (each one's stack is sampled here) must be the
 * helper's.
 *
 * Two more sets load kvm_unmap_hva_range's programs made for one set of
 * options (bpf/probes.bpf.c): the shipped defaults ("d", causes) and
 * counting only ("c"). Per phase the first must count the same target
 * events, pages, causes and pages per cause as the set that decides every
 * event, the second the same target events and pages, with
 * kvm_unmap_hva_range's program alone (no fentry on range_start).
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
#include <sys/utsname.h>
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

static struct sb_probes *probes, *per_event, *defaults, *counting;
static struct self_vm vm;
static struct sb_probe_snapshot before, before_per_event, before_defaults, before_counting;

static void phase_begin(void)
{
	probes_read(probes, &before);
	probes_read(per_event, &before_per_event);
	probes_read(defaults, &before_defaults);
	probes_read(counting, &before_counting);
}

/* The phase seen by the sets of the variant programs against e, the per-event set's. */
static void same_variants(const char *name, const struct sb_probe_snapshot *e)
{
	struct sb_probe_snapshot after, d, c;
	const struct sb_count *we = &e->c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET];

	probes_read(defaults, &after);
	snap_delta(&before_defaults, &after, &d);
	probes_read(counting, &after);
	snap_delta(&before_counting, &after, &c);
	for (int i = 0; i < 2; i++) {
		const struct sb_count *g = &(i ? &c : &d)->c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET];

		CHECK_MSG(g->events == we->events && g->pages == we->pages,
			  "%s: the %s set counted %llu events, %llu pages; per event %llu, %llu", name,
			  i ? "counting" : "defaults", (unsigned long long)g->events, (unsigned long long)g->pages,
			  (unsigned long long)we->events, (unsigned long long)we->pages);
	}
	for (int a = 0; a < SB_ATTR_MAX; a++)
		for (int k = 0; k < SB_CAUSE_MAX; k++)
			CHECK_MSG(d.c.cause[a][SB_CTX_TARGET][k] == e->c.cause[a][SB_CTX_TARGET][k],
				  "%s: %s %s: defaults %llu, per event %llu", name, sb_attr_name(a), sb_cause_name(k),
				  (unsigned long long)d.c.cause[a][SB_CTX_TARGET][k],
				  (unsigned long long)e->c.cause[a][SB_CTX_TARGET][k]);
	for (int k = 0; k < SB_CAUSE_MAX; k++)
		CHECK_MSG(d.c.cause_pages[SB_CTX_TARGET][k] == e->c.cause_pages[SB_CTX_TARGET][k],
			  "%s: pages of %s: defaults %llu, per event %llu", name, sb_cause_name(k),
			  (unsigned long long)d.c.cause_pages[SB_CTX_TARGET][k],
			  (unsigned long long)e->c.cause_pages[SB_CTX_TARGET][k]);
}

/*
 * The phase seen by the probes that decide every event: the same target
 * counts per cause, pages per cause and syscall decisions as d, and none of
 * them cached; d's syscall decisions all cached.
 */
static void same_per_event(const char *name, const struct sb_probe_snapshot *d)
{
	struct sb_probe_snapshot after, e;

	probes_read(per_event, &after);
	snap_delta(&before_per_event, &after, &e);
	for (int a = 0; a < SB_ATTR_MAX; a++) {
		for (int k = 0; k < SB_CAUSE_MAX; k++)
			CHECK_MSG(d->c.cause[a][SB_CTX_TARGET][k] == e.c.cause[a][SB_CTX_TARGET][k],
				  "%s: %s %s: cached %llu, per event %llu", name, sb_attr_name(a), sb_cause_name(k),
				  (unsigned long long)d->c.cause[a][SB_CTX_TARGET][k],
				  (unsigned long long)e.c.cause[a][SB_CTX_TARGET][k]);
		CHECK_MSG(d->c.how[a][SB_HOW_SYSCALL] == e.c.how[a][SB_HOW_SYSCALL],
			  "%s: %s decided by syscall: cached %llu, per event %llu", name, sb_attr_name(a),
			  (unsigned long long)d->c.how[a][SB_HOW_SYSCALL], (unsigned long long)e.c.how[a][SB_HOW_SYSCALL]);
		CHECK_MSG(d->c.reused[a] <= d->c.how[a][SB_HOW_SYSCALL], "%s: %s: %llu of %llu syscall decisions reused",
			  name, sb_attr_name(a), (unsigned long long)d->c.reused[a],
			  (unsigned long long)d->c.how[a][SB_HOW_SYSCALL]);
		CHECK(e.c.reused[a] == 0);
	}
	for (int k = 0; k < SB_CAUSE_MAX; k++)
		CHECK_MSG(d->c.cause_pages[SB_CTX_TARGET][k] == e.c.cause_pages[SB_CTX_TARGET][k],
			  "%s: pages of %s: cached %llu, per event %llu", name, sb_cause_name(k),
			  (unsigned long long)d->c.cause_pages[SB_CTX_TARGET][k],
			  (unsigned long long)e.c.cause_pages[SB_CTX_TARGET][k]);
	same_variants(name, &e);
}

/*
 * All of the phase's target-context invalidations have cause `cause`,
 * decided by `how`; at least min of them, and at least min_reused syscall
 * decisions reused (a run of the same syscall: all but the first per CPU).
 * Returns the count.
 */
static __u64 phase_end(const char *name, enum sb_cause cause, enum sb_how how, __u64 min, __u64 min_reused)
{
	struct sb_probe_snapshot after, d;
	__u64 events, classified;

	probes_read(probes, &after);
	snap_delta(&before, &after, &d);
	events = d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events;
	classified = cause_sum(&d, SB_ATTR_UNMAP, SB_CTX_TARGET);
	printf("%-22s %6llu invalidations, %6llu %s, decided by syscall %llu (%llu reused) stack %llu\n", name,
	       (unsigned long long)events, (unsigned long long)d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][cause],
	       sb_cause_name(cause), (unsigned long long)d.c.how[SB_ATTR_UNMAP][SB_HOW_SYSCALL],
	       (unsigned long long)d.c.reused[SB_ATTR_UNMAP], (unsigned long long)d.c.how[SB_ATTR_UNMAP][SB_HOW_STACK]);
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
	CHECK_MSG(d.c.reused[SB_ATTR_UNMAP] >= min_reused, "%s: %llu syscall decisions reused, expected at least %llu",
		  name, (unsigned long long)d.c.reused[SB_ATTR_UNMAP], (unsigned long long)min_reused);
	same_per_event(name, &d);
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
	phase_end("mprotect", SB_CAUSE_MPROTECT, SB_HOW_SYSCALL, 100, 100);
	CHECK(stack_has_frame(probes, SB_ATTR_UNMAP, SB_CAUSE_MPROTECT, true, "do_mprotect_pkey"));
}

static void phase_madvise_dontneed(void)
{
	phase_begin();
	for (int i = 0; i < 40; i++) {
		vm.mem[PAGE * 20] = 1;
		CHECK(madvise(vm.mem + PAGE * 20, PAGE, MADV_DONTNEED) == 0);
	}
	phase_end("madvise(DONTNEED)", SB_CAUSE_MUNMAP_MADVISE, SB_HOW_SYSCALL, 40, 30);
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
	phase_end("munmap/mremap", SB_CAUSE_MUNMAP_MADVISE, SB_HOW_SYSCALL, 10, 0);
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
	n = phase_end("uffd-wp (ioctl)", SB_CAUSE_UFFD_WP, SB_HOW_SYSCALL, 65, 60);
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
	phase_end("uffd release (task_work)", SB_CAUSE_UFFD_WP, SB_HOW_STACK, 1, 0);
	CHECK(stack_has_frame(probes, SB_ATTR_UNMAP, SB_CAUSE_UFFD_WP, false, "userfaultfd_release"));
}

static void phase_collapse(void)
{
	struct sb_probe_snapshot now;
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
	probes_read(probes, &now);
	if (now.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events == before.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events) {
		/* khugepaged (a kernel thread) collapsed the range after MADV_HUGEPAGE, before the test could */
		printf("madvise(COLLAPSE) found the range collapsed already: thp phase not checked\n");
		munmap(raw, 2 * HUGE_2M);
		return;
	}
	phase_end("madvise(COLLAPSE)", SB_CAUSE_THP, SB_HOW_SYSCALL, 1, 0);
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
	same_per_event("other process", &d);
}

/* The name of p's kvm_unmap_hva_range program. */
static void unmap_prog_name(struct sb_probes *p, char *name, size_t size)
{
	struct sb_prog_stats *st = NULL;
	struct sb_error err = { 0 };
	size_t n = 0;

	name[0] = '\0';
	CHECK_MSG(sb_probes_prog_stats(p, &st, &n, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		if (strstr(st[i].name, "kvm_unmap_hva_range"))
			snprintf(name, size, "%s", st[i].name);
	free(st);
	CHECK(name[0]);
}

/*
 * Kernels since 6.2 have bpf_rdonly_cast: there the first set's
 * invalidation program is its "k" one, and none of the events whose stack
 * it sampled (all, here) read another pt_regs than bpf_task_pt_regs()'s.
 */
static void check_kfuncs(void)
{
	struct sb_prog_stats *st = NULL;
	struct sb_probe_snapshot s;
	struct sb_error err = { 0 };
	struct utsname u;
	const char *name = NULL;
	int major = 0, minor = 0;
	bool expect;
	size_t n = 0;

	CHECK(uname(&u) == 0);
	CHECK(sscanf(u.release, "%d.%d", &major, &minor) == 2);
	expect = major > 6 || (major == 6 && minor >= 2);
	CHECK_MSG(sb_probes_kfuncs(probes) == expect, "kernel %s: the loader says it %s bpf_rdonly_cast", u.release,
		  sb_probes_kfuncs(probes) ? "has" : "lacks");
	CHECK_MSG(sb_probes_prog_stats(probes, &st, &n, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		if (strstr(st[i].name, "kvm_unmap_hva_range"))
			name = st[i].name;
	CHECK(name);
	printf("kernel %s: the invalidation program is %s\n", u.release, name);
	if (!strncmp(name, "tpbtf", 5))
		CHECK_MSG(!strncmp(name, "tpbtfk_", 7) == expect, "%s on kernel %s", name, u.release);
	free(st);
	probes_read(probes, &s);
	CHECK_MSG(s.c.regs_mismatch == 0, "%llu events read another pt_regs than bpf_task_pt_regs()'s",
		  (unsigned long long)s.c.regs_mismatch);
}

static void cleanup(void)
{
	sb_probes_close(probes);
	sb_probes_close(per_event);
	sb_probes_close(defaults);
	sb_probes_close(counting);
	probes = per_event = defaults = counting = NULL;
	self_vm_destroy(&vm);
}

int main(int argc, char **argv)
{
	struct sb_probe_options o;

	CHECK_MSG(argc == 2, "usage: test-probe-causes PATH-TO-VM-CHURN");
	self_vm_create(&vm, 4 * HUGE_2M);
	sb_probe_options_init(&o);
	o.stack_sample_every = 1; /* record every stack: the checks look for frames */
	o.count_other = true;     /* the other process's events are checked too */
	probes = probes_start(getpid(), &o);
	o.decision_cache = false;
	o.kfuncs = false;
	per_event = probes_start(getpid(), &o);
	sb_probe_options_init(&o);
	defaults = probes_start(getpid(), &o);
	o.attribution = false;
	counting = probes_start(getpid(), &o);
	for (int i = 0; i < 2; i++) {
		const struct sb_counter_info *ci = sb_probes_counter(i ? per_event : probes, SB_C_UNMAP_HVA);

		printf("%s: unmap_hva %s (%s)\n", i ? "per event" : "cached", ci->available ? "available" : "unavailable",
		       ci->probe->reason);
		CHECK(ci->available);
	}
	/* the same probes in both sets: a program one of them failed to load would make its comparison vacuous */
	check_same_probes(probes, per_event, "decision cache and kfuncs off");
	check_same_probes(probes, defaults, "the default options");
	check_same_probes(probes, counting, "counting only");
	/* counting only runs one program per invalidation: the fentry on range_start serves the attribution alone */
	CHECK_MSG(!sb_probes_counter(counting, SB_C_MN_INVALIDATE)->available, "counting only loaded %s",
		  sb_probes_counter(counting, SB_C_MN_INVALIDATE)->probe->name);
	/* where the invalidation is traced by tp_btf, the two sets run the programs made for their options */
	for (int i = 0; i < 2; i++) {
		char name[128];

		unmap_prog_name(i ? counting : defaults, name, sizeof(name));
		printf("%s: the invalidation program is %s\n", i ? "counting" : "defaults", name);
		if (!strncmp(name, "tpbtf", 5))
			CHECK_MSG(!strncmp(name, i ? "tpbtfc" : "tpbtfd", 6), "%s set: %s", i ? "counting" : "defaults",
				  name);
	}
	/* where the kernel has the kfunc, every "k" program loaded: a fallback to the plain one would go unseen */
	for (size_t i = 0; sb_probes_kfuncs(probes) && i < sb_probes_probe_count(probes); i++) {
		const struct sb_probe_info *pi = sb_probes_probe(probes, i);

		CHECK_MSG(!strstr(pi->reason, "without a helper call failed to load"), "%s: %s", pi->name, pi->reason);
	}
	atexit(cleanup);

	phase_mprotect();
	phase_madvise_dontneed();
	phase_munmap_mremap();
	phase_uffd_wp();
	phase_uffd_release();
	phase_collapse();
	phase_other_process(argv[1]);
	check_kfuncs();
	printf("ok\n");
	return 0;
}
