/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether a kernel's module has a parameter, before a host VM boots it: a
 * parameter the module does not have is ignored by the kernel when the
 * module loads (and by a built-in one on the command line), so an arm's
 * knob module:M.P of a kernel without P would run as the baseline without
 * a word. Read from the module's .modinfo ("parmtype=P:TYPE"): a plain
 * .ko's bytes, a compressed one through modinfo(8) (argv, no shell), a
 * built-in module's from the tree's modules.builtin.modinfo ("M.parmtype=P:TYPE").
 */
#pragma once

#include "error.h"
#include "modules.h"

/*
 * 1: module (its name with '_', "kvm") of m has param; 0: it has not; -ENODATA:
 * this cannot tell (no module file nor modules.builtin.modinfo, no
 * modinfo(8) for a compressed module), err saying why; other -errno with err.
 */
int hostvm_module_has_param(const struct hostvm_modules *m, const char *module, const char *param,
			    struct sb_error *err);
