// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run spec: defaults, files, flags, and a table of invalid inputs, each
 * with the field path and the words the message must contain.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "spec.h"

struct bad_json {
	const char *json;
	const char *expect[3]; /* substrings of the message */
};

static const struct bad_json bad_json[] = {
	{ "{\"timing\": {\"pre_s\": -1}}", { "spec.timing.pre_s: must be > 0 (got -1)" } },
	{ "{\"timing\": {\"pre_s\": 0}}", { "spec.timing.pre_s", "> 0" } },
	{ "{\"timing\": {\"warmup_s\": -0.5}}", { "spec.timing.warmup_s", ">= 0", "-0.5" } },
	{ "{\"timing\": {\"interval_ms\": 50}}", { "spec.timing.interval_ms", "100 to 60000", "got 50" } },
	{ "{\"timing\": {\"interval_ms\": 250.5}}", { "spec.timing.interval_ms", "integer" } },
	{ "{\"timing\": {\"pre_s\": \"5\"}}", { "spec.timing.pre_s", "number of seconds", "\"5\"" } },
	{ "{\"timing\": {\"pre\": 5}}", { "spec.timing.pre: unknown field", "pre_s" } },
	{ "{\"timing\": 5}", { "spec.timing", "must be an object" } },
	{ "{\"repetitons\": 5}", { "spec.repetitons: unknown field", "repetitions" } },
	{ "{\"repetitions\": 0}", { "spec.repetitions", "1 to 1000" } },
	{ "{\"repetitions\": 1001}", { "spec.repetitions", "got 1001" } },
	{ "{\"repetitions\": true}", { "spec.repetitions", "integer" } },
	{ "{\"scenario\": \"numa-balancing\"}", { "spec.scenario", "numa-hinting", "numa-balancing" } },
	{ "{\"scenario\": \"numa-hinting\"}", { "spec.vm.backing", "memfd" } },
	{ "{\"scenario\": \"numa-hinting\", \"vm\": {\"backing\": \"memfd\", \"backend\": \"libvirt\"}}", { "spec.scenario \"numa-hinting\"", "qemu backend" } },
	{ "{\"scenario\": \"numa-hinting\", \"vm\": {\"backing\": \"memfd\"}, \"numa_hinting\": {\"steady_s\": 0.5}}", { "spec.numa_hinting.steady_s", "one sample interval" } },
	{ "{\"numa_hinting\": {\"steady_s\": 0}}", { "spec.numa_hinting.steady_s" } },
	{ "{\"scenario\": \"dirty-log\", \"vm\": {\"backend\": \"libvirt\"}}", { "spec.scenario \"dirty-log\"", "qemu backend" } },
	{ "{\"scenario\": \"dirty-log\", \"dirty_log\": {\"tracking\": \"ring\", \"ring_size\": 3000}}", { "spec.dirty_log.ring_size", "power of 2" } },
	{ "{\"dirty_log\": {\"ring_size\": 512}}", { "spec.dirty_log.ring_size", "1024 to 65536" } },
	{ "{\"dirty_log\": {\"tracking\": \"log\"}}", { "spec.dirty_log.tracking", "bitmap, ring" } },
	{ "{\"dirty_log\": {\"completion\": \"abort\"}}", { "spec.dirty_log.completion", "cancel, complete" } },
	{ "{\"dirty_log\": {\"downtime_limit_ms\": 0}}", { "spec.dirty_log.downtime_limit_ms" } },
	{ "{\"vm\": {\"memory\": \"lots\"}}", { "spec.vm.memory", "256M" } },
	{ "{\"vm\": {\"memory\": \"1M\"}}", { "spec.vm.memory", "16777216" } },
	{ "{\"vm\": {\"memory\": -5}}", { "spec.vm.memory", "negative" } },
	{ "{\"vm\": {\"memory\": \"99999999999999999999G\"}}", { "spec.vm.memory" } },
	{ "{\"vm\": {\"vcpus\": 0}}", { "spec.vm.vcpus", "1 to 255" } },
	{ "{\"vm\": {\"vcpus\": 256}}", { "spec.vm.vcpus", "got 256" } },
	{ "{\"vm\": {\"backend\": \"xen\"}}", { "spec.vm.backend", "qemu, libvirt", "xen" } },
	{ "{\"vm\": {\"backend\": \"libvirt\", \"libvirt\": {\"uri\": \"qemu+ssh://far/system\"}}}", { "spec.vm.libvirt.uri", "this host", "qemu:///system" } },
	{ "{\"vm\": {\"backend\": \"libvirt\", \"libvirt\": {\"uri\": \"xen:///\"}}}", { "spec.vm.libvirt.uri", "local QEMU" } },
	{ "{\"vm\": {\"backend\": \"libvirt\", \"user\": \"nobody\"}}", { "spec.vm.user", "qemu.conf" } },
	{ "{\"vm\": {\"backend\": \"libvirt\", \"backing\": \"anon-nothp\"}}", { "spec.vm.backing", "qemu backend" } },
	{ "{\"vm\": {\"libvirt\": {\"url\": \"qemu:///system\"}}}", { "spec.vm.libvirt.url", "unknown field", "uri" } },
	{ "{\"vm\": {\"backing\": \"thp\"}}", { "spec.vm.backing", "anon, anon-nothp, hugetlb" } },
	{ "{\"vm\": {\"machine\": \"pc; rm -rf /\"}}", { "spec.vm.machine", "characters" } },
	{ "{\"vm\": {\"cpu\": \"\"}}", { "spec.vm.cpu", "1 to 256" } },
	{ "{\"vm\": {\"user\": \"../root\"}}", { "spec.vm.user" } },
	{ "{\"vm\": {\"extra_args\": \"-m 1G\"}}", { "spec.vm.extra_args", "array of strings" } },
	{ "{\"vm\": {\"extra_args\": [\"-smp\", 4]}}", { "spec.vm.extra_args[1]", "string" } },
	{ "{\"vm\": {\"extra_args\": [\"-daemonize\"]}}", { "spec.vm.extra_args[0]", "-daemonize", "drop it" } },
	{ "{\"vm\": {\"extra_args\": [\"-qmp\", \"tcp::4444\"]}}", { "spec.vm.extra_args[0]", "-qmp" } },
	{ "{\"vm\": {\"prealloc\": \"yes\"}}", { "spec.vm.prealloc", "true or false" } },
	{ "{\"vm\": {\"hugepage_size\": \"2M\"}}", { "spec.vm.hugepage_size", "hugetlb" } },
	{ "{\"vm\": {\"backing\": \"hugetlb\", \"hugepage_size\": \"4M\"}}", { "spec.vm.hugepage_size", "2M or 1G" } },
	{ "{\"vm\": {\"backing\": \"hugetlb\", \"memory\": \"17M\"}}", { "spec.vm.memory", "multiple", "hugetlb" } },
	{ "{\"vm\": {\"memory\": 268439552}}", { "spec.vm.memory", "whole number of MiB" } },
	{ "{\"guest\": {\"kind\": \"linux\"}}", { "spec.guest.kind", "spec.vm.disk" } },
	{ "{\"guest\": {\"kind\": \"windows\"}}", { "spec.guest.kind", "micro, linux" } },
	{ "{\"guest\": {\"kind\": \"linux\"}, \"vm\": {\"disk\": \"guest.qcow2\"}}", { "spec.vm.disk", "absolute" } },
	{ "{\"vm\": {\"disk\": \"/images/guest.qcow2\"}}", { "spec.vm.disk", "micro guest" } },
	{ "{\"vm\": {\"disk\": \"/i.img\", \"disk_format\": \"vmdk\"}}", { "spec.vm.disk_format", "qcow2, raw" } },
	{ "{\"guest\": {\"kind\": \"linux\"}, \"vm\": {\"backend\": \"libvirt\"}}", { "spec.guest.kind", "vm.libvirt.domain" } },
	{ "{\"vm\": {\"backend\": \"libvirt\", \"libvirt\": {\"domain\": \"g\"}}}", { "spec.vm.libvirt.domain", "micro guest" } },
	{ "{\"guest\": {\"kind\": \"linux\"}, \"vm\": {\"backend\": \"libvirt\", \"libvirt\": {\"domain\": \"g\", \"xml\": \"/g.xml\"}}}", { "spec.vm.libvirt", "not both" } },
	{ "{\"guest\": {\"kind\": \"linux\"}, \"vm\": {\"backend\": \"libvirt\", \"libvirt\": {\"xml\": \"g.xml\"}}}", { "spec.vm.libvirt.xml", "absolute" } },
	{ "{\"guest\": {\"kind\": \"linux\", \"linux\": {\"method\": \"write64; reboot\"}}}", { "spec.guest.linux.method", "characters" } },
	{ "{\"guest\": {\"linux\": {\"workers\": 0}}}", { "spec.guest.linux.workers", "1 to 4096" } },
	{ "{\"guest\": {\"pattern\": \"write32\"}}", { "spec.guest.pattern", "write64, read64, rand-set, idle" } },
	{ "{\"guest\": {\"vcpu_patterns\": {\"x\": \"read64\"}}}", { "spec.guest.vcpu_patterns", "vCPU index" } },
	{ "{\"guest\": {\"vcpu_patterns\": {\"1\": \"nope\"}}}", { "spec.guest.vcpu_patterns.1", "read64" } },
	{ "{\"guest\": {\"vcpu_patterns\": {\"5\": \"read64\"}}}", { "spec.guest.vcpu_patterns.5", "does not exist" } },
	{ "{\"guest\": {\"vcpu_patterns\": {\"0\": \"read64\"}}}", { "spec.guest.vcpu_patterns.0", "probe" } },
	{ "{\"guest\": {\"probe\": {\"vcpu\": 2}}}", { "spec.guest.probe.vcpu", "does not exist", "0 to 1" } },
	{ "{\"guest\": {\"probe\": {\"vcpu\": -1}}}", { "spec.guest.probe.vcpu", "or null" } },
	{ "{\"guest\": {\"probe\": {\"gap\": 5}}}", { "spec.guest.probe.gap: unknown field", "gap_us" } },
	{ "{\"guest\": {\"region\": \"150%\"}}", { "spec.guest.region", "50%" } },
	{ "{\"guest\": {\"region\": \"1G\"}}", { "spec.guest.region", "do not fit" } },
	{ "{\"guest\": {\"page_size\": \"1g\"}}", { "spec.guest.page_size", "4k, 2m" } },
	{ "{\"guest\": {\"clock\": \"hpet\"}}", { "spec.guest.clock", "kvmclock" } },
	{ "{\"guest\": {\"telemetry_interval_ms\": 5}}", { "spec.guest.telemetry_interval_ms", "10 to 60000" } },
	{ "{\"guest\": {\"seed\": -1}}", { "spec.guest.seed", "non-negative" } },
	{ "{\"snapshot\": {\"sink\": \"s3\"}}", { "spec.snapshot.sink", "file, null" } },
	{ "{\"snapshot\": {\"sink\": \"null\", \"keep\": true}}", { "spec.snapshot.keep", "null sink" } },
	{ "{\"snapshot\": {\"max_bandwidth\": 0}}", { "spec.snapshot.max_bandwidth" } },
	{ "{\"snapshot\": {\"timeout_s\": 0}}", { "spec.snapshot.timeout_s", "> 0" } },
	{ "{\"bpf\": {\"enabled\": 1}}", { "spec.bpf.enabled", "true or false" } },
	{ "{\"bpf\": {\"stacks\": true}}", { "spec.bpf.stacks: unknown field", "enabled" } },
	{ "{\"knobs\": {\"kernel.numa_balancing\": \"0\"}}", { "spec.knobs", "sysctl:NAME" } },
	{ "{\"knobs\": {\"sysctl:../../etc/passwd\": \"0\"}}", { "spec.knobs", "not a knob name" } },
	{ "{\"knobs\": {\"sysctl:kernel..x\": \"0\"}}", { "spec.knobs", "not a knob name" } },
	{ "{\"knobs\": {\"module:kvm\": \"0\"}}", { "spec.knobs", "module:MODULE.PARAM" } },
	{ "{\"knobs\": {\"debug:sched/preempt\": \"full\"}}", { "spec.knobs", "debugfs:PATH" } },
	{ "{\"knobs\": {\"debugfs:../../proc/sys/kernel/numa_balancing\": \"0\"}}",
	  { "spec.knobs: knob 'debugfs:../../proc", "'..' are not allowed", "inside /sys/kernel/debug" } },
	{ "{\"knobs\": {\"debugfs:sched/../../x\": \"0\"}}", { "spec.knobs", "'..' are not allowed" } },
	{ "{\"knobs\": {\"debugfs:/sys/kernel/debug/sched/preempt\": \"full\"}}",
	  { "spec.knobs", "absolute", "drop the leading /sys/kernel/debug/" } },
	{ "{\"knobs\": {\"debugfs:/etc/passwd\": \"x\"}}", { "spec.knobs", "absolute", "relative to it" } },
	{ "{\"knobs\": {\"debugfs:sched//preempt\": \"full\"}}", { "spec.knobs", "empty component" } },
	{ "{\"knobs\": {\"debugfs:sched/\": \"full\"}}", { "spec.knobs", "empty component" } },
	{ "{\"knobs\": {\"debugfs:\": \"full\"}}", { "spec.knobs", "needs the file's path" } },
	{ "{\"knobs\": {\"debugfs:sched/pre empt\": \"full\"}}", { "spec.knobs", "letters, digits" } },
	{ "{\"arms\": [{\"label\": \"a\", \"knobs\": {\"debugfs:a/../b\": \"1\"}}]}", { "spec.arms[0].knobs", "'..'" } },
	{ "{\"knobs\": {\"sysctl:kernel.numa_balancing\": [0]}}", { "spec.knobs.sysctl:kernel.numa_balancing", "string or an integer" } },
	{ "{\"knobs\": []}", { "spec.knobs", "object" } },
	{ "{\"arms\": []}", { "spec.arms", "non-empty array" } },
	{ "{\"arms\": [{\"label\": \"a\"}, {\"label\": \"a\"}]}", { "spec.arms[1].label", "labels must differ" } },
	{ "{\"arms\": [{\"label\": \"has space\"}]}", { "spec.arms[0].label", "letters" } },
	{ "{\"arms\": [{\"knobs\": {}}]}", { "spec.arms[0].label" } },
	{ "{\"arms\": [{\"label\": \"a\", \"knob\": {}}]}", { "spec.arms[0].knob: unknown field" } },
	{ "{\"arms\": [{\"label\": \"a\", \"knobs\": {\"bad\": \"1\"}}]}", { "spec.arms[0].knobs", "not a knob name" } },
	{ "{\"timing\": {\"pre_s\": 0.5}}", { "spec.timing.interval_ms", "longer than the pre" } },
	{ "[1, 2]", { "must be a JSON object" } },
	{ "{\"repetitions\": 5", { "not valid JSON" } },
	{ "{} {}", { "text after the JSON object" } },
	{ "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":{\"i\":{\"j\":{\"k\":{\"l\":{\"m\":{\"n\":{\"o\":{\"p\":{\"q\":1}}}}}}}}}}}}}}}}}",
	  { "not valid JSON" } },
};

static void test_bad_json(void)
{
	for (size_t i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++) {
		struct run_spec spec;
		struct sb_error err = {};
		int r;

		CHECK(spec_init(&spec) == 0);
		r = spec_apply_json(&spec, bad_json[i].json, strlen(bad_json[i].json), NULL, &err);
		if (r >= 0)
			r = spec_validate(&spec, &err);
		CHECK_MSG(r < 0, "spec %s was accepted", bad_json[i].json);
		CHECK(err.code == r);
		for (size_t k = 0; k < 3 && bad_json[i].expect[k]; k++)
			CHECK_MSG(strstr(err.msg, bad_json[i].expect[k]), "spec %s: message \"%s\" lacks \"%s\"",
				  bad_json[i].json, err.msg, bad_json[i].expect[k]);
		spec_done(&spec);
	}
}

struct bad_flag {
	const char *field, *value, *expect[2];
};

static const struct bad_flag bad_flags[] = {
	{ "vm.memory", "12Q", { "--x: must be a size", "12Q" } },
	{ "vm.memory", "-1G", { "--x", "size" } },
	{ "vm.vcpus", "two", { "--x", "1 to 255" } },
	{ "vm.vcpus", "2.5", { "--x", "got 2.5" } },
	{ "timing.pre_s", "-1", { "--x: must be > 0 (got -1)" } },
	{ "timing.pre_s", "5q", { "--x", "number of seconds, or a duration with its unit" } },
	{ "timing.interval_ms", "2x", { "--x", "number of ms from 100 to 60000, or a duration" } },
	{ "timing.interval_ms", "150us", { "--x", "integer from 100 to 60000" } },
	{ "timing.post_s", "inf", { "--x", "number of seconds" } },
	{ "guest.pattern", "write", { "--x", "write64" } },
	{ "guest.probe.vcpu", "-3", { "--x", "or none" } },
	{ "guest.vcpu_patterns", "read64", { "--x", "VCPU=PATTERN" } },
	{ "snapshot.sink", "tape", { "--x", "file, null" } },
	{ "bpf.enabled", "maybe", { "--x", "true or false" } },
	{ "knobs", "sysctl:kernel.numa_balancing", { "--x", "NAME=VALUE" } },
	{ "knobs", "numa=0", { "--x", "not a knob name" } },
	{ "knobs", "sysctl:vm.x=a\nb", { "--x", "one line" } },
	{ "arms", "has space", { "--x", "not a label" } },
	{ "arms", "a:numa=0", { "--x", "not a knob name" } },
	{ "arms", "a:debugfs:../x=0", { "--x: knob 'debugfs:../x' is not a knob name", "'..'" } },
	{ "knobs", "debugfs:/sys/kernel/debug/x=0", { "--x", "absolute" } },
	{ "vm.extra_args", "-runas", { "--x", "vm.user" } },
	{ "nonsense", "1", { "--x", "no spec field" } },
};

/* A flag in seconds or ms takes a duration with its unit too. */
static void test_duration_flags(void)
{
	struct run_spec spec;
	struct sb_error err = {};

	CHECK(spec_init(&spec) == 0);
	CHECK(spec_set(&spec, "timing.pre_s", "1500ms", "--pre", &err) == 0 && spec.timing.pre_s == 1.5);
	CHECK(spec_set(&spec, "timing.post_s", "2m", "--post", &err) == 0 && spec.timing.post_s == 120);
	CHECK(spec_set(&spec, "timing.interval_ms", "2s", "--interval", &err) == 0 && spec.timing.interval_ms == 2000);
	CHECK(spec_set(&spec, "timing.interval_ms", "0.3s", "--interval", &err) == 0 && spec.timing.interval_ms == 300);
	CHECK(spec_set(&spec, "guest.telemetry_interval_ms", "250", "--telemetry-interval", &err) == 0 &&
	      spec.guest.telemetry_interval_ms == 250);
	spec_done(&spec);
}

static void test_bad_flags(void)
{
	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		struct run_spec spec;
		struct sb_error err = {};

		CHECK(spec_init(&spec) == 0);
		CHECK_MSG(spec_set(&spec, bad_flags[i].field, bad_flags[i].value, "--x", &err) < 0, "%s=%s accepted",
			  bad_flags[i].field, bad_flags[i].value);
		for (size_t k = 0; k < 2 && bad_flags[i].expect[k]; k++)
			CHECK_MSG(strstr(err.msg, bad_flags[i].expect[k]), "%s=%s: message \"%s\" lacks \"%s\"",
				  bad_flags[i].field, bad_flags[i].value, err.msg, bad_flags[i].expect[k]);
		spec_done(&spec);
	}
}

