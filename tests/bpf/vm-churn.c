// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper: a process that holds its own KVM VM (tests/bpf/selfvm.h) and
 * makes invalidations of a known cause on demand.
 *
 *   vm-churn mprotect COUNT [PAUSE_US]   COUNT mprotect(RO) + mprotect(RW)
 *                                        pairs (0: until killed)
 *
 * Prints "ready" once the VM exists and "done N" (the number of mprotect
 * calls) before it exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "selfvm.h"

int main(int argc, char **argv)
{
	struct self_vm vm;
	unsigned long count, pause_us = 0, calls = 0;

	if (argc < 3 || strcmp(argv[1], "mprotect")) {
		fprintf(stderr, "usage: vm-churn mprotect COUNT [PAUSE_US]\n");
		return 2;
	}
	count = strtoul(argv[2], NULL, 10);
	if (argc > 3)
		pause_us = strtoul(argv[3], NULL, 10);
	self_vm_create(&vm, 4u << 20);
	printf("ready\n");
	fflush(stdout);
	for (unsigned long i = 0; !count || i < count; i++) {
		CHECK(mprotect(vm.mem, 65536, PROT_READ) == 0);
		CHECK(mprotect(vm.mem, 65536, PROT_READ | PROT_WRITE) == 0);
		vm.mem[0]++;
		calls += 2;
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	printf("done %lu\n", calls);
	self_vm_destroy(&vm);
	return 0;
}
