// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostvm-boot: a kernel arm's host VM overhead per repetition
 * (docs/kernel-arms.md): QEMU start to the runner inside ready, and
 * teardown (ready to QEMU's exit), over ROUNDS boots of KERNEL, printed as
 * median [min max], with where the boot time goes (the host VM's own uptime
 * when its init had loaded the modules and when the runner was ready).
 *
 *   build/bench/hostvm-boot KERNEL [ROUNDS] [ACCEL]     (as root)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostvm-rep.h"
#include "mkdir-p.h"
#include "report.h"
#include "runner.h"
#include "spec.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void print(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	printf("  %-34s %7.2f s [%.2f %.2f]\n", what, med, v[0], v[n - 1]);
}

int main(int argc, char **argv)
{
	struct run_spec spec;
	struct sb_error err = {};
	struct report *report = NULL;
	struct hostvm_run *hr = NULL;
	char *guest = NULL, work[] = "hostvm-boot-XXXXXX";
	int rounds = argc > 2 ? atoi(argv[2]) : 5;

	if (argc < 2 || rounds < 1 || rounds > 100) {
		fprintf(stderr, "usage: %s KERNEL [ROUNDS] [auto|kvm|tcg]\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "hostvm-boot: run as root\n");
		return 77;
	}
	if (spec_init(&spec) < 0 || spec_set(&spec, "host_vm.kernel", argv[1], "KERNEL", &err) < 0 ||
	    (argc > 3 && spec_set(&spec, "host_vm.accel", argv[3], "ACCEL", &err) < 0) ||
	    report_new("20260101T000000Z-000000", 1, &report) < 0 || report_add_arm(report, "default", NULL, 1) < 0 ||
	    hostvm_run_prepare(&spec, report, ".", &hr, &err) < 0 || runner_find_guest_image(&guest, &err) < 0) {
		fprintf(stderr, "hostvm-boot: %s\n", err.msg);
		return 1;
	}
	if (!mkdtemp(work)) {
		perror("mkdtemp");
		return 1;
	}
	double boot[100], init[100], ready[100], down[100];
	struct hostvm_rep_ctx ctx = { .spec = &spec, .guest_image = guest, .arm = 0, .report = report };
	printf("host VM boot, %s (booted as %s), %s, %u vCPUs, %llu MiB, %d rounds\n", report->arms[0].kernel->release,
	       report->arms[0].kernel->booted, report->arms[0].kernel->accel, spec.host_vm.vcpus, (unsigned long long)(spec.host_vm.memory >> 20), rounds);
	for (int i = 0; i < rounds; i++) {
		struct hostvm_boot_figures f;
		if (hostvm_boot_once(hr, &ctx, work, &f, &err) < 0) {
			fprintf(stderr, "hostvm-boot: round %d: %s\n", i, err.msg);
			return 1;
		}
		boot[i] = f.boot_s;
		init[i] = f.init_uptime_s;
		ready[i] = f.ready_uptime_s;
		down[i] = f.teardown_s;
	}
	print("QEMU start to runner ready", boot, rounds);
	print("  guest uptime at init's modules", init, rounds);
	print("  guest uptime at runner ready", ready, rounds);
	print("teardown (ready to QEMU exit)", down, rounds);
	char path[64];
	snprintf(path, sizeof(path), "%s/initramfs.cpio", work);
	unlink(path);
	snprintf(path, sizeof(path), "%s/console.log", work);
	unlink(path);
	rmdir(work);
	hostvm_run_free(hr);
	report_free(report);
	spec_done(&spec);
	free(guest);
	return 0;
}
