// SPDX-License-Identifier: GPL-2.0-or-later
#include "selfvm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

#define HUGE_2M (2u << 20)

void self_vm_create(struct self_vm *v, size_t size)
{
	struct kvm_userspace_memory_region slot = { 0 };
	char *raw;

	CHECK(size && size % HUGE_2M == 0);
	v->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (v->kvm_fd < 0)
		SKIP_TEST("/dev/kvm (%s)", strerror(errno));
	v->vm_fd = ioctl(v->kvm_fd, KVM_CREATE_VM, 0);
	CHECK_MSG(v->vm_fd >= 0, "KVM_CREATE_VM: %s", strerror(errno));

	/* over-allocate to align to 2 MiB, then trim */
	raw = mmap(NULL, size + HUGE_2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(raw != MAP_FAILED);
	v->mem = (char *)(((unsigned long)raw + HUGE_2M - 1) & ~(unsigned long)(HUGE_2M - 1));
	if (v->mem > raw)
		CHECK(munmap(raw, (size_t)(v->mem - raw)) == 0);
	CHECK(munmap(v->mem + size, (size_t)(raw + HUGE_2M - v->mem)) == 0);
	v->size = size;
	/* small pages: one invalidation per call, no THP splits in between */
	CHECK(madvise(v->mem, size, MADV_NOHUGEPAGE) == 0);
	memset(v->mem, 0x5a, size);

	slot.slot = 0;
	slot.guest_phys_addr = 0;
	slot.memory_size = size;
	slot.userspace_addr = (unsigned long)v->mem;
	CHECK_MSG(ioctl(v->vm_fd, KVM_SET_USER_MEMORY_REGION, &slot) == 0, "KVM_SET_USER_MEMORY_REGION: %s",
		  strerror(errno));
}

void self_vm_destroy(struct self_vm *v)
{
	if (v->vm_fd >= 0)
		close(v->vm_fd);
	if (v->kvm_fd >= 0)
		close(v->kvm_fd);
	if (v->mem)
		munmap(v->mem, v->size);
	v->vm_fd = v->kvm_fd = -1;
	v->mem = NULL;
}
