/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The contract between the micro guest (guest/kernel/) and the host: I/O
 * ports, exit codes, workload patterns, the telemetry wire format and the
 * latency histogram's bucket layout. Both sides compile this header, the
 * guest freestanding, so it uses nothing but <stdint.h>.
 *
 * docs/guest.md describes the same format for readers; keep them in step.
 * Any change to a record's layout bumps GUEST_WIRE_VERSION.
 */
#pragma once

#include <stdint.h>

/* ---- devices the guest talks to ---------------------------------------- */

/* isa-debugcon: the telemetry stream, guest to host (rep outsb). */
#define GUEST_PORT_TELEMETRY 0xe9
/* isa-debug-exit (iosize 4): a value v written here makes QEMU exit with
 * status (v << 1) | 1. */
#define GUEST_PORT_EXIT 0xf4
/* COM1: the control channel, host to guest. The guest polls the receive
 * register; GUEST_CMD_STOP asks for a clean stop, other bytes are ignored. */
#define GUEST_PORT_SERIAL 0x3f8
#define GUEST_CMD_STOP 'q'
#define GUEST_CMD_FAULT 'f' /* fault-linear workers: run the pass now (once) */

/* Values the guest writes to GUEST_PORT_EXIT, and QEMU's exit status for
 * each. Status 1 stays QEMU's own failure (bad option, no KVM), status 0 a
 * guest reset or triple fault under -no-reboot. */
enum guest_exit {
	GUEST_EXIT_STOPPED = 0x10,    /* clean stop: END record sent */
	GUEST_EXIT_BAD_PARAMS = 0x11, /* command line rejected: LOG record says why */
	GUEST_EXIT_FATAL = 0x12,      /* CPU exception or boot failure: LOG record says what */
};
#define GUEST_EXIT_STATUS(v) (((v) << 1) | 1)

#define GUEST_MAX_VCPUS 255 /* xAPIC broadcast start-up, 8-bit APIC IDs */

/* ---- workloads ----------------------------------------------------------- */

enum guest_pattern {
	GUEST_PATTERN_IDLE = 0,     /* halts */
	GUEST_PATTERN_READ64 = 1,   /* sweeps its slice, one 8-byte load per op */
	GUEST_PATTERN_WRITE64 = 2,  /* sweeps its slice, one 8-byte store per op */
	GUEST_PATTERN_RAND_SET = 3, /* 8-byte store at a seeded pseudo-random slot */
	GUEST_PATTERN_PROBE = 4,    /* the latency probe (role, not a -append value) */
	GUEST_PATTERN_FAULT_LINEAR = 5, /* waits for GUEST_CMD_FAULT, then one read (or write) per 4 KiB page of its
					 * slice, in order, once; checks the populated value; a FAULT record */
	GUEST_PATTERN_COUNT
};

/*
 * Their names, the one spelling of each: the guest's -append (pattern=),
 * the host's command line builder and the run spec's guest.pattern all
 * take these (a header's strings, so the spec links nothing of the guest).
 */
#define GUEST_PATTERN_NAME_IDLE "idle"
#define GUEST_PATTERN_NAME_READ64 "read64"
#define GUEST_PATTERN_NAME_WRITE64 "write64"
#define GUEST_PATTERN_NAME_RAND_SET "rand-set"
#define GUEST_PATTERN_NAME_PROBE "probe"
#define GUEST_PATTERN_NAME_FAULT_LINEAR "fault-linear"
#define GUEST_PATTERN_NAMES                                                                       \
	{                                                                                         \
		[GUEST_PATTERN_IDLE] = GUEST_PATTERN_NAME_IDLE,                                   \
		[GUEST_PATTERN_READ64] = GUEST_PATTERN_NAME_READ64,                               \
		[GUEST_PATTERN_WRITE64] = GUEST_PATTERN_NAME_WRITE64,                             \
		[GUEST_PATTERN_RAND_SET] = GUEST_PATTERN_NAME_RAND_SET,                           \
		[GUEST_PATTERN_PROBE] = GUEST_PATTERN_NAME_PROBE,                                 \
		[GUEST_PATTERN_FAULT_LINEAR] = GUEST_PATTERN_NAME_FAULT_LINEAR,                   \
	}

/* Clock the guest used to learn its TSC frequency. */
enum guest_clock_source {
	GUEST_CLOCK_KVMCLOCK = 1, /* pvclock tsc_to_system_mul/tsc_shift */
	GUEST_CLOCK_CPUID = 2,    /* CPUID 0x15 (or 0x16) */
	GUEST_CLOCK_PIT = 3,      /* calibrated against PIT channel 2 */
	GUEST_CLOCK_OS = 4,       /* calibrated against the OS's monotonic clock (the Linux guests' probe, guest/linux-probe/) */
};

