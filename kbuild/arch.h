/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The architectures a kernel arm's kernel is built for (docs/kernel-build.md
 * "Architectures"): what make is told (ARCH=, CROSS_COMPILE=), the image it
 * makes and where, and the Debian package of the cross compiler when the
 * build is a cross build.
 */
#pragma once

#include "error.h"

struct kbuild_arch {
	const char *name;          /* --arch: "x86_64", "riscv64" */
	const char *make_arch;     /* make ARCH=: "x86_64", "riscv" */
	const char *srcarch;       /* the tree's arch/ directory: "x86", "riscv" */
	const char *cross_compile; /* make CROSS_COMPILE= (a prefix), or NULL: the host's compiler */
	const char *cross_package; /* the Debian package that has CROSS_COMPILE's gcc, or NULL */
	const char *image_target;  /* make's target for the boot image: "bzImage", "Image" */
	const char *image_path;    /* where make puts it, in the tree: "arch/x86/boot/bzImage" */
};

/* The default architecture, x86_64. */
const struct kbuild_arch *kbuild_arch_default(void);

/* The architecture named name; -EINVAL with err naming it and the ones there are. */
int kbuild_arch_find(const char *name, const struct kbuild_arch **ret, struct sb_error *err);

/*
 * What a build for arch needs before any work: tree's arch/SRCARCH/Kconfig
 * (-EINVAL naming the tree) and the cross compiler on PATH (-ENOENT naming
 * the program and the package that has it).
 */
int kbuild_arch_check(const struct kbuild_arch *arch, const char *tree, struct sb_error *err);
