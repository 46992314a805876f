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

/* The same with the file's bytes in n pieces, written in order (no copy to join them). */
struct atomic_file_piece {
	const void *data;
	size_t len;
};
int atomic_file_write_pieces(const char *path, const struct atomic_file_piece *pieces, size_t n, int mode,
			     struct sb_error *err);
