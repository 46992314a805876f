/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reports/: the run report (snapbench.run/1, docs/report-format.md) as a C
 * model, its JSON form, its atomic write, and reading reports back.
 *
 * The run engine fills a struct report as the run goes: probes, arms, and
 * for each repetition its timeline rows (counter deltas, histogram deltas,
 * migration progress). Window summaries, arm statistics and metric_info are
 * derived when the report is serialized, so a report written mid-run is as
 * complete as the data it holds. This folder knows nothing of QEMU, BPF or
 * the guest: counters are names and numbers.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "kernel-id.h"

struct json_object;

#define REPORT_SCHEMA "snapbench.run/1"
#define REPORT_ID_MAX 32 /* "20261130T034512Z-3f9c2a" + NUL, with room */
#define REPORT_MAX_FILE_BYTES (512u << 20) /* what report_read() accepts */

enum report_state {
	REPORT_QUEUED,
	REPORT_RUNNING,
	REPORT_COMPLETED,
	REPORT_FAILED,
	REPORT_CANCELLED,
};

enum report_window {
	REPORT_WINDOW_WARMUP,
	REPORT_WINDOW_PRE,
	REPORT_WINDOW_SNAPSHOT,
	REPORT_WINDOW_POST,
	REPORT_WINDOW_MIGRATION, /* dirty-log: the migration held in its iterations */
	REPORT_WINDOW_STEADY,    /* numa-hinting: NUMA balancing scanning the guest RAM */
	REPORT_WINDOW_FAULT_IN,  /* uffd-restore: snapbench-uffd-restore faulting its region in */
	_REPORT_WINDOW_MAX,
};

enum report_rep_state {
	REPORT_REP_RUNNING,
	REPORT_REP_COMPLETED,
	REPORT_REP_FAILED,
	REPORT_REP_CANCELLED,
};

enum report_snapshot_status {
	REPORT_SNAPSHOT_NOT_STARTED,
	REPORT_SNAPSHOT_ACTIVE,
	REPORT_SNAPSHOT_COMPLETED,
	REPORT_SNAPSHOT_FAILED,
	REPORT_SNAPSHOT_CANCELLED,
};

const char *report_state_to_string(enum report_state s);
int report_state_from_string(const char *s); /* enum value or -EINVAL */
const char *report_window_to_string(enum report_window w);
int report_window_from_string(const char *s); /* enum value or -EINVAL */
const char *report_rep_state_to_string(enum report_rep_state s);
const char *report_snapshot_status_to_string(enum report_snapshot_status s);

/*
 * The window a scenario's action is sampled in (spec.scenario; NULL is the
 * default, background-snapshot): "migration" for the migrating scenarios,
 * dirty-log and postcopy-restore, "steady" for numa-hinting, "fault-in" for
 * uffd-restore, else "snapshot".
 */
const char *report_scenario_window(const char *scenario);
/* That window's heading in text output: "during the snapshot", "during the migration's passes" ... */
const char *report_scenario_window_title(const char *scenario);

/*
 * What a run summary gives of a scenario's window (docs/protocol.md "Run
 * summary") beside the headline rates: its duration's key
 * (WINDOW_duration_s, the window's own except the snapshot's, an arm
 * statistic) and the count a seed reads the scenario by, with its label
 * (numa_kvm_flushes for steady, restore_pf_taken for fault-in; NULL: none).
 */
struct report_window_summary {
	const char *window, *duration_key, *count, *count_label;
};
const struct report_window_summary *report_window_summary(const char *window);

struct report_error {
	char *message; /* NULL: no error */
	char *phase;
};

struct report_host {
	char *kernel_release, *kernel_version, *cmdline, *cpu_model, *hostname;
	unsigned cpus;
	uint64_t memory_bytes;
	bool virtualized;
	/* the host's KVM: vendor module and what it runs under ("" when not collected) */
	char kvm_module[24];
	char kvm_context[96];
	char *qemu_binary;
	char *qemu_version; /* NULL until QEMU answered */
	char *qemu_package;
	char **qemu_features; /* what the runner asked QEMU for and it has (string vector; NULL: not asked) */
};

