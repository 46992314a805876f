// SPDX-License-Identifier: GPL-2.0-or-later
#include "fragment.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "strbuf.h"

/*
 * What a kernel arm's host VM, its init and the run engine inside need
 * (docs/kernel-arms.md "The kernel under test needs"), and what the
 * scenarios exercise. Keep docs/kernel-build.md's table in step (test
 * kbuild-docs compares them).
 */
static const struct kbuild_option options[] = {
	{ "KVM for both vendors (modules: load-time parameters such as kvm_amd.npt=0 go to the module's load)",
	  "VIRTUALIZATION", 'y', false, "the KVM menu", NULL, NULL, false },
	{ NULL, "KVM", 'm', false, "the benchmark's guest runs under this kernel's KVM", NULL, NULL, false },
	{ NULL, "KVM_AMD", 'm', false, "a TCG host VM's CPU is AMD's (svm, npt)", "needs CPU_SUP_AMD", "x86_64", false },
	{ NULL, "KVM_INTEL", 'm', false, "nested KVM on an Intel host", "needs CPU_SUP_INTEL", "x86_64", false },
	{ "x86_64: booting as a paravirtualized guest (PVH, kvmclock)", "HYPERVISOR_GUEST", 'y', false,
	  "the guest support menu", NULL, "x86_64", false },
	{ NULL, "PARAVIRT", 'y', false, "PVH and kvmclock", NULL, "x86_64", false },
	{ NULL, "PVH", 'y', false, "QEMU boots the vmlinux's PVH entry, seconds sooner under TCG", NULL, "x86_64", false },
	{ NULL, "KVM_GUEST", 'y', false, "kvmclock and KVM's paravirtual features in the host VM", NULL, "x86_64", false },
	{ "riscv64: QEMU's virt machine (-M virt, the H extension on)", "ARCH_VIRT", 'y', false,
	  "QEMU's virt machine: its devices, found through its device tree", NULL, "riscv64", false },
	{ NULL, "RISCV_SBI", 'y', true, "KVM and the console's and timer's calls go through OpenSBI", NULL, "riscv64", false },
	{ NULL, "VIRTIO_MMIO", 'y', false, "virt's virtio-mmio transports (virtio devices without PCI)", NULL, "riscv64", false },
	{ NULL, "PCI_HOST_GENERIC", 'y', false, "virt's PCIe host bridge: virtio PCI devices as on x86", NULL, "riscv64", false },
	{ NULL, "SERIAL_OF_PLATFORM", 'y', false, "virt's ns16550a UART, found through the device tree: console=ttyS0",
	  NULL, "riscv64", false },
	{ "Booting as a host VM", "BLK_DEV_INITRD", 'y', false, "the host VM's init and modules come in an initramfs",
	  NULL, NULL, false },
	{ NULL, "DEVTMPFS", 'y', false, "the init mounts devtmpfs", NULL, NULL, false },
	{ NULL, "TMPFS", 'y', false, "/run, /tmp, /var/tmp and /root are tmpfs", NULL, NULL, false },
	{ NULL, "UNIX", 'y', false, "QMP and snapbench's own sockets are unix sockets", NULL, NULL, false },
	{ NULL, "SERIAL_8250_CONSOLE", 'y', false, "console=ttyS0: the console log of each repetition", NULL, NULL, false },
	{ NULL, "MODULES", 'y', false, "KVM and the modules the init loads", NULL, NULL, false },
	{ NULL, "MODULE_UNLOAD", 'y', false, "modules can be reloaded with other parameters", NULL, NULL, false },
	{ "virtio and 9p: the host's / is the root, results and progress go back", "PCI_MSI", 'y', false,
	  "the host VM boots with pci=noacpi, so its virtio devices run on MSI-X", NULL, NULL, false },
	{ NULL, "VIRTIO_MENU", 'y', false, "the virtio drivers menu", NULL, NULL, false },
	{ NULL, "VIRTIO_PCI", 'y', false, "the 9p shares and the progress port are virtio PCI devices", NULL, NULL, false },
	{ NULL, "VIRTIO_CONSOLE", 'y', false, "the progress port is a virtio-serial port", NULL, NULL, false },
	{ NULL, "NET_9P", 'y', false, "the root is this host's / over 9p", NULL, NULL, false },
	{ NULL, "NET_9P_VIRTIO", 'y', false, "the 9p transport", NULL, NULL, false },
	{ NULL, "NETWORK_FILESYSTEMS", 'y', false, "the network file systems menu (9p)", NULL, NULL, false },
	{ NULL, "9P_FS", 'y', false, "the root is this host's / over 9p", NULL, NULL, false },
	{ NULL, "OVERLAY_FS", 'y', false, "an overlay over the read-only root (hostvm-exec --systemd, LAVA DUTs)", NULL,
	  NULL, false },
	{ "The BPF probes (docs/probes.md)", "BPF_SYSCALL", 'y', false, "the probes are BPF programs", NULL, NULL, false },
	{ NULL, "BPF_JIT", 'y', false, "the probes' cost per event", NULL, NULL, false },
	{ NULL, "BPF_EVENTS", 'y', false, "BPF programs on tracepoints", NULL, NULL, false },
	{ NULL, "TRACEPOINTS", 'y', true, "KVM's, the TLB's and migration's tracepoints", "selected by FTRACE's tracers",
	  NULL, false },
	{ NULL, "PERF_EVENTS", 'y', false, "the classic tracepoint backend attaches through perf_event_open()", NULL, NULL, false },
	{ NULL, "FTRACE", 'y', false, "tracefs, and the tracers that select TRACEPOINTS", NULL, NULL, false },
	{ NULL, "FUNCTION_TRACER", 'y', false, "fentry programs attach through ftrace's call sites", NULL, NULL, false },
	{ NULL, "DYNAMIC_FTRACE", 'y', false, "BPF trampolines (fentry, fexit)", NULL, NULL, false },
	{ NULL, "DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT", 'y', false, "debug info, which pahole turns into BTF", NULL, NULL, false },
	{ NULL, "DEBUG_INFO_BTF", 'y', false, "CO-RE relocations, tp_btf and fentry need the kernel's BTF",
	  "needs pahole 1.16 or later (package dwarves) when the config is made; without it PAHOLE_VERSION is 0", NULL, false },
	{ NULL, "DEBUG_INFO_BTF_MODULES", 'y', false, "KVM's tracepoints and functions are in kvm.ko's BTF",
	  "needs pahole with split BTF (PAHOLE_HAS_SPLIT_BTF, pahole 1.19 or later)", NULL, false },
	{ NULL, "KALLSYMS_ALL", 'y', false, "recorded kernel stacks are symbolized", NULL, NULL, false },
	{ NULL, "DEBUG_FS", 'y', false, "KVM's debugfs stats and debugfs knobs", NULL, NULL, false },
	{ "What the scenarios exercise", "USERFAULTFD", 'y', false,
	  "the background snapshot write-protects guest RAM with userfaultfd (seed 000); postcopy's missing-page "
	  "faults (seed 003)", NULL, NULL, false },
	/* riscv has no userfaultfd write-protection in 6.12 (no HAVE_ARCH_USERFAULTFD_WP); seed 000 is x86's */
	{ NULL, "PTE_MARKER_UFFD_WP", 'y', false, "userfaultfd write-protection of shmem and memfd guest RAM (seed 000)",
	  NULL, "x86_64", false },
	{ NULL, "NUMA", 'y', false, "a host VM of several NUMA nodes (--host-vm-numa-nodes; seed 002)", NULL, NULL, false },
	{ NULL, "NUMA_BALANCING", 'y', false, "NUMA-hinting faults (seed 002's numa-hinting scenario)", NULL, NULL, false },
	{ NULL, "MIGRATION", 'y', false, "page migration (the migration cause, NUMA balancing)", NULL, NULL, false },
	{ NULL, "COMPACTION", 'y', false, "compaction (the migration cause, THP)", NULL, NULL, false },
	{ NULL, "TRANSPARENT_HUGEPAGE", 'y', false, "THP: khugepaged and MADV_COLLAPSE (the thp cause)", NULL, NULL, false },
	{ NULL, "MEMFD_CREATE", 'y', true, "guest RAM as a memfd (the numa-hinting scenario pins it)",
	  "selected by TMPFS or HUGETLBFS", NULL, false },
	{ NULL, "KSM", 'y', false, "same-page merging (the ksm cause)", NULL, NULL, false },
	{ NULL, "IO_URING", 'y', false, "QEMU's io_uring block and event paths", NULL, NULL, false },
	{ NULL, "EVENTFD", 'y', false, "QEMU's event notifiers", NULL, NULL, false },
};

