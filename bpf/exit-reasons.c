// SPDX-License-Identifier: GPL-2.0-or-later
#include "exit-reasons.h"

#include <asm/kvm.h> /* the exception vectors SVM_EXIT_REASONS names exits by */
#include <asm/svm.h>
#include <asm/vmx.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "probes-abi.h"

struct exit_name {
	int64_t code;
	const char *name;
};

static const struct exit_name svm_names[] = { SVM_EXIT_REASONS };
static const struct exit_name vmx_names[] = { VMX_EXIT_REASONS };

enum sb_exit_isa sb_exit_isa_of_module(const char *module)
{
	return !strcmp(module, "kvm_amd") ? SB_EXIT_ISA_SVM : !strcmp(module, "kvm_intel") ? SB_EXIT_ISA_VMX : SB_EXIT_ISA_UNKNOWN;
}

int64_t sb_exit_slot_code(unsigned slot)
{
	if (slot < SB_EXIT_LOW)
		return slot;
	if (slot < SB_EXIT_LOW + SB_EXIT_HIGH_SLOTS)
		return SB_EXIT_SVM_HIGH + (slot - SB_EXIT_LOW);
	if (slot == SB_EXIT_SVM_ERR)
		return (uint32_t)SVM_EXIT_ERR;
	return -1;
}

const char *sb_exit_slot_name(unsigned slot, enum sb_exit_isa isa, char *buf, size_t len)
{
	const struct exit_name *t = isa == SB_EXIT_ISA_SVM ? svm_names : vmx_names;
	size_t n = isa == SB_EXIT_ISA_SVM ? ARRAY_SIZE(svm_names) : isa == SB_EXIT_ISA_VMX ? ARRAY_SIZE(vmx_names) : 0;
	int64_t code = sb_exit_slot_code(slot);

	if (code < 0) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	for (size_t i = 0; i < n; i++) {
		if ((uint32_t)t[i].code != (uint32_t)code)
			continue;
		size_t j = 0;
		for (const char *p = t[i].name; *p && j + 1 < len; p++)
			buf[j++] = *p == ' ' ? '_' : (char)tolower((unsigned char)*p);
		buf[j] = '\0';
		return buf;
	}
	snprintf(buf, len, "code_0x%llx", (unsigned long long)code);
	return buf;
}
