// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Backends and their fallbacks, on this kernel:
 *  - each tracepoint backend alone (tp_btf, raw_tp, classic tracepoint)
 *    feeds every tracepoint counter and counts the same invalidations with
 *    the same causes, and loads the same probes in every combination of
 *    the options that change the programs' code;
 *  - a tracepoint that does not exist (the test-only option) leaves its
 *    counter unavailable, with a message naming every backend tried, while
 *    the others work;
 *  - a disallowed backend falls back to the next one and says so;
 *  - a probe its option leaves off is unavailable and names the option;
 *  - fentry is available or says why not, and the MMU-notifier pair is
 *    available only where its programs run (the loader's self-test);
 *  - bad targets and options fail with messages naming the input.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe-test.h"
#include "selfvm.h"

#define PAGE 4096ul

static struct self_vm vm;

/* 30 mprotect pairs; returns the target's invalidations, all checked to be mprotect. */
static __u64 mprotect_round(struct sb_probes *p)
{
	struct sb_probe_snapshot a, b, d;
	__u64 n;

	probes_read(p, &a);
	for (int i = 0; i < 30; i++) {
		CHECK(mprotect(vm.mem, 16 * PAGE, PROT_READ) == 0);
		CHECK(mprotect(vm.mem, 16 * PAGE, PROT_READ | PROT_WRITE) == 0);
		vm.mem[0]++;
	}
	probes_read(p, &b);
	snap_delta(&a, &b, &d);
	n = d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events;
	CHECK(n >= 60);
	CHECK(d.c.cause[SB_ATTR_UNMAP][SB_CTX_TARGET][SB_CAUSE_MPROTECT] == n);
	CHECK(d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].pages >= n * 16);
	return n;
}

static void one_backend(enum sb_backend b, __u64 *events)
{
	struct sb_probe_options o;
	struct sb_probes *p;

	sb_probe_options_init(&o);
	o.backends = SB_BACKEND_BIT(b);
	o.emulation_counter = true; /* every tracepoint, the opt-in one too */
	o.zap_causes = true;
	p = probes_start(getpid(), &o);
	for (size_t i = 0; i < sb_probes_probe_count(p); i++) {
		const struct sb_probe_info *pi = sb_probes_probe(p, i);

		if (!strncmp(pi->name, "fentry:", 7)) {
			CHECK(!pi->available);
			CHECK_MSG(strstr(pi->reason, "fentry: not allowed"), "%s", pi->reason);
			continue;
		}
		/* kvm, kvmmmu, tlb and migrate tracepoints all exist on x86 KVM hosts */
		CHECK_MSG(pi->available && pi->backend == b, "%s with only %s allowed: %s %s", pi->name,
			  sb_backend_name(b), sb_backend_name(pi->backend), pi->reason);
	}
	CHECK(sb_probes_counter(p, SB_C_UNMAP_HVA)->available);
	CHECK(sb_probes_counter(p, SB_C_TLB_SEND_IPI)->available);
	*events = mprotect_round(p);
	printf("%-10s: %llu invalidations, all mprotect\n", sb_backend_name(b), (unsigned long long)*events);
	sb_probes_close(p);
}

/*
 * Every combination of the options that change the programs' code
 * (attribution, the decision cache, kfuncs, stack sampling) loads the same
 * probes with the same backends as the defaults, with backend b for the
 * tracepoints: a program the verifier refuses in one combination only (6.1
 * refused tlb_flush's with the decision cache off) would leave its counters
 * unavailable in just the runs that ask for it.
 */
