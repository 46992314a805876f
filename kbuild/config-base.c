// SPDX-License-Identifier: GPL-2.0-or-later
#include "config-base.h"

#include <errno.h>
#include <string.h>

#include "macro.h"
#include "strbuf.h"

/*
 * What allnoconfig would switch off and a host VM cannot do without, on top
 * of the fragment (which has what snapbench's probes and scenarios need).
 * Options marked checked are not prompts without CONFIG_EXPERT, so
 * allnoconfig leaves them at their default, on: they are checked, so a tree
 * that changes that is named rather than booting into a silent failure.
 * Keep docs/kernel-build.md's table in step (test kbuild-docs).
 */
static const struct kbuild_option base[] = {
	{ "The host VM's machine (x86_64: QEMU's q35 without ACPI interrupt routing, TCG qemu64; riscv64: virt)",
	  "64BIT", 'y', false, "an x86_64 kernel (allnoconfig alone would make an i386 one)", NULL, "x86_64", false },
	{ NULL, "MMU", 'y', false, "a paged kernel (allnoconfig makes riscv's a no-MMU one)", NULL, "riscv64", false },
	{ NULL, "FPU", 'y', false, "programs' floating point registers saved (allnoconfig leaves riscv's off)", NULL,
	  "riscv64", false },
	/* riscv with gcc 12: 7.x's DYNAMIC_FTRACE needs gcc 14's -fmin-function-alignment, or no compressed instructions */
	{ NULL, "NONPORTABLE", 'y', false, "RISCV_ISA_C is a prompt (and can be off) only with it", NULL, "riscv64", false },
	{ NULL, "RISCV_ISA_C", 'n', false,
	  "ftrace and fentry with gcc 12 on 7.x need a kernel without compressed instructions", NULL, "riscv64", false },
	{ NULL, "CROSS_MEMORY_ATTACH", 'y', false,
	  "process_vm_readv(): snapbench-hostvm-selftest-riscv64 reads the KVM selftest's lines from its write() calls",
	  NULL, "riscv64", false },
	{ NULL, "RISCV_ISA_FALLBACK", 'y', false,
	  "QEMU 7.2's virt machine names its harts' extensions in riscv,isa alone: without it the kernel finds no valid "
	  "hart and stops in setup_smp()",
	  NULL, "riscv64", false },
	{ NULL, "SMP", 'y', false, "a host VM has a vCPU per guest vCPU and one for QEMU's snapshot thread", NULL, NULL, false },
	{ NULL, "HIGH_RES_TIMERS", 'y', false, "KVM's LAPIC timer runs on hrtimers (x86 KVM depends on it)", NULL, NULL, false },
	{ NULL, "ACPI", 'y', false,
	  "a host VM's NUMA nodes come from QEMU's ACPI SRAT (seed 002's --host-vm-numa-nodes)", NULL, "x86_64", false },
	{ NULL, "X86_64_ACPI_NUMA", 'y', false, "the SRAT read into NUMA nodes (seed 002's numa-hinting needs two nodes)",
	  NULL, "x86_64", false },
	{ NULL, "X86_MPPARSE", 'y', false,
	  "the host VM boots with pci=noacpi: its PCI interrupts are routed by the MP table", NULL, "x86_64", false },
	{ NULL, "PCI", 'y', false, "the virtio devices are PCI devices", NULL, NULL, false },
	{ NULL, "DEBUG_KERNEL", 'y', false, "the debug information menu: DWARF, which pahole turns into BTF", NULL, NULL, false },
	{ NULL, "KPROBES", 'y', false, "kprobe events, which BPF_EVENTS depends on", NULL, NULL, false },
	{ NULL, "KPROBE_EVENTS", 'y', false, "BPF_EVENTS (BPF programs on tracepoints) depends on kprobe or uprobe events",
	  NULL, NULL, false },
	{ "The console, the init and the programs it starts", "PRINTK", 'y', true,
	  "the console and /dev/kmsg, where the kernel's taint and first warnings are read", NULL, NULL, false },
	{ NULL, "TTY", 'y', true, "the serial console and the virtio-serial progress port", NULL, NULL, false },
	{ NULL, "SERIAL_8250", 'y', false, "console=ttyS0", NULL, NULL, false },
	{ NULL, "BINFMT_ELF", 'y', false, "the init, snapbench and QEMU are ELF programs", NULL, NULL, false },
	{ NULL, "BINFMT_SCRIPT", 'y', false, "scripts with #! (a spec's commands, hostvm-exec's)", NULL, NULL, false },
	{ NULL, "PROC_FS", 'y', true, "/proc: snapbench reads the VMs' processes and memory there", NULL, NULL, false },
	{ NULL, "SYSFS", 'y', true, "/sys: the virtio ports' names, the NUMA nodes, KVM's module parameters", NULL, NULL, false },
	{ NULL, "MULTIUSER", 'y', true, "users and groups (QEMU and snapbench check them)", NULL, NULL, false },
	{ NULL, "NET", 'y', false, "9p's client and unix sockets are in the network layer", NULL, NULL, false },
	{ NULL, "NUMA_MIGRATION", 'y', false,
	  "7.x splits it out of NUMA and NUMA_BALANCING depends on it (seed 002); 6.12 has no such option", NULL, NULL,
	  true },
	{ NULL, "HUGETLBFS", 'y', false, "guest RAM on hugetlbfs (a spec's backing hugetlb)", NULL, NULL, false },
	{ "What QEMU's main loop takes for granted", "FUTEX", 'y', true, "QEMU's threads' locks", NULL, NULL, false },
	{ NULL, "EPOLL", 'y', true, "QEMU's and snapbench's event loops", NULL, NULL, false },
	{ NULL, "SIGNALFD", 'y', true, "snapbench's event loop takes signals through a signalfd", NULL, NULL, false },
	{ NULL, "TIMERFD", 'y', true, "QEMU's and snapbench's timers", NULL, NULL, false },
	{ NULL, "AIO", 'y', true, "QEMU's native AIO for its block devices", NULL, NULL, false },
	{ NULL, "FILE_LOCKING", 'y', true, "QEMU locks its image files", NULL, NULL, false },
	{ NULL, "POSIX_TIMERS", 'y', true, "QEMU's and the guest agent's clocks", NULL, NULL, false },
	{ NULL, "SHMEM", 'y', true, "shared memory, tmpfs and memfd", NULL, NULL, false },
};

