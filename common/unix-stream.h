/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bytes in and out of a connected unix stream socket, for the clients of
 * QEMU's monitor (qmp/) and guest agent (qga/): deadlines (mono_ns() values;
 * UNIX_STREAM_NO_DEADLINE for none), EOF detection and fd passing
 * (SCM_RIGHTS). Blocking and non-blocking sockets alike. Knows nothing of
 * what the bytes mean.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define UNIX_STREAM_NO_DEADLINE UINT64_MAX

/*
 * Connect to path, retrying while it is missing or refuses until deadline.
 * Returns the fd (non-blocking, close-on-exec), or a negative errno:
 * -ENOENT (still no socket at the deadline), -ETIMEDOUT (still refusing),
 * -ENAMETOOLONG, -EINVAL (empty path) or what connect() said. what names
 * the socket in messages ("QMP socket"); hint (or NULL) ends the message
 * when the deadline passes, e.g. how to make the peer listen.
 */
int unix_stream_connect(const char *path, const char *what, const char *hint, uint64_t deadline,
			struct sb_error *err);

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
