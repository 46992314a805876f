// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The VM backend interface (vm.h): the dispatch to the backend a spec
 * names. What the backends share is in vm-process.c.
 */
#include "vm.h"

#include <errno.h>
#include <stddef.h>

#include "vm-libvirt.h"
#include "vm-qemu.h"

/* defined where runner_dep is linked, absent in snapbench-hostvm-run (runner/meson.build) */
#pragma weak vm_backend_libvirt

bool vm_libvirt_linked(void)
{
	return &vm_backend_libvirt != NULL;
}

int vm_start(const struct vm_config *cfg, struct vm **ret, struct sb_error *err)
{
	if (cfg->spec->vm.backend == SPEC_BACKEND_LIBVIRT) {
		if (!vm_libvirt_linked())
			return sb_error_set(err, -EOPNOTSUPP, VM_NO_LIBVIRT_MSG, program_invocation_short_name);
		return vm_backend_libvirt.start(cfg, ret, err);
	}
	return vm_backend_qemu.start(cfg, ret, err);
}

bool vm_exited(struct vm *vm, char *desc, size_t len)
{
	return vm->backend->exited(vm, desc, len);
}

void vm_exit_summary(const struct vm *vm, char *buf, size_t len)
{
	vm->backend->exit_summary(vm, buf, len);
}

int vm_stop(struct vm *vm, int timeout_ms, struct sb_error *err)
{
	return vm->backend->stop(vm, timeout_ms, err);
}

void vm_kill(struct vm *vm)
{
	vm->backend->kill(vm);
}

void vm_free(struct vm *vm)
{
	if (vm)
		vm->backend->free(vm);
}