/* ---- telemetry records -------------------------------------------------- */
/*
 * A record is a 20-byte header, a payload and a 4-byte CRC of the payload.
 * Integers are little-endian and unaligned.
 *
 *   0  u32 magic          GUEST_WIRE_MAGIC ("SBGT")
 *   4  u8  version        GUEST_WIRE_VERSION
 *   5  u8  type           enum guest_record_type
 *   6  u16 flags          0 (reserved)
 *   8  u32 seq            0 for the first record, +1 for every record
 *  12  u32 length         payload bytes, <= GUEST_WIRE_MAX_PAYLOAD
 *  16  u32 header_crc     CRC-32 of bytes 0..15
 *  20  payload[length]
 *  20+length u32 crc      CRC-32 of the payload
 *
 * CRC-32 is the IEEE 802.3 one (reflected, polynomial 0xedb88320, initial
 * and final xor 0xffffffff), as zlib's crc32(). The header has its own CRC
 * so a corrupt length is caught before waiting for that many bytes.
 */
#define GUEST_WIRE_MAGIC 0x54474253u /* bytes 'S' 'B' 'G' 'T' */
#define GUEST_WIRE_VERSION 2 /* 2: FAULT carries the first-touch histogram */
#define GUEST_WIRE_HEADER_SIZE 20
#define GUEST_WIRE_TRAILER_SIZE 4
#define GUEST_WIRE_MAX_PAYLOAD 16384
#define GUEST_WIRE_MAX_LOG 512

enum guest_record_type {
	/*
	 * HELLO, once after boot, before any SAMPLE:
	 *   u16 vcpus, u8 page_shift (12 or 21), u8 clock_source,
	 *   u32 interval_ms, u64 tsc_hz, u32 pvclock_mul, i8 pvclock_shift,
	 *   u8 flags (GUEST_HELLO_*), u8 pad[2], u64 ram_bytes, u64 region_base, u64 region_bytes,
	 *   u16 probe_vcpu (0xffff: none), u16 pad, u32 probe_gap_us,
	 *   u64 run_ms (0: until stopped), u64 seed, u64 boot_tsc, u64 tsc,
	 *   u32 probe_overhead_cycles, u16 hist_buckets, u8 hist_sub_bits, u8 pad,
	 *   then per vCPU (by index): u8 pattern, u8 pad, u16 apic_id,
	 *   u64 slice_base, u64 slice_bytes.
	 */
	GUEST_RECORD_HELLO = 1,
	/*
	 * SAMPLE, every interval and once more when stopping; counts are
	 * cumulative since the guest started its workloads:
	 *   u64 tsc, u16 vcpus, u16 nonzero_buckets, u32 pad,
	 *   u64 ops[vcpus], u64 probe_reads, u64 probe_sum_cycles,
	 *   u64 probe_max_cycles, then nonzero_buckets x { u16 index,
	 *   u64 count } in ascending index order. The bucket counts add up to
	 *   probe_reads.
	 */
	GUEST_RECORD_SAMPLE = 2,
	/*
	 * END, the last record before the guest exits:
	 *   u64 tsc, u8 reason (enum guest_end_reason), u8 pad, u16 vcpus_stopped.
	 */
	GUEST_RECORD_END = 3,
	/*
	 * LOG, a message from the guest (an error before END):
	 *   u8 level (0 info, 1 error), u8 pad, u16 length, then length bytes of
	 *   text, no NUL, length <= GUEST_WIRE_MAX_LOG.
	 */
	GUEST_RECORD_LOG = 4,
	/*
	 * FAULT, once per fault-linear vCPU, after its pass:
	 *   u64 tsc_start, u64 tsc_end, u64 tsc_hz, u64 base, u64 bytes,
	 *   u64 pages (touched), u64 mismatches (pages whose first 8 bytes did
	 *   not hold what populate wrote: address | 1), u64 first_mismatch
	 *   (its address, 0: none), u16 vcpu (index), u8 access
	 *   (enum guest_fault_access), u8 hist_buckets
	 *   (GUEST_FAULT_HIST_BUCKETS), u32 pad, then u64 touch[hist_buckets]:
	 *   the pass's touches by their time in cycles, in the log2 buckets
	 *   below. A touch's time runs from the TSC read that ended the
	 *   previous touch (the first: tsc_start) to the one that ends it, so
	 *   the touches tile the pass: their times add up to tsc_end -
	 *   tsc_start, and the bucket counts add up to pages.
	 * It carries its own tsc_hz: after a migration the destination's
	 * stream has no HELLO.
	 */
	GUEST_RECORD_FAULT = 5,
};

enum guest_fault_access {
	GUEST_FAULT_READ = 0,  /* an 8-byte load per page */
	GUEST_FAULT_WRITE = 1, /* an 8-byte exchange per page (a write that returns the old value) */
};

/* HELLO flags */
#define GUEST_HELLO_POPULATED 0x01 /* every 4 KiB page of the region was written before the workloads */

