// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The state the guest's files share (kernel.h says who writes what):
 * the vCPUs, the configuration, the stop and fault requests, the memory
 * and region found at boot, and the latency probe's figures. Defined in a
 * file that calls nothing, so that a file reading what another writes does
 * not call it: the files call one way, main.c down to telemetry.c (the
 * call-loops test checks).
 */
#include "kernel.h"

struct vcpu vcpus[GUEST_MAX_VCPUS];
unsigned nr_vcpus;
unsigned slot_of_index[GUEST_MAX_VCPUS];
struct guest_config cfg;
volatile int stop_requested;
volatile int fault_requested;

uint64_t ram_bytes, region_base, region_bytes;

uint64_t probe_hist[GUEST_HIST_BUCKETS];
volatile uint64_t probe_sum_cycles, probe_max_cycles;
uint32_t probe_overhead_cycles;
