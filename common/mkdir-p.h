/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

/*
 * mkdir -p: creates path and every missing directory above it, each with
 * mode (less the umask). A component that already exists is left as it is.
 * Returns 0 or a negative errno: -ENAMETOOLONG beyond PATH_MAX, -ENOENT for
 * an empty path, else mkdir()'s error for the first component it could not
 * create (-ENOTDIR when one is a file, -EACCES ...).
 */
int mkdir_p(const char *path, mode_t mode);
