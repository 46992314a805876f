/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snapbenchd's listening socket (listen.c): the one systemd passes, or one it creates. */
#pragma once

#include "error.h"

struct daemon;

/* Sets d->listen_fd (and d->activated, or d->socket_path). */
int listen_open(struct daemon *d, struct sb_error *err);
/* Accepts no more connections (the socket file stays until listen_close()). */
void listen_stop(struct daemon *d);
/* listen_stop(), and removes the socket file snapbenchd created. */
void listen_close(struct daemon *d);
