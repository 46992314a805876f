/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ccache under a kernel build (--ccache, docs/kernel-build.md "ccache"):
 * make gets CC="ccache CROSS_COMPILEgcc" and CCACHE_DIR, a directory beside
 * the build cache (CACHE-ccache), and the build reports how many compiles
 * ccache answered, from its statistics before and after make.
 */
#pragma once

#include "error.h"

struct kbuild_ccache_stats {
	unsigned long long hits;   /* direct and preprocessed hits */
	unsigned long long misses; /* compiles ccache ran and stored */
};

/* CACHE-ccache (malloc'ed), or NULL on ENOMEM. */
char *kbuild_ccache_dir(const char *cache);

/* ccache on PATH; else -ENOENT naming Debian's package. */
int kbuild_ccache_check(struct sb_error *err);

/* `ccache --print-stats` of dir (CCACHE_DIR), summed into *ret. */
int kbuild_ccache_stats(const char *dir, struct kbuild_ccache_stats *ret, struct sb_error *err);
