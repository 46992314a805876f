// SPDX-License-Identifier: GPL-2.0-or-later
#include "fmt.h"

#include <stdint.h>

struct out {
	char *buf;
	size_t size, len; /* len counts what would have been written */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_u64(struct out *o, uint64_t v, unsigned base)
{
	char tmp[24];
	int n = 0;

	do {
		unsigned d = (unsigned)(v % base);
		tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= base;
	} while (v);
	while (n)
		put(o, tmp[--n]);
}

size_t k_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (const char *p = fmt; *p; p++) {
		int longs = 0;

		if (*p != '%') {
			put(&o, *p);
			continue;
		}
		p++;
		while (*p == 'l') {
			longs++;
			p++;
		}
		switch (*p) {
		case 's': {
			const char *s = va_arg(ap, const char *);

			if (!s)
				s = "(null)";
			while (*s)
				put(&o, *s++);
			break;
		}
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case 'd': {
			int64_t v = longs ? va_arg(ap, int64_t) : va_arg(ap, int);

			if (v < 0) {
				put(&o, '-');
				put_u64(&o, (uint64_t)0 - (uint64_t)v, 10);
			} else {
				put_u64(&o, (uint64_t)v, 10);
			}
			break;
		}
		case 'u':
		case 'x': {
			uint64_t v = longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);

			put_u64(&o, v, *p == 'u' ? 10 : 16);
			break;
		}
		case '%':
			put(&o, '%');
			break;
		case '\0':
			p--;
			break;
		default:
			put(&o, '%');
			put(&o, *p);
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return o.len;
}

size_t k_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = k_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