static void option_combinations(enum sb_backend b)
{
	static const struct {
		bool attribution, decision_cache, kfuncs;
		unsigned int sample_every;
	} combos[] = {
		{ false, true, true, SB_PROBE_DEFAULT_SAMPLE_EVERY },
		{ true, false, true, SB_PROBE_DEFAULT_SAMPLE_EVERY },
		{ true, true, false, SB_PROBE_DEFAULT_SAMPLE_EVERY },
		{ true, false, false, SB_PROBE_DEFAULT_SAMPLE_EVERY },
		{ true, true, true, 0 },
		{ true, true, true, 1 },
		{ true, true, true, 1000 }, /* not a power of two: the countdown */
	};
	struct sb_probe_options o;
	struct sb_probes *ref;
	size_t loaded = 0;

	sb_probe_options_init(&o);
	o.backends = SB_BACKEND_BIT(b) | SB_BACKEND_BIT(SB_BACKEND_FENTRY);
	o.emulation_counter = true;
	o.zap_causes = true;
	ref = probes_start(getpid(), &o);
	for (size_t i = 0; i < sb_probes_probe_count(ref); i++)
		loaded += sb_probes_probe(ref, i)->available;
	for (size_t k = 0; k < ARRAY_SIZE(combos); k++) {
		struct sb_probe_options c = o;
		struct sb_probes *p;
		char what[128];

		c.attribution = combos[k].attribution;
		c.decision_cache = combos[k].decision_cache;
		c.kfuncs = combos[k].kfuncs;
		c.stack_sample_every = combos[k].sample_every;
		snprintf(what, sizeof(what), "attribution %d, decision cache %d, kfuncs %d, 1 stack in %u",
			 c.attribution, c.decision_cache, c.kfuncs, c.stack_sample_every);
		p = probes_start(getpid(), &c);
		check_same_probes(ref, p, what);
		sb_probes_close(p);
	}
	printf("%-10s: the same %zu of %zu probes load in each of %zu option combinations\n", sb_backend_name(b),
	       loaded, sb_probes_probe_count(ref), ARRAY_SIZE(combos));
	sb_probes_close(ref);
}

static void missing_tracepoint(void)
{
	struct sb_probe_options o;
	const struct sb_counter_info *ci;
	struct sb_probes *p;

	sb_probe_options_init(&o);
	o.test_tracepoint = "kvm:kvm_no_such_tracepoint";
	o.test_counter = SB_C_AGE_HVA;
	p = probes_start(getpid(), &o);
	ci = sb_probes_counter(p, SB_C_AGE_HVA);
	printf("missing tracepoint: %s: %s\n", ci->probe->name, ci->probe->reason);
	CHECK(!ci->available && ci->probe->backend == SB_BACKEND_NONE);
	CHECK(!strcmp(ci->probe->name, "kvm:kvm_no_such_tracepoint"));
	CHECK(strstr(ci->probe->reason, "tp_btf: the kernel's BTF has no btf_trace_kvm_no_such_tracepoint"));
	CHECK(strstr(ci->probe->reason, "raw_tp: the kernel has no raw tracepoint kvm_no_such_tracepoint"));
	CHECK(strstr(ci->probe->reason, "tracepoint: no tracefs event kvm:kvm_no_such_tracepoint"));
	/* everything else still works */
	CHECK(sb_probes_counter(p, SB_C_UNMAP_HVA)->available);
	CHECK(sb_probes_counter(p, SB_C_TEST_AGE_HVA)->available);
	mprotect_round(p);
	sb_probes_close(p);
}

static void fallback_when_disallowed(void)
{
	struct sb_probe_options o;
	const struct sb_counter_info *ci;
	struct sb_probes *p;

	sb_probe_options_init(&o);
	o.backends = SB_BACKENDS_ALL & ~SB_BACKEND_BIT(SB_BACKEND_TP_BTF);
	p = probes_start(getpid(), &o);
	ci = sb_probes_counter(p, SB_C_UNMAP_HVA);
	CHECK(ci->available && ci->probe->backend == SB_BACKEND_RAW_TP);
	CHECK_MSG(strstr(ci->probe->reason, "tp_btf: not allowed by the backend option"), "%s", ci->probe->reason);
	sb_probes_close(p);
}

/* Hot probes that an option leaves off are unavailable, saying which option turns them on. */
static void gated_off(void)
{
	struct sb_probe_options o;
	const struct sb_counter_info *ci;
	struct sb_probes *p;

	p = probes_start(getpid(), NULL); /* defaults: exit counters on, emulation off */
	CHECK(sb_probes_counter(p, SB_C_KVM_EXIT)->available);
	CHECK(sb_probes_counter(p, SB_C_INJ_VIRQ)->available);
	ci = sb_probes_counter(p, SB_C_EMULATE_INSN);
	CHECK(!ci->available && ci->probe->backend == SB_BACKEND_NONE);
	CHECK_MSG(strstr(ci->probe->reason, "off:") && strstr(ci->probe->reason, "emulation_counter option"), "%s",
		  ci->probe->reason);
	ci = sb_probes_counter(p, SB_C_MN_INVALIDATE_END); /* the zap causes' bracket: off by default */
	CHECK(!ci->available);
	CHECK_MSG(strstr(ci->probe->reason, "off:") && strstr(ci->probe->reason, "zap_causes option"), "%s",
		  ci->probe->reason);
	sb_probes_close(p);

	sb_probe_options_init(&o);
	o.exit_counters = false;
	p = probes_start(getpid(), &o);
	for (int c = SB_C_KVM_EXIT; c <= SB_C_INJ_VIRQ; c++) {
		ci = sb_probes_counter(p, c);
		CHECK(!ci->available);
		CHECK_MSG(strstr(ci->probe->reason, "exit_counters option"), "%s", ci->probe->reason);
	}
	CHECK(sb_probes_counter(p, SB_C_UNMAP_HVA)->available);
	sb_probes_close(p);
}