/* Which probe feeds a counter, or why none does. */
struct report_probe {
	char *counter;      /* "kvm.pf_taken", "bpf.invalidations", "guest.probe_reads" */
	bool available;
	char *source;       /* may be NULL when unavailable */
	char *backend;      /* may be NULL when unavailable */
	char *reason;       /* set when unavailable */
	char *partial;      /* available, but fewer events than KVM counted: which repetitions, the numbers (selfcheck.h) */
};

struct report_migration {
	char status[32];
	uint64_t transferred, remaining;
	double pages_per_s;
	double dirty_pages_rate; /* < 0: QEMU did not report one */
	bool precopy;            /* a live migration's row (dirty-log): the two below are set */
	uint64_t dirty_sync_count; /* QEMU's dirty-log syncs so far: the pass under way at the sample */
	uint64_t pages;          /* pages sent so far (ram.normal + ram.duplicate) */
};

/* A live migration's destination QEMU, as the migrating scenarios record it (rep.migration, rep.postcopy). */
struct report_dest {
	int pid;                       /* 0: never started */
	char *exit;                    /* how it ended when it ended on its own, or NULL */
	char *log;                     /* its log's path, or NULL */
};

/* dirty-log: the live migration of a repetition (the iterations are derived from the timeline) */
struct report_live_migration {
	bool set;                      /* the repetition ran the dirty-log scenario */
	char status[32];               /* QEMU's last migration status; "" before migrate */
	double started_s;              /* migrate issued, seconds since the repetition started; < 0: never */
	double iterating_s;            /* how long it was held iterating before completion/cancel; < 0: not known */
	char completion[16];           /* "cancel" or "complete" as the spec asked */
	char tracking[16];             /* "bitmap" or "ring" */
	unsigned ring_size;            /* ring: entries per vCPU */
	uint64_t max_bandwidth;        /* bytes/s while iterating */
	unsigned downtime_limit_ms;
	uint64_t page_size;            /* QEMU's page size; 0: not known */
	struct report_dest dest;       /* the destination QEMU */
	char *error;                   /* why the migration failed, or NULL */
};

/* buckets a postcopy pass's first-touch histogram may have (the micro guest sends 40) */
#define REPORT_TOUCH_BUCKETS_MAX 64

/* postcopy-restore: the switch-over and the destination's fault-linear pass over its region */
/* numa-hinting: the guest RAM's placement and the steady window's policy switch */
#define REPORT_NUMA_NODES_MAX 8
#define REPORT_NUMA_VCPUS_MAX 64
struct report_numa {
	bool set;                      /* the repetition ran the numa-hinting scenario */
	unsigned nodes;                /* the host's online nodes (the guest RAM is spread over all of them) */
	char numa_balancing[16];       /* kernel.numa_balancing when the window began; "" unknown */
	double started_s;              /* the guest RAM's policy let NUMA balancing scan it; < 0: never */
	double ended_s;                /* ... and stopped it again; < 0: never */
	unsigned n_vcpus;              /* vcpu_node[i]: the node vCPU i's thread was placed on */
	int vcpu_node[REPORT_NUMA_VCPUS_MAX];
	unsigned node_slots;           /* entries of pages_start/pages_end: the highest online node + 1 */
	bool pages_known;              /* pages_start/pages_end hold QEMU's mapped guest RAM pages by node */
	uint64_t pages_start[REPORT_NUMA_NODES_MAX], pages_end[REPORT_NUMA_NODES_MAX];
	char *error;                   /* why the scenario failed, or NULL */
};

