// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostvm-boot: a kernel arm's host VM overhead per repetition
 * (docs/kernel-arms.md): QEMU start to the runner inside ready, and
 * teardown (ready to QEMU's exit), over ROUNDS boots of KERNEL, printed as
 * median [min max], with where the boot time goes (the host VM's own uptime
 * when its init had loaded the modules and when the runner was ready).
 *
 *   build/bench/hostvm-boot KERNEL [ROUNDS] [ACCEL] [CMDLINE...]     (as root)
 *
 * Each CMDLINE is a variant (words appended to the host VM's kernel
 * command line, "" for none), booted in turn each round and reported
 * apart, so two settings are compared under the same load.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostvm-rep.h"
#include "macro.h"
#include "report.h"
#include "runner.h"
#include "spec.h"

#define MAX_VARIANTS 8
#define TARGET_S 5.0

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double print(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	printf("  %-34s %7.2f s [%.2f %.2f]\n", what, med, v[0], v[n - 1]);
	return med;
}

struct variant {
	const char *cmdline; /* appended to the kernel command line; NULL: none */
	char dir[32];
	bool made; /* dir exists */
	struct run_spec spec;
	struct report *report;
	struct hostvm_run *hr;
	double boot[100], init[100], ready[100], down[100];
};

static int prepare(struct variant *v, const char *kernel, const char *accel, struct sb_error *err)
{
	if (!mkdtemp(v->dir))
		return sb_error_set(err, -errno, "mkdtemp: %s", strerror(errno));
	v->made = true;
	if (spec_init(&v->spec) < 0 || spec_set(&v->spec, "host_vm.kernel", kernel, "KERNEL", err) < 0 ||
	    (accel && spec_set(&v->spec, "host_vm.accel", accel, "ACCEL", err) < 0) ||
	    (v->cmdline && spec_set(&v->spec, "host_vm.cmdline", v->cmdline, "CMDLINE", err) < 0) ||
	    report_new("20260101T000000Z-000000", 1, &v->report) < 0 || report_add_arm(v->report, "default", NULL, 1) < 0)
		return err->msg[0] ? -EINVAL : sb_error_set(err, -ENOMEM, "out of memory");
	return hostvm_run_prepare(&v->spec, v->report, v->dir, &v->hr, err);
}

static void cleanup(struct variant *v)
{
	static const char *const files[] = { "initramfs.cpio", "console.log" };
	char path[64];

	hostvm_run_free(v->hr);
	report_free(v->report);
	spec_done(&v->spec);
	if (!v->made)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", v->dir, files[i]);
		unlink(path);
	}
	rmdir(v->dir);
}

int main(int argc, char **argv)
{
	static struct variant vs[MAX_VARIANTS];
	struct sb_error err = {};
	char *guest = NULL;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, nv = argc > 4 ? argc - 4 : 1, rc = 0;

	if (argc < 2 || rounds < 1 || rounds > 100 || nv > MAX_VARIANTS) {
		fprintf(stderr, "usage: %s KERNEL [ROUNDS] [auto|kvm|tcg] [CMDLINE...] (at most %d CMDLINE variants)\n",
			argv[0], MAX_VARIANTS);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "hostvm-boot: run as root\n");
		return 77;
	}
	if (runner_find_guest_image(&guest, &err) < 0) {
		fprintf(stderr, "hostvm-boot: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < nv; i++) {
		vs[i].cmdline = argc > 4 && *argv[4 + i] ? argv[4 + i] : NULL;
		snprintf(vs[i].dir, sizeof(vs[i].dir), "hostvm-boot-XXXXXX");
		if (prepare(&vs[i], argv[1], argc > 3 ? argv[3] : NULL, &err) < 0) {
			fprintf(stderr, "hostvm-boot: %s\n", err.msg);
			rc = 1;
			goto out;
		}
	}
	printf("host VM boot, %s (booted as %s), %s, %u vCPUs, %llu MiB, %d rounds%s\n", vs[0].report->arms[0].kernel->id.release,
	       vs[0].report->arms[0].kernel->booted, vs[0].report->arms[0].kernel->accel, vs[0].spec.host_vm.vcpus,
	       (unsigned long long)(vs[0].spec.host_vm.memory >> 20), rounds, nv > 1 ? ", variants interleaved" : "");
	/* round by round, every variant in turn: the machine's load falls on all of them alike */
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < nv; i++) {
			struct variant *v = &vs[i];
			struct hostvm_rep_ctx ctx = { .spec = &v->spec, .guest_image = guest, .arm = 0, .report = v->report };
			struct hostvm_boot_figures f;
			if (hostvm_boot_once(v->hr, &ctx, v->dir, &f, &err) < 0) {
				fprintf(stderr, "hostvm-boot: round %d%s%s: %s\n", r, v->cmdline ? ", cmdline " : "",
					v->cmdline ? v->cmdline : "", err.msg);
				rc = 1;
				goto out;
			}
			v->boot[r] = f.boot_s;
			v->init[r] = f.init_uptime_s;
			v->ready[r] = f.ready_uptime_s;
			v->down[r] = f.teardown_s;
		}
	}
	for (int i = 0; i < nv; i++) {
		struct variant *v = &vs[i];
		if (nv > 1 || v->cmdline)
			printf("kernel command line + \"%s\":\n", v->cmdline ? v->cmdline : "");
		double med = print("QEMU start to runner ready", v->boot, rounds);
		print("  guest uptime at init's modules", v->init, rounds);
		print("  guest uptime at runner ready", v->ready, rounds);
		print("teardown (ready to QEMU exit)", v->down, rounds);
		printf("  boot to runner ready: %.2f s (target %.0f s): %s\n", med, TARGET_S,
		       med <= TARGET_S ? "met" : "not met");
	}
out:
	for (int i = 0; i < nv; i++)
		cleanup(&vs[i]);
	free(guest);
	return rc;
}
