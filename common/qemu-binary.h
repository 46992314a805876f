/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QEMU a run, a probe or a host VM starts when none is named (a spec's
 * vm.qemu, --qemu), looked up in PATH. Here, not in one of the components,
 * because every launcher (runner/, hostvm/, guest/'s argv) and the help of
 * the programs that take --qemu share it, and common/ is what they all may
 * use.
 */
#pragma once

#define QEMU_DEFAULT_BINARY "qemu-system-x86_64"
