// SPDX-License-Identifier: GPL-2.0-or-later
#include "strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for want more bytes and the NUL; false (with oom latched) when there is none. */
static bool reserve(struct strbuf *b, size_t want)
{
	size_t cap;
	char *s;

	if (b->oom)
		return false;
	if (want >= SIZE_MAX - b->len) {
		b->oom = true;
		return false;
	}
	if (b->s && b->len + want + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + want + 1) {
		if (cap > SIZE_MAX / 2) {
			cap = b->len + want + 1;
			break;
		}
		cap *= 2;
	}
	s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void strbuf_append_mem(struct strbuf *b, const char *p, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void strbuf_append(struct strbuf *b, const char *s)
{
	strbuf_append_mem(b, s, strlen(s));
}

void strbuf_append_repeat(struct strbuf *b, char c, size_t n)
{
	if (!reserve(b, n))
		return;
	memset(b->s + b->len, c, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void strbuf_vappendf(struct strbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	if (b->oom)
		return;
	va_copy(aq, ap);
	n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, aq);
	va_end(aq);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if (!b->s || b->len + (size_t)n + 1 > b->cap) {
		if (!reserve(b, (size_t)n))
			return;
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void strbuf_appendf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vappendf(b, fmt, ap);
	va_end(ap);
}

char *strbuf_steal(struct strbuf *b)
{
	char *s;

	if (b->oom) {
		strbuf_free(b);
		return NULL;
	}
	s = b->s ? b->s : strdup("");
	*b = (struct strbuf){ 0 };
	return s;
}

void strbuf_free(struct strbuf *b)
{
	if (!b)
		return;
	free(b->s);
	*b = (struct strbuf){ 0 };
}
