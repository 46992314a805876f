/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration fragment snapbench ships for a host-VM-ready kernel
 * (docs/kernel-build.md): each option with the value it needs and why a
 * kernel arm needs it. Merged into a base config (the tree's defconfig or
 * the user's --config) before `make olddefconfig`, and checked after it, so
 * an option the tree dropped, renamed or could not enable is named.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct kbuild_option {
	const char *group; /* a heading for the options from here on, or NULL */
	const char *name;  /* without CONFIG_: "KVM_AMD" */
	char value;        /* 'y', 'm' (tristate: y satisfies it too) or 'n' */
	bool check_only;   /* selected by others, not settable: checked, not written */
	const char *why;   /* what a kernel arm uses it for */
	const char *hint;  /* how to get it when olddefconfig left it off, or NULL */
	const char *arch;  /* the one architecture (arch.h's name) it is for, or NULL: every one */
	bool if_known;     /* written always, checked only when the tree knows it (an option newer trees split out) */
};

/* Whether o is for arch (arch.h's name; NULL: x86_64). */
bool kbuild_option_for(const struct kbuild_option *o, const char *arch);

/* The fragment's options of every architecture (kbuild_option_for() picks), in order; *n gets their number. */
const struct kbuild_option *kbuild_fragment(size_t *n);

/* The fragment as a config fragment file, each group and option commented with why (malloc'ed; NULL on ENOMEM). */
char *kbuild_fragment_text(const char *arch);
/* Any list of options so, arch's only: header first, then each group and option commented with why (malloc'ed). */
char *kbuild_options_text(const struct kbuild_option *opts, size_t n, const char *arch, const char *header);

/*
 * base (a .config's text) with the fragment merged in, as
 * scripts/kconfig/merge_config.sh merges: each option of the fragment
 * replaces the base's line for it ("CONFIG_X=..." or "# CONFIG_X is not
 * set") or is appended. *ret is malloc'ed.
 */
int kbuild_fragment_merge(const char *arch, const char *base, char **ret, struct sb_error *err);

/*
 * Checks config (a .config's text after olddefconfig) against the
 * fragment. 0 when every option has its value; else -ENOTSUP with err
 * naming each option that did not (one a line): one the tree does not
 * know at all ("the tree has no option CONFIG_X: dropped or renamed"),
 * or one olddefconfig left off (a dependency is off), with why snapbench
 * needs it and the hint. config_path names the file in the message.
 */
int kbuild_fragment_check(const char *arch, const char *config, const char *config_path, struct sb_error *err);

/*
 * The check of kbuild_fragment_check() for any list of options: set names
 * them in the message ("snapbench's host VM fragment", "the minimal config
 * base").
 */
int kbuild_options_check(const struct kbuild_option *opts, size_t n, const char *arch, const char *set,
			 const char *config, const char *config_path, struct sb_error *err);
