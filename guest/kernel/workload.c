// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What each vCPU does once started: a memory pattern over its slice of the
 * region, the paced latency probe over the whole region, or nothing.
 *
 * Workers count one op per 8-byte access and publish the count after every
 * 4 KiB chunk; between chunks they look at the stop flag, and the BSP
 * runs the controller when it is due.
 */
#include "fmt.h"
#include "kernel.h"

#define CHUNK_QWORDS 512 /* 4 KiB */
#define PROBE_STRIDE PAGE_4K

static volatile uint64_t sink;

static inline int checkpoint(struct vcpu *v, uint64_t ops)
{
	v->ops = ops;
	if (v == &vcpus[0]) {
		uint64_t now = rdtsc();

		if (now >= ctl_deadline)
			controller_tick(now);
	}
	return READ_ONCE(stop_requested);
}

static void run_read64(struct vcpu *v)
{
	const volatile uint64_t *base = (const volatile uint64_t *)(uintptr_t)v->slice_base;
	uint64_t n = v->slice_bytes / 8, ops = 0, sum = 0;

	for (;;) {
		for (uint64_t i = 0; i < n; i += CHUNK_QWORDS) {
			const volatile uint64_t *p = base + i;

			for (unsigned j = 0; j < CHUNK_QWORDS; j += 8)
				sum += p[j] + p[j + 1] + p[j + 2] + p[j + 3] + p[j + 4] + p[j + 5] + p[j + 6] + p[j + 7];
			ops += CHUNK_QWORDS;
			if (checkpoint(v, ops)) {
				sink = sum;
				return;
			}
		}
	}
}

static void run_write64(struct vcpu *v)
{
	volatile uint64_t *base = (volatile uint64_t *)(uintptr_t)v->slice_base;
	uint64_t n = v->slice_bytes / 8, ops = 0;

	for (;;) {
		for (uint64_t i = 0; i < n; i += CHUNK_QWORDS) {
			volatile uint64_t *p = base + i;

			for (unsigned j = 0; j < CHUNK_QWORDS; j++)
				p[j] = ops + j;
			ops += CHUNK_QWORDS;
			if (checkpoint(v, ops))
				return;
		}
	}
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* xorshift64*: fast, and the same seed gives the same addresses. */
static void run_rand_set(struct vcpu *v)
{
	volatile uint64_t *base = (volatile uint64_t *)(uintptr_t)v->slice_base;
	uint64_t n = v->slice_bytes / 8, ops = 0;
	uint64_t x = splitmix64(cfg.seed ^ ((uint64_t)v->index << 32));

	if (!x)
		x = 1;
	for (;;) {
		for (unsigned j = 0; j < CHUNK_QWORDS; j++) {
			uint64_t r;

			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			r = x * 0x2545f4914f6cdd1dull;
			base[(uint64_t)(((unsigned __int128)r * n) >> 64)] = r;
		}
		ops += CHUNK_QWORDS;
		if (checkpoint(v, ops))
			return;
	}
}

/* Cycles for an empty timed section, so readers can tell the probe's own
 * cost from memory latency. */
void probe_measure_overhead(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 1000; i++) {
		uint64_t t0 = rdtsc_ordered(), t1 = rdtsc_ordered();

		if (t1 - t0 < best)
			best = t1 - t0;
	}
	probe_overhead_cycles = best > UINT32_MAX ? UINT32_MAX : (uint32_t)best;
}

/*
 * One byte per 4 KiB page across the region, an idle gap between reads.
 * The read sits between two lfence-ordered TSC reads, so it has completed
 * before the second one.
 */
static void run_probe(struct vcpu *v)
{
	const int is_bsp = v == &vcpus[0];
	const uint64_t gap = us_to_cycles(cfg.probe_gap_us);
	uint64_t addr = region_base, end = region_base + region_bytes, next = rdtsc();
	uint64_t sum = 0, max = 0, reads = 0;

	for (;;) {
		uint64_t now, t0, t1, d;

		for (;;) {
			now = rdtsc();
			if (is_bsp && now >= ctl_deadline)
				controller_tick(now);
			if (READ_ONCE(stop_requested)) {
				v->ops = reads;
				return;
			}
			if (now >= next)
				break;
			cpu_relax();
		}
		t0 = rdtsc_ordered();
		(void)*(const volatile uint8_t *)(uintptr_t)addr;
		t1 = rdtsc_ordered();
		d = t1 - t0;
		probe_hist[guest_hist_index(d)]++;
		sum += d;
		if (d > max)
			max = d;
		probe_sum_cycles = sum;
		probe_max_cycles = max;
		v->ops = ++reads;
		addr += PROBE_STRIDE;
		if (addr >= end)
			addr = region_base;
		next = t1 + gap;
	}
}

static void run_idle(struct vcpu *v);

/*
 * fault-linear: wait (parked, the BSP running the controller) until the
 * host sends GUEST_CMD_FAULT, then touch every 4 KiB page of the slice
 * once, in order: a load, or an exchange (one write access that returns
 * what was there). Each page's first 8 bytes must hold what populate
 * wrote (address | 1); after a migration a page that was lost reads as
 * zero. No controller or telemetry inside the pass, so its time is the
 * touches' alone; the FAULT record follows it.
 *
 * Each touch is timed into the first-touch histogram (wire.h): one
 * ordered TSC read after each access ends that touch and starts the next,
 * so the touches tile the pass (their times add up to t1 - t0) at the
 * cost of one TSC read per page, not two.
 */