struct report_postcopy {
	bool set;                      /* the repetition ran the postcopy-restore scenario */
	char status[32];               /* the source's last migration status; "" before migrate */
	double started_s;              /* migrate issued, seconds since the repetition started; < 0: never */
	double switchover_s;           /* the destination's guest resumed (its RESUME event); < 0: never */
	double pass_started_s;         /* GUEST_CMD_FAULT sent to the destination's guest; < 0: never */
	char access[8];                /* "read" or "write" */
	bool preempt;                  /* postcopy-preempt */
	char backing[16];              /* spec.vm.backing */
	uint64_t chunk_bytes;          /* the page size postcopy serves a fault with: 4096, or the huge page size */
	double pass_ns;                /* the pass's time (the slowest fault-linear vCPU's); < 0: no pass reported */
	unsigned pass_vcpus;           /* fault-linear vCPUs that reported */
	uint64_t pass_pages, pass_bytes;
	uint64_t mismatches;           /* pages that did not hold what the source's guest wrote */
	uint64_t first_mismatch;       /* the first one's guest-physical address; 0: none */
	/* the pass's touches by their time, summed over its vCPUs: the non-empty
	 * buckets, lower bounds increasing; the counts add up to pass_pages */
	size_t n_touch;                /* 0: no histogram reported */
	double touch_lower_ns[REPORT_TOUCH_BUCKETS_MAX], touch_width_ns[REPORT_TOUCH_BUCKETS_MAX];
	uint64_t touch_count[REPORT_TOUCH_BUCKETS_MAX];
	int64_t postcopy_requests;     /* pages the destination asked the source for (query-migrate); < 0: not known */
	int64_t dest_pf_taken;         /* the destination's KVM pf_taken over the pass (query-stats); < 0: not known */
	bool probes_on_destination;    /* the BPF probes counted the destination's QEMU from migrate-start-postcopy to the window's end */
	char *probes_error;            /* why they could not be pointed at it, or NULL */
	struct report_dest dest;       /* the destination QEMU */
	char *error;                   /* why the repetition failed in the scenario, or NULL */
};

/* uffd-restore: snapbench-uffd-restore's pass, from its JSON (docs/scenarios.md) */
struct report_uffd_restore {
	bool set;                      /* the repetition ran the uffd-restore scenario */
	uint64_t region_bytes, chunk_bytes, pages;
	char access[8];                /* "read" or "write" */
	double pass_ms;                /* the vCPU's first entry to its halt; < 0: no pass reported */
	int64_t uffd_requests;         /* faults the handler served with a chunk; < 0: not known */
	int64_t uffd_woken;            /* faults in a chunk already placed, only woken; < 0: not known */
	int64_t uffd_bytes;            /* bytes it placed; < 0: not known */
	uint64_t mismatches;           /* pages that did not hold their snapshot's content */
	/* KVM's stats of the program's vCPU over the pass; < 0: the kernel has no such stat (pf_prefetched:
	 * seed 003's patch), or no pass */
	int64_t pf_taken, pf_fixed, pf_spurious, pf_prefetched;
	char *kvm_unavailable;         /* why this host's KVM cannot move those stats (PVM: no guest page-fault path), or NULL */
	int exit_status;               /* the program's exit status; -1: not exited (killed, or never started) */
	char *error;                   /* why the repetition failed in the scenario, or NULL */
};

/* One migration pass, derived from the timeline rows of the migration window (report_rep_iterations()). */
struct report_iteration {
	uint64_t pass;                 /* QEMU's dirty-sync-count while it ran */
	double start_s, duration_s;    /* its rows' span */
	size_t first_row, n_rows;      /* rows [first_row, first_row + n_rows) of rep->rows */
	bool complete;                 /* a later pass began: this one ran to its end */
	int64_t pages_sent;            /* pages sent during it; < 0: not known */
	int64_t dirty_pages;           /* pages it left dirty (sent by the next pass, or still queued); < 0: not known */
};

