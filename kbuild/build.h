/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host-VM-ready kernel built from a source tree and patches
 * (docs/kernel-build.md): the tree copied into a scratch directory of the
 * cache, the patches applied there, a config base (config-base.h: minimal,
 * the tree's defconfig, or the user's config) with snapbench's fragment (fragment.h) through `make
 * olddefconfig` and checked, `make -jN bzImage modules`, the modules
 * installed. The result lives in CACHE/KEY/out, KEY a hash of the tree's
 * identity, the patches' SHA-256s, the config's and the environment make
 * gets (env.h); a second build of the
 * same key is a cache hit. A patched build starts from the objects of the
 * same tree's unpatched build when the cache has them, so make rebuilds
 * only what the patches touch.
 *
 * CACHE/KEY/
 *   build.log          every step's command and output (kept)
 *   state              how far tree/ got ("configured KEY", "... from BASE" when
 *                      it started from BASE's objects), written by this
 *                      entry's own steps, after each; never inside tree/, so a
 *                      copy of another entry's tree brings none
 *   tree/              the scratch copy; kept for an unpatched build (the
 *                      objects a patched build starts from), removed after a
 *                      patched one
 *   out/boot/vmlinuz-RELEASE, config-RELEASE, System.map-RELEASE, vmlinux-RELEASE
 *   out/lib/modules/RELEASE/
 *   out/kbuild.json    what was built from what, and the steps' times
 */
#pragma once

#include <stdbool.h>

#include "arch.h"
#include "config-base.h"
#include "error.h"
#include "spawn.h"

struct kbuild_request {
	const char *tree;          /* the user's tree: only read */
	char *const *patches;      /* applied in order with patch -p1; NULL: none */
	const char *config;        /* a base .config instead of base; NULL: base */
	enum kbuild_config_base base; /* minimal (the default: 0) or defconfig, when config is NULL */
	const struct kbuild_arch *arch; /* arch.h; NULL: x86_64 */
	char *const *selftests;    /* KVM selftests to build and install with the modules (selftests.h); NULL: none */
	bool ccache;               /* compile through ccache, its directory CACHE-ccache (ccache.h) */
	const char *cache;         /* the cache directory */
	char *const *env;          /* "NAME=VALUE" given to the build's programs and keyed: kbuild_env_from() (env.h); NULL: none */
	unsigned jobs;             /* make -jN; 0: the online CPUs */
	bool rebuild;              /* build even when the cache holds the result */
	bool keep_tree;            /* keep a patched build's scratch tree too */
};

/* Where a build is: a step begins (step), its program prints a line (line). */
struct kbuild_progress {
	void (*step)(void *userdata, const char *step);
	kbuild_line_fn line;
	void *userdata;
};

struct kbuild_times {
	double identify_s, copy_s, patch_s, config_s, make_s, install_s, total_s;
};

struct kbuild_result {
	const char *arch;       /* the architecture's name (arch.h), static */
	char *key;              /* the cache key (hex) */
	char *dir;              /* CACHE/KEY */
	char *release;          /* make kernelrelease */
	char *image;            /* out/boot/vmlinuz-RELEASE: --arm LABEL:kernel= */
	char *modules;          /* out/lib/modules/RELEASE: --arm ...,modules= */
	char *selftests;        /* out/lib/modules/RELEASE/kselftests/kvm when selftests were asked for, else NULL */
	char *vmlinux;          /* out/boot/vmlinux-RELEASE */
	char *config;           /* out/boot/config-RELEASE */
	char *log;              /* CACHE/KEY/build.log */
	char *record;           /* out/kbuild.json */
	char *tree_id;          /* "git:COMMIT" or "sha256:HEX" */
	char *incremental_from; /* the key whose objects the build started from, or NULL */
	bool cached;            /* the cache held it: nothing was built */
	bool ccache;            /* make ran through ccache: its hits and misses during make follow */
	unsigned long long ccache_hits, ccache_misses;
	struct kbuild_times times;
};

void kbuild_result_done(struct kbuild_result *r);

/*
 * Builds req (or finds it in the cache). Returns 0, or a negative errno
 * with err naming the input or the step at fault: -ENOTDIR or -EINVAL for
 * a tree that is not a kernel tree or a patch or config that cannot be
 * read, -ENOENT for a program of the build that is not installed, -EBADMSG for a patch that does not apply (its messages),
 * -ENOTSUP for fragment options olddefconfig left off (fragment.h), -EIO
 * for a step that failed (its command, exit status, last lines and the
 * log's path). A failed build's tree and log stay in CACHE/KEY.
 */
int kbuild_build(const struct kbuild_request *req, const struct kbuild_progress *progress, struct kbuild_result *ret,
		 struct sb_error *err);

/*
 * The configuration req would build, checked, written to out_path: the
 * copy, the patches and the config steps of kbuild_build() in a scratch
 * directory of the cache, CACHE/config-XXXXXX, locked while it is used and
 * removed afterwards (a failure's stays for its log, until the next
 * config). Each config first removes the CACHE/config-XXXXXX entries no
 * running config holds locked: those an interrupted one left.
 */
int kbuild_config(const struct kbuild_request *req, const struct kbuild_progress *progress, const char *out_path,
		  struct sb_error *err);

/*
 * The cache key of req and of the same tree and config without patches
 * (base_key, the build whose objects a patched build starts from), 20 hex
 * digits each, from the tree's identity (tree.h), each patch's SHA-256 in
 * order, the base config (minimal with its options' SHA-256, defconfig, or
 * the file's SHA-256), the fragment's, and req->env's variables (none: no
 * line, so a key without them is what it was before they were keyed).
 * Every input that changes what is built goes here. Reads the patches and
 * config; *tree_id (may be NULL) gets the
 * tree's identity.
 */
int kbuild_key(const struct kbuild_request *req, const char *tree_id, char **key, char **base_key, struct sb_error *err);

/* Copies a built result's boot/ and lib/ into dir (created; must be empty or absent) with cp -a. */
int kbuild_export(const struct kbuild_result *r, const char *dir, struct sb_error *err);