bool kbuild_option_for(const struct kbuild_option *o, const char *arch)
{
	return !o->arch || !strcmp(o->arch, arch ? arch : "x86_64");
}

const struct kbuild_option *kbuild_fragment(size_t *n)
{
	*n = ARRAY_SIZE(options);
	return options;
}

static void append_option_line(struct strbuf *b, const struct kbuild_option *o)
{
	if (o->value == 'n')
		strbuf_appendf(b, "# CONFIG_%s is not set\n", o->name);
	else
		strbuf_appendf(b, "CONFIG_%s=%c\n", o->name, o->value);
}

char *kbuild_options_text(const struct kbuild_option *opts, size_t n, const char *arch, const char *header)
{
	_cleanup_strbuf_ struct strbuf b = {};

	strbuf_append(&b, header);
	for (size_t i = 0; i < n; i++) {
		const struct kbuild_option *o = &opts[i];
		if (!kbuild_option_for(o, arch))
			continue;
		if (o->group)
			strbuf_appendf(&b, "\n# %s\n", o->group);
		if (o->check_only) {
			strbuf_appendf(&b, "# checked: CONFIG_%s=%c (%s)\n", o->name, o->value, o->why);
			continue;
		}
		strbuf_appendf(&b, "# %s%s\n", o->why, o->if_known ? " (checked only where the tree has it)" : "");
		append_option_line(&b, o);
	}
	return strbuf_steal(&b);
}

