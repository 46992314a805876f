// SPDX-License-Identifier: GPL-2.0-or-later
#include "test-qemu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

const char *test_qemu_binary(void)
{
	const char *q = getenv("SNAPBENCH_QEMU");

	if (!q || !*q)
		return NULL;
	CHECK_MSG(access(q, X_OK) == 0,
		  "$SNAPBENCH_QEMU %s: %s; fetch QEMU %s from bookworm-backports into snapbench's cache: scripts/fetch-test-qemu (as root)",
		  q, strerror(errno), test_qemu_want() ? test_qemu_want() : "");
	return q;
}

const char *test_qemu_want(void)
{
	const char *w = getenv("SNAPBENCH_QEMU_WANT");

	return w && *w ? w : NULL;
}

bool test_qemu_version_ok(const char *version)
{
	const char *want = test_qemu_want();
	size_t n;

	if (!want)
		return true;
	n = strlen(want);
	/* "10.0" takes "10.0" and "10.0.2", not "10.01" */
	return version && !strncmp(version, want, n) && (version[n] == '\0' || version[n] == '.');
}
