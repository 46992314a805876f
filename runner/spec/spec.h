/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run spec: what one run does (docs/running.md). Read from a JSON file,
 * overridden field by field from command-line flags, validated, and written
 * back with every default filled in as the report's "spec".
 *
 * Every error names the field ("spec.timing.pre_s: must be > 0 (got -1)")
 * or the flag that set it, and says what would be accepted. Unknown fields
 * are errors: a typo must not silently run the default.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct json_object;

#define SPEC_MAX_FILE_BYTES (1u << 20)
#define SPEC_MAX_ARMS 32
#define SPEC_MAX_REPETITIONS 1000
#define SPEC_MAX_KNOBS 64
#define SPEC_MAX_EXTRA_ARGS 256
#define SPEC_MAX_STRING 4096
#define SPEC_MAX_VCPUS 255 /* the micro guest's limit (xAPIC) */
#define SPEC_MIN_MEMORY (16ull << 20)
#define SPEC_MAX_MEMORY (1ull << 40)
/* timing.interval_ms's bounds (snapbench run --interval names them) */
#define SPEC_INTERVAL_MIN_MS 100
#define SPEC_INTERVAL_MAX_MS 60000

enum spec_scenario {
	SPEC_SCENARIO_BACKGROUND_SNAPSHOT,
	SPEC_SCENARIO_DIRTY_LOG,       /* a precopy migration held in its iterations (docs/scenarios.md) */
	SPEC_SCENARIO_POSTCOPY_RESTORE, /* a postcopy migration; the destination's guest faults its region in once */
	SPEC_SCENARIO_NUMA_HINTING,    /* NUMA balancing scans the guest RAM for a steady window (seed 002) */
	SPEC_SCENARIO_UFFD_RESTORE,    /* snapbench-uffd-restore faults a region in through a chunked userfaultfd handler (seed 003) */
};

enum spec_fault_access {
	SPEC_FAULT_READ,               /* fault-linear reads each page */
	SPEC_FAULT_WRITE,              /* ... writes it */
};

enum spec_dirty_tracking {
	SPEC_DIRTY_BITMAP,             /* KVM's dirty bitmap (KVM_GET_DIRTY_LOG / KVM_CLEAR_DIRTY_LOG) */
	SPEC_DIRTY_RING,               /* KVM's dirty ring, -accel kvm,dirty-ring-size=N */
};

enum spec_completion {
	SPEC_COMPLETION_CANCEL,        /* migrate_cancel: the source runs on */
	SPEC_COMPLETION_COMPLETE,      /* let it converge; the source is resumed (cont) for the post window */
};

enum spec_backing {
	SPEC_BACKING_ANON,        /* anonymous RAM; THP as the host allows (QEMU madvises) */
	SPEC_BACKING_ANON_NOTHP,  /* anonymous RAM, THP disabled for QEMU (PR_SET_THP_DISABLE) */
	SPEC_BACKING_HUGETLB,     /* memfd on hugetlbfs, hugepage_size pages */
	SPEC_BACKING_MEMFD,       /* a shared memfd (shmem) of 4 KiB pages: what arms[].pin pins */
};

enum spec_backend {
	SPEC_BACKEND_QEMU,        /* QEMU launched by snapbench (runner/vm/vm-qemu.c) */
	SPEC_BACKEND_LIBVIRT,     /* a libvirt domain (runner/vm/vm-libvirt.c) */
};

enum spec_guest_kind {
	SPEC_GUEST_MICRO,         /* the built-in micro guest (docs/guest.md) */
	SPEC_GUEST_LINUX,         /* a Linux guest driven through qemu-guest-agent (docs/linux-guests.md) */
};

enum spec_page_size {
	SPEC_PAGE_4K,
	SPEC_PAGE_2M,
};

/*
 * One knob: "sysctl:kernel.numa_balancing", "module:kvm.halt_poll_ns" or
 * "debugfs:sched/numa_balancing/scan_period_min_ms" = value.
 */
struct spec_knob {
	char *name;
	char *value;
};

struct spec_knobs {
	size_t n;
	struct spec_knob *items;
};

struct spec_arm {
	char *label;
	struct spec_knobs knobs;
	char *kernel;                 /* this arm's host VM kernel; NULL: spec.host_vm.kernel */
	char *modules;                /* its lib/modules/RELEASE; NULL: spec.host_vm.modules */
	bool pin;                     /* long-term pin the guest RAM, as an assigned device would (runner/scenario/guest-pin.h) */
	uint64_t chunk;               /* uffd-restore: this arm's handler chunk in bytes; 0: spec.uffd_restore.chunk */
};

#define SPEC_PATTERN_DEFAULT NULL /* in vcpu_pattern[]: the guest's default pattern */

struct run_spec;
/* The scenarios that start a migration's destination QEMU on this host (a second copy of guest RAM). */
static inline bool spec_scenario_has_destination(enum spec_scenario s)
{
	return s == SPEC_SCENARIO_DIRTY_LOG || s == SPEC_SCENARIO_POSTCOPY_RESTORE;
}