char *kbuild_fragment_text(const char *arch)
{
	return kbuild_options_text(options, ARRAY_SIZE(options), arch,
				   "# snapbench's configuration fragment for a kernel arm's host VM (docs/kernel-build.md),\n"
				   "# merged into the config base (--config-base, or --config) before make olddefconfig.\n"
				   "# Options marked \"checked\" are selected by others and only checked after olddefconfig.\n");
}

/* The option a .config line sets ("CONFIG_X=..." or "# CONFIG_X is not set"): its name's [start, start+len), or false. */
static bool line_option(const char *line, size_t line_len, const char **name, size_t *len)
{
	const char *p = line, *end = line + line_len;
	static const char unset_tail[] = " is not set";

	if (line_len > 2 && !strncmp(p, "# ", 2))
		p += 2;
	if ((size_t)(end - p) < 8 || strncmp(p, "CONFIG_", 7))
		return false;
	p += 7;
	*name = p;
	while (p < end && *p != '=' && *p != ' ')
		p++;
	*len = (size_t)(p - *name);
	if (*len == 0)
		return false;
	if (line[0] == '#')
		return (size_t)(end - p) == strlen(unset_tail) && !strncmp(p, unset_tail, strlen(unset_tail));
	return p < end && *p == '=';
}

/* The fragment's entry for name[0, len) that is written (not check-only) for arch, or NULL. */
static const struct kbuild_option *written_option(const char *arch, const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (!options[i].check_only && kbuild_option_for(&options[i], arch) && strlen(options[i].name) == len &&
		    !strncmp(options[i].name, name, len))
			return &options[i];
	return NULL;
}

