// SPDX-License-Identifier: GPL-2.0-or-later
/* Preflight: what a run needs, checked before it changes anything. */
#include "preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "macro.h"
#include "probes.h"
#include "qemu-binary.h"
#include "scenario.h"
#include "vm-libvirt.h"

/* defined where runner_dep is linked (runner/meson.build) */
#pragma weak libvirt_preflight

struct failures {
	struct sb_error *err;
	int first;
	size_t used;
};

static _printf_(3, 4) void fail(struct failures *f, int code, const char *fmt, ...)
{
	char msg[SB_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!f->first)
		f->first = code < 0 ? code : -EINVAL;
	if (!f->err)
		return;
	/* one failure per line: the CLI prints each on a line of its own */
	int n = snprintf(f->err->msg + f->used, sizeof(f->err->msg) - f->used, "%s%s", f->used ? "\n" : "", msg);
	if (n > 0)
		f->used = f->used + (size_t)n < sizeof(f->err->msg) ? f->used + (size_t)n : sizeof(f->err->msg) - 1;
	f->err->code = f->first;
}

int preflight_free_bytes(const char *path, unsigned long long *ret)
{
	struct statvfs s;

	if (statvfs(path, &s) < 0)
		return -errno;
	*ret = (unsigned long long)s.f_bavail * s.f_frsize;
	return 0;
}

static int read_int_file(const char *path, long *ret)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	return fscanf(f, "%ld", ret) == 1 ? 0 : -EINVAL;
}

/* why: the scenario's reason its QEMU needs userfaultfd (struct scenario_needs) */
static void check_userfaultfd(struct failures *f, const struct run_spec *spec, const struct qemu_info *q, const char *why)
{
	const char *user = spec->vm.user;
	struct passwd *pw;
	uid_t uid = geteuid();
	long unpriv = 0;

	if (user) {
		pw = getpwnam(user);
		if (!pw) {
			fail(f, -ENOENT, "spec.vm.user '%s': no such user; create it or drop vm.user", user);
			return;
		}
		uid = pw->pw_uid;
	}
	if (uid == 0)
		return; /* root may use userfaultfd() whatever the sysctl says */
	const char *knob = spec_knob_all_arms(spec, "sysctl:vm.unprivileged_userfaultfd");
	if (knob)
		unpriv = atol(knob);
	else if (read_int_file("/proc/sys/vm/unprivileged_userfaultfd", &unpriv) < 0)
		unpriv = 0;
	if (unpriv == 1)
		return;
	/* QEMU 8.0 and later open /dev/userfaultfd (util/userfaultfd.c: uffd_open(), merged February 2023) */
	bool devnode = q && q->major >= 8;
	if (devnode) {
		struct stat st;
		if (stat("/dev/userfaultfd", &st) == 0 && (st.st_uid == uid || (st.st_mode & 0006) == 0006))
			return;
	}
	fail(f, -EPERM,
	     "QEMU runs as '%s' (uid %u), which may not use userfaultfd: vm.unprivileged_userfaultfd is 0%s, and %s; fix: set the knob sysctl:vm.unprivileged_userfaultfd=1 for the run, or run QEMU as root (drop spec.vm.user)",
	     user ? user : "the invoking user", (unsigned)uid,
	     devnode ? " and /dev/userfaultfd is not accessible to it" : " and this QEMU does not use /dev/userfaultfd (8.0+ does)",
	     why);
}

/* A feature the spec needs and q lacks: which, the QEMU that has it, the way out. */
static void fail_feature(struct failures *f, const struct qemu_info *q, enum qemu_feature feat, const char *needed_by,
			 const char *since, const char *or_drop)
{
	fail(f, -EOPNOTSUPP,
	     "QEMU %s %d.%d.%d lacks %s, which %s needs (QEMU %s or later has it): name a newer QEMU (spec.vm.qemu or --qemu PATH; scripts/fetch-test-qemu unpacks 10.0 from bookworm-backports)%s",
	     q->path, q->major, q->minor, q->micro, qemu_feature_name(feat), needed_by, since ? since : qemu_feature_since(feat),
	     or_drop ? or_drop : "");
}