static const char *jstr(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v;

	CHECK(json_object_object_get_ex(o, a, &v));
	if (b)
		CHECK(json_object_object_get_ex(v, b, &v));
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

static void test_defaults_and_round_trip(void)
{
	struct run_spec spec, again;
	struct json_object *j = NULL, *j2 = NULL;
	struct sb_error err = {};
	const char *text;

	CHECK(spec_init(&spec) == 0);
	CHECK(spec_validate(&spec, &err) == 0);
	CHECK(spec.n_arms == 1 && !strcmp(spec.arms[0].label, "default"));
	CHECK(spec.timing.interval_ms == 1000);
	CHECK(spec.bpf.enabled);
	CHECK(spec_to_json(&spec, &j) == 0);
	CHECK(!strcmp(jstr(j, "scenario", NULL), "\"background-snapshot\""));
	CHECK(!strcmp(jstr(j, "vm", "memory"), "268435456"));
	CHECK(!strcmp(jstr(j, "guest", "region"), "\"50%\""));
	CHECK(!strcmp(jstr(j, "vm", "hugepage_size"), "null"));
	CHECK(!strcmp(jstr(j, "snapshot", "max_bandwidth"), "null"));

	/* a full spec round-trips through JSON unchanged */
	static const char full[] =
		"{\"scenario\": \"background-snapshot\", \"description\": \"seed 000\", \"repetitions\": 3,"
		" \"vm\": {\"backend\": \"qemu\", \"memory\": \"1G\", \"vcpus\": 4, \"machine\": \"q35\","
		"  \"cpu\": \"host,-arch-capabilities\", \"backing\": \"hugetlb\", \"hugepage_size\": \"2M\","
		"  \"prealloc\": true, \"user\": \"nobody\", \"extra_args\": [\"-rtc\", \"base=utc\"]},"
		" \"guest\": {\"kind\": \"micro\", \"pattern\": \"read64\", \"vcpu_patterns\": {\"2\": \"rand-set\"},"
		"  \"region\": \"256M\", \"page_size\": \"2m\", \"probe\": {\"vcpu\": 3, \"gap_us\": 50}, \"seed\": 7,"
		"  \"clock\": \"kvmclock\", \"telemetry_interval_ms\": 50},"
		" \"snapshot\": {\"sink\": \"file\", \"keep\": true, \"max_bandwidth\": \"100M\", \"timeout_s\": 30},"
		" \"timing\": {\"warmup_s\": 0, \"pre_s\": 2.5, \"post_s\": 3, \"interval_ms\": 250},"
		" \"bpf\": {\"enabled\": false},"
		" \"knobs\": {\"sysctl:kernel.numa_balancing\": 0},"
		" \"arms\": [{\"label\": \"stock\", \"knobs\": {}},"
		"          {\"label\": \"no-halt-poll\", \"knobs\": {\"module:kvm.halt_poll_ns\": \"0\","
		"                                            \"sysctl:kernel.numa_balancing\": \"1\","
		"                                            \"debugfs:sched/numa_balancing/scan_period_min_ms\": 100}}]}";
	spec_done(&spec);
	CHECK(spec_init(&spec) == 0);
	CHECK_MSG(spec_apply_json(&spec, full, strlen(full), "full.json", &err) == 0, "%s", err.msg);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);
	CHECK(spec.vm.memory == 1ull << 30);
	CHECK(spec.vm.hugepage_size == 2ull << 20);
	CHECK(spec.guest.region_bytes == 256ull << 20 && spec.guest.region_percent == 0);
	CHECK(spec.guest.probe_vcpu == 3);
	CHECK(spec.snapshot.max_bandwidth == 100ull << 20);
	CHECK(spec_total_repetitions(&spec) == 6);
	CHECK(!strcmp(spec.knobs.items[0].value, "0")); /* integers become strings */
	struct spec_knobs k = {};
	CHECK(spec_arm_knobs(&spec, 1, &k) == 0);
	CHECK(k.n == 3);
	for (size_t i = 0; i < k.n; i++)
		if (!strcmp(k.items[i].name, "sysctl:kernel.numa_balancing"))
			CHECK(!strcmp(k.items[i].value, "1")); /* the arm wins */
	spec_knobs_done(&k);
	CHECK(spec_arm_knobs(&spec, 0, &k) == 0);
	CHECK(k.n == 1 && !strcmp(k.items[0].value, "0"));
	spec_knobs_done(&k);
	CHECK(spec_arm_knobs(&spec, 2, &k) == -EINVAL);

	json_object_put(j);
	CHECK(spec_to_json(&spec, &j) == 0);
	text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	CHECK(spec_init(&again) == 0);
	CHECK_MSG(spec_apply_json(&again, text, strlen(text), NULL, &err) == 0, "%s: %s", text, err.msg);
	CHECK(spec_to_json(&again, &j2) == 0);
	CHECK_MSG(!strcmp(text, json_object_to_json_string_ext(j2, JSON_C_TO_STRING_PLAIN)), "%s\n!=\n%s", text,
		  json_object_to_json_string_ext(j2, JSON_C_TO_STRING_PLAIN));
	CHECK(!strcmp(jstr(j, "guest", "vcpu_patterns"), "{\"2\":\"rand-set\"}"));
	CHECK(!strcmp(jstr(j, "timing", "pre_s"), "2.5"));
	json_object_put(j);
	json_object_put(j2);
	spec_done(&again);
	spec_done(&spec);
}