/* One timeline row: deltas since the previous row. */
struct report_row {
	double t_s, dt_s;
	enum report_window window;
	size_t n_values;       /* values[i] is the delta of rep->counters[i]; i >= n_values means 0 */
	uint64_t *values;
	size_t n_hist;         /* sparse histogram delta, bucket indexes increasing */
	uint32_t *hist_bucket;
	uint64_t *hist_count;
	bool has_migration;
	struct report_migration migration;
};

/* The latency histogram's buckets in ns, fixed for a repetition. */
struct report_hist_layout {
	size_t n;
	double *lower_ns;
	double *width_ns;
};

struct report_snapshot {
	enum report_snapshot_status status;
	double started_s, duration_s;  /* < 0: not known */
	int64_t bytes, pages;          /* < 0: not known */
	bool sink_null;
	char *path;                    /* kept file, or NULL */
	bool kept;
	int64_t file_bytes;            /* < 0: not known or null sink */
	char *error;
	/* spec.snapshot.max_bandwidth as applied: by snapbench's sink at throttle_rate; 0: no limit */
	uint64_t throttle_rate, throttle_burst; /* bytes/s, bytes */
	int64_t throttle_bytes;        /* bytes the throttled sink moved; < 0: not known */
	double throttle_waited_s;      /* time the sink waited for the rate */
};

struct report_rep {
	unsigned index;
	size_t arm;                    /* index into report->arms */
	enum report_rep_state state;
	struct report_error error;
	uint64_t started_ns, finished_ns; /* CLOCK_REALTIME; finished 0 while running */

	/* vm */
	int pid;                       /* 0: never started */
	uint64_t memory_bytes;
	unsigned vcpus;
	char **argv;                   /* NULL-terminated, may be NULL */
	char *vm_exit;                 /* "exit status 1", "killed by signal 9", or NULL */
	char *backend;                 /* the VM backend: "qemu" when NULL, "libvirt" */
	char *libvirt_uri;             /* libvirt backend: the connection URI ... */
	char *libvirt_domain;          /* ... the domain's name ... */
	char **libvirt_taints;         /* ... and why libvirt marked it tainted (NULL-terminated, may be NULL) */
	int64_t pinned_pages;          /* arms[].pin: guest RAM pages long-term pinned; < 0: not pinned */

	/* guest */
	char *guest_kind;              /* "micro" when NULL, "linux" */
	char *guest_clock;
	uint32_t tsc_khz;              /* 0: unknown */
	char *pattern;

	struct report_snapshot snapshot;
	struct report_live_migration migration;
	struct report_postcopy postcopy;

	struct report_numa numa;

	struct report_uffd_restore uffd_restore;

	/* kernel arms: the host VM this repetition ran in */
	bool host_vm;
	double host_vm_boot_s;         /* QEMU start to the runner inside ready; < 0: it never got there */
	char *host_vm_console;         /* the console log's path */
	int host_vm_pid;
	char *host_vm_retried;         /* why a first host VM was given up and this one booted, or NULL */
	int64_t host_vm_taint;         /* its kernel's /proc/sys/kernel/tainted at the end; < 0: not known */
	char **host_vm_kernel_warnings; /* the first WARNING/BUG/Oops lines of its kernel's log (NULL-terminated, may be NULL) */

	/* the timeline */
	size_t n_counters;
	char **counters;               /* names, in order of first appearance */
	size_t n_rows, cap_rows;
	struct report_row *rows;
	struct report_hist_layout hist;
	struct report_rows_text *rows_text; /* report_write()'s rows, rendered once (report-json.c) */
};

/* One timeline row as report_write() printed it (report-json.c). */
struct report_row_text {
	char *text;
	size_t len;
};

/* A repetition's rows as report_write() printed them, for the next write. */
struct report_rows_text {
	size_t n_counters; /* the repetition's counters when printed: a new one adds a 0 to every row */
	size_t n, cap;
	struct report_row_text *rows;
};

