// SPDX-License-Identifier: GPL-2.0-or-later
/* The libvirt backend's domain XML: the micro guest's transient domain, a Linux guest's file. */
#include "vm-libvirt-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "qemu-args.h"
#include "xml-escape.h"
#include "strv.h"

#define DOMAIN_XML_MAX (1u << 20)

/* ---- the domain XML ------------------------------------------------------------ */

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		const char *e = xml_entity(*s);
		if (e)
			fputs(e, f);
		else
			fputc(*s, f);
	}
}

static void qemu_arg(FILE *f, const char *s)
{
	fputs("    <qemu:arg value='", f);
	xml_text(f, s);
	fputs("'/>\n", f);
}

int lv_domain_xml(const struct vm_config *cfg, const struct lv_vm *lv, const char *emulator, char **ret)
{
	const struct run_spec *s = cfg->spec;
	_cleanup_strv_free_ char **devices = NULL;
	char *xml = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	/* what libvirt has no element for: the firmware and devices of the qemu backend's argv */
	r = guest_qemu_device_args(lv->fifo_path, &devices, &(struct sb_error){});
	if (r < 0)
		return r;
	f = open_memstream(&xml, &len);
	if (!f)
		return -ENOMEM;
	/* type 'qemu' is libvirt's word for TCG */
	fprintf(f, "<domain type='%s' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n  <name>", cfg->tcg ? "qemu" : "kvm");
	xml_text(f, lv->name);
	fputs("</name>\n  <description>snapbench micro guest (transient; destroyed when snapbench disconnects)</description>\n", f);
	fprintf(f, "  <memory unit='MiB'>%llu</memory>\n", (unsigned long long)(s->vm.memory >> 20));
	if (s->vm.backing == SPEC_BACKING_HUGETLB || s->vm.backing == SPEC_BACKING_MEMFD || s->vm.prealloc) {
		fputs("  <memoryBacking>\n", f);
		if (s->vm.backing == SPEC_BACKING_HUGETLB)
			fprintf(f, "    <hugepages><page size='%llu' unit='KiB'/></hugepages>\n",
				(unsigned long long)((s->vm.hugepage_size ? s->vm.hugepage_size : 2ull << 20) >> 10));
		if (s->vm.backing == SPEC_BACKING_MEMFD)
			fputs("    <source type='memfd'/>\n    <access mode='shared'/>\n", f);
		if (s->vm.prealloc)
			fputs("    <allocation mode='immediate'/>\n", f);
		fputs("  </memoryBacking>\n", f);
	}
	fprintf(f, "  <vcpu>%u</vcpu>\n  <os>\n    <type arch='x86_64' machine='", s->vm.vcpus);
	xml_text(f, s->vm.machine);
	fputs("'>hvm</type>\n    <kernel>", f);
	xml_text(f, lv->kernel_path);
	fputs("</kernel>\n    <cmdline>", f);
	xml_text(f, cfg->guest_append);
	fputs("</cmdline>\n  </os>\n"
	      "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n  <on_crash>destroy</on_crash>\n"
	      "  <devices>\n",
	      f);
	if (emulator) {
		fputs("    <emulator>", f);
		xml_text(f, emulator);
		fputs("</emulator>\n", f);
	}
	/* COM1 is the guest's control line; libvirt makes it a pty we reach through virDomainOpenConsole() */
	fputs("    <serial type='pty'><target type='isa-serial' port='0'/></serial>\n"
	      "    <controller type='usb' model='none'/>\n"
	      "    <memballoon model='none'/>\n"
	      "  </devices>\n"
	      "  <qemu:commandline>\n",
	      f);
	for (char **d = devices; *d; d++)
		qemu_arg(f, *d);
	if (s->vm.cpu) {
		qemu_arg(f, "-cpu");
		qemu_arg(f, s->vm.cpu);
	}
	for (size_t i = 0; i < s->vm.n_extra_args; i++)
		qemu_arg(f, s->vm.extra_args[i]);
	fputs("  </qemu:commandline>\n</domain>\n", f);
	if (fclose(f) != 0) {
		free(xml);
		return -ENOMEM;
	}
	*ret = xml;
	return 0;
}

int lv_read_domain_xml(const char *path, char **ret, struct sb_error *err)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f)
		return sb_error_set(err, -errno, "spec.vm.libvirt.xml %s: %s", path, strerror(errno));
	buf = malloc(DOMAIN_XML_MAX + 1);
	if (!buf)
		return sb_error_set(err, -ENOMEM, "out of memory");
	n = fread(buf, 1, DOMAIN_XML_MAX + 1, f);
	if (n > DOMAIN_XML_MAX || n == 0) {
		free(buf);
		return sb_error_set(err, -EFBIG, "spec.vm.libvirt.xml %s: %s", path,
				    n ? "larger than 1 MiB; is it a domain XML?" : "empty");
	}
	buf[n] = '\0';
	*ret = buf;
	return 0;
}
