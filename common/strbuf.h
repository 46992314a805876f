/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A growable string buffer that latches out-of-memory: after the first
 * allocation failure b->oom is set and further appends do nothing, so a
 * builder appends straight through and checks once, at strbuf_steal().
 * Start with `struct strbuf b = {}`; b.s is NUL-terminated once anything
 * was appended. libc only (common_dep).
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

struct strbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

void strbuf_append(struct strbuf *b, const char *s);
/* n bytes of p (which need not be NUL-terminated). */
void strbuf_append_mem(struct strbuf *b, const char *p, size_t n);
/* n copies of the byte c. */
void strbuf_append_repeat(struct strbuf *b, char c, size_t n);
_printf_(2, 3) void strbuf_appendf(struct strbuf *b, const char *fmt, ...);
_printf_(2, 0) void strbuf_vappendf(struct strbuf *b, const char *fmt, va_list ap);

/*
 * Hands over the text (the caller frees it; "" when nothing was appended)
 * and empties b. After an out-of-memory returns NULL and frees the text.
 */
char *strbuf_steal(struct strbuf *b);

/* Frees the text and empties b; NULL is fine. */
void strbuf_free(struct strbuf *b);
#define _cleanup_strbuf_ _cleanup_(strbuf_free)
