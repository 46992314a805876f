/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guest's command line (QEMU -append), parsed into a guest_config.
 * Freestanding C: the guest runs it, and a host unit test runs it against
 * what guest/params.c builds, so builder and parser cannot drift apart.
 *
 * QEMU's multiboot loader passes "KERNEL-PATH APPEND". Parameters are the
 * space-separated key=value tokens after the first "--" token; without one,
 * everything after the first token.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define GUEST_CMDLINE_MAX 8192 /* 255 per-vCPU patterns fit */
#define GUEST_PATTERN_UNSET 0xff

struct guest_config {
	uint64_t mem_bytes;   /* region size; 0: mem_percent of the free RAM range */
	uint32_t mem_percent; /* 1..100 */
	uint8_t page_shift;   /* 12 (4 KiB) or 21 (2 MiB) */
	uint8_t pattern;      /* enum guest_pattern, every worker's default */
	uint8_t clock;        /* 0: best available, else enum guest_clock_source */
	int32_t probe_vcpu;   /* -1: no probe */
	uint32_t probe_gap_us;
	uint64_t run_ms;      /* 0: until stopped */
	uint32_t interval_ms; /* telemetry period */
	uint64_t seed;
	uint8_t populate;     /* write every page of the region before starting */
	uint8_t fault_access; /* fault-linear's access: enum guest_fault_access */
	uint8_t vcpu_pattern[GUEST_MAX_VCPUS]; /* GUEST_PATTERN_UNSET: use pattern */
};

/* Limits, checked by both the parser and the host-side builder. */
#define GUEST_PROBE_GAP_MAX_US 10000000u /* 10 s */
#define GUEST_INTERVAL_MIN_MS 10u
#define GUEST_INTERVAL_MAX_MS 60000u
#define GUEST_RUN_MAX_MS (30ull * 24 * 3600 * 1000) /* 30 days */

void guest_config_defaults(struct guest_config *cfg);

/* Returns 0, or -1 with a message naming the bad token and the fix in err. */
int guest_cmdline_parse(const char *cmdline, struct guest_config *cfg, char *err, size_t errlen);

/* "read64" ... for a -append pattern value; NULL for anything else. */
const char *guest_pattern_name(unsigned pattern);
