// SPDX-License-Identifier: GPL-2.0-or-later
#include "env.h"

#include <errno.h>
#include <string.h>

#include "macro.h"
#include "strv.h"

/*
 * What the kernel's Makefile and kconfig take from the environment and that
 * changes the kernel built: the compiler flags it appends, the toolchain it
 * picks (LLVM, CROSS_COMPILE), the release string (LOCALVERSION) and the
 * version banner (KBUILD_BUILD_*, SOURCE_DATE_EPOCH), the defconfig's name.
 * ARCH is snapbench's to choose; KBUILD_OUTPUT, KCONFIG_CONFIG and O would
 * move the objects or the .config out of the scratch tree; CC and the like
 * are assigned by the Makefile itself, so the environment's never count.
 */
const char *const kbuild_env_names[] = {
	"CROSS_COMPILE", "HOSTCFLAGS", "HOSTCXXFLAGS", "HOSTLDFLAGS", "HOSTRUSTFLAGS", "KAFLAGS", "KBUILD_BUILD_HOST",
	"KBUILD_BUILD_TIMESTAMP", "KBUILD_BUILD_USER", "KBUILD_BUILD_VERSION", "KBUILD_DEFCONFIG", "KCFLAGS",
	"KCPPFLAGS", "KRUSTFLAGS", "LLVM", "LLVM_IAS", "LOCALVERSION", "SOURCE_DATE_EPOCH", NULL,
};

int kbuild_env_from(char *const *env, char ***ret)
{
	_cleanup_strv_free_ char **v = NULL;

	/* the first of a name's entries, as getenv() takes */
	for (const char *const *name = kbuild_env_names; *name; name++)
		for (char *const *e = env; e && *e; e++)
			if (!strncmp(*e, *name, strlen(*name)) && (*e)[strlen(*name)] == '=') {
				if (strv_push(&v, *e) < 0)
					return -ENOMEM;
				break;
			}
	if (v)
		strv_sort(v);
	*ret = TAKE_PTR(v);
	return 0;
}
