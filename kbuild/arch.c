// SPDX-License-Identifier: GPL-2.0-or-later
#include "arch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "spawn-program.h"

static const struct kbuild_arch arches[] = {
	/* ARCH=x86_64, not the x86 make defaults to: allnoconfig then makes a 64-bit kernel */
	{ "x86_64", "x86_64", "x86", NULL, NULL, "bzImage", "arch/x86/boot/bzImage" },
	/* Debian's cross compiler; the Image boots under OpenSBI (QEMU's -M virt -bios default) */
	{ "riscv64", "riscv", "riscv", "riscv64-linux-gnu-", "gcc-riscv64-linux-gnu", "Image", "arch/riscv/boot/Image" },
};

const struct kbuild_arch *kbuild_arch_default(void)
{
	return &arches[0];
}

int kbuild_arch_find(const char *name, const struct kbuild_arch **ret, struct sb_error *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++)
		if (!strcmp(arches[i].name, name)) {
			*ret = &arches[i];
			return 0;
		}
	return sb_error_set(err, -EINVAL, "--arch '%s': give x86_64 (the default) or riscv64", name);
}

int kbuild_arch_check(const struct kbuild_arch *arch, const char *tree, struct sb_error *err)
{
	_cleanup_free_ char *kconfig = NULL, *gcc = NULL, *found = NULL;
	int r;

	if (asprintf(&kconfig, "%s/arch/%s/Kconfig", tree, arch->srcarch) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	if (access(kconfig, R_OK) < 0)
		return sb_error_set(err, -EINVAL, "kernel tree %s has no arch/%s/Kconfig: it cannot be built for %s",
				    tree, arch->srcarch, arch->name);
	if (!arch->cross_compile)
		return 0;
	if (asprintf(&gcc, "%sgcc", arch->cross_compile) < 0)
		return sb_error_set(err, -ENOMEM, "out of memory");
	r = spawn_find_program(gcc, &found);
	if (r == -ENOMEM)
		return sb_error_set(err, r, "out of memory");
	if (r < 0)
		return sb_error_set(err, -ENOENT, "--arch %s builds with the cross compiler %s, which is not installed: "
				    "install Debian's package %s (scripts/install-deps does)", arch->name, gcc,
				    arch->cross_package);
	return 0;
}
