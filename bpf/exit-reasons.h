/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Names of the kvm_exit reason slots (probes-abi.h, SB_EXIT_*): the names
 * the kernel's kvm_exit tracepoint prints and perf kvm stat shows, from
 * the UAPI headers' SVM_EXIT_REASONS and VMX_EXIT_REASONS, made into
 * report keys (lower case, '_' for spaces: "PF excp" -> "pf_excp").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sb_exit_isa {
	SB_EXIT_ISA_SVM = 0, /* kvm_amd */
	SB_EXIT_ISA_VMX,     /* kvm_intel */
	SB_EXIT_ISA_UNKNOWN, /* another vendor (kvm_pvm): codes by number */
};

/* The exit codes of vendor module ("kvm_amd", "kvm_intel", ...). */
enum sb_exit_isa sb_exit_isa_of_module(const char *module);

/* The vendor's exit code held in slot, or -1 for SB_EXIT_UNKNOWN. */
int64_t sb_exit_slot_code(unsigned slot);

/*
 * The report key of slot (e.g. "npf", "io", "ept_violation", "code_0x7f"
 * for a code the headers do not name, "unknown" for SB_EXIT_UNKNOWN) into
 * buf; returns buf.
 */
const char *sb_exit_slot_name(unsigned slot, enum sb_exit_isa isa, char *buf, size_t len);
