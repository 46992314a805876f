/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapbenchd's log: stderr, where systemd's journal (JOURNAL_STREAM set)
 * reads the "<N>" prefixes as priorities. A unit of its own because every
 * unit of the daemon logs and it calls none of them.
 */
#pragma once

#include "macro.h"

void log_msg(int priority, const char *fmt, ...) _printf_(2, 3);
#define log_error(...) log_msg(3, __VA_ARGS__)
#define log_warning(...) log_msg(4, __VA_ARGS__)
#define log_notice(...) log_msg(5, __VA_ARGS__)
#define log_info(...) log_msg(6, __VA_ARGS__)
#define log_debug(...) log_msg(7, __VA_ARGS__)
