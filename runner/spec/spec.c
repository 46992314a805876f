// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The run spec. One table lists every field with its JSON path, type and
 * bounds; the JSON walker and the command-line setter both go through it,
 * so a file and a flag accept exactly the same values and give the same
 * messages (naming "spec.<path>" or the flag).
 */
#include "spec.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "json-build.h"
#include "json-util.h"
#include "macro.h"
#include "parse-number.h"
#include "qemu-binary.h"
#include "strv.h"
#include "wire.h"

#define SPEC_MAX_DEPTH 16

static const char *const scenario_names[] = { "background-snapshot", "dirty-log", "postcopy-restore", "numa-hinting", "uffd-restore", NULL };
static const char *const access_names[] = { "read", "write", NULL };
static const char *const tracking_names[] = { "bitmap", "ring", NULL };
static const char *const completion_names[] = { "cancel", "complete", NULL };
static const char *const backing_names[] = { "anon", "anon-nothp", "hugetlb", "memfd", NULL };
static const char *const page_size_names[] = { "4k", "2m", NULL };
static const char *const sink_names[] = { "file", "null", NULL };
static const char *const backend_names[] = { "qemu", "libvirt", NULL };
static const char *const kind_names[] = { "micro", "linux", NULL };
/* the guest's names (wire.h), in the order the spec's messages list them */
static const char *const pattern_names[] = { GUEST_PATTERN_NAME_WRITE64, GUEST_PATTERN_NAME_READ64,
					     GUEST_PATTERN_NAME_RAND_SET, GUEST_PATTERN_NAME_IDLE,
					     GUEST_PATTERN_NAME_FAULT_LINEAR, NULL };
static const char *const disk_format_names[] = { "qcow2", "raw", NULL };
static const char *const clock_names[] = { "auto", "kvmclock", "cpuid", "pit", NULL };
static const char *const accel_names[] = { "auto", "kvm", "tcg", NULL };

enum ftype {
	F_OBJECT,      /* a nested object of fields */
	F_UINT,        /* unsigned in [min, max] */
	F_U64,         /* uint64_t, any */
	F_SIZE,        /* uint64_t bytes: integer or "256M"; nullable -> 0 */
	F_SECONDS,     /* double in [min, max] (min exclusive when excl) */
	F_BOOL,
	F_STRING,      /* char *, checked by a charset; nullable -> NULL */
	F_CHOICE,      /* char * from choices */
	F_ENUM,        /* int index into choices */
	F_CONST,       /* must be choices[0], not stored */
	F_SINK,        /* "file" | "null" -> snapshot.sink_null */
	F_STRV,        /* vm.extra_args */
	F_KNOBS,
	F_ARMS,
	F_REGION,      /* guest.region: size or "N%" */
	F_VCPU_PATTERNS,
	F_PROBE_VCPU,  /* int or null */
};

struct field {
	const char *path;
	enum ftype type;
	size_t offset;
	double min, max;
	bool excl;                  /* min is exclusive */
	bool nullable;
	const char *const *choices;
	const char *charset;        /* F_STRING: allowed characters, NULL: any printable */
	size_t max_len;             /* F_STRING */
	/* spec_to_json(): written only when this holds (NULL: always); an object's fields go with it */
	bool (*when)(const struct run_spec *spec);
	/* spec_to_json(): the field's own JSON, where its type's does not say it (NULL: by type) */
	struct json_object *(*to_json)(const struct run_spec *spec);
};

#define OFF(m) offsetof(struct run_spec, m)

static const char machine_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789._-";
static const char cpu_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-,=+";
static const char domain_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-";
static const char path_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-/";
/* and '~', which Debian versions have (the QEMU cache's /var/cache/snapbench/qemu/10.0.2+ds-2+deb13u1~bpo12+1/) */
static const char qemu_path_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-/~";
static const char vm_bytes_chars[] = "0123456789KMGTkmgtbB%";
static const char user_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

/* ---- what spec_to_json() writes besides a field's value by its type ---- */

static bool has_description(const struct run_spec *spec)
{
	return spec->description != NULL;
}

static bool has_qemu(const struct run_spec *spec)
{
	return spec->vm.qemu != NULL;
}

static bool has_disk(const struct run_spec *spec)
{
	return spec->vm.disk != NULL;
}

static bool libvirt_backend(const struct run_spec *spec)
{
	return spec->vm.backend == SPEC_BACKEND_LIBVIRT;
}

static bool linux_guest(const struct run_spec *spec)
{
	return spec->guest.kind == SPEC_GUEST_LINUX;
}

/* a scenario's section only in its own specs: the other scenarios' reports stay as they were */
static bool dirty_log_scenario(const struct run_spec *spec)
{
	return spec->scenario == SPEC_SCENARIO_DIRTY_LOG;
}

static bool postcopy_scenario(const struct run_spec *spec)
{
	return spec->scenario == SPEC_SCENARIO_POSTCOPY_RESTORE;
}

static bool numa_scenario(const struct run_spec *spec)
{
	return spec->scenario == SPEC_SCENARIO_NUMA_HINTING;
}

static bool uffd_restore_scenario(const struct run_spec *spec)
{
	return spec->scenario == SPEC_SCENARIO_UFFD_RESTORE;
}

/* kernel arms, and --no-host-vm too, so that the choice travels to snapbenchd's worker */
static bool host_vm_section(const struct run_spec *spec)
{
	return spec_uses_host_vm(spec) || !spec->host_vm.fallback;
}

/* hugetlb's page size, its default filled in; null with another backing */
static struct json_object *hugepage_size_json(const struct run_spec *spec)
{
	if (spec->vm.backing != SPEC_BACKING_HUGETLB)
		return NULL;
	return json_object_new_uint64(spec->vm.hugepage_size ? spec->vm.hugepage_size : 2ull << 20);
}

static struct json_object *sink_json(const struct run_spec *spec)
{
	return json_object_new_string(spec->snapshot.sink_null ? "null" : "file");
}

static struct json_object *region_json(const struct run_spec *spec)
{
	char buf[16];

	if (spec->guest.region_bytes)
		return json_object_new_uint64(spec->guest.region_bytes);
	snprintf(buf, sizeof(buf), "%u%%", spec->guest.region_percent);
	return json_object_new_string(buf);
}

static struct json_object *vcpu_patterns_json(const struct run_spec *spec)
{
	struct json_object *o = json_object_new_object();
	char idx[16];

	for (unsigned i = 0; o && i < SPEC_MAX_VCPUS; i++)
		if (spec->guest.vcpu_pattern[i]) {
			snprintf(idx, sizeof(idx), "%u", i);
			if (json_object_object_add(o, idx, json_object_new_string(spec->guest.vcpu_pattern[i])) < 0) {
				json_object_put(o);
				return NULL;
			}
		}
	return o;
}

static struct json_object *probe_vcpu_json(const struct run_spec *spec)
{
	return spec->guest.probe_vcpu >= 0 ? json_object_new_int(spec->guest.probe_vcpu) : NULL;
}

static struct json_object *knobs_json(const struct spec_knobs *k);

static struct json_object *run_knobs_json(const struct run_spec *spec)
{
	return knobs_json(&spec->knobs);
}

static struct json_object *arms_json(const struct run_spec *spec);