int kbuild_fragment_merge(const char *arch, const char *base, char **ret, struct sb_error *err)
{
	_cleanup_strbuf_ struct strbuf b = {};
	char *text;

	for (const char *p = base; *p;) {
		size_t n = strcspn(p, "\n");
		const char *name;
		size_t len;

		/* the base's line for an option of the fragment goes: the fragment's comes at the end */
		if (!(line_option(p, n, &name, &len) && written_option(arch, name, len))) {
			strbuf_append_mem(&b, p, n);
			strbuf_append(&b, "\n");
		}
		p += n;
		if (*p == '\n')
			p++;
	}
	strbuf_append(&b, "\n# snapbench's fragment for a kernel arm's host VM (docs/kernel-build.md)\n");
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (!options[i].check_only && kbuild_option_for(&options[i], arch))
			append_option_line(&b, &options[i]);
	if (!(text = strbuf_steal(&b)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	*ret = text;
	return 0;
}

/* What config says of CONFIG_name: its value's first character ('y', 'm', ...), 'n' for "is not set", 0 when absent. */
static char config_value(const char *config, const char *name)
{
	size_t want = strlen(name);

	for (const char *p = config; *p;) {
		size_t n = strcspn(p, "\n");
		const char *nm;
		size_t len;

		if (line_option(p, n, &nm, &len) && len == want && !strncmp(nm, name, len))
			return p[0] == '#' ? 'n' : (nm[len + 1] && nm[len + 1] != '\n' ? nm[len + 1] : 'n');
		p += n;
		if (*p == '\n')
			p++;
	}
	return 0;
}

static bool satisfies(char have, char want)
{
	if (want == 'n')
		return have == 'n' || have == 0;
	if (want == 'm')
		return have == 'm' || have == 'y';
	return have == want;
}

int kbuild_options_check(const struct kbuild_option *opts, size_t n, const char *arch, const char *set,
			 const char *config, const char *config_path, struct sb_error *err)
{
	_cleanup_strbuf_ struct strbuf b = {};
	size_t bad = 0;
	char *text;

	for (size_t i = 0; i < n; i++) {
		const struct kbuild_option *o = &opts[i];
		char have = config_value(config, o->name);

		if (!kbuild_option_for(o, arch) || satisfies(have, o->value) || (!have && o->if_known))
			continue;
		bad++;
		strbuf_append(&b, "\n  ");
		if (!have)
			strbuf_appendf(&b, "CONFIG_%s: the tree has no such option (dropped or renamed); snapbench needs it: %s",
				       o->name, o->why);
		else
			strbuf_appendf(&b, "CONFIG_%s is %s%s after make olddefconfig, %s asks for %c "
				       "(%s): a dependency of it is off (make menuconfig, search %s)%s%s", o->name,
				       have == 'n' ? "not set" : "=", have == 'n' ? "" : (char[]){ have, 0 }, set, o->value,
				       o->why, o->name, o->hint ? "; " : "", o->hint ? o->hint : "");
	}
	if (!bad)
		return 0;
	if (!(text = strbuf_steal(&b)))
		return sb_error_set(err, -ENOMEM, "out of memory");
	sb_error_set(err, -ENOTSUP, "%s: %zu option%s of %s did not end up as asked (docs/kernel-build.md):%s",
		     config_path, bad, bad == 1 ? "" : "s", set, text);
	free(text);
	return -ENOTSUP;
}

int kbuild_fragment_check(const char *arch, const char *config, const char *config_path, struct sb_error *err)
{
	return kbuild_options_check(options, ARRAY_SIZE(options), arch, "snapbench's host VM fragment", config,
				    config_path, err);
}
