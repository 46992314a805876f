/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole-file reads with a bound. The text read is NUL-terminated (the length
 * excludes the NUL), so a caller may treat it as a string if it holds no NUL
 * itself. A file that grows while it is read is read to its end or to the
 * bound; short reads and EINTR are retried. libc only (common_dep).
 */
#pragma once

#include <stddef.h>

#include "error.h"

/*
 * Reads fd from its current offset to its end. -EFBIG when it holds more
 * than max_size bytes, -ENOMEM, or -errno of a failed read(); sets no
 * message, so a caller with its own wording maps the code. *ret and
 * *ret_len are set only on success.
 */
int read_full_fd(int fd, size_t max_size, char **ret, size_t *ret_len);

/*
 * Opens path (O_RDONLY | O_CLOEXEC | O_NOCTTY) and reads it whole. On
 * failure err names the file and, for -EFBIG, the bound: "PATH: cannot open:
 * REASON", "PATH: is a directory", "PATH: larger than N bytes", "PATH:
 * cannot read: REASON". ret_len may be NULL.
 */
int read_full_file(const char *path, size_t max_size, char **ret, size_t *ret_len, struct sb_error *err);
