// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The QEMU a run names in its spec (vm.qemu) runs it, and the report says
 * which it was. Needs $SNAPBENCH_QEMU (the qemu10 tier sets it to the
 * cache's QEMU 10.0; without it the test fails naming the variable).
 *
 *   spec            a 1-repetition background snapshot (null sink) with
 *                   vm.qemu $SNAPBENCH_QEMU and no --qemu: it completes; the
 *                   report's spec has vm.qemu, host.qemu names that binary,
 *                   its version (of the tier's series) and package, and the
 *                   features the probe found, as QEMU's release has them
 *                   (migrate-channels from 8.2, run-with-user from 9.1)
 *   missing         vm.qemu naming a file that is not there, then one that
 *                   is not executable: preflight fails naming spec.vm.qemu,
 *                   the path and the fetch script, no repetition runs
 *   relative        vm.qemu "qemu-system-x86_64": the spec is refused,
 *                   naming the field; a cache path with '~' passes, a space
 *                   or ';' does not
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "run-test.h"
#include "runner.h"
#include "spec.h"
#include "test-qemu.h"
#include "test-tmp.h"

static bool has_feature(struct json_object *r, const char *name)
{
	struct json_object *a = jp(r, "host/qemu/features");

	for (size_t i = 0; a && i < json_object_array_length(a); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(a, i)), name))
			return true;
	return false;
}

static void snapshot_spec(struct run_spec *spec, const char *qemu)
{
	struct sb_error err = {};

	run_test_spec_init(spec);
	CHECK(spec_set(spec, "repetitions", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.memory", "128M", NULL, &err) == 0);
	CHECK(spec_set(spec, "vm.vcpus", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "guest.probe.vcpu", "null", NULL, &err) == 0);
	CHECK(spec_set(spec, "snapshot.sink", "null", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.warmup_s", "0", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.pre_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.post_s", "1", NULL, &err) == 0);
	CHECK(spec_set(spec, "timing.interval_ms", "250", NULL, &err) == 0);
	CHECK_MSG(spec_set(spec, "vm.qemu", qemu, NULL, &err) == 0, "%s", err.msg);
	CHECK_MSG(spec_validate(spec, &err) == 0, "%s", err.msg);
}

static const char *tier_qemu(void)
{
	const char *q = test_qemu_binary();

	CHECK_MSG(q, "$SNAPBENCH_QEMU is not set: this test is for a QEMU tier (meson test --suite qemu10)");
	return q;
}

static void test_spec(void)
{
	const char *qemu = tier_qemu();
	struct runner_options opts = {};
	struct sb_error err = {};
	struct run_spec spec;
	struct json_object *r;
	int major, minor;

	snapshot_spec(&spec, qemu);
	/* vm.qemu alone names it: opts.qemu_binary stays NULL (run_test_run() leaves a spec's QEMU be) */
	CHECK_MSG(run_test_run("qemu-spec", &spec, &opts, &r, &err) == 0, "%s", err.msg);
	CHECK(!opts.qemu_binary);
	CHECK(!strcmp(jstr(r, "state"), "completed"));
	CHECK(!strcmp(jstr(r, "spec/vm/qemu"), qemu));
	run_test_expect_qemu(r, qemu);
	CHECK(jstr(r, "host/qemu/package"));
	CHECK(sscanf(jstr(r, "host/qemu/version"), "%d.%d", &major, &minor) == 2);
	CHECK(has_feature(r, "query-stats") && has_feature(r, "background-snapshot") && has_feature(r, "postcopy-ram"));
	CHECK(has_feature(r, "migrate-channels") == (major > 8 || (major == 8 && minor >= 2)));
	CHECK(has_feature(r, "run-with-user") == (major > 9 || (major == 9 && minor >= 1)));
	CHECK(!strcmp(jstr(r, "repetitions/0/snapshot/status"), "completed"));
	printf("spec: QEMU %s %s ran it, snapshot %.2f s\n", jstr(r, "host/qemu/binary"), jstr(r, "host/qemu/version"),
	       jnum(r, "repetitions/0/snapshot/duration_s"));
	run_test_expect_no_qemu(r);
	json_object_put(r);
	spec_done(&spec);
}

static void expect_refused(const char *name, const char *qemu, const char *why)
{
	struct runner_options opts = {};
	struct sb_error err = {};
	struct run_spec spec;
	struct json_object *r;

	snapshot_spec(&spec, qemu);
	CHECK(run_test_run(name, &spec, &opts, &r, &err) < 0);
	printf("%s: %s\n", name, err.msg);
	CHECK(!strcmp(jstr(r, "state"), "failed") && !strcmp(jstr(r, "error/phase"), "preflight"));
	CHECK_MSG(strstr(err.msg, "spec.vm.qemu") && strstr(err.msg, qemu) && strstr(err.msg, why) &&
			  strstr(err.msg, "fetch-test-qemu"),
		  "%s", err.msg);
	CHECK(json_object_array_length(jp(r, "repetitions")) == 0);
	CHECK(!strcmp(jstr(r, "host/qemu/binary"), qemu) && jnull(r, "host/qemu/version"));
	json_object_put(r);
	spec_done(&spec);
}

static void test_missing(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/no-such-qemu", test_tmpdir("qemu-missing"));
	expect_refused("qemu-missing", path, "No such file");
	snprintf(path, sizeof(path), "%s/qemu-not-executable", test_tmpdir("qemu-noexec"));
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	close(fd);
	expect_refused("qemu-noexec", path, "not executable");
}

static void test_relative(void)
{
	struct sb_error err = {};
	struct run_spec spec;

	CHECK(spec_init(&spec) == 0);
	CHECK(spec_set(&spec, "vm.qemu", "qemu-system-x86_64", NULL, &err) == 0);
	CHECK(spec_validate(&spec, &err) == -EINVAL);
	CHECK_MSG(strstr(err.msg, "spec.vm.qemu") && strstr(err.msg, "absolute path"), "%s", err.msg);
	printf("relative: %s\n", err.msg);
	/* the cache's paths carry Debian's '~'; a space or a shell's characters never pass */
	CHECK(spec_set(&spec, "vm.qemu", "/var/cache/snapbench/qemu/10.0.2+ds-2+deb13u1~bpo12+1/qemu-system-x86_64", NULL,
		       &err) == 0);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);
	CHECK(spec_set(&spec, "vm.qemu", "/opt/q emu", NULL, &err) < 0);
	CHECK(spec_set(&spec, "vm.qemu", "/opt/qemu;reboot", NULL, &err) < 0);
	CHECK_MSG(strstr(err.msg, "vm.qemu"), "%s", err.msg);
	spec_done(&spec);
}

int main(int argc, char **argv)
{
	static const struct run_test_case cases[] = {
		{ "spec", test_spec },
		{ "missing", test_missing },
		{ "relative", test_relative },
	};

	run_test_init(argc, argv);
	run_test_require_root();
	run_test_cases(cases, ARRAY_SIZE(cases), argc > 3 ? argv[3] : NULL);
	return 0;
}
