// SPDX-License-Identifier: GPL-2.0-or-later
/* Where a run's guest runs: this host's KVM, TCG here, or host VMs (placement.h). */
#include "placement.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"

bool placement_kvm_usable(int *why)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		if (why)
			*why = errno;
		return false;
	}
	close(fd);
	return true;
}

static void rooted(const char *sysroot, const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", sysroot && strcmp(sysroot, "/") ? sysroot : "", path);
}

int placement_kernel_auto(const char *sysroot, char **image, char *how, size_t how_len, struct sb_error *err)
{
	const char *env = getenv(PLACEMENT_KERNEL_CACHE_ENV);
	const char *cache = env && *env ? env : PLACEMENT_KERNEL_CACHE_DEFAULT;
	char path[PATH_MAX], mods[PATH_MAX], resolved[PATH_MAX], rel[PATH_MAX];
	struct utsname u;
	struct stat st;

	/* what scripts/fetch-test-kernel unpacked last: current -> RELEASE, RELEASE/boot/vmlinuz -> vmlinuz-RELEASE */
	snprintf(rel, sizeof(rel), "%s/current/boot/vmlinuz", cache);
	rooted(sysroot, rel, path, sizeof(path));
	if (access(path, R_OK) == 0 && realpath(path, resolved)) {
		const char *base = strrchr(resolved, '/');
		snprintf(how, how_len, "Debian's %s from snapbench's kernel cache %s",
			 base && !strncmp(base + 1, "vmlinuz-", 8) ? base + 9 : "kernel", cache);
		*image = strdup(resolved);
		return *image ? 0 : sb_error_set(err, -ENOMEM, "out of memory");
	}
	/* this host's own kernel, where its image is readable and its modules are beside it */
	if (uname(&u) == 0) {
		snprintf(rel, sizeof(rel), "/boot/vmlinuz-%s", u.release);
		rooted(sysroot, rel, path, sizeof(path));
		snprintf(rel, sizeof(rel), "/lib/modules/%s/modules.dep", u.release);
		rooted(sysroot, rel, mods, sizeof(mods));
		if (access(path, R_OK) == 0 && stat(mods, &st) == 0) {
			snprintf(how, how_len, "this host's own kernel %s", u.release);
			*image = strdup(path);
			return *image ? 0 : sb_error_set(err, -ENOMEM, "out of memory");
		}
	}
	return sb_error_set(err, -ENOENT,
			    "host_vm.kernel auto: no kernel for a host VM: %s/current/boot/vmlinuz does not exist (fetch Debian's "
			    "packaged kernel into it, as root: scripts/fetch-test-kernel of snapbench's source, installed as "
			    LIBEXECDIR "/snapbench-fetch-kernel) and this host's own /boot/vmlinuz-%s with its modules is not "
			    "readable; or name a bzImage (--kernel PATH)",
			    cache, uname(&u) == 0 ? u.release : "RELEASE");
}

static _printf_(3, 4) int refuse(struct placement *p, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
	p->refused = code < 0 ? code : -EINVAL;
	return 0;
}

static bool is_auto(const char *kernel)
{
	return kernel && !strcmp(kernel, "auto");
}

static bool spec_has_auto_kernel(const struct run_spec *spec)
{
	for (size_t a = 0; a < spec->n_arms; a++)
		if (is_auto(spec_arm_kernel(spec, a)))
			return true;
	return false;
}

int placement_decide(const struct run_spec *spec, const char *sysroot, struct placement *p, struct sb_error *err)
{
	const char *accel = spec->vm.accel;
	int why = 0, k;

	*p = (struct placement){};
	if (spec_uses_host_vm(spec)) {
		snprintf(p->accel, sizeof(p->accel), "kvm");
		p->host_vm = true;
		if (spec_has_auto_kernel(spec)) {
			struct sb_error e = {};
			k = placement_kernel_auto(sysroot, &p->kernel, p->kernel_how, sizeof(p->kernel_how), &e);
			if (k == -ENOMEM)
				return sb_error_set(err, k, "out of memory");
			if (k < 0)
				return refuse(p, k, "%s", e.msg);
		}
		snprintf(p->reason, sizeof(p->reason), "kernel arms: each repetition runs in a host VM booting its arm's kernel%s%s",
			 p->kernel ? " (auto: " : "", p->kernel ? p->kernel_how : "");
		if (p->kernel)
			strncat(p->reason, ")", sizeof(p->reason) - strlen(p->reason) - 1);
		return 0;
	}
	if (!strcmp(accel, "tcg")) {
		snprintf(p->accel, sizeof(p->accel), "tcg");
		snprintf(p->reason, sizeof(p->reason),
			 "vm.accel tcg: the guest runs under QEMU's TCG on this host (no KVM counters; times are emulated)");
		return 0;
	}
	if (placement_kvm_usable(&why)) {
		snprintf(p->accel, sizeof(p->accel), "kvm");
		snprintf(p->reason, sizeof(p->reason), "the guest runs under this host's KVM");
		return 0;
	}
	if (!strcmp(accel, "auto")) {
		snprintf(p->accel, sizeof(p->accel), "tcg");
		snprintf(p->reason, sizeof(p->reason),
			 "vm.accel auto: /dev/kvm: %s, so the guest runs under QEMU's TCG on this host (no KVM counters; times are emulated)",
			 strerror(why));
		return 0;
	}

	/* vm.accel kvm and no KVM here */
	char kvm_msg[256];
	if (why == ENOENT)
		snprintf(kvm_msg, sizeof(kvm_msg),
			 "/dev/kvm does not exist: load KVM (modprobe kvm_amd or kvm_intel) or enable nested virtualization for this VM");
	else
		snprintf(kvm_msg, sizeof(kvm_msg),
			 "/dev/kvm: %s for uid %u: run as root, or give the user access (scripts/host-setup makes it root:kvm 0660 and the user joins group kvm)",
			 strerror(why), (unsigned)geteuid());
	snprintf(p->accel, sizeof(p->accel), "kvm");
	snprintf(p->reason, sizeof(p->reason), "the guest would run under this host's KVM, which is missing");
	if (!spec->host_vm.fallback)
		return refuse(p, -(why ? why : ENODEV),
				    "%s; or let the run go into a host VM (drop --no-host-vm, spec.host_vm.fallback), or run the guest under TCG here (--accel tcg)",
				    kvm_msg);
	if (spec->vm.backend != SPEC_BACKEND_QEMU || spec->guest.kind != SPEC_GUEST_MICRO)
		return refuse(p, -(why ? why : ENODEV),
				    "%s; a host VM could take the run only with the qemu backend and the micro guest (this spec has %s)",
				    kvm_msg, spec->vm.backend != SPEC_BACKEND_QEMU ? "vm.backend libvirt" : "guest.kind linux");
	struct sb_error e = {};
	k = placement_kernel_auto(sysroot, &p->kernel, p->kernel_how, sizeof(p->kernel_how), &e);
	if (k == -ENOMEM)
		return sb_error_set(err, k, "out of memory");
	if (k < 0)
		return refuse(p, k, "%s, so the run would go into a host VM, but %s", kvm_msg, e.msg);
	p->host_vm = p->fell_back = true;
	snprintf(p->reason, sizeof(p->reason),
		 "this host has no usable /dev/kvm (%s): the run goes into a host VM booting %s, whose own KVM runs the guest (--no-host-vm refuses instead)",
		 strerror(why), p->kernel_how);
	return 0;
}

void placement_done(struct placement *p)
{
	free(p->kernel);
	p->kernel = NULL;
}
