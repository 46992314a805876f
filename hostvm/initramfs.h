/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host VM's initramfs (docs/kernel-arms.md): snapbench-hostvm-init as
 * /init, the kernel modules it loads (modules/NN-NAME.ko...), and
 * /hostvm.conf, which tells the init what to do
 * (libexec/hostvm-init/init.c lists its directives). The callers say what
 * the VM runs; this writes the cpio.
 */
#pragma once

#include "error.h"
#include "modules.h"

/*
 * Writes the initramfs to path: init_path as /init, each of mods (in order)
 * with a "module" line carrying params[i] (params may be NULL, an entry NULL
 * or "" for none), then directives, the rest of hostvm.conf (lines ending in
 * '\n'). 0, or a negative errno with err naming the file.
 */
int hostvm_initramfs_write(const char *path, const char *init_path, const struct hostvm_modules *mods,
			   const char *const *params, const char *directives, struct sb_error *err);

/* A file of this host packed into the initramfs as name ("bin/selftest"; its directories are made), mode 0755. */
struct hostvm_initramfs_file {
	const char *name;
	const char *path;
};

/*
 * As hostvm_initramfs_write(), with files besides: a host VM whose root is
 * the initramfs itself (the init's noroot: a riscv64 host VM, whose
 * programs this host's / cannot serve).
 */
int hostvm_initramfs_write_files(const char *path, const char *init_path, const struct hostvm_modules *mods,
				 const char *const *params, const char *directives,
				 const struct hostvm_initramfs_file *files, size_t n_files, struct sb_error *err);