static void run_fault_linear(struct vcpu *v)
{
	const int is_bsp = v == &vcpus[0];
	const int write = cfg.fault_access == GUEST_FAULT_WRITE;
	uint64_t base = v->slice_base, end = v->slice_base + v->slice_bytes;
	uint64_t t0, t1, pages = 0, mismatches = 0, first = 0;
	uint64_t hist[GUEST_FAULT_HIST_BUCKETS] = { 0 };

	for (;;) {
		if (is_bsp) {
			uint64_t now = rdtsc();

			if (now >= ctl_deadline)
				controller_tick(now);
		}
		if (READ_ONCE(stop_requested))
			return;
		if (READ_ONCE(fault_requested))
			break;
		cpu_relax();
	}
	t0 = t1 = rdtsc_ordered();
	for (uint64_t a = base; a < end; a += PAGE_4K) {
		volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)a;
		uint64_t got = write ? __atomic_exchange_n(p, a | 1, __ATOMIC_RELAXED) : *p;
		uint64_t now = rdtsc_ordered();

		hist[guest_fault_hist_index(now - t1)]++;
		t1 = now;
		if (got != (a | 1) && !mismatches++)
			first = a;
		pages++;
	}
	v->ops = pages;
	tel_fault(v, t0, t1, pages, mismatches, first, hist);
	run_idle(v);
}

static void run_idle(struct vcpu *v)
{
	if (v != &vcpus[0])
		return; /* the caller parks it */
	for (;;) {
		uint64_t now = rdtsc();

		if (now >= ctl_deadline)
			controller_tick(now);
		if (READ_ONCE(stop_requested))
			return;
		cpu_relax();
	}
}

void run_role(struct vcpu *v)
{
	switch (v->pattern) {
	case GUEST_PATTERN_READ64:
		run_read64(v);
		break;
	case GUEST_PATTERN_WRITE64:
		run_write64(v);
		break;
	case GUEST_PATTERN_RAND_SET:
		run_rand_set(v);
		break;
	case GUEST_PATTERN_PROBE:
		run_probe(v);
		break;
	case GUEST_PATTERN_FAULT_LINEAR:
		run_fault_linear(v);
		break;
	default:
		run_idle(v);
	}
}

static int is_worker(unsigned pattern)
{
	return pattern == GUEST_PATTERN_READ64 || pattern == GUEST_PATTERN_WRITE64 || pattern == GUEST_PATTERN_RAND_SET ||
	       pattern == GUEST_PATTERN_FAULT_LINEAR;
}

/*
 * One 8-byte store per 4 KiB page of the region, before the workloads
 * start: every page is then backed by the host and holds data, so
 * first-touch faults stay out of the measurement and a snapshot has real
 * pages to save (stress-ng --vm-populate does the like).
 */
void region_populate(void)
{
	for (uint64_t a = region_base; a < region_base + region_bytes; a += PAGE_4K)
		*(volatile uint64_t *)(uintptr_t)a = a | 1;
}

/* Roles by vCPU index; the region split evenly between the workers. */
int workload_assign(char *err, size_t errlen)
{
	uint64_t granule = 1ull << cfg.page_shift, slice;
	unsigned workers = 0, k = 0;

	if (cfg.probe_vcpu >= (int32_t)nr_vcpus) {
		k_snprintf(err, errlen, "probe=%d but the VM has %u vCPUs (0 to %u): pick one of those or probe=none",
			   (int)cfg.probe_vcpu, nr_vcpus, nr_vcpus - 1);
		return -1;
	}
	for (unsigned i = nr_vcpus; i < GUEST_MAX_VCPUS; i++) {
		if (cfg.vcpu_pattern[i] != GUEST_PATTERN_UNSET) {
			k_snprintf(err, errlen, "pattern.%u but the VM has %u vCPUs (0 to %u): drop it or add vCPUs", i, nr_vcpus,
				   nr_vcpus - 1);
			return -1;
		}
	}
	for (unsigned i = 0; i < nr_vcpus; i++) {
		struct vcpu *v = &vcpus[slot_of_index[i]];

		if ((int32_t)i == cfg.probe_vcpu)
			v->pattern = GUEST_PATTERN_PROBE;
		else if (cfg.vcpu_pattern[i] != GUEST_PATTERN_UNSET)
			v->pattern = cfg.vcpu_pattern[i];
		else
			v->pattern = cfg.pattern;
		if (is_worker(v->pattern))
			workers++;
		if (v->pattern == GUEST_PATTERN_FAULT_LINEAR && !cfg.populate) {
			k_snprintf(err, errlen, "pattern fault-linear on vCPU %u checks what populate wrote: set populate=on", i);
			return -1;
		}
	}
	if (!workers)
		return 0;
	slice = region_bytes / workers / granule * granule;
	if (!slice) {
		k_snprintf(err, errlen, "the region (%lu KiB) is smaller than one page per worker (%u workers): raise mem=",
			   (unsigned long)(region_bytes >> 10), workers);
		return -1;
	}
	for (unsigned i = 0; i < nr_vcpus; i++) {
		struct vcpu *v = &vcpus[slot_of_index[i]];

		if (!is_worker(v->pattern))
			continue;
		v->slice_base = region_base + (uint64_t)k++ * slice;
		v->slice_bytes = slice;
	}
	return 0;
}