static const struct field fields[] = {
	{ .path = "scenario", .type = F_ENUM, .offset = OFF(scenario), .choices = scenario_names },
	{ .path = "description", .type = F_STRING, .offset = OFF(description), .nullable = true, .max_len = 1024, .when = has_description },
	{ .path = "repetitions", .type = F_UINT, .offset = OFF(repetitions), .min = 1, .max = SPEC_MAX_REPETITIONS },
	{ .path = "vm", .type = F_OBJECT },
	{ .path = "vm.backend", .type = F_ENUM, .offset = OFF(vm.backend), .choices = backend_names },
	{ .path = "vm.memory", .type = F_SIZE, .offset = OFF(vm.memory), .min = (double)SPEC_MIN_MEMORY, .max = (double)SPEC_MAX_MEMORY },
	{ .path = "vm.vcpus", .type = F_UINT, .offset = OFF(vm.vcpus), .min = 1, .max = SPEC_MAX_VCPUS },
	{ .path = "vm.machine", .type = F_STRING, .offset = OFF(vm.machine), .charset = machine_chars, .max_len = 64 },
	{ .path = "vm.cpu", .type = F_STRING, .offset = OFF(vm.cpu), .nullable = true, .charset = cpu_chars, .max_len = 256 },
	{ .path = "vm.backing", .type = F_ENUM, .offset = OFF(vm.backing), .choices = backing_names },
	{ .path = "vm.hugepage_size", .type = F_SIZE, .offset = OFF(vm.hugepage_size), .min = 4096, .max = (double)(1ull << 30), .nullable = true, .to_json = hugepage_size_json },
	{ .path = "vm.prealloc", .type = F_BOOL, .offset = OFF(vm.prealloc) },
	{ .path = "vm.accel", .type = F_CHOICE, .offset = OFF(vm.accel), .choices = accel_names },
	{ .path = "vm.user", .type = F_STRING, .offset = OFF(vm.user), .nullable = true, .charset = user_chars, .max_len = 32 },
	{ .path = "vm.qemu", .type = F_STRING, .offset = OFF(vm.qemu), .nullable = true, .charset = qemu_path_chars, .max_len = 4096, .when = has_qemu },
	{ .path = "vm.extra_args", .type = F_STRV, .offset = OFF(vm.extra_args) },
	{ .path = "vm.disk", .type = F_STRING, .offset = OFF(vm.disk), .nullable = true, .charset = path_chars, .max_len = 4096, .when = has_disk },
	{ .path = "vm.disk_format", .type = F_CHOICE, .offset = OFF(vm.disk_format), .choices = disk_format_names, .when = has_disk },
	{ .path = "vm.libvirt", .type = F_OBJECT, .when = libvirt_backend },
	{ .path = "vm.libvirt.uri", .type = F_STRING, .offset = OFF(vm.libvirt.uri), .max_len = 1024 },
	{ .path = "vm.libvirt.domain", .type = F_STRING, .offset = OFF(vm.libvirt.domain), .nullable = true, .charset = domain_chars, .max_len = 200 },
	{ .path = "vm.libvirt.xml", .type = F_STRING, .offset = OFF(vm.libvirt.xml), .nullable = true, .max_len = 4096 },
	{ .path = "vm.libvirt.restart", .type = F_BOOL, .offset = OFF(vm.libvirt.restart) },
	{ .path = "guest", .type = F_OBJECT },
	{ .path = "guest.kind", .type = F_ENUM, .offset = OFF(guest.kind), .choices = kind_names },
	{ .path = "guest.linux", .type = F_OBJECT, .when = linux_guest },
	{ .path = "guest.linux.stress_ng", .type = F_STRING, .offset = OFF(guest.linux_guest.stress_ng), .charset = path_chars, .max_len = 1024 },
	{ .path = "guest.linux.method", .type = F_STRING, .offset = OFF(guest.linux_guest.method), .charset = machine_chars, .max_len = 32 },
	{ .path = "guest.linux.workers", .type = F_UINT, .offset = OFF(guest.linux_guest.workers), .min = 1, .max = 4096 },
	{ .path = "guest.linux.vm_bytes", .type = F_STRING, .offset = OFF(guest.linux_guest.vm_bytes), .charset = vm_bytes_chars, .max_len = 32 },
	{ .path = "guest.linux.probe_region", .type = F_SIZE, .offset = OFF(guest.linux_guest.probe_region), .min = 1 << 20, .max = (double)(64ull << 30) },
	{ .path = "guest.linux.dir", .type = F_STRING, .offset = OFF(guest.linux_guest.dir), .charset = path_chars, .max_len = 1024 },
	{ .path = "guest.linux.agent_timeout_s", .type = F_SECONDS, .offset = OFF(guest.linux_guest.agent_timeout_s), .min = 0, .max = 86400, .excl = true },
	{ .path = "guest.pattern", .type = F_CHOICE, .offset = OFF(guest.pattern), .choices = pattern_names },
	{ .path = "guest.vcpu_patterns", .type = F_VCPU_PATTERNS, .offset = OFF(guest.vcpu_pattern), .to_json = vcpu_patterns_json },
	{ .path = "guest.region", .type = F_REGION, .offset = 0, .to_json = region_json },
	{ .path = "guest.page_size", .type = F_ENUM, .offset = OFF(guest.page_size), .choices = page_size_names },
	{ .path = "guest.probe", .type = F_OBJECT },
	{ .path = "guest.probe.vcpu", .type = F_PROBE_VCPU, .offset = OFF(guest.probe_vcpu), .min = 0, .max = SPEC_MAX_VCPUS - 1, .nullable = true, .to_json = probe_vcpu_json },
	{ .path = "guest.probe.gap_us", .type = F_UINT, .offset = OFF(guest.probe_gap_us), .min = 0, .max = 10000000 },
	{ .path = "guest.seed", .type = F_U64, .offset = OFF(guest.seed) },
	{ .path = "guest.clock", .type = F_CHOICE, .offset = OFF(guest.clock), .choices = clock_names },
	{ .path = "guest.telemetry_interval_ms", .type = F_UINT, .offset = OFF(guest.telemetry_interval_ms), .min = 10, .max = 60000 },
	{ .path = "snapshot", .type = F_OBJECT },
	{ .path = "snapshot.sink", .type = F_SINK, .offset = 0, .choices = sink_names, .to_json = sink_json },
	{ .path = "snapshot.keep", .type = F_BOOL, .offset = OFF(snapshot.keep) },
	{ .path = "snapshot.max_bandwidth", .type = F_SIZE, .offset = OFF(snapshot.max_bandwidth), .min = 1, .max = 1e15, .nullable = true },
	{ .path = "snapshot.timeout_s", .type = F_SECONDS, .offset = OFF(snapshot.timeout_s), .min = 0, .max = 86400, .excl = true },
	{ .path = "dirty_log", .type = F_OBJECT, .when = dirty_log_scenario },
	{ .path = "dirty_log.tracking", .type = F_ENUM, .offset = OFF(dirty_log.tracking), .choices = tracking_names },
	{ .path = "dirty_log.ring_size", .type = F_UINT, .offset = OFF(dirty_log.ring_size), .min = 1024, .max = 65536 },
	{ .path = "dirty_log.iterate_s", .type = F_SECONDS, .offset = OFF(dirty_log.iterate_s), .min = 0, .max = 86400, .excl = true },
	{ .path = "dirty_log.max_bandwidth", .type = F_SIZE, .offset = OFF(dirty_log.max_bandwidth), .min = 1 << 20, .max = 1e12 },
	{ .path = "dirty_log.downtime_limit_ms", .type = F_UINT, .offset = OFF(dirty_log.downtime_limit_ms), .min = 1, .max = 2000000 },
	{ .path = "dirty_log.completion", .type = F_ENUM, .offset = OFF(dirty_log.completion), .choices = completion_names },
	{ .path = "postcopy", .type = F_OBJECT, .when = postcopy_scenario },
	{ .path = "postcopy.access", .type = F_ENUM, .offset = OFF(postcopy.access), .choices = access_names },
	{ .path = "postcopy.preempt", .type = F_BOOL, .offset = OFF(postcopy.preempt) },
	{ .path = "postcopy.background_bandwidth", .type = F_SIZE, .offset = OFF(postcopy.background_bandwidth), .min = 1 << 16, .max = 1e12, .nullable = true },
	{ .path = "postcopy.timeout_s", .type = F_SECONDS, .offset = OFF(postcopy.timeout_s), .min = 0, .max = 86400, .excl = true },
	{ .path = "numa_hinting", .type = F_OBJECT, .when = numa_scenario },
	{ .path = "numa_hinting.steady_s", .type = F_SECONDS, .offset = OFF(numa_hinting.steady_s), .min = 0, .max = 86400, .excl = true },
	{ .path = "uffd_restore", .type = F_OBJECT, .when = uffd_restore_scenario },
	{ .path = "uffd_restore.region", .type = F_SIZE, .offset = OFF(uffd_restore.region), .min = 1 << 20, .max = (double)(2ull << 30) },
	{ .path = "uffd_restore.chunk", .type = F_SIZE, .offset = OFF(uffd_restore.chunk), .min = 4096, .max = 2 << 20 },
	{ .path = "uffd_restore.access", .type = F_ENUM, .offset = OFF(uffd_restore.access), .choices = access_names },
	{ .path = "uffd_restore.timeout_s", .type = F_SECONDS, .offset = OFF(uffd_restore.timeout_s), .min = 0, .max = 86400, .excl = true },
	{ .path = "timing", .type = F_OBJECT },
	{ .path = "timing.warmup_s", .type = F_SECONDS, .offset = OFF(timing.warmup_s), .min = 0, .max = 86400 },
	{ .path = "timing.pre_s", .type = F_SECONDS, .offset = OFF(timing.pre_s), .min = 0, .max = 86400, .excl = true },
	{ .path = "timing.post_s", .type = F_SECONDS, .offset = OFF(timing.post_s), .min = 0, .max = 86400, .excl = true },
	{ .path = "timing.interval_ms", .type = F_UINT, .offset = OFF(timing.interval_ms), .min = SPEC_INTERVAL_MIN_MS, .max = SPEC_INTERVAL_MAX_MS },
	{ .path = "bpf", .type = F_OBJECT },
	{ .path = "bpf.enabled", .type = F_BOOL, .offset = OFF(bpf.enabled) },
	{ .path = "host_vm", .type = F_OBJECT, .when = host_vm_section },
	{ .path = "host_vm.kernel", .type = F_STRING, .offset = OFF(host_vm.kernel), .nullable = true, .charset = path_chars, .max_len = 4096 },
	{ .path = "host_vm.modules", .type = F_STRING, .offset = OFF(host_vm.modules), .nullable = true, .charset = path_chars, .max_len = 4096 },
	{ .path = "host_vm.cmdline", .type = F_STRING, .offset = OFF(host_vm.cmdline), .nullable = true, .max_len = 2048 },
	{ .path = "host_vm.memory", .type = F_SIZE, .offset = OFF(host_vm.memory), .min = (double)(256ull << 20), .max = (double)SPEC_MAX_MEMORY },
	{ .path = "host_vm.vcpus", .type = F_UINT, .offset = OFF(host_vm.vcpus), .min = 1, .max = 64 },
	{ .path = "host_vm.numa_nodes", .type = F_UINT, .offset = OFF(host_vm.numa_nodes), .min = 1, .max = 8 },
	{ .path = "host_vm.accel", .type = F_CHOICE, .offset = OFF(host_vm.accel), .choices = accel_names },
	{ .path = "host_vm.boot_timeout_s", .type = F_SECONDS, .offset = OFF(host_vm.boot_timeout_s), .min = 0, .max = 3600, .excl = true },
	{ .path = "host_vm.fallback", .type = F_BOOL, .offset = OFF(host_vm.fallback) },
	{ .path = "knobs", .type = F_KNOBS, .offset = OFF(knobs), .to_json = run_knobs_json },
	{ .path = "arms", .type = F_ARMS, .offset = 0, .to_json = arms_json },
};

static const struct field *field_find(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!strcmp(fields[i].path, path))
			return &fields[i];
	return NULL;
}

/* "a, b, c" of the fields directly under prefix ("" for the top) */
static void known_fields(const char *prefix, char *buf, size_t len)
{
	size_t plen = strlen(prefix), used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *p = fields[i].path, *name;
		if (plen) {
			if (strncmp(p, prefix, plen) || p[plen] != '.')
				continue;
			name = p + plen + 1;
		} else {
			name = p;
		}
		if (strchr(name, '.'))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static void choices_list(const char *const *choices, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; choices[i]; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", choices[i]);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static int choice_index(const char *const *choices, const char *s)
{
	for (size_t i = 0; choices[i]; i++)
		if (!strcmp(choices[i], s))
			return (int)i;
	return -1;
}

/* The value as the user wrote it, for "(got ...)", cut to a readable length. */
static const char *json_got(struct json_object *v, char *buf, size_t len)
{
	const char *s = v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
			  : "null";

	if (strlen(s) >= len) {
		snprintf(buf, len, "%.*s...", (int)(len - 4), s);
		return buf;
	}
	snprintf(buf, len, "%s", s);
	return buf;
}

void spec_knobs_done(struct spec_knobs *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->items[i].name);
		free(k->items[i].value);
	}
	free(k->items);
	k->items = NULL;
	k->n = 0;
}

static void arms_clear(struct run_spec *spec)
{
	for (size_t i = 0; i < spec->n_arms; i++) {
		free(spec->arms[i].label);
		spec_knobs_done(&spec->arms[i].knobs);
		free(spec->arms[i].kernel);
		free(spec->arms[i].modules);
	}
	free(spec->arms);
	spec->arms = NULL;
	spec->n_arms = 0;
}

void spec_done(struct run_spec *spec)
{
	free(spec->description);
	free(spec->vm.machine);
	free(spec->vm.cpu);
	free(spec->vm.user);
	free(spec->vm.libvirt.uri);
	free(spec->vm.disk);
	free(spec->vm.qemu);
	free(spec->vm.disk_format);
	free(spec->vm.libvirt.domain);
	free(spec->vm.libvirt.xml);
	free(spec->guest.linux_guest.stress_ng);
	free(spec->guest.linux_guest.method);
	free(spec->guest.linux_guest.vm_bytes);
	free(spec->guest.linux_guest.dir);
	strv_free(spec->vm.extra_args);
	free(spec->guest.pattern);
	for (size_t i = 0; i < SPEC_MAX_VCPUS; i++)
		free(spec->guest.vcpu_pattern[i]);
	free(spec->guest.clock);
	free(spec->host_vm.kernel);
	free(spec->host_vm.modules);
	free(spec->host_vm.cmdline);
	free(spec->host_vm.accel);
	free(spec->vm.accel);
	spec_knobs_done(&spec->knobs);
	arms_clear(spec);
	memset(spec, 0, sizeof(*spec));
}