struct run_spec {
	enum spec_scenario scenario;
	char *description;            /* may be NULL */
	unsigned repetitions;

	struct {
		enum spec_backend backend;
		uint64_t memory;
		unsigned vcpus;
		char *machine;
		char *cpu;                /* NULL: QEMU's default model */
		enum spec_backing backing;
		uint64_t hugepage_size;   /* bytes; 0 unless backing is hugetlb */
		bool prealloc;
		char *user;               /* NULL: QEMU runs as the invoking user */
		char *qemu;               /* the QEMU binary (absolute path); NULL: QEMU_DEFAULT_BINARY in PATH (runner_options.qemu_binary, --qemu, wins) */
		size_t n_extra_args;
		char **extra_args;
		char *disk;               /* qemu backend, Linux guests: the guest's disk image (opened snapshot=on), or NULL */
		char *disk_format;        /* "qcow2" or "raw" */
		/*
		 * What runs the guest on this host: "kvm" (/dev/kvm; without a usable
		 * one the run goes into a host VM, unless host_vm.fallback is false),
		 * "tcg" (QEMU's emulator: no KVM counters, emulated timing) or "auto"
		 * (kvm when /dev/kvm opens, else tcg on this host).
		 */
		char *accel;
		struct {
			char *uri;        /* libvirt connection URI; a local one (no host part) */
			char *domain;     /* an existing domain (Linux guests), or NULL */
			char *xml;        /* a domain XML file for a transient domain (Linux guests), or NULL */
			bool restart;     /* start the domain fresh for each repetition (else use it running) */
		} libvirt;
	} vm;

	struct {
		enum spec_guest_kind kind;
		char *pattern;            /* every worker's pattern */
		char *vcpu_pattern[SPEC_MAX_VCPUS]; /* per-vCPU override, NULL: pattern */
		uint64_t region_bytes;    /* 0: region_percent of the free RAM */
		unsigned region_percent;  /* 1..100 when region_bytes is 0 */
		enum spec_page_size page_size;
		int probe_vcpu;           /* -1: no latency probe */
		unsigned probe_gap_us;
		uint64_t seed;
		char *clock;              /* auto, kvmclock, cpuid, pit */
		unsigned telemetry_interval_ms;
		struct {
			char *stress_ng;          /* stress-ng's path in the guest */
			char *method;             /* stress-ng --vm-method */
			unsigned workers;         /* stress-ng --vm */
			char *vm_bytes;           /* stress-ng --vm-bytes: "128M", "50%" */
			uint64_t probe_region;    /* bytes the probe reads */
			char *dir;                /* where the probe and its telemetry go in the guest */
			double agent_timeout_s;   /* for the agent to answer after the guest starts */
		} linux_guest;            /* guest.linux */
	} guest;

	struct {
		bool sink_null;
		bool keep;
		uint64_t max_bandwidth;   /* bytes/s, 0: unlimited */
		double timeout_s;
	} snapshot;

	/* scenario dirty-log: the migration and how it is held in its iterative phase */
	struct {
		enum spec_dirty_tracking tracking;
		unsigned ring_size;       /* dirty ring entries per vCPU, a power of 2 */
		double iterate_s;         /* how long the migration is held iterating */
		uint64_t max_bandwidth;   /* QEMU's max-bandwidth, bytes/s */
		unsigned downtime_limit_ms; /* QEMU's downtime-limit while iterating: small, so it does not converge */
		enum spec_completion completion;
	} dirty_log;

	/* scenario postcopy-restore: the switch-over and the destination's one pass over its region */
	struct {
		enum spec_fault_access access; /* the fault-linear pass's access */
		bool preempt;             /* QEMU's postcopy-preempt capability on both sides */
		uint64_t background_bandwidth; /* QEMU's max-postcopy-bandwidth: the background push, bytes/s; 0: unlimited */
		double timeout_s;         /* for the migration and the pass to end */
	} postcopy;

	/* scenario numa-hinting: how long NUMA balancing scans the guest RAM */
	struct {
		double steady_s;          /* the steady window */
	} numa_hinting;

	/* scenario uffd-restore: snapbench-uffd-restore's region, chunk and access (docs/scenarios.md) */
	struct {
		uint64_t region;          /* bytes, a multiple of every arm's chunk */
		uint64_t chunk;           /* the handler's chunk, a power of 2 from 4 KiB to 2 MiB; arms[].chunk overrides */
		enum spec_fault_access access;
		double timeout_s;         /* for the program to end */
	} uffd_restore;

	struct {
		double warmup_s, pre_s, post_s;
		unsigned interval_ms; /* SPEC_INTERVAL_MIN_MS to SPEC_INTERVAL_MAX_MS */
	} timing;

	struct {
		bool enabled;
	} bpf;

