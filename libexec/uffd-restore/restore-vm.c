// SPDX-License-Identifier: GPL-2.0-or-later
/* The restore's guest: one vCPU touching each page of the region once. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "restore-vm.h"

#define LOW_BYTES 0x10000
#define CODE_GPA 0x1000

static int fail(struct vm *vm, const char *what)
{
	int r = -errno;

	snprintf(vm->what, sizeof(vm->what), "%s", what);
	return r;
}

/* mov eax, START; 1: mov ebx, [eax] (or mov [eax], eax); add eax, 4096; cmp eax, END; jb 1b; hlt */
static void write_code(char *p, uint32_t start, uint32_t end, bool write)
{
	static const unsigned char rd[] = { 0x8b, 0x18 }, wr[] = { 0x89, 0x00 };
	size_t i = 0;

	p[i++] = (char)0xb8;
	memcpy(p + i, &start, 4), i += 4;
	memcpy(p + i, write ? wr : rd, 2), i += 2;
	p[i++] = 0x05;
	memcpy(p + i, &(uint32_t){ 4096 }, 4), i += 4;
	p[i++] = 0x3d;
	memcpy(p + i, &end, 4), i += 4;
	p[i++] = 0x72;
	p[i++] = (char)-14; /* back over jb, cmp, add and the touch: 2 + 5 + 5 + 2 */
	p[i++] = (char)0xf4;
}

static void flat_segment(struct kvm_segment *s, uint16_t selector, uint8_t type)
{
	*s = (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = selector, .type = type,
		.present = 1, .dpl = 0, .db = 1, .s = 1, .l = 0, .g = 1,
	};
}

static int vcpu_setup(struct vm *vm)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rip = CODE_GPA, .rflags = 2 };

	if (ioctl(vm->vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return fail(vm, "KVM_GET_SREGS");
	flat_segment(&sregs.cs, 8, 11); /* code: execute/read, accessed */
	flat_segment(&sregs.ds, 16, 3); /* data: read/write, accessed */
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.cr0 = (sregs.cr0 | 1) & ~(1ull << 31); /* protected mode, paging off */
	if (ioctl(vm->vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
		return fail(vm, "KVM_SET_SREGS (32-bit protected mode)");
	if (ioctl(vm->vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return fail(vm, "KVM_SET_REGS");
	return 0;
}

static int add_slot(struct vm *vm, uint32_t slot, uint64_t gpa, void *hva, size_t bytes)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot, .guest_phys_addr = gpa, .memory_size = bytes, .userspace_addr = (uint64_t)(uintptr_t)hva,
	};

	return ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0 ? fail(vm, "KVM_SET_USER_MEMORY_REGION") : 0;
}

int vm_create(struct vm *vm, char *region, size_t region_bytes, bool write)
{
	int r, mmap_size;

	*vm = (struct vm){ .kvm_fd = -1, .vm_fd = -1, .vcpu_fd = -1, .run = MAP_FAILED, .low = MAP_FAILED };
	if ((vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0)
		return fail(vm, "open /dev/kvm");
	if ((vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0)) < 0)
		return fail(vm, "KVM_CREATE_VM");
	vm->low = mmap(NULL, LOW_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (vm->low == MAP_FAILED)
		return fail(vm, "mmap of the code's memory");
	write_code(vm->low + CODE_GPA, (uint32_t)VM_REGION_GPA, (uint32_t)(VM_REGION_GPA + region_bytes), write);
	if ((r = add_slot(vm, 0, 0, vm->low, LOW_BYTES)) < 0 ||
	    (r = add_slot(vm, 1, VM_REGION_GPA, region, region_bytes)) < 0)
		return r;
	if ((vm->vcpu_fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, 0)) < 0)
		return fail(vm, "KVM_CREATE_VCPU");
	if ((mmap_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0)) < 0)
		return fail(vm, "KVM_GET_VCPU_MMAP_SIZE");
	vm->run_size = (size_t)mmap_size;
	vm->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vm->vcpu_fd, 0);
	if (vm->run == MAP_FAILED)
		return fail(vm, "mmap of kvm_run");
	return vcpu_setup(vm);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int vm_run_pass(struct vm *vm, uint64_t *ns)
{
	struct kvm_run *run = vm->run;
	uint64_t t0 = now_ns();

	for (;;) {
		if (ioctl(vm->vcpu_fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			return fail(vm, "KVM_RUN");
		}
		if (run->exit_reason == KVM_EXIT_HLT)
			break;
		snprintf(vm->what, sizeof(vm->what), "KVM_RUN: unexpected exit reason %u (the guest's code only "
			 "touches memory and halts)", run->exit_reason);
		return -EPROTO;
	}
	*ns = now_ns() - t0;
	return 0;
}

void vm_destroy(struct vm *vm)
{
	if (vm->run != MAP_FAILED)
		munmap(vm->run, vm->run_size);
	if (vm->low != MAP_FAILED)
		munmap(vm->low, LOW_BYTES);
	if (vm->vcpu_fd >= 0)
		close(vm->vcpu_fd);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
}