/*
 * What fentry on the MMU-notifier pair counts attached on trust (the
 * test-only option skips the loader's self-test): *start and *end for 30
 * mprotect pairs. False where fentry is unavailable.
 */
static bool fentry_pair_unchecked(__u64 *start, __u64 *end)
{
	struct sb_probe_options o;
	struct sb_probes *p;
	struct sb_probe_snapshot a, b, d;
	bool avail;

	sb_probe_options_init(&o);
	o.zap_causes = true;
	o.test_no_selftest = true;
	p = probes_start(getpid(), &o);
	avail = sb_probes_counter(p, SB_C_MN_INVALIDATE)->available;
	if (avail) {
		CHECK(sb_probes_counter(p, SB_C_MN_INVALIDATE_END)->available);
		probes_read(p, &a);
		mprotect_round(p);
		probes_read(p, &b);
		snap_delta(&a, &b, &d);
		*start = d.c.count[SB_C_MN_INVALIDATE][SB_CTX_TARGET].events;
		*end = d.c.count[SB_C_MN_INVALIDATE_END][SB_CTX_TARGET].events;
	}
	sb_probes_close(p);
	return avail;
}

/*
 * The self-test's judgement, on any kernel: with its trials doing nothing
 * (the test-only option), every fentry probe it tries is found not to run,
 * detached, and unavailable saying so.
 */
static void selftest_idle(void)
{
	static const enum sb_counter tried[] = { SB_C_MN_INVALIDATE, SB_C_MN_INVALIDATE_END, SB_C_GET_DIRTY_LOG,
						 SB_C_CLEAR_DIRTY_LOG };
	struct sb_probe_options o;
	struct sb_probes *p;

	sb_probe_options_init(&o);
	o.zap_causes = true;
	o.test_selftest_idle = true;
	p = probes_start(getpid(), &o);
	for (size_t i = 0; i < ARRAY_SIZE(tried); i++) {
		const struct sb_counter_info *ci = sb_probes_counter(p, tried[i]);

		CHECK_MSG(!ci->available && ci->probe->backend == SB_BACKEND_NONE &&
				  strstr(ci->probe->reason, "fentry: attached, but never ran"),
			  "%s with idle trials: available %d: %s", sb_counter_name(tried[i]), ci->available,
			  ci->probe->reason);
	}
	/* the probes it does not try are left alone */
	CHECK(sb_probes_counter(p, SB_C_KVM_FLUSH)->available);
	printf("self-test with idle trials: the 4 fentry probes it tries are unavailable: %s\n",
	       sb_probes_counter(p, SB_C_GET_DIRTY_LOG)->probe->reason);
	sb_probes_close(p);
}

