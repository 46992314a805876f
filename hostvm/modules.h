/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel modules a host VM loads from its initramfs, in load order:
 * the drivers that reach the 9p root and the progress port, then KVM.
 * Resolved through the tree's modules.dep (dependencies first) and
 * modules.builtin (built-in ones are skipped); a tree without modules.dep
 * is searched for the files by name and init retries what fails.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct hostvm_module {
	char *name;   /* "kvm_amd" (dashes as underscores) */
	char *path;   /* absolute path of the .ko (or .ko.xz/.zst/.gz) */
};

struct hostvm_modules {
	char *dir;               /* lib/modules/RELEASE */
	size_t n;
	struct hostvm_module *items;
	bool kvm_builtin;        /* kvm is built in (not in items) */
};

/*
 * The modules tree of release: given (must end in /RELEASE or hold that
 * release's modules.dep), else IMAGE_DIR/../lib/modules/RELEASE (a
 * `dpkg -x` of a kernel package), else /lib/modules/RELEASE. NULL with 0
 * when none exists (then everything must be built in).
 */
int hostvm_modules_dir(const char *given, const char *image, const char *release, char **ret, struct sb_error *err);

/* vendor: "amd" or "intel" (which KVM module). dir may be NULL (built-in only). */
int hostvm_modules_resolve(const char *dir, const char *vendor, struct hostvm_modules *ret, struct sb_error *err);
/*
 * One more module, name, with its dependencies (after those already in m,
 * from m->dir): for a host VM that needs more than a benchmark's (a LAVA
 * DUT's overlay root). Built in: nothing to add. Missing: -ENOENT, err
 * saying to build the kernel with why (a config option).
 */
int hostvm_modules_add(struct hostvm_modules *m, const char *name, const char *why, struct sb_error *err);
void hostvm_modules_done(struct hostvm_modules *m);

/* "kvm-amd.ko.xz" -> "kvm_amd" (malloc'ed) */
char *hostvm_module_name(const char *path);
