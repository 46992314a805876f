// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The libvirt backend, for real, against the libvirtd the test set-up
 * started (scripts/host-setup):
 *
 *   e2e   the same background-snapshot run (micro guest, 128 MiB, 2 vCPUs,
 *         BPF probes, snapshot to a file) through the qemu backend and
 *         through a transient libvirt domain. Both reports validate
 *         against the schema; they have the same keys (the libvirt one
 *         adds only vm.libvirt); the snapshot completed in both; the
 *         libvirt report names the domain and the taint libvirt recorded
 *         for monitor passthrough; no domain, QEMU or work file is left.
 *
 *   uffd  libvirt's QEMU runs unprivileged: with
 *         vm.unprivileged_userfaultfd=0 (a knob of the run, never a write
 *         of our own) preflight refuses the run and names the fix; without
 *         preflight QEMU refuses the snapshot and the run stops with the
 *         fix named; with the knob sysctl:vm.unprivileged_userfaultfd=1 it
 *         runs. The sysctl ends at the value it had, read under the
 *         host-wide knob lock (no run changes it meanwhile); restored at
 *         exit if a run failed to, also when a check fails.
 */
#include <dirent.h>
#include <errno.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "run-test.h"
#include "runner.h"
#include "spec.h"

#define UFFD_SYSCTL "/proc/sys/vm/unprivileged_userfaultfd"

static long uffd_original = -1;

/* only if a run failed to: the test then fails anyway */
static void restore_uffd(void)
{
	run_test_restore_sysctl(UFFD_SYSCTL, uffd_original);
}

static void quiet(void *opaque, virErrorPtr e)
{
	(void)opaque;
	(void)e;
}

/* Skips unless libvirtd answers at qemu:///system. */
static void require_libvirt(void)
{
	virSetErrorFunc(NULL, quiet);
	virConnectPtr c = virConnectOpen("qemu:///system");
	if (!c)
		SKIP_TEST("libvirtd at qemu:///system (%s); scripts/host-setup starts it", virGetLastErrorMessage());
	virConnectClose(c);
}

/* Domains whose name starts with prefix (running or defined). */
static unsigned count_domains(const char *prefix)
{
	virConnectPtr c = virConnectOpen("qemu:///system");
	virDomainPtr *doms = NULL;
	unsigned n = 0;
	int k;

	CHECK(c);
	k = virConnectListAllDomains(c, &doms, 0);
	CHECK(k >= 0);
	for (int i = 0; i < k; i++) {
		const char *name = virDomainGetName(doms[i]);
		if (name && !strncmp(name, prefix, strlen(prefix)))
			n++;
		virDomainFree(doms[i]);
	}
	free(doms);
	virConnectClose(c);
	return n;
}

static unsigned count_work_dirs(void)
{
	DIR *d = opendir("/run/snapbench");
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "vm-", 3);
	closedir(d);
	return n;
}

static void base_spec(struct run_spec *spec, const char *backend)
{
	struct sb_error err = {};

	run_test_spec_init(spec);
	CHECK(spec_set(spec, "vm.backend", backend, NULL, &err) == 0);
	CHECK(spec_set(spec, "repetitions", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.memory", "128M", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.vcpus", "2", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.pattern", "write64", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.probe.vcpu", "0", NULL, &err) == 0);
	CHECK(spec_set(spec, "snapshot.sink", "file", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.warmup_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.pre_s", "2", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.post_s", "2", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.interval_ms", "250", NULL, &err) == 0);
	CHECK(spec_set(spec, "snapshot.timeout_s", "120", NULL, &err) == 0);
}

/* What the migration rows of a failed run said, for the failure message. */
static void print_migration(const char *report)
{
	struct json_object *r = run_test_load(report), *tl = jp(r, "repetitions/0/timeline");

	for (size_t i = 0; tl && i < json_object_array_length(tl); i++) {
		struct json_object *m = jp(json_object_array_get_idx(tl, i), "migration");
		if (m)
			fprintf(stderr, "row %zu: %s\n", i, json_object_to_json_string(m));
	}
	json_object_put(r);
}

static int run(const struct run_spec *spec, const char *dir, const char *id, bool skip_preflight, char *report,
	       struct sb_error *err)
{
	char run_dir[PATH_MAX];

	snprintf(run_dir, sizeof(run_dir), "%s/%s", dir, id);
	struct runner_options opts = { .run_dir = run_dir, .skip_preflight = skip_preflight };
	return runner_execute(spec, &opts, report, err);
}

/* Every object key path of v, e.g. "/repetitions/[]/vm/pid" (arrays folded). */
static void key_paths(struct json_object *v, const char *prefix, char ***set, size_t *n)
{
	char path[512];

	if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val) {
			snprintf(path, sizeof(path), "%s/%s", prefix, key);
			/* counters and probes are keyed by name: which ones exist depends on the kernel, not the backend */
			bool named = strstr(prefix, "/counters") || strstr(prefix, "/totals") || !strcmp(prefix, "/probes") ||
				     strstr(prefix, "/metrics") || strstr(prefix, "/unavailable") || !strcmp(prefix, "/metric_info") ||
				     strstr(prefix, "/knobs");
			if (named)
				snprintf(path, sizeof(path), "%s/<name>", prefix);
			bool seen = false;
			for (size_t i = 0; i < *n && !seen; i++)
				seen = !strcmp((*set)[i], path);
			if (!seen) {
				*set = realloc(*set, (*n + 1) * sizeof(**set));
				CHECK(*set);
				(*set)[(*n)++] = strdup(path);
			}
			key_paths(val, path, set, n);
		}
	} else if (json_object_is_type(v, json_type_array)) {
		snprintf(path, sizeof(path), "%s/[]", prefix);
		for (size_t i = 0; i < json_object_array_length(v); i++)
			key_paths(json_object_array_get_idx(v, i), path, set, n);
	}
}

