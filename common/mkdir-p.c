// SPDX-License-Identifier: GPL-2.0-or-later
#include "mkdir-p.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0)
		return -ENOENT;
	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	/* each '/' after the first character ends a parent; the end of the string ends path itself */
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		if (c == '\0')
			return 0;
		*p = c;
	}
}
