// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark (prints figures, asserts none): wall time from starting QEMU to
 * the guest's first telemetry record, and guest throughput per vCPU for
 * each pattern and page size.
 *
 *   meson test -C BUILD --benchmark guest          (or run the binary)
 *   bench-guest [BOOTS [SECONDS]]                  defaults 5 and 3
 *
 * Every run: 2 vCPUs, 128 MiB, vCPU 0 the probe (100 us gap), vCPU 1 the
 * pattern over half the free RAM, populated. Rates exclude the first
 * sample (the workloads' first interval).
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "clock.h"
#include "guest-vm.h"

#define TIMEOUT_MS 120000

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void boots(int n)
{
	double hello_ms[64], sample_ms[64], guest_ms[64];

	CHECK(n >= 1 && n <= 64);
	for (int i = 0; i < n; i++) {
		struct guest_params p;
		struct test_guest g;
		struct guest_hello h;

		guest_params_init(&p, 2);
		test_guest_start(&g, 128, &p, NULL, false);
		h = test_guest_expect(&g, GUEST_RECORD_HELLO, TIMEOUT_MS)->hello;
		hello_ms[i] = (double)(mono_ns() - g.start_ns) / 1e6;
		guest_ms[i] = guest_cycles_to_ns(&h, (double)(h.tsc - h.boot_tsc)) / 1e6;
		test_guest_expect(&g, GUEST_RECORD_SAMPLE, TIMEOUT_MS);
		sample_ms[i] = (double)(mono_ns() - g.start_ns) / 1e6;
		test_guest_request_stop(&g);
		test_guest_expect(&g, GUEST_RECORD_END, TIMEOUT_MS);
		CHECK(test_guest_wait_exit(&g, TIMEOUT_MS) == GUEST_EXIT_STATUS(GUEST_EXIT_STOPPED));
		test_guest_stop(&g);
	}
	qsort(hello_ms, (size_t)n, sizeof(double), cmp_double);
	qsort(sample_ms, (size_t)n, sizeof(double), cmp_double);
	qsort(guest_ms, (size_t)n, sizeof(double), cmp_double);
	printf("boot, %d runs (2 vCPUs, 128 MiB, 62 MiB populated), median [min max] in ms:\n", n);
	printf("  QEMU start to HELLO (first record)     %8.1f [%.1f %.1f]\n", hello_ms[n / 2], hello_ms[0], hello_ms[n - 1]);
	printf("  QEMU start to first SAMPLE             %8.1f [%.1f %.1f]\n", sample_ms[n / 2], sample_ms[0],
	       sample_ms[n - 1]);
	printf("  guest entry to HELLO (guest TSC)       %8.1f [%.1f %.1f]\n", guest_ms[n / 2], guest_ms[0], guest_ms[n - 1]);
}

static void throughput(int pattern, unsigned page_size, int seconds)
{
	static struct guest_sample first, last;
	static const double pct[] = { 50, 99, 99.9 };
	const struct guest_record *rec;
	struct sb_error err = { 0 };
	struct guest_params p;
	struct test_guest g;
	struct guest_hello h;
	static uint64_t window[GUEST_HIST_BUCKETS];
	double ns[3] = { 0 };
	int n = 0;

	guest_params_init(&p, 2);
	p.pattern = pattern;
	p.page_size = page_size;
	p.run_ms = (uint64_t)seconds * 1000 + 100;
	test_guest_start(&g, 128, &p, NULL, false);
	h = test_guest_expect(&g, GUEST_RECORD_HELLO, TIMEOUT_MS)->hello;
	while ((rec = test_guest_next(&g, TIMEOUT_MS)) && rec->type == GUEST_RECORD_SAMPLE) {
		if (n++ == 0)
			first = rec->sample;
		last = rec->sample;
	}
	CHECK_MSG(rec && rec->type == GUEST_RECORD_END, "the guest did not end its run");
	CHECK(n >= 3);
	CHECK(test_guest_wait_exit(&g, TIMEOUT_MS) == GUEST_EXIT_STATUS(GUEST_EXIT_STOPPED));
	CHECK(guest_hist_window(last.hist, first.hist, window, &err) == 0);
	(void)guest_hist_percentiles(window, h.tsc_hz, pct, 3, ns, &err);
	printf("  %-8s %-4s %12.0f %14.0f %9.0f %9.0f %9.0f\n", guest_pattern_to_string(pattern),
	       page_size == 4096 ? "4k" : "2m", guest_ops_per_sec(&h, &first, &last, 1),
	       guest_ops_per_sec(&h, &first, &last, 0), ns[0], ns[1], ns[2]);
	test_guest_stop(&g);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5, seconds = argc > 2 ? atoi(argv[2]) : 3;

	CHECK_MSG(n >= 1 && n <= 64 && seconds >= 1 && seconds <= 600, "usage: bench-guest [BOOTS 1-64 [SECONDS 1-600]]");
	boots(n);
	printf("throughput over %d s (vCPU 1 the pattern, vCPU 0 the probe; probe read latency in ns, raw):\n", seconds);
	printf("  pattern  page  ops/s vCPU 1  reads/s vCPU 0       p50       p99     p99.9\n");
	throughput(GUEST_PATTERN_READ64, 4096, seconds);
	throughput(GUEST_PATTERN_WRITE64, 4096, seconds);
	throughput(GUEST_PATTERN_RAND_SET, 4096, seconds);
	throughput(GUEST_PATTERN_WRITE64, 2u << 20, seconds);
	return 0;
}