static bool has(char **set, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(set[i], path))
			return true;
	return false;
}

/* Keys only the libvirt backend reports. */
static bool libvirt_only(const char *path)
{
	return !strncmp(path, "/repetitions/[]/vm/libvirt", 26) || !strncmp(path, "/spec/vm/libvirt", 16);
}

static void test_e2e(void)
{
	struct run_spec q, l;
	struct sb_error err = {};
	char rq[PATH_MAX], rl[PATH_MAX], needle[128];
	const char *dir = test_tmpdir("libvirt-e2e");
	struct json_object *jq, *jl;
	char **kq = NULL, **kl = NULL;
	size_t nq = 0, nl = 0;
	unsigned dirs_before = count_work_dirs();
	int k;

	base_spec(&q, "qemu");
	base_spec(&l, "libvirt");
	/* libvirt's QEMU is unprivileged: userfaultfd for it during the run (both specs alike) */
	CHECK(spec_set(&l, "knobs", "sysctl:vm.unprivileged_userfaultfd=1", NULL, &err) == 0);
	CHECK(spec_set(&q, "knobs", "sysctl:vm.unprivileged_userfaultfd=1", NULL, &err) == 0);

	k = run(&q, dir, "20261130T000000Z-a00001", false, rq, &err);
	CHECK_MSG(k == 0, "the qemu backend's run failed: %s", err.msg);
	k = run(&l, dir, "20261130T000000Z-a00002", false, rl, &err);
	if (k < 0)
		print_migration(rl);
	CHECK_MSG(k == 0, "the libvirt backend's run failed: %s", err.msg);
	printf("reports: %s %s\n", rq, rl);
	run_test_validate(rq);
	run_test_validate(rl);

	jq = run_test_load(rq);
	jl = run_test_load(rl);
	CHECK(!strcmp(jstr(jl, "state"), "completed"));
	CHECK(!strcmp(jstr(jl, "repetitions/0/snapshot/status"), "completed"));
	CHECK(!strcmp(jstr(jq, "repetitions/0/snapshot/status"), "completed"));
	CHECK(!strcmp(jstr(jl, "repetitions/0/vm/backend"), "libvirt"));
	CHECK(!strcmp(jstr(jq, "repetitions/0/vm/backend"), "qemu"));
	CHECK(jnum(jl, "repetitions/0/vm/pid") > 1);
	CHECK(!strcmp(jstr(jl, "repetitions/0/vm/libvirt/uri"), "qemu:///system"));
	CHECK_MSG(!strcmp(jstr(jl, "repetitions/0/vm/libvirt/domain"), "snapbench-20261130T000000Z-a00002-rep0"), "domain %s", jstr(jl, "repetitions/0/vm/libvirt/domain"));
	/* libvirt tainted the domain for our monitor commands, and the report says so */
	struct json_object *taints = jp(jl, "repetitions/0/vm/libvirt/taints");
	bool monitor = false;
	for (size_t i = 0; taints && i < json_object_array_length(taints); i++)
		monitor |= !!strstr(json_object_get_string(json_object_array_get_idx(taints, i)), "monitor");
	CHECK_MSG(monitor, "no monitor taint in %s", json_object_to_json_string(taints));
	for (const char *const *w = (const char *const[]){ "pre", "snapshot", "post", NULL }; *w; w++) {
		char p[96];
		snprintf(p, sizeof(p), "repetitions/0/windows/%s/metrics/guest_ops_per_s", *w);
		CHECK_MSG(jnum(jl, p) > 0, "no guest progress in the libvirt run's %s window", *w);
		snprintf(p, sizeof(p), "repetitions/0/windows/%s/metrics/latency_p99_ns", *w);
		CHECK_MSG(jnum(jl, p) > 0, "no probe latency in the libvirt run's %s window", *w);
	}
	printf("snapshot: qemu %.2f s, libvirt %.2f s\n", jnum(jq, "repetitions/0/snapshot/duration_s"),
	       jnum(jl, "repetitions/0/snapshot/duration_s"));

	/* the same fields */
	key_paths(jq, "", &kq, &nq);
	key_paths(jl, "", &kl, &nl);
	unsigned diffs = 0;
	for (size_t i = 0; i < nq; i++)
		if (!has(kl, nl, kq[i])) {
			fprintf(stderr, "only in the qemu report: %s\n", kq[i]);
			diffs++;
		}
	for (size_t i = 0; i < nl; i++)
		if (!has(kq, nq, kl[i]) && !libvirt_only(kl[i])) {
			fprintf(stderr, "only in the libvirt report: %s\n", kl[i]);
			diffs++;
		}
	printf("%zu key paths in the qemu report, %zu in the libvirt one, %u differences\n", nq, nl, diffs);
	CHECK(diffs == 0);

	/* nothing left behind */
	snprintf(needle, sizeof(needle), "snapbench-%s-rep", jstr(jl, "id"));
	CHECK(count_domains(needle) == 0);
	CHECK(run_test_count_processes(needle) == 0);
	CHECK_MSG(count_work_dirs() <= dirs_before, "a work directory was left in /run/snapbench");

	for (size_t i = 0; i < nq; i++)
		free(kq[i]);
	for (size_t i = 0; i < nl; i++)
		free(kl[i]);
	free(kq);
	free(kl);
	json_object_put(jq);
	json_object_put(jl);
	spec_done(&q);
	spec_done(&l);
}

