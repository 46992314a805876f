/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where the run engine finds its files: a binary of a meson build tree
 * uses that build's files (the guest image, the Linux guests' probe), an
 * installed one PKGDATADIR's and LIBEXECDIR's. A unit of its own so that
 * the parts of the engine that look for a file (the Linux guest's
 * workload) need not call back into runner.c.
 */
#pragma once

#include "error.h"

/*
 * The micro guest image: $SNAPBENCH_GUEST_IMAGE; else guest/snapbench-guest.elf
 * next to the running binary's build tree (a binary in BUILD/cli/ or
 * BUILD/tests/X/ finds BUILD/guest/); else the installed PKGDATADIR copy.
 * *ret is malloc'ed.
 */
int runner_find_guest_image(char **ret, struct sb_error *err);

/*
 * When the running binary sits in a meson build tree (BUILD/cli/, BUILD/tests/X/),
 * BUILD/relpath if it is readable: returns 1 with *ret malloc'ed; 0 when not in
 * a build tree or the file is not there.
 */
int runner_find_in_build_tree(const char *relpath, char **ret, struct sb_error *err);

/* The default results directory: /var/lib/snapbench/runs for root, else ./snapbench-runs. */
const char *runner_default_results_dir(void);
