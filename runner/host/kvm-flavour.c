// SPDX-License-Identifier: GPL-2.0-or-later
#include "kvm-flavour.h"

#include <cpuid.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

/* The hypervisor's cpuid signature (leaf 0x40000000), "" on bare metal or when it names none. */
static bool hypervisor_signature(char sig[13])
{
	unsigned a, b, c, d;

	sig[0] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return false;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = '\0';
	for (int i = 0; i < 12; i++)
		if (sig[i] && (sig[i] < 0x20 || sig[i] > 0x7e))
			sig[i] = '?';
	return true;
}

static bool file_starts_with(const char *path, const char *prefix)
{
	char buf[64] = "";
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !strncmp(buf, prefix, strlen(prefix));
}

static struct kvm_flavour host_flavour;

static void detect(void)
{
	static const char *const modules[] = { "kvm_amd", "kvm_intel", "kvm_pvm" };
	struct kvm_flavour *f = &host_flavour;
	char sig[13], path[64];

	snprintf(f->module, sizeof(f->module), "none");
	for (size_t i = 0; i < ARRAY_SIZE(modules); i++) {
		snprintf(path, sizeof(path), "/sys/module/%s", modules[i]);
		if (access(path, F_OK) == 0) {
			snprintf(f->module, sizeof(f->module), "%s", modules[i]);
			break;
		}
	}
	if (!hypervisor_signature(sig))
		snprintf(f->context, sizeof(f->context), "bare metal");
	else if (!strcmp(sig, "KVMKVMKVM"))
		snprintf(f->context, sizeof(f->context), "nested under KVM");
	else if (!strcmp(sig, "TCGTCGTCGTCG") ||
		 (!sig[0] && file_starts_with("/sys/class/dmi/id/sys_vendor", "QEMU"))) {
		/* QEMU without KVM: its CPU, svm included, is emulated by TCG */
		snprintf(f->context, sizeof(f->context), "%s emulated by TCG",
			 !strcmp(f->module, "kvm_intel") ? "vmx" : "svm");
		f->emulated = true;
	} else if (sig[0])
		snprintf(f->context, sizeof(f->context), "under a hypervisor (cpuid signature \"%s\")", sig);
	else
		snprintf(f->context, sizeof(f->context), "under a hypervisor that names none");
}

const struct kvm_flavour *kvm_flavour_host(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, detect);
	return &host_flavour;
}

/*
 * Counters that stay 0 on a flavour whatever the guest does, each with the
 * reason. kvm_pvm: seen on every run on such a host (docs/probes.md): guest
 * code runs through KVM's instruction emulator (insn_emulation grows by
 * millions a second), KVM's guest page-fault path and remote TLB flushes
 * never run, and its vcpu_run does not pass the kvm_exit / kvm_inj_virq
 * tracepoints (query-stats' exits and irq_injections count instead).
 */
static const struct {
	const char *module;
	const char *counters[16];
	const char *reason;
} rules[] = {
	{ "kvm_pvm",
	  { "kvm.pf_taken", "kvm.pf_fixed", "kvm.pf_fast", "kvm.pf_spurious", "bpf.page_fault",
	    "bpf.page_fault_write", "bpf.fast_page_fault", "bpf.fast_page_fault_fixed" },
	  "this host's KVM is PVM (kvm_pvm): it runs guest code through KVM's instruction emulator, so KVM's guest "
	  "page-fault path never runs and this counter stays 0; to count it, run the kernel in a host VM "
	  "(docs/kernel-arms.md) or on a host with svm or vmx" },
	{ "kvm_pvm",
	  { "kvm.remote_tlb_flush", "kvm.remote_tlb_flush_requests" },
	  "this host's KVM is PVM (kvm_pvm): with guest code emulated it never flushes remote TLBs and this counter "
	  "stays 0; to count it, run the kernel in a host VM (docs/kernel-arms.md) or on a host with svm or vmx" },
	{ "kvm_pvm",
	  { "bpf.kvm_exit", "bpf.inj_virq", "bpf.inj_virq_reinjected" },
	  "this host's KVM is PVM (kvm_pvm), whose vcpu_run does not pass the kvm:kvm_exit and kvm:kvm_inj_virq "
	  "tracepoints, so this counter stays 0; KVM's own stats (kvm.exits, kvm.irq_injections) count them" },
};

const char *kvm_flavour_cannot_count(const struct kvm_flavour *f, const char *counter)
{
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		if (strcmp(rules[i].module, f->module))
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(rules[i].counters) && rules[i].counters[k]; k++)
			if (!strcmp(rules[i].counters[k], counter))
				return rules[i].reason;
	}
	return NULL;
}