static void fentry_state(void)
{
	struct sb_probe_options o;
	struct sb_probes *p;
	const struct sb_counter_info *ci;
	__u64 raw_start = 0, raw_end = 0;
	bool raw = fentry_pair_unchecked(&raw_start, &raw_end);

	sb_probe_options_init(&o);
	o.zap_causes = true;
	p = probes_start(getpid(), &o);
	ci = sb_probes_counter(p, SB_C_MN_INVALIDATE);

	if (ci->available) {
		/* a kernel with fentry: the notifier sees at least what reached KVM's tracepoint */
		struct sb_probe_snapshot a, b, d;

		CHECK(raw && raw_start > 0);
		CHECK(ci->probe->backend == SB_BACKEND_FENTRY);
		probes_read(p, &a);
		mprotect_round(p);
		probes_read(p, &b);
		snap_delta(&a, &b, &d);
		CHECK(d.c.count[SB_C_MN_INVALIDATE][SB_CTX_TARGET].events >=
		      d.c.count[SB_C_UNMAP_HVA][SB_CTX_TARGET].events);
		ci = sb_probes_counter(p, SB_C_MN_INVALIDATE_END);
		if (raw_end == raw_start) {
			/* every range_start the VM saw has its range_end, and the self-test saw it run */
			CHECK_MSG(ci->available, "mn_invalidate_end: %s", ci->probe->reason);
			CHECK_MSG(d.c.count[SB_C_MN_INVALIDATE_END][SB_CTX_TARGET].events ==
					  d.c.count[SB_C_MN_INVALIDATE][SB_CTX_TARGET].events,
				  "mn_invalidate_end %llu, mn_invalidate %llu (other contexts: %llu %llu and %llu %llu)",
				  (unsigned long long)d.c.count[SB_C_MN_INVALIDATE_END][SB_CTX_TARGET].events,
				  (unsigned long long)d.c.count[SB_C_MN_INVALIDATE][SB_CTX_TARGET].events,
				  (unsigned long long)d.c.count[SB_C_MN_INVALIDATE_END][SB_CTX_KTHREAD].events,
				  (unsigned long long)d.c.count[SB_C_MN_INVALIDATE][SB_CTX_KTHREAD].events,
				  (unsigned long long)d.c.count[SB_C_MN_INVALIDATE_END][SB_CTX_OTHER].events,
				  (unsigned long long)d.c.count[SB_C_MN_INVALIDATE][SB_CTX_OTHER].events);
			printf("fentry: available, mn_invalidate counted %llu, mn_invalidate_end as many\n",
			       (unsigned long long)d.c.count[SB_C_MN_INVALIDATE][SB_CTX_TARGET].events);
		} else {
			/*
			 * A kernel that attaches fentry on range_end and never runs it
			 * (Debian's 6.12): attached on trust it counted nothing, and
			 * the loader's self-test finds that, detaches it and says so,
			 * rather than report a silent 0. A partial count is neither.
			 */
			CHECK_MSG(raw_end == 0, "attached on trust, range_end ran %llu times for %llu range_start",
				  (unsigned long long)raw_end, (unsigned long long)raw_start);
			CHECK_MSG(!ci->available && ci->probe->backend == SB_BACKEND_NONE &&
					  strstr(ci->probe->reason, "fentry: attached, but never ran") &&
					  strstr(ci->probe->reason, "kvm_mmu_notifier_invalidate_range_end"),
				  "mn_invalidate_end: available %d: %s", ci->available, ci->probe->reason);
			printf("fentry: available, mn_invalidate counted %llu; on trust mn_invalidate_end counted 0 of "
			       "%llu, so it is unavailable: %s\n",
			       (unsigned long long)d.c.count[SB_C_MN_INVALIDATE][SB_CTX_TARGET].events,
			       (unsigned long long)raw_start, ci->probe->reason);
		}
		/* the timed probes (fentry + fexit) load where fentry does */
		for (int c = SB_C_CLEAR_DIRTY_LOG; c <= SB_C_GET_DIRTY_LOG; c++) {
			const struct sb_counter_info *t = sb_probes_counter(p, c);

			CHECK_MSG(t->available && t->probe->backend == SB_BACKEND_FENTRY, "%s: %s", t->probe->name,
				  t->probe->reason);
			/* and ran when the loader tried them (KVM_GET_DIRTY_LOG, KVM_CLEAR_DIRTY_LOG) */
			CHECK_MSG(!strstr(t->probe->reason, "not self-tested"), "%s: %s", t->probe->name, t->probe->reason);
		}
		CHECK_MSG(!strstr(sb_probes_counter(p, SB_C_MN_INVALIDATE)->probe->reason, "not self-tested"), "%s",
			  sb_probes_counter(p, SB_C_MN_INVALIDATE)->probe->reason);
		selftest_idle();
	} else {
		printf("fentry: unavailable: %s\n", ci->probe->reason);
		CHECK(!raw);
		CHECK(ci->probe->backend == SB_BACKEND_NONE);
		CHECK(strstr(ci->probe->reason, "fentry: "));
		CHECK(!sb_probes_counter(p, SB_C_KVM_FLUSH)->available);
	}
	sb_probes_close(p);
}

/*
 * Classic tracepoints without tracefs mounted: in a private mount
 * namespace (the host's mounts are untouched) with tracefs and debugfs
 * unmounted, the loader mounts tracefs itself.
 */
