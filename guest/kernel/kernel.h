/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the micro guest's files share: per-vCPU state, the configuration,
 * and each file's entry points. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "cmdline.h"
#include "layout.h"
#include "wire.h"

#define NORETURN __attribute__((noreturn))
#define PRINTF(a, b) __attribute__((format(printf, a, b)))

enum vcpu_state {
	VCPU_ABSENT = 0,
	VCPU_ARRIVED,
	VCPU_RUNNING,
	VCPU_STOPPED,
};

/* One per vCPU, by slot (0 is the BSP, APs in arrival order). Padded so a
 * worker's published counter does not share a cache line with another's. */
struct vcpu {
	volatile uint64_t ops; /* completed operations, published every chunk */
	volatile uint32_t state;
	uint32_t apic_id;
	uint32_t index; /* rank of apic_id: QEMU's cpu-index */
	uint8_t pattern;
	uint64_t slice_base, slice_bytes;
} __attribute__((aligned(128)));

/* state.c: what the files share, defined where no call is (main.c and
 * smp.c fill the vCPUs, main.c the configuration, controller.c the
 * requests, mm.c the memory, workload.c the probe's figures) */
extern struct vcpu vcpus[GUEST_MAX_VCPUS];
extern unsigned nr_vcpus;
extern unsigned slot_of_index[GUEST_MAX_VCPUS];
extern struct guest_config cfg;
extern volatile int stop_requested;
extern volatile int fault_requested; /* GUEST_CMD_FAULT arrived */
extern uint64_t ram_bytes, region_base, region_bytes;
extern uint64_t probe_hist[GUEST_HIST_BUCKETS];
extern volatile uint64_t probe_sum_cycles, probe_max_cycles;
extern uint32_t probe_overhead_cycles;

/* boot.S */
extern uint32_t boot_magic, boot_info, ap_cr3, ap_next_slot, ap_max_slot;
extern uint64_t boot_tsc, ap_stack_base;
extern char trampoline_start[], trampoline_end[];
extern const uint64_t exc_stubs[32];

/* controller.c: runs on the BSP between chunks of its own role. */
extern volatile uint64_t ctl_deadline;
void controller_start(uint64_t now);
void controller_tick(uint64_t now);
unsigned controller_end_reason(void);

/* idt.c */
void idt_init(void);
void idt_load(void);

/* clock.c */
extern uint64_t tsc_hz;
extern uint32_t pvclock_mul;
extern int8_t pvclock_shift;
extern uint8_t clock_source;
int clock_init(uint8_t wanted, char *err, size_t errlen);
uint64_t us_to_cycles(uint64_t us);
void delay_us(uint64_t us);

/* mm.c */
extern char cmdline_copy[GUEST_CMDLINE_MAX];
int multiboot_read(char *err, size_t errlen);
void *alloc_pages(uint64_t bytes);
void paging_init(unsigned page_shift);
int region_init(const struct guest_config *c, char *err, size_t errlen);

/* smp.c */
int fw_cfg_nr_cpus(void);
int smp_start(unsigned nr, char *err, size_t errlen);
void smp_assign_indexes(void);

/* workload.c */
void probe_measure_overhead(void);
int workload_assign(char *err, size_t errlen);
void region_populate(void);
void run_role(struct vcpu *v);

/* telemetry.c */
void crc32_init(void);
void tel_hello(uint64_t now);
void tel_sample(uint64_t now);
void tel_end(uint64_t now, unsigned reason, unsigned stopped);
void tel_fault(const struct vcpu *v, uint64_t tsc_start, uint64_t tsc_end, uint64_t pages, uint64_t mismatches,
	       uint64_t first_mismatch, const uint64_t touch[GUEST_FAULT_HIST_BUCKETS]);
PRINTF(2, 3) void tel_log(unsigned level, const char *fmt, ...);
NORETURN void guest_exit(unsigned code);
/* LOG error + END + exit; bad_params for what the command line got wrong */
NORETURN PRINTF(1, 2) void fatal(const char *fmt, ...);
NORETURN PRINTF(1, 2) void bad_params(const char *fmt, ...);