/* Frees what report_write() kept of a repetition's rows; NULL is fine. */
void report_rows_text_free(struct report_rows_text *t);

/*
 * The letters of a kernel's taint value, as the kernel prints them ("W" a
 * warning, "D" an oops, "L" a soft lockup, "E" an unsigned module, ...; one
 * letter a set bit, "?" for a bit this table does not know), in BUF;
 * returns BUF ("" for 0).
 */
#define REPORT_TAINT_FLAGS_LEN 65
const char *report_taint_flags(int64_t taint, char buf[REPORT_TAINT_FLAGS_LEN]);

/*
 * What a taint letter says when it says the kernel itself went wrong ("a
 * kernel warning" for W; D an oops, B a bad page, L a soft lockup, M a
 * machine check), else NULL (E an unsigned module, O an out-of-tree one ...).
 */
const char *report_taint_trouble(char letter);

/* Kernel arms (docs/kernel-arms.md): the kernel an arm's host VM boots, and that VM. */
struct report_kernel {
	struct kernel_id id;           /* image, release, version, build id, config */
	char *modules;                 /* the modules tree, or NULL */
	char *cmdline;                 /* the host VM's whole kernel command line */
	char *module_params;           /* "kvm_amd.npt=0 ..." passed at load time, or NULL */
	char *accel, *accel_reason;    /* "tcg"/"kvm", and why */
	char *booted;                  /* "bzimage", or "pvh": its payload unpacked and booted through its PVH entry */
	unsigned vcpus, numa_nodes;
	uint64_t memory_bytes;
};

struct report_arm {
	char *label;
	struct json_object *knobs;     /* {"sysctl:...": "value"}; owned reference */
	unsigned total;                /* repetitions the spec asks for */
	struct report_kernel *kernel;  /* NULL: the arm ran on this host */
};

/* What the run engine's CPU is spent on (the report's "runner.cpu", docs/report-format.md). */
enum report_cpu {
	REPORT_CPU_BPF_LOAD,    /* opening, loading, verifying and attaching the probes; retargeting them */
	REPORT_CPU_SAMPLE_KVM,  /* query-stats over QMP (vm and vcpu) */
	REPORT_CPU_SAMPLE_BPF,  /* reading the probes' per-CPU counters */
	REPORT_CPU_SAMPLE_HOST, /* /proc/vmstat */
	REPORT_CPU_TELEMETRY,   /* the guest's telemetry: the drain thread, decoding, the row's guest counters */
	REPORT_CPU_REPORT,      /* serializing and writing report.json */
	REPORT_CPU_MAX
};

const char *report_cpu_to_string(enum report_cpu c);

/*
 * Where the guest ran and what ran it, layer by layer ("accel" and
 * "host_vm" in the JSON, docs/report-format.md#accelerators). Under TCG
 * (QEMU's emulator) at any layer, counts are the kernel's own but times,
 * rates and latencies are the emulator's: timing_emulated.
 */
struct report_placement {
	bool set;
	char guest_accel[8];           /* "kvm" or "tcg": what ran the guest (inside the host VM for kernel arms) */
	char host_vm_accel[8];         /* the host VMs' accelerator, "" when the run stayed on this host */
	char *reason;                  /* one line: where and why */
	bool host_vm;                  /* the repetitions ran in host VMs */
	bool fell_back;                /* ... because this host had no usable /dev/kvm (host_vm.fallback) */
	char *kernel, *kernel_how;     /* host_vm.kernel "auto": the image and where it came from; NULL otherwise */
};

/* Whether any layer ran under TCG: then time-based figures are emulated. */
static inline bool report_placement_emulated(const struct report_placement *p)
{
	return p->set && (!strcmp(p->guest_accel, "tcg") || !strcmp(p->host_vm_accel, "tcg"));
}

struct report {
	char id[REPORT_ID_MAX];
	enum report_state state;
	struct report_error error;
	uint64_t created_ns, started_ns, finished_ns; /* CLOCK_REALTIME; 0: not yet */
	struct json_object *spec;      /* owned reference */
	struct report_host host;
	struct report_placement placement;
	char *snapbench_version;

