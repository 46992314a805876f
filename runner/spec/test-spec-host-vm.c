// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel arms in the run spec (docs/kernel-arms.md): --arm kernel= and
 * modules=, the host_vm fields and flags, the checks across fields, and the
 * spec's JSON: host_vm only for runs with kernel arms, and what
 * spec_to_json() writes reads back (the host VM's inner spec is made so).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "spec.h"

static void expect_error(int r, const struct sb_error *err, const char *a, const char *b)
{
	CHECK_MSG(r == -EINVAL, "r %d: %s", r, err->msg);
	CHECK_MSG(strstr(err->msg, a) && (!b || strstr(err->msg, b)), "message: %s", err->msg);
}

static void test_arm_args(void)
{
	struct run_spec s;
	struct sb_error err = {};

	CHECK(spec_init(&s) == 0);
	CHECK(!spec_uses_host_vm(&s));
	/* arch=: what snapbench kernel build prints; x86_64 is what a host VM runs */
	CHECK(spec_add_arm(&s, "npt:kernel=/k/bzImage,modules=/k/mods,arch=x86_64,module:kvm_amd.npt=1", "--arm", &err) ==
	      0);
	CHECK(spec_add_arm(&s, "shadow:kernel=/k/bzImage,module:kvm_amd.npt=0", "--arm", &err) == 0);
	CHECK(s.n_arms == 2);
	CHECK(!strcmp(s.arms[0].kernel, "/k/bzImage") && !strcmp(s.arms[0].modules, "/k/mods"));
	CHECK(s.arms[0].knobs.n == 1 && !strcmp(s.arms[0].knobs.items[0].name, "module:kvm_amd.npt"));
	CHECK(!strcmp(spec_arm_kernel(&s, 1), "/k/bzImage") && spec_arm_modules(&s, 1) == NULL);
	CHECK(spec_uses_host_vm(&s));
	CHECK(spec_validate(&s, &err) == 0);
	expect_error(spec_add_arm(&s, "x:kernel=relative/bzImage", "--arm", &err), &err, "--arm", "absolute path");
	expect_error(spec_add_arm(&s, "rv:kernel=/k/Image,arch=riscv64", "--arm", &err), &err, "arch=riscv64",
		     "x86_64 host VMs");
	spec_done(&s);
}

static void test_flags_and_checks(void)
{
	struct run_spec s;
	struct sb_error err = {};

	CHECK(spec_init(&s) == 0);
	CHECK(spec_set(&s, "host_vm.kernel", "/boot/vmlinuz-6.1.0-57-amd64", "--kernel", &err) == 0);
	CHECK(spec_set(&s, "host_vm.memory", "3G", "--host-vm-memory", &err) == 0);
	CHECK(spec_set(&s, "host_vm.vcpus", "4", "--host-vm-vcpus", &err) == 0);
	CHECK(spec_set(&s, "host_vm.numa_nodes", "2", "--host-vm-numa-nodes", &err) == 0);
	CHECK(spec_set(&s, "host_vm.accel", "tcg", "--host-vm-accel", &err) == 0);
	CHECK(spec_set(&s, "host_vm.cmdline", "kvm.tdp_mmu=0", "--kernel-cmdline", &err) == 0);
	CHECK(s.host_vm.memory == 3ull << 30 && s.host_vm.vcpus == 4 && s.host_vm.numa_nodes == 2);
	CHECK(spec_uses_host_vm(&s) && !strcmp(spec_arm_kernel(&s, 0), "/boot/vmlinuz-6.1.0-57-amd64"));
	CHECK(spec_validate(&s, &err) == 0);
	expect_error(spec_set(&s, "host_vm.accel", "kqemu", "--host-vm-accel", &err), &err, "--host-vm-accel", "tcg");

	CHECK(spec_set(&s, "host_vm.vcpus", "3", "--host-vm-vcpus", &err) == 0);
	expect_error(spec_validate(&s, &err), &err, "spec.host_vm.numa_nodes", "evenly");
	CHECK(spec_set(&s, "host_vm.vcpus", "2", "--host-vm-vcpus", &err) == 0);
	CHECK(spec_set(&s, "vm.memory", "3G", "--memory", &err) == 0);
	expect_error(spec_validate(&s, &err), &err, "spec.host_vm.memory", "--host-vm-memory");
	CHECK(spec_set(&s, "vm.memory", "256M", "--memory", &err) == 0);
	CHECK(spec_set(&s, "vm.backend", "libvirt", "--backend", &err) == 0);
	expect_error(spec_validate(&s, &err), &err, "spec.host_vm", "qemu backend");
	spec_done(&s);

	/* some arms with a kernel, others without */
	CHECK(spec_init(&s) == 0);
	CHECK(spec_add_arm(&s, "a:kernel=/k/a", "--arm", &err) == 0);
	CHECK(spec_add_arm(&s, "b", "--arm", &err) == 0);
	expect_error(spec_validate(&s, &err), &err, "'a' has a kernel and arm 'b' none", "--kernel");
	spec_done(&s);
}

static void test_json(void)
{
	struct run_spec s, back;
	struct sb_error err = {};
	struct json_object *o = NULL, *h = NULL, *arms;

	/* no kernel arms: no host_vm in the spec's JSON */
	CHECK(spec_init(&s) == 0);
	CHECK(spec_to_json(&s, &o) == 0);
	CHECK(!json_object_object_get_ex(o, "host_vm", NULL));
	json_object_put(o);

	const char *text = "{\"host_vm\": {\"kernel\": \"/k/bzImage\", \"vcpus\": 2, \"accel\": \"auto\"},"
			   " \"arms\": [{\"label\": \"npt\", \"kernel\": \"/k/other\", \"knobs\": {\"module:kvm_amd.npt\": 1}},"
			   " {\"label\": \"base\"}]}";
	CHECK_MSG(spec_apply_json(&s, text, strlen(text), "t.json", &err) == 0, "%s", err.msg);
	CHECK(!strcmp(spec_arm_kernel(&s, 0), "/k/other") && !strcmp(spec_arm_kernel(&s, 1), "/k/bzImage"));
	CHECK(spec_to_json(&s, &o) == 0);
	CHECK(json_object_object_get_ex(o, "host_vm", &h));
	CHECK(json_object_object_get_ex(o, "arms", &arms));
	CHECK(json_object_object_get_ex(json_object_array_get_idx(arms, 0), "kernel", NULL));
	CHECK(!json_object_object_get_ex(json_object_array_get_idx(arms, 1), "kernel", NULL));

	/* what spec_to_json() wrote reads back to the same JSON */
	const char *out = json_object_to_json_string(o);
	CHECK(spec_init(&back) == 0);
	CHECK_MSG(spec_apply_json(&back, out, strlen(out), "back.json", &err) == 0, "%s", err.msg);
	struct json_object *o2 = NULL;
	CHECK(spec_to_json(&back, &o2) == 0);
	CHECK_MSG(!strcmp(out, json_object_to_json_string(o2)), "%s\nvs\n%s", out, json_object_to_json_string(o2));
	json_object_put(o2);
	json_object_put(o);
	spec_done(&back);

	const char *bad = "{\"arms\": [{\"label\": \"a\", \"kernel\": 5}]}";
	expect_error(spec_apply_json(&s, bad, strlen(bad), "t.json", &err), &err, "arms[0].kernel", "absolute path");
	spec_done(&s);
}

int main(void)
{
	test_arm_args();
	test_flags_and_checks();
	test_json();
	return 0;
}
