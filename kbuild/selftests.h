/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * KVM selftests built with a kernel (docs/kernel-build.md "KVM selftests"):
 * the programs of the tree's tools/testing/selftests/kvm a build is asked
 * for (--selftests NAME[,NAME]), checked against what the tree offers for
 * the build's architecture (its Makefile's TEST_GEN_PROGS, asked of make
 * itself), built statically with the build's compiler after `make headers`,
 * and installed beside the modules: lib/modules/RELEASE/kselftests/kvm/NAME.
 */
#pragma once

#include "arch.h"
#include "error.h"
#include "spawn.h"

/* The subdirectory of lib/modules/RELEASE that gets the programs. */
#define KBUILD_SELFTESTS_DIR "kselftests/kvm"

/*
 * "a,b" into *ret (a NULL-terminated list, malloc'ed): each name letters,
 * digits, '_', '-' and one '/' at most (riscv/ebreak_test), no duplicates;
 * -EINVAL with err naming the bad one.
 */
int kbuild_selftests_parse(const char *arg, char ***ret, struct sb_error *err);

/* What a selftests step needs from its caller: where make's output goes. */
struct kbuild_selftests_io {
	int log_fd;             /* make's output; -1: dropped */
	kbuild_line_fn on_line; /* each line make prints, or NULL */
	void *userdata;
	char *const *env;       /* the build's keyed environment (env.h), or NULL */
};

/*
 * The programs tree's kvm selftests offer for arch (relative to their
 * directory: "dirty_log_perf_test", "riscv/ebreak_test"), asked of make with
 * OUTPUT=scratch (a directory make may fill with empty subdirectories).
 * -EINVAL when the tree has no tools/testing/selftests/kvm.
 */
int kbuild_selftests_offered(const struct kbuild_arch *arch, const char *tree, const char *scratch,
			     const struct kbuild_selftests_io *io, char ***ret, struct sb_error *err);

/*
 * 0 when every name of wanted is offered (by its path or, when that is
 * unambiguous, its last component); else -EINVAL naming each one the tree
 * does not offer for arch, and whether another architecture's list has it.
 */
int kbuild_selftests_check(const struct kbuild_arch *arch, const char *tree, char *const *wanted,
			   char *const *offered, struct sb_error *err);

/*
 * Builds wanted (checked) in tree for arch, statically linked, into
 * tree/.snapbench-selftests, and copies them into dest (created).
 * -EIO naming the step when make fails.
 */
int kbuild_selftests_build(const struct kbuild_arch *arch, const char *tree, char *const *wanted,
			   char *const *offered, unsigned jobs, const char *dest, const struct kbuild_selftests_io *io,
			   struct sb_error *err);
