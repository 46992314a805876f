/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The user's kernel tree: what makes a directory one, what identifies its
 * content for the cache (its git commit when the work tree is clean, else
 * a hash of its files), and its copy into a scratch directory, where
 * patches and the build happen; the user's tree is only read.
 */
#pragma once

#include <stdbool.h>

#include "error.h"

/*
 * Whether dir is the top of an x86 Linux tree: a Makefile (a regular file:
 * never waits on a FIFO) with numeric VERSION and PATCHLEVEL, Kconfig and
 * arch/x86/Kconfig. -ENOTDIR or -EINVAL with err naming dir and what it
 * lacks, -EACCES when it cannot be read (named as a permission error). *version (may be NULL) gets "6.12.95" from
 * the Makefile (malloc'ed).
 */
int kbuild_tree_check(const char *dir, char **version, struct sb_error *err);

struct kbuild_tree_id {
	char *id;        /* "git:COMMIT" or "sha256:HEX" */
	char *note;      /* why a git tree is hashed rather than named by its commit, or NULL */
};

void kbuild_tree_id_done(struct kbuild_tree_id *t);

/*
 * The tree's identity: "git:COMMIT" when dir is a git work tree whose
 * status shows no change and no untracked file, else "sha256:HEX" over
 * every file's path, mode (executable or not), and content (a symlink's
 * target), sorted, without the top-level .git.
 */
int kbuild_tree_identify(const char *dir, struct kbuild_tree_id *ret, struct sb_error *err);

/*
 * The content hash alone (what kbuild_tree_identify() falls back to):
 * "sha256:HEX" over dir's files as described there.
 */
int kbuild_tree_hash(const char *dir, char **ret, struct sb_error *err);

/*
 * Copies src's entries (but a top-level .git) into dst, which must exist,
 * with `cp -a` (modes, times, symlinks kept: make then rebuilds only what is
 * newer than its objects). log_fd gets cp's output.
 */
int kbuild_tree_copy(const char *src, const char *dst, int log_fd, struct sb_error *err);
