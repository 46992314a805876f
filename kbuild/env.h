/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The environment of a kernel build. Make reads its environment as
 * variables, and the kernel's Makefile takes some that change what it
 * builds from there (KCFLAGS, LLVM, LOCALVERSION, KBUILD_BUILD_*, ...). The
 * programs of a build get a clean environment (spawn.h) plus the variables
 * of kbuild_env_names the user set, which go into the cache key and the
 * record: two builds that differ in them are two entries, and anything
 * else the caller's environment holds (KBUILD_OUTPUT, MAKEFLAGS, ARCH,
 * CC, ...) never reaches make.
 */
#pragma once

/* The variables passed on, NULL-terminated (docs/kernel-build.md lists them with why). */
extern const char *const kbuild_env_names[];

/*
 * env's variables that kbuild_env_names lists, as "NAME=VALUE" sorted by
 * name, into *ret (a strv, NULL when there is none). -ENOMEM.
 */
int kbuild_env_from(char *const *env, char ***ret);