	size_t n_probes;
	struct report_probe *probes;
	size_t n_arms;
	struct report_arm *arms;
	size_t n_reps;
	struct report_rep **reps;

	/* the run engine's own cost ("runner" in the JSON); written when set */
	struct {
		bool set;
		double cpu_user_s, cpu_system_s, wall_s;
		uint64_t samples;
		/* where the CPU went ("runner.cpu"); the rest of user + system is "other" */
		double cpu_s[REPORT_CPU_MAX];
		uint64_t wakeups;        /* the run loop's wakeups between samples */
		uint64_t telemetry_reads; /* the telemetry drain thread's reads */
	} usage;
};

/* ---- building ---- */

/* A report in state running with id and created time; spec is taken (a reference). */
int report_new(const char *id, uint64_t created_ns, struct report **ret);
void report_free(struct report *r);
static inline void report_freep(struct report **r)
{
	report_free(*r);
}
#define _cleanup_report_ _cleanup_(report_freep)

/* Takes the reference to spec (also on failure). */
void report_set_spec(struct report *r, struct json_object *spec);
/* Sets message and phase (copied); NULL message clears. */
int report_error_set(struct report_error *e, const char *phase, const char *message);

/* Adds or replaces the probe entry of counter. */
int report_set_probe(struct report *r, const char *counter, bool available, const char *source,
		     const char *backend, const char *reason);
const struct report_probe *report_find_probe(const struct report *r, const char *counter);

/* Adds an arm; knobs is taken (a reference, may be NULL for none). Returns its index or -errno. */
int report_add_arm(struct report *r, const char *label, struct json_object *knobs, unsigned total);

/* Sets arm's kernel (taken; freed on failure). */
int report_arm_set_kernel(struct report *r, size_t arm, struct report_kernel *k);
void report_kernel_free(struct report_kernel *k);

/*
 * Fills rep from a repetition of another report (JSON, as report_read()
 * returns): a kernel arm's repetition ran in a host VM, whose own report
 * comes back through the results share. Copies state, error, vm, guest,
 * snapshot and timeline, and the probes' availability into r.
 */
int report_rep_import(struct report *r, struct report_rep *rep, struct json_object *inner_report, size_t inner_rep,
		      struct sb_error *err);

/* Appends a repetition in state running, started now (started_ns). */
int report_add_rep(struct report *r, size_t arm, uint64_t started_ns, struct report_rep **ret);

/* Index of counter name in rep, adding it. Returns the index or -errno. */
int report_rep_counter(struct report_rep *rep, const char *name);
/*
 * The same, looking at index hint first: a sampler's sources emit their
 * counters in one order each sample, so the counter after the last one
 * it emitted is most often the next (no search of every name).
 */
int report_rep_counter_hint(struct report_rep *rep, const char *name, size_t hint);
/* Sets the histogram layout (copied); only before the first row with a histogram. */
int report_rep_set_hist_layout(struct report_rep *rep, size_t n, const double *lower_ns, const double *width_ns);

/* Appends an empty row; the pointer stays valid until the next append. */
int report_rep_append_row(struct report_rep *rep, double t_s, double dt_s, enum report_window w,
			  struct report_row **ret);
/* Sets the delta of counter (by name or by index) in row. */
int report_row_set(struct report_rep *rep, struct report_row *row, const char *counter, uint64_t delta);
int report_row_set_index(struct report_row *row, size_t index, uint64_t delta);
/* Adds count to histogram bucket (indexes must come in increasing order). */
int report_row_add_hist(struct report_rep *rep, struct report_row *row, uint32_t bucket, uint64_t count);

/*
 * The passes of rep's migration window. *ret is malloc'd (NULL and 0 when
 * there are none). Rows are assigned to the pass under way at their start
 * (the pass their previous row ended in), so every row of the window is in
 * exactly one iteration and per-iteration sums add up to the window's.
 */