/* What the scenario relies on beyond query-stats (docs/qemu-versions.md). */
static void check_qemu_features(struct failures *f, const struct run_spec *spec, const struct qemu_info *q,
				const struct scenario_needs *n)
{
	if (n->postcopy_ram && !q->has[QEMU_FEATURE_POSTCOPY_RAM]) {
		char by[64];

		snprintf(by, sizeof(by), "the %s scenario", scenario_find(spec->scenario)->name);
		fail_feature(f, q, QEMU_FEATURE_POSTCOPY_RAM, by, NULL, NULL);
	}
	if (!n->postcopy_preempt)
		return;
	if (!q->has[QEMU_FEATURE_POSTCOPY_PREEMPT])
		fail_feature(f, q, QEMU_FEATURE_POSTCOPY_PREEMPT, "spec.postcopy.preempt", NULL, ", or set postcopy.preempt false");
	else if (!qemu_version_at_least(q, QEMU_PREEMPT_MIN_MAJOR, QEMU_PREEMPT_MIN_MINOR))
		/*
		 * QEMU 8.0's "migration: Fix potential race on postcopy_qemufile_src":
		 * 7.x's source shuts the preempt channel down from its main thread while
		 * the return-path thread may still write it (7.2's own stays behind for
		 * pc-7.2 machines only, x-preempt-pre-7-2)
		 */
		fail(f, -EOPNOTSUPP,
		     "QEMU %s %d.%d.%d has postcopy-preempt in its 7.x form, whose source can race on the preempt channel at the migration's end (its main and return-path threads both use it; QEMU %d.%d fixed it): spec.postcopy.preempt needs QEMU %d.%d or later; name one (spec.vm.qemu or --qemu PATH; scripts/fetch-test-qemu unpacks 10.0 from bookworm-backports), or set postcopy.preempt false",
		     q->path, q->major, q->minor, q->micro, QEMU_PREEMPT_MIN_MAJOR, QEMU_PREEMPT_MIN_MINOR,
		     QEMU_PREEMPT_MIN_MAJOR, QEMU_PREEMPT_MIN_MINOR);
}

static void check_qemu(struct failures *f, const struct preflight_input *in, const struct scenario_needs *n,
		       struct qemu_info *q, bool *ok)
{
	const char *spec_qemu = in->spec->vm.qemu;
	struct sb_error e = {};
	int r;

	*ok = false;
	if (spec_qemu && in->qemu_binary && !strcmp(spec_qemu, in->qemu_binary) && access(spec_qemu, X_OK) < 0) {
		fail(f, -errno,
		     "spec.vm.qemu %s: %s; name an executable QEMU binary (QEMU 10.0 from bookworm-backports: run scripts/fetch-test-qemu as root, installed as LIBEXECDIR/snapbench-fetch-qemu, and use the path it prints), or drop vm.qemu for " QEMU_DEFAULT_BINARY " in PATH",
		     spec_qemu, errno == EACCES ? "not executable" : strerror(errno));
		return;
	}
	r = qemu_probe(in->qemu_binary, q, &e);
	*ok = r >= 0;
	if (r < 0) {
		fail(f, r, "%s", e.msg);
		return;
	}
	if (!in->tcg && !in->host_vm && !in->refused && !q->kvm_present)
		fail(f, -ENODEV, "QEMU %s cannot use KVM (query-kvm: disabled); check /dev/kvm and that the host CPU supports virtualization",
		     q->path);
	if (!q->has_query_stats)
		fail(f, -EOPNOTSUPP, "QEMU %s %d.%d.%d has no query-stats (KVM statistics need QEMU 7.1 or later): install a newer QEMU or pass --qemu PATH",
		     q->path, q->major, q->minor, q->micro);
	if (!q->has_background_snapshot && n->background_snapshot)
		fail(f, -EOPNOTSUPP, "QEMU %s %d.%d.%d has no background-snapshot migration capability (QEMU 6.0+ built for Linux): install a newer QEMU or pass --qemu PATH",
		     q->path, q->major, q->minor, q->micro);
	check_qemu_features(f, in->spec, q, n);
}

