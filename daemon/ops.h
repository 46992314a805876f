/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapbenchd's requests (ops.c): docs/protocol.md's submit, status, list, show, cancel, logs, watch. */
#pragma once

#include <stddef.h>

struct conn;
struct daemon;

/* Handles one request line from c (a conn_request_fn). */
void ops_handle_line(struct daemon *d, struct conn *c, const char *line, size_t len);
