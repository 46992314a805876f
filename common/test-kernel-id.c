// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit test: a kernel identity is copied whole, NULLs kept NULL, and freed twice safely. */
#include <string.h>

#include "check.h"
#include "kernel-id.h"

int main(void)
{
	struct kernel_id a = {
		.image = strdup("/boot/vmlinuz-6.1.0-57-amd64"),
		.release = strdup("6.1.0-57-amd64"),
		.version = strdup("Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)"),
	};
	struct kernel_id b = { .image = (char *)"untouched" };

	CHECK(a.image && a.release && a.version);
	CHECK(kernel_id_copy(&a, &b) == 0);
	CHECK(b.image != a.image && !strcmp(b.image, a.image) && !strcmp(b.release, a.release));
	CHECK(!strcmp(b.version, a.version) && !b.build_id && !b.config_path && !b.config_sha256);
	kernel_id_done(&a);
	CHECK(!a.image && !a.release);
	kernel_id_done(&a);
	kernel_id_done(&b);
	kernel_id_done(NULL);
	return 0;
}
