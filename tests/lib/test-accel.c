// SPDX-License-Identifier: GPL-2.0-or-later
/* KVM or TCG for the guests a test starts (test-accel.h). */
#include "test-accel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool test_kvm(void)
{
	static int known = -1;

	if (known < 0) {
		int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		known = fd >= 0;
		if (fd >= 0)
			close(fd);
		else
			fprintf(stderr, "test: /dev/kvm: %s: the guests run under QEMU's TCG (KVM's counters are checked unavailable)\n",
				strerror(errno));
	}
	return known;
}

const char *test_accel(void)
{
	return test_kvm() ? "kvm" : "tcg";
}

bool test_timing_emulated(void)
{
	const char *host_vm = getenv("SNAPBENCH_HOSTVM_ACCEL");

	return !test_kvm() || (host_vm && !strcmp(host_vm, "tcg"));
}