static void check_bpf(struct failures *f, const struct run_spec *spec)
{
	struct sb_error e = {};
	int r;

	if (!spec->bpf.enabled)
		return;
	r = sb_probes_check_privileges(&e);
	if (r == -EPERM)
		fail(f, r, "%s: run as root, or run without them (--no-bpf, spec.bpf.enabled false); their counters are then reported unavailable",
		     e.msg);
	else if (r < 0)
		fail(f, r, "%s", e.msg);
}

static void check_space(struct failures *f, const struct preflight_input *in, const struct scenario_needs *n)
{
	const struct run_spec *spec = in->spec;
	const char *dir = spec->snapshot.keep || !in->scratch_dir ? in->run_dir : in->scratch_dir;
	unsigned long long avail, need;
	int r;

	if (spec->snapshot.sink_null || !n->snapshot_file)
		return; /* only a snapshot writes to the run directory */
	need = spec->vm.memory + PREFLIGHT_SINK_MARGIN;
	if (spec->snapshot.keep)
		need *= spec_total_repetitions(spec);
	r = preflight_free_bytes(dir, &avail);
	if (r < 0) {
		fail(f, r, "%s %s: %s", dir == in->run_dir ? "run directory" : "scratch directory", dir, strerror(-r));
		return;
	}
	if (avail < need)
		fail(f, -ENOSPC,
		     "%s %s has %llu MiB free, the snapshot file%s of a %llu MiB guest need%s about %llu MiB: free space, write the run elsewhere (--output DIR), or use the null sink (--sink null)",
		     dir == in->run_dir ? "run directory" : "scratch directory (a host VM's memory: --host-vm-memory)", dir, avail >> 20, spec->snapshot.keep ? "s (kept)" : "", (unsigned long long)(spec->vm.memory >> 20),
		     spec->snapshot.keep ? "" : "s",
		     need >> 20);
}

/* MemAvailable from /proc/meminfo, in bytes; -ENOENT when the kernel has no such line. */
static int mem_available(unsigned long long *ret)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long kb;
	char key[64];

	if (!f)
		return -errno;
	while (fscanf(f, "%63s %llu kB\n", key, &kb) == 2)
		if (!strcmp(key, "MemAvailable:")) {
			*ret = kb << 10;
			return 0;
		}
	return -ENOENT;
}

/*
 * Guest RAM from the host's page allocator (anonymous backing) must fit in
 * what the host has available, or QEMU fails at start (or the OOM killer
 * picks something mid-run). hugetlb RAM comes from the huge page pool, which
 * check_hugetlb() counts.
 */
static void check_memory(struct failures *f, const struct run_spec *spec)
{
	/* a migration's destination on this host fills a second copy of guest RAM */
	bool dest = spec_scenario_has_destination(spec->scenario);
	unsigned long long avail = 0;

	if (spec->vm.backing == SPEC_BACKING_HUGETLB || mem_available(&avail) < 0)
		return;
	if (spec->vm.memory * (dest ? 2 : 1) > avail)
		fail(f, -ENOMEM,
		     "the guest's %llu MiB of RAM (spec.vm.memory)%s exceed the %llu MiB this host has available "
		     "(MemAvailable in /proc/meminfo): lower --memory or free memory on the host",
		     (unsigned long long)(spec->vm.memory >> 20),
		     dest ? ", twice (the migration's destination QEMU runs on this host too)," : "", avail >> 20);
}

/* The host VM's RAM comes from this host's page allocator. */
static void check_host_vm_memory(struct failures *f, const struct run_spec *spec)
{
	unsigned long long avail = 0;

	if (mem_available(&avail) < 0 || spec->host_vm.memory <= avail)
		return;
	fail(f, -ENOMEM,
	     "the host VM's %llu MiB of RAM (spec.host_vm.memory) exceed the %llu MiB this host has available "
	     "(MemAvailable in /proc/meminfo): lower --host-vm-memory (and --memory) or free memory on the host",
	     (unsigned long long)(spec->host_vm.memory >> 20), avail >> 20);
}