int report_rep_iterations(const struct report_rep *rep, struct report_iteration **ret, size_t *n);

/* Sum of a counter over the rep's rows (of window w, or all rows when w < 0). */
uint64_t report_rep_counter_total(const struct report_rep *rep, size_t index, int w);

/* ---- summaries (docs/report-format.md "Metrics") ---- */

struct report_metric_def {
	const char *name;        /* "pf_per_s", or a family base "invalidations_per_s" */
	const char *counter;     /* "kvm.pf_taken", or a family prefix "bpf.invalidations" */
	bool family;             /* one metric per counter "<counter>.<cause>": "<name>.<cause>" */
	const char *unit, *better, *description;
	/*
	 * The counter's total over the window rather than a rate: false, true
	 * (numa-hinting repetitions only) or REPORT_COUNT_ALWAYS (every
	 * repetition; a family's members too).
	 */
	unsigned char window_count;
};

#define REPORT_COUNT_ALWAYS 2

/* The metric table, in report order. */
const struct report_metric_def *report_metric_defs(size_t *n);

/*
 * The summary of window w of rep: {"start_s", "duration_s", "metrics",
 * "unavailable"}, or NULL (and 0) when the repetition has no row in w.
 */
int report_rep_window_summary(const struct report *r, const struct report_rep *rep, enum report_window w,
			      struct json_object **ret);

/*
 * Percentile p (0..1) of the histogram counts[] over layout, interpolated
 * linearly inside the bucket that holds it. NAN when counts are all zero.
 */
double report_hist_percentile(const struct report_hist_layout *layout, const uint64_t *counts, double p);

/* ---- output ---- */

/* The whole report as JSON (new reference in *ret). */
int report_to_json(const struct report *r, struct json_object **ret, struct sb_error *err);

/* Serializes and replaces path atomically (temp file, fsync, rename). */
int report_write(const struct report *r, const char *path, struct sb_error *err);

/* ---- ids and times ---- */

/* "YYYYMMDDTHHMMSSZ-xxxxxx" from a CLOCK_REALTIME time and 24 random bits. */
void report_make_id(uint64_t realtime_ns, uint32_t random24, char buf[static REPORT_ID_MAX]);
/*
 * A new run id for a run created at realtime_ns, its 24 bits from
 * getrandom() (the monotonic clock's low bits should that fail): the one
 * generator of run ids (snapbench run --local, the run engine, snapbenchd).
 */
void report_new_id(uint64_t realtime_ns, char buf[static REPORT_ID_MAX]);
/* Whether s has the shape of a run id (safe as a directory name). */
bool report_id_valid(const char *s);
/* RFC 3339 UTC, second resolution: "2026-11-30T03:45:12Z". */
void report_format_time(uint64_t realtime_ns, char buf[static 32]);

/* ---- reading ---- */

/*
 * Read a report file (at most REPORT_MAX_FILE_BYTES, JSON depth bounded),
 * check it is a JSON object whose "schema" is snapbench.run/1 and whose
 * top-level fields have the documented types (created, spec and host may
 * be null in a partial report, one with a top-level "partial" object). *ret
 * is a new reference. Errors name the file and what is wrong.
 */
/* Never through a symlink, never blocking on a FIFO: only a regular file of at most REPORT_MAX_FILE_BYTES. */
int report_read(const char *path, struct json_object **ret, struct sb_error *err);

/*
 * What a file's text is when it cannot be a report at all, said before
 * parsing it: "an empty file (0 bytes)", "a binary file (a NUL byte at byte
 * 12)", into buf; false when it may be JSON.
 */
bool report_text_not_json(const char *text, size_t len, char *buf, size_t size);

/* The "state" of a report read with report_read() (enum report_state), or -EINVAL. */
int report_json_state(struct json_object *report);
