/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Checks before a run changes anything, each failure with its fix (whether
 * /dev/kvm opens is placement.h's to decide, before these): userfaultfd for the user QEMU runs as; a QEMU with KVM,
 * query-stats and background-snapshot; BPF permitted; free space for the
 * snapshot file; the guest image; the QEMU user; hugetlb pages.
 */
#pragma once

#include "error.h"
#include "host.h"
#include "spec.h"

struct preflight_input {
	const struct run_spec *spec;
	const char *run_dir;        /* where a kept snapshot file goes */
	const char *scratch_dir;    /* where one that is not kept goes; NULL: run_dir */
	const char *qemu_binary;
	const char *guest_image;
	bool tcg;                   /* the guest runs under TCG (placement.h): no KVM, no BPF probes */
	bool host_vm;               /* it runs in host VMs: checks for this host's side only (the spec as run, QEMU, memory) */
	int refused;                /* < 0: placement refused the run (placement.h), refused_msg says why */
	const char *refused_msg;
};

/*
 * Runs every check. On success qemu (if not NULL) describes the QEMU found.
 * On failure err lists every failed check, one per line ("\n"-separated,
 * no newline at the end), each naming the input and the fix; the return
 * value is the first failure's errno.
 */
int preflight_run(const struct preflight_input *in, struct qemu_info *qemu, struct sb_error *err);

/* Free bytes at path for an unprivileged writer... or root (statvfs f_bavail). */
int preflight_free_bytes(const char *path, unsigned long long *ret);

/* The margin added to the guest's RAM for the snapshot file (device state, headers). */
#define PREFLIGHT_SINK_MARGIN (64ull << 20)
