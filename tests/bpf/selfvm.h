/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * For tests: a KVM VM created in the calling process with plain ioctls
 * (KVM_CREATE_VM, one memslot over anonymous memory). Creating the VM
 * registers KVM's MMU notifier on the process's mm, so every invalidation
 * of that mm fires kvm:kvm_unmap_hva_range in the process's own context:
 * the test drives mprotect, madvise, munmap and userfaultfd on demand and
 * knows exactly which syscall caused each event. No vCPU ever runs.
 *
 * Without /dev/kvm the test exits 77 (skip) naming it.
 */
#pragma once

#include <stddef.h>

struct self_vm {
	int kvm_fd;
	int vm_fd;
	char *mem;   /* the memslot's memory, size bytes, 2 MiB aligned, touched */
	size_t size;
};

/* Creates the VM and a memslot of size bytes (a multiple of 2 MiB), THP off for it. */
void self_vm_create(struct self_vm *v, size_t size);
void self_vm_destroy(struct self_vm *v);
