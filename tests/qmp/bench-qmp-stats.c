// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark (meson benchmark, not a test): what one KVM stats sample over
 * QMP costs against a real QEMU with KVM, so the sampler's interval can be
 * chosen knowingly. Prints the round-trip latency (p50, p99, max) of
 * query-stats for vcpu and vm, all stats and a 4-name filter, and the
 * reply sizes, and a sampler's pair (vm and vcpu) as two round trips parsed
 * by json-c and as one batch whose replies the client scans from their text
 * (qmp/stats-scan.c), with the client's CPU per sample. Asserts nothing
 * about speed.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clock.h"
#include "qemu-launch.h"
#include "qmp-commands.h"
#include "strv.h"

#define SAMPLES 2000

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *ns, size_t n, size_t stats)
{
	qsort(ns, n, sizeof(ns[0]), cmp_u64);
	printf("%-34s %5zu stats  p50 %7.1f us  p99 %7.1f us  max %8.1f us\n", what, stats,
	       ns[n / 2] / 1e3, ns[n * 99 / 100] / 1e3, ns[n - 1] / 1e3);
}

int main(void)
{
	static const char *const few[] = { "pf_taken", "pf_fixed", "exits", "insn_emulation", NULL };
	static const char *const few_vm[] = { "remote_tlb_flush", "remote_tlb_flush_requests", "pages_4k",
					      "mmu_cache_miss", NULL };
	static uint64_t ns[SAMPLES];
	_cleanup_qmp_client_ struct qmp_client *c = NULL;
	struct sb_error err = { 0 };
	struct test_qemu q;
	size_t n = 0;

	test_qemu_start(&q, 256, 4, NULL);
	CHECK_MSG(qmp_connect(q.qmp_path, 60000, NULL, &c, &err) == 0, "%s", err.msg);
	printf("query-stats round trips over QMP, %d samples each, QEMU with 4 vCPUs:\n", SAMPLES);

	for (int pass = 0; pass < 4; pass++) {
		const char *const *names = pass % 2 ? (pass < 2 ? few : few_vm) : NULL;

		for (size_t i = 0; i < SAMPLES; i++) {
			uint64_t t0 = mono_ns();

			if (pass < 2) {
				struct qmp_vcpu_stats s;

				CHECK_MSG(qmp_query_stats_vcpu(c, names, &s, &err) == 0, "%s", err.msg);
				n = s.sum.n;
				qmp_vcpu_stats_clear(&s);
			} else {
				struct qmp_stat_set s;

				CHECK_MSG(qmp_query_stats_vm(c, names, &s, &err) == 0, "%s", err.msg);
				n = s.n;
				qmp_stat_set_clear(&s);
			}
			ns[i] = mono_ns() - t0;
		}
		static const char *const what[] = { "vcpu, all stats", "vcpu, 4 names", "vm, all stats", "vm, 4 names" };

		report(what[pass], ns, SAMPLES, n);
	}
	/* a sample of both targets with the names the sampler asks for (every cumulative stat): two round trips, or one batch */
	_cleanup_strv_free_ char **cum_vm = NULL, **cum_vcpu = NULL;
	CHECK_MSG(qmp_query_stats_names(c, "vm", "cumulative", &cum_vm, &err) == 0, "%s", err.msg);
	CHECK_MSG(qmp_query_stats_names(c, "vcpu", "cumulative", &cum_vcpu, &err) == 0, "%s", err.msg);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t cpu0 = thread_cpu_ns();

		for (size_t i = 0; i < SAMPLES; i++) {
			struct qmp_stat_set vm;
			struct qmp_vcpu_stats vc;
			uint64_t t0 = mono_ns();

			if (pass == 0) {
				CHECK_MSG(qmp_query_stats_vm(c, (const char *const *)cum_vm, &vm, &err) == 0, "%s", err.msg);
				CHECK_MSG(qmp_query_stats_vcpu(c, (const char *const *)cum_vcpu, &vc, &err) == 0, "%s", err.msg);
			} else
				CHECK_MSG(qmp_query_stats_kvm(c, (const char *const *)cum_vm, (const char *const *)cum_vcpu, &vm, &vc, &err) == 0, "%s", err.msg);
			ns[i] = mono_ns() - t0;
			n = vm.n + vc.sum.n;
			qmp_stat_set_clear(&vm);
			qmp_vcpu_stats_clear(&vc);
		}
		uint64_t cpu = thread_cpu_ns() - cpu0;

		report(pass == 0 ? "vm then vcpu, cumulative, json-c" : "vm and vcpu batched, scanned", ns, SAMPLES, n);
		printf("%-34s client CPU %.1f us per sample (%llu replies scanned so far)\n", "", cpu / 1e3 / SAMPLES,
		       (unsigned long long)qmp_client_replies_scanned(c));
	}
	CHECK(qmp_quit(c, &err) == 0);
	test_qemu_wait_exit(&q, 60000);
	test_qemu_stop(&q);
	return 0;
}
