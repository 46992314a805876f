/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A small snprintf for the guest's messages: %s %c %d %u %x with the l and
 * ll modifiers, and %%. Also built into a host test (see cmdline.c). */
#pragma once

#include <stdarg.h>
#include <stddef.h>

__attribute__((format(printf, 3, 0))) size_t k_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
__attribute__((format(printf, 3, 4))) size_t k_snprintf(char *buf, size_t size, const char *fmt, ...);