enum guest_end_reason {
	GUEST_END_HOST_REQUEST = 1, /* the host sent GUEST_CMD_STOP */
	GUEST_END_RUN_LENGTH = 2,   /* run= elapsed */
	GUEST_END_BAD_PARAMS = 3,   /* the command line was rejected */
	GUEST_END_FATAL = 4,        /* exception or boot failure */
};

enum guest_log_level {
	GUEST_LOG_INFO = 0,
	GUEST_LOG_ERROR = 1,
};

#define GUEST_WIRE_HELLO_FIXED 96
#define GUEST_WIRE_HELLO_PER_VCPU 20
#define GUEST_WIRE_SAMPLE_FIXED 40 /* without ops[] and buckets */
#define GUEST_WIRE_SAMPLE_BUCKET 10
#define GUEST_WIRE_END_SIZE 12
#define GUEST_WIRE_LOG_FIXED 4
#define GUEST_WIRE_FAULT_FIXED 72 /* without touch[] */
#define GUEST_WIRE_FAULT_SIZE (GUEST_WIRE_FAULT_FIXED + GUEST_FAULT_HIST_BUCKETS * 8)

/* ---- the latency histogram ----------------------------------------------- */
/*
 * Log-linear buckets over TSC cycles, HDR-style. Values below 64 get a
 * bucket each. Above, every power-of-two range [2^e, 2^(e+1)) for
 * e = 6..39 is split into 32 equal sub-buckets of width 2^(e-5), so a
 * bucket is at most 1/32 (3.1 %) of its values wide. Values of 2^40 cycles
 * and more (minutes) land in the last bucket.
 *
 *   index(v) = v                           for v < 64
 *            = (e - 5) * 32 + (v >> (e - 5))  for v >= 64, e = floor(log2 v)
 */
#define GUEST_HIST_SUB_BITS 5
#define GUEST_HIST_SUB (1u << GUEST_HIST_SUB_BITS)
#define GUEST_HIST_MAX_EXP 39
#define GUEST_HIST_BUCKETS ((GUEST_HIST_MAX_EXP - GUEST_HIST_SUB_BITS) * GUEST_HIST_SUB + 2 * GUEST_HIST_SUB)

static inline unsigned guest_hist_index(uint64_t cycles)
{
	unsigned e, shift;

	if (cycles < 2 * GUEST_HIST_SUB)
		return (unsigned)cycles;
	e = 63u - (unsigned)__builtin_clzll(cycles);
	if (e > GUEST_HIST_MAX_EXP)
		return GUEST_HIST_BUCKETS - 1;
	shift = e - GUEST_HIST_SUB_BITS;
	return shift * GUEST_HIST_SUB + (unsigned)(cycles >> shift);
}

/* Smallest value that lands in bucket index. */
static inline uint64_t guest_hist_low(unsigned index)
{
	unsigned shift;

	if (index < 2 * GUEST_HIST_SUB)
		return index;
	shift = index / GUEST_HIST_SUB - 1;
	return (uint64_t)(index % GUEST_HIST_SUB + GUEST_HIST_SUB) << shift;
}

/* One past the largest value that lands in bucket index (the last bucket
 * is open-ended; this returns its nominal end). */
static inline uint64_t guest_hist_high(unsigned index)
{
	unsigned shift;

	if (index < 2 * GUEST_HIST_SUB)
		return (uint64_t)index + 1;
	shift = index / GUEST_HIST_SUB - 1;
	return guest_hist_low(index) + ((uint64_t)1 << shift);
}

/* ---- fault-linear's first-touch histogram ---------------------------------- */
/*
 * Log2 buckets over TSC cycles: bucket b holds [2^b, 2^(b+1)) for
 * b = 1..38, bucket 0 holds [0, 2), and the last, b = 39, holds 2^39
 * cycles and more (minutes). A touch that takes a demand fault through
 * the host costs microseconds, one the host already mapped tens of cycles:
 * the two land tens of buckets apart, which is all this histogram is for.
 */
#define GUEST_FAULT_HIST_BUCKETS 40

static inline unsigned guest_fault_hist_index(uint64_t cycles)
{
	unsigned e;

	if (cycles < 2)
		return 0;
	e = 63u - (unsigned)__builtin_clzll(cycles);
	return e < GUEST_FAULT_HIST_BUCKETS ? e : GUEST_FAULT_HIST_BUCKETS - 1;
}

/* Smallest value that lands in bucket b. */
static inline uint64_t guest_fault_hist_low(unsigned b)
{
	return b ? (uint64_t)1 << b : 0;
}

/* One past the largest value that lands in bucket b (the last bucket is
 * open-ended; this returns its nominal end). */
static inline uint64_t guest_fault_hist_high(unsigned b)
{
	return (uint64_t)2 << b;
}