static int arm_append(struct run_spec *spec, const char *label)
{
	struct spec_arm *n;

	if (spec->n_arms >= SPEC_MAX_ARMS)
		return -E2BIG;
	n = realloc(spec->arms, (spec->n_arms + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	spec->arms = n;
	n[spec->n_arms] = (struct spec_arm){ .label = strdup(label) };
	if (!n[spec->n_arms].label)
		return -ENOMEM;
	spec->n_arms++;
	return 0;
}

int spec_init(struct run_spec *spec)
{
	*spec = (struct run_spec){
		.scenario = SPEC_SCENARIO_BACKGROUND_SNAPSHOT,
		.repetitions = 5,
		.vm = {
			.memory = 256ull << 20,
			.vcpus = 2,
			.backing = SPEC_BACKING_ANON,
		},
		.guest = {
			.region_percent = 50,
			.page_size = SPEC_PAGE_4K,
			.probe_vcpu = 0,
			.probe_gap_us = 100,
			.seed = 1,
			.telemetry_interval_ms = 100,
		},
		.snapshot = {
			.sink_null = false,
			.timeout_s = 600,
		},
		.dirty_log = {
			.tracking = SPEC_DIRTY_BITMAP,
			.ring_size = 4096,
			.iterate_s = 20,
			.max_bandwidth = 32ull << 20,
			.downtime_limit_ms = 1,
			.completion = SPEC_COMPLETION_CANCEL,
		},
		.postcopy = {
			.access = SPEC_FAULT_READ,
			.timeout_s = 120,
		},
		.numa_hinting = { .steady_s = 20 },
		.uffd_restore = {
			.region = 16ull << 20,
			.chunk = 4096,
			.access = SPEC_FAULT_READ,
			.timeout_s = 300,
		},
		.timing = {
			.warmup_s = 2,
			.pre_s = 5,
			.post_s = 5,
			.interval_ms = 1000,
		},
		.bpf = { .enabled = true },
		.host_vm = {
			.memory = 2ull << 30,
			.vcpus = 2,
			.numa_nodes = 1,
			.boot_timeout_s = 120,
			.fallback = true,
		},
	};
	spec->vm.machine = strdup("pc");
	spec->vm.libvirt.uri = strdup("qemu:///system");
	spec->vm.libvirt.restart = true;
	spec->vm.disk_format = strdup("qcow2");
	spec->guest.linux_guest.stress_ng = strdup("/usr/bin/stress-ng");
	spec->guest.linux_guest.method = strdup("write64");
	spec->guest.linux_guest.workers = 1;
	spec->guest.linux_guest.vm_bytes = strdup("128M");
	spec->guest.linux_guest.probe_region = 64ull << 20;
	spec->guest.linux_guest.dir = strdup("/tmp");
	spec->guest.linux_guest.agent_timeout_s = 300;
	spec->guest.pattern = strdup(GUEST_PATTERN_NAME_WRITE64);
	spec->guest.clock = strdup("auto");
	spec->host_vm.accel = strdup("auto");
	spec->vm.accel = strdup("kvm");
	if (!spec->host_vm.accel || !spec->vm.accel || !spec->vm.machine || !spec->vm.libvirt.uri || !spec->vm.disk_format || !spec->guest.linux_guest.stress_ng ||
	    !spec->guest.linux_guest.method || !spec->guest.linux_guest.vm_bytes || !spec->guest.linux_guest.dir ||
	    !spec->guest.pattern || !spec->guest.clock || arm_append(spec, "default") < 0) {
		spec_done(spec);
		return -ENOMEM;
	}
	return 0;
}

/* ---- value parsers shared by JSON and flags ---- */

int spec_parse_size(const char *s, uint64_t *ret)
{
	if (!s)
		return -EINVAL;
	return parse_size(s, 0, UINT64_MAX, ret, NULL);
}

static bool name_chars(const char *s, const char *allowed)
{
	for (; *s; s++)
		if (!strchr(allowed, *s))
			return false;
	return true;
}

/* dot-separated, non-empty components of [a-z0-9_-] */
static bool dotted_valid(const char *s, int min_components, int max_components)
{
	int comps = 0;
	size_t len = 0;

	for (;; s++) {
		if (*s == '.' || !*s) {
			if (len == 0)
				return false;
			comps++;
			len = 0;
			if (!*s)
				break;
			continue;
		}
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
		len++;
	}
	return comps >= min_components && comps <= max_components;
}

/*
 * debugfs:PATH, relative to /sys/kernel/debug: why it is not a valid path
 * under debugfs, with the fix, or NULL when it is. Components of
 * [A-Za-z0-9_.:+-] (debugfs has upper case and PCI addresses), never "."
 * or "..", so the path cannot leave debugfs.
 */
static const char *debugfs_path_problem(const char *p)
{
	static const char prefix[] = "/sys/kernel/debug/";
	int comps = 0;

	if (!*p)
		return "debugfs: needs the file's path under /sys/kernel/debug, e.g. debugfs:sched/numa_balancing/scan_period_min_ms";
	if (!strncmp(p, prefix, sizeof(prefix) - 1))
		return "the path is absolute; debugfs:PATH is relative to /sys/kernel/debug: drop the leading /sys/kernel/debug/";
	if (*p == '/')
		return "the path is absolute; debugfs:PATH names a file under /sys/kernel/debug, relative to it (e.g. debugfs:sched/numa_balancing/scan_period_min_ms)";
	for (const char *c = p; *c;) {
		size_t len = strcspn(c, "/");

		if (len == 0)
			return "the path has an empty component ('//' or a trailing '/'); name the file itself";
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return "'.' and '..' are not allowed: the path must stay inside /sys/kernel/debug; name the file directly";
		for (size_t i = 0; i < len; i++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:+-", c[i]))
				return "the path may only hold letters, digits, '_', '.', ':', '+' and '-' between its '/'s";
		if (++comps > 16)
			return "the path is deeper than 16 components";
		c += len;
		if (*c == '/')
			c++;
		if (!*c && c[-1] == '/')
			return "the path has an empty component ('//' or a trailing '/'); name the file itself";
	}
	return NULL;
}

const char *spec_knob_name_problem(const char *name)
{
	static const char kinds[] =
		"write sysctl:NAME (e.g. sysctl:kernel.numa_balancing), module:MODULE.PARAM (e.g. module:kvm.halt_poll_ns) or debugfs:PATH (e.g. debugfs:sched/numa_balancing/scan_period_min_ms)";

	if (!name || strlen(name) > 256)
		return "a knob name is at most 256 characters";
	if (!strncmp(name, "sysctl:", 7))
		return dotted_valid(name + 7, 2, 16) ? NULL : kinds;
	if (!strncmp(name, "module:", 7))
		return dotted_valid(name + 7, 2, 2) && !strchr(name + 7, '-') ? NULL : kinds;
	if (!strncmp(name, "debugfs:", 8))
		return debugfs_path_problem(name + 8);
	return kinds;
}

bool spec_knob_name_valid(const char *name)
{
	return !spec_knob_name_problem(name);
}

bool spec_label_valid(const char *label)
{
	size_t n = label ? strlen(label) : 0;

	if (n == 0 || n > 64)
		return false;
	if (!((label[0] >= 'a' && label[0] <= 'z') || (label[0] >= 'A' && label[0] <= 'Z') ||
	      (label[0] >= '0' && label[0] <= '9')))
		return false;
	return name_chars(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-");
}

static int knobs_set(struct spec_knobs *k, const char *name, const char *value, const char *where,
		     struct sb_error *err)
{
	const char *problem = spec_knob_name_problem(name);

	if (problem)
		return sb_error_set(err, -EINVAL, "%s: knob '%.80s' is not a knob name; %s", where, name, problem);
	if (strlen(value) > SPEC_MAX_STRING || strchr(value, '\n'))
		return sb_error_set(err, -EINVAL, "%s: the value of knob %s must be one line of at most %d bytes",
				    where, name, SPEC_MAX_STRING);
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->items[i].name, name)) {
			char *v = strdup(value);
			if (!v)
				return sb_error_set(err, -ENOMEM, "out of memory");
			free(k->items[i].value);
			k->items[i].value = v;
			return 0;
		}
	if (k->n >= SPEC_MAX_KNOBS)
		return sb_error_set(err, -E2BIG, "%s: more than %d knobs; set fewer", where, SPEC_MAX_KNOBS);
	struct spec_knob *n = realloc(k->items, (k->n + 1) * sizeof(*n));
	if (!n)
		return sb_error_set(err, -ENOMEM, "out of memory");
	k->items = n;
	n[k->n].name = strdup(name);
	n[k->n].value = strdup(value);
	if (!n[k->n].name || !n[k->n].value) {
		free(n[k->n].name);
		free(n[k->n].value);
		return sb_error_set(err, -ENOMEM, "out of memory");
	}
	k->n++;
	return 0;
}

/* "NAME=VALUE" */
static int knob_arg(struct spec_knobs *k, const char *arg, const char *where, struct sb_error *err)
{
	const char *eq = strchr(arg, '=');
	char name[300];

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name))
		return sb_error_set(err, -EINVAL, "%s: '%.80s' is not NAME=VALUE; write e.g. sysctl:kernel.numa_balancing=0",
				    where, arg);
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	return knobs_set(k, name, eq + 1, where, err);
}