static void test_uffd(void)
{
	struct run_spec s;
	struct sb_error err = {};
	char report[PATH_MAX];
	const char *dir = test_tmpdir("libvirt-uffd");
	struct json_object *r;
	int k;

	base_spec(&s, "libvirt");
	/* the runs set it to 0 themselves, journaled and restored like any knob */
	CHECK(spec_set(&s, "knobs", "sysctl:vm.unprivileged_userfaultfd=0", NULL, &err) == 0);

	/* preflight refuses, naming the fix */
	k = run(&s, dir, "20261130T000000Z-b00000", false, report, &err);
	printf("refused: %s\n", err.msg);
	CHECK_MSG(k == -EPERM, "expected -EPERM, got %d: %s", k, err.msg);
	CHECK(strstr(err.msg, "libvirt-qemu") || strstr(err.msg, "uid"));
	CHECK(strstr(err.msg, "vm.unprivileged_userfaultfd is 0"));
	CHECK(strstr(err.msg, "sysctl:vm.unprivileged_userfaultfd=1"));
	run_test_validate(report);
	r = run_test_load(report);
	CHECK(!strcmp(jstr(r, "state"), "failed"));
	CHECK(!strcmp(jstr(r, "error/phase"), "preflight"));
	json_object_put(r);

	/* without preflight, QEMU itself refuses the snapshot, and the run says what to do */
	k = run(&s, dir, "20261130T000000Z-b00001", true, report, &err);
	printf("refused by QEMU: %s\n", err.msg);
	CHECK(k < 0);
	CHECK(strstr(err.msg, "background") && strstr(err.msg, "sysctl:vm.unprivileged_userfaultfd=1"));
	run_test_validate(report);
	r = run_test_load(report);
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "failed"));
	json_object_put(r);
	CHECK(count_domains("snapbench-20261130T000000Z-b00001") == 0);

	/* with the knob, the same run goes through, and the sysctl is back to its value afterwards */
	CHECK(spec_set(&s, "knobs", "sysctl:vm.unprivileged_userfaultfd=1", NULL, &err) == 0);
	k = run(&s, dir, "20261130T000000Z-b00002", false, report, &err);
	CHECK_MSG(k == 0, "the run with the knob failed: %s", err.msg);
	run_test_validate(report);
	r = run_test_load(report);
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "completed"));
	json_object_put(r);
	CHECK_MSG(run_test_sysctl_locked(UFFD_SYSCTL) == uffd_original, "the knob was not restored");
	spec_done(&s);
}

int main(int argc, char **argv)
{
	const char *which;

	run_test_init(argc, argv);
	CHECK(argc >= 4);
	which = argv[3];
	run_test_require_root();
	require_libvirt();
	/* under the host-wide knob lock: no run on this host has it changed right now */
	uffd_original = run_test_sysctl_locked(UFFD_SYSCTL);
	CHECK(uffd_original >= 0);
	test_at_exit(restore_uffd);
	if (!strcmp(which, "e2e"))
		test_e2e();
	else if (!strcmp(which, "uffd"))
		test_uffd();
	else
		CHECK_MSG(false, "unknown case %s", which);
	return 0;
}
