/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a run's guest runs, decided once before preflight: on this host
 * under KVM, on this host under QEMU's TCG, or in host VMs (kernel arms, or
 * because this host has no usable /dev/kvm). docs/running.md#where-a-run-runs.
 *
 *   vm.accel kvm   /dev/kvm opens: here, under KVM. It does not: in a host VM
 *                  booting host_vm.kernel "auto" (host_vm.fallback), whose
 *                  own KVM runs the guest; with fallback false, refused.
 *   vm.accel tcg   here, under TCG: no KVM counters, emulated timing.
 *   vm.accel auto  kvm when /dev/kvm opens, else tcg here.
 *
 * Kernel arms (a kernel named) always run in host VMs; "auto" as a kernel
 * is resolved to an image by placement_kernel_auto().
 */
#pragma once

#include <stdbool.h>

#include "error.h"
#include "spec.h"

struct placement {
	char accel[8];        /* what runs the guest where it runs: "kvm" or "tcg" */
	bool host_vm;         /* the repetitions run in host VMs */
	bool fell_back;       /* ... because this host's KVM is missing (vm.accel kvm, host_vm.fallback) */
	char *kernel;         /* host_vm.kernel "auto" resolved (malloc'd), or NULL */
	char kernel_how[256]; /* where that kernel came from */
	char reason[512];     /* one line: where and why, for the terminal and the report */
	int refused;          /* < 0: the run cannot run here (a preflight failure: message) */
	char message[SB_ERROR_MAX];
};

/*
 * Decides spec's placement. When vm.accel is kvm, this host's KVM does not
 * open and no host VM may or can take the run, or when "auto" finds no
 * kernel, p->refused is set and p->message names the fix: a preflight
 * failure, listed with the others (the guest stays "here", under KVM).
 * Returns < 0 only when out of memory. sysroot: NULL for "/" (tests).
 */
int placement_decide(const struct run_spec *spec, const char *sysroot, struct placement *p, struct sb_error *err);
void placement_done(struct placement *p);

/* Whether /dev/kvm opens read-write for us; else why not in *why (errno). */
bool placement_kvm_usable(int *why);

/*
 * host_vm.kernel "auto": Debian's packaged kernel in snapbench's kernel
 * cache ($SNAPBENCH_KERNEL_CACHE, default /var/cache/snapbench/kernels:
 * current/boot/vmlinuz, what scripts/fetch-test-kernel unpacks), else this
 * host's own /boot/vmlinuz-RELEASE when it is readable and its modules are
 * in /lib/modules/RELEASE. *image is malloc'd; how says which.
 */
#define PLACEMENT_KERNEL_CACHE_ENV "SNAPBENCH_KERNEL_CACHE"
#define PLACEMENT_KERNEL_CACHE_DEFAULT "/var/cache/snapbench/kernels"
int placement_kernel_auto(const char *sysroot, char **image, char *how, size_t how_len, struct sb_error *err);
