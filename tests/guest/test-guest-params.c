// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guest's command line under real QEMU/KVM: per-vCPU patterns, 2 MiB
 * pages, a region size, the TSC rate from the PIT, stopping by itself after
 * run= (END "run length reached", exit 33), and the parameters only the
 * guest can check, rejected with a LOG record and exit status 35.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "guest-vm.h"
#include "test-accel.h"

#define TIMEOUT_MS 60000

static struct guest_sample first, last;

static void run_length(uint64_t *pit_hz)
{
	const struct guest_record *rec;
	struct guest_hello hello;
	struct guest_params p;
	struct test_guest g;
	unsigned samples = 0;

	guest_params_init(&p, 2);
	p.probe_vcpu = -1;
	p.vcpu_pattern[0] = GUEST_PATTERN_READ64;
	p.vcpu_pattern[1] = GUEST_PATTERN_RAND_SET;
	p.page_size = 2u << 20;
	p.region_bytes = 16u << 20;
	p.run_ms = 1500;
	p.interval_ms = 200;
	p.clock = GUEST_CLOCK_PIT;
	p.populate = false;
	test_guest_start(&g, 128, &p, NULL, false);

	hello = test_guest_expect(&g, GUEST_RECORD_HELLO, TIMEOUT_MS)->hello;
	CHECK(hello.clock_source == GUEST_CLOCK_PIT && hello.pvclock_mul == 0);
	CHECK(hello.page_size == 2u << 20 && hello.region_bytes == 16u << 20 && hello.region_base % (2u << 20) == 0);
	CHECK(hello.probe_vcpu == -1 && hello.run_ms == 1500 && hello.interval_ms == 200 && !hello.populated);
	CHECK(hello.vcpu[0].pattern == GUEST_PATTERN_READ64 && hello.vcpu[1].pattern == GUEST_PATTERN_RAND_SET);
	/* the region split in two 8 MiB slices, one after the other */
	CHECK(hello.vcpu[0].slice_base == hello.region_base && hello.vcpu[0].slice_bytes == 8u << 20);
	CHECK(hello.vcpu[1].slice_base == hello.region_base + (8u << 20) && hello.vcpu[1].slice_bytes == 8u << 20);
	*pit_hz = hello.tsc_hz;

	for (;;) {
		rec = test_guest_next(&g, TIMEOUT_MS);
		CHECK_MSG(rec, "telemetry stopped before END");
		if (rec->type != GUEST_RECORD_SAMPLE)
			break;
		if (!samples++)
			first = rec->sample;
		last = rec->sample;
		CHECK(rec->sample.probe_reads == 0);
	}
	CHECK_MSG(rec->type == GUEST_RECORD_END, "got %s", guest_record_type_to_string(rec->type));
	CHECK_MSG(rec->end.reason == GUEST_END_RUN_LENGTH, "END: %s", guest_end_reason_to_string(rec->end.reason));
	CHECK(rec->end.vcpus_stopped == 2);
	/* the guest ran at least run= by its own clock */
	CHECK(guest_cycles_to_ns(&hello, (double)(rec->end.tsc - hello.tsc)) >= 1500e6);
	CHECK_MSG(samples >= 5, "%u samples in 1.5 s at 200 ms", samples);
	CHECK(last.ops[0] > first.ops[0] && last.ops[1] > first.ops[1]);
	CHECK(test_guest_wait_exit(&g, 30000) == GUEST_EXIT_STATUS(GUEST_EXIT_STOPPED));
	printf("run=1500: %u samples, read64 %.0f ops/s, rand-set %.0f ops/s, TSC %.3f GHz from the PIT\n", samples,
	       guest_ops_per_sec(&hello, &first, &last, 0), guest_ops_per_sec(&hello, &first, &last, 1),
	       (double)hello.tsc_hz / 1e9);
	test_guest_stop(&g);
}

static uint64_t kvmclock_hz(void)
{
	struct guest_params p;
	struct test_guest g;
	struct guest_hello hello;

	guest_params_init(&p, 1);
	p.run_ms = 10;
	p.clock = GUEST_CLOCK_KVMCLOCK;
	test_guest_start(&g, 64, &p, NULL, false);
	hello = test_guest_expect(&g, GUEST_RECORD_HELLO, TIMEOUT_MS)->hello;
	CHECK(hello.clock_source == GUEST_CLOCK_KVMCLOCK);
	CHECK(test_guest_expect(&g, GUEST_RECORD_END, TIMEOUT_MS)->end.reason == GUEST_END_RUN_LENGTH);
	CHECK(test_guest_wait_exit(&g, 30000) == GUEST_EXIT_STATUS(GUEST_EXIT_STOPPED));
	test_guest_stop(&g);
	return hello.tsc_hz;
}

/* A command line the guest rejects: a LOG naming the problem, END, exit 35. */
static void rejected(unsigned vcpus, const char *append, const char *needle)
{
	const struct guest_record *rec;
	struct guest_params p;
	struct test_guest g;

	guest_params_init(&p, vcpus);
	test_guest_start(&g, 128, &p, append, false);
	rec = test_guest_next(&g, TIMEOUT_MS);
	CHECK_MSG(rec && rec->type == GUEST_RECORD_LOG, "%s: expected a LOG record first", append);
	CHECK(rec->log.level == GUEST_LOG_ERROR);
	CHECK_MSG(strstr(rec->log.text, needle), "%s: the guest said '%s'", append, rec->log.text);
	printf("%s -> %s\n", append, rec->log.text);
	rec = test_guest_next(&g, TIMEOUT_MS);
	CHECK(rec && rec->type == GUEST_RECORD_END && rec->end.reason == GUEST_END_BAD_PARAMS);
	CHECK(test_guest_next(&g, TIMEOUT_MS) == NULL && g.eof_ns);
	CHECK(test_guest_wait_exit(&g, 30000) == GUEST_EXIT_STATUS(GUEST_EXIT_BAD_PARAMS));
	test_guest_stop(&g);
}

int main(void)
{
	uint64_t pit_hz, kvm_hz;

	run_length(&pit_hz);
	if (test_kvm()) {
		/*
		 * a 50 ms PIT calibration against KVM's own figure; a formula error would be
		 * far off. In a host VM under TCG both clocks are emulated and drift apart
		 * with the machine's load (10.8% seen on a CI run beside a kernel build).
		 */
		double tolerance = test_timing_emulated() ? 0.30 : 0.10;
		kvm_hz = kvmclock_hz();
		CHECK_MSG(fabs((double)pit_hz - (double)kvm_hz) < tolerance * (double)kvm_hz,
			  "PIT %llu Hz, kvmclock %llu Hz (within %.0f%%)", (unsigned long long)pit_hz,
			  (unsigned long long)kvm_hz, tolerance * 100);
	} else {
		/* TCG has no kvmclock: asked for, the guest refuses by name (the realkvm tier has it) */
		rejected(1, "-- clock=kvmclock", "clock=kvmclock: this vCPU model does not offer it");
	}

	rejected(2, "-- pattern=bogus", "bad pattern=bogus: use read64, write64, rand-set, fault-linear or idle");
	rejected(2, "-- mem=4G", "does not fit");
	rejected(2, "-- probe=5", "probe=5 but the VM has 2 vCPUs");
	rejected(2, "-- pattern.3=read64", "pattern.3 but the VM has 2 vCPUs");
	printf("all checks passed\n");
	return 0;
}
