/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The micro guest's parameters as the runner sets them, and the -append
 * string that carries them to the guest. Validation names the field at
 * fault, so a bad run spec fails on the host with a clear message rather
 * than in the guest.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "wire.h"

#define GUEST_PATTERN_DEFAULT (-1) /* in vcpu_pattern[]: use .pattern */

struct guest_params {
	unsigned vcpus;            /* QEMU -smp, 1..GUEST_MAX_VCPUS */
	uint64_t ram_bytes;        /* QEMU -m, to check region_bytes; 0: unknown */
	uint64_t region_bytes;     /* workload region; 0: region_percent of free RAM */
	unsigned region_percent;   /* 1..100, when region_bytes is 0 */
	unsigned page_size;        /* guest page size: 4096 or 2097152 */
	int pattern;               /* enum guest_pattern: every worker's pattern ... */
	int vcpu_pattern[GUEST_MAX_VCPUS]; /* ... unless set here (GUEST_PATTERN_DEFAULT) */
	int probe_vcpu;            /* vCPU index running the latency probe; -1: none */
	unsigned probe_gap_us;     /* idle time between two probe reads */
	uint64_t run_ms;           /* stop by itself after this long; 0: until asked */
	unsigned interval_ms;      /* telemetry period */
	uint64_t seed;             /* rand-set's generator */
	bool populate;             /* write every 4 KiB page of the region before the workloads start */
	bool fault_write;          /* fault-linear: its pass writes each page (else reads) */
	int clock;                 /* 0: best available, else enum guest_clock_source */
};

/* Defaults: every vCPU but 0 runs write64 over half of free RAM with 4 KiB
 * pages, populated first; vCPU 0 runs the probe with a 100 us gap (with one
 * vCPU there is no probe and it runs write64); telemetry every 100 ms;
 * until stopped. */
void guest_params_init(struct guest_params *p, unsigned vcpus);

/* 0, or -EINVAL with a message naming the field and the fix. */
int guest_params_validate(const struct guest_params *p, struct sb_error *err);

/* The -append string, "-- key=value ...". Validates first. *out is malloc'd. */
int guest_params_to_cmdline(const struct guest_params *p, char **out, struct sb_error *err);

/* "read64", "write64", "rand-set", "idle", "probe", "fault-linear"; NULL when out of range. */
const char *guest_pattern_to_string(int pattern);
/* -EINVAL for anything else; "probe" is not a worker pattern. */
int guest_pattern_from_string(const char *s, int *pattern);