/* dirty-log's section: only in its specs' JSON, and it round-trips */
static void test_dirty_log(void)
{
	static const char text[] = "{\"scenario\": \"dirty-log\", \"dirty_log\": {\"tracking\": \"ring\", \"ring_size\": 8192,"
				   " \"iterate_s\": 12.5, \"max_bandwidth\": \"16M\", \"downtime_limit_ms\": 2, \"completion\": \"complete\"}}";
	struct run_spec spec, again;
	struct json_object *j = NULL, *j2 = NULL;
	struct sb_error err = {};
	const char *out;

	CHECK(spec_init(&spec) == 0);
	CHECK(spec_to_json(&spec, &j) == 0);
	CHECK(!json_object_object_get_ex(j, "dirty_log", NULL)); /* background-snapshot specs stay as they were */
	json_object_put(j);
	CHECK_MSG(spec_apply_json(&spec, text, strlen(text), NULL, &err) == 0, "%s", err.msg);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);
	CHECK(spec.scenario == SPEC_SCENARIO_DIRTY_LOG && spec.dirty_log.tracking == SPEC_DIRTY_RING);
	CHECK(spec.dirty_log.ring_size == 8192 && spec.dirty_log.max_bandwidth == 16ull << 20);
	CHECK(spec.dirty_log.downtime_limit_ms == 2 && spec.dirty_log.completion == SPEC_COMPLETION_COMPLETE);
	CHECK(spec_to_json(&spec, &j) == 0);
	CHECK(!strcmp(jstr(j, "dirty_log", "iterate_s"), "12.5"));
	CHECK(!strcmp(jstr(j, "dirty_log", "tracking"), "\"ring\""));
	out = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	CHECK(spec_init(&again) == 0);
	CHECK_MSG(spec_apply_json(&again, out, strlen(out), NULL, &err) == 0, "%s: %s", out, err.msg);
	CHECK(spec_to_json(&again, &j2) == 0);
	CHECK(!strcmp(out, json_object_to_json_string_ext(j2, JSON_C_TO_STRING_PLAIN)));
	CHECK(spec_set(&spec, "dirty_log.iterate_s", "0.5", "--iterate", &err) == 0);
	CHECK(spec_validate(&spec, &err) == -EINVAL && strstr(err.msg, "spec.dirty_log.iterate_s"));
	json_object_put(j);
	json_object_put(j2);
	spec_done(&again);
	spec_done(&spec);
}

