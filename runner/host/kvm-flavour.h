/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which KVM this host runs and under what: the vendor module (kvm_amd,
 * kvm_intel, kvm_pvm) and whether the host is bare metal, a VM under KVM
 * (nested), or a VM whose CPU QEMU's TCG emulates (svm emulated). Some
 * counters cannot move on some of these: they are reported unavailable with
 * the reason instead of a silent 0 (docs/probes.md, "What each KVM can count").
 */
#pragma once

#include <stdbool.h>

struct kvm_flavour {
	char module[24];  /* "kvm_amd", "kvm_intel", "kvm_pvm", or "none" */
	char context[96]; /* "bare metal", "nested under KVM", "svm emulated by TCG", ... */
	bool emulated;    /* the host's CPU is emulated (TCG): absolute figures are not bare metal's */
};

/* The running host's flavour, found once (sysfs and cpuid). */
const struct kvm_flavour *kvm_flavour_host(void);

/*
 * Why counter ("kvm.pf_taken", "bpf.kvm_exit", ...) cannot move on a host of
 * flavour f, or NULL when it can.
 */
const char *kvm_flavour_cannot_count(const struct kvm_flavour *f, const char *counter);