int kbuild_config_base_parse(const char *name, enum kbuild_config_base *ret, struct sb_error *err)
{
	if (!strcmp(name, "minimal"))
		*ret = KBUILD_BASE_MINIMAL;
	else if (!strcmp(name, "defconfig"))
		*ret = KBUILD_BASE_DEFCONFIG;
	else
		return sb_error_set(err, -EINVAL, "--config-base '%s': give minimal (allnoconfig and what a host VM needs, "
				    "the default) or defconfig (the tree's defconfig)", name);
	return 0;
}

const char *kbuild_config_base_name(enum kbuild_config_base b)
{
	return b == KBUILD_BASE_DEFCONFIG ? "defconfig" : "minimal";
}

const struct kbuild_option *kbuild_config_base_options(size_t *n)
{
	*n = ARRAY_SIZE(base);
	return base;
}

static void append_options(struct strbuf *b, const struct kbuild_option *opts, size_t n, const char *arch)
{
	for (size_t i = 0; i < n; i++) {
		const struct kbuild_option *o = &opts[i];

		if (o->check_only || !kbuild_option_for(o, arch))
			continue;
		if (o->group)
			strbuf_appendf(b, "# %s\n", o->group);
		if (o->value == 'n')
			strbuf_appendf(b, "# CONFIG_%s is not set\n", o->name);
		else
			strbuf_appendf(b, "CONFIG_%s=%c\n", o->name, o->value);
	}
}

char *kbuild_config_base_text(const char *arch)
{
	_cleanup_strbuf_ struct strbuf b = {};
	const struct kbuild_option *frag;
	size_t n;

	strbuf_append(&b, "# snapbench's minimal config base (docs/kernel-build.md): make allnoconfig with these\n"
			  "# (KCONFIG_ALLCONFIG), what a host VM needs, then snapbench's fragment.\n");
	append_options(&b, base, ARRAY_SIZE(base), arch);
	frag = kbuild_fragment(&n);
	append_options(&b, frag, n, arch);
	return strbuf_steal(&b);
}

char *kbuild_config_base_describe(const char *arch)
{
	return kbuild_options_text(base, ARRAY_SIZE(base), arch,
				   "# snapbench's minimal config base (docs/kernel-build.md): make allnoconfig with these and the\n"
				   "# fragment (snapbench kernel fragment) given as KCONFIG_ALLCONFIG, what a host VM needs.\n"
				   "# Options marked \"checked\" are no prompts without CONFIG_EXPERT: only checked after olddefconfig.\n");
}

int kbuild_config_base_check(const char *arch, const char *config, const char *config_path, struct sb_error *err)
{
	return kbuild_options_check(base, ARRAY_SIZE(base), arch, "the minimal config base", config, config_path, err);
}