/* postcopy-restore's section: only in its specs' JSON, it round-trips, and it needs a fault-linear vCPU */
static void test_postcopy(void)
{
	static const char text[] = "{\"scenario\": \"postcopy-restore\", \"vm\": {\"vcpus\": 1},"
				   " \"guest\": {\"pattern\": \"fault-linear\", \"probe\": {\"vcpu\": null}},"
				   " \"postcopy\": {\"access\": \"write\", \"preempt\": true, \"background_bandwidth\": \"64M\","
				   " \"timeout_s\": 30}}";
	struct run_spec spec, again;
	struct json_object *j = NULL, *j2 = NULL;
	struct sb_error err = {};
	const char *out;

	CHECK(spec_init(&spec) == 0);
	CHECK(spec_to_json(&spec, &j) == 0);
	CHECK(!json_object_object_get_ex(j, "postcopy", NULL));
	json_object_put(j);
	CHECK_MSG(spec_apply_json(&spec, text, strlen(text), NULL, &err) == 0, "%s", err.msg);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);
	CHECK(spec.scenario == SPEC_SCENARIO_POSTCOPY_RESTORE && spec.postcopy.access == SPEC_FAULT_WRITE);
	CHECK(spec.postcopy.preempt && spec.postcopy.background_bandwidth == 64ull << 20 && spec.postcopy.timeout_s == 30);
	CHECK(spec_scenario_has_destination(spec.scenario) && !spec_scenario_has_destination(SPEC_SCENARIO_BACKGROUND_SNAPSHOT));
	CHECK(spec_to_json(&spec, &j) == 0);
	CHECK(!strcmp(jstr(j, "postcopy", "access"), "\"write\""));
	CHECK(!strcmp(jstr(j, "postcopy", "background_bandwidth"), "67108864"));
	CHECK(!json_object_object_get_ex(j, "dirty_log", NULL));
	out = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	CHECK(spec_init(&again) == 0);
	CHECK_MSG(spec_apply_json(&again, out, strlen(out), NULL, &err) == 0, "%s: %s", out, err.msg);
	CHECK(spec_to_json(&again, &j2) == 0);
	CHECK(!strcmp(out, json_object_to_json_string_ext(j2, JSON_C_TO_STRING_PLAIN)));
	/* no vCPU to time: the spec says which field to set */
	CHECK(spec_set(&spec, "guest.pattern", "write64", "--pattern", &err) == 0);
	CHECK(spec_validate(&spec, &err) == -EINVAL && strstr(err.msg, "spec.guest.pattern") && strstr(err.msg, "fault-linear"));
	CHECK(spec_set(&spec, "postcopy.access", "exec", NULL, &err) == -EINVAL && strstr(err.msg, "read, write"));
	CHECK(spec_set(&spec, "postcopy.background_bandwidth", "1K", NULL, &err) == -EINVAL);
	json_object_put(j);
	json_object_put(j2);
	spec_done(&again);
	spec_done(&spec);
}

