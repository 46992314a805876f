// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The micro guest under a real QEMU with KVM, 2 vCPUs and 128 MiB: HELLO
 * describes what the command line asked for, telemetry arrives every
 * interval, the worker's op count and the probe's histogram grow, and the
 * guest stops cleanly on request (final SAMPLE, END, exit status 33).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "clock.h"
#include "guest-vm.h"
#include "test-accel.h"

#define SAMPLES 8
#define BOOT_TIMEOUT_MS 60000 /* QEMU start and boot, emulated, on a loaded host */
#define SAMPLE_TIMEOUT_MS 20000

static struct guest_sample samples[SAMPLES];

int main(void)
{
	const struct guest_record *rec;
	struct guest_hello hello;
	struct guest_params p;
	struct test_guest g;
	uint64_t hello_ns, stop_ns;
	double ns[3];
	static const double pct[] = { 50, 99, 99.9 };
	struct sb_error err = { 0 };

	guest_params_init(&p, 2); /* probe on vCPU 0, write64 on vCPU 1 */
	test_guest_start(&g, 128, &p, NULL, false);

	rec = test_guest_expect(&g, GUEST_RECORD_HELLO, BOOT_TIMEOUT_MS);
	hello_ns = mono_ns() - g.start_ns;
	hello = rec->hello;
	CHECK(rec->seq == 0 && rec->lost == 0);
	CHECK(hello.vcpus == 2 && hello.page_size == 4096);
	CHECK(hello.probe_vcpu == 0 && hello.probe_gap_us == 100 && hello.interval_ms == 100);
	CHECK(hello.vcpu[0].pattern == GUEST_PATTERN_PROBE && hello.vcpu[1].pattern == GUEST_PATTERN_WRITE64);
	CHECK(hello.vcpu[0].apic_id == 0 && hello.vcpu[1].apic_id == 1);
	/* under KVM the guest finds kvmclock; under TCG, which has none, the next source */
	if (test_kvm()) {
		CHECK_MSG(hello.clock_source == GUEST_CLOCK_KVMCLOCK, "clock source %s",
			  guest_clock_source_to_string(hello.clock_source));
		CHECK(hello.pvclock_mul != 0);
	} else {
		CHECK_MSG(hello.clock_source != GUEST_CLOCK_KVMCLOCK && hello.pvclock_mul == 0, "TCG: clock source %s",
			  guest_clock_source_to_string(hello.clock_source));
	}
	CHECK(hello.ram_bytes > (120ull << 20) && hello.ram_bytes <= (128ull << 20));
	/* half of the free RAM, which is most of 128 MiB */
	CHECK(hello.region_bytes >= (50ull << 20) && hello.region_bytes <= (64ull << 20));
	CHECK(hello.region_base >= (1ull << 20) && hello.region_base + hello.region_bytes <= hello.ram_bytes + (1ull << 20));
	CHECK(hello.vcpu[1].slice_base == hello.region_base && hello.vcpu[1].slice_bytes == hello.region_bytes);
	CHECK(hello.vcpu[0].slice_bytes == 0);
	CHECK(hello.populated);
	CHECK(hello.tsc > hello.boot_tsc);
	printf("HELLO after %.3f s: TSC %.3f GHz (%s), region %llu MiB at %#llx, boot to HELLO %.1f ms guest time\n",
	       (double)hello_ns / 1e9, (double)hello.tsc_hz / 1e9, guest_clock_source_to_string(hello.clock_source),
	       (unsigned long long)(hello.region_bytes >> 20), (unsigned long long)hello.region_base,
	       guest_cycles_to_ns(&hello, (double)(hello.tsc - hello.boot_tsc)) / 1e6);

	for (int i = 0; i < SAMPLES; i++) {
		rec = test_guest_expect(&g, GUEST_RECORD_SAMPLE, SAMPLE_TIMEOUT_MS);
		CHECK(rec->seq == (uint32_t)i + 1 && rec->lost == 0);
		samples[i] = rec->sample;
	}
	for (int i = 1; i < SAMPLES; i++) {
		const struct guest_sample *a = &samples[i - 1], *b = &samples[i];
		double since_hello_ms = guest_cycles_to_ns(&hello, (double)(b->tsc - hello.tsc)) / 1e6;

		/* a fixed-rate schedule: sample k is never sent before HELLO + k
		 * intervals (a late one does not delay the next) */
		CHECK_MSG(since_hello_ms >= (i + 1) * 100.0 - 0.001, "sample %d only %.3f ms after HELLO", i + 1,
			  since_hello_ms);
		CHECK(b->tsc > a->tsc);
		CHECK_MSG(b->ops[1] > a->ops[1], "worker made no progress between samples %d and %d", i - 1, i);
		CHECK_MSG(b->probe_reads > a->probe_reads, "probe made no reads between samples %d and %d", i - 1, i);
		CHECK(b->ops[0] == b->probe_reads); /* the probe counts its reads as ops */
	}
	CHECK(samples[SAMPLES - 1].probe_max_cycles >= samples[SAMPLES - 1].probe_sum_cycles / samples[SAMPLES - 1].probe_reads);
	CHECK_MSG(guest_hist_percentiles(samples[SAMPLES - 1].hist, hello.tsc_hz, pct, 3, ns, &err) == 0, "%s", err.msg);
	CHECK(ns[0] > 0 && ns[0] <= ns[1] && ns[1] <= ns[2]);
	printf("worker: %.0f ops/s; probe: %llu reads, p50 %.0f ns, p99 %.0f ns, p99.9 %.0f ns (timing overhead %.0f ns)\n",
	       guest_ops_per_sec(&hello, &samples[0], &samples[SAMPLES - 1], 1),
	       (unsigned long long)samples[SAMPLES - 1].probe_reads, ns[0], ns[1], ns[2],
	       guest_cycles_to_ns(&hello, hello.probe_overhead_cycles));

	/* stop: a final SAMPLE, END, and QEMU exits with the clean-stop status */
	test_guest_request_stop(&g);
	stop_ns = mono_ns();
	rec = test_guest_expect(&g, GUEST_RECORD_SAMPLE, SAMPLE_TIMEOUT_MS);
	while (rec->type == GUEST_RECORD_SAMPLE) {
		CHECK(rec->sample.ops[1] >= samples[SAMPLES - 1].ops[1]);
		/* the guest polls every 10 ms; samples already in the pipe may come first */
		CHECK_MSG(mono_ns() - stop_ns < (uint64_t)SAMPLE_TIMEOUT_MS * NSEC_PER_MSEC,
			  "the guest still sends samples %d s after the stop request", SAMPLE_TIMEOUT_MS / 1000);
		rec = test_guest_next(&g, SAMPLE_TIMEOUT_MS);
		CHECK_MSG(rec, "no END after the stop request");
	}
	CHECK_MSG(rec->type == GUEST_RECORD_END, "got %s", guest_record_type_to_string(rec->type));
	CHECK_MSG(rec->end.reason == GUEST_END_HOST_REQUEST, "END reason: %s", guest_end_reason_to_string(rec->end.reason));
	CHECK(rec->end.vcpus_stopped == 2);
	CHECK(test_guest_next(&g, SAMPLE_TIMEOUT_MS) == NULL && g.eof_ns); /* nothing after END */
	{
		int status = test_guest_wait_exit(&g, 30000);

		CHECK_MSG(status == GUEST_EXIT_STATUS(GUEST_EXIT_STOPPED), "QEMU exit status %d: %s", status,
			  guest_exit_status_to_string(status));
	}
	test_guest_stop(&g);
	printf("stopped cleanly\n");
	return 0;
}
