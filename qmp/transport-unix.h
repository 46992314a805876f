/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stream transport: bytes in and out of a connected unix stream socket,
 * with deadlines (mono_ns() values; UNIX_STREAM_NO_DEADLINE for none), EOF detection and fd passing
 * (SCM_RIGHTS). It knows nothing of JSON or QMP. Internal to qmp/.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define UNIX_STREAM_NO_DEADLINE UINT64_MAX

/* Connect to path, retrying while it is missing or refuses until deadline. Returns the fd. */
int unix_stream_connect(const char *path, uint64_t deadline, struct sb_error *err);

/* Make fd non-blocking and close-on-exec, for a socket the caller handed in. */
int unix_stream_adopt(int fd, const char *label, struct sb_error *err);

/*
 * Send all len bytes; pass_fd (if >= 0) travels with the first byte.
 * -ETIMEDOUT when the peer does not take them before deadline,
 * -ECONNRESET when it has gone.
 */
int unix_stream_send(int fd, const void *buf, size_t len, int pass_fd, uint64_t deadline, const char *label,
		     struct sb_error *err);

/*
 * Wait until bytes arrive (or deadline) and read what is there, up to cap.
 * Returns the byte count (> 0), 0 on EOF, -ETIMEDOUT, or another -errno.
 * File descriptors the peer passes are closed, never kept.
 */
long unix_stream_recv(int fd, void *buf, size_t cap, uint64_t deadline, const char *label, struct sb_error *err);
