/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole-file reads with a bound. The text read is NUL-terminated (the length
 * excludes the NUL), so a caller may treat it as a string if it holds no NUL
 * itself. A file that grows while it is read is read to its end or to the
 * bound; short reads and EINTR are retried. libc only (common_dep).
 */
#pragma once

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

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

/*
 * Opens path for reading as an input file is: without waiting on it
 * (O_NONBLOCK: a FIFO with no writer would hold open() and read() for ever)
 * and only when it is a regular file. The fd, blocking again, with *st (may
 * be NULL) its fstat; or -EINVAL with err "PATH: is a FIFO, not a regular
 * file" (a directory, a socket, a character or block device), or -errno
 * with "PATH: cannot open: REASON" (EACCES: "permission denied").
 */
int open_regular(const char *path, struct stat *st, struct sb_error *err);

/* read_full_file() of a regular file only: open_regular()'s errors, then read_full_file()'s. */
int read_regular_file(const char *path, size_t max_size, char **ret, size_t *ret_len, struct sb_error *err);

/* "a FIFO", "a directory", "a socket", "a character device", ... for a struct stat's st_mode. */
const char *file_type_name(mode_t mode);

/*
 * The number of the first of process pid's fds whose link in
 * /proc/PID/fd starts with prefix ("anon_inode:kvm-vm", "/memfd:NAME"),
 * -ENOENT when none does, -ESRCH when there is no such process, or -errno
 * with err set (naming the directory, and root for EACCES) when the fds
 * cannot be listed. At most a million entries
 * are looked at.
 */
int proc_find_fd(pid_t pid, const char *prefix, struct sb_error *err);

/* The thread group (process) thread tid belongs to, from /proc/TID/status; -1 when there is no such thread. */
pid_t proc_tgid(pid_t tid);

/*
 * Process pid's command line, /proc/PID/cmdline, as a string vector (free
 * with strv_free()): at most max bytes of it, the last argument cut there
 * when it is longer. -ENOENT when there is no such process or its command
 * line is empty (a kernel thread, a zombie), -ENOMEM, or -errno.
 */
#define PROC_CMDLINE_MAX (1u << 20)
int proc_cmdline(pid_t pid, size_t max, char ***ret);
