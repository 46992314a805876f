/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapbenchd's one-line status for systemd (status.c): stopping, the
 * current run's repetition and step, or idle, and the queue's length.
 */
#pragma once

#include <stdbool.h>

struct daemon;

/* Sends STATUS= when it changed, at most once a second unless force. */
void daemon_update_status(struct daemon *d, bool force);