static void check_hugetlb(struct failures *f, const struct run_spec *spec)
{
	uint64_t hp = spec->vm.hugepage_size ? spec->vm.hugepage_size : 2ull << 20;
	char path[128];
	long free_pages = 0;

	if (spec->vm.backing != SPEC_BACKING_HUGETLB)
		return;
	if (spec_knob_all_arms(spec, "sysctl:vm.nr_hugepages"))
		return; /* the run reserves them itself */
	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%llukB/free_hugepages",
		 (unsigned long long)(hp >> 10));
	if (read_int_file(path, &free_pages) < 0) {
		fail(f, -ENOENT, "%s: this kernel has no %llu kB huge pages; use spec.vm.hugepage_size 2M", path,
		     (unsigned long long)(hp >> 10));
		return;
	}
	/* a migration's destination QEMU on this host takes as many again */
	uint64_t need = spec->vm.memory / hp * (spec_scenario_has_destination(spec->scenario) ? 2 : 1);
	if ((uint64_t)free_pages < need)
		fail(f, -ENOMEM,
		     "%ld free %llu kB huge pages, the guest needs %llu%s: reserve them (echo N > /sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages, or the knob sysctl:vm.nr_hugepages=N for 2M pages)",
		     free_pages, (unsigned long long)(hp >> 10), (unsigned long long)need,
		     spec_scenario_has_destination(spec->scenario) ? " (with the migration's destination)" : "",
		     (unsigned long long)(hp >> 10));
}

static void fail_msg(void *ctx, int code, const char *msg)
{
	fail(ctx, code, "%s", msg);
}

int preflight_run(const struct preflight_input *in, struct qemu_info *qemu, struct sb_error *err)
{
	struct failures f = { .err = err };
	struct qemu_info q = {};
	struct scenario_needs n;
	bool qemu_ok = false;

	sb_error_clear(err);
	scenario_host_needs(scenario_find(in->spec->scenario), in->spec, &n);
	/* /dev/kvm itself: placement_decide() (placement.h), which chose KVM, TCG or host VMs */
	if (in->refused)
		fail(&f, in->refused, "%s", in->refused_msg);
	check_qemu(&f, in, &n, &q, &qemu_ok);
	if (in->host_vm) {
		/* the rest is checked by the run engine inside each host VM, on the kernel under test */
		struct sb_error e = {};
		if (spec_validate(in->spec, &e) < 0)
			fail(&f, e.code, "%s", e.msg);
		check_host_vm_memory(&f, in->spec);
		goto image;
	}
	if (in->spec->vm.backend == SPEC_BACKEND_LIBVIRT && !vm_libvirt_linked())
		fail(&f, -EOPNOTSUPP, VM_NO_LIBVIRT_MSG, program_invocation_short_name);
	else if (in->spec->vm.backend == SPEC_BACKEND_LIBVIRT)
		libvirt_preflight(in->spec, in->tcg, fail_msg, &f); /* libvirt's QEMU user, not ours */
	else if (n.userfaultfd)
		check_userfaultfd(&f, in->spec, qemu_ok ? &q : NULL, n.userfaultfd); /* a precopy migration needs no userfaultfd */
	if (!in->tcg)
		check_bpf(&f, in->spec); /* under TCG the probes stay unloaded: no KVM VM to count */
	check_space(&f, in, &n);
	check_memory(&f, in->spec);
	check_hugetlb(&f, in->spec);
image:
	if (in->guest_image && access(in->guest_image, R_OK) < 0)
		fail(&f, -errno, "guest image %s: %s; build snapbench (the build makes guest/snapbench-guest.elf) or install it",
		     in->guest_image, strerror(errno));
	if (qemu && qemu_ok)
		*qemu = q;
	else
		qemu_info_done(&q);
	return f.first;
}