/* uffd-restore: the region and chunk, an arm's own chunk through JSON and --arm, and their checks */
static void test_uffd_restore(void)
{
	static const char text[] = "{\"scenario\": \"uffd-restore\", \"uffd_restore\": {\"region\": \"32M\", \"chunk\": \"4K\"},"
				   " \"arms\": [{\"label\": \"c512\", \"chunk\": \"512K\"}, {\"label\": \"c2m\", \"chunk\": 2097152},"
				   " {\"label\": \"spec\"}]}";
	struct run_spec spec, again;
	struct json_object *j = NULL, *j2 = NULL;
	struct sb_error err = {};
	const char *out;

	CHECK(spec_init(&spec) == 0);
	CHECK_MSG(spec_apply_json(&spec, text, strlen(text), NULL, &err) == 0, "%s", err.msg);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);
	CHECK(spec.scenario == SPEC_SCENARIO_UFFD_RESTORE && spec.uffd_restore.region == 32ull << 20);
	CHECK(spec_arm_chunk(&spec, 0) == 512 << 10 && spec_arm_chunk(&spec, 1) == 2 << 20 && spec_arm_chunk(&spec, 2) == 4096);
	/* the inner spec of a host VM carries the arm's chunk */
	CHECK(spec_to_json(&spec, &j) == 0);
	out = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	CHECK_MSG(strstr(out, "\"chunk\":524288") && strstr(out, "\"uffd_restore\":{"), "%s", out);
	CHECK(spec_init(&again) == 0);
	CHECK_MSG(spec_apply_json(&again, out, strlen(out), NULL, &err) == 0, "%s: %s", out, err.msg);
	CHECK(spec_to_json(&again, &j2) == 0);
	CHECK(!strcmp(out, json_object_to_json_string_ext(j2, JSON_C_TO_STRING_PLAIN)));
	/* --arm's chunk=: a size in range; a power of 2 dividing the region */
	CHECK(spec_add_arm(&spec, "odd:chunk=12K", "--arm", &err) == 0);
	CHECK(spec_validate(&spec, &err) == -EINVAL && strstr(err.msg, "spec.arms[3].chunk") && strstr(err.msg, "power of 2"));
	CHECK(spec_add_arm(&spec, "big:chunk=4M", "--arm", &err) == -EINVAL && strstr(err.msg, "chunk=4M"));
	CHECK(spec_add_arm(&spec, "tiny:chunk=1K", "--arm", &err) == -EINVAL && strstr(err.msg, "chunk=1K"));
	CHECK(spec_set(&spec, "uffd_restore.chunk", "3000", NULL, &err) < 0 || spec_validate(&spec, &err) == -EINVAL);
	spec_done(&spec);
	CHECK(spec_init(&spec) == 0);
	CHECK_MSG(spec_apply_json(&spec, text, strlen(text), NULL, &err) == 0, "%s", err.msg);
	CHECK(spec_set(&spec, "uffd_restore.region", "3M", NULL, &err) == 0);
	CHECK(spec_validate(&spec, &err) == -EINVAL && strstr(err.msg, "spec.uffd_restore.region") && strstr(err.msg, "'c2m'"));
	/* a chunk where no handler runs */
	CHECK(spec_set(&spec, "uffd_restore.region", "32M", NULL, &err) == 0);
	CHECK(spec_set(&spec, "scenario", "background-snapshot", NULL, &err) == 0);
	CHECK(spec_validate(&spec, &err) == -EINVAL && strstr(err.msg, "spec.arms[0].chunk") && strstr(err.msg, "uffd-restore"));
	const char *bad = "{\"arms\": [{\"label\": \"a\", \"chunk\": true}]}";
	CHECK(spec_apply_json(&spec, bad, strlen(bad), NULL, &err) == -EINVAL && strstr(err.msg, "chunk"));
	json_object_put(j);
	json_object_put(j2);
	spec_done(&again);
	spec_done(&spec);
}

