/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sampler of one repetition. Its sources are cumulative: KVM's stats
 * (QMP query-stats, the VM's and the vCPUs' summed), the BPF probes'
 * counters, the host's NUMA-balancing and migration counters from
 * /proc/vmstat (host-wide, vmstat.h), and the micro guest's telemetry (op
 * counts per vCPU and the probe's latency histogram, read from the
 * telemetry socket as it arrives).
 * sampler_take() reads them all and appends one timeline row holding the
 * increase of every counter since the previous take, so the rows of a
 * repetition always sum to its totals.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "report.h"
#include "run-progress.h"

struct vm;
struct bpf_source;
struct guest_hello;
struct run_spec;

struct sampler;

/*
 * Learns which KVM stats are cumulative (query-stats-schemas), opens
 * /proc/vmstat and records in the report which probe feeds each counter. bpf may be NULL (probes off
 * or unavailable: the runner has recorded why).
 */
int sampler_new(struct report *r, struct report_rep *rep, struct vm *vm, struct bpf_source *bpf,
		const struct run_spec *spec, uint64_t rep_start_ns, struct sampler **ret, struct sb_error *err);
void sampler_free(struct sampler *s);

/*
 * From now on the sampler adds the CPU time it spends to cpu_ns (indexed
 * by enum report_cpu: query-stats, the BPF read, /proc/vmstat, decoding
 * the guest's telemetry), which the caller owns and outlives s.
 */
void sampler_set_cpu_account(struct sampler *s, uint64_t cpu_ns[static REPORT_CPU_MAX]);

/* Reads what the guest has sent, without blocking. -EPIPE once the stream ended. */
int sampler_pump(struct sampler *s, struct sb_error *err);

/* Pumps until the guest's HELLO arrived (and fills rep->guest_clock, tsc_khz, hist layout). */
int sampler_wait_hello(struct sampler *s, int timeout_ms, volatile const sig_atomic_t *cancel, struct sb_error *err);

/* The guest's HELLO once seen, else NULL. */
const struct guest_hello *sampler_hello(const struct sampler *s);

/*
 * Reads every source and remembers the values: the start of the first row.
 * The guest is paused (QMP stop, then cont) for the read, so that two
 * sources counting the same event (query-stats pf_taken, BPF
 * kvm:kvm_page_fault) start from the same one; where the VM cannot be
 * paused the read is taken running.
 */
int sampler_baseline(struct sampler *s, struct sb_error *err);

/*
 * QMP stop (pause) or cont. The runner pauses the guest for the last row,
 * so the totals of two such sources count the same events.
 */
int sampler_pause_vm(struct sampler *s, bool pause, struct sb_error *err);

/*
 * Appends a row for window w: increases since the previous take (or the
 * baseline). migration (may be NULL) goes into the row as it is. *fig gets
 * the row's headline rates (NAN: not measured).
 */
int sampler_take(struct sampler *s, enum report_window w, const struct report_migration *migration,
		 struct run_rates *fig, struct sb_error *err);

/* Why the guest stream ended, if it did: "" or the guest's END reason / last error LOG. */
const char *sampler_guest_end(const struct sampler *s);

/* Bytes of telemetry skipped as garbage (reported as a warning). */
uint64_t sampler_telemetry_skipped(const struct sampler *s);

/* CPU cost of sampling so far: time spent inside sampler_take(), ns. */
uint64_t sampler_busy_ns(const struct sampler *s);
