/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Errors that carry a message for the user.
 *
 * Library code does not log. A function that can fail returns a negative errno
 * and, when the caller passed a struct sb_error, fills it with a message that
 * names the input at fault and, where there is one, the fix. Callers print
 * err.msg; err.code repeats the return value.
 */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"

#define SB_ERROR_MAX 1024

struct sb_error {
	int code;               /* negative errno, 0 when unset */
	char msg[SB_ERROR_MAX]; /* "" when unset */
};

/* Sets err (if not NULL) and returns code, which must be negative. */
static inline _printf_(3, 4) int sb_error_set(struct sb_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

/* Prefixes an already set message with more context: "ctx: old message". */
static inline _printf_(2, 3) int sb_error_prefix(struct sb_error *err, const char *fmt, ...)
{
	char head[SB_ERROR_MAX], old[SB_ERROR_MAX];
	va_list ap;

	if (!err)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncating a long message is fine; using the result keeps -Wformat-truncation quiet. */
	if (snprintf(err->msg, sizeof(err->msg), "%s: %s", head, old) < 0)
		err->msg[0] = '\0';
	return err->code;
}

static inline void sb_error_clear(struct sb_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