static void test_flags_override(void)
{
	struct run_spec spec;
	struct sb_error err = {};
	char path[] = "/tmp/test-spec-XXXXXX";
	int fd;
	static const char file[] = "{\"repetitions\": 3, \"vm\": {\"memory\": \"512M\"}, \"guest\": {\"probe\": {\"vcpu\": 1}}}";

	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, file, strlen(file)) == (ssize_t)strlen(file));
	close(fd);

	CHECK(spec_init(&spec) == 0);
	int r = spec_apply_file(&spec, path, &err);
	unlink(path);
	CHECK_MSG(r == 0, "%s", err.msg);
	CHECK(spec.repetitions == 3 && spec.vm.memory == 512ull << 20 && spec.guest.probe_vcpu == 1);
	/* flags come after the file and win */
	CHECK(spec_set(&spec, "repetitions", "2", "--repetitions", &err) == 0);
	CHECK(spec_set(&spec, "vm.memory", "256MiB", "--memory", &err) == 0);
	CHECK(spec_set(&spec, "guest.probe.vcpu", "none", "--probe-vcpu", &err) == 0);
	CHECK(spec_set(&spec, "guest.region", "64M", "--region", &err) == 0);
	CHECK(spec_set(&spec, "snapshot.sink", "null", "--sink", &err) == 0);
	CHECK(spec_set(&spec, "vm.extra_args", "-rtc", "--qemu-arg", &err) == 0);
	CHECK(spec_set(&spec, "vm.extra_args", "base=utc", "--qemu-arg", &err) == 0);
	CHECK(spec_set(&spec, "knobs", "sysctl:kernel.numa_balancing=0", "--knob", &err) == 0);
	CHECK(spec_set(&spec, "knobs", "sysctl:kernel.numa_balancing=1", "--knob", &err) == 0);
	CHECK(spec_set(&spec, "guest.vcpu_patterns", "1=read64", "--vcpu-pattern", &err) == 0);
	CHECK(spec_set(&spec, "bpf.enabled", "false", "--bpf", &err) == 0);
	CHECK(spec_set(&spec, "vm.cpu", "none", "--cpu", &err) == 0);
	CHECK(spec.repetitions == 2 && spec.vm.memory == 256ull << 20 && spec.guest.probe_vcpu == -1);
	CHECK(spec.guest.region_bytes == 64ull << 20);
	CHECK(spec.snapshot.sink_null);
	CHECK(spec.vm.n_extra_args == 2 && !strcmp(spec.vm.extra_args[1], "base=utc") && !spec.vm.extra_args[2]);
	CHECK(spec.knobs.n == 1 && !strcmp(spec.knobs.items[0].value, "1"));
	CHECK(!strcmp(spec.guest.vcpu_pattern[1], "read64"));
	CHECK(!spec.bpf.enabled && !spec.vm.cpu);
	CHECK_MSG(spec_validate(&spec, &err) == 0, "%s", err.msg);

	/* arms from flags: the first replaces the default arm */
	CHECK(spec_add_arm(&spec, "stock", "--arm", &err) == 0);
	CHECK(spec_add_arm(&spec, "patched:sysctl:kernel.numa_balancing=0,module:kvm.halt_poll_ns=0", "--arm", &err) == 0);
	CHECK(spec.n_arms == 2 && !strcmp(spec.arms[0].label, "stock"));
	CHECK(spec.arms[1].knobs.n == 2 && !strcmp(spec.arms[1].knobs.items[1].name, "module:kvm.halt_poll_ns"));
	/* a debugfs path holds ':' and '/', never ',' or '=' */
	CHECK_MSG(spec_add_arm(&spec, "numa:debugfs:sched/numa_balancing/scan_period_min_ms=100,debugfs:dri/0000:00:02.0/x=1",
			       "--arm", &err) == 0,
		  "%s", err.msg);
	CHECK(spec.arms[2].knobs.n == 2 &&
	      !strcmp(spec.arms[2].knobs.items[0].name, "debugfs:sched/numa_balancing/scan_period_min_ms") &&
	      !strcmp(spec.arms[2].knobs.items[0].value, "100") &&
	      !strcmp(spec.arms[2].knobs.items[1].name, "debugfs:dri/0000:00:02.0/x"));
	CHECK(spec_add_arm(&spec, "stock", "--arm", &err) < 0 && strstr(err.msg, "twice"));
	spec_done(&spec);

	CHECK(spec_init(&spec) == 0);
	CHECK(spec_apply_file(&spec, "/nonexistent/spec.json", &err) == -ENOENT);
	CHECK(strstr(err.msg, "/nonexistent/spec.json"));
	CHECK(spec_apply_file(&spec, "/tmp", &err) == -EISDIR);
	spec_done(&spec);
}

