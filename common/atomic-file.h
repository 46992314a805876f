/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "error.h"

/*
 * Replace path with data, all or nothing: write a temp file in the same
 * directory, fsync it, rename it over path, fsync the directory. A reader
 * sees the old file or the new one, never a torn one. On failure the temp
 * file is removed and path is untouched.
 */
int atomic_file_write(const char *path, const void *data, size_t len, int mode, struct sb_error *err);