static void tracefs_not_mounted(void)
{
	pid_t parent = getpid(), child;
	int status;

	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		struct sb_probe_options o;
		struct sb_error err = { 0 };
		struct sb_probes *p = NULL;
		struct stat st;

		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
			fprintf(stderr, "private mount namespace: %s\n", strerror(errno));
			_exit(77);
		}
		umount2("/sys/kernel/debug", MNT_DETACH);
		while (umount2("/sys/kernel/tracing", MNT_DETACH) == 0)
			;
		if (stat("/sys/kernel/tracing/events", &st) == 0) {
			fprintf(stderr, "tracefs still mounted\n");
			_exit(1);
		}
		sb_probe_options_init(&o);
		o.backends = SB_BACKEND_BIT(SB_BACKEND_TRACEPOINT);
		if (sb_probes_open(parent, &o, &p, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			_exit(1);
		}
		if (!sb_probes_counter(p, SB_C_UNMAP_HVA)->available ||
		    sb_probes_counter(p, SB_C_UNMAP_HVA)->probe->backend != SB_BACKEND_TRACEPOINT ||
		    stat("/sys/kernel/tracing/events/kvm", &st) < 0) {
			fprintf(stderr, "classic tracepoints did not come up: %s\n",
				sb_probes_counter(p, SB_C_UNMAP_HVA)->probe->reason);
			_exit(1);
		}
		sb_probes_close(p);
		_exit(0);
	}
	CHECK(waitpid(child, &status, 0) == child);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		SKIP_TEST("private mount namespaces (CLONE_NEWNS)");
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	printf("tracefs unmounted: the loader mounted it and attached classic tracepoints\n");
}

static void *idle_thread(void *arg)
{
	pid_t *tid = arg;

	*tid = (pid_t)syscall(SYS_gettid);
	pause();
	return NULL;
}

static void bad_inputs(void)
{
	struct sb_probe_options o;
	struct sb_error err = { 0 };
	struct sb_probes *p = NULL;
	unsigned int mask;
	pthread_t th;
	pid_t tid = 0, child;
	int r;

	/* no such process */
	r = sb_probes_open(0x7ffffff0, NULL, &p, &err);
	CHECK_MSG(r == -ESRCH && strstr(err.msg, "no process with pid 2147483632"), "%d %s", r, err.msg);

	/* a process without a VM (the fork child drops the inherited VM fds first) */
	int ready[2];
	char c;

	CHECK(pipe(ready) == 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		close(vm.vm_fd);
		close(vm.kvm_fd);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	close(ready[1]);
	r = sb_probes_open(child, NULL, &p, &err);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK_MSG(r == -ENODEV && strstr(err.msg, "holds no KVM VM"), "%d %s", r, err.msg);

	/* a thread id stands for its process */
	CHECK(pthread_create(&th, NULL, idle_thread, &tid) == 0);
	while (!__atomic_load_n(&tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	CHECK(tid != getpid());
	r = sb_probes_open(tid, NULL, &p, &err);
	CHECK_MSG(r == 0, "%s", err.msg);
	CHECK(sb_probes_target(p) == getpid());
	sb_probes_close(p);
	pthread_cancel(th);
	pthread_join(th, NULL);

	sb_probe_options_init(&o);
	o.max_stacks = 0;
	r = sb_probes_open(getpid(), &o, &p, &err);
	CHECK(r == -EINVAL && strstr(err.msg, "max_stacks 0"));

	sb_probe_options_init(&o);
	o.test_tracepoint = "no-colon";
	o.test_counter = SB_C_AGE_HVA;
	r = sb_probes_open(getpid(), &o, &p, &err);
	CHECK(r == -EINVAL && strstr(err.msg, "no-colon") && strstr(err.msg, "category:name"));

	CHECK(sb_backend_mask_parse("tp_btf,raw_tp", &mask, &err) == 0);
	CHECK(mask == (SB_BACKEND_BIT(SB_BACKEND_TP_BTF) | SB_BACKEND_BIT(SB_BACKEND_RAW_TP)));
	CHECK(sb_backend_mask_parse("tp_btf,kprobe", &mask, &err) == -EINVAL);
	CHECK(strstr(err.msg, "'kprobe'"));
	CHECK(sb_backend_mask_parse("", &mask, &err) == -EINVAL);
}

int main(void)
{
	static const enum sb_backend backends[] = { SB_BACKEND_TP_BTF, SB_BACKEND_RAW_TP, SB_BACKEND_TRACEPOINT };
	__u64 events[3];

	self_vm_create(&vm, 4u << 20);
	for (size_t i = 0; i < 3; i++)
		one_backend(backends[i], &events[i]);
	/* the same operations give the same events whichever backend counts them */
	CHECK(events[0] == events[1] && events[1] == events[2]);
	for (size_t i = 0; i < 3; i++)
		option_combinations(backends[i]);
	missing_tracepoint();
	fallback_when_disallowed();
	gated_off();
	fentry_state();
	tracefs_not_mounted();
	bad_inputs();
	self_vm_destroy(&vm);
	printf("ok\n");
	return 0;
}