static void test_names(void)
{
	uint64_t v;

	CHECK(spec_parse_size("4096", &v) == 0 && v == 4096);
	CHECK(spec_parse_size("2M", &v) == 0 && v == 2u << 20);
	CHECK(spec_parse_size("2MiB", &v) == 0 && v == 2u << 20);
	CHECK(spec_parse_size("1GB", &v) == 0 && v == 1u << 30);
	CHECK(spec_parse_size("3k", &v) == 0 && v == 3072);
	CHECK(spec_parse_size("1.5G", &v) < 0);
	CHECK(spec_parse_size("G", &v) < 0);
	CHECK(spec_parse_size("", &v) < 0);
	CHECK(spec_parse_size("20000000T", &v) == -ERANGE);
	CHECK(spec_knob_name_valid("sysctl:kernel.numa_balancing"));
	CHECK(spec_knob_name_valid("sysctl:net.ipv4.tcp_rmem"));
	CHECK(spec_knob_name_valid("module:kvm_amd.npt"));
	CHECK(!spec_knob_name_valid("module:kvm.halt.poll"));
	CHECK(!spec_knob_name_valid("sysctl:kernel"));
	CHECK(!spec_knob_name_valid("sysctl:kernel/../x.y"));
	CHECK(!spec_knob_name_valid("sysctl:.x.y"));
	CHECK(!spec_knob_name_valid("sysctl:x.y."));
	CHECK(!spec_knob_name_valid("sysfs:x.y"));
	CHECK(spec_label_valid("v6.18-rc1+fix"));
	CHECK(!spec_label_valid("-x"));
	CHECK(!spec_label_valid(""));
	CHECK(!spec_label_valid("a/b"));
}

int main(void)
{
	test_names();
	test_bad_json();
	test_bad_flags();
	test_duration_flags();
	test_defaults_and_round_trip();
	test_dirty_log();
	test_postcopy();
	test_uffd_restore();
	test_flags_override();
	return 0;
}
