/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration a kernel arm's build starts from (docs/kernel-build.md
 * "The config base"): "minimal", `make allnoconfig` with what a host VM
 * needs to boot and serve snapbench forced in through KCONFIG_ALLCONFIG
 * (its machine, console, binaries, and the options its init and QEMU take
 * for granted), about a third of defconfig's objects; or "defconfig", the
 * tree's own. Either gets the fragment (fragment.h) merged in afterwards;
 * the minimal base's options are checked after olddefconfig like the
 * fragment's.
 */
#pragma once

#include <stddef.h>

#include "error.h"
#include "fragment.h"

enum kbuild_config_base {
	KBUILD_BASE_MINIMAL,   /* allnoconfig + the host VM's base options + the fragment */
	KBUILD_BASE_DEFCONFIG, /* the tree's defconfig + the fragment */
};

/* "minimal" or "defconfig"; -EINVAL with err naming name and the choices. */
int kbuild_config_base_parse(const char *name, enum kbuild_config_base *ret, struct sb_error *err);
const char *kbuild_config_base_name(enum kbuild_config_base base);

/* The minimal base's options of every architecture (kbuild_option_for() picks), in order; *n gets their number. */
const struct kbuild_option *kbuild_config_base_options(size_t *n);

/* arch's (arch.h's name; NULL: x86_64) in what follows. The minimal base's options described as `snapbench kernel fragment` describes the fragment's (malloc'ed). */
char *kbuild_config_base_describe(const char *arch);

/*
 * The KCONFIG_ALLCONFIG file for `make allnoconfig`: the minimal base's
 * options and the fragment's, so allnoconfig leaves on what they need
 * (malloc'ed; NULL on ENOMEM). It also goes into the cache key.
 */
char *kbuild_config_base_text(const char *arch);

/* config (after olddefconfig) against the minimal base's options, as kbuild_fragment_check() does the fragment's. */
int kbuild_config_base_check(const char *arch, const char *config, const char *config_path, struct sb_error *err);