static int knobs_from_json(struct spec_knobs *k, struct json_object *v, const char *where, struct sb_error *err)
{
	char got[80], sub[300];

	if (!json_object_is_type(v, json_type_object))
		return sb_error_set(err, -EINVAL,
				    "%s: must be an object of knob name to value, e.g. {\"sysctl:kernel.numa_balancing\": \"0\"} (got %s)",
				    where, json_got(v, got, sizeof(got)));
	spec_knobs_done(k);
	json_object_object_foreach(v, name, val) {
		char num[32];
		const char *s;

		snprintf(sub, sizeof(sub), "%s.%.200s", where, name);
		if (json_object_is_type(val, json_type_string))
			s = json_object_get_string(val);
		else if (json_object_is_type(val, json_type_int)) {
			snprintf(num, sizeof(num), "%lld", (long long)json_object_get_int64(val));
			s = num;
		} else if (json_object_is_type(val, json_type_boolean)) {
			s = json_object_get_boolean(val) ? "1" : "0";
		} else {
			return sb_error_set(err, -EINVAL, "%s: must be a string or an integer (got %s)", sub,
					    json_got(val, got, sizeof(got)));
		}
		int r = knobs_set(k, name, s, where, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* An arm's own kernel: "kernel=PATH" or "modules=DIR" in --arm. 1 when t was one, 0 when not. */
static int arm_host_vm_set(char **field, const char *value, const char *where, const char *name, struct sb_error *err)
{
	if (!*value || value[0] != '/' || strlen(value) > 4096 || !name_chars(value, path_chars))
		return sb_error_set(err, -EINVAL, "%s: %s: \"%.200s\" must be an absolute path of letters, digits and ._+-/",
				    where, name, value);
	free(*field);
	*field = strdup(value);
	return *field ? 1 : sb_error_set(err, -ENOMEM, "out of memory");
}

static int arm_host_vm_arg(struct spec_arm *arm, const char *t, const char *flag, struct sb_error *err)
{
	if (!strcmp(t, "pin")) {
		arm->pin = true;
		return 1;
	}
	if (!strncmp(t, "chunk=", 6)) {
		struct sb_error e = {};
		if (parse_size(t + 6, 4096, 2 << 20, &arm->chunk, &e) < 0)
			return sb_error_set(err, -EINVAL, "%s: chunk=%.40s: %s; give the uffd-restore handler's chunk, a power of 2 from 4K to 2M", flag, t + 6, e.msg);
		return 1;
	}
	if (!strncmp(t, "kernel=", 7))
		return arm_host_vm_set(&arm->kernel, t + 7, flag, "kernel", err);
	if (!strncmp(t, "modules=", 8))
		return arm_host_vm_set(&arm->modules, t + 8, flag, "modules", err);
	/* snapbench kernel build names the kernel's architecture; a host VM is QEMU's x86_64 under TCG */
	if (!strncmp(t, "arch=", 5)) {
		if (!strcmp(t + 5, "x86_64"))
			return 1;
		return sb_error_set(err, -EINVAL, "%s: arch=%.40s: kernel arms boot x86_64 host VMs (QEMU's qemu64 with "
				    "svm under TCG); a %.40s kernel cannot be one of their kernels", flag, t + 5, t + 5);
	}
	return 0;
}

/* arms[i].chunk: bytes, as an integer or a size string ("512K") */
static int arm_chunk_from_json(struct spec_arm *arm, struct json_object *v, const char *where, size_t i,
			       struct sb_error *err)
{
	struct sb_error e = {};
	char got[64], buf[32];

	if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
		snprintf(buf, sizeof(buf), "%" PRId64, json_object_get_int64(v));
	else if (json_object_is_type(v, json_type_string) && strlen(json_object_get_string(v)) < sizeof(buf))
		snprintf(buf, sizeof(buf), "%s", json_object_get_string(v));
	else
		return sb_error_set(err, -EINVAL, "%s[%zu].chunk: must be a size such as \"512K\" (got %s)", where, i,
				    json_got(v, got, sizeof(got)));
	if (parse_size(buf, 4096, 2 << 20, &arm->chunk, &e) < 0)
		return sb_error_set(err, -EINVAL, "%s[%zu].chunk: %s; give the uffd-restore handler's chunk, a power of 2 from 4K to 2M",
				    where, i, e.msg);
	return 0;
}

int spec_add_arm(struct run_spec *spec, const char *arg, const char *flag, struct sb_error *err)
{
	const char *colon = strchr(arg, ':');
	char label[80];
	size_t llen = colon ? (size_t)(colon - arg) : strlen(arg);
	int r;

	if (llen >= sizeof(label))
		return sb_error_set(err, -EINVAL, "%s: label '%.80s' is too long; use at most 64 characters", flag, arg);
	memcpy(label, arg, llen);
	label[llen] = '\0';
	if (!spec_label_valid(label))
		return sb_error_set(err, -EINVAL,
				    "%s: '%s' is not a label; use 1-64 letters, digits, '.', '_', '+' or '-', starting with a letter or digit",
				    flag, label);
	/* the built-in default arm gives way to the first explicit one */
	if (spec->n_arms == 1 && !strcmp(spec->arms[0].label, "default") && spec->arms[0].knobs.n == 0)
		arms_clear(spec);
	for (size_t i = 0; i < spec->n_arms; i++)
		if (!strcmp(spec->arms[i].label, label))
			return sb_error_set(err, -EINVAL, "%s: arm '%s' given twice; labels must differ", flag, label);
	r = arm_append(spec, label);
	if (r == -E2BIG)
		return sb_error_set(err, r, "%s: more than %d arms; split the run", flag, SPEC_MAX_ARMS);
	if (r < 0)
		return sb_error_set(err, r, "out of memory");
	if (colon && colon[1]) {
		_cleanup_free_ char *list = strdup(colon + 1);
		char *save = NULL;
		if (!list)
			return sb_error_set(err, -ENOMEM, "out of memory");
		for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			r = arm_host_vm_arg(&spec->arms[spec->n_arms - 1], t, flag, err);
			if (r < 0)
				return r;
			if (r > 0)
				continue;
			r = knob_arg(&spec->arms[spec->n_arms - 1].knobs, t, flag, err);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int arm_host_vm_from_json(struct spec_arm *arm, struct json_object *kernel, struct json_object *modules,
				 const char *where, size_t i, struct sb_error *err)
{
	char sub[160], got[80];
	int r;

	for (int f = 0; f < 2; f++) {
		struct json_object *v = f ? modules : kernel;
		if (!v)
			continue;
		snprintf(sub, sizeof(sub), "%s[%zu].%s", where, i, f ? "modules" : "kernel");
		if (!json_object_is_type(v, json_type_string))
			return sb_error_set(err, -EINVAL, "%s: must be an absolute path (got %s)", sub, json_got(v, got, sizeof(got)));
		r = arm_host_vm_set(f ? &arm->modules : &arm->kernel, json_object_get_string(v), sub, f ? "modules" : "kernel", err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int arms_from_json(struct run_spec *spec, struct json_object *v, const char *where, struct sb_error *err)
{
	char got[80], sub[128];
	size_t n;

	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0)
		return sb_error_set(err, -EINVAL,
				    "%s: must be a non-empty array of {\"label\": ..., \"knobs\": {...}} (got %s)", where,
				    json_got(v, got, sizeof(got)));
	n = json_object_array_length(v);
	if (n > SPEC_MAX_ARMS)
		return sb_error_set(err, -E2BIG, "%s: %zu arms, at most %d are allowed; split the run", where, n,
				    SPEC_MAX_ARMS);
	arms_clear(spec);
	for (size_t i = 0; i < n; i++) {
		struct json_object *a = json_object_array_get_idx(v, i), *label = NULL, *knobs = NULL;
		struct json_object *kernel = NULL, *modules = NULL, *pin = NULL, *chunk = NULL;
		int r;

		snprintf(sub, sizeof(sub), "%s[%zu]", where, i);
		if (!json_object_is_type(a, json_type_object))
			return sb_error_set(err, -EINVAL, "%s: must be an object {\"label\": ..., \"knobs\": {...}} (got %s)",
					    sub, json_got(a, got, sizeof(got)));
		json_object_object_foreach(a, key, val) {
			if (!strcmp(key, "label"))
				label = val;
			else if (!strcmp(key, "knobs"))
				knobs = val;
			else if (!strcmp(key, "kernel"))
				kernel = val;
			else if (!strcmp(key, "modules"))
				modules = val;
			else if (!strcmp(key, "pin"))
				pin = val;
			else if (!strcmp(key, "chunk"))
				chunk = val;
			else
				return sb_error_set(err, -EINVAL,
						    "%s.%.64s: unknown field; an arm has label, knobs, kernel, modules, pin and chunk", sub, key);
		}
		if (!label || !json_object_is_type(label, json_type_string) ||
		    !spec_label_valid(json_object_get_string(label)))
			return sb_error_set(err, -EINVAL,
					    "%s.label: must be 1-64 letters, digits, '.', '_', '+' or '-', starting with a letter or digit (got %s)",
					    sub, json_got(label, got, sizeof(got)));
		for (size_t j = 0; j < spec->n_arms; j++)
			if (!strcmp(spec->arms[j].label, json_object_get_string(label)))
				return sb_error_set(err, -EINVAL, "%s.label: '%s' is used by arm %zu too; labels must differ",
						    sub, json_object_get_string(label), j);
		r = arm_append(spec, json_object_get_string(label));
		if (r < 0)
			return sb_error_set(err, r, "out of memory");
		if (knobs) {
			snprintf(sub, sizeof(sub), "%s[%zu].knobs", where, i);
			r = knobs_from_json(&spec->arms[spec->n_arms - 1].knobs, knobs, sub, err);
			if (r < 0)
				return r;
		}
		r = arm_host_vm_from_json(&spec->arms[spec->n_arms - 1], kernel, modules, where, i, err);
		if (r < 0)
			return r;
		if (pin) {
			if (!json_object_is_type(pin, json_type_boolean))
				return sb_error_set(err, -EINVAL, "%s[%zu].pin: must be true or false (got %s)", where, i,
						    json_got(pin, got, sizeof(got)));
			spec->arms[spec->n_arms - 1].pin = json_object_get_boolean(pin);
		}
		if (chunk) {
			r = arm_chunk_from_json(&spec->arms[spec->n_arms - 1], chunk, where, i, err);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int extra_args_push(struct run_spec *spec, const char *s, const char *where, struct sb_error *err)
{
	if (spec->vm.n_extra_args >= SPEC_MAX_EXTRA_ARGS)
		return sb_error_set(err, -E2BIG, "%s: more than %d extra arguments", where, SPEC_MAX_EXTRA_ARGS);
	if (strlen(s) > SPEC_MAX_STRING)
		return sb_error_set(err, -EINVAL, "%s: an argument longer than %d bytes", where, SPEC_MAX_STRING);
	/* these would take the process or its monitor away from us */
	static const char *const refused[] = { "-daemonize", "--daemonize", "-qmp", "--qmp", "-monitor",
					       "--monitor", "-runas", "--runas", "-pidfile", "--pidfile" };
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		if (!strcmp(s, refused[i]))
			return sb_error_set(err, -EINVAL,
					    "%s: '%s' is managed by snapbench (it keeps QEMU in the foreground with its own monitor; use vm.user for -runas); drop it",
					    where, s);
	if (strv_push(&spec->vm.extra_args, s) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	spec->vm.n_extra_args++;
	return 0;
}

static int set_region(struct run_spec *spec, const char *s, const char *where, struct sb_error *err)
{
	size_t n = strlen(s);
	uint64_t v;

	if (n > 1 && s[n - 1] == '%') {
		char num[16];
		unsigned p;

		if (n - 1 < sizeof(num)) {
			memcpy(num, s, n - 1);
			num[n - 1] = '\0';
			if (parse_unsigned(num, 1, 100, &p, NULL) == 0) {
				spec->guest.region_bytes = 0;
				spec->guest.region_percent = p;
				return 0;
			}
		}
	} else if (spec_parse_size(s, &v) == 0 && v >= 4096) {
		spec->guest.region_bytes = v;
		spec->guest.region_percent = 0;
		return 0;
	}
	return sb_error_set(err, -EINVAL,
			    "%s: must be a size such as 128M (at least 4K) or a share of the guest's free RAM such as 50%% (got %.64s)",
			    where, s);
}

static int set_vcpu_pattern(struct run_spec *spec, const char *vcpu, const char *pattern, const char *where,
			    struct sb_error *err)
{
	char names[128];
	uint64_t i;

	if (parse_uint64(vcpu, 0, SPEC_MAX_VCPUS - 1, &i, NULL) < 0)
		return sb_error_set(err, -EINVAL, "%s: '%.32s' is not a vCPU index; use 0 to %d", where, vcpu,
				    SPEC_MAX_VCPUS - 1);
	if (choice_index(pattern_names, pattern) < 0) {
		choices_list(pattern_names, names, sizeof(names));
		return sb_error_set(err, -EINVAL, "%s.%" PRIu64 ": must be one of %s (got \"%.32s\")", where, i, names,
				    pattern);
	}
	char *c = strdup(pattern);
	if (!c)
		return sb_error_set(err, -ENOMEM, "out of memory");
	free(spec->guest.vcpu_pattern[i]);
	spec->guest.vcpu_pattern[i] = c;
	return 0;
}

/* Store a checked value; where names the field or flag. */
/* A field of a time unit (its name ends in _ms or _us): its unit ("ms"), its value in seconds in *unit_s; else NULL.
 * Its flag takes a duration with a unit too, and its range errors name the unit. */
static const char *field_time_unit(const struct field *f, double *unit_s)
{
	size_t n = strlen(f->path);

	if (n > 3 && !strcmp(f->path + n - 3, "_ms"))
		return *unit_s = 1e-3, "ms";
	if (n > 3 && !strcmp(f->path + n - 3, "_us"))
		return *unit_s = 1e-6, "us";
	return NULL;
}

static int set_uint(struct run_spec *spec, const struct field *f, double v, const char *got, const char *where,
		    struct sb_error *err)
{
	double unit_s;
	const char *unit = field_time_unit(f, &unit_s);

	if (v != floor(v) || v < f->min || v > f->max)
		return sb_error_set(err, -EINVAL, "%s: must be an integer from %.0f to %.0f%s%s (got %s)", where, f->min,
				    f->max, unit ? " " : "", unit ? unit : "", got);
	*(unsigned *)((char *)spec + f->offset) = (unsigned)v;
	return 0;
}

/* "16 MiB", "1 TiB", "4096 bytes": a size in the largest binary unit that divides it. */
static void size_text(double bytes, char *buf, size_t len)
{
	static const char *const units[] = { "TiB", "GiB", "MiB", "KiB" };

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		double m = ldexp(1, 10 * (int)(ARRAY_SIZE(units) - i));
		if (bytes >= m && fmod(bytes, m) == 0) {
			snprintf(buf, len, "%.0f %s", bytes / m, units[i]);
			return;
		}
	}
	snprintf(buf, len, "%.0f bytes", bytes);
}

static int set_seconds(struct run_spec *spec, const struct field *f, double v, const char *got, const char *where,
		       struct sb_error *err)
{
	if (f->excl ? !(v > f->min) : !(v >= f->min))
		return sb_error_set(err, -EINVAL, "%s: must be %s %g (got %s)", where, f->excl ? ">" : ">=", f->min, got);
	if (v > f->max)
		return sb_error_set(err, -EINVAL, "%s: must be at most %g seconds (got %s)", where, f->max, got);
	*(double *)((char *)spec + f->offset) = v;
	return 0;
}

static int set_size(struct run_spec *spec, const struct field *f, uint64_t v, const char *got, const char *where,
		    struct sb_error *err)
{
	char lo[32], hi[32];

	size_text(f->min, lo, sizeof(lo));
	size_text(f->max, hi, sizeof(hi));
	if ((double)v < f->min || (double)v > f->max)
		return sb_error_set(err, -EINVAL, "%s: must be from %s to %s, %.0f to %.0f bytes (got %s%s; a size takes "
				    "K, M, G or T, such as 256M)", where, lo, hi, f->min, f->max, got,
				    strspn(got, "0123456789") == strlen(got) ? " bytes" : "");
	*(uint64_t *)((char *)spec + f->offset) = v;
	return 0;
}

static int set_string(struct run_spec *spec, const struct field *f, const char *s, const char *where,
		      struct sb_error *err)
{
	char **dst = (char **)((char *)spec + f->offset), *c, names[160];

	if (f->type == F_CHOICE && choice_index(f->choices, s) < 0) {
		choices_list(f->choices, names, sizeof(names));
		return sb_error_set(err, -EINVAL, "%s: must be one of %s (got \"%.64s\")", where, names, s);
	}
	if (f->type == F_STRING) {
		if (!*s || strlen(s) > f->max_len)
			return sb_error_set(err, -EINVAL, "%s: must be 1 to %zu characters (got \"%.64s\")", where,
					    f->max_len, s);
		if (f->charset ? !name_chars(s, f->charset) : !!strpbrk(s, "\n\r\t"))
			return sb_error_set(err, -EINVAL, "%s: \"%.64s\" has characters outside [%s]; fix the value",
					    where, s, f->charset ? f->charset : "printable, one line");
	}
	c = strdup(s);
	if (!c)
		return sb_error_set(err, -ENOMEM, "out of memory");
	free(*dst);
	*dst = c;
	return 0;
}

static int set_enum(struct run_spec *spec, const struct field *f, const char *s, const char *where,
		    struct sb_error *err)
{
	char names[160];
	int i = choice_index(f->choices, s);

	if (i < 0 || (f->type == F_CONST && i != 0)) {
		choices_list(f->choices, names, sizeof(names));
		return sb_error_set(err, -EINVAL, "%s: must be %s%s (got \"%.64s\")", where,
				    f->choices[1] ? "one of " : "", names, s);
	}
	if (f->type == F_ENUM)
		*(int *)((char *)spec + f->offset) = i;
	else if (f->type == F_SINK)
		spec->snapshot.sink_null = i == 1;
	return 0;
}

/* A nullable field set to null: true when f's type has a null value (then set). */
static bool field_set_null(struct run_spec *spec, const struct field *f)
{
	switch (f->type) {
	case F_SIZE:
		*(uint64_t *)((char *)spec + f->offset) = 0;
		return true;
	case F_STRING: {
		char **dst = (char **)((char *)spec + f->offset);
		free(*dst);
		*dst = NULL;
		return true;
	}
	case F_PROBE_VCPU:
		spec->guest.probe_vcpu = -1;
		return true;
	default:
		return false;
	}
}

/* F_SIZE: bytes as an integer, or a string with a unit. */
static int size_from_json(struct run_spec *spec, const struct field *f, struct json_object *v, const char *g,
			  const char *where, struct sb_error *err)
{
	json_type t = json_object_get_type(v);
	uint64_t b;

	if (t == json_type_int) {
		if (json_object_get_int64(v) < 0)
			return sb_error_set(err, -EINVAL, "%s: must not be negative (got %s)", where, g);
		return set_size(spec, f, (uint64_t)json_object_get_int64(v), g, where, err);
	}
	if (t != json_type_string)
		return sb_error_set(err, -EINVAL, "%s: must be a size: bytes, or a string such as \"256M\"%s (got %s)",
				    where, f->nullable ? ", or null" : "", g);
	if (spec_parse_size(json_object_get_string(v), &b) < 0)
		return sb_error_set(err, -EINVAL,
				    "%s: must be a size: bytes, or a number with K, M, G or T such as \"256M\" (got %s)",
				    where, g);
	return set_size(spec, f, b, g, where, err);
}

/* F_STRV (vm.extra_args): an array of strings, which replaces the one before. */
static int extra_args_from_json(struct run_spec *spec, struct json_object *v, const char *g, const char *where,
				struct sb_error *err)
{
	char got[80];
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return sb_error_set(err, -EINVAL, "%s: must be an array of strings, one per argument (got %s)", where, g);
	strv_free(spec->vm.extra_args);
	spec->vm.extra_args = NULL;
	spec->vm.n_extra_args = 0;
	n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		char sub[96];
		snprintf(sub, sizeof(sub), "%s[%zu]", where, i);
		if (!json_object_is_type(e, json_type_string))
			return sb_error_set(err, -EINVAL, "%s: must be a string (got %s)", sub, json_got(e, got, sizeof(got)));
		int r = extra_args_push(spec, json_object_get_string(e), sub, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* F_VCPU_PATTERNS: an object of vCPU index to pattern, which replaces the one before. */
static int vcpu_patterns_from_json(struct run_spec *spec, struct json_object *v, const char *g, const char *where,
				   struct sb_error *err)
{
	char got[80];

	if (!json_object_is_type(v, json_type_object))
		return sb_error_set(err, -EINVAL, "%s: must be an object of vCPU index to pattern, e.g. {\"1\": \"read64\"} (got %s)",
				    where, g);
	for (size_t i = 0; i < SPEC_MAX_VCPUS; i++) {
		free(spec->guest.vcpu_pattern[i]);
		spec->guest.vcpu_pattern[i] = NULL;
	}
	json_object_object_foreach(v, key, val) {
		if (!json_object_is_type(val, json_type_string))
			return sb_error_set(err, -EINVAL, "%s.%.32s: must be a pattern name (got %s)", where, key,
					    json_got(val, got, sizeof(got)));
		int r = set_vcpu_pattern(spec, key, json_object_get_string(val), where, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int field_from_json(struct run_spec *spec, const struct field *f, struct json_object *v, const char *where,
			   struct sb_error *err)
{
	char got[80];
	const char *g = json_got(v, got, sizeof(got));
	json_type t = json_object_get_type(v);

	if (!v && f->nullable && field_set_null(spec, f))
		return 0;
	switch (f->type) {
	case F_OBJECT:
		return -EINVAL; /* handled by the walker */
	case F_UINT:
		if (t != json_type_int && t != json_type_double)
			return sb_error_set(err, -EINVAL, "%s: must be an integer from %.0f to %.0f (got %s)", where, f->min,
					    f->max, g);
		return set_uint(spec, f, json_object_get_double(v), g, where, err);
	case F_U64:
		if (t != json_type_int || json_object_get_int64(v) < 0)
			return sb_error_set(err, -EINVAL, "%s: must be a non-negative integer (got %s)", where, g);
		*(uint64_t *)((char *)spec + f->offset) = (uint64_t)json_object_get_int64(v);
		return 0;
	case F_SIZE:
		return size_from_json(spec, f, v, g, where, err);
	case F_SECONDS:
		if (t != json_type_int && t != json_type_double)
			return sb_error_set(err, -EINVAL, "%s: must be a number of seconds (got %s)", where, g);
		return set_seconds(spec, f, json_object_get_double(v), g, where, err);
	case F_BOOL:
		if (t != json_type_boolean)
			return sb_error_set(err, -EINVAL, "%s: must be true or false (got %s)", where, g);
		*(bool *)((char *)spec + f->offset) = json_object_get_boolean(v);
		return 0;
	case F_STRING:
	case F_CHOICE:
		if (t != json_type_string)
			return sb_error_set(err, -EINVAL, "%s: must be a string%s (got %s)", where,
					    f->nullable ? " or null" : "", g);
		return set_string(spec, f, json_object_get_string(v), where, err);
	case F_ENUM:
	case F_CONST:
	case F_SINK:
		if (t != json_type_string)
			return sb_error_set(err, -EINVAL, "%s: must be a string (got %s)", where, g);
		return set_enum(spec, f, json_object_get_string(v), where, err);
	case F_STRV:
		return extra_args_from_json(spec, v, g, where, err);
	case F_KNOBS:
		return knobs_from_json(&spec->knobs, v, where, err);
	case F_ARMS:
		return arms_from_json(spec, v, where, err);
	case F_REGION:
		if (t == json_type_int) {
			char num[32];
			snprintf(num, sizeof(num), "%lld", (long long)json_object_get_int64(v));
			return set_region(spec, num, where, err);
		}
		if (t != json_type_string)
			return sb_error_set(err, -EINVAL, "%s: must be a size such as \"128M\" or a share such as \"50%%\" (got %s)",
					    where, g);
		return set_region(spec, json_object_get_string(v), where, err);
	case F_VCPU_PATTERNS:
		return vcpu_patterns_from_json(spec, v, g, where, err);
	case F_PROBE_VCPU:
		if (t != json_type_int || json_object_get_int64(v) < 0 || json_object_get_int64(v) > (int64_t)f->max)
			return sb_error_set(err, -EINVAL, "%s: must be a vCPU index from 0 to %.0f, or null for no probe (got %s)",
					    where, f->max, g);
		spec->guest.probe_vcpu = (int)json_object_get_int64(v);
		return 0;
	}
	return -EINVAL;
}

static int apply_object(struct run_spec *spec, struct json_object *o, const char *prefix, const char *origin,
			struct sb_error *err)
{
	char path[128], where[256], known[512];

	json_object_object_foreach(o, key, v) {
		const struct field *f;

		if (strlen(key) > 64) {
			known_fields(prefix, known, sizeof(known));
			return sb_error_set(err, -EINVAL, "%s%sspec%s%s: unknown field '%.64s...'; known: %s",
					    origin ? origin : "", origin ? ": " : "", *prefix ? "." : "", prefix, key, known);
		}
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", key);
		snprintf(where, sizeof(where), "%s%sspec.%s", origin ? origin : "", origin ? ": " : "", path);
		f = field_find(path);
		if (!f) {
			known_fields(prefix, known, sizeof(known));
			return sb_error_set(err, -EINVAL, "%s: unknown field; known fields%s%s: %s", where,
					    *prefix ? " of spec." : "", prefix, known);
		}
		if (f->type == F_OBJECT) {
			char got[80];
			if (!json_object_is_type(v, json_type_object))
				return sb_error_set(err, -EINVAL, "%s: must be an object (got %s)", where,
						    json_got(v, got, sizeof(got)));
			int r = apply_object(spec, v, path, origin, err);
			if (r < 0)
				return r;
			continue;
		}
		int r = field_from_json(spec, f, v, where, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int spec_apply_json(struct run_spec *spec, const char *text, size_t len, const char *origin, struct sb_error *err)
{
	const char *what = origin ? origin : "spec";
	struct json_parse_info info;
	_cleanup_json_ struct json_object *o = NULL;
	int r;

	if (len > SPEC_MAX_FILE_BYTES)
		return sb_error_set(err, -EFBIG, "%s: a spec is at most %u bytes", what, SPEC_MAX_FILE_BYTES);
	r = json_parse_text(text, len, SPEC_MAX_DEPTH, 0, &o, &info);
	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (r < 0 && info.status == JSON_PARSE_TRAILING)
		return sb_error_set(err, -EINVAL, "%s: text after the JSON object; a spec is one object", what);
	if (r < 0)
		return sb_error_set(err, -EINVAL, "%s: not valid JSON: %s; fix the file", what,
				    info.status == JSON_PARSE_TRUNCATED ? "unexpected end of input" : info.reason);
	if (!json_object_is_type(o, json_type_object))
		return sb_error_set(err, -EINVAL, "%s: a spec must be a JSON object {...}", what);
	r = apply_object(spec, o, "", origin, err);
	return r;
}

int spec_apply_file(struct run_spec *spec, const char *path, struct sb_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;
	int r;

	if (fd < 0)
		return sb_error_set(err, -errno, "%s: cannot open the spec: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return sb_error_set(err, -errno, "%s: cannot stat the spec: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return sb_error_set(err, -EISDIR, "%s: is a directory; give a spec file", path);
	r = read_full_fd(fd, SPEC_MAX_FILE_BYTES, &buf, &len);
	if (r == -EFBIG)
		return sb_error_set(err, -EFBIG, "%s: larger than %u bytes; a spec is small", path, SPEC_MAX_FILE_BYTES);
	if (r == -ENOMEM)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (r < 0)
		return sb_error_set(err, r, "%s: cannot read the spec: %s", path, strerror(-r));
	return spec_apply_json(spec, buf, len, path, err);
}

/* F_UINT from a flag: a number, or for a field in ms or us a duration with its unit (500ms, 2s, 1ms). */
static int uint_from_text(struct run_spec *spec, const struct field *f, const char *value, const char *got,
			  const char *where, struct sb_error *err)
{
	double d, unit_s;
	const char *unit;

	if (parse_double(value, -DBL_MAX, DBL_MAX, &d, NULL) == 0)
		return set_uint(spec, f, d, got, where, err);
	unit = field_time_unit(f, &unit_s);
	if (unit && parse_duration(value, unit_s, 0, DBL_MAX, &d, NULL) == 0) {
		double whole = floor(d / unit_s + 0.5);

		d = fabs(d / unit_s - whole) < 1e-6 ? whole : d / unit_s;
		return set_uint(spec, f, d, got, where, err);
	}
	if (unit)
		return sb_error_set(err, -EINVAL, "%s: must be a number of %s from %.0f to %.0f, or a duration "
				    "with its unit such as %s (got %s)", where, unit, f->min, f->max,
				    unit_s == 1e-3 ? "500ms or 2s" : "100us or 1ms", got);
	return sb_error_set(err, -EINVAL, "%s: must be an integer from %.0f to %.0f (got %s)", where, f->min,
			    f->max, got);
}

static int bool_from_text(struct run_spec *spec, const struct field *f, const char *value, const char *got,
			  const char *where, struct sb_error *err)
{
	if (!strcmp(value, "true") || !strcmp(value, "yes") || !strcmp(value, "1"))
		*(bool *)((char *)spec + f->offset) = true;
	else if (!strcmp(value, "false") || !strcmp(value, "no") || !strcmp(value, "0"))
		*(bool *)((char *)spec + f->offset) = false;
	else
		return sb_error_set(err, -EINVAL, "%s: must be true or false (got %s)", where, got);
	return 0;
}

/* --vcpu-pattern VCPU=PATTERN */
static int vcpu_pattern_from_text(struct run_spec *spec, const char *value, const char *got, const char *where,
				  struct sb_error *err)
{
	const char *eq = strchr(value, '=');
	char idx[16];

	if (!eq || (size_t)(eq - value) >= sizeof(idx))
		return sb_error_set(err, -EINVAL, "%s: '%s' is not VCPU=PATTERN; write e.g. 1=read64", where, got);
	memcpy(idx, value, (size_t)(eq - value));
	idx[eq - value] = '\0';
	return set_vcpu_pattern(spec, idx, eq + 1, where, err);
}

int spec_set(struct run_spec *spec, const char *field, const char *value, const char *flag, struct sb_error *err)
{
	const struct field *f = field_find(field);
	const char *where = flag ? flag : field;
	char got[96];
	double d;

	if (!f || f->type == F_OBJECT)
		return sb_error_set(err, -EINVAL, "%s: no spec field %s", where, field);
	snprintf(got, sizeof(got), "%.80s", value);
	if (f->nullable && (!strcmp(value, "none") || !strcmp(value, "null"))) {
		struct json_object *null = NULL;
		return field_from_json(spec, f, null, where, err);
	}
	switch (f->type) {
	case F_UINT:
		return uint_from_text(spec, f, value, got, where, err);
	case F_U64: {
		uint64_t v;
		if (parse_uint64(value, 0, UINT64_MAX, &v, NULL) < 0)
			return sb_error_set(err, -EINVAL, "%s: must be a non-negative integer (got %s)", where, got);
		*(uint64_t *)((char *)spec + f->offset) = v;
		return 0;
	}
	case F_SIZE: {
		uint64_t b;
		if (spec_parse_size(value, &b) < 0)
			return sb_error_set(err, -EINVAL,
					    "%s: must be a size: bytes, or a number with K, M, G or T such as 256M (got %s)",
					    where, got);
		return set_size(spec, f, b, got, where, err);
	}
	case F_SECONDS:
		/* a bare number is seconds; a duration with its unit (500ms, 2m) too */
		if (parse_double(value, -DBL_MAX, DBL_MAX, &d, NULL) < 0 && parse_duration(value, 1, 0, DBL_MAX, &d, NULL) < 0)
			return sb_error_set(err, -EINVAL, "%s: must be a number of seconds, or a duration with its unit "
					    "such as 500ms or 2m (got %s)", where, got);
		return set_seconds(spec, f, d, got, where, err);
	case F_BOOL:
		return bool_from_text(spec, f, value, got, where, err);
	case F_STRING:
	case F_CHOICE:
		return set_string(spec, f, value, where, err);
	case F_ENUM:
	case F_CONST:
	case F_SINK:
		return set_enum(spec, f, value, where, err);
	case F_STRV:
		return extra_args_push(spec, value, where, err);
	case F_KNOBS:
		return knob_arg(&spec->knobs, value, where, err);
	case F_ARMS:
		return spec_add_arm(spec, value, where, err);
	case F_REGION:
		return set_region(spec, value, where, err);
	case F_VCPU_PATTERNS:
		return vcpu_pattern_from_text(spec, value, got, where, err);
	case F_PROBE_VCPU:
		if (parse_double(value, -DBL_MAX, DBL_MAX, &d, NULL) < 0 || d != floor(d) || d < 0 || d > f->max)
			return sb_error_set(err, -EINVAL, "%s: must be a vCPU index from 0 to %.0f, or none (got %s)", where,
					    f->max, got);
		spec->guest.probe_vcpu = (int)d;
		return 0;
	case F_OBJECT:
		break;
	}
	return -EINVAL;
}

/* Kernel arms: every arm or none in a host VM; the qemu backend and the micro guest inside. */
static int validate_host_vm(const struct run_spec *spec, struct sb_error *err)
{
	const struct spec_arm *without = NULL, *with = NULL;

	for (size_t a = 0; a < spec->n_arms; a++) {
		if (spec_arm_kernel(spec, a))
			with = &spec->arms[a];
		else
			without = &spec->arms[a];
		if (spec->arms[a].modules && !spec_arm_kernel(spec, a))
			return sb_error_set(err, -EINVAL,
					    "spec.arms[%zu].modules: arm '%s' names a modules tree but no kernel; add kernel=PATH to the arm or --kernel",
					    a, spec->arms[a].label);
	}
	if (!with)
		return 0;
	if (!strcmp(spec->vm.accel, "tcg"))
		return sb_error_set(err, -EINVAL,
				    "spec.vm.accel \"tcg\": kernel arms run the guest under the host VM's own KVM; drop vm.accel (--accel) or the kernels");
	if (without)
		return sb_error_set(err, -EINVAL,
				    "spec.arms: arm '%s' has a kernel and arm '%s' none; give every arm a kernel (kernel=PATH in --arm, or --kernel for all), so they all run in host VMs",
				    with->label, without->label);
	if (spec->vm.backend != SPEC_BACKEND_QEMU || spec->guest.kind != SPEC_GUEST_MICRO)
		return sb_error_set(err, -EINVAL,
				    "spec.host_vm: kernel arms run the micro guest with the qemu backend inside the host VM; drop vm.backend/guest.kind or the kernels");
	if (spec->host_vm.vcpus % spec->host_vm.numa_nodes || (spec->host_vm.memory >> 20) % spec->host_vm.numa_nodes)
		return sb_error_set(err, -EINVAL,
				    "spec.host_vm.numa_nodes: %u nodes do not split %u vCPUs and %llu MiB evenly; choose a divisor of both",
				    spec->host_vm.numa_nodes, spec->host_vm.vcpus, (unsigned long long)(spec->host_vm.memory >> 20));
	/* dirty-log: the migration's destination runs in the host VM too, with a second copy of guest RAM */
	uint64_t guests = spec_scenario_has_destination(spec->scenario) ? 2 : 1;
	if (spec->vm.memory * guests + (512ull << 20) > spec->host_vm.memory)
		return sb_error_set(err, -EINVAL,
				    "spec.host_vm.memory: %llu MiB leave too little room for the guest's %llu MiB (spec.vm.memory%s) and the kernel under test; give at least 512 MiB more (--host-vm-memory)",
				    (unsigned long long)(spec->host_vm.memory >> 20),
				    (unsigned long long)(spec->vm.memory * guests >> 20),
				    guests > 1 ? ", twice: source and destination" : "");
	return 0;
}

/* The guest: its probe's and patterns' vCPUs exist and are distinct, its region fits. */
static int validate_guest(const struct run_spec *spec, struct sb_error *err)
{
	if (spec->guest.probe_vcpu >= 0 && (unsigned)spec->guest.probe_vcpu >= spec->vm.vcpus)
		return sb_error_set(err, -EINVAL,
				    "spec.guest.probe.vcpu: vCPU %d does not exist, the VM has %u (spec.vm.vcpus); use 0 to %u or null",
				    spec->guest.probe_vcpu, spec->vm.vcpus, spec->vm.vcpus - 1);
	for (unsigned i = 0; i < SPEC_MAX_VCPUS; i++) {
		if (!spec->guest.vcpu_pattern[i])
			continue;
		if (i >= spec->vm.vcpus)
			return sb_error_set(err, -EINVAL,
					    "spec.guest.vcpu_patterns.%u: vCPU %u does not exist, the VM has %u (spec.vm.vcpus)",
					    i, i, spec->vm.vcpus);
		if ((int)i == spec->guest.probe_vcpu)
			return sb_error_set(err, -EINVAL,
					    "spec.guest.vcpu_patterns.%u: vCPU %u runs the latency probe (spec.guest.probe.vcpu); move the probe or drop this pattern",
					    i, i);
	}
	if (spec->guest.region_bytes && spec->guest.region_bytes > spec->vm.memory - (4ull << 20))
		return sb_error_set(err, -EINVAL,
				    "spec.guest.region: %llu bytes do not fit in the guest's %llu bytes of RAM (spec.vm.memory) with room for the guest itself; use at most memory - 4M, or a share such as 90%%",
				    (unsigned long long)spec->guest.region_bytes, (unsigned long long)spec->vm.memory);
	return 0;
}

/* The guest RAM: hugetlb page sizes, pinning's memfd, whole MiB. */
static int validate_memory(const struct run_spec *spec, struct sb_error *err)
{
	if (spec->vm.backing == SPEC_BACKING_HUGETLB) {
		uint64_t hp = spec->vm.hugepage_size ? spec->vm.hugepage_size : 2ull << 20;
		if (hp != (2ull << 20) && hp != (1ull << 30))
			return sb_error_set(err, -EINVAL, "spec.vm.hugepage_size: x86 hugetlb pages are 2M or 1G (got %llu)",
					    (unsigned long long)hp);
		if (spec->vm.memory % hp)
			return sb_error_set(err, -EINVAL,
					    "spec.vm.memory: %llu bytes is not a multiple of the hugetlb page size %llu (spec.vm.hugepage_size); round it",
					    (unsigned long long)spec->vm.memory, (unsigned long long)hp);
	} else if (spec->vm.hugepage_size) {
		return sb_error_set(err, -EINVAL,
				    "spec.vm.hugepage_size: only used with spec.vm.backing \"hugetlb\"; set it to null or change the backing");
	}
	for (size_t a = 0; a < spec->n_arms; a++)
		if (spec->arms[a].pin && spec->vm.backing != SPEC_BACKING_MEMFD)
			return sb_error_set(err, -EINVAL,
					    "spec.arms[%zu].pin: arm '%s' pins the guest RAM, which must be a memfd it can map: set spec.vm.backing \"memfd\"",
					    a, spec->arms[a].label);
	if (spec->vm.memory % (1ull << 20))
		return sb_error_set(err, -EINVAL, "spec.vm.memory: must be a whole number of MiB (got %llu bytes); round it",
				    (unsigned long long)spec->vm.memory);
	return 0;
}

/* What each VM backend needs, and the guest kinds it runs. */
static int validate_backend(const struct run_spec *spec, struct sb_error *err)
{
	if (spec->vm.backend == SPEC_BACKEND_LIBVIRT) {
		const char *u = spec->vm.libvirt.uri, *auth = strstr(u, "://");
		/* BPF probes and knobs act on this host: the domain must run here */
		if (strncmp(u, "qemu", 4) || !auth || auth[3] != '/')
			return sb_error_set(err, -EINVAL,
					    "spec.vm.libvirt.uri: \"%.200s\" is not a local QEMU connection; the domain must run on this host (its QEMU is probed here): use qemu:///system or qemu:///session",
					    u);
		if (spec->vm.user)
			return sb_error_set(err, -EINVAL,
					    "spec.vm.user: libvirt runs QEMU as the user of its own configuration (qemu.conf 'user'); drop vm.user with the libvirt backend");
		if (spec->vm.backing == SPEC_BACKING_ANON_NOTHP)
			return sb_error_set(err, -EINVAL,
					    "spec.vm.backing: \"anon-nothp\" needs QEMU started by snapbench (it disables THP for that process); use the qemu backend, or backing \"anon\" or \"hugetlb\"");
		if (spec->vm.libvirt.domain && spec->vm.libvirt.xml)
			return sb_error_set(err, -EINVAL,
					    "spec.vm.libvirt: give an existing domain (domain) or a domain XML file (xml), not both");
		bool own = spec->vm.libvirt.domain || spec->vm.libvirt.xml;
		if (spec->guest.kind == SPEC_GUEST_MICRO && own)
			return sb_error_set(err, -EINVAL,
					    "spec.vm.libvirt.%s: the micro guest runs in snapbench's own domain template; drop it, or set spec.guest.kind \"linux\" for a Linux guest in that domain",
					    spec->vm.libvirt.domain ? "domain" : "xml");
		if (spec->guest.kind == SPEC_GUEST_LINUX && !own)
			return sb_error_set(err, -EINVAL,
					    "spec.guest.kind \"linux\": name the guest's domain (spec.vm.libvirt.domain) or its domain XML (spec.vm.libvirt.xml)");
		if (spec->vm.libvirt.xml && !spec->vm.libvirt.restart)
			return sb_error_set(err, -EINVAL,
					    "spec.vm.libvirt.restart: a domain from spec.vm.libvirt.xml is transient and started for each repetition; set restart true or use an existing domain");
		if (spec->vm.libvirt.xml && spec->vm.libvirt.xml[0] != '/')
			return sb_error_set(err, -EINVAL, "spec.vm.libvirt.xml: \"%.200s\" must be an absolute path", spec->vm.libvirt.xml);
		if (spec->vm.disk)
			return sb_error_set(err, -EINVAL,
					    "spec.vm.disk: the libvirt backend takes the guest's disks from its domain (vm.libvirt.domain or vm.libvirt.xml); drop vm.disk");
	} else if (spec->guest.kind == SPEC_GUEST_LINUX && !spec->vm.disk) {
		return sb_error_set(err, -EINVAL,
				    "spec.guest.kind \"linux\" with the qemu backend: give the guest's disk image (spec.vm.disk, --disk), or use the libvirt backend with a domain");
	} else if (spec->guest.kind == SPEC_GUEST_MICRO && spec->vm.disk) {
		return sb_error_set(err, -EINVAL,
				    "spec.vm.disk: the micro guest boots without a disk; drop vm.disk, or set spec.guest.kind \"linux\"");
	}
	return 0;
}

/* Paths the spec names are absolute: on the host (QEMU, the disk) and in a Linux guest. */
static int validate_paths(const struct run_spec *spec, struct sb_error *err)
{
	if (spec->vm.qemu && spec->vm.qemu[0] != '/')
		return sb_error_set(err, -EINVAL,
				    "spec.vm.qemu: \"%.200s\" must be an absolute path (a QEMU binary, e.g. what scripts/fetch-test-qemu prints), or null for " QEMU_DEFAULT_BINARY " in PATH",
				    spec->vm.qemu);
	if (spec->vm.disk && spec->vm.disk[0] != '/')
		return sb_error_set(err, -EINVAL, "spec.vm.disk: \"%.200s\" must be an absolute path", spec->vm.disk);
	if (spec->guest.kind == SPEC_GUEST_LINUX && spec->guest.linux_guest.dir[0] != '/')
		return sb_error_set(err, -EINVAL, "spec.guest.linux.dir: \"%.200s\" must be an absolute path in the guest",
				    spec->guest.linux_guest.dir);
	return 0;
}

/* What each scenario needs of the backend, the guest and the timing. */
/* uffd-restore: each arm's chunk a power of 2 dividing the region; a chunk only where that scenario runs */
static int validate_uffd_restore(const struct run_spec *spec, struct sb_error *err)
{
	uint64_t region = spec->uffd_restore.region, c = spec->uffd_restore.chunk;

	for (size_t a = 0; a < spec->n_arms; a++)
		if (spec->arms[a].chunk && spec->scenario != SPEC_SCENARIO_UFFD_RESTORE)
			return sb_error_set(err, -EINVAL,
					    "spec.arms[%zu].chunk: arm '%s' sets the uffd-restore handler's chunk, and spec.scenario is not \"uffd-restore\"; drop chunk or set the scenario",
					    a, spec->arms[a].label);
	if (spec->scenario != SPEC_SCENARIO_UFFD_RESTORE)
		return 0;
	if (c & (c - 1))
		return sb_error_set(err, -EINVAL,
				    "spec.uffd_restore.chunk: %" PRIu64 " bytes is not a power of 2; give 4K, 8K ... 2M", c);
	for (size_t a = 0; a < spec->n_arms; a++) {
		c = spec_arm_chunk(spec, a);
		if (c & (c - 1))
			return sb_error_set(err, -EINVAL,
					    "spec.arms[%zu].chunk: arm '%s': %" PRIu64 " bytes is not a power of 2; give 4K, 8K ... 2M",
					    a, spec->arms[a].label, c);
		if (region % c)
			return sb_error_set(err, -EINVAL,
					    "spec.uffd_restore.region: %" PRIu64 " bytes is not a multiple of arm '%s''s chunk (%" PRIu64 " bytes); give a region of whole chunks",
					    region, spec->arms[a].label, c);
	}
	return 0;
}

static int validate_scenario(const struct run_spec *spec, struct sb_error *err)
{
	if (spec->scenario == SPEC_SCENARIO_DIRTY_LOG) {
		/* the runner starts the migration's destination itself, as a second micro guest QEMU */
		if (spec->vm.backend != SPEC_BACKEND_QEMU || spec->guest.kind != SPEC_GUEST_MICRO)
			return sb_error_set(err, -EINVAL,
					    "spec.scenario \"dirty-log\": the runner starts the migration's destination QEMU itself, so it needs the qemu backend and the micro guest; drop vm.backend and guest.kind");
		if (spec->dirty_log.tracking == SPEC_DIRTY_RING && !strcmp(spec->vm.accel, "tcg"))
			return sb_error_set(err, -EINVAL,
					    "spec.dirty_log.tracking \"ring\": the dirty ring is KVM's, and spec.vm.accel is \"tcg\"; use tracking \"bitmap\" or vm.accel \"kvm\"");
		if (spec->dirty_log.tracking == SPEC_DIRTY_RING &&
		    (spec->dirty_log.ring_size & (spec->dirty_log.ring_size - 1)))
			return sb_error_set(err, -EINVAL,
					    "spec.dirty_log.ring_size: %u is not a power of 2; QEMU takes 1024, 2048, 4096 ... 65536",
					    spec->dirty_log.ring_size);
		if ((uint64_t)spec->timing.interval_ms > (uint64_t)(spec->dirty_log.iterate_s * 1000))
			return sb_error_set(err, -EINVAL,
					    "spec.dirty_log.iterate_s: %g s is shorter than one sample interval (spec.timing.interval_ms %u); lengthen it",
					    spec->dirty_log.iterate_s, spec->timing.interval_ms);
	}
	if (spec->scenario == SPEC_SCENARIO_POSTCOPY_RESTORE) {
		bool faulting = spec->guest.pattern && !strcmp(spec->guest.pattern, GUEST_PATTERN_NAME_FAULT_LINEAR);

		if (spec->vm.backend != SPEC_BACKEND_QEMU || spec->guest.kind != SPEC_GUEST_MICRO)
			return sb_error_set(err, -EINVAL,
					    "spec.scenario \"postcopy-restore\": the runner starts the migration's destination QEMU itself, so it needs the qemu backend and the micro guest; drop vm.backend and guest.kind");
		for (unsigned i = 0; i < spec->vm.vcpus && i < SPEC_MAX_VCPUS; i++)
			if (spec->guest.vcpu_pattern[i] && !strcmp(spec->guest.vcpu_pattern[i], GUEST_PATTERN_NAME_FAULT_LINEAR))
				faulting = true;
		if (!faulting)
			return sb_error_set(err, -EINVAL,
					    "spec.guest.pattern: the postcopy-restore scenario times the destination's fault-linear pass; set guest.pattern (or a guest.vcpu_pattern) to \"fault-linear\"");
	}
	if (spec->scenario == SPEC_SCENARIO_NUMA_HINTING) {
		if (spec->vm.backend != SPEC_BACKEND_QEMU)
			return sb_error_set(err, -EINVAL,
					    "spec.scenario \"numa-hinting\": the runner spreads the guest RAM over the host's nodes through QEMU's memory backend, so it needs the qemu backend; drop vm.backend");
		if (spec->vm.backing != SPEC_BACKING_MEMFD)
			return sb_error_set(err, -EINVAL,
					    "spec.vm.backing: the numa-hinting scenario sets the guest RAM's NUMA policy through its memfd (and arms[].pin pins it there); set vm.backing \"memfd\"");
		if ((uint64_t)spec->timing.interval_ms > (uint64_t)(spec->numa_hinting.steady_s * 1000))
			return sb_error_set(err, -EINVAL,
					    "spec.numa_hinting.steady_s: %g s is shorter than one sample interval (spec.timing.interval_ms %u); lengthen it",
					    spec->numa_hinting.steady_s, spec->timing.interval_ms);
	}
	return validate_uffd_restore(spec, err);
}

int spec_validate(const struct run_spec *spec, struct sb_error *err)
{
	int k = validate_host_vm(spec, err);

	if (k >= 0)
		k = validate_guest(spec, err);
	if (k >= 0)
		k = validate_memory(spec, err);
	if (k >= 0)
		k = validate_backend(spec, err);
	if (k >= 0)
		k = validate_paths(spec, err);
	if (k < 0)
		return k;
	if (spec->snapshot.keep && spec->snapshot.sink_null)
		return sb_error_set(err, -EINVAL,
				    "spec.snapshot.keep: a null sink keeps nothing; use sink \"file\" or keep false");
	if (spec->n_arms == 0)
		return sb_error_set(err, -EINVAL, "spec.arms: at least one arm is needed");
	k = validate_scenario(spec, err);
	if (k < 0)
		return k;
	if ((uint64_t)spec->timing.interval_ms > (uint64_t)(spec->timing.pre_s * 1000) ||
	    (uint64_t)spec->timing.interval_ms > (uint64_t)(spec->timing.post_s * 1000))
		return sb_error_set(err, -EINVAL,
				    "spec.timing.interval_ms: %u ms is longer than the pre (%g s) or post (%g s) window; sample more often or lengthen the windows",
				    spec->timing.interval_ms, spec->timing.pre_s, spec->timing.post_s);
	return 0;
}

/* ---- back to JSON ---- */

static struct json_object *knobs_json(const struct spec_knobs *k)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; o && i < k->n; i++)
		if (json_object_object_add(o, k->items[i].name, json_object_new_string(k->items[i].value)) < 0) {
			json_object_put(o);
			return NULL;
		}
	return o;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *seconds(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.10g", v);
	return json_object_new_double_s(v, buf);
}

static struct json_object *arms_json(const struct run_spec *spec)
{
	struct json_object *arms = json_object_new_array();
	struct json_build b = {};

	for (size_t i = 0; arms && i < spec->n_arms; i++) {
		struct json_object *arm = json_object_new_object();
		jb_add(&b, arm, "label", json_object_new_string(spec->arms[i].label));
		jb_add(&b, arm, "knobs", knobs_json(&spec->arms[i].knobs));
		if (spec->arms[i].kernel)
			jb_add(&b, arm, "kernel", json_object_new_string(spec->arms[i].kernel));
		if (spec->arms[i].modules)
			jb_add(&b, arm, "modules", json_object_new_string(spec->arms[i].modules));
		if (spec->arms[i].pin)
			jb_add(&b, arm, "pin", json_object_new_boolean(true));
		if (spec->arms[i].chunk)
			jb_add(&b, arm, "chunk", json_object_new_int64((int64_t)spec->arms[i].chunk));
		if (!arm || json_object_array_add(arms, arm) < 0) {
			json_object_put(arm);
			b.oom = true;
		}
	}
	if (b.oom) {
		json_object_put(arms);
		return NULL;
	}
	return arms;
}

/* A field's value as its type writes it (fields[] row f). */
static struct json_object *field_json(const struct run_spec *spec, const struct field *f)
{
	const char *base = (const char *)spec + f->offset;

	if (f->to_json)
		return f->to_json(spec);
	switch (f->type) {
	case F_UINT:
		return json_object_new_int64(*(const unsigned *)base);
	case F_U64:
		return json_object_new_uint64(*(const uint64_t *)base);
	case F_SIZE:
		return !*(const uint64_t *)base && f->nullable ? NULL : json_object_new_uint64(*(const uint64_t *)base);
	case F_SECONDS:
		return seconds(*(const double *)base);
	case F_BOOL:
		return json_object_new_boolean(*(const bool *)base);
	case F_STRING:
	case F_CHOICE:
		return str_or_null(*(char *const *)base);
	case F_ENUM:
		return json_object_new_string(f->choices[*(const int *)base]);
	case F_STRV: {
		struct json_object *a = json_object_new_array();
		for (char *const *v = *(char **const *)base; a && v && *v; v++)
			if (json_object_array_add(a, json_object_new_string(*v)) < 0) {
				json_object_put(a);
				return NULL;
			}
		return a;
	}
	default: /* the others have their own to_json */
		return NULL;
	}
}

/*
 * The object a field goes into: the top-level one, or the object its path's
 * prefix names (made at that prefix's F_OBJECT row, which comes first), or
 * NULL when that object is not written.
 */
static struct json_object *field_parent(struct json_object *top, const char *path)
{
	const char *dot = strrchr(path, '.');
	char prefix[64];
	struct json_object *o = top;

	if (!dot)
		return top;
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(dot - path), path);
	for (char *save = NULL, *part = strtok_r(prefix, ".", &save); part && o; part = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(o, part, &o))
			o = NULL;
	return o;
}

/* Walks fields[] in order: each field its type's JSON (or its own), objects as their rows come, each only when it holds. */
int spec_to_json(const struct run_spec *spec, struct json_object **ret)
{
	struct json_object *top = json_object_new_object();
	struct json_build b = {};

	if (!top)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(fields) && !b.oom; i++) {
		const struct field *f = &fields[i];
		const char *dot = strrchr(f->path, '.');
		struct json_object *parent = field_parent(top, f->path), *v;

		if (!parent || (f->when && !f->when(spec)))
			continue;
		v = f->type == F_OBJECT ? json_object_new_object() : field_json(spec, f);
		if (!v && (f->type == F_OBJECT || f->type == F_STRV || f->type == F_KNOBS || f->type == F_ARMS ||
			   f->type == F_VCPU_PATTERNS))
			b.oom = true; /* these are never null */
		jb_add(&b, parent, dot ? dot + 1 : f->path, v);
	}
	if (b.oom) {
		json_object_put(top);
		return -ENOMEM;
	}
	*ret = top;
	return 0;
}

int spec_arm_knobs(const struct run_spec *spec, size_t arm, struct spec_knobs *ret)
{
	struct spec_knobs k = {};
	struct sb_error err;
	int r;

	if (arm >= spec->n_arms)
		return -EINVAL;
	for (size_t i = 0; i < spec->knobs.n; i++) {
		r = knobs_set(&k, spec->knobs.items[i].name, spec->knobs.items[i].value, "knobs", &err);
		if (r < 0)
			goto fail;
	}
	for (size_t i = 0; i < spec->arms[arm].knobs.n; i++) {
		r = knobs_set(&k, spec->arms[arm].knobs.items[i].name, spec->arms[arm].knobs.items[i].value, "knobs",
			      &err);
		if (r < 0)
			goto fail;
	}
	*ret = k;
	return 0;
fail:
	spec_knobs_done(&k);
	return r;
}

int spec_copy(const struct run_spec *src, struct run_spec *dst, struct sb_error *err)
{
	struct json_object *j = NULL;
	const char *text;
	int k = spec_to_json(src, &j);

	if (k < 0)
		return sb_error_set(err, k, "out of memory");
	k = spec_init(dst);
	if (k < 0) {
		json_object_put(j);
		return sb_error_set(err, k, "out of memory");
	}
	text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	k = text ? spec_apply_json(dst, text, strlen(text), NULL, err) : sb_error_set(err, -ENOMEM, "out of memory");
	json_object_put(j);
	if (k < 0)
		spec_done(dst);
	return k;
}

static int replace_auto(char **kernel, const char *image)
{
	char *n;

	if (!*kernel || strcmp(*kernel, "auto"))
		return 0;
	n = strdup(image);
	if (!n)
		return -ENOMEM;
	free(*kernel);
	*kernel = n;
	return 0;
}

int spec_resolve_kernel(struct run_spec *spec, const char *image, bool all_arms)
{
	if (all_arms && !spec->host_vm.kernel && !(spec->host_vm.kernel = strdup("auto")))
		return -ENOMEM;
	if (replace_auto(&spec->host_vm.kernel, image) < 0)
		return -ENOMEM;
	for (size_t a = 0; a < spec->n_arms; a++)
		if (replace_auto(&spec->arms[a].kernel, image) < 0)
			return -ENOMEM;
	return 0;
}

uint64_t spec_arm_chunk(const struct run_spec *spec, size_t arm)
{
	return arm < spec->n_arms && spec->arms[arm].chunk ? spec->arms[arm].chunk : spec->uffd_restore.chunk;
}

const char *spec_arm_kernel(const struct run_spec *spec, size_t arm)
{
	return arm < spec->n_arms && spec->arms[arm].kernel ? spec->arms[arm].kernel : spec->host_vm.kernel;
}

const char *spec_arm_modules(const struct run_spec *spec, size_t arm)
{
	return arm < spec->n_arms && spec->arms[arm].modules ? spec->arms[arm].modules : spec->host_vm.modules;
}

bool spec_uses_host_vm(const struct run_spec *spec)
{
	for (size_t a = 0; a < spec->n_arms; a++)
		if (spec_arm_kernel(spec, a))
			return true;
	return false;
}

const char *spec_knob_all_arms(const struct run_spec *spec, const char *name)
{
	const char *base = NULL, *v = NULL;

	for (size_t i = 0; i < spec->knobs.n; i++)
		if (!strcmp(spec->knobs.items[i].name, name))
			base = spec->knobs.items[i].value;
	for (size_t a = 0; a < spec->n_arms; a++) {
		const char *this = base;
		for (size_t i = 0; i < spec->arms[a].knobs.n; i++)
			if (!strcmp(spec->arms[a].knobs.items[i].name, name))
				this = spec->arms[a].knobs.items[i].value;
		if (!this || (v && strcmp(v, this)))
			return NULL;
		v = this;
	}
	return v;
}
