/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The restore's guest: a KVM VM of one vCPU in 32-bit flat protected mode,
 * paging off (guest physical = linear), whose code touches each 4 KiB page
 * of the region once, in address order, then halts. Every first touch is a
 * TDP fault of KVM's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VM_REGION_GPA 0x40000000ull             /* 1 GiB: the region, below 4 GiB for 32-bit addresses */
#define VM_REGION_MAX (2ull << 30)             /* ends at 3 GiB at most */

struct vm {
	int kvm_fd, vm_fd, vcpu_fd;
	void *run;         /* the vCPU's struct kvm_run */
	size_t run_size;
	char *low;         /* guest physical 0 to 64 KiB: the code */
	char what[160];    /* the call that failed */
};

/* Creates the VM with region (region_bytes, a multiple of 4 KiB) at VM_REGION_GPA; write: the guest
 * writes each page (its first 4 bytes) instead of reading it. 0 or a negative errno (vm->what says). */
int vm_create(struct vm *vm, char *region, size_t region_bytes, bool write);
/* Runs the vCPU until its halt; *ns the wall time from entry to halt. 0 or a negative errno (vm->what). */
int vm_run_pass(struct vm *vm, uint64_t *ns);
void vm_destroy(struct vm *vm);
