/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A copy of a built tree made to look built where it now is. The kernel's
 * own objects name their sources relative to the tree, but the host tools
 * it builds first (objtool, resolve_btfids, under tools/) record absolute
 * paths in their .cmd and .d files: in a copy, make finds no command for
 * the new paths and rebuilds them, and every object of the kernel depends
 * on objtool's binary (scripts/Makefile.lib's cmd_gen_objtooldep), so a
 * patched build from its base's objects recompiled everything.
 */
#pragma once

#include "error.h"

/*
 * In tree/tools, every .*.cmd and .*.d file naming old (the tree copied
 * from, as an absolute path) gets tree's absolute path instead; the files
 * keep their times. *n (may be NULL) gets how many files changed.
 */
int kbuild_relocate_tools(const char *tree, const char *old, unsigned *n, struct sb_error *err);