	/* kernel arms (docs/kernel-arms.md): each repetition in a host VM booting the arm's kernel */
	struct {
		char *kernel;             /* bzImage for every arm, or "auto" (runner/preflight/placement.h); NULL: arms run on this host unless they name one */
		char *modules;            /* its lib/modules/RELEASE; NULL: beside the image, or /lib/modules/RELEASE */
		char *cmdline;            /* appended to the host VM's kernel command line; may be NULL */
		uint64_t memory;
		unsigned vcpus;
		unsigned numa_nodes;      /* memory and vCPUs split evenly */
		char *accel;              /* auto, kvm, tcg */
		double boot_timeout_s;    /* QEMU start to the runner inside ready */
		bool fallback;            /* vm.accel kvm without a usable /dev/kvm: run in a host VM (kernel auto) rather than refuse */
	} host_vm;

	struct spec_knobs knobs;      /* for every arm */
	size_t n_arms;
	struct spec_arm *arms;
};

/* Fills spec with the defaults (one arm "default", no knobs). */
int spec_init(struct run_spec *spec);
void spec_done(struct run_spec *spec);

/*
 * Applies the JSON object text (a spec file's contents) on top of spec.
 * Fields absent from the text keep their current values. origin names the
 * file in messages ("FILE: spec.vm.vcpus: ..."); may be NULL.
 */
int spec_apply_json(struct run_spec *spec, const char *text, size_t len, const char *origin, struct sb_error *err);

/* Reads FILE (at most SPEC_MAX_FILE_BYTES) and applies it. */
int spec_apply_file(struct run_spec *spec, const char *path, struct sb_error *err);

/*
 * Sets one field from a command-line string, e.g. ("vm.memory", "1G"),
 * ("timing.pre_s", "5"), ("knobs", "sysctl:kernel.numa_balancing=0").
 * flag names the option in messages ("--memory"). Fields that hold a list
 * (vm.extra_args, knobs) append. The field names are those of the JSON.
 */
int spec_set(struct run_spec *spec, const char *field, const char *value, const char *flag, struct sb_error *err);

/* Adds an arm "LABEL" or "LABEL:KNOB=VALUE[,KNOB=VALUE...]" (--arm). The first
 * --arm replaces the default arm. */
int spec_add_arm(struct run_spec *spec, const char *arg, const char *flag, struct sb_error *err);

/* Checks what involves several fields (probe vCPU within vcpus, ...). */
int spec_validate(const struct run_spec *spec, struct sb_error *err);

/* The spec as JSON, defaults filled in, sizes in bytes (a new reference). */
int spec_to_json(const struct run_spec *spec, struct json_object **ret);

/* The knobs of arm i: the run's knobs overridden by the arm's (a copy). */
int spec_arm_knobs(const struct run_spec *spec, size_t arm, struct spec_knobs *ret);
void spec_knobs_done(struct spec_knobs *k);

/* The value every arm gives knob name (its own or the run's), or NULL when arms differ or one leaves it alone. */
const char *spec_knob_all_arms(const struct run_spec *spec, const char *name);

/* A deep copy of src into dst (spec_init()ed here; spec_done() it). */
int spec_copy(const struct run_spec *src, struct run_spec *dst, struct sb_error *err);

/*
 * Kernel arms: every "auto" kernel (host_vm.kernel, arms[].kernel) becomes
 * image; with all_arms, an arm with no kernel gets it too (host_vm.kernel),
 * so that the run goes into host VMs. -ENOMEM.
 */
int spec_resolve_kernel(struct run_spec *spec, const char *image, bool all_arms);

/* Kernel arms: the kernel image arm runs in, or NULL when it runs on this host. */
/* The uffd-restore chunk of arm (its own, else spec.uffd_restore.chunk). */
uint64_t spec_arm_chunk(const struct run_spec *spec, size_t arm);
const char *spec_arm_kernel(const struct run_spec *spec, size_t arm);
/* Its modules tree, or NULL (found beside the image). */
const char *spec_arm_modules(const struct run_spec *spec, size_t arm);
/* Whether the run's repetitions run in host VMs (some arm has a kernel). */
bool spec_uses_host_vm(const struct run_spec *spec);

/* The total number of repetitions (arms x repetitions). */
static inline unsigned spec_total_repetitions(const struct run_spec *spec)
{
	return (unsigned)spec->n_arms * spec->repetitions;
}

/* "256M" "1G" "4096" "2MiB" -> bytes. -EINVAL / -ERANGE. */
int spec_parse_size(const char *s, uint64_t *ret);

/*
 * Knob names: "sysctl:a.b_c", "module:m.p" or "debugfs:dir/file"; no empty,
 * "." or ".." components, so none leaves its tree.
 */
bool spec_knob_name_valid(const char *name);
/* Why name is not a knob name, with the fix; NULL when it is one. */
const char *spec_knob_name_problem(const char *name);
bool spec_label_valid(const char *label);
