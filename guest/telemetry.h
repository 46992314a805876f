/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host side of the micro guest's telemetry (format: wire.h, docs/guest.md).
 *
 * A streaming decoder: feed it bytes as they come from the debugcon chardev,
 * in any split, and take records out. Garbage (bad magic, checksum, version,
 * length, or contents that contradict themselves or the HELLO) is reported
 * once per bad stretch with an error naming the stream offset, skipped, and
 * decoding goes on from the next valid record. Memory is fixed: one record
 * and a buffer of two maximal frames.
 *
 * Also: cycles to nanoseconds, per-window histograms and percentiles.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "wire.h"

struct guest_vcpu_info {
	int pattern; /* enum guest_pattern; GUEST_PATTERN_PROBE for the probe */
	unsigned apic_id;
	uint64_t slice_base, slice_bytes; /* the worker's part of the region; 0 for others */
};

struct guest_hello {
	unsigned vcpus;
	unsigned page_size;   /* 4096 or 2097152 */
	int clock_source;     /* enum guest_clock_source */
	unsigned interval_ms;
	uint64_t tsc_hz;
	uint32_t pvclock_mul; /* kvmclock's tsc_to_system_mul/tsc_shift, 0 otherwise */
	int pvclock_shift;
	bool populated;       /* the region was populated before the workloads (populate=on) */
	uint64_t ram_bytes, region_base, region_bytes;
	int probe_vcpu; /* -1: none */
	unsigned probe_gap_us;
	uint64_t run_ms, seed;
	uint64_t boot_tsc; /* TSC at the guest's first instruction */
	uint64_t tsc;      /* TSC when HELLO was sent; workloads start right after */
	uint32_t probe_overhead_cycles;
	struct guest_vcpu_info vcpu[GUEST_MAX_VCPUS];
};

/* Counts are cumulative since the workloads started. */
struct guest_sample {
	uint64_t tsc;
	unsigned vcpus;
	uint64_t ops[GUEST_MAX_VCPUS];
	uint64_t probe_reads, probe_sum_cycles, probe_max_cycles;
	uint64_t hist[GUEST_HIST_BUCKETS];
};

struct guest_end {
	uint64_t tsc;
	int reason; /* enum guest_end_reason */
	unsigned vcpus_stopped;
};

struct guest_log {
	int level; /* enum guest_log_level */
	char text[GUEST_WIRE_MAX_LOG + 1];
};

/* A fault-linear vCPU's pass (self-contained: a destination's stream has no HELLO). */
struct guest_fault {
	uint64_t tsc_start, tsc_end, tsc_hz;
	uint64_t base, bytes;   /* the vCPU's slice */
	uint64_t pages;         /* 4 KiB pages touched */
	uint64_t mismatches;    /* pages that did not hold what populate wrote */
	uint64_t first_mismatch; /* the first one's address; 0: none */
	unsigned vcpu;          /* index */
	int access;             /* enum guest_fault_access */
	/* the touches by their time in cycles (guest_fault_hist_index()); they add up to pages */
	uint64_t touch_hist[GUEST_FAULT_HIST_BUCKETS];
};

struct guest_record {
	int type; /* enum guest_record_type */
	uint32_t seq;
	uint32_t lost;       /* records skipped before this one (sequence gap) */
	uint64_t offset;     /* stream offset of the record's first byte */
	union {
		struct guest_hello hello;
		struct guest_sample sample;
		struct guest_end end;
		struct guest_log log;
		struct guest_fault fault;
	};
};

struct guest_decoder;

int guest_decoder_new(struct guest_decoder **out);
void guest_decoder_free(struct guest_decoder *d);
static inline void guest_decoder_freep(struct guest_decoder **d)
{
	guest_decoder_free(*d);
}
#define _cleanup_guest_decoder_ _cleanup_(guest_decoder_freep)

/* Copies up to len bytes in; returns how many it took. It takes fewer only
 * while it holds a whole frame not yet taken with guest_decoder_next(). */
size_t guest_decoder_feed(struct guest_decoder *d, const void *buf, size_t len);

/*
 * The next record: 1 and *rec (valid until the next call), 0 when more bytes
 * are needed, or a negative errno with err naming what was wrong and where;
 * the bad bytes are already skipped, so call again to go on.
 *   -EBADMSG           garbage, checksum, inconsistent contents
 *   -EPROTONOSUPPORT   a record of another telemetry version
 */
int guest_decoder_next(struct guest_decoder *d, const struct guest_record **rec, struct sb_error *err);

/*
 * All of buf fed and every record it completes handed to on_record (rec
 * valid during the call), in order; a frame that does not decode goes to
 * on_error (may be NULL) with guest_decoder_next()'s error, and decoding
 * goes on after it. What the sampler and a migration's destination both
 * do with the bytes a telemetry stream gives them.
 */
void guest_decoder_take(struct guest_decoder *d, const void *buf, size_t len,
			void (*on_record)(void *userdata, const struct guest_record *rec),
			void (*on_error)(void *userdata, const struct sb_error *err), void *userdata);

/* The stream's HELLO once seen, else NULL. */
const struct guest_hello *guest_decoder_hello(const struct guest_decoder *d);

/* Bytes fed so far, and bytes skipped as garbage. */
uint64_t guest_decoder_offset(const struct guest_decoder *d);
uint64_t guest_decoder_skipped(const struct guest_decoder *d);

/* Bytes held that make no whole record yet: at the end of the stream,
 * nonzero means it stopped in the middle of a record. */
size_t guest_decoder_pending(const struct guest_decoder *d);

/* ---- figures --------------------------------------------------------------- */

double guest_cycles_to_ns(const struct guest_hello *h, double cycles);

/* Operations per second of one vCPU between two samples (a before b). */
double guest_ops_per_sec(const struct guest_hello *h, const struct guest_sample *a, const struct guest_sample *b,
			 unsigned vcpu);

/* out = later - earlier, bucket by bucket: the histogram of a window.
 * -EINVAL if a count went down (samples of different runs, or swapped). */
int guest_hist_window(const uint64_t later[GUEST_HIST_BUCKETS], const uint64_t earlier[GUEST_HIST_BUCKETS],
		      uint64_t out[GUEST_HIST_BUCKETS], struct sb_error *err);

/*
 * Percentiles of a histogram, in ns: for each pct[i] in (0, 100], the
 * value below which pct[i] % of the reads fall, interpolated within its
 * bucket (error at most half a bucket, 1.6 %). -ENODATA for an empty
 * histogram, -EINVAL for a percentile out of range or tsc_hz 0.
 */
int guest_hist_percentiles(const uint64_t hist[GUEST_HIST_BUCKETS], uint64_t tsc_hz, const double *pct, size_t n,
			   double *ns, struct sb_error *err);

/* The pass's elapsed time in ns (its own tsc_hz). */
double guest_fault_pass_ns(const struct guest_fault *f);

/* Bucket b of a touch histogram in ns at tsc_hz (a FAULT's own): its lower
 * bound and width; -EINVAL for a bucket out of range or tsc_hz 0. */
int guest_fault_hist_ns(uint64_t tsc_hz, unsigned b, double *lower_ns, double *width_ns);

/* "read", "write"; NULL for anything else. */
const char *guest_fault_access_to_string(int access);

const char *guest_record_type_to_string(int type);
const char *guest_end_reason_to_string(int reason);
const char *guest_clock_source_to_string(int source);
/* What QEMU's exit status means for a guest run (see wire.h). */
const char *guest_exit_status_to_string(int status);
